// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Semantic checks of a program: every field in range, and the fields
 * consistent with each other. The firmware relies on these (a layer chain
 * whose dimensions match, regions inside the wafer, weights that are all
 * finite), so they run on every read and before every write.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wsep_internal.h"

#define MAX_WAFER_DIM 65535U
#define MAX_STREAM_ELEMS (1ULL << 40)

int wsep_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int finite_nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

static int check_wafer(const struct wsep_wafer *w, char *err, size_t errlen)
{
	if (!w->name[0])
		return wsep_fail(err, errlen, "wafer: empty name");
	if (w->width < 1 || w->width > MAX_WAFER_DIM || w->height < 1 || w->height > MAX_WAFER_DIM)
		return wsep_fail(err, errlen, "wafer: mesh %ux%u outside 1..%u", w->width,
				 w->height, MAX_WAFER_DIM);
	if (w->sram_per_pe < 1024 || w->sram_per_pe > (1ULL << 30))
		return wsep_fail(err, errlen, "wafer: SRAM per PE %llu outside 1 KiB..1 GiB",
				 (unsigned long long)w->sram_per_pe);
	if (w->clock_hz < 1)
		return wsep_fail(err, errlen, "wafer: clock is zero");
	if (!(isfinite(w->fp32_flops_per_cycle) && w->fp32_flops_per_cycle > 0) ||
	    !(isfinite(w->sram_bytes_per_cycle) && w->sram_bytes_per_cycle > 0) ||
	    !(isfinite(w->link_bytes_per_cycle) && w->link_bytes_per_cycle > 0) ||
	    !(isfinite(w->io_bytes_per_s) && w->io_bytes_per_s > 0))
		return wsep_fail(err, errlen, "wafer: a rate is not a positive finite number");
	return 0;
}

/* The optimizer's extensions (feature TRAINING): torch.optim's rules. */
static int check_extensions(const struct wsep_optimizer *o, char *err, size_t errlen)
{
	if (!(finite_nonneg(o->dampening) && o->dampening < 1) ||
	    (o->dampening > 0 && o->kind != WSEP_OPT_MOMENTUM))
		return wsep_fail(err, errlen, "program: dampening %g needs momentum and [0, 1)",
				 o->dampening);
	if (o->nesterov > 1 ||
	    (o->nesterov && (o->kind != WSEP_OPT_MOMENTUM || !(o->momentum > 0) || o->dampening > 0)))
		return wsep_fail(err, errlen,
				 "program: Nesterov (%u) needs the momentum optimizer, a momentum > 0 and no dampening",
				 o->nesterov);
	if (o->schedule == WSEP_LR_CONSTANT) {
		if (o->warmup || o->total_steps || o->min_lr != 0)
			return wsep_fail(err, errlen,
					 "program: a constant learning rate has no warm-up, total or floor");
		return 0;
	}
	if (o->schedule != WSEP_LR_WARMUP_COSINE)
		return wsep_fail(err, errlen, "program: unknown learning-rate schedule %u",
				 (unsigned)o->schedule);
	if (o->warmup >= o->total_steps || !finite_nonneg(o->min_lr))
		return wsep_fail(err, errlen,
				 "program: warm-up %llu must be shorter than the %llu steps and the floor %g >= 0",
				 (unsigned long long)o->warmup, (unsigned long long)o->total_steps,
				 o->min_lr);
	return 0;
}

static int check_optimizer(const struct wsep_optimizer *o, char *err, size_t errlen)
{
	if (o->kind < WSEP_OPT_SGD || o->kind > WSEP_OPT_ADAMW)
		return wsep_fail(err, errlen, "program: unknown optimizer %u", (unsigned)o->kind);
	if (!(isfinite(o->lr) && o->lr > 0))
		return wsep_fail(err, errlen, "program: learning rate %g is not positive", o->lr);
	if (!(finite_nonneg(o->momentum) && o->momentum < 1))
		return wsep_fail(err, errlen, "program: momentum %g outside [0, 1)", o->momentum);
	if (!(finite_nonneg(o->beta1) && o->beta1 < 1) || !(finite_nonneg(o->beta2) && o->beta2 < 1))
		return wsep_fail(err, errlen, "program: Adam betas %g, %g outside [0, 1)", o->beta1,
				 o->beta2);
	if (!(isfinite(o->eps) && o->eps > 0) &&
	    (o->kind == WSEP_OPT_ADAM || o->kind == WSEP_OPT_ADAMW))
		return wsep_fail(err, errlen, "program: Adam eps %g is not positive", o->eps);
	if (!finite_nonneg(o->eps) || !finite_nonneg(o->weight_decay))
		return wsep_fail(err, errlen, "program: eps or weight decay negative or not finite");
	return check_extensions(o, err, errlen);
}

