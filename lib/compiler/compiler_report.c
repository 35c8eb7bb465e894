// SPDX-License-Identifier: LGPL-2.1-or-later
/* The text report: the wafer, the mode and why, each layer's region and
 * estimate, the overall estimate, and the even split for comparison.
 */
#include <stdio.h>

#include "compiler_internal.h"

static const char *act_name(enum wsecc_act a)
{
	static const char *const names[] = { "none", "relu", "tanh", "sigmoid", "gelu" };

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

void wsecc_optimizer_text(const struct wsep_optimizer *o, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s lr=%g", wsep_optimizer_name(o->kind), o->lr);

	if (o->kind == WSEP_OPT_MOMENTUM)
		n += snprintf(buf + n, len - (size_t)n, " momentum=%g%s", o->momentum,
			      o->nesterov ? " nesterov" : "");
	if (o->dampening > 0)
		n += snprintf(buf + n, len - (size_t)n, " dampening=%g", o->dampening);
	if (o->kind == WSEP_OPT_ADAM || o->kind == WSEP_OPT_ADAMW)
		n += snprintf(buf + n, len - (size_t)n, " beta1=%g beta2=%g eps=%g", o->beta1,
			      o->beta2, o->eps);
	if (o->weight_decay > 0)
		n += snprintf(buf + n, len - (size_t)n, " weight_decay=%g", o->weight_decay);
	if (o->schedule == WSEP_LR_WARMUP_COSINE)
		snprintf(buf + n, len - (size_t)n, ", %llu warm-up steps then cosine to %g at step %llu",
			 (unsigned long long)o->warmup, o->min_lr, (unsigned long long)o->total_steps);
}

static void rate_text(char *buf, size_t len, double samples_per_s)
{
	if (samples_per_s >= 1e6)
		snprintf(buf, len, "%.2f M samples/s", samples_per_s / 1e6);
	else if (samples_per_s >= 1e3)
		snprintf(buf, len, "%.2f k samples/s", samples_per_s / 1e3);
	else
		snprintf(buf, len, "%.2f samples/s", samples_per_s);
}

void wsecc_report(FILE *f, const struct wsecc_model *m, const struct wsecc_plan *plan)
{
	const struct wse_wafer *w = &plan->wafer;
	int pipelined = plan->mode == WSEP_MODE_PIPELINED;
	uint64_t params = 0;
	char desc[256], opt[160], bytes[32];

	for (uint32_t i = 0; i < m->num_layers; i++)
		params += (uint64_t)m->layers[i].in * m->layers[i].out + m->layers[i].out;
	wse_wafer_describe(w, desc, sizeof(desc));
	wsecc_optimizer_text(&m->opt, opt, sizeof(opt));
	fprintf(f, "model:  %s (%s): input %u %s%s, %u dense layers, %llu parameters,\n"
		   "        loss softmax_xent, %s, batch %u, seed %llu\n",
		m->name, m->file, m->input_dim, wsep_elem_name(m->input_type),
		m->input_type == WSEP_ELEM_U8 ? " (scaled by 1/255)" : "", m->num_layers,
		(unsigned long long)params, opt, m->batch, (unsigned long long)m->seed);
	fprintf(f, "wafer:  %s\n", desc);
	fprintf(f, "mode:   %s (%s)\n\n",
		pipelined ? "layer-pipelined" : "weight streaming", plan->mode_note);

	fprintf(f, "%-5s %-11s %-4s %-21s %8s %-9s %12s %10s %10s %10s %9s %10s  %s\n", "layer",
		"dense", "act", "region x,y wxh", "PEs", "tile", "FLOPs/smp", "SRAM",
		"fwd cyc", "bwd cyc", "I/O cyc", "stage cyc", "limit");
	for (uint32_t i = 0; i < m->num_layers; i++) {
		const struct wsecc_layer_plan *lp = &plan->layers[i];
		char shape[24], region[32], tile[24];

		snprintf(shape, sizeof(shape), "%ux%u", m->layers[i].in, m->layers[i].out);
		snprintf(region, sizeof(region), "%u,%u %ux%u", lp->region.x, lp->region.y,
			 lp->region.w, lp->region.h);
		snprintf(tile, sizeof(tile), "%ux%u", lp->tile_in, lp->tile_out);
		wsecc_bytes(bytes, sizeof(bytes), (double)lp->sram_bytes);
		fprintf(f, "%5u %-11s %-4s %-21s %8llu %-9s %12.0f %10s %10.1f %10.1f %9.1f %10.1f  %s\n",
			i, shape, act_name(m->layers[i].act), region, (unsigned long long)lp->pes,
			tile, lp->est.flops_per_sample, bytes, lp->est.fwd_cycles,
			lp->est.bwd_cycles, lp->est.io_cycles, lp->est.stage_cycles,
			wsep_limit_name(lp->est.limit));
	}
	fprintf(f, "(cycles per %s)\n\n", pipelined ? "sample of each pipeline stage"
						 : "batch of each layer on the whole wafer");

	wsecc_report_summary(f, plan);
}

/* Weight streaming: whether stages recompute, and the activations a PE holds. */
static void wsecc_report_recompute(FILE *f, const struct wsecc_plan *plan)
{
	char held[32], whole[32];

	wsecc_bytes(held, sizeof(held), (double)plan->act_per_pe);
	wsecc_bytes(whole, sizeof(whole), (double)plan->act_full_per_pe);
	if (plan->recompute)
		fprintf(f, "recompute:   on: each stage but the last keeps only its input and runs its\n"
			   "             forward pass again before its backward; a micro-batch's\n"
			   "             activations %s per PE (the stages' inputs and one stage's\n"
			   "             whole), %s with every stage's kept\n",
			held, whole);
	else
		fprintf(f, "recompute:   off: every stage's activations kept, %s per PE a micro-batch\n",
			held);
}

/* The micro-batch, and pipelined the depth: how many samples each stage holds. */
static void wsecc_report_micro_batch(FILE *f, const struct wsecc_plan *plan)
{
	uint32_t n = plan->num_layers, count = (plan->batch + plan->micro_batch - 1) / plan->micro_batch;

	if (plan->mode != WSEP_MODE_PIPELINED) {
		fprintf(f, "micro-batch: %u samples, %u per batch of %u (the wafer fits %u); weights\n"
			   "             stream in for each, gradients are summed over them, MemoryX\n"
			   "             updates once per batch\n",
			plan->micro_batch, count, plan->batch, plan->micro_batch_fit);
		wsecc_report_recompute(f, plan);
		return;
	}
	fprintf(f, "pipeline:    depth %u micro-batches of %u at stage 0 (2 x %u stages - 1), 1 at\n"
		   "             stage %u; samples in flight, whose activations a stage holds:",
		wsecc_pipeline_depth(0, n), plan->micro_batch, n, n - 1);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i % 16 ? " " : "\n             ", plan->in_flight[i]);
	fprintf(f, "\n");
}

