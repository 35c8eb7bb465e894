// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mode choice: layer-pipelined when weights, gradients, optimizer state
 * and the activations of the samples in flight fit in the wafer's SRAM
 * (and the placement finds room for every layer); weight streaming
 * otherwise. A forced mode is obeyed or refused with the numbers, never
 * silently changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "compiler_internal.h"

static void memory_text(const struct wsecc_stages *st, const struct wsecc_plan *plan,
			char *buf, size_t len)
{
	const struct wsecc_memory *mem = &plan->mem;
	char total[32], wts[32], grads[32], opt[32], acts[32];

	wsecc_bytes(total, sizeof(total), (double)mem->total);
	wsecc_bytes(wts, sizeof(wts), (double)mem->weights);
	wsecc_bytes(grads, sizeof(grads), (double)mem->grads);
	wsecc_bytes(opt, sizeof(opt), (double)mem->opt_state);
	wsecc_bytes(acts, sizeof(acts), (double)mem->activations);
	snprintf(buf, len,
		 "%s (weights %s + gradients %s + %s state %s + activations %s of the samples in flight, up to %u of batch %u in micro-batches of %u)",
		 total, wts, grads, st->opt_name, opt, acts, plan->in_flight[0], st->batch,
		 plan->micro_batch);
}

/*
 * Pipelined, the activations a stage holds are those of the samples in
 * flight between its forward and backward passes: its pipeline depth in
 * micro-batches of @plan's micro_batch, at most the batch. Sets the plan's
 * in_flight and its memory's activations and total.
 */
static void size_in_flight(const struct wsecc_stages *st, struct wsecc_plan *plan)
{
	const struct wse_wafer *w = &plan->wafer;
	struct wsecc_memory *mem = &plan->mem;

	mem->activations = 0;
	for (uint32_t i = 0; i < st->n; i++) {
		struct wsecc_layer_plan one;
		uint64_t held = (uint64_t)wsecc_pipeline_depth(i, st->n) * plan->micro_batch;

		plan->in_flight[i] = held < st->batch ? (uint32_t)held : st->batch;
		st->cost(st->ctx, i, w, w->height, w->width, 1, &one);
		mem->activations += one.act_bytes * plan->in_flight[i];
	}
	mem->total = mem->weights + mem->grads + mem->opt_state + mem->activations;
}

uint32_t wsecc_program_micro_batch(const struct wsecc_plan *plan, uint32_t asked)
{
	return plan->mode == WSEP_MODE_WEIGHT_STREAMING ? plan->micro_batch : asked;
}

static void usable_text(const struct wse_wafer *w, const struct wsecc_memory *mem, char *buf,
			size_t len)
{
	char usable[32];

	wsecc_bytes(usable, sizeof(usable), (double)mem->usable);
	snprintf(buf, len, "%s usable (%llu PEs x %llu B after a %llu B reserve each)", usable,
		 (unsigned long long)wse_wafer_pes(w),
		 (unsigned long long)(w->sram_per_pe - mem->reserve_per_pe),
		 (unsigned long long)mem->reserve_per_pe);
}

int wsecc_choose_mode(const struct wsecc_stages *st, enum wsecc_mode mode,
		      struct wsecc_plan *plan, struct wsecc_error *err)
{
	const struct wse_wafer *w = &plan->wafer;
	struct wsecc_stages piped = *st;
	char need[320], have[160];
	struct wsecc_error why;

	if (st->micro_batch > st->batch)
		return wsecc_fail(err, st->file, st->batch_pos.line, st->batch_pos.col,
				  "--micro-batch %u is larger than the batch of %u", st->micro_batch,
				  st->batch);
	/* Pipelined, samples enter one by one unless told to go in micro-batches. */
	plan->micro_batch = st->micro_batch ? st->micro_batch : 1;
	size_in_flight(st, plan);
	piped.held = plan->in_flight;
	memory_text(st, plan, need, sizeof(need));
	usable_text(w, &plan->mem, have, sizeof(have));
	if (mode != WSECC_MODE_WEIGHT_STREAMING) {
		if (plan->mem.total > plan->mem.usable) {
			if (mode == WSECC_MODE_PIPELINED)
				return wsecc_fail(err, st->file, 0, 0,
						  "--execution-mode pipelined refused: %s needs %s of SRAM to run layer-pipelined, but the %s wafer has %s. Use --execution-mode weight_streaming (or auto), or a larger --wafer",
						  st->name, need, w->name, have);
			snprintf(plan->mode_note, sizeof(plan->mode_note),
				 "auto: layer-pipelined would need %.200s, the wafer has %.150s", need,
				 have);
		} else if (wsecc_place_pipelined(&piped, plan, &why) == 0) {
			plan->mode = WSEP_MODE_PIPELINED;
			snprintf(plan->mode_note, sizeof(plan->mode_note), "%s: fits, needs %.200s of %.150s",
				 mode == WSECC_MODE_AUTO ? "auto" : "--execution-mode pipelined", need, have);
			goto done;
		} else if (mode == WSECC_MODE_PIPELINED) {
			return wsecc_fail(err, why.file, why.line, why.col,
					  "--execution-mode pipelined refused: %.380s. Use --execution-mode weight_streaming (or auto), or a larger --wafer",
					  why.msg);
		} else {
			snprintf(plan->mode_note, sizeof(plan->mode_note), "auto: %.400s", why.msg);
		}
	} else {
		snprintf(plan->mode_note, sizeof(plan->mode_note), "--execution-mode weight_streaming");
	}

	memset(plan->layers, 0, sizeof(plan->layers));
	memset(plan->in_flight, 0, sizeof(plan->in_flight));
	memset(&plan->summary, 0, sizeof(plan->summary));
	if (wsecc_plan_streaming(st, plan, err))
		return -EINVAL;
	plan->mode = WSEP_MODE_WEIGHT_STREAMING;
done:
	plan->peak_flops = (double)wse_wafer_pes(w) * (double)w->clock_hz *
			   wse_wafer_product_flops_per_cycle(w, st->weight_bytes > 0 &&
							     st->weight_bytes < 4);
	plan->summary.utilization = plan->total_flops_per_sample * plan->summary.samples_per_s /
				    plan->peak_flops;
	if (plan->summary.utilization > 1)
		plan->summary.utilization = 1;
	return 0;
}

int wsecc_compile(const struct wsecc_model *m, const struct wse_wafer *w, enum wsecc_mode mode,
		  struct wsecc_plan *plan, struct wsecc_error *err)
{
	struct wsecc_stages st;

	memset(plan, 0, sizeof(*plan));
	plan->wafer = *w;
	plan->batch = m->batch;
	plan->num_layers = m->num_layers;
	snprintf(plan->name, sizeof(plan->name), "%s", m->name);
	if (wsecc_validate(m, err))
		return -EINVAL;
	if (m->num_layers < 1 || m->num_layers > WSECC_MAX_LAYERS || m->batch < 1)
		return wsecc_fail(err, m->file, 0, 0, "model has no layers or no batch");
	for (uint32_t i = 0; i < m->num_layers; i++) {
		snprintf(plan->label[i], sizeof(plan->label[i]), "dense %ux%u", m->layers[i].in,
			 m->layers[i].out);
		plan->total_flops_per_sample += wsecc_layer_flops(m, i);
	}
	wsecc_memory_needed(m, w, &plan->mem);
	wsecc_model_stages(m, &st);
	plan->host_io_samples_per_s = w->io_bytes_per_s / st.host_bytes;
	if (wsecc_choose_mode(&st, mode, plan, err))
		return -EINVAL;
	return 0;
}
