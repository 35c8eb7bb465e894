// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The graph executor, part one: building a graph; check(), which checks
 * each node's shapes and attributes against its op without allocating
 * anything; and prepare(), which then allocates every buffer a step needs.
 * Only parameters and constants hold memory before prepare() (their data,
 * which the caller had anyway), so a graph read from an untrusted program
 * is checked before its sizes are trusted. graph_exec.c runs the steps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "graph_internal.h"

static const char *const op_names[ENGINE_OP_COUNT] = {
	[ENGINE_OP_CONV2D] = "conv2d",	     [ENGINE_OP_MAXPOOL2D] = "maxpool2d",
	[ENGINE_OP_AVGPOOL2D] = "avgpool2d", [ENGINE_OP_GEMM] = "gemm",
	[ENGINE_OP_MATMUL] = "matmul",	     [ENGINE_OP_BINARY] = "binary",
	[ENGINE_OP_ACT] = "activation",	     [ENGINE_OP_LAYERNORM] = "layernorm",
	[ENGINE_OP_SOFTMAX] = "softmax",     [ENGINE_OP_GATHER] = "gather",
	[ENGINE_OP_ATTENTION] = "attention", [ENGINE_OP_DROPOUT] = "dropout",
	[ENGINE_OP_TRANSPOSE] = "transpose", [ENGINE_OP_SPLIT] = "split",
	[ENGINE_OP_RESHAPE] = "reshape",     [ENGINE_OP_BATCHNORM] = "batchnorm",
	[ENGINE_OP_RMSNORM] = "rmsnorm",     [ENGINE_OP_ROTARY] = "rotary",
	[ENGINE_OP_CONCAT] = "concat",	     [ENGINE_OP_SLICE] = "slice",
	[ENGINE_OP_WHERE] = "where",
};

int engine_graph_create(struct engine_graph **g)
{
	if (!g)
		return -EINVAL;
	*g = calloc(1, sizeof(**g));
	if (!*g)
		return -ENOMEM;
	(*g)->loss_logits = -1;
	(*g)->loss_labels = -1;
	(*g)->loss_scale = 1.0f;
	return 0;
}

void engine_graph_destroy(struct engine_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nv; i++) {
		free(g->v[i].own);
		free(g->v[i].grad);
		free(g->v[i].state[0]);
		free(g->v[i].state[1]);
	}
	for (size_t i = 0; i < g->nn; i++) {
		free(g->n[i].aux);
		free(g->n[i].keep);
	}
	free(g->scratch);
	for (int i = 0; i < 3; i++)
		free(g->acc[i]);
	free(g->v);
	free(g->n);
	free(g);
}

const char *engine_graph_error(const struct engine_graph *g)
{
	return g && g->err[0] ? g->err : "no error";
}

static int fail(struct engine_graph *g, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct engine_graph *g, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->err, sizeof(g->err), fmt, ap);
	va_end(ap);
	return err;
}

static size_t dtype_size(enum engine_dtype dt)
{
	return dt == ENGINE_DT_I64 ? sizeof(int64_t) : sizeof(float);
}

static void *alloc_values(enum engine_dtype dt, size_t n)
{
	return dt == ENGINE_DT_F32 ? (void *)engine_alloc_floats(n) : calloc(n, sizeof(int64_t));
}

int engine_graph_add_value(struct engine_graph *g, enum engine_dtype dtype,
			   enum engine_value_kind kind, size_t rank, const size_t *dims,
			   const void *data)
{
	struct gvalue *v;
	size_t n;

	if (!g || g->prepared || rank > ENGINE_MAX_RANK || (rank && !dims) ||
	    dtype > ENGINE_DT_I64 || kind > ENGINE_VAL_STATE)
		return -EINVAL;
	if ((kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_STATE) && dtype != ENGINE_DT_F32)
		return fail(g, -EINVAL, "a parameter or state must be fp32");
	/* A parameter or state without data is a graph built for its shapes (zero until bound). */
	if ((kind == ENGINE_VAL_CONST && !data) ||
	    ((kind == ENGINE_VAL_INPUT || kind == ENGINE_VAL_ACT) && data))
		return fail(g, -EINVAL, "constants need data, inputs and activations none");
	n = engine_numel(dims, rank);
	if (!n)
		return fail(g, -EINVAL, "a value with no elements (or too many)");
	if (g->nv == INT32_MAX)
		return -EOVERFLOW;
	if (g->nv == g->cap_v) {
		size_t cap = g->cap_v ? 2 * g->cap_v : 64;
		struct gvalue *nvp = realloc(g->v, cap * sizeof(*nvp));

		if (!nvp)
			return -ENOMEM;
		g->v = nvp;
		g->cap_v = cap;
	}
	v = &g->v[g->nv];
	memset(v, 0, sizeof(*v));
	v->dtype = dtype;
	v->kind = kind;
	v->rank = rank;
	if (rank)
		memcpy(v->dims, dims, rank * sizeof(*dims));
	v->n = n;
	v->producer = -1;
	if (n > SIZE_MAX / 64)
		return -EOVERFLOW;
	/* Inputs and activations get their memory in prepare(). */
	if (data) {
		v->own = alloc_values(dtype, n);
		if (!v->own)
			return -ENOMEM;
		memcpy(v->own, data, n * dtype_size(dtype));
		v->data = v->own;
	}
	return (int)g->nv++;
}

