// SPDX-License-Identifier: GPL-2.0-only
/*
 * Modelled cycles of a RUN. A dense layer on a region of rows x cols PEs
 * splits W (out x in) into tiles of ceil(in/rows) x ceil(out/cols); each
 * PE retires fp32_flops_per_cycle, moves sram_bytes_per_cycle to and from
 * its SRAM, and sends one wavelet per fabric link per cycle. A stage costs
 * the largest of its compute, SRAM, fabric and host I/O times.
 *
 * Layer pipelined: every layer is a stage; the slowest sets the rate, and
 * each step fills and drains the pipeline once (its weights change between
 * steps). Weight streaming: the batch runs in micro-batches of the
 * program's micro_batch samples (the whole batch if 0); for each, the
 * layers run one after another on the whole wafer, each forward and
 * backward no faster than its weights arrive, and its gradients leave
 * after it (to be summed over the micro-batches, MemoryX updating once).
 */
#include <math.h>
#include <stdbool.h>

#include "timing.h"
#include "wse/wsep_cost.h"

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

/*
 * Weight streaming, a layer over a batch of @batch in the program's
 * micro-batches: each pass of a micro-batch of s samples takes
 * max(s x @fwd (or @bwd), @weights in), and training sends the gradients
 * out after each.
 */
static double streaming_layer(const struct wsep_program *prog, uint32_t batch, bool train,
			      double fwd, double bwd, double weights)
{
	uint32_t micro = prog->micro_batch ? prog->micro_batch : prog->batch;
	double total = 0;

	for (uint32_t first = 0; first < batch; first += micro) {
		uint32_t s = batch - first < micro ? batch - first : micro;

		total += max2(s * fwd, weights);
		if (train)
			total += max2(s * bwd, weights) + weights;
	}
	return total;
}

static double opt_flops_per_param(const struct fwd_timing_params *p,
				  const struct wsep_optimizer *o)
{
	double decay = o->weight_decay > 0 ? p->weight_decay_flops_per_param : 0;

	switch (o->kind) {
	case WSEP_OPT_SGD:
		return p->sgd_flops_per_param + decay;
	case WSEP_OPT_MOMENTUM:
		return p->momentum_flops_per_param + decay;
	case WSEP_OPT_ADAM:
	case WSEP_OPT_ADAMW:	/* the decay applied to w instead of g: as many FLOPs */
		return p->adam_flops_per_param + decay;
	}
	return 0;
}

static double io_bytes_per_cycle(const struct fwd_timing *t)
{
	return t->wafer.io_bytes_per_s / (double)t->wafer.clock_hz;
}

/* Bytes of one sample in from the host and its results out. */
static double sample_host_bytes(const struct fwd_timing *t, const struct wsep_program *prog)
{
	double elem = prog->input_type == WSEP_ELEM_U8 ? 1.0 : 4.0;

	/* A graph's sample has a label and a prediction per row. */
	if (prog->graph)
		return prog->input_dim * elem + 8.0 * prog->graph->rows + 4.0;
	return prog->input_dim * elem + t->p.host_extra_bytes_per_sample;
}

/* The device's wafer as the program format describes one. */
static void device_wafer(const struct fwd_timing *t, struct wsep_wafer *w)
{
	*w = (struct wsep_wafer){
		.width = t->wafer.width, .height = t->wafer.height,
		.sram_per_pe = t->wafer.sram_per_pe, .clock_hz = t->wafer.clock_hz,
		.fp32_flops_per_cycle = t->wafer.fp32_flops_per_cycle,
		.sram_bytes_per_cycle = t->wafer.sram_bytes_per_cycle,
		.link_bytes_per_cycle = t->wafer.link_bytes_per_cycle,
		.io_bytes_per_s = t->wafer.io_bytes_per_s,
	};
}

/*
 * A unit of a graph program: its work (wsep_unit_cost(), shared with the
 * compiler) at this file's cycles, combined as a dense layer's are.
 */
static void unit_cost(const struct fwd_timing *t, const struct wsep_program *prog, uint32_t k,
		      enum fwd_timing_kind kind, uint32_t batch, struct fwd_timing_layer *out)
{
	const struct fwd_timing_params *p = &t->p;
	const struct wsep_region *r = &prog->regions[k];
	const struct wsep_costs c = {
		.elementwise = p->elementwise_cycles, .transcendental = p->transcendental_cycles,
		.normalize = p->normalize_cycles, .softmax = p->softmax_cycles,
		.window = p->window_cycles, .loss_fwd = p->loss_fwd_cycles_per_logit,
		.loss_bwd = p->loss_bwd_cycles_per_logit,
		.opt_flops = opt_flops_per_param(p, &prog->opt),
		.sram_bytes_per_weight = p->sram_bytes_per_weight,
		.fabric_directions = p->fabric_directions,
		.product_flops_per_cycle = wse_wafer_product_flops_per_cycle(
			&t->wafer, prog->precision != WSEP_PRECISION_FP32),
	};
	bool train = kind == FWD_TIMING_TRAIN;
	unsigned int state = prog->opt.kind == WSEP_OPT_MOMENTUM ? 1 :
			     prog->opt.kind >= WSEP_OPT_ADAM ? 2 : 0;
	struct wsep_unit_cost uc;
	struct wsep_wafer w;

