/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MemoryX: the host-side store of a weight-streaming program's weights and
 * optimizer state. It hands out each layer's parameters to stream to the
 * devices, takes the layer's (reduced) gradient back and applies the
 * program's optimizer with the firmware engine's own update, so that weight
 * streaming and layer-pipelined execution train to the same weights.
 *
 * Everything is kept in the .wsep weights layout: layer k's W ([out][in])
 * then its b, at the layer's weight_offset, so a checkpoint of MemoryX and
 * a PARAMS_READ of a pipelined program hold the same bytes.
 */
#ifndef WSE_MEMORYX_H
#define WSE_MEMORYX_H

#include <stddef.h>
#include <stdint.h>

#include "wse/wsep.h"

struct wse_memoryx;

/*
 * Weights initialised as wsecc initialises a program image (from the
 * program's seed), optimizer state zero, step 0. -EINVAL: a program MemoryX
 * cannot serve (not dense layers, an unknown optimizer); -ENOMEM.
 */
int wse_memoryx_create(const struct wsep_program *p, struct wse_memoryx **out);
void wse_memoryx_destroy(struct wse_memoryx *mx);

/* Floats of all layers (the .wsep weights section), and optimizer state arrays (0..2). */
uint64_t wse_memoryx_floats(const struct wse_memoryx *mx);
unsigned int wse_memoryx_state_arrays(const struct wse_memoryx *mx);

/* All layers' weights, wse_memoryx_floats() of them (to register with a ring). */
const float *wse_memoryx_weights(const struct wse_memoryx *mx);

/* Layer @k's parameters as they are streamed: W then b, *@n floats. */
const float *wse_memoryx_layer(const struct wse_memoryx *mx, uint32_t k, size_t *n);
/* Where layer @k's gradient (W then b, same size) is gathered before an update. */
float *wse_memoryx_grad(struct wse_memoryx *mx, uint32_t k);
/*
 * One optimizer step of layer @k from its gathered gradient, as step
 * @t (1-based, Adam's bias correction). The caller updates every layer
 * of a step with the same t.
 */
int wse_memoryx_update(struct wse_memoryx *mx, uint32_t k, uint64_t t);
/*
 * The same update for floats [@first, @first + @count) of layer @k (W then
 * b) only. The optimizer works element by element, so updating a layer in
 * slices, in any order or at once on several threads, gives the same bits
 * as wse_memoryx_update().
 */
int wse_memoryx_update_slice(struct wse_memoryx *mx, uint32_t k, uint64_t t, size_t first,
			     size_t count);

/*
 * The whole state, for checkpoints: weights (wse_memoryx_floats() floats)
 * and the optimizer state arrays one after another (state_arrays times as
 * many). wse_memoryx_get() copies them out; wse_memoryx_set() replaces them
 * (-EINVAL if a value is not finite).
 */
void wse_memoryx_get(const struct wse_memoryx *mx, float *weights, float *state);
int wse_memoryx_set(struct wse_memoryx *mx, const float *weights, const float *state);

#endif /* WSE_MEMORYX_H */
