// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cost model: FLOPs, SRAM and cycles of a dense layer on a rectangle
 * of PEs. Documentation/compiler.rst derives each formula; in short, a
 * layer on h rows x w columns splits W (out x in) so that each PE holds a
 * tile of ceil(in/h) x ceil(out/w) weights: inputs flow along the rows,
 * partial sums reduce along the columns, one fp32 FMAC per PE per cycle.
 */
#include <stdio.h>

#include "compiler_internal.h"

uint64_t wsecc_reserve_per_pe(const struct wse_wafer *w)
{
	return w->sram_per_pe / 8;
}

unsigned wsecc_opt_state_per_param(const struct wsep_optimizer *o)
{
	return o->kind == WSEP_OPT_ADAM || o->kind == WSEP_OPT_ADAMW ? 2 :
	       o->kind == WSEP_OPT_MOMENTUM ? 1 : 0;
}

double wsecc_opt_flops_per_param(const struct wsep_optimizer *o)
{
	double decay = o->weight_decay > 0 ? 2 : 0;

	switch (o->kind) {
	case WSEP_OPT_SGD: return 2 + decay;		/* w -= lr * g */
	case WSEP_OPT_MOMENTUM: return 4 + decay;	/* v = mu v + g; w -= lr v */
	case WSEP_OPT_ADAM:		/* two moments, bias correction, sqrt, divide */
	case WSEP_OPT_ADAMW: return 12 + decay;	/* (the decay applied to w instead of g) */
	}
	return 0;
}

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

static double input_elem_bytes(const struct wsecc_model *m)
{
	return m->input_type == WSEP_ELEM_U8 ? 1.0 : 4.0;
}

double wsecc_layer_flops(const struct wsecc_model *m, uint32_t i)
{
	const struct wsecc_layer *l = &m->layers[i];
	double mm = 2.0 * l->in * l->out;
	double act = l->act == WSECC_ACT_NONE ? 0 : l->out;
	double params = (double)l->in * l->out + l->out;
	double f = mm + l->out + act;			/* forward */

	f += act + mm + l->out + (i > 0 ? mm : 0);	/* backward */
	if (i == 0 && m->input_type == WSEP_ELEM_U8)
		f += l->in;				/* u8 -> f32 scale */
	if (i == m->num_layers - 1)
		f += (WSECC_LOSS_FWD_CYCLES + 1) * l->out;	/* loss forward and gradient */
	return f + params * wsecc_opt_flops_per_param(&m->opt) / m->batch;
}

void wsecc_memory_needed(const struct wsecc_model *m, const struct wse_wafer *w,
			 struct wsecc_memory *mem)
{
	uint64_t params = 0, acts = 0;

	for (uint32_t i = 0; i < m->num_layers; i++) {
		const struct wsecc_layer *l = &m->layers[i];

		params += (uint64_t)l->in * l->out + l->out;
		acts += (uint64_t)l->in + 2ULL * l->out;
	}
	mem->weights = 4 * params;
	mem->grads = 4 * params;
	mem->opt_state = 4 * params * wsecc_opt_state_per_param(&m->opt);
	mem->activations = 4 * acts * m->batch;
	mem->total = mem->weights + mem->grads + mem->opt_state + mem->activations;
	mem->reserve_per_pe = wsecc_reserve_per_pe(w);
	mem->usable = wse_wafer_pes(w) * (w->sram_per_pe - mem->reserve_per_pe);
}

/*
 * A step's samples go through at the slowest stage's rate, but the step
 * starts with an empty pipeline and ends only when its last sample's
 * gradient has come back through every stage: the weights change between
 * steps, so the next step's first sample cannot enter earlier. That costs
 * each other stage once more, and a wavelet's trip across the regions (the
 * sum of their widths and the tallest height, in hops) forward and back.
 * On a whole wafer it can exceed the batch's own time (fc-mnist on WSE-2:
 * 1,420 cycles of stages, 2,612 of trip).
 */
double wsecc_pipelined_step_cycles(const struct wsecc_layer_plan *lp, uint32_t n, uint32_t batch,
				   uint32_t micro)
{
	double worst = 0, sum = 0, width = 0, height = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (lp[i].est.stage_cycles > worst)
			worst = lp[i].est.stage_cycles;
		sum += lp[i].est.stage_cycles;
		width += lp[i].region.w;
		if (lp[i].region.h > height)
			height = lp[i].region.h;
	}
	/* A micro-batch's samples cross a stage one after another before the next stage starts. */
	if (!micro || micro > batch)
		micro = batch;
	return batch * worst + micro * (sum - worst) + 2.0 * (width + height) * WSECC_HOP_CYCLES;
}

/*
 * Micro-batch j enters stage i forward at slot j + i and, after the last
 * stage and the loss, comes back to it backward at slot j + 2n - 1 - i:
 * in between, 2 (n - i) - 1 micro-batches have entered the stage.
 */
uint32_t wsecc_pipeline_depth(uint32_t i, uint32_t n)
{
	return 2 * (n - i) - 1;
}