	device_wafer(t, &w);
	wsep_unit_cost(prog, k, &w, r->h, r->w, batch, state, &c, &uc);
	*out = (struct fwd_timing_layer){ 0 };
	if (prog->mode == WSEP_MODE_PIPELINED) {
		out->compute = train ? uc.fwd + uc.bwd + uc.opt : uc.fwd;
		out->sram = train ? uc.sram : uc.sram / 4;
		out->fabric = train ? uc.fabric : uc.fabric / 2;
		out->host = uc.host;
		out->stage = max2(max2(out->compute, out->sram), max2(out->fabric, out->host));
		return;
	}
	/* Recompute: a unit but the last runs its forward pass again before its backward. */
	if ((prog->exec_flags & WSEP_EXEC_RECOMPUTE) && k + 1 < prog->num_layers)
		uc.bwd += uc.fwd;
	out->weights = (double)wsep_layer_params(&prog->layers[k]) *
		       wsep_precision_weight_bytes(prog->precision) / io_bytes_per_cycle(t);
	out->compute = batch * (train ? uc.fwd + uc.bwd : uc.fwd);
	out->stage = streaming_layer(prog, batch, train, uc.fwd, uc.bwd, out->weights);
}

void fwd_timing_layer(const struct fwd_timing *t, const struct wsep_program *prog,
		      uint32_t k, enum fwd_timing_kind kind, uint32_t batch,
		      struct fwd_timing_layer *out)
{
	const struct fwd_timing_params *p = &t->p;
	const struct wsep_layer *l = &prog->layers[k];
	const struct wsep_region *r = &prog->regions[k];
	uint32_t rows = r->h < l->in ? r->h : l->in;
	uint32_t cols = r->w < l->out ? r->w : l->out;
	double ti = ceil_div(l->in, rows), to = ceil_div(l->out, cols);
	double fpc = t->wafer.fp32_flops_per_cycle, e = p->elementwise_cycles;
	double mm = 2.0 * ti * to /
		    wse_wafer_product_flops_per_cycle(&t->wafer, prog->precision != WSEP_PRECISION_FP32);
	double relu = l->act == WSEP_ACT_RELU ? to * e : 0;
	bool last = k + 1 == prog->num_layers;
	double fwd, bwd, opt;
	bool train = kind == FWD_TIMING_TRAIN;

	if (l->kind == WSEP_LAYER_UNIT) {
		unit_cost(t, prog, k, kind, batch, out);
		return;
	}
	fwd = mm + to * e + relu;
	if (k == 0 && prog->input_type == WSEP_ELEM_U8)
		fwd += ti * e;
	if (last)
		fwd += p->loss_fwd_cycles_per_logit * to;
	bwd = mm + (k > 0 ? mm : 0) + to * e + relu + (last ? p->loss_bwd_cycles_per_logit * to : 0);
	*out = (struct fwd_timing_layer){ 0 };

	if (prog->mode == WSEP_MODE_PIPELINED) {
		double dirs = train ? p->fabric_directions : p->fabric_directions / 2;
		double sram_bytes = train ? p->sram_bytes_per_weight : p->sram_bytes_per_weight / 4;

		opt = (ti * to + to) * opt_flops_per_param(p, &prog->opt) / fpc / batch;
		out->compute = train ? fwd + bwd + opt : fwd;
		out->sram = sram_bytes * ti * to / t->wafer.sram_bytes_per_cycle;
		out->fabric = dirs * (ti + to) * 4.0 / t->wafer.link_bytes_per_cycle;
		if (k == 0)
			out->host = sample_host_bytes(t, prog) / io_bytes_per_cycle(t);
		out->stage = max2(max2(out->compute, out->sram), max2(out->fabric, out->host));
		return;
	}
	/* Weight streaming: a micro-batch at a time on the whole wafer. */
	out->weights = (double)wsep_layer_params(l) * wsep_precision_weight_bytes(prog->precision) /
		       io_bytes_per_cycle(t);
	out->compute = batch * (train ? fwd + bwd : fwd);
	out->stage = streaming_layer(prog, batch, train, fwd, bwd, out->weights);
}

