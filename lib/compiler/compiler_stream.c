// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Weight streaming: each stage (a dense layer, or a unit of a graph) in
 * turn on the whole wafer. The batch's activations stay in SRAM; a stage's
 * parameters stream in from MemoryX for the forward pass and again for the
 * backward pass, and its gradients stream out. Per batch, a stage costs
 * max(compute, weights in) forward, the same backward, plus the gradients
 * out.
 */
#include "compiler_internal.h"

/* Per-PE buffer for weights arriving and gradients leaving (double-buffered). */
#define STREAM_BUFFER_BYTES	2048ULL

int wsecc_plan_streaming(const struct wsecc_stages *st, struct wsecc_plan *plan,
			 struct wsecc_error *err)
{
	const struct wse_wafer *w = &plan->wafer;
	double io = wse_wafer_io_bytes_per_cycle(w);
	double total = 0, worst = 0;
	uint64_t pes = wse_wafer_pes(w), acts = 0, usable = w->sram_per_pe - wsecc_reserve_per_pe(w);
	uint64_t per_pe;
	char need[32], have[32];

	for (uint32_t i = 0; i < st->n; i++) {
		st->cost(st->ctx, i, w, w->height, w->width, &plan->layers[i]);
		acts += plan->layers[i].act_bytes;
	}
	per_pe = (acts + pes - 1) / pes + STREAM_BUFFER_BYTES;
	if (per_pe > usable) {
		wsecc_bytes(need, sizeof(need), (double)per_pe);
		wsecc_bytes(have, sizeof(have), (double)usable);
		return wsecc_fail(err, st->file, st->batch_pos.line, st->batch_pos.col,
				  "the batch's activations do not fit even with weight streaming: %s per PE, a PE of the %s wafer has %s usable; use a smaller --batch or a larger --wafer",
				  need, w->name, have);
	}

	plan->summary.active_pes = 0;
	plan->summary.sram_bytes = per_pe * pes;
	for (uint32_t i = 0; i < st->n; i++) {
		struct wsecc_layer_plan *lp = &plan->layers[i];
		uint32_t rows = w->height < st->rows(st->ctx, i) ? w->height : st->rows(st->ctx, i);
		uint32_t cols = w->width < st->cols(st->ctx, i) ? w->width : st->cols(st->ctx, i);
		double weights_in = (double)lp->params * 4.0 / io;
		double cf = st->batch * lp->est.fwd_cycles, cb = st->batch * lp->bwd_compute;
		double fwd = cf > weights_in ? cf : weights_in;
		double bwd = cb > weights_in ? cb : weights_in;

		/* The optimizer runs in MemoryX, not here. */
		lp->region = (struct wsep_region){ 0, 0, w->width, w->height };
		lp->pes = pes;
		lp->sram_per_pe = per_pe;
		lp->sram_bytes = (lp->act_bytes + pes - 1) / pes * pes + STREAM_BUFFER_BYTES * pes;
		lp->est.fwd_cycles = fwd;
		lp->est.bwd_cycles = bwd;
		lp->est.io_cycles = weights_in;		/* gradients out */
		lp->est.stage_cycles = fwd + bwd + weights_in;
		lp->est.limit = weights_in >= cb ? WSEP_LIMIT_WEIGHT_IO : WSEP_LIMIT_COMPUTE;
		total += lp->est.stage_cycles;
		if (lp->est.stage_cycles > worst) {
			worst = lp->est.stage_cycles;
			plan->summary.bottleneck_layer = i;
			plan->summary.limit = lp->est.limit;
		}
		if ((uint64_t)rows * cols > plan->summary.active_pes)
			plan->summary.active_pes = (uint64_t)rows * cols;
	}
	total += st->batch * st->host_bytes / io;	/* samples in, results out */
	plan->summary.samples_per_s = st->batch * (double)w->clock_hz / total;
	plan->summary.even_split_samples_per_s = 0;
	plan->even_columns = 0;
	return 0;
}
