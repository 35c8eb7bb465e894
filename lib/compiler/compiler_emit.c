// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The plan as a .wsep program: everything the firmware needs to run the
 * model without the model file, and the compiler's estimates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_internal.h"
#include "compiler_param_names.h"

/* The training streams, in the order that gives them ids 0, 1, ...: the
 * fixed four, then per layer weights.K (and grads.K when streaming).
 */
static void add_streams(struct wsep_program *p)
{
	struct wsep_stream *s = p->streams;

	for (int r = WSEP_TRAIN_SAMPLES; r <= WSEP_TRAIN_PREDICTIONS; r++)
		wsep_train_stream(p, r, 0, &s[p->num_streams++]);
	for (uint32_t i = 0; i < p->num_layers; i++) {
		if (!wsep_train_stream(p, WSEP_TRAIN_WEIGHTS, i, &s[p->num_streams]))
			p->num_streams++;
		if (!wsep_train_stream(p, WSEP_TRAIN_GRADS, i, &s[p->num_streams]))
			p->num_streams++;
	}
	for (uint32_t i = 0; i < p->num_streams; i++)
		s[i].id = i;
}

int wsecc_build_program(const struct wsecc_model *m, const struct wsecc_plan *plan,
			int with_weights, struct wsep_program **out, struct wsecc_error *err)
{
	struct wsep_program *p = calloc(1, sizeof(*p));
	const struct wse_wafer *w = &plan->wafer;
	uint64_t offset = 0;

	*out = NULL;
	if (!p)
		return wsecc_fail(err, m->file, 0, 0, "out of memory");
	p->version_major = WSEP_VERSION_MAJOR;
	p->version_minor = WSEP_VERSION_MINOR;
	snprintf(p->wafer.name, sizeof(p->wafer.name), "%s", w->name);
	p->wafer.width = w->width;
	p->wafer.height = w->height;
	p->wafer.sram_per_pe = w->sram_per_pe;
	p->wafer.clock_hz = w->clock_hz;
	p->wafer.fp32_flops_per_cycle = w->fp32_flops_per_cycle;
	p->wafer.sram_bytes_per_cycle = w->sram_bytes_per_cycle;
	p->wafer.link_bytes_per_cycle = w->link_bytes_per_cycle;
	p->wafer.io_bytes_per_s = w->io_bytes_per_s;
	snprintf(p->model_name, sizeof(p->model_name), "%s", m->name);
	p->mode = plan->mode;
	p->batch = m->batch;
	p->micro_batch = wsecc_program_micro_batch(plan, m->micro_batch);
	p->precision = m->precision;
	p->seed = m->seed;
	p->input_dim = m->input_dim;
	p->input_type = m->input_type;
	p->input_scale = m->input_scale;
	p->loss = WSEP_LOSS_SOFTMAX_XENT;
	p->opt = m->opt;
	p->num_layers = m->num_layers;
	p->summary = plan->summary;
	p->layers = calloc(m->num_layers, sizeof(*p->layers));
	p->regions = calloc(m->num_layers, sizeof(*p->regions));
	p->estimates = calloc(m->num_layers, sizeof(*p->estimates));
	p->streams = calloc(4 + 2 * m->num_layers, sizeof(*p->streams));
	if (!p->layers || !p->regions || !p->estimates || !p->streams)
		goto oom;
	for (uint32_t i = 0; i < m->num_layers; i++) {
		struct wsep_layer *l = &p->layers[i];

		l->kind = WSEP_LAYER_DENSE;
		l->act = m->layers[i].act == WSECC_ACT_RELU ? WSEP_ACT_RELU : WSEP_ACT_NONE;
		l->in = m->layers[i].in;
		l->out = m->layers[i].out;
		l->sram_bytes = plan->layers[i].sram_bytes;
		l->weight_offset = offset;
		l->params = wsep_layer_params(l);
		offset += l->params;
		p->regions[i] = plan->layers[i].region;
		p->estimates[i] = plan->layers[i].est;
	}
	add_streams(p);
	if (wsecc_layer_param_names(p))
		goto oom;
	if (with_weights) {
		p->num_weights = offset;
		p->weights = malloc(offset * sizeof(float));
		if (!p->weights)
			goto oom;
		wsep_init_weights(m->seed, p->layers, p->num_layers, p->weights);
	}
	*out = p;
	return 0;
oom:
	wsep_program_free(p);
	wsecc_fail(err, m->file, 0, 0, "out of memory building the program");
	return -ENOMEM;
}

int wsecc_emit(const struct wsecc_model *m, const struct wsecc_plan *plan, int with_weights,
	       void **buf, size_t *len, struct wsecc_error *err)
{
	struct wsep_program *p;
	char msg[256];
	int ret;

	ret = wsecc_build_program(m, plan, with_weights, &p, err);
	if (ret)
		return ret;
	ret = wsep_write(p, buf, len, msg, sizeof(msg));
	wsep_program_free(p);
	if (ret)
		return wsecc_fail(err, m->file, 0, 0, "internal error: the program is invalid: %s",
				  msg);
	return 0;
}

int wsecc_emit_file(const struct wsecc_model *m, const struct wsecc_plan *plan,
		    int with_weights, const char *path, struct wsecc_error *err)
{
	struct wsep_program *p;
	char msg[512];
	int ret;

	ret = wsecc_build_program(m, plan, with_weights, &p, err);
	if (ret)
		return ret;
	ret = wsep_write_file(p, path, msg, sizeof(msg));
	wsep_program_free(p);
	if (ret) {
		wsecc_fail(err, path, 0, 0, "cannot write the program: %.400s", msg);
		return ret;
	}
	return 0;
}
