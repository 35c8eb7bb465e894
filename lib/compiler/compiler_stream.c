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
 *
 * Activation checkpointing (recompute): when a micro-batch's activations,
 * every stage's kept for its backward pass, do not fit even for one
 * sample (or --recompute on), each stage but the last keeps only its
 * input and runs its forward pass again, from that input, just before its
 * backward pass. A micro-batch then holds the stages' inputs and one
 * stage's whole activations at a time, and a stage's backward pass costs
 * its forward compute more.
 */
#include <errno.h>

#include "compiler_internal.h"

/* Per-PE buffer for weights arriving and gradients leaving (double-buffered). */
#define STREAM_BUFFER_BYTES	2048ULL

/*
 * A stage's cycles for one micro-batch of @s samples: forward, backward.
 * A stage that recomputes runs its forward pass again before its backward.
 */
static void micro_cycles(const struct wsecc_layer_plan *lp, double fwd_sample, double weights_in,
			 uint32_t s, bool recompute, double *fwd, double *bwd)
{
	double cf = s * fwd_sample, cb = s * (lp->bwd_compute + (recompute ? fwd_sample : 0));

	*fwd = cf > weights_in ? cf : weights_in;
	*bwd = cb > weights_in ? cb : weights_in;
}

/*
 * The micro-batch: @st's, or the largest whose activations (@per_sample
 * bytes a sample, over @pes PEs, beside the stream buffer) fit @usable
 * bytes a PE; 0 with @err set if none or @st's does not. @how says what
 * was kept ("", or how recompute counts them) for the messages.
 */
static uint32_t choose_micro_batch(const struct wsecc_stages *st, const struct wse_wafer *w,
				   uint64_t per_sample, uint64_t pes, uint64_t usable,
				   const char *how, uint32_t *fit, struct wsecc_error *err)
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
			   "one sample's activations do not fit even with weight streaming%s: %s per PE, a PE of the %s wafer has %s usable; use a larger --wafer",
			   how, need, w->name, have);
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
			   "the activations of a micro-batch of %u samples do not fit even with weight streaming%s: %s per PE, a PE of the %s wafer has %s usable; the largest micro-batch that fits is %llu (--micro-batch %llu), or use a larger --wafer",
			   mb, how, need, w->name, have, (unsigned long long)largest,
			   (unsigned long long)largest);
		return 0;
	}
	return mb ? mb : (uint32_t)largest;
}

/*
 * A sample's activations while its micro-batch is on the wafer: @full,
 * every stage's, all kept for the backward pass; @kept, with recompute,
 * the inputs of the stages but the last and the largest stage's whole
 * (the one being recomputed and run backward, or the last stage's).
 */
static void per_sample_bytes(const struct wsecc_stages *st, const struct wsecc_plan *plan,
			     uint64_t *full, uint64_t *kept)
{
	uint64_t inputs = 0, largest = 0;

	*full = 0;
	for (uint32_t i = 0; i < st->n; i++) {
		const struct wsecc_layer_plan *lp = &plan->layers[i];

		*full += lp->act_bytes;
		if (i + 1 < st->n)
			inputs += lp->in_bytes;
		if (lp->act_bytes > largest)
			largest = lp->act_bytes;
	}
	*kept = inputs + largest;
}

/*
 * Whether to recompute: as asked, or (auto) when the micro-batch asked
 * for, or a single sample, does not fit with every activation kept.
 * Never for dense layers or one stage: nothing to recompute.
 */
static bool want_recompute(const struct wsecc_stages *st, uint64_t full, uint64_t kept,
			   uint64_t room)
{
	uint64_t fit = full ? room / full : WSEP_MAX_BATCH;

	if (!st->can_recompute || st->n < 2 || st->recompute == WSECC_RECOMPUTE_OFF)
		return false;
	if (st->recompute == WSECC_RECOMPUTE_ON)
		return true;
	return kept < full && (st->micro_batch ? fit < st->micro_batch : !fit);
}

int wsecc_plan_streaming(const struct wsecc_stages *st, struct wsecc_plan *plan,
			 struct wsecc_error *err)
{
	const struct wse_wafer *w = &plan->wafer;
	double io = wse_wafer_io_bytes_per_cycle(w);
	double total = 0, worst = 0;
	uint64_t pes = wse_wafer_pes(w), full, kept, acts, inputs = 0, largest = 0;
	uint64_t usable = w->sram_per_pe - wsecc_reserve_per_pe(w), per_pe;
	uint64_t room = usable > STREAM_BUFFER_BYTES ? (usable - STREAM_BUFFER_BYTES) * pes : 0;
	uint32_t mb, full_count, rest, count;
	char how[160] = "", one[32];