static bool valid_id(const struct engine_graph *g, int id)
{
	return id >= 0 && (size_t)id < g->nv;
}

int engine_graph_add_node(struct engine_graph *g, enum engine_op op,
			  const struct engine_node_attrs *attrs, size_t n_in, const int *in,
			  size_t n_out, const int *out)
{
	struct gnode *nd;

	if (!g || g->prepared || op >= ENGINE_OP_COUNT || !attrs || !n_in || !n_out ||
	    n_in > ENGINE_GRAPH_MAX_IO || n_out > ENGINE_GRAPH_MAX_IO || !in || !out)
		return -EINVAL;
	for (size_t i = 0; i < n_in; i++) {
		if (in[i] == -1)
			continue;
		if (!valid_id(g, in[i]))
			return fail(g, -EINVAL, "node %zu (%s): input %zu is not a value", g->nn,
				    op_names[op], i);
		if (g->v[in[i]].kind == ENGINE_VAL_ACT && g->v[in[i]].producer < 0)
			return fail(g, -EINVAL,
				    "node %zu (%s): input %zu is not computed by an earlier node",
				    g->nn, op_names[op], i);
	}
	for (size_t i = 0; i < n_out; i++) {
		if (!valid_id(g, out[i]) || g->v[out[i]].kind != ENGINE_VAL_ACT ||
		    g->v[out[i]].producer >= 0)
			return fail(g, -EINVAL,
				    "node %zu (%s): output %zu must be a fresh activation value",
				    g->nn, op_names[op], i);
		for (size_t j = 0; j < i; j++)
			if (out[j] == out[i])
				return fail(g, -EINVAL, "node %zu (%s): an output listed twice", g->nn,
					    op_names[op]);
	}
	if (g->nn == g->cap_n) {
		size_t cap = g->cap_n ? 2 * g->cap_n : 64;
		struct gnode *nn = realloc(g->n, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		g->n = nn;
		g->cap_n = cap;
	}
	nd = &g->n[g->nn];
	memset(nd, 0, sizeof(*nd));
	nd->op = op;
	nd->a = *attrs;
	nd->n_in = n_in;
	nd->n_out = n_out;
	memcpy(nd->in, in, n_in * sizeof(*in));
	memcpy(nd->out, out, n_out * sizeof(*out));
	for (size_t i = 0; i < n_out; i++)
		g->v[out[i]].producer = (int)g->nn;
	return (int)g->nn++;
}

int engine_graph_set_loss(struct engine_graph *g, int logits, int labels)
{
	if (!g || g->prepared || !valid_id(g, logits) || !valid_id(g, labels))
		return -EINVAL;
	g->loss_logits = logits;
	g->loss_labels = labels;
	return 0;
}

/* --- prepare: shape checks ------------------------------------------------------ */

static const struct gvalue *in_v(const struct engine_graph *g, const struct gnode *nd, size_t i)
{
	return i < nd->n_in && nd->in[i] >= 0 ? &g->v[nd->in[i]] : NULL;
}

static bool same_dims(size_t ra, const size_t *a, size_t rb, const size_t *b)
{
	return ra == rb && (!ra || !memcmp(a, b, ra * sizeof(*a)));
}

/* Checks output @i has the shape (rank, dims). */
static int want_out(struct engine_graph *g, size_t idx, size_t i, size_t rank, const size_t *dims)
{
	const struct gnode *nd = &g->n[idx];
	const struct gvalue *o = &g->v[nd->out[i]];

	if (o->dtype != ENGINE_DT_F32 || !same_dims(o->rank, o->dims, rank, dims))
		return fail(g, -EINVAL, "node %zu (%s): output %zu has the wrong shape or type for its inputs",
			    idx, op_names[nd->op], i);
	return 0;
}

static int want_io(struct engine_graph *g, size_t idx, size_t min_in, size_t max_in, size_t n_out)
{
	const struct gnode *nd = &g->n[idx];

	if (nd->n_in < min_in || nd->n_in > max_in || nd->n_out != n_out)
		return fail(g, -EINVAL, "node %zu (%s): takes %zu..%zu inputs and %zu outputs, has %zu and %zu",
			    idx, op_names[nd->op], min_in, max_in, n_out, nd->n_in, nd->n_out);
	for (size_t i = 0; i < nd->n_in; i++) {
		const struct gvalue *v = in_v(g, nd, i);
		bool index = nd->op == ENGINE_OP_GATHER && i == 1;

		if (!v) {
			if (i < min_in)
				return fail(g, -EINVAL, "node %zu (%s): input %zu is required", idx,
					    op_names[nd->op], i);
			continue;
		}
		if (v->dtype != (index ? ENGINE_DT_I64 : ENGINE_DT_F32))
			return fail(g, -EINVAL, "node %zu (%s): input %zu must be %s", idx,
				    op_names[nd->op], i, index ? "int64" : "fp32");
	}
	return 0;
}

static int bad(struct engine_graph *g, size_t idx, const char *why)
{
	return fail(g, -EINVAL, "node %zu (%s): %s", idx, op_names[g->n[idx].op], why);
}

static int prep_conv(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0), *w = in_v(g, nd, 1), *b = in_v(g, nd, 2);
	struct engine_conv2d *c = &nd->k.conv;
	size_t y[4];

	if (x->rank != 4 || w->rank != 4 || w->dims[1] != x->dims[1])
		return bad(g, idx, "x must be [N, C, H, W] and w [M, C, kH, kW]");
	if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
		return bad(g, idx, "the bias must be [M]");
	if ((nd->a.kernel[0] && nd->a.kernel[0] != w->dims[2]) ||
	    (nd->a.kernel[1] && nd->a.kernel[1] != w->dims[3]))
		return bad(g, idx, "kernel_shape differs from the weights' shape");
	*c = (struct engine_conv2d){
		.batch = x->dims[0], .in_ch = x->dims[1], .in_h = x->dims[2], .in_w = x->dims[3],
		.out_ch = w->dims[0], .k_h = w->dims[2], .k_w = w->dims[3],
		.stride_h = nd->a.stride[0], .stride_w = nd->a.stride[1],
		.dil_h = nd->a.dilation[0], .dil_w = nd->a.dilation[1],
		.pad_top = nd->a.pads[0], .pad_left = nd->a.pads[1],
		.pad_bottom = nd->a.pads[2], .pad_right = nd->a.pads[3],
	};
	if (engine_conv2d_setup(c))
		return bad(g, idx, "strides, dilations or pads do not fit the input");
	y[0] = c->batch;
	y[1] = c->out_ch;
	y[2] = c->out_h;
	y[3] = c->out_w;
	return want_out(g, idx, 0, 4, y);
}