static int check_layers(const struct wsep_program *p, char *err, size_t errlen)
{
	uint64_t offset = 0;
	uint64_t wafer_sram = (uint64_t)p->wafer.width * p->wafer.height * p->wafer.sram_per_pe;
	enum wsep_layer_kind want = p->graph ? WSEP_LAYER_UNIT : WSEP_LAYER_DENSE;

	for (uint32_t i = 0; i < p->num_layers; i++) {
		const struct wsep_layer *l = &p->layers[i];
		uint32_t want_in = i ? p->layers[i - 1].out : p->input_dim;

		if (l->kind != WSEP_LAYER_DENSE && l->kind != WSEP_LAYER_UNIT)
			return wsep_fail(err, errlen, "layer %u: unknown kind %u", i, (unsigned)l->kind);
		if (l->kind != want)
			return wsep_fail(err, errlen, "layer %u: a %s in a %s program", i,
					 l->kind == WSEP_LAYER_UNIT ? "graph unit" : "dense layer",
					 p->graph ? "graph" : "layer");
		if (l->act != WSEP_ACT_NONE && (l->act != WSEP_ACT_RELU || p->graph))
			return wsep_fail(err, errlen, "layer %u: unknown activation %u", i,
					 (unsigned)l->act);
		/* A unit's are elements per sample, only the record's u32 bounds them. */
		if (l->in < 1 || l->out < 1 ||
		    (l->kind == WSEP_LAYER_DENSE && (l->in > WSEP_MAX_DIM || l->out > WSEP_MAX_DIM)))
			return wsep_fail(err, errlen, "layer %u: dimensions %ux%u outside 1..%u", i,
					 l->in, l->out, WSEP_MAX_DIM);
		if (l->in != want_in)
			return wsep_fail(err, errlen, "layer %u: input %u does not match %s %u", i,
					 l->in, i ? "previous layer's output" : "input dimension",
					 want_in);
		/* Dense: written as in * out + out (0 in a program not yet written). */
		if (l->kind == WSEP_LAYER_DENSE && l->params &&
		    l->params != (uint64_t)l->in * l->out + l->out)
			return wsep_fail(err, errlen, "layer %u: %llu parameters, a %ux%u dense layer has %llu",
					 i, (unsigned long long)l->params, l->in, l->out,
					 (unsigned long long)l->in * l->out + l->out);
		if (wsep_layer_params(l) < 1 || wsep_layer_params(l) > (1ULL << 40))
			return wsep_fail(err, errlen, "layer %u: %llu parameters", i,
					 (unsigned long long)l->params);
		if (l->weight_offset != offset)
			return wsep_fail(err, errlen, "layer %u: weight offset %llu, expected %llu", i,
					 (unsigned long long)l->weight_offset,
					 (unsigned long long)offset);
		if (l->sram_bytes > wafer_sram)
			return wsep_fail(err, errlen, "layer %u: SRAM %llu B exceeds the wafer's %llu B",
					 i, (unsigned long long)l->sram_bytes,
					 (unsigned long long)wafer_sram);
		offset += wsep_layer_params(l);
	}
	if (p->layers[p->num_layers - 1].act != WSEP_ACT_NONE)
		return wsep_fail(err, errlen,
				 "layer %u: the last layer feeds softmax cross-entropy and must have no activation",
				 p->num_layers - 1);
	return 0;
}

static int overlap(const struct wsep_region *a, const struct wsep_region *b)
{
	return (uint64_t)a->x < (uint64_t)b->x + b->w && (uint64_t)b->x < (uint64_t)a->x + a->w &&
	       (uint64_t)a->y < (uint64_t)b->y + b->h && (uint64_t)b->y < (uint64_t)a->y + a->h;
}

static int check_regions(const struct wsep_program *p, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const struct wsep_region *r = &p->regions[i];

		if (r->w < 1 || r->h < 1 || (uint64_t)r->x + r->w > p->wafer.width ||
		    (uint64_t)r->y + r->h > p->wafer.height)
			return wsep_fail(err, errlen,
					 "region %u: %ux%u at (%u,%u) is not inside the %ux%u wafer",
					 i, r->w, r->h, r->x, r->y, p->wafer.width, p->wafer.height);
		if (p->mode == WSEP_MODE_WEIGHT_STREAMING) {
			if (r->x || r->y || r->w != p->wafer.width || r->h != p->wafer.height)
				return wsep_fail(err, errlen,
						 "region %u: weight streaming runs each layer on the whole wafer",
						 i);
			continue;
		}
		if (p->layers[i].sram_bytes > (uint64_t)r->w * r->h * p->wafer.sram_per_pe)
			return wsep_fail(err, errlen, "region %u: layer needs %llu B, region has %llu B",
					 i, (unsigned long long)p->layers[i].sram_bytes,
					 (unsigned long long)r->w * r->h * p->wafer.sram_per_pe);
		for (uint32_t j = 0; j < i; j++)
			if (overlap(r, &p->regions[j]))
				return wsep_fail(err, errlen, "region %u overlaps region %u", i, j);
	}
	return 0;
}

