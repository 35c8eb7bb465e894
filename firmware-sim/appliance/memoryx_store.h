/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MemoryX's store: a weight-streaming program's weights, optimizer state
 * and step count, and the update, which is the engine's own optimizer step
 * at the program's learning-rate schedule, called for a dense layer's W
 * and b separately (a graph program's unit: its one range) as a device
 * calls it for a resident layer: so weight streaming trains to the bits of
 * the layer-pipelined mode.
 *
 * The weights lie in a shared-memory region (wse/link_region.h) in the
 * .wsep layout, layer k's W ([out][in]) then b at its weight_offset, which
 * the systems read their weights from; the optimizer state arrays follow
 * one another in the same layout, then the step count, as PARAMS_READ
 * addresses them on a device. The state arrays take what is left of
 * MemoryX's RAM budget and spill beyond it to the file-backed store
 * (memoryx_spill.h), in one contiguous mapping.
 */
#ifndef APPLIANCE_MEMORYX_STORE_H
#define APPLIANCE_MEMORYX_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memoryx_spill.h"
#include "wse/engine.h"
#include "wse/link_region.h"
#include "wse/wsep.h"

struct mx_store {
	uint32_t layers;
	uint64_t floats;			/* weights, all layers */
	uint64_t offset[ENGINE_MAX_LAYERS];	/* layer k's W, in floats */
	uint32_t in[ENGINE_MAX_LAYERS], out[ENGINE_MAX_LAYERS];
	uint64_t n[ENGINE_MAX_LAYERS];		/* layer k's floats */
	bool unit[ENGINE_MAX_LAYERS];		/* a graph program's unit: one range, no W and b */
	unsigned int arrays;			/* optimizer state arrays, 0..2 */
	struct engine_optim opt;
	struct engine_lr_schedule sched;	/* the learning rate at step t */
	struct wse_link_region region;		/* the weights, after its header */
	float *w;
	float *state;				/* arrays * floats */
	uint64_t state_bytes, spilled;		/* of them in the file-backed store */
	uint64_t step;				/* optimizer steps applied (Adam's t) */
	uint64_t updates;			/* layer updates applied */
	/*
	 * fp16 loss scaling: the step's unscaled gradients held (in SwarmX's
	 * region, where they were summed) until mx_store_commit() applies
	 * all of them or none.
	 */
	const float *held[ENGINE_MAX_LAYERS];
	/*
	 * A second thread takes the upper part of a large layer's update:
	 * the next step's layer 0 waits for it, and the optimizer is element
	 * by element, so the split changes no bit. Started on first use.
	 */
	struct mx_helper {
		pthread_t thread;
		bool started, stop, busy;
		pthread_mutex_t lock;
		pthread_cond_t cond;
		uint64_t t;
		size_t at, n;
		const float *g;
		int err;
	} helper;
};

/* Bytes the store of @p holds (weights and optimizer state); 0 if MemoryX cannot serve @p. */
uint64_t mx_store_bytes(const struct wsep_program *p);
/*
 * Sets the store up for @p: weights as wsecc initialises an image (or the
 * image's own), state zero, step 0. The weights (shared memory, which the
 * systems read) must fit @spill's RAM budget; the state fills the rest of
 * it, then the file. @spill NULL: all in RAM. 0, or a negative errno with
 * @text.
 */
int mx_store_create(struct mx_store *st, const struct wsep_program *p,
		    const struct mx_spill *spill, char *text, size_t len);
void mx_store_destroy(struct mx_store *st);
/* Layer @k's parameters as streamed (W then b): their offset in the region and floats. */
uint64_t mx_store_layer_at(const struct mx_store *st, uint32_t k, size_t *floats);
/*
 * The optimizer step @t of layer @k from its gradient @g (W then b). The
 * step count becomes @t. 0 or the engine's negative errno.
 */
int mx_store_update(struct mx_store *st, uint32_t k, uint64_t t, const float *g);
/*
 * fp16 loss scaling: layer @k's gradient @g (W then b) divided by @scale in
 * place (engine_unscale(), GradScaler.unscale_()'s arithmetic) and held
 * for the step's mx_store_commit(). Returns whether all of it is finite;
 * -EINVAL (as an int < 0) for a layer the store lacks.
 */
int mx_store_hold(struct mx_store *st, uint32_t k, float *g, float scale);
/*
 * The step's end under loss scaling: every held layer's update at step @t
 * in layer order if @apply, else none (the skipped step); the step count
 * becomes @t either way, as a pipelined device counts its steps. The held
 * gradients are let go. 0; -EINVAL for @t 0 or, with @apply, a layer not
 * held (nothing applied); or the engine's negative errno.
 */
int mx_store_commit(struct mx_store *st, uint64_t t, bool apply);
/*
 * PARAMS_READ / PARAMS_WRITE of @which over [@offset, @offset + @len):
 * whole floats inside the weights, or the state arrays and the step count.
 * Written weights must be finite. 0, or -EINVAL with @text.
 */
int mx_store_params(struct mx_store *st, uint32_t which, uint64_t offset, uint32_t len,
		    void *buf, bool write, char *text, size_t textlen);

#endif /* APPLIANCE_MEMORYX_STORE_H */