static int prep_pool(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0);
	struct engine_pool2d *p = &nd->k.pool;
	size_t y[4];

	if (x->rank != 4)
		return bad(g, idx, "x must be [N, C, H, W]");
	*p = (struct engine_pool2d){
		.planes = x->dims[0] * x->dims[1], .in_h = x->dims[2], .in_w = x->dims[3],
		.k_h = nd->a.kernel[0], .k_w = nd->a.kernel[1],
		.stride_h = nd->a.stride[0], .stride_w = nd->a.stride[1],
		.dil_h = nd->a.dilation[0], .dil_w = nd->a.dilation[1],
		.pad_top = nd->a.pads[0], .pad_left = nd->a.pads[1],
		.pad_bottom = nd->a.pads[2], .pad_right = nd->a.pads[3],
		.ceil_mode = nd->a.ceil_mode, .count_include_pad = nd->a.count_include_pad,
	};
	if (engine_pool2d_setup(p))
		return bad(g, idx, "kernel, strides, dilations or pads do not fit the input");
	y[0] = x->dims[0];
	y[1] = x->dims[1];
	y[2] = p->out_h;
	y[3] = p->out_w;
	return want_out(g, idx, 0, 4, y);
}

static int prep_gemm(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *a = in_v(g, nd, 0), *b = in_v(g, nd, 1), *c = in_v(g, nd, 2);
	struct engine_gemm *p = &nd->k.gemm;
	size_t y[2];

	if (a->rank != 2 || b->rank != 2)
		return bad(g, idx, "A and B must be matrices");
	p->trans_a = nd->a.trans_a;
	p->trans_b = nd->a.trans_b;
	p->alpha = nd->a.alpha;
	p->beta = nd->a.beta;
	p->m = a->dims[p->trans_a ? 1 : 0];
	p->k = a->dims[p->trans_a ? 0 : 1];
	p->n = b->dims[p->trans_b ? 0 : 1];
	if (b->dims[p->trans_b ? 1 : 0] != p->k)
		return bad(g, idx, "the inner dimensions of A and B differ");
	p->c_rows = 1;
	p->c_cols = 1;
	if (c) {
		if (c->rank > 2)
			return bad(g, idx, "C must have rank 2 or less");
		if (c->rank >= 1)
			p->c_cols = c->dims[c->rank - 1];
		if (c->rank == 2)
			p->c_rows = c->dims[0];
		if ((p->c_rows != 1 && p->c_rows != p->m) || (p->c_cols != 1 && p->c_cols != p->n))
			return bad(g, idx, "C does not broadcast to [M, N]");
	}
	y[0] = p->m;
	y[1] = p->n;
	return want_out(g, idx, 0, 2, y);
}

static int prep_matmul(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *a = in_v(g, nd, 0), *b = in_v(g, nd, 1);
	struct engine_matmul *p = &nd->k.mm;

	memset(p, 0, sizeof(*p));
	p->a_rank = a->rank;
	p->b_rank = b->rank;
	memcpy(p->a_dims, a->dims, sizeof(p->a_dims));
	memcpy(p->b_dims, b->dims, sizeof(p->b_dims));
	if (engine_matmul_setup(p))
		return bad(g, idx, "the shapes do not multiply (both ranks >= 2, inner dimensions equal, batch dimensions broadcast)");
	return want_out(g, idx, 0, p->y_rank, p->y_dims);
}