static int stream_name_ok(const char *name)
{
	if (!name[0])
		return 0;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		      *c == '_'))
			return 0;
	return 1;
}

static int check_streams(const struct wsep_program *p, char *err, size_t errlen)
{
	if (p->num_streams < 1 || p->num_streams > WSEP_MAX_STREAMS)
		return wsep_fail(err, errlen, "streams: %u streams, expected 1..%u", p->num_streams,
				 WSEP_MAX_STREAMS);
	for (uint32_t i = 0; i < p->num_streams; i++) {
		const struct wsep_stream *s = &p->streams[i];

		if (!stream_name_ok(s->name))
			return wsep_fail(err, errlen,
					 "stream %u: name must be non-empty [a-z0-9._]", i);
		if (s->dir != WSEP_DIR_HOST_TO_DEVICE && s->dir != WSEP_DIR_DEVICE_TO_HOST)
			return wsep_fail(err, errlen, "stream %u (%s): unknown direction %u", i,
					 s->name, (unsigned)s->dir);
		if (s->elem < WSEP_ELEM_U8 || s->elem > WSEP_ELEM_F32)	/* not i64 */
			return wsep_fail(err, errlen, "stream %u (%s): unknown element type %u", i,
					 s->name, (unsigned)s->elem);
		if (s->unit != WSEP_UNIT_PER_SAMPLE && s->unit != WSEP_UNIT_PER_TRANSFER)
			return wsep_fail(err, errlen, "stream %u (%s): unknown unit %u", i, s->name,
					 (unsigned)s->unit);
		if (s->layer < -1 || s->layer >= (int64_t)p->num_layers)
			return wsep_fail(err, errlen, "stream %u (%s): layer %d outside -1..%u", i,
					 s->name, s->layer, p->num_layers - 1);
		if (s->elems < 1 || s->elems > MAX_STREAM_ELEMS)
			return wsep_fail(err, errlen, "stream %u (%s): %llu elements", i, s->name,
					 (unsigned long long)s->elems);
		for (uint32_t j = 0; j < i; j++) {
			if (p->streams[j].id == s->id)
				return wsep_fail(err, errlen, "stream %u (%s): id %u used twice", i,
						 s->name, s->id);
			if (strcmp(p->streams[j].name, s->name) == 0)
				return wsep_fail(err, errlen, "stream %u: name '%s' used twice", i,
						 s->name);
		}
	}
	return 0;
}

static int check_estimates(const struct wsep_program *p, char *err, size_t errlen)
{
	const struct wsep_summary *s = &p->summary;

	for (uint32_t i = 0; i < p->num_layers; i++) {
		const struct wsep_estimate *e = &p->estimates[i];

		if (!finite_nonneg(e->flops_per_sample) || !finite_nonneg(e->fwd_cycles) ||
		    !finite_nonneg(e->bwd_cycles) || !finite_nonneg(e->io_cycles) ||
		    !finite_nonneg(e->stage_cycles))
			return wsep_fail(err, errlen, "estimate %u: negative or not finite", i);
		if (e->limit < WSEP_LIMIT_COMPUTE || e->limit > WSEP_LIMIT_SRAM_BW)
			return wsep_fail(err, errlen, "estimate %u: unknown limit %u", i, e->limit);
	}
	if (!finite_nonneg(s->samples_per_s) || !finite_nonneg(s->even_split_samples_per_s) ||
	    !finite_nonneg(s->utilization) || s->utilization > 1.0 + 1e-9)
		return wsep_fail(err, errlen, "summary: rates negative, not finite or utilization > 1");
	if (s->active_pes > (uint64_t)p->wafer.width * p->wafer.height)
		return wsep_fail(err, errlen, "summary: %llu active PEs on a %ux%u wafer",
				 (unsigned long long)s->active_pes, p->wafer.width, p->wafer.height);
	if (s->bottleneck_layer >= p->num_layers)
		return wsep_fail(err, errlen, "summary: bottleneck layer %u of %u",
				 s->bottleneck_layer, p->num_layers);
	if (s->limit < WSEP_LIMIT_COMPUTE || s->limit > WSEP_LIMIT_SRAM_BW)
		return wsep_fail(err, errlen, "summary: unknown limit %u", s->limit);
	return 0;
}

