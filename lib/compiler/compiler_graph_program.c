// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An ONNX model compiled into a graph program (Documentation/compiler.rst,
 * "Graph programs"): imported at the batch and, from shapes only, at one
 * more (the tensors' batch dimensions are what differs), lowered to an engine graph with the
 * token-level cross-entropy as its loss, cut into units
 * (compiler_units.c), each unit costed on rectangles of PEs
 * (wse/wsep_cost.h) and placed or streamed like a dense layer, and written
 * as a .wsep graph program: the values with the parameters unit by unit
 * in the weights layout, the nodes unit by unit, the constants, the
 * initial weights of the export.
 *
 * Memory: the engine graphs hold the parameters' shapes only; the weights
 * are copied once, from the imported tensors (memory-mapped external data
 * whose pages are dropped after the copy) into the program. Compiled from
 * shapes (--no-weights), the program has no weights at all, so a 175 B
 * parameter model compiles in the memory of its graph.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_graph_internal.h"
#include "compiler_param_names.h"
#include "wse/engine_wsep.h"
#include "wse/wsep_cost.h"

struct side {
	struct wsecc_graph *ir;
	struct engine_graph *eg;
	int *ids;		/* per IR tensor: its engine value, or -1 */
	int *ir_of;		/* per engine value: its IR tensor, or -1 (the labels) */
	int labels;
};

struct build {
	const char *path;
	const void *buf;		/* the file's bytes, or NULL: read @path */
	size_t len;
	const struct wsecc_graph_options *o;
	uint32_t batch;
	struct side s[2];
	size_t nv, nn;
	const char **names;		/* per engine node */
	struct wsecc_units u;
	int32_t *batch_dim;		/* per engine value */
	bool *live;			/* the loss depends on it */
	int32_t *unit_of;		/* per engine value: a parameter's unit */
	int32_t *index;			/* per engine value: its index in the program */
	int32_t *order;			/* per program value: the engine value */
	struct wsep_program *p;
	struct wsecc_error *err;
};

/* @shapes: import the weights' shapes only (the second import finds batch dimensions). */
static int import(struct build *b, struct side *s, uint32_t batch, bool shapes)
{
	struct wsecc_onnx_options io = { .batch = batch, .no_weights = b->o->no_weights || shapes,
					 .freeze = b->o->freeze, .n_freeze = b->o->n_freeze };
	struct wsecc_error *err = b->err;
	size_t nv;

	if ((b->buf ? wsecc_onnx_import_buffer(b->buf, b->len, b->path, &io, &s->ir, err) :
		      wsecc_onnx_import(b->path, &io, &s->ir, err)) ||
	    wsecc_graph_check(s->ir, err))
		return -EINVAL;
	if (!s->ir->n_inputs || s->ir->n_inputs > WSEP_GRAPH_MAX_INPUTS || s->ir->n_outputs < 1)
		return wsecc_fail(err, b->path, 0, 0,
				  "the model has %zu inputs and %zu outputs: a program takes 1..%u inputs (pixels or tokens first, then for example a padding mask) and trains its first output",
				  s->ir->n_inputs, s->ir->n_outputs, WSEP_GRAPH_MAX_INPUTS);
	s->ids = malloc(s->ir->n_tensors * sizeof(int));
	if (!s->ids || engine_graph_create(&s->eg))
		return wsecc_fail(err, b->path, 0, 0, "out of memory");
	if (wsecc_graph_to_engine_shapes(s->ir, s->eg, s->ids, true, &s->labels, err))
		return -EINVAL;
	if (engine_graph_check(s->eg))
		return wsecc_fail(err, b->path, 0, 0, "%s", engine_graph_error(s->eg));
	nv = engine_graph_values(s->eg);
	s->ir_of = malloc((nv ? nv : 1) * sizeof(int));
	if (!s->ir_of)
		return wsecc_fail(err, b->path, 0, 0, "out of memory");
	for (size_t v = 0; v < nv; v++)
		s->ir_of[v] = -1;
	for (size_t t = 0; t < s->ir->n_tensors; t++)
		if (s->ids[t] >= 0)
			s->ir_of[s->ids[t]] = (int)t;
	return 0;
}

static size_t dtype_bytes(enum engine_dtype dt)
{
	return dt == ENGINE_DT_I64 ? 8 : 4;
}

static uint64_t numel(size_t rank, const size_t *dims)
{
	uint64_t n = 1;

	for (size_t d = 0; d < rank; d++)
		n *= dims[d];
	return n;
}

/*
 * The two imports must be the same graph but for the batch: each value's
 * dimensions equal, but one that is k x the batch in both.
 */
static int batch_dims(struct build *b, uint32_t batch2)
{
	struct engine_graph *g1 = b->s[0].eg, *g2 = b->s[1].eg;

	if (engine_graph_values(g2) != b->nv || engine_graph_nodes(g2) != b->nn)
		return wsecc_fail(b->err, b->path, 0, 0,
				  "the graph at batch %u has another structure than at batch %u: only the batch may change",
				  batch2, b->batch);
	for (size_t v = 0; v < b->nv; v++) {
		size_t r1, r2, d1[ENGINE_MAX_RANK], d2[ENGINE_MAX_RANK];
		enum engine_value_kind kind = engine_graph_kind(g1, (int)v);

		engine_graph_shape(g1, (int)v, &r1, d1);
		engine_graph_shape(g2, (int)v, &r2, d2);
		b->batch_dim[v] = -1;
		if (r1 != r2 || kind != engine_graph_kind(g2, (int)v))
			goto differs;
		for (size_t d = 0; d < r1; d++) {
			int64_t k;

			if (d1[d] == d2[d])
				continue;
			k = ((int64_t)d2[d] - (int64_t)d1[d]) / ((int64_t)batch2 - (int64_t)b->batch);
			if (b->batch_dim[v] >= 0 || k < 1 || d1[d] != (size_t)k * b->batch)
				goto differs;
			b->batch_dim[v] = (int32_t)d;
		}
		/* Parameters and state come from the same initializers: their shapes say enough. */
		if ((kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_CONST || kind == ENGINE_VAL_STATE) &&
		    (b->batch_dim[v] >= 0 ||
		     (kind == ENGINE_VAL_CONST &&
		      memcmp(engine_graph_data(g1, (int)v), engine_graph_data(g2, (int)v),
			     numel(r1, d1) * dtype_bytes(engine_graph_dtype(g1, (int)v))))))
			goto differs;
		continue;
differs:
		return wsecc_fail(b->err, b->path, 0, 0,
				  "tensor %zu changes with the batch in more than one dimension, or is a constant that does: the device runs any batch up to %u by scaling one dimension",
				  v, b->batch);
	}
	for (size_t i = 0; i < b->nn; i++) {
		enum engine_op op1, op2;
		struct engine_node_attrs a1, a2;
		struct wsep_graph_attrs w1, w2;
		size_t ni1, no1, ni2, no2;
		int in1[ENGINE_GRAPH_MAX_IO], out1[ENGINE_GRAPH_MAX_IO];
		int in2[ENGINE_GRAPH_MAX_IO], out2[ENGINE_GRAPH_MAX_IO];

		engine_graph_node(g1, i, &op1, &a1, &ni1, in1, &no1, out1);
		engine_graph_node(g2, i, &op2, &a2, &ni2, in2, &no2, out2);
		engine_attrs_to_wsep(&a1, &w1);
		engine_attrs_to_wsep(&a2, &w2);
		if (op1 != op2 || ni1 != ni2 || no1 != no2 || memcmp(in1, in2, ni1 * sizeof(int)) ||
		    memcmp(out1, out2, no1 * sizeof(int)) || memcmp(&w1, &w2, sizeof(w1)))
			return wsecc_fail(b->err, b->path, 0, 0,
					  "node %s has other attributes at batch %u than at batch %u: only shapes may follow the batch",
					  b->names[i], batch2, b->batch);
	}
	return 0;
}

/* What the loss depends on: a parameter it does not is never trained (a constant). */
static void liveness(struct build *b, int logits)
{
	b->live[logits] = true;
	for (size_t i = b->nn; i-- > 0;) {
		enum engine_op op;
		struct engine_node_attrs a;
		size_t ni, no;
		int in[ENGINE_GRAPH_MAX_IO], out[ENGINE_GRAPH_MAX_IO];
		bool any = false;

		engine_graph_node(b->s[0].eg, i, &op, &a, &ni, in, &no, out);
		for (size_t k = 0; k < no; k++)
			any |= b->live[out[k]];
		for (size_t k = 0; any && k < ni; k++)
			if (in[k] >= 0)
				b->live[in[k]] = true;
	}
}

/* Each engine node's ONNX name: the kernels of the imported graph, in order. */
static int node_names(struct build *b)
{
	const struct wsecc_graph *ir = b->s[0].ir;
	size_t i = 0;

	for (size_t k = 0; k < ir->n_nodes && i < b->nn; k++)
		if (ir->nodes[k].state == WSECC_NODE_KERNEL)
			b->names[i++] = ir->nodes[k].name;
	return i == b->nn ? 0 : wsecc_fail(b->err, b->path, 0, 0, "internal error: %zu kernels for %zu nodes", i, b->nn);
}

/* The values in the program's order: the parameters unit by unit, then the rest. */
static uint32_t order_values(struct build *b)
{
	struct engine_graph *g = b->s[0].eg;
	uint32_t at = 0;

	for (size_t v = 0; v < b->nv; v++)
		b->unit_of[v] = -1;
	for (size_t i = 0; i < b->nn; i++) {
		enum engine_op op;
		struct engine_node_attrs a;
		size_t ni, no;
		int in[ENGINE_GRAPH_MAX_IO], out[ENGINE_GRAPH_MAX_IO];

		engine_graph_node(g, i, &op, &a, &ni, in, &no, out);
		for (size_t k = 0; k < ni; k++)
			if (in[k] >= 0 && b->live[in[k]] &&
			    (engine_graph_kind(g, in[k]) == ENGINE_VAL_PARAM ||
			     engine_graph_kind(g, in[k]) == ENGINE_VAL_STATE))
				b->unit_of[in[k]] = (int32_t)b->u.unit[i];
	}
	for (uint32_t k = 0; k < b->u.n; k++)
		for (size_t v = 0; v < b->nv; v++)
			if (b->unit_of[v] == (int32_t)k)
				b->index[v] = (int32_t)at++;
	for (size_t v = 0; v < b->nv; v++)
		if (b->unit_of[v] < 0)
			b->index[v] = (int32_t)at++;
	return at;
}

/*
 * Engine value @v's values: a constant's from the engine graph, a
 * parameter's or state's from its imported tensor (NULL when compiled
 * from shapes).
 */
static const void *values_of(const struct build *b, int32_t v, const struct wsecc_tensor **t)
{
	const struct side *s = &b->s[0];

	*t = NULL;
	if (engine_graph_kind(s->eg, v) != ENGINE_VAL_PARAM &&
	    engine_graph_kind(s->eg, v) != ENGINE_VAL_STATE)
		return engine_graph_data(s->eg, v);
	*t = &s->ir->tensors[s->ir_of[v]];
	return (*t)->data;
}

/* The graph sections and the weights, from the engine graph at the batch. */
static int build_graph(struct build *b)
{
	struct engine_graph *g = b->s[0].eg;
	struct wsep_program *p = b->p;
	struct wsep_graph *wg = calloc(1, sizeof(*wg));
	uint64_t params = 0, consts = 0;
	int logits, labels;

	p->graph = wg;
	if (!wg)
		return -ENOMEM;
	wg->num_values = (uint32_t)b->nv;
	wg->num_nodes = (uint32_t)b->nn;
	wg->values = calloc(b->nv, sizeof(*wg->values));
	wg->nodes = calloc(b->nn, sizeof(*wg->nodes));
	if (!wg->values || !wg->nodes)
		return -ENOMEM;
	for (size_t v = 0; v < b->nv; v++) {
		enum engine_value_kind kind = engine_graph_kind(g, (int)v);
		size_t rank, dims[ENGINE_MAX_RANK];

		engine_graph_shape(g, (int)v, &rank, dims);
		if ((kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_STATE) && b->unit_of[v] >= 0)
			params += numel(rank, dims);
		else if (kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_CONST || kind == ENGINE_VAL_STATE)
			consts = ((consts + 7) & ~7ULL) +
				 numel(rank, dims) * dtype_bytes(engine_graph_dtype(g, (int)v));
	}
	if (!b->o->no_weights) {
		p->num_weights = params;
		p->weights = malloc((params ? params : 1) * sizeof(float));
		if (!p->weights)
			return -ENOMEM;
	}
	wg->const_bytes = consts;
	wg->consts = calloc(consts ? consts : 1, 1);
	if (!wg->consts)
		return -ENOMEM;
	params = consts = 0;
	for (size_t v = 0; v < b->nv; v++)
		b->order[b->index[v]] = (int32_t)v;
	/* In the program's order: the parameters' offsets follow it. */
	for (size_t i = 0; i < b->nv; i++) {
		int32_t v = b->order[i];
		struct wsep_graph_value *x = &wg->values[i];
		enum engine_value_kind kind = engine_graph_kind(g, v);
		size_t rank, dims[ENGINE_MAX_RANK];
		const struct wsecc_tensor *src;
		const void *data = values_of(b, v, &src);
		uint64_t n;

		engine_graph_shape(g, v, &rank, dims);
		n = numel(rank, dims);
		x->dtype = engine_graph_dtype(g, v) == ENGINE_DT_I64 ? WSEP_ELEM_I64 : WSEP_ELEM_F32;
		x->rank = (uint32_t)rank;
		for (size_t d = 0; d < rank; d++)
			x->dims[d] = dims[d];
		x->batch_dim = b->batch_dim[v];
		x->unit = b->unit_of[v];
		if (b->unit_of[v] >= 0) {
			/* State (running statistics) lives beside the parameters:
			 * checkpoints keep it, the device's forward pass updates it.
			 */
			x->kind = kind == ENGINE_VAL_STATE ? WSEP_VAL_STATE : WSEP_VAL_PARAM;
			x->offset = params;
			if (p->weights && data)
				memcpy(p->weights + params, data, n * sizeof(float));
			if (src)
				wsecc_tensor_evict(src);
			params += n;
		} else if (kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_CONST || kind == ENGINE_VAL_STATE) {
			size_t bytes = n * dtype_bytes(engine_graph_dtype(g, v));

			x->kind = WSEP_VAL_CONST;	/* so is a parameter the loss does not need */
			consts = (consts + 7) & ~7ULL;
			x->offset = consts;
			if (data)	/* (zeros for a parameter compiled from shapes) */
				memcpy(wg->consts + consts, data, bytes);
			consts += bytes;
		} else {
			x->kind = kind == ENGINE_VAL_INPUT ? WSEP_VAL_INPUT : WSEP_VAL_ACT;
		}
	}
	for (size_t i = 0; i < b->nn; i++) {
		struct wsep_graph_node *nd = &wg->nodes[i];
		enum engine_op op;
		struct engine_node_attrs a;
		size_t ni, no;
		int in[ENGINE_GRAPH_MAX_IO], out[ENGINE_GRAPH_MAX_IO];

		engine_graph_node(g, i, &op, &a, &ni, in, &no, out);
		nd->op = engine_op_to_wsep(op);
		nd->unit = b->u.unit[i];
		nd->n_in = (uint32_t)ni;
		nd->n_out = (uint32_t)no;
		for (int k = 0; k < WSEP_GRAPH_MAX_IO; k++) {
			nd->in[k] = (size_t)k < ni && in[k] >= 0 ? b->index[in[k]] : -1;
			nd->out[k] = (size_t)k < no ? b->index[out[k]] : -1;
		}
		engine_attrs_to_wsep(&a, &nd->a);
	}
	engine_graph_loss_values(g, &logits, &labels);
	wg->n_inputs = (uint32_t)b->s[0].ir->n_inputs;
	for (uint32_t i = 0; i < wg->n_inputs; i++) {
		int ev = b->s[0].ids[b->s[0].ir->inputs[i]];

		/* An input the loss does not depend on has no value to feed. */
		if (ev < 0 || b->index[ev] < 0)
			return -ENOENT;
		wg->inputs[i] = b->index[ev];
	}
	if (!wg->n_inputs)
		return -ENOENT;
	wg->input = wg->inputs[0];
	wg->logits = b->index[logits];
	wg->labels = b->index[labels];
	wg->classes = (uint32_t)wg->values[wg->logits].dims[wg->values[wg->logits].rank - 1];
	wg->rows = (uint32_t)(wsep_graph_value_elems(p, &wg->values[wg->labels], 1));
	return 0;
}

/* --- costs: the units as stages ------------------------------------------------ */

struct unit_stages {
	const struct wsep_program *p;
	const struct wsecc_units *u;
	struct wsep_costs c;
	unsigned int state;
};

static void wafer_to_wsep(const struct wse_wafer *w, struct wsep_wafer *out)
{
	*out = (struct wsep_wafer){
		.width = w->width, .height = w->height, .sram_per_pe = w->sram_per_pe,
		.clock_hz = w->clock_hz, .fp32_flops_per_cycle = w->fp32_flops_per_cycle,
		.sram_bytes_per_cycle = w->sram_bytes_per_cycle,
		.link_bytes_per_cycle = w->link_bytes_per_cycle, .io_bytes_per_s = w->io_bytes_per_s,
	};
	snprintf(out->name, sizeof(out->name), "%s", w->name);
}

static int unit_cost(const void *ctx, uint32_t i, const struct wse_wafer *wf, uint32_t h,
		     uint32_t w, uint32_t held, struct wsecc_layer_plan *lp)
{
	const struct unit_stages *us = ctx;
	struct wsep_unit_cost uc;
	struct wsep_wafer ww;
	struct wsep_estimate *e = &lp->est;
	double compute, pes;

	wafer_to_wsep(wf, &ww);
	wsep_unit_cost(us->p, i, &ww, h, w, us->p->batch, us->state, &us->c, &uc);
	/*
	 * Activations of @held samples in place of the batch's (they are
	 * linear in the samples; the update stays amortised over the batch).
	 */
	pes = (double)uc.rows * uc.cols;
	uc.sram_per_pe -= (uint64_t)ceil((double)uc.act_bytes / pes);
	uc.act_bytes = uc.act_bytes / us->p->batch * held +
		       uc.act_bytes % us->p->batch * held / us->p->batch;
	uc.sram_per_pe += (uint64_t)ceil((double)uc.act_bytes / pes);
	*lp = (struct wsecc_layer_plan){
		.region = { 0, 0, w, h }, .pes = (uint64_t)w * h, .tile_in = uc.tile_in,
		.tile_out = uc.tile_out, .sram_per_pe = uc.sram_per_pe,
		.sram_bytes = uc.sram_per_pe * (uint64_t)w * h, .bwd_compute = uc.bwd,
		.opt_cycles = uc.opt, .act_bytes = uc.act_bytes,
		.params = wsep_layer_params(&us->p->layers[i]),
		.in_bytes = 4ULL * held * us->p->layers[i].in,
	};
	compute = uc.fwd + uc.bwd + uc.opt;
	*e = (struct wsep_estimate){ .flops_per_sample = uc.flops, .fwd_cycles = uc.fwd,
				     .bwd_cycles = uc.bwd + uc.opt,
				     .io_cycles = uc.fabric > uc.host ? uc.fabric : uc.host,
				     .stage_cycles = compute, .limit = WSEP_LIMIT_COMPUTE };
	if (uc.sram > e->stage_cycles) {
		e->stage_cycles = uc.sram;
		e->limit = WSEP_LIMIT_SRAM_BW;
	}
	if (uc.fabric > e->stage_cycles) {
		e->stage_cycles = uc.fabric;
		e->limit = WSEP_LIMIT_FABRIC;
	}
	if (uc.host > e->stage_cycles) {
		e->stage_cycles = uc.host;
		e->limit = WSEP_LIMIT_HOST_IO;
	}
	return uc.sram_per_pe <= wf->sram_per_pe - wsecc_reserve_per_pe(wf) ? 0 : -1;
}

static uint32_t unit_rows(const void *ctx, uint32_t i)
{
	uint32_t r, c;

	wsep_unit_extent(((const struct unit_stages *)ctx)->p, i, &r, &c);
	return r;
}

static uint32_t unit_cols(const void *ctx, uint32_t i)
{
	uint32_t r, c;

	wsep_unit_extent(((const struct unit_stages *)ctx)->p, i, &r, &c);
	return c;
}

static void unit_describe(const void *ctx, uint32_t i, char *buf, size_t len,
			  struct wsecc_pos *pos)
{
	snprintf(buf, len, "unit %u (%s)", i, ((const struct unit_stages *)ctx)->u->name[i]);
	*pos = (struct wsecc_pos){ 0, 0 };
}

/* --- the program ---------------------------------------------------------------- */

static int build_program(struct build *b, const struct wse_wafer *w)
{
	struct wsep_program *p = b->p;
	const struct wsecc_graph_options *o = b->o;
	const struct wsep_graph_value *in;
	uint64_t cross[WSEP_MAX_LAYERS], offset = 0;
	char msg[256];
	int ret;

	p->version_major = WSEP_VERSION_MAJOR;
	p->version_minor = WSEP_VERSION_MINOR;
	wafer_to_wsep(w, &p->wafer);
	snprintf(p->model_name, sizeof(p->model_name), "%s", b->s[0].ir->name);
	p->batch = b->batch;
	p->seed = o->seed;
	p->loss = WSEP_LOSS_SOFTMAX_XENT;
	p->opt = o->opt;
	ret = build_graph(b);
	if (ret == -ENOENT)
		return wsecc_fail(b->err, b->path, 0, 0,
				  "an input of the model does not reach its first output: a program feeds only inputs the loss depends on");
	if (ret)
		return wsecc_fail(b->err, b->path, 0, 0, "out of memory building the program");
	in = &p->graph->values[p->graph->input];
	/* A sample's record: every fed input in turn. */
	p->input_dim = 0;
	for (uint32_t i = 0; i < p->graph->n_inputs; i++)
		p->input_dim += (uint32_t)wsep_graph_value_elems(p, &p->graph->values[p->graph->inputs[i]], 1);
	if (in->dtype == WSEP_ELEM_I64) {
		p->input_type = WSEP_ELEM_I32;	/* token ids */
		p->input_scale = 1.0f;
	} else {
		/* Several inputs travel in 4-byte elements: no u8 samples then. */
		p->input_type = o->float_input == WSEP_ELEM_F32 || p->graph->n_inputs > 1 ?
				WSEP_ELEM_F32 : WSEP_ELEM_U8;
		p->input_scale = p->input_type == WSEP_ELEM_U8 ? 1.0f / 255.0f : 1.0f;
	}
	p->num_layers = b->u.n;
	p->layers = calloc(b->u.n, sizeof(*p->layers));
	p->regions = calloc(b->u.n, sizeof(*p->regions));
	p->estimates = calloc(b->u.n, sizeof(*p->estimates));
	p->streams = calloc(5 + 2 * b->u.n, sizeof(*p->streams));
	if (!p->layers || !p->regions || !p->estimates || !p->streams)
		return wsecc_fail(b->err, b->path, 0, 0, "out of memory building the program");
	for (uint32_t k = 0; k < b->u.n; k++) {
		p->layers[k].kind = WSEP_LAYER_UNIT;
		p->layers[k].weight_offset = offset;
		for (size_t i = 0; i < b->nv; i++)
			if (p->graph->values[i].unit == (int32_t)k)
				p->layers[k].params += wsep_graph_value_elems(p, &p->graph->values[i], 1);
		offset += p->layers[k].params;
		if (!p->layers[k].params)
			return wsecc_fail(b->err, b->path, 0, 0,
					  "unit %u (%s) has no parameters to train: nothing of it would stream",
					  k, b->u.name[k]);
	}
	if (wsep_graph_boundaries(p, cross, msg, sizeof(msg)))
		return wsecc_fail(b->err, b->path, 0, 0, "internal error: %s", msg);
	if (wsecc_graph_param_names(p, b->s[0].ir, b->s[0].ids, b->order, b->buf, b->len, b->path,
				    b->err))
		return -EINVAL;
	for (uint32_t k = 0; k < b->u.n; k++) {
		if (cross[k] > WSEP_MAX_UNIT_ELEMS)
			return wsecc_fail(b->err, b->path, 0, 0,
					  "%llu elements per sample leave unit %u (%s), more than the program format's %u",
					  (unsigned long long)cross[k], k, b->u.name[k], WSEP_MAX_UNIT_ELEMS);
		p->layers[k].out = (uint32_t)cross[k];
		p->layers[k].in = k ? p->layers[k - 1].out : p->input_dim;
	}
	return 0;
}

/* The training streams, ids 0, 1, ...: the fixed ones, logits, then per unit. */
static void add_streams(struct wsep_program *p)
{
	for (int r = WSEP_TRAIN_SAMPLES; r <= WSEP_TRAIN_PREDICTIONS; r++)
		wsep_train_stream(p, r, 0, &p->streams[p->num_streams++]);
	wsep_train_stream(p, WSEP_TRAIN_LOGITS, 0, &p->streams[p->num_streams++]);
	for (uint32_t k = 0; k < p->num_layers; k++) {
		if (!wsep_train_stream(p, WSEP_TRAIN_WEIGHTS, k, &p->streams[p->num_streams]))
			p->num_streams++;
		if (!wsep_train_stream(p, WSEP_TRAIN_GRADS, k, &p->streams[p->num_streams]))
			p->num_streams++;
	}
	for (uint32_t i = 0; i < p->num_streams; i++)
		p->streams[i].id = i;
}

/* Each unit's kernels by name, in order of first appearance. */
static void unit_ops(const struct build *b, struct wsecc_graph_program *gp)
{
	for (uint32_t k = 0; k < b->u.n; k++) {
		char s[sizeof(gp->unit_ops[k])];
		size_t len = sizeof(s);
		bool seen[WSEP_OP_COUNT + 1] = { false };

		s[0] = 0;
		for (size_t i = 0; i < b->nn; i++) {
			const struct wsep_graph_node *nd = &b->p->graph->nodes[i];
			size_t at = strlen(s);

			if (nd->unit != k || seen[nd->op] || nd->op == WSEP_OP_RESHAPE)
				continue;
			seen[nd->op] = true;
			snprintf(s + at, len - at, "%s%s", at ? " " : "", wsep_op_name(nd->op));
		}
		memcpy(gp->unit_ops[k], s, sizeof(s));
		snprintf(gp->plan.label[k], sizeof(gp->plan.label[k]), "%.24s: %.36s", b->u.name[k], s);
	}
}

/* Running statistics: values the device's forward pass writes. */
static bool has_state(const struct wsep_program *p)
{
	for (uint32_t v = 0; v < p->graph->num_values; v++)
		if (p->graph->values[v].kind == WSEP_VAL_STATE)
			return true;
	return false;
}

static int plan(struct build *b, const struct wse_wafer *w, struct wsecc_graph_program *gp)
{
	struct wsep_program *p = b->p;
	struct wsecc_plan *pl = &gp->plan;
	struct unit_stages us = {
		.p = p, .u = &b->u, .state = wsecc_opt_state_per_param(&p->opt),
		.c = { .elementwise = WSECC_ELEMENTWISE_CYCLES,
		       .transcendental = WSECC_TRANSCENDENTAL_CYCLES,
		       .normalize = WSECC_NORMALIZE_CYCLES, .softmax = WSECC_SOFTMAX_CYCLES,
		       .window = WSECC_WINDOW_CYCLES, .loss_fwd = WSECC_LOSS_FWD_CYCLES,
		       .loss_bwd = WSECC_LOSS_BWD_CYCLES,
		       .opt_flops = wsecc_opt_flops_per_param(&p->opt),
		       .sram_bytes_per_weight = WSECC_SRAM_BYTES_PER_WEIGHT,
		       .fabric_directions = WSECC_FABRIC_DIRECTIONS,
		       .product_flops_per_cycle = wse_wafer_product_flops_per_cycle(
			       w, b->o->precision != WSEP_PRECISION_FP32) },
	};
	struct wsecc_stages st = {
		.ctx = &us, .file = b->path, .name = p->model_name,
		.opt_name = wsep_optimizer_name(p->opt.kind), .n = p->num_layers, .batch = p->batch,
		.micro_batch = b->o->micro_batch, .recompute = b->o->recompute,
		.can_recompute = true,
		.weight_bytes = wsep_precision_weight_bytes(b->o->precision),
		.host_bytes = p->input_dim * (p->input_type == WSEP_ELEM_U8 ? 1.0 : 4.0) +
			      8.0 * p->graph->rows + 4.0,
		.cost = unit_cost, .rows = unit_rows, .cols = unit_cols, .describe = unit_describe,
	};
	uint64_t params = wsep_total_params(p->layers, p->num_layers);

	pl->wafer = *w;
	snprintf(pl->name, sizeof(pl->name), "%s", p->model_name);
	pl->batch = p->batch;
	pl->num_layers = p->num_layers;
	unit_ops(b, gp);
	pl->mem.weights = pl->mem.grads = 4 * params;
	pl->mem.opt_state = 4 * params * us.state;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		struct wsecc_layer_plan lp;

		unit_cost(&us, k, w, w->height, w->width, p->batch, &lp);
		pl->mem.activations += lp.act_bytes;
		pl->total_flops_per_sample += lp.est.flops_per_sample;
	}
	pl->mem.total = pl->mem.weights + pl->mem.grads + pl->mem.opt_state + pl->mem.activations;
	pl->mem.reserve_per_pe = wsecc_reserve_per_pe(w);
	pl->mem.usable = wse_wafer_pes(w) * (w->sram_per_pe - pl->mem.reserve_per_pe);
	pl->host_io_samples_per_s = w->io_bytes_per_s / st.host_bytes;
	if (wsecc_choose_mode(&st, b->o->mode, pl, b->err))
		return -EINVAL;
	p->mode = pl->mode;
	if (p->mode == WSEP_MODE_WEIGHT_STREAMING && has_state(p))
		return wsecc_fail(b->err, b->path, 0, 0,
				  "the model's BatchNormalization running statistics are updated by each training step on the device, and weight streaming keeps the weights in MemoryX, which takes back only gradients: compile it with --execution-mode pipelined (or export the model in eval mode)");
	p->micro_batch = wsecc_program_micro_batch(pl, b->o->micro_batch);
	p->precision = b->o->precision;
	if (p->mode == WSEP_MODE_WEIGHT_STREAMING && pl->recompute)
		p->exec_flags |= WSEP_EXEC_RECOMPUTE;
	p->summary = pl->summary;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		p->layers[k].sram_bytes = pl->layers[k].sram_bytes;
		p->regions[k] = pl->layers[k].region;
		p->estimates[k] = pl->layers[k].est;
	}
	add_streams(p);
	return 0;
}