static int prep_binary(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *a = in_v(g, nd, 0), *b = in_v(g, nd, 1);
	struct engine_binary *p = &nd->k.bin;

	memset(p, 0, sizeof(*p));
	p->kind = nd->a.binary;
	p->a_rank = a->rank;
	p->b_rank = b->rank;
	memcpy(p->a_dims, a->dims, sizeof(p->a_dims));
	memcpy(p->b_dims, b->dims, sizeof(p->b_dims));
	if (engine_binary_setup(p))
		return bad(g, idx, "the shapes do not broadcast");
	return want_out(g, idx, 0, p->y_rank, p->y_dims);
}

static int prep_same_shape(struct engine_graph *g, size_t idx)
{
	const struct gvalue *x = in_v(g, &g->n[idx], 0);

	return want_out(g, idx, 0, x->rank, x->dims);
}

/* Scratch a node keeps from its forward pass to its backward pass, in floats. */
static int want_aux(struct engine_graph *g, size_t idx, size_t n)
{
	g->n[idx].aux_n = n;
	return 0;
}

static int prep_layernorm(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0), *s = in_v(g, nd, 1), *b = in_v(g, nd, 2);
	size_t axis = nd->a.axis;

	if (axis >= x->rank || !(nd->a.epsilon > 0.0f))
		return bad(g, idx, "the axis must be < the rank and epsilon > 0");
	nd->outer = engine_numel(x->dims, axis);
	nd->inner = engine_numel(x->dims + axis, x->rank - axis);
	if (!same_dims(s->rank, s->dims, x->rank - axis, x->dims + axis) ||
	    (b && !same_dims(b->rank, b->dims, x->rank - axis, x->dims + axis)))
		return bad(g, idx, "scale and bias must have the normalized dimensions' shape");
	if (prep_same_shape(g, idx))
		return -EINVAL;
	/* Optional outputs Mean and InvStdDev (ONNX): x's shape with 1 for
	 * every normalized dimension. They carry no gradient.
	 */
	for (size_t k = 1; k < nd->n_out; k++) {
		size_t dims[ENGINE_MAX_RANK];

		memcpy(dims, x->dims, sizeof(dims));
		for (size_t d = axis; d < x->rank; d++)
			dims[d] = 1;
		if (want_out(g, idx, k, x->rank, dims))
			return -EINVAL;
	}
	return want_aux(g, idx, 2 * nd->outer);
}

/* RMS normalization over the axes from nd->a.axis on; aux holds each row's rstd. */
static int prep_rmsnorm(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0), *s = in_v(g, nd, 1);
	size_t axis = nd->a.axis;

	if (axis >= x->rank || !(nd->a.epsilon > 0.0f))
		return bad(g, idx, "the axis must be < the rank and epsilon > 0");
	nd->outer = engine_numel(x->dims, axis);
	nd->inner = engine_numel(x->dims + axis, x->rank - axis);
	if (!same_dims(s->rank, s->dims, x->rank - axis, x->dims + axis))
		return bad(g, idx, "scale must have the normalized dimensions' shape");
	if (prep_same_shape(g, idx))
		return -EINVAL;
	return want_aux(g, idx, nd->outer);
}

/* outer/len/inner around nd->a.axis of input 0. */
static int around_axis(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0);

	if (nd->a.axis >= x->rank)
		return bad(g, idx, "the axis must be < the rank");
	nd->outer = engine_numel(x->dims, nd->a.axis);
	nd->len = x->dims[nd->a.axis];
	nd->inner = engine_numel(x->dims + nd->a.axis + 1, x->rank - nd->a.axis - 1);
	return 0;
}

static int prep_gather(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *d = in_v(g, nd, 0), *ix = in_v(g, nd, 1);
	size_t y[ENGINE_MAX_RANK], r = 0;

	if (around_axis(g, idx))
		return -EINVAL;
	if (d->rank - 1 + ix->rank > ENGINE_MAX_RANK)
		return bad(g, idx, "the output's rank is too large");
	for (size_t i = 0; i < nd->a.axis; i++)
		y[r++] = d->dims[i];
	for (size_t i = 0; i < ix->rank; i++)
		y[r++] = ix->dims[i];
	for (size_t i = nd->a.axis + 1; i < d->rank; i++)
		y[r++] = d->dims[i];
	return want_out(g, idx, 0, r, y);
}