int wsecc_cost_pipelined(const struct wsecc_model *m, uint32_t i, const struct wse_wafer *wf,
			 uint32_t h, uint32_t w, uint32_t held, struct wsecc_layer_plan *lp)
{
	const struct wsecc_layer *l = &m->layers[i];
	uint32_t rows = h < l->in ? h : l->in, cols = w < l->out ? w : l->out;
	uint32_t ti = ceil_div(l->in, rows), to = ceil_div(l->out, cols);
	double fpc = wf->fp32_flops_per_cycle;
	double mm = 2.0 * ti * to /
		    wse_wafer_product_flops_per_cycle(wf, m->precision != WSEP_PRECISION_FP32);
	double relu = l->act == WSECC_ACT_NONE ? 0 : to * WSECC_ELEMENTWISE_CYCLES;
	int last = i == m->num_layers - 1;
	uint64_t params_pe = (uint64_t)ti * to + to;
	uint64_t acts = 4ULL * held * ((uint64_t)l->in + 2ULL * l->out);
	uint64_t usable = wf->sram_per_pe - wsecc_reserve_per_pe(wf);
	double fwd, bwd, opt, compute, sram_bw, fabric, host = 0, io;
	struct wsep_estimate *e = &lp->est;

	fwd = mm + to * WSECC_ELEMENTWISE_CYCLES + relu;
	if (i == 0 && m->input_type == WSEP_ELEM_U8)
		fwd += ti * WSECC_ELEMENTWISE_CYCLES;
	if (last)
		fwd += WSECC_LOSS_FWD_CYCLES * to;
	bwd = mm + (i > 0 ? mm : 0) + to * WSECC_ELEMENTWISE_CYCLES + relu + (last ? to : 0);
	opt = (double)params_pe * wsecc_opt_flops_per_param(&m->opt) / fpc / m->batch;
	compute = fwd + bwd + opt;
	/* Weights read forward and for dL/dx, read and written for dL/dW. */
	sram_bw = 16.0 * ti * to / wf->sram_bytes_per_cycle;
	/* Inputs along the rows, partial sums down the columns; both ways. */
	fabric = 2.0 * (ti + to) * 4.0 / wf->link_bytes_per_cycle;
	if (i == 0)
		host = (l->in * input_elem_bytes(m) + WSECC_HOST_EXTRA_BYTES) /
		       wse_wafer_io_bytes_per_cycle(wf);
	io = fabric > host ? fabric : host;

	lp->region = (struct wsep_region){ 0, 0, w, h };
	lp->pes = (uint64_t)w * h;
	lp->tile_in = ti;
	lp->tile_out = to;
	/* Activations are spread over the layer's PEs, not replicated. */
	lp->sram_per_pe = 4 * params_pe * (2 + wsecc_opt_state_per_param(&m->opt)) +
			  (acts + (uint64_t)rows * cols - 1) / ((uint64_t)rows * cols);
	lp->sram_bytes = lp->sram_per_pe * lp->pes;
	lp->bwd_compute = bwd;
	lp->opt_cycles = opt;
	lp->act_bytes = acts;
	lp->params = (uint64_t)l->in * l->out + l->out;
	e->flops_per_sample = wsecc_layer_flops(m, i);
	e->fwd_cycles = fwd;
	e->bwd_cycles = bwd + opt;
	e->io_cycles = io;
	e->stage_cycles = compute;
	e->limit = WSEP_LIMIT_COMPUTE;
	if (sram_bw > e->stage_cycles) {
		e->stage_cycles = sram_bw;
		e->limit = WSEP_LIMIT_SRAM_BW;
	}
	if (fabric > e->stage_cycles) {
		e->stage_cycles = fabric;
		e->limit = WSEP_LIMIT_FABRIC;
	}
	if (host > e->stage_cycles) {
		e->stage_cycles = host;
		e->limit = WSEP_LIMIT_HOST_IO;
	}
	return lp->sram_per_pe <= usable ? 0 : -1;
}

/* The dense layers as stages: a layer uses no more rows than inputs, no
 * more columns than outputs.
 */
static int model_cost(const void *ctx, uint32_t i, const struct wse_wafer *wf, uint32_t h,
		      uint32_t w, uint32_t held, struct wsecc_layer_plan *lp)
{
	return wsecc_cost_pipelined(ctx, i, wf, h, w, held, lp);
}

static uint32_t model_rows(const void *ctx, uint32_t i)
{
	return ((const struct wsecc_model *)ctx)->layers[i].in;
}

static uint32_t model_cols(const void *ctx, uint32_t i)
{
	return ((const struct wsecc_model *)ctx)->layers[i].out;
}

static void model_describe(const void *ctx, uint32_t i, char *buf, size_t len,
			   struct wsecc_pos *pos)
{
	const struct wsecc_layer *l = &((const struct wsecc_model *)ctx)->layers[i];

	snprintf(buf, len, "layer %u (%ux%u)", i, l->in, l->out);
	*pos = l->pos;
}

void wsecc_model_stages(const struct wsecc_model *m, struct wsecc_stages *st)
{
	*st = (struct wsecc_stages){
		.ctx = m, .file = m->file, .name = m->name,
		.opt_name = wsep_optimizer_name(m->opt.kind), .n = m->num_layers,
		.batch = m->batch, .micro_batch = m->micro_batch, .batch_pos = m->batch_pos,
		.weight_bytes = wsep_precision_weight_bytes(m->precision),
		/* A dense layer keeps only its input and output: nothing to recompute. */
		.recompute = WSECC_RECOMPUTE_OFF, .can_recompute = false,
		.host_bytes = m->input_dim * input_elem_bytes(m) + WSECC_HOST_EXTRA_BYTES,
		.cost = model_cost, .rows = model_rows, .cols = model_cols,
		.describe = model_describe,
	};
}
