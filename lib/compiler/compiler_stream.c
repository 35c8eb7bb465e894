// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Weight streaming: each stage (a dense layer, or a unit of a graph) in
 * turn on the whole wafer. The batch is cut into micro-batches whose
 * activations fit in SRAM (the largest that does, or --micro-batch); for
 * each micro-batch a stage's parameters stream in from MemoryX for the
 * forward pass and again for the backward pass, and its gradients stream
 * out, to be summed over the micro-batches and systems (SwarmX) before
 * MemoryX updates once per batch. Per micro-batch of s samples, a stage
 * costs max(s x compute, weights in) forward, the same backward, plus the
 * gradients out.
 */
#include "compiler_internal.h"

/* Per-PE buffer for weights arriving and gradients leaving (double-buffered). */
#define STREAM_BUFFER_BYTES	2048ULL

/* A stage's cycles for one micro-batch of @s samples: forward, backward. */
static void micro_cycles(const struct wsecc_layer_plan *lp, double fwd_sample, double weights_in,
			 uint32_t s, double *fwd, double *bwd)
{
	double cf = s * fwd_sample, cb = s * lp->bwd_compute;

	*fwd = cf > weights_in ? cf : weights_in;
	*bwd = cb > weights_in ? cb : weights_in;
}

/*
 * The micro-batch: @st's, or the largest whose activations (@per_sample
 * bytes a sample, over @pes PEs, beside the stream buffer) fit @usable
 * bytes a PE; 0 with @err set if none or @st's does not.
 */
static uint32_t choose_micro_batch(const struct wsecc_stages *st, const struct wse_wafer *w,
				   uint64_t per_sample, uint64_t pes, uint64_t usable,
				   uint32_t *fit, struct wsecc_error *err)
{
	uint64_t room = usable > STREAM_BUFFER_BYTES ? (usable - STREAM_BUFFER_BYTES) * pes : 0;
	uint64_t largest = per_sample ? room / per_sample : WSEP_MAX_BATCH;
	uint32_t mb = st->micro_batch;
	char need[32], have[32];

	*fit = largest < WSEP_MAX_BATCH ? (uint32_t)largest : WSEP_MAX_BATCH;
	if (largest > st->batch)
		largest = st->batch;
	wsecc_bytes(have, sizeof(have), (double)usable);
	if (!largest) {
		wsecc_bytes(need, sizeof(need),
			    (double)((per_sample + pes - 1) / pes + STREAM_BUFFER_BYTES));
		wsecc_fail(err, st->file, st->batch_pos.line, st->batch_pos.col,
			   "one sample's activations do not fit even with weight streaming: %s per PE, a PE of the %s wafer has %s usable; use a larger --wafer",
			   need, w->name, have);
		return 0;
	}
	if (mb > st->batch) {
		wsecc_fail(err, st->file, st->batch_pos.line, st->batch_pos.col,
			   "--micro-batch %u is larger than the batch of %u", mb, st->batch);
		return 0;
	}
	if (mb > largest) {
		wsecc_bytes(need, sizeof(need),
			    (double)((per_sample * mb + pes - 1) / pes + STREAM_BUFFER_BYTES));
		wsecc_fail(err, st->file, st->batch_pos.line, st->batch_pos.col,
			   "the activations of a micro-batch of %u samples do not fit even with weight streaming: %s per PE, a PE of the %s wafer has %s usable; the largest micro-batch that fits is %llu (--micro-batch %llu), or use a larger --wafer",
			   mb, need, w->name, have, (unsigned long long)largest,
			   (unsigned long long)largest);
		return 0;
	}
	return mb ? mb : (uint32_t)largest;
}

int wsecc_plan_streaming(const struct wsecc_stages *st, struct wsecc_plan *plan,
			 struct wsecc_error *err)
{
	const struct wse_wafer *w = &plan->wafer;
	double io = wse_wafer_io_bytes_per_cycle(w);
	double total = 0, worst = 0;
	uint64_t pes = wse_wafer_pes(w), per_sample = 0, acts = 0;
	uint64_t usable = w->sram_per_pe - wsecc_reserve_per_pe(w), per_pe;
	uint32_t mb, full, rest, count;

	/* A sample's activations, summed over the stages: they all stay for its backward pass. */
	for (uint32_t i = 0; i < st->n; i++) {
		st->cost(st->ctx, i, w, w->height, w->width, 1, &plan->layers[i]);
		per_sample += plan->layers[i].act_bytes;
	}
	mb = choose_micro_batch(st, w, per_sample, pes, usable, &plan->micro_batch_fit, err);
	if (!mb)
		return -1;
	full = st->batch / mb;
	rest = st->batch % mb;
	count = full + (rest ? 1 : 0);
	for (uint32_t i = 0; i < st->n; i++) {
		st->cost(st->ctx, i, w, w->height, w->width, mb, &plan->layers[i]);
		acts += plan->layers[i].act_bytes;
		plan->in_flight[i] = mb;
	}
	per_pe = (acts + pes - 1) / pes + STREAM_BUFFER_BYTES;
	plan->micro_batch = mb;
	plan->weight_bytes = st->weight_bytes > 0 ? st->weight_bytes : 4.0;

	plan->summary.active_pes = 0;
	plan->summary.sram_bytes = per_pe * pes;
	for (uint32_t i = 0; i < st->n; i++) {
		struct wsecc_layer_plan *lp = &plan->layers[i];
		uint32_t rows = w->height < st->rows(st->ctx, i) ? w->height : st->rows(st->ctx, i);
		uint32_t cols = w->width < st->cols(st->ctx, i) ? w->width : st->cols(st->ctx, i);
		double weights_in = (double)lp->params * (st->weight_bytes > 0 ? st->weight_bytes : 4.0) / io;
		double f1, b1, f2 = 0, b2 = 0, fwd, bwd;

		lp->fwd_compute = lp->est.fwd_cycles;
		micro_cycles(lp, lp->est.fwd_cycles, weights_in, mb, &f1, &b1);
		if (rest)
			micro_cycles(lp, lp->est.fwd_cycles, weights_in, rest, &f2, &b2);
		fwd = full * f1 + f2;
		bwd = full * b1 + b2;

		/* The optimizer runs in MemoryX, not here. */
		lp->region = (struct wsep_region){ 0, 0, w->width, w->height };
		lp->pes = pes;
		lp->sram_per_pe = per_pe;
		lp->sram_bytes = (lp->act_bytes + pes - 1) / pes * pes + STREAM_BUFFER_BYTES * pes;
		lp->est.fwd_cycles = fwd;
		lp->est.bwd_cycles = bwd;
		lp->est.io_cycles = weights_in;		/* one pass's weights in, or gradients out */
		lp->est.stage_cycles = fwd + bwd + count * weights_in;
		lp->est.limit = weights_in >= mb * lp->bwd_compute ? WSEP_LIMIT_WEIGHT_IO
								   : WSEP_LIMIT_COMPUTE;
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