static int prep_attention(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *q = in_v(g, nd, 0), *k = in_v(g, nd, 1), *v = in_v(g, nd, 2);
	struct engine_attention *p = &nd->k.att;

	if (q->rank != 3 || !same_dims(q->rank, q->dims, k->rank, k->dims) ||
	    !same_dims(q->rank, q->dims, v->rank, v->dims))
		return bad(g, idx, "q, k and v must be [batch, seq, width] alike");
	if (!nd->a.heads || q->dims[2] % nd->a.heads)
		return bad(g, idx, "the heads must divide the width");
	*p = (struct engine_attention){
		.batch = q->dims[0], .seq = q->dims[1], .heads = nd->a.heads,
		.head_dim = q->dims[2] / nd->a.heads, .scale = nd->a.scale, .causal = nd->a.causal,
		.ratio = nd->a.ratio,
	};
	if (!(p->ratio >= 0.0f && p->ratio < 1.0f))
		return bad(g, idx, "the dropout ratio must be in [0, 1)");
	if (nd->n_in > 3 && in_v(g, nd, 3)) {
		const struct gvalue *m = in_v(g, nd, 3);

		if (!(m->rank == 2 || (m->rank == 4 && m->dims[1] == 1 && m->dims[2] == 1)) ||
		    m->dims[0] != p->batch || m->dims[m->rank - 1] != p->seq)
			return bad(g, idx, "the key mask must be [batch, seq] or [batch, 1, 1, seq]");
	}
	if (p->ratio > 0.0f)
		nd->keep_n = p->batch * p->heads * p->seq * p->seq;
	if (prep_same_shape(g, idx))
		return -EINVAL;
	return want_aux(g, idx, p->batch * p->heads * p->seq * p->seq);
}

/* x [batch, seq, width] in heads of width / heads; the tables [..., seq, width / heads]. */
static int prep_rotary(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0), *c = in_v(g, nd, 1), *s = in_v(g, nd, 2);
	size_t dim;

	if (x->rank != 3 || !nd->a.heads || x->dims[2] % nd->a.heads ||
	    (x->dims[2] / nd->a.heads) % 2)
		return bad(g, idx, "x must be [batch, seq, width], the heads an even width each");
	dim = x->dims[2] / nd->a.heads;
	for (int k = 0; k < 2; k++) {
		const struct gvalue *t = k ? s : c;

		if (t->kind != ENGINE_VAL_CONST || t->dtype != ENGINE_DT_F32 ||
		    t->n != x->dims[1] * dim || t->rank < 2 || t->dims[t->rank - 1] != dim ||
		    t->dims[t->rank - 2] != x->dims[1])
			return bad(g, idx, "cos and sin must be constant [seq, head width] tables");
	}
	nd->k.rot = (struct engine_rotary){
		.rows = x->dims[0], .seq = x->dims[1], .heads = nd->a.heads, .dim = dim,
	};
	return prep_same_shape(g, idx);
}

static int prep_transpose(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0);
	size_t y[ENGINE_MAX_RANK];
	unsigned seen = 0;

	for (size_t i = 0; i < x->rank; i++) {
		if (nd->a.perm[i] >= x->rank || (seen & (1u << nd->a.perm[i])))
			return bad(g, idx, "perm is not a permutation of the dimensions");
		seen |= 1u << nd->a.perm[i];
		y[i] = x->dims[nd->a.perm[i]];
	}
	return want_out(g, idx, 0, x->rank, y);
}

static int prep_split(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0);
	size_t total = 0;

	if (around_axis(g, idx))
		return -EINVAL;
	for (size_t i = 0; i < nd->n_out; i++) {
		const struct gvalue *o = &g->v[nd->out[i]];
		size_t want[ENGINE_MAX_RANK];

		memcpy(want, x->dims, sizeof(want));
		if (o->rank != x->rank)
			return bad(g, idx, "an output's rank differs from the input's");
		want[nd->a.axis] = o->dims[nd->a.axis];
		if (want_out(g, idx, i, x->rank, want))
			return -EINVAL;
		nd->sizes[i] = o->dims[nd->a.axis];
		total += nd->sizes[i];
	}
	return total == nd->len ? 0 : bad(g, idx, "the outputs do not add up to the input");
}

/* Inputs alike but along the axis; nd->sizes their lengths there. */
static int prep_concat(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0);
	size_t y[ENGINE_MAX_RANK];

	if (around_axis(g, idx))
		return -EINVAL;
	memcpy(y, x->dims, sizeof(y));
	y[nd->a.axis] = 0;
	for (size_t i = 0; i < nd->n_in; i++) {
		const struct gvalue *v = in_v(g, nd, i);

		if (!v)
			return bad(g, idx, "every input is required");
		for (size_t d = 0; d < x->rank; d++)
			if (v->rank != x->rank || (d != nd->a.axis && v->dims[d] != x->dims[d]))
				return bad(g, idx, "the inputs must differ in the axis' length only");
		nd->sizes[i] = v->dims[nd->a.axis];
		y[nd->a.axis] += nd->sizes[i];
	}
	nd->len = y[nd->a.axis];	/* the output's, which backward cuts */
	return want_out(g, idx, 0, x->rank, y);
}