static int check_program(const struct wsep_program *p, bool need_weights, char *err,
			 size_t errlen)
{
	if (check_wafer(&p->wafer, err, errlen))
		return -EINVAL;
	if (memchr(p->model_name, 0, sizeof(p->model_name)) == NULL)
		return wsep_fail(err, errlen, "program: model name not NUL-terminated");
	if (p->mode != WSEP_MODE_PIPELINED && p->mode != WSEP_MODE_WEIGHT_STREAMING)
		return wsep_fail(err, errlen, "program: unknown mode %u", (unsigned)p->mode);
	if (p->batch < 1 || p->batch > WSEP_MAX_BATCH)
		return wsep_fail(err, errlen, "program: batch %u outside 1..%u", p->batch,
				 WSEP_MAX_BATCH);
	if (p->precision != WSEP_PRECISION_FP32 && p->precision != WSEP_PRECISION_FP16 &&
	    p->precision != WSEP_PRECISION_BF16)
		return wsep_fail(err, errlen, "program: unknown precision %u (0 fp32, 1 fp16, 2 bf16)",
				 p->precision);
	if (p->micro_batch > p->batch)
		return wsep_fail(err, errlen, "program: micro-batch of %u samples, more than the batch of %u",
				 p->micro_batch, p->batch);
	if (p->exec_flags & ~WSEP_EXEC_KNOWN)
		return wsep_fail(err, errlen, "program: unknown execution flags 0x%x",
				 p->exec_flags & ~WSEP_EXEC_KNOWN);
	if ((p->exec_flags & WSEP_EXEC_RECOMPUTE) &&
	    (!p->graph || p->mode != WSEP_MODE_WEIGHT_STREAMING))
		return wsep_fail(err, errlen, "program: recompute is for graph programs in weight streaming");
	if (p->input_dim < 1 || p->input_dim > WSEP_MAX_DIM)
		return wsep_fail(err, errlen, "program: input dimension %u outside 1..%u",
				 p->input_dim, WSEP_MAX_DIM);
	/* Token ids (i32) feed graphs only: a dense layer takes numbers. */
	if (p->input_type != WSEP_ELEM_U8 && p->input_type != WSEP_ELEM_F32 &&
	    (p->input_type != WSEP_ELEM_I32 || !p->graph))
		return wsep_fail(err, errlen, "program: input type %u is not u8 or f32%s",
				 (unsigned)p->input_type, p->graph ? " or i32" : "");
	if (!(isfinite(p->input_scale) && p->input_scale > 0))
		return wsep_fail(err, errlen, "program: input scale %g is not positive",
				 (double)p->input_scale);
	if (p->loss != WSEP_LOSS_SOFTMAX_XENT)
		return wsep_fail(err, errlen, "program: unknown loss %u", (unsigned)p->loss);
	if (check_optimizer(&p->opt, err, errlen))
		return -EINVAL;
	if (p->num_layers < 1 || p->num_layers > WSEP_MAX_LAYERS)
		return wsep_fail(err, errlen, "program: %u layers, expected 1..%u", p->num_layers,
				 WSEP_MAX_LAYERS);
	if (check_layers(p, err, errlen) || check_regions(p, err, errlen) ||
	    check_streams(p, err, errlen) || check_estimates(p, err, errlen))
		return -EINVAL;
	if (p->graph && !p->weights && need_weights)
		return wsep_fail(err, errlen,
				 "weights: a graph program carries its initial weights (section 8 is missing)");
	if (p->weights) {
		uint64_t want = wsep_total_params(p->layers, p->num_layers);

		if (p->num_weights != want)
			return wsep_fail(err, errlen, "weights: %llu floats, the layers have %llu",
					 (unsigned long long)p->num_weights,
					 (unsigned long long)want);
		for (uint64_t i = 0; i < p->num_weights; i++)
			if (!isfinite(p->weights[i]))
				return wsep_fail(err, errlen, "weights: float %llu is not finite",
						 (unsigned long long)i);
	}
	if (p->graph && wsep_check_graph(p, err, errlen))
		return -EINVAL;
	return wsep_param_names_check(p, p->param_names, p->num_param_names, err, errlen);
}

int wsep_check_program(const struct wsep_program *p, char *err, size_t errlen)
{
	return check_program(p, true, err, errlen);
}

int wsep_check(const struct wsep_program *p, bool need_weights, char *err, size_t errlen)
{
	if (!p->layers || !p->regions || !p->estimates || !p->streams)
		return wsep_fail(err, errlen, "program has no layers, regions, estimates or streams");
	return check_program(p, need_weights, err, errlen);
}