static void release(struct build *b)
{
	for (int i = 0; i < 2; i++) {
		engine_graph_destroy(b->s[i].eg);
		wsecc_graph_free(b->s[i].ir);
		free(b->s[i].ids);
		free(b->s[i].ir_of);
	}
	free(b->names);
	free(b->u.unit);
	free(b->batch_dim);
	free(b->live);
	free(b->unit_of);
	free(b->index);
	free(b->order);
}

static int compile(struct build b, const struct wse_wafer *w, struct wsecc_graph_program **out,
		   struct wsecc_error *err)
{
	const char *path = b.path;
	struct wsecc_graph_program *gp = calloc(1, sizeof(*gp));
	uint32_t batch2 = b.batch < WSEP_MAX_BATCH ? b.batch + 1 : b.batch - 1;
	int logits, labels, ret = -EINVAL;
	char msg[256];

	*out = NULL;
	if (!gp || !(gp->prog = calloc(1, sizeof(*gp->prog))))
		goto oom;
	b.p = gp->prog;
	/*
	 * The import at batch2 only says which dimensions follow the batch: it
	 * never reads the weights, so they are in memory once (the program's).
	 */
	if (import(&b, &b.s[0], b.batch, false) || import(&b, &b.s[1], batch2, true))
		goto fail;
	b.nv = engine_graph_values(b.s[0].eg);
	b.nn = engine_graph_nodes(b.s[0].eg);
	b.names = calloc(b.nn, sizeof(*b.names));
	b.u.unit = calloc(b.nn, sizeof(*b.u.unit));
	b.batch_dim = calloc(b.nv, sizeof(*b.batch_dim));
	b.live = calloc(b.nv, sizeof(*b.live));
	b.unit_of = calloc(b.nv, sizeof(*b.unit_of));
	b.index = calloc(b.nv, sizeof(*b.index));
	b.order = calloc(b.nv, sizeof(*b.order));
	if (!b.names || !b.u.unit || !b.batch_dim || !b.live || !b.unit_of || !b.index || !b.order)
		goto oom;
	if (node_names(&b) || batch_dims(&b, batch2))
		goto fail;
	engine_graph_loss_values(b.s[0].eg, &logits, &labels);
	liveness(&b, logits);
	if (wsecc_units(b.s[0].eg, b.names, &b.u, path, err))
		goto fail;
	order_values(&b);
	if (build_program(&b, w) || plan(&b, w, gp))
		goto fail;
	/*
	 * What the firmware will read back, checked now (wsep_write() checks
	 * as much again, and its own encoding, when the program is written).
	 */
	ret = wsep_check(gp->prog, !b.o->no_weights, msg, sizeof(msg));
	if (ret) {
		wsecc_fail(err, path, 0, 0, "internal error: the program is invalid: %s", msg);
		goto fail;
	}
	snprintf(gp->file, sizeof(gp->file), "%s", path);
	snprintf(gp->producer, sizeof(gp->producer), "%s", b.s[0].ir->producer);
	gp->opset = b.s[0].ir->opset;
	if (b.s[0].ir->notes && !(gp->notes = strdup(b.s[0].ir->notes))) {
		goto oom;
	}
	gp->params = wsep_total_params(gp->prog->layers, gp->prog->num_layers);
	release(&b);
	*out = gp;
	return 0;
oom:
	ret = -ENOMEM;
	wsecc_fail(err, path, 0, 0, "out of memory");
fail:
	release(&b);
	wsecc_graph_program_free(gp);
	return ret ? ret : -EINVAL;
}

int wsecc_graph_compile(const char *path, const struct wsecc_graph_options *o,
			const struct wse_wafer *w, struct wsecc_graph_program **out,
			struct wsecc_error *err)
{
	struct build b = { .path = path, .o = o, .batch = o->batch ? o->batch : 1, .err = err };

	return compile(b, w, out, err);
}

int wsecc_graph_compile_buffer(const void *buf, size_t len, const char *name,
			       const struct wsecc_graph_options *o, const struct wse_wafer *w,
			       struct wsecc_graph_program **out, struct wsecc_error *err)
{
	struct build b = { .path = name, .buf = buf, .len = len, .o = o,
			   .batch = o->batch ? o->batch : 1, .err = err };

	return compile(b, w, out, err);
}

void wsecc_graph_program_free(struct wsecc_graph_program *gp)
{
	if (!gp)
		return;
	wsep_program_free(gp->prog);
	free(gp->notes);
	free(gp);
}