/* y is x but along the axis: y's length from nd->a.start, inside x. */
static int prep_slice(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0), *o = &g->v[nd->out[0]];
	size_t y[ENGINE_MAX_RANK];

	if (around_axis(g, idx))
		return -EINVAL;
	if (o->rank != x->rank || !o->dims[nd->a.axis] || nd->a.start > nd->len ||
	    o->dims[nd->a.axis] > nd->len - nd->a.start)
		return bad(g, idx, "the slice must lie inside the input along the axis");
	memcpy(y, x->dims, sizeof(y));
	y[nd->a.axis] = o->dims[nd->a.axis];
	return want_out(g, idx, 0, x->rank, y);
}

/* The three operands broadcast to y; the condition is a constant. */
static int prep_where(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *o = &g->v[nd->out[0]];
	struct engine_where *p = &nd->k.wh;

	if (in_v(g, nd, 0)->kind != ENGINE_VAL_CONST)
		return bad(g, idx, "the condition must be a constant");
	memset(p, 0, sizeof(*p));
	for (size_t k = 0; k < 3; k++) {
		p->rank[k] = in_v(g, nd, k)->rank;
		memcpy(p->dims[k], in_v(g, nd, k)->dims, sizeof(p->dims[k]));
	}
	p->y_rank = o->rank;
	memcpy(p->y_dims, o->dims, sizeof(p->y_dims));
	if (o->dtype != ENGINE_DT_F32 || engine_where_setup(p))
		return bad(g, idx, "the condition, a and b must broadcast to the output's shape");
	return 0;
}

static int prep_batchnorm(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x = in_v(g, nd, 0);
	size_t c = x->rank >= 2 ? x->dims[1] : 0;

	if (x->rank < 2 || x->rank > 5)
		return bad(g, idx, "x must be [N, C, ...] of rank 2 to 5");
	for (size_t k = 1; k < 5; k++) {
		const struct gvalue *v = in_v(g, nd, k);

		if (v->rank != 1 || v->dims[0] != c)
			return bad(g, idx, "scale, bias, mean and var must be [C]");
		/* Only the running statistics are written by the forward pass. */
		if (k >= 3 && v->kind == ENGINE_VAL_PARAM)
			return bad(g, idx, "the running statistics must be state, not trained");
	}
	if (!(nd->a.epsilon > 0.0f) || !(nd->a.momentum >= 0.0f && nd->a.momentum <= 1.0f))
		return bad(g, idx, "epsilon must be > 0 and momentum in [0, 1]");
	nd->k.bn = (struct engine_batchnorm){
		.batch = x->dims[0], .channels = c, .spatial = engine_numel(x->dims + 2, x->rank - 2),
		.eps = nd->a.epsilon, .momentum = nd->a.momentum, .unbiased = nd->a.unbiased,
	};
	if (x->rank == 2)
		nd->k.bn.spatial = 1;
	if (prep_same_shape(g, idx))
		return -EINVAL;
	for (size_t k = 1; k < nd->n_out; k++)
		if (want_out(g, idx, k, 1, &c))
			return -EINVAL;
	/* mean and rstd; room for running statistics that are not state */
	return want_aux(g, idx, 4 * c);
}