	for (uint32_t i = 0; i < st->n; i++)
		st->cost(st->ctx, i, w, w->height, w->width, 1, &plan->layers[i]);
	per_sample_bytes(st, plan, &full, &kept);
	plan->recompute = want_recompute(st, full, kept, room);
	if (plan->recompute) {
		wsecc_bytes(one, sizeof(one), (double)((full + pes - 1) / pes + STREAM_BUFFER_BYTES));
		snprintf(how, sizeof(how),
			 " and recompute (the stages' inputs and one stage's activations; all of them would need %s per PE)",
			 one);
	} else if (st->can_recompute && st->n > 1 && kept < full && kept <= room) {
		wsecc_bytes(one, sizeof(one), (double)((kept + pes - 1) / pes + STREAM_BUFFER_BYTES));
		snprintf(how, sizeof(how), " without recompute (with it a sample needs %s per PE)",
			 one);
	}
	mb = choose_micro_batch(st, w, plan->recompute ? kept : full, pes, usable, how,
				&plan->micro_batch_fit, err);
	if (!mb)
		return -EINVAL;
	full_count = st->batch / mb;
	rest = st->batch % mb;
	count = full_count + (rest ? 1 : 0);
	acts = 0;
	for (uint32_t i = 0; i < st->n; i++) {
		st->cost(st->ctx, i, w, w->height, w->width, mb, &plan->layers[i]);
		acts += plan->layers[i].act_bytes;
		if (i + 1 < st->n)
			inputs += plan->layers[i].in_bytes;
		if (plan->layers[i].act_bytes > largest)
			largest = plan->layers[i].act_bytes;
		plan->in_flight[i] = mb;
	}
	plan->act_full_per_pe = (acts + pes - 1) / pes;
	plan->act_per_pe = plan->recompute ? (inputs + largest + pes - 1) / pes
					   : plan->act_full_per_pe;
	per_pe = plan->act_per_pe + STREAM_BUFFER_BYTES;
	plan->micro_batch = mb;
	plan->weight_bytes = st->weight_bytes > 0 ? st->weight_bytes : 4.0;

	plan->summary.active_pes = 0;
	plan->summary.sram_bytes = per_pe * pes;
	for (uint32_t i = 0; i < st->n; i++) {
		struct wsecc_layer_plan *lp = &plan->layers[i];
		uint32_t rows = w->height < st->rows(st->ctx, i) ? w->height : st->rows(st->ctx, i);
		uint32_t cols = w->width < st->cols(st->ctx, i) ? w->width : st->cols(st->ctx, i);
		double weights_in = (double)lp->params * (st->weight_bytes > 0 ? st->weight_bytes : 4.0) / io;
		bool again = plan->recompute && i + 1 < st->n;
		double f1, b1, f2 = 0, b2 = 0, fwd, bwd, back;

		lp->fwd_compute = lp->est.fwd_cycles;
		micro_cycles(lp, lp->est.fwd_cycles, weights_in, mb, again, &f1, &b1);
		if (rest)
			micro_cycles(lp, lp->est.fwd_cycles, weights_in, rest, again, &f2, &b2);
		back = lp->bwd_compute + (again ? lp->est.fwd_cycles : 0);
		fwd = full_count * f1 + f2;
		bwd = full_count * b1 + b2;

		/* The optimizer runs in MemoryX, not here. */
		lp->region = (struct wsep_region){ 0, 0, w->width, w->height };
		lp->pes = pes;
		lp->sram_per_pe = per_pe;
		lp->sram_bytes = (lp->act_bytes + pes - 1) / pes * pes + STREAM_BUFFER_BYTES * pes;
		lp->est.fwd_cycles = fwd;
		lp->est.bwd_cycles = bwd;
		lp->est.io_cycles = weights_in;		/* one pass's weights in, or gradients out */
		lp->est.stage_cycles = fwd + bwd + count * weights_in;
		lp->est.limit = weights_in >= mb * back ? WSEP_LIMIT_WEIGHT_IO : WSEP_LIMIT_COMPUTE;
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