/*
 * Pipelined, the samples a micro-batch carries into the pipeline: each
 * crosses a stage before the micro-batch goes on (1: sample by sample).
 */
static double pipeline_granule(const struct wsep_program *prog, uint32_t batch)
{
	uint32_t u = prog->micro_batch ? prog->micro_batch : 1;

	return u < batch ? u : batch;
}

static double pipelined_step(const struct fwd_timing *t, const struct wsep_program *prog,
			     enum fwd_timing_kind kind, uint32_t batch)
{
	double worst = 0, sum = 0, hops = 0, maxh = 0;

	for (uint32_t k = 0; k < prog->num_layers; k++) {
		struct fwd_timing_layer c;

		fwd_timing_layer(t, prog, k, kind, batch, &c);
		worst = max2(worst, c.stage);
		sum += c.stage;
		hops += prog->regions[k].w;
		maxh = max2(maxh, prog->regions[k].h);
	}
	/* Steady state at the slowest stage; the first sample crosses every
	 * other stage (and the mesh) once to fill, the last to drain.
	 */
	hops = (hops + maxh) * t->p.hop_cycles * (kind == FWD_TIMING_TRAIN ? 2 : 1);
	return batch * worst + pipeline_granule(prog, batch) * (sum - worst) + hops;
}

static double streaming_step(const struct fwd_timing *t, const struct wsep_program *prog,
			     enum fwd_timing_kind kind, uint32_t batch)
{
	double total = batch * sample_host_bytes(t, prog) / io_bytes_per_cycle(t);

	for (uint32_t k = 0; k < prog->num_layers; k++) {
		struct fwd_timing_layer c;

		fwd_timing_layer(t, prog, k, kind, batch, &c);
		total += c.stage;
	}
	return total;
}

uint64_t fwd_timing_run_cycles(const struct fwd_timing *t, const struct wsep_program *prog,
			       enum fwd_timing_kind kind, uint32_t steps, uint32_t batch)
{
	double step;

	if (!steps || !batch)
		return 0;
	step = prog->mode == WSEP_MODE_PIPELINED ? pipelined_step(t, prog, kind, batch)
						 : streaming_step(t, prog, kind, batch);
	return (uint64_t)llround(ceil(step) * steps);
}

uint64_t fwd_timing_est_cycles(const struct wsep_program *prog, enum fwd_timing_kind kind,
			       uint32_t steps, uint32_t batch)
{
	double clock = (double)prog->wafer.clock_hz, B = prog->batch, r = (double)batch / B;
	double worst = 0, sum = 0, worst_f = 0, sum_f = 0, step_b, step;
	bool train = kind == FWD_TIMING_TRAIN;

	if (!steps || !batch || !(prog->summary.samples_per_s > 0))
		return 0;
	/* The compiler's step of its own batch, and its layers' costs. */
	step_b = B * clock / prog->summary.samples_per_s;
	for (uint32_t k = 0; k < prog->num_layers; k++) {
		const struct wsep_estimate *e = &prog->estimates[k];
		/* Forward only, the fabric carries activations one way: half its traffic. */
		double f = max2(e->fwd_cycles, e->io_cycles / 2);

		worst = max2(worst, e->stage_cycles);
		sum += e->stage_cycles;
		worst_f = max2(worst_f, f);
		sum_f += f;
	}
	if (prog->mode == WSEP_MODE_PIPELINED) {
		/* The compiler's step is B x the slowest stage, the other stages
		 * once, and the trip across the regions both ways: what is left.
		 */
		double u = pipeline_granule(prog, prog->batch);
		double trip = max2(0, (step_b - B * worst - u * (sum - worst)) / 2);

		u = pipeline_granule(prog, batch);
		step = train ? batch * worst + u * (sum - worst) + 2 * trip
			     : batch * worst_f + u * (sum_f - worst_f) + trip;
		return (uint64_t)llround(step * steps);
	}
	/*
	 * Weight streaming: the samples' transfer (what the layers leave of the
	 * compiler's step) scales with the batch; a layer's passes do not below
	 * the time its weights take to arrive: each micro-batch's is
	 * max(compute, weights in), the compute scaling with its samples (the
	 * estimate's passes over the whole batch taken as compute: exact when
	 * compute bound; when weight bound each pass is the weights' time).
	 */
	step = (step_b - sum) * r;
	for (uint32_t k = 0; k < prog->num_layers; k++) {
		const struct wsep_estimate *e = &prog->estimates[k];

		step += streaming_layer(prog, batch, train, e->fwd_cycles / B, e->bwd_cycles / B,
					e->io_cycles);
	}
	return (uint64_t)llround(step * steps);
}
