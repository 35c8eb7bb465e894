// SPDX-License-Identifier: GPL-2.0-only
/*
 * Micro-batches: how a step's batch is cut, and the per-micro-batch parts
 * of a step that are not a single engine call (loading the staged input,
 * the per-sample losses and predictions), used by the step graph's tasks
 * (fwd_pipeline.c) in both modes.
 */
#include <errno.h>
#include <stdio.h>

#include "fwd_pipeline.h"

int fwd_micro_setup(struct fwd_program *p, uint32_t wanted)
{
	uint32_t b = p->prog->batch, fit = p->prog->micro_batch, n;

	if (!wanted) {
		wanted = b / FWD_MICRO_MIN_SAMPLES;
		if (wanted > FWD_MICRO_BATCHES_DEFAULT)
			wanted = FWD_MICRO_BATCHES_DEFAULT;
	}
	/* No micro-batch larger than the program's: its activations were sized for that. */
	if (fit && wanted < (b + fit - 1) / fit)
		wanted = (b + fit - 1) / fit;
	if (wanted > FWD_MICRO_BATCHES_MAX)
		return -E2BIG;
	n = wanted < b ? wanted : b;
	if (!n)
		n = 1;
	/* Equal sizes rounded up; the count follows (10 in 4 is 3, 3, 3, 1). */
	p->micro_default = (b + n - 1) / n;
	p->micro_size = p->micro_default;
	return 0;
}

int fwd_micro_prepare(struct fwd_program *p, uint32_t leaf, uint32_t batch)
{
	uint32_t size = p->micro_default, count;
	int err = 0;

	/*
	 * A RUN's leaves are its micro-batches: sgemm's result for a row
	 * depends on how many rows the call has (OpenBLAS's kernels and
	 * edges), so the bits of a sample depend on its micro-batch's size,
	 * and systems that must agree compute the same micro-batches.
	 */
	if (leaf)
		size = leaf;
	count = (batch + size - 1) / size;
	if (!size || count > FWD_MICRO_BATCHES_MAX)
		return -EINVAL;
	/* A graph program's micro-batches are graphs, fitted per RUN (fwd_graph_fit()). */
	if (p->prog->graph) {
		p->micro_size = size;
		if (p->micro_max < count)
			p->micro_max = count;
		return 0;
	}
	/* Workspaces too small for the new size go; enough of the right size come. */
	if (size > p->ws_rows) {
		for (uint32_t m = 0; m < p->micro_max; m++)
			engine_workspace_destroy(p->micro_ws[m]);
		p->micro_max = 0;
		p->ws_rows = size;
	}
	for (; !err && p->micro_max < count; p->micro_max++)
		err = engine_workspace_create(&p->shape, p->ws_rows, &p->micro_ws[p->micro_max]);
	if (err)
		return err;
	p->micro_size = size;
	return 0;
}

uint32_t fwd_micro_count(const struct fwd_program *p, uint32_t batch)
{
	return (batch + p->micro_size - 1) / p->micro_size;
}

struct fwd_micro fwd_micro_at(const struct fwd_program *p, uint32_t batch, uint32_t m)
{
	struct fwd_micro s = { .first = m * p->micro_size, .count = p->micro_size };

	if (s.first + s.count > batch)
		s.count = batch - s.first;
	return s;
}

bool fwd_micro_input_is_pixels(const struct wsep_program *prog)
{
	return prog->input_type == WSEP_ELEM_U8 && prog->input_scale == 1.0f / 255.0f;
}

int fwd_micro_load(struct fwd_program *p, uint32_t m, struct fwd_micro s)
{
	size_t off = (size_t)s.first * p->prog->input_dim;

	if (fwd_micro_input_is_pixels(p->prog))
		return engine_load_pixels(p->micro_ws[m], p->in_bytes + off, s.count);
	return engine_load_input(p->micro_ws[m], p->in_f32 + off, s.count);
}

int fwd_micro_results(struct fwd_program *p, uint32_t kind, uint32_t m, struct fwd_micro s,
		      const char **what)
{
	uint32_t L = p->prog->num_layers, classes = p->prog->layers[L - 1].out;
	const float *logits = engine_activation(p->micro_ws[m], L);
	int err;

	if (kind != WSE_LINK_RUN_PREDICT) {
		*what = "the loss";
		for (uint32_t i = 0; i < s.count; i++) {
			size_t correct;

			err = engine_xent_forward(logits + (size_t)i * classes,
						  &p->labels_u8[s.first + i], 1, classes,
						  &p->losses_f32[s.first + i], &correct);
			if (err)
				return err;
		}
	}
	*what = "the predictions";
	err = engine_argmax(logits, s.count, classes, p->preds_u8 + s.first);
	if (err)
		return err;
	for (uint32_t i = s.first; i < s.first + s.count; i++)
		p->preds_i32[i] = p->preds_u8[i];
	return 0;
}

uint32_t fwd_micro_failed(char *text, size_t len, uint32_t step, const char *what, int err)
{
	snprintf(text, len, "step %u: %s failed: %s", step, what, engine_strerror(err));
	return WSE_LINK_E_INTERNAL;
}