void wsecc_report_summary(FILE *f, const struct wsecc_plan *plan)
{
	const struct wse_wafer *w = &plan->wafer;
	const struct wsep_summary *s = &plan->summary;
	const struct wsecc_layer_plan *b = &plan->layers[s->bottleneck_layer];
	int pipelined = plan->mode == WSEP_MODE_PIPELINED;
	char rate[48], even[48], bytes[32];

	rate_text(rate, sizeof(rate), s->samples_per_s);
	if (pipelined) {
		double step = wsecc_pipelined_step_cycles(plan->layers, plan->num_layers, plan->batch,
							  plan->micro_batch);

		fprintf(f, "estimate:    %s: %.0f cycles per step of %u, the slowest stage's %.0f\n"
			   "             (layer %u, %s, %.1f cycles/sample) and %.0f to fill and drain\n"
			   "             the pipeline (the other stages once, the trip across the regions)\n",
			rate, step, plan->batch, plan->batch * b->est.stage_cycles, s->bottleneck_layer,
			wsep_limit_name(s->limit), b->est.stage_cycles,
			step - plan->batch * b->est.stage_cycles);
	} else {
		double batch_cycles = plan->batch * (double)w->clock_hz / s->samples_per_s;

		fprintf(f, "estimate:    %s: %.0f cycles per batch of %u; costliest layer %u (%s)\n",
			rate, batch_cycles, plan->batch, s->bottleneck_layer,
			wsep_limit_name(s->limit));
		fprintf(f, "             each layer runs on the whole %ux%u wafer in turn; weights stream in\n"
			   "             forward and backward, gradients stream out (cycles above are per batch)\n",
			w->width, w->height);
	}
	wsecc_bytes(bytes, sizeof(bytes), (double)s->sram_bytes);
	wsecc_report_micro_batch(f, plan);
	fprintf(f, "active PEs:  %llu of %llu (%.1f%%)%s; SRAM used %s\n",
		(unsigned long long)s->active_pes, (unsigned long long)wse_wafer_pes(w),
		100.0 * (double)s->active_pes / (double)wse_wafer_pes(w),
		pipelined ? "" : " (the largest layer)", bytes);
	fprintf(f, "utilization: %.1f%% of the %.3g PFLOP/s %s peak (%.0f FLOPs per sample)\n",
		100.0 * s->utilization, plan->peak_flops / 1e15,
		plan->peak_flops > wse_wafer_peak_fp32_flops(w) ? "16-bit" : "fp32",
		plan->total_flops_per_sample);
	rate_text(rate, sizeof(rate), plan->host_io_samples_per_s);
	fprintf(f, "host I/O:    %s on its own (%.3g GB/s)\n", rate, w->io_bytes_per_s / 1e9);
	if (!pipelined)
		return;
	if (s->even_split_samples_per_s > 0) {
		uint32_t worst = 0;

		for (uint32_t i = 1; i < plan->num_layers; i++)
			if (plan->even[i].est.stage_cycles > plan->even[worst].est.stage_cycles)
				worst = i;
		rate_text(even, sizeof(even), s->even_split_samples_per_s);
		fprintf(f, "even split:  %s with %u columns x %u rows per layer (slowest: layer %u, %.1f cycles/sample);\n"
			   "             the balanced placement is %.2fx faster\n",
			even, plan->even_columns, w->height, worst, plan->even[worst].est.stage_cycles,
			s->samples_per_s / s->even_split_samples_per_s);
	} else {
		fprintf(f, "even split:  does not fit (%u columns per layer are too few for some layer's SRAM)\n",
			plan->even_columns);
	}
}
