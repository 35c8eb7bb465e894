/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared inside lib/compiler; not public. */
#ifndef WSECC_INTERNAL_H
#define WSECC_INTERNAL_H

#include "wse/compiler.h"

/* Sets @e (file, position, message) and returns -EINVAL. */
int wsecc_fail(struct wsecc_error *e, const char *file, unsigned line, unsigned col,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Bytes per PE kept for code, routes and I/O buffers (1/8 of the SRAM). */
uint64_t wsecc_reserve_per_pe(const struct wse_wafer *w);

/* Optimizer state floats per parameter: 0 sgd, 1 momentum, 2 adam. */
unsigned wsecc_opt_state_per_param(const struct wsep_optimizer *o);

/* FLOPs of one optimizer step per parameter. */
double wsecc_opt_flops_per_param(const struct wsep_optimizer *o);

/* Forward + backward + amortised update FLOPs of layer @i per sample. */
double wsecc_layer_flops(const struct wsecc_model *m, uint32_t i);

/**
 * wsecc_cost_pipelined() - a layer's stage on an h x w region
 * Fills @lp (tile, SRAM per PE, estimate) for a region of @h rows and @w
 * columns; returns 0 if the layer fits in that region's SRAM, -1 if not.
 */
int wsecc_cost_pipelined(const struct wsecc_model *m, uint32_t i, const struct wse_wafer *wf,
			 uint32_t h, uint32_t w, struct wsecc_layer_plan *lp);

/*
 * wsecc_pipelined_step_cycles() - one training step of @batch samples on
 * the @n stages @lp: the slowest stage's rate, plus filling and draining
 * the pipeline once (see compiler_cost.c).
 */
double wsecc_pipelined_step_cycles(const struct wsecc_layer_plan *lp, uint32_t n, uint32_t batch);

/* Pipelined placement (balanced) and the even split, into @plan. */
int wsecc_place_pipelined(const struct wsecc_model *m, struct wsecc_plan *plan,
			  struct wsecc_error *err);

/* Weight-streaming plan into @plan. */
int wsecc_plan_streaming(const struct wsecc_model *m, struct wsecc_plan *plan,
			 struct wsecc_error *err);

/* Human-readable byte counts: "5.61 MB". */
void wsecc_bytes(char *buf, size_t len, double bytes);

#endif /* WSECC_INTERNAL_H */
