// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Weight streaming: each layer in turn on the whole wafer. The batch's
 * activations stay in SRAM; weights stream in from MemoryX for the forward
 * pass and again for the backward pass, and gradients stream out. Per
 * batch, a layer costs max(compute, weights in) forward, the same
 * backward, plus the gradient out.
 */
#include "compiler_internal.h"

/* Per-PE buffer for weights arriving and gradients leaving (double-buffered). */
#define STREAM_BUFFER_BYTES	2048ULL

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

int wsecc_plan_streaming(const struct wsecc_model *m, struct wsecc_plan *plan,
			 struct wsecc_error *err)
{
	const struct wse_wafer *w = &plan->wafer;
	double io = wse_wafer_io_bytes_per_cycle(w), fpc = w->fp32_flops_per_cycle;
	double total = 0, worst = 0;
	uint64_t pes = wse_wafer_pes(w), acts = 0, usable = w->sram_per_pe - wsecc_reserve_per_pe(w);
	uint64_t per_pe;
	double in_bytes = m->layers[0].in * (m->input_type == WSEP_ELEM_U8 ? 1.0 : 4.0) + 12.0;
	char need[32], have[32];

	for (uint32_t i = 0; i < m->num_layers; i++)
		acts += 4ULL * m->batch * (m->layers[i].in + 2ULL * m->layers[i].out);
	per_pe = (acts + pes - 1) / pes + STREAM_BUFFER_BYTES;
	if (per_pe > usable) {
		wsecc_bytes(need, sizeof(need), (double)per_pe);
		wsecc_bytes(have, sizeof(have), (double)usable);
		return wsecc_fail(err, m->file, m->batch_pos.line, m->batch_pos.col,
				  "the batch's activations do not fit even with weight streaming: %s per PE, a PE of the %s wafer has %s usable; use a smaller --batch or a larger --wafer",
				  need, w->name, have);
	}

	plan->summary.active_pes = 0;
	plan->summary.sram_bytes = per_pe * pes;
	for (uint32_t i = 0; i < m->num_layers; i++) {
		const struct wsecc_layer *l = &m->layers[i];
		struct wsecc_layer_plan *lp = &plan->layers[i];
		uint32_t rows = w->height < l->in ? w->height : l->in;
		uint32_t cols = w->width < l->out ? w->width : l->out;
		uint32_t ti = ceil_div(l->in, rows), to = ceil_div(l->out, cols);
		double mm = 2.0 * ti * to / fpc, relu = l->act == WSECC_ACT_NONE ? 0 : to;
		int last = i == m->num_layers - 1;
		double params = (double)l->in * l->out + l->out;
		double weights_in = params * 4.0 / io;
		double cf, cb, fwd, bwd;

		cf = m->batch * (mm + to + relu + (last ? 5.0 * to : 0) +
				 (i == 0 && m->input_type == WSEP_ELEM_U8 ? ti : 0));
		cb = m->batch * (mm + (i > 0 ? mm : 0) + to + relu + (last ? to : 0));
		fwd = cf > weights_in ? cf : weights_in;
		bwd = cb > weights_in ? cb : weights_in;

		lp->region = (struct wsep_region){ 0, 0, w->width, w->height };
		lp->pes = pes;
		lp->tile_in = ti;
		lp->tile_out = to;
		lp->sram_per_pe = per_pe;
		lp->sram_bytes = (4ULL * m->batch * (l->in + 2ULL * l->out) + pes - 1) / pes * pes +
				 STREAM_BUFFER_BYTES * pes;
		lp->est.flops_per_sample = wsecc_layer_flops(m, i);
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
	total += m->batch * in_bytes / io;	/* samples in, results out */
	plan->summary.samples_per_s = m->batch * (double)w->clock_hz / total;
	plan->summary.even_split_samples_per_s = 0;
	plan->even_columns = 0;
	return 0;
}
