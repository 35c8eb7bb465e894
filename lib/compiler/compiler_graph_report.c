// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The --report of an ONNX model: what was imported, the wafer, the mode
 * and why, each unit's kernels, region and estimate, then the same
 * estimate lines as a text model's (compiler_report.c).
 */
#include <stdio.h>
#include <string.h>

#include "compiler_graph_internal.h"

void wsecc_graph_report(FILE *f, const struct wsecc_graph_program *gp)
{
	const struct wsep_program *p = gp->prog;
	const struct wsecc_plan *plan = &gp->plan;
	const struct wsep_graph *g = p->graph;
	int pipelined = plan->mode == WSEP_MODE_PIPELINED;
	char desc[256], opt[200], bytes[32];

	wse_wafer_describe(&plan->wafer, desc, sizeof(desc));
	wsecc_optimizer_text(&p->opt, opt, sizeof(opt));
	fprintf(f, "model:  %s (%s): %s, opset %lld; %u kernels in %u units, %llu parameters\n",
		p->model_name, gp->file, gp->producer, (long long)gp->opset, g->num_nodes,
		p->num_layers, (unsigned long long)gp->params);
	fprintf(f, "        input %u %s%s per sample; logits of %u classes, %u per sample; loss softmax_xent (token level)\n",
		p->input_dim, p->input_type == WSEP_ELEM_I32 ? "token ids" : wsep_elem_name(p->input_type),
		p->input_type == WSEP_ELEM_U8 ? " (scaled by 1/255)" : "", g->classes, g->rows);
	fprintf(f, "        %s, batch %u, seed %llu\n", opt, p->batch, (unsigned long long)p->seed);
	fprintf(f, "wafer:  %s\n", desc);
	fprintf(f, "mode:   %s (%s)\n\n", pipelined ? "layer-pipelined" : "weight streaming",
		plan->mode_note);

	fprintf(f, "%-4s %-11s %-44s %9s %-21s %8s %-9s %12s %10s %10s %10s %9s %10s  %s\n", "unit",
		"name", "kernels", "params", "region x,y wxh", "PEs", "tile", "FLOPs/smp", "SRAM",
		"fwd cyc", "bwd cyc", "I/O cyc", "stage cyc", "limit");
	for (uint32_t k = 0; k < p->num_layers; k++) {
		const struct wsecc_layer_plan *lp = &plan->layers[k];
		char region[32], tile[24], name[16];
		const char *colon = strchr(plan->label[k], ':');

		snprintf(name, sizeof(name), "%.*s",
			 colon ? (int)(colon - plan->label[k]) : 15, plan->label[k]);
		snprintf(region, sizeof(region), "%u,%u %ux%u", lp->region.x, lp->region.y,
			 lp->region.w, lp->region.h);
		if (lp->tile_in)
			snprintf(tile, sizeof(tile), "%ux%u", lp->tile_in, lp->tile_out);
		else
			snprintf(tile, sizeof(tile), "-");
		wsecc_bytes(bytes, sizeof(bytes), (double)lp->sram_bytes);
		fprintf(f, "%4u %-11s %-44.44s %9llu %-21s %8llu %-9s %12.0f %10s %10.1f %10.1f %9.1f %10.1f  %s\n",
			k, name, gp->unit_ops[k], (unsigned long long)lp->params, region,
			(unsigned long long)lp->pes, tile, lp->est.flops_per_sample, bytes,
			lp->est.fwd_cycles, lp->est.bwd_cycles, lp->est.io_cycles,
			lp->est.stage_cycles, wsep_limit_name(lp->est.limit));
	}
	fprintf(f, "(cycles per %s; a unit's tile is that of its largest weight product)\n\n",
		pipelined ? "sample of each pipeline stage" : "batch of each unit on the whole wafer");
	wsecc_report_summary(f, plan);
}