static int prep_node(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	const struct gvalue *x;
	int err;

	switch (nd->op) {
	case ENGINE_OP_CONV2D:
		return want_io(g, idx, 2, 3, 1) ?: prep_conv(g, idx);
	case ENGINE_OP_MAXPOOL2D:
	case ENGINE_OP_AVGPOOL2D:
		return want_io(g, idx, 1, 1, 1) ?: prep_pool(g, idx);
	case ENGINE_OP_GEMM:
		return want_io(g, idx, 2, 3, 1) ?: prep_gemm(g, idx);
	case ENGINE_OP_MATMUL:
		return want_io(g, idx, 2, 2, 1) ?: prep_matmul(g, idx);
	case ENGINE_OP_BINARY:
		return want_io(g, idx, 2, 2, 1) ?: prep_binary(g, idx);
	case ENGINE_OP_ACT:
		if (nd->a.act > ENGINE_ACT_SILU)
			return bad(g, idx, "unknown activation");
		return want_io(g, idx, 1, 1, 1) ?: prep_same_shape(g, idx);
	case ENGINE_OP_LAYERNORM:
		if (nd->n_out > 3)
			return bad(g, idx, "at most 3 outputs (Y, Mean, InvStdDev)");
		return want_io(g, idx, 2, 3, nd->n_out) ?: prep_layernorm(g, idx);
	case ENGINE_OP_RMSNORM:
		return want_io(g, idx, 2, 2, 1) ?: prep_rmsnorm(g, idx);
	case ENGINE_OP_ROTARY:
		return want_io(g, idx, 3, 3, 1) ?: prep_rotary(g, idx);
	case ENGINE_OP_SOFTMAX:
		return want_io(g, idx, 1, 1, 1) ?: around_axis(g, idx) ?: prep_same_shape(g, idx);
	case ENGINE_OP_GATHER:
		return want_io(g, idx, 2, 2, 1) ?: prep_gather(g, idx);
	case ENGINE_OP_ATTENTION:
		return want_io(g, idx, 3, 4, 1) ?: prep_attention(g, idx);
	case ENGINE_OP_CONCAT:
		return want_io(g, idx, 1, ENGINE_GRAPH_MAX_IO, 1) ?: prep_concat(g, idx);
	case ENGINE_OP_SLICE:
		return want_io(g, idx, 1, 1, 1) ?: prep_slice(g, idx);
	case ENGINE_OP_WHERE:
		return want_io(g, idx, 3, 3, 1) ?: prep_where(g, idx);
	case ENGINE_OP_DROPOUT:
		if (nd->n_out > 2)
			return bad(g, idx, "at most 2 outputs (y, mask)");
		err = want_io(g, idx, 1, 1, nd->n_out) ?: prep_same_shape(g, idx);
		if (!err && nd->n_out == 2)
			err = want_out(g, idx, 1, in_v(g, nd, 0)->rank, in_v(g, nd, 0)->dims);
		if (err)
			return err;
		if (!(nd->a.ratio >= 0.0f && nd->a.ratio < 1.0f))
			return bad(g, idx, "the ratio must be in [0, 1)");
		nd->keep_n = in_v(g, nd, 0)->n;
		return 0;
	case ENGINE_OP_TRANSPOSE:
		return want_io(g, idx, 1, 1, 1) ?: prep_transpose(g, idx);
	case ENGINE_OP_SPLIT:
		return want_io(g, idx, 1, 1, nd->n_out) ?: prep_split(g, idx);
	case ENGINE_OP_BATCHNORM:
		if (nd->n_out != 1 && nd->n_out != 3)
			return bad(g, idx, "1 or 3 outputs (y[, running mean, running var])");
		return want_io(g, idx, 5, 5, nd->n_out) ?: prep_batchnorm(g, idx);
	case ENGINE_OP_RESHAPE:
		err = want_io(g, idx, 1, 1, 1);
		if (err)
			return err;
		x = in_v(g, nd, 0);
		if (g->v[nd->out[0]].n != x->n || g->v[nd->out[0]].dtype != ENGINE_DT_F32)
			return bad(g, idx, "the output must have as many elements as the input");
		return 0;
	default:
		return fail(g, -EINVAL, "node %zu: unknown op", idx);
	}
}

static size_t node_scratch(const struct gnode *nd)
{
	if (nd->op == ENGINE_OP_CONV2D)
		return engine_conv2d_scratch(&nd->k.conv);
	if (nd->op == ENGINE_OP_ATTENTION)
		return engine_attention_scratch(&nd->k.att);
	return 0;
}

static int prep_loss(struct engine_graph *g)
{
	const struct gvalue *z, *l;

	if (g->loss_logits < 0)
		return 0;
	z = &g->v[g->loss_logits];
	l = &g->v[g->loss_labels];
	if (z->dtype != ENGINE_DT_F32 || z->rank < 1)
		return fail(g, -EINVAL, "the loss's logits must be fp32");
	if (l->dtype != ENGINE_DT_I64 || l->kind != ENGINE_VAL_INPUT ||
	    !same_dims(l->rank, l->dims, z->rank - 1, z->dims))
		return fail(g, -EINVAL, "the labels must be an int64 input shaped as the logits less their last dimension");
	g->classes = z->dims[z->rank - 1];
	g->loss_rows = z->n / g->classes;
	return 0;
}

int engine_graph_check(struct engine_graph *g)
{
	int err;

	if (!g || g->prepared || (!g->nn && g->loss_logits < 0))
		return -EINVAL;
	g->checked = false;
	for (size_t i = 0; i < g->nv; i++)
		if (g->v[i].kind == ENGINE_VAL_ACT && g->v[i].producer < 0)
			return fail(g, -EINVAL, "value %zu is an activation no node computes", i);
	for (size_t i = 0; i < g->nn; i++) {
		err = prep_node(g, i);
		if (err)
			return err;
	}
	err = prep_loss(g);
	if (err)
		return err;
	/* What needs a gradient: parameters and whatever depends on one. */
	for (size_t i = 0; i < g->nv; i++)
		g->v[i].requires_grad = g->v[i].kind == ENGINE_VAL_PARAM;
	for (size_t i = 0; i < g->nn; i++) {
		const struct gnode *nd = &g->n[i];
		bool rg = false;

		for (size_t j = 0; j < nd->n_in; j++)
			if (nd->in[j] >= 0 && g->v[nd->in[j]].requires_grad)
				rg = true;
		for (size_t j = 0; j < nd->n_out; j++)
			g->v[nd->out[j]].requires_grad = rg;
		/* The attention's key mask is data (a padding mask): no gradient. */
		if (nd->op == ENGINE_OP_ATTENTION && nd->n_in > 3 && nd->in[3] >= 0 &&
		    g->v[nd->in[3]].requires_grad)
			return bad(g, i, "the key mask must not depend on a parameter");
	}
	g->checked = true;
	return 0;
}

static int alloc_value(struct engine_graph *g, struct gvalue *v)
{
	if (!v->own) {
		v->own = alloc_values(v->dtype, v->n);
		if (!v->own)
			return fail(g, -ENOMEM, "out of memory");
		v->data = v->own;
	}
	if (v->requires_grad) {
		v->grad = engine_alloc_floats(v->n);
		if (!v->grad)
			return fail(g, -ENOMEM, "out of memory");
	}
	if (v->kind != ENGINE_VAL_PARAM)
		return 0;
	for (unsigned s = 0; s < engine_optim_state_arrays(g->kind); s++) {
		v->state[s] = engine_alloc_floats(v->n);
		if (!v->state[s])
			return fail(g, -ENOMEM, "out of memory");
	}
	return 0;
}

int engine_graph_prepare(struct engine_graph *g, enum engine_optim_kind kind)
{
	size_t scratch = 0;
	int err;

	if (!g || g->prepared || kind > ENGINE_ADAMW)
		return -EINVAL;
	if (!g->checked) {
		err = engine_graph_check(g);
		if (err)
			return err;
	}
	g->kind = kind;
	g->max_n = 1;
	for (size_t i = 0; i < g->nv; i++) {
		if (g->v[i].n > g->max_n)
			g->max_n = g->v[i].n;
		err = alloc_value(g, &g->v[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < g->nn; i++) {
		struct gnode *nd = &g->n[i];

		if (node_scratch(nd) > scratch)
			scratch = node_scratch(nd);
		if (nd->aux_n && !(nd->aux = engine_alloc_floats(nd->aux_n)))
			return fail(g, -ENOMEM, "out of memory");
		if (nd->keep_n && !(nd->keep = calloc(nd->keep_n, 1)))
			return fail(g, -ENOMEM, "out of memory");
	}
	if (scratch) {
		g->scratch = engine_alloc_floats(scratch);
		if (!g->scratch)
			return fail(g, -ENOMEM, "out of memory");
	}
	for (int i = 0; i < 3; i++) {
		g->acc[i] = engine_alloc_floats(g->max_n);
		if (!g->acc[i])
			return fail(g, -ENOMEM, "out of memory");
	}
	g->prepared = true;
	return 0;
}

size_t engine_graph_values(const struct engine_graph *g)
{
	return g ? g->nv : 0;
}

size_t engine_graph_nodes(const struct engine_graph *g)
{
	return g ? g->nn : 0;
}

int engine_graph_shape(const struct engine_graph *g, int id, size_t *rank, size_t *dims)
{
	if (!g || !valid_id(g, id) || !rank || !dims)
		return -EINVAL;
	*rank = g->v[id].rank;
	memcpy(dims, g->v[id].dims, sizeof(g->v[id].dims));
	return 0;
}

enum engine_value_kind engine_graph_kind(const struct engine_graph *g, int id)
{
	return g && valid_id(g, id) ? g->v[id].kind : ENGINE_VAL_ACT;
}

enum engine_dtype engine_graph_dtype(const struct engine_graph *g, int id)
{
	return g && valid_id(g, id) ? g->v[id].dtype : ENGINE_DT_F32;
}

int engine_graph_node(const struct engine_graph *g, size_t i, enum engine_op *op,
		      struct engine_node_attrs *a, size_t *n_in, int *in, size_t *n_out, int *out)
{
	const struct gnode *nd;

	if (!g || i >= g->nn)
		return -EINVAL;
	nd = &g->n[i];
	*op = nd->op;
	*a = nd->a;
	*n_in = nd->n_in;
	*n_out = nd->n_out;
	memcpy(in, nd->in, nd->n_in * sizeof(*in));
	memcpy(out, nd->out, nd->n_out * sizeof(*out));
	return 0;
}

void engine_graph_loss_values(const struct engine_graph *g, int *logits, int *labels)
{
	*logits = g ? g->loss_logits : -1;
	*labels = g ? g->loss_labels : -1;
}

size_t engine_graph_param_floats(const struct engine_graph *g)
{
	size_t n = 0;

	for (size_t i = 0; g && i < g->nv; i++)
		if (g->v[i].kind == ENGINE_VAL_PARAM)
			n += g->v[i].n;
	return n;
}

int engine_graph_set_input(struct engine_graph *g, int id, const void *data)
{
	if (!g || !g->prepared || !valid_id(g, id) || !data || g->v[id].kind != ENGINE_VAL_INPUT)
		return -EINVAL;
	memcpy(g->v[id].data, data, g->v[id].n * dtype_size(g->v[id].dtype));
	g->forward_done = false;
	return 0;
}

void *engine_graph_data(struct engine_graph *g, int id)
{
	return g && valid_id(g, id) ? g->v[id].data : NULL;
}

const float *engine_graph_grad(const struct engine_graph *g, int id)
{
	return g && valid_id(g, id) && g->v[id].fresh ? g->v[id].grad : NULL;
}

int engine_graph_bind(struct engine_graph *g, int id, float *data)
{
	if (!g || !valid_id(g, id) ||
	    (g->v[id].kind != ENGINE_VAL_PARAM && g->v[id].kind != ENGINE_VAL_STATE))
		return -EINVAL;
	g->v[id].data = data ? data : g->v[id].own;
	return 0;
}
