// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ONNX ops to engine kernels: each handler checks a node's attributes
 * (any it does not know refuses the node: an attribute is never ignored),
 * input types and shapes, computes its output shapes and maps it to a
 * kernel of wse/engine_graph.h, or refuses it saying why. Erf, Where and
 * Pow only get their shapes: they run inside fused patterns
 * (compiler_fuse.c), and are refused if none matches.
 */
#include <math.h>
#include <string.h>

#include "compiler_onnx_internal.h"

static struct wsecc_tensor *IN(struct octx *c, size_t i, size_t k)
{
	const struct wsecc_node *n = &c->g->nodes[i];

	return k < n->n_in && n->in[k] >= 0 ? &c->g->tensors[n->in[k]] : NULL;
}

static void set_out(struct octx *c, size_t i, size_t k, enum wsecc_dtype dt, unsigned rank,
		    const int64_t *dims)
{
	const struct wsecc_node *n = &c->g->nodes[i];

	if (k < n->n_out && n->out[k] >= 0) {
		c->g->tensors[n->out[k]].dtype = dt;
		wsecc_tensor_set_shape(&c->g->tensors[n->out[k]], rank, dims);
	}
}

/* 1 (and refuses) unless the node has inputs @lo..@hi, @out_max outputs at most. */
static int arity(struct octx *c, size_t i, size_t lo, size_t hi, size_t out_max)
{
	const struct wsecc_node *n = &c->g->nodes[i];
	bool missing = n->n_in < lo;

	/* The first @lo inputs are the required ones. */
	for (size_t k = 0; k < lo && k < n->n_in; k++)
		missing |= n->in[k] < 0;
	if (n->n_in > hi || missing || n->n_out < 1 || n->out[0] < 0) {
		wsecc_refuse(c->g, i, WSECC_WHY_OP, "takes %zu to %zu inputs", lo, hi);
		return 1;
	}
	for (size_t k = out_max; k < n->n_out; k++)
		if (n->out[k] >= 0) {
			wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "output %zu ('%s') is not supported", k,
				     c->g->tensors[n->out[k]].name);
			return 1;
		}
	return 0;
}

/* 1 (and refuses) unless input @k is float32. */
static int need_f32(struct octx *c, size_t i, size_t k)
{
	struct wsecc_tensor *t = IN(c, i, k);

	if (!t || t->dtype == WSECC_DT_F32)
		return 0;
	wsecc_refuse(c->g, i, WSECC_WHY_DTYPE, "input %zu ('%s') is %s; the kernels take float32", k,
		     t->name, wsecc_dtype_name(t->dtype));
	return 1;
}

static int need_all_f32(struct octx *c, size_t i)
{
	for (size_t k = 0; k < c->g->nodes[i].n_in; k++)
		if (need_f32(c, i, k))
			return 1;
	return 0;
}

/* 1 (and refuses) unless input @k has rank @rank. */
static int need_rank(struct octx *c, size_t i, size_t k, unsigned rank, const char *what)
{
	struct wsecc_tensor *t = IN(c, i, k);

	if (!t || t->rank == rank)
		return 0;
	wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "input %zu ('%s') has rank %u: %s", k, t->name,
		     t->rank, what);
	return 1;
}

/* Int64 values of constant input @k, at most @max; 1 (and refuses) if not constant. */
static int const_ints(struct octx *c, size_t i, size_t k, int64_t *v, size_t max, size_t *n,
		      const char *what)
{
	struct wsecc_tensor *t = IN(c, i, k);

	if (!t || t->kind != WSECC_T_CONST || !t->data || t->dtype != WSECC_DT_I64 || t->rank > 1 ||
	    wsecc_tensor_numel(t) > max) {
		wsecc_refuse(c->g, i, WSECC_WHY_SHAPE,
			     "%s must be a constant list of int64 (a shape computed at run time is dynamic)",
			     what);
		return 1;
	}
	*n = wsecc_tensor_numel(t);
	memcpy(v, t->data, *n * sizeof(*v));
	return 0;
}

static int ints_positive(struct octx *c, size_t i, const char *name, const int64_t *v, size_t n,
			 size_t want, int64_t lo)
{
	if (n && n != want) {
		wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "'%s' has %zu values, not %zu", name, n, want);
		return 1;
	}
	for (size_t k = 0; k < n; k++)
		if (v[k] < lo || v[k] > (1 << 20)) {
			wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "'%s' value %lld is out of range", name,
				     (long long)v[k]);
			return 1;
		}
	return 0;
}

/* --- convolution and pooling -------------------------------------------------------- */

struct window {
	int64_t k[2], s[2], d[2], p[4];	/* pads top, left, bottom, right */
	int64_t out[2];
	bool ceil_mode;
};

/* Kernel, strides, dilations and pads (explicit or from auto_pad) of a 2-D window op. */
static int window_attrs(struct octx *c, size_t i, const int64_t *in_hw,
			const int64_t *wk, struct window *w)
{
	int64_t v[8];
	size_t n;
	char pad[32];

	if (onnx_attr_ints(c, i, "kernel_shape", v, 2, &n) || ints_positive(c, i, "kernel_shape", v, n, 2, 1))
		return 1;
	if (!n && !wk) {
		wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "kernel_shape is required");
		return 1;
	}
	if (n && wk && (v[0] != wk[0] || v[1] != wk[1])) {
		wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "kernel_shape differs from the weights' shape");
		return 1;
	}
	w->k[0] = n ? v[0] : wk[0];
	w->k[1] = n ? v[1] : wk[1];
	w->s[0] = w->s[1] = w->d[0] = w->d[1] = 1;
	if (onnx_attr_ints(c, i, "strides", v, 2, &n) || ints_positive(c, i, "strides", v, n, 2, 1))
		return 1;
	if (n) {
		w->s[0] = v[0];
		w->s[1] = v[1];
	}
	if (onnx_attr_ints(c, i, "dilations", v, 2, &n) || ints_positive(c, i, "dilations", v, n, 2, 1))
		return 1;
	if (n) {
		w->d[0] = v[0];
		w->d[1] = v[1];
	}
	memset(w->p, 0, sizeof(w->p));
	if (onnx_attr_ints(c, i, "pads", v, 4, &n) || ints_positive(c, i, "pads", v, n, 4, 0))
		return 1;
	if (n)
		memcpy(w->p, v, sizeof(w->p));
	if (onnx_attr_string(c, i, "auto_pad", pad, sizeof(pad)))
		return 1;
	if (pad[0] && strcmp(pad, "NOTSET") != 0) {
		if (n) {
			wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "both pads and auto_pad %s", pad);
			return 1;
		}
		if (!strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER")) {
			for (int a = 0; a < 2; a++) {
				int64_t out = (in_hw[a] + w->s[a] - 1) / w->s[a];
				int64_t total = (out - 1) * w->s[a] + (w->k[a] - 1) * w->d[a] + 1 - in_hw[a];
				int64_t small;

				total = total > 0 ? total : 0;
				small = total / 2;
				w->p[a] = pad[5] == 'U' ? small : total - small;
				w->p[a + 2] = total - w->p[a];
			}
		} else if (strcmp(pad, "VALID") != 0) {
			wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "auto_pad '%s' is not supported", pad);
			return 1;
		}
	}
	for (int a = 0; a < 2; a++) {
		int64_t span = (w->k[a] - 1) * w->d[a] + 1;
		int64_t padded = in_hw[a] + w->p[a] + w->p[a + 2];

		/* The engine's limit: no window that sees only padding. */
		if (w->p[a] >= span || w->p[a + 2] >= span) {
			wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "pads as large as the kernel are not supported");
			return 1;
		}
		if (padded < span) {
			wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the kernel is larger than the padded input");
			return 1;
		}
		w->out[a] = (padded - span) / w->s[a] + 1;
		if (w->ceil_mode && (padded - span) % w->s[a] && w->out[a] * w->s[a] < in_hw[a] + w->p[a])
			w->out[a]++;
	}
	return 0;
}

static void window_to_attrs(const struct window *w, struct engine_node_attrs *a)
{
	for (int k = 0; k < 2; k++) {
		a->kernel[k] = (size_t)w->k[k];
		a->stride[k] = (size_t)w->s[k];
		a->dilation[k] = (size_t)w->d[k];
	}
	for (int k = 0; k < 4; k++)
		a->pads[k] = (size_t)w->p[k];
	a->ceil_mode = w->ceil_mode;
}

static int op_conv(struct octx *c, size_t i)
{
	static const char *const known[] = { "auto_pad", "dilations", "group", "kernel_shape", "pads",
					     "strides", NULL };
	struct wsecc_tensor *x, *w, *b;
	struct window win = { 0 };
	int64_t group, dims[4];

	if (arity(c, i, 2, 3, 1) || onnx_attrs_known(c, i, known) || need_all_f32(c, i) ||
	    need_rank(c, i, 0, 4, "only 2-D convolutions (NCHW) are supported") ||
	    need_rank(c, i, 1, 4, "the weights must be [M, C, kH, kW]"))
		return 0;
	x = IN(c, i, 0);
	w = IN(c, i, 1);
	b = IN(c, i, 2);
	if (onnx_attr_int(c, i, "group", 1, &group))
		return 0;
	if (group != 1)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "group %lld: only group 1 is supported",
				    (long long)group);
	if (w->dims[1] != x->dims[1] || (b && (b->rank != 1 || b->dims[0] != w->dims[0])))
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the weights or bias do not match the input's channels");
	if (window_attrs(c, i, x->dims + 2, w->dims + 2, &win))
		return 0;
	dims[0] = x->dims[0];
	dims[1] = w->dims[0];
	dims[2] = win.out[0];
	dims[3] = win.out[1];
	set_out(c, i, 0, WSECC_DT_F32, 4, dims);
	window_to_attrs(&win, &c->g->nodes[i].attrs);
	wsecc_map(c->g, i, ENGINE_OP_CONV2D, "conv2d_f32");
	return 0;
}

static int op_pool(struct octx *c, size_t i, bool max)
{
	static const char *const known_max[] = { "auto_pad", "ceil_mode", "dilations", "kernel_shape",
						 "pads", "storage_order", "strides", NULL };
	static const char *const known_avg[] = { "auto_pad", "ceil_mode", "count_include_pad",
						 "kernel_shape", "pads", "strides", NULL };
	struct wsecc_tensor *x;
	struct window win = { 0 };
	int64_t v, dims[4];

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, max ? known_max : known_avg) ||
	    need_all_f32(c, i) || need_rank(c, i, 0, 4, "only 2-D pooling (NCHW) is supported"))
		return 0;
	x = IN(c, i, 0);
	if (onnx_attr_int(c, i, "ceil_mode", 0, &v))
		return 0;
	win.ceil_mode = v != 0;
	if (max) {
		if (onnx_attr_int(c, i, "storage_order", 0, &v))
			return 0;
		if (v)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "storage_order 1 is not supported");
	}
	if (window_attrs(c, i, x->dims + 2, NULL, &win))
		return 0;
	window_to_attrs(&win, &c->g->nodes[i].attrs);
	if (!max) {
		if (onnx_attr_int(c, i, "count_include_pad", 0, &v))
			return 0;
		c->g->nodes[i].attrs.count_include_pad = v != 0;
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = win.out[0];
	dims[3] = win.out[1];
	set_out(c, i, 0, WSECC_DT_F32, 4, dims);
	wsecc_map(c->g, i, max ? ENGINE_OP_MAXPOOL2D : ENGINE_OP_AVGPOOL2D,
		  max ? "maxpool2d_f32" : "avgpool2d_f32");
	return 0;
}

/* --- matrix products ---------------------------------------------------------------- */

static int op_gemm(struct octx *c, size_t i)
{
	static const char *const known[] = { "alpha", "beta", "transA", "transB", NULL };
	struct engine_node_attrs *a = &c->g->nodes[i].attrs;
	struct wsecc_tensor *A, *B, *C;
	int64_t ta, tb, m, k, n, dims[2];

	if (arity(c, i, 2, 3, 1) || onnx_attrs_known(c, i, known) || need_all_f32(c, i) ||
	    need_rank(c, i, 0, 2, "A must be a matrix") || need_rank(c, i, 1, 2, "B must be a matrix"))
		return 0;
	if (onnx_attr_int(c, i, "transA", 0, &ta) || onnx_attr_int(c, i, "transB", 0, &tb) ||
	    onnx_attr_float(c, i, "alpha", 1.0f, &a->alpha) ||
	    onnx_attr_float(c, i, "beta", 1.0f, &a->beta))
		return 0;
	A = IN(c, i, 0);
	B = IN(c, i, 1);
	C = IN(c, i, 2);
	a->trans_a = ta != 0;
	a->trans_b = tb != 0;
	m = A->dims[ta ? 1 : 0];
	k = A->dims[ta ? 0 : 1];
	n = B->dims[tb ? 0 : 1];
	if (B->dims[tb ? 1 : 0] != k)
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the inner dimensions of A and B differ");
	if (C) {
		int64_t cr = C->rank == 2 ? C->dims[0] : 1, cc = C->rank ? C->dims[C->rank - 1] : 1;

		if (C->rank > 2 || (cr != 1 && cr != m) || (cc != 1 && cc != n))
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "C does not broadcast to [M, N]");
	}
	dims[0] = m;
	dims[1] = n;
	set_out(c, i, 0, WSECC_DT_F32, 2, dims);
	wsecc_map(c->g, i, ENGINE_OP_GEMM, "gemm_f32");
	return 0;
}

static int op_matmul(struct octx *c, size_t i)
{
	struct wsecc_tensor *A, *B;
	int64_t dims[WSECC_MAX_RANK];
	unsigned r;

	if (arity(c, i, 2, 2, 1) || onnx_attrs_known(c, i, NULL) || need_all_f32(c, i))
		return 0;
	A = IN(c, i, 0);
	B = IN(c, i, 1);
	if (A->rank < 2 || B->rank < 2)
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "1-D operands are not supported");
	if (A->dims[A->rank - 1] != B->dims[B->rank - 2] ||
	    onnx_broadcast(A->rank - 2, A->dims, B->rank - 2, B->dims, &r, dims))
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the shapes do not multiply");
	dims[r] = A->dims[A->rank - 2];
	dims[r + 1] = B->dims[B->rank - 1];
	set_out(c, i, 0, WSECC_DT_F32, r + 2, dims);
	wsecc_map(c->g, i, ENGINE_OP_MATMUL, "matmul_f32");
	return 0;
}

/* --- element-wise -------------------------------------------------------------------- */

static int op_binary(struct octx *c, size_t i, enum engine_binary_kind kind)
{
	static const char *const names[] = { "add_f32", "sub_f32", "mul_f32", "div_f32" };
	struct wsecc_tensor *A, *B;
	int64_t dims[WSECC_MAX_RANK];
	unsigned r;

	if (arity(c, i, 2, 2, 1) || onnx_attrs_known(c, i, NULL) || need_all_f32(c, i))
		return 0;
	A = IN(c, i, 0);
	B = IN(c, i, 1);
	if (onnx_broadcast(A->rank, A->dims, B->rank, B->dims, &r, dims))
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the shapes do not broadcast");
	set_out(c, i, 0, WSECC_DT_F32, r, dims);
	c->g->nodes[i].attrs.binary = kind;
	wsecc_map(c->g, i, ENGINE_OP_BINARY, names[kind]);
	return 0;
}

static int op_act(struct octx *c, size_t i, enum engine_act_kind kind, const char *kernel)
{
	struct wsecc_tensor *x;

	if (arity(c, i, 1, 1, 1) || need_all_f32(c, i))
		return 0;
	if (kind == ENGINE_ACT_GELU) {
		static const char *const known[] = { "approximate", NULL };
		char approx[16];

		if (onnx_attrs_known(c, i, known) ||
		    onnx_attr_string(c, i, "approximate", approx, sizeof(approx)))
			return 0;
		if (!strcmp(approx, "tanh")) {
			kind = ENGINE_ACT_GELU_TANH;
			kernel = "gelu_tanh_f32";
		} else if (approx[0] && strcmp(approx, "none") != 0) {
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "approximate '%s'", approx);
		}
	} else if (onnx_attrs_known(c, i, NULL)) {
		return 0;
	}
	x = IN(c, i, 0);
	set_out(c, i, 0, WSECC_DT_F32, x->rank, x->dims);
	c->g->nodes[i].attrs.act = kind;
	wsecc_map(c->g, i, ENGINE_OP_ACT, kernel);
	return 0;
}

/* Shape only: these run inside a fused pattern. */
static int op_pending(struct octx *c, size_t i, size_t n_in)
{
	const struct wsecc_node *n = &c->g->nodes[i];
	int64_t dims[WSECC_MAX_RANK], d2[WSECC_MAX_RANK];
	unsigned r;
	struct wsecc_tensor *x = IN(c, i, n_in - 1);

	if (arity(c, i, n_in, n_in, 1) || onnx_attrs_known(c, i, NULL))
		return 0;
	r = x->rank;
	memcpy(dims, x->dims, sizeof(dims));
	for (size_t k = 0; k + 1 < n_in; k++) {
		struct wsecc_tensor *t = IN(c, i, k);

		memcpy(d2, dims, sizeof(d2));
		if (onnx_broadcast(t->rank, t->dims, r, d2, &r, dims))
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the shapes do not broadcast");
	}
	set_out(c, i, 0, x->dtype, r, dims);
	(void)n;
	return 0;	/* stays WSECC_NODE_PENDING */
}

/*
 * Where on activations: where_f32, when the condition is a constant (a
 * folded mask). A causal attention's Where is fused into the attention
 * afterwards; the kernel takes the condition as floats.
 */
static int op_where(struct octx *c, size_t i)
{
	struct wsecc_tensor *cond;

	if (op_pending(c, i, 3) || c->g->nodes[i].state != WSECC_NODE_PENDING)
		return 0;
	cond = IN(c, i, 0);
	if (cond->dtype != WSECC_DT_BOOL)
		return wsecc_refuse(c->g, i, WSECC_WHY_DTYPE, "the condition is %s, not bool",
				    wsecc_dtype_name(cond->dtype));
	if (need_f32(c, i, 1) || need_f32(c, i, 2))
		return 0;
	if (cond->kind != WSECC_T_CONST || !cond->data)
		return wsecc_refuse(c->g, i, WSECC_WHY_OP,
				    "the condition '%s' is computed at run time (only a constant condition is supported)",
				    cond->name);
	wsecc_map(c->g, i, ENGINE_OP_WHERE, "where_f32");
	return 0;
}

/*
 * ReduceMean, shape only: it runs inside a fused RMSNorm. The axes come as
 * the attribute (opset < 18) or the second input; the one reduced axis is
 * kept in attrs.axis for the fusion to check.
 */
static int op_reduce_mean(struct octx *c, size_t i)
{
	static const char *const known[] = { "axes", "keepdims", "noop_with_empty_axes", NULL };
	struct wsecc_tensor *x;
	int64_t axes[WSECC_MAX_RANK], dims[WSECC_MAX_RANK], keep;
	size_t n = 0;
	unsigned ax, r = 0;

	if (arity(c, i, 1, 2, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_int(c, i, "keepdims", 1, &keep))
		return 0;
	if (IN(c, i, 1) ? const_ints(c, i, 1, axes, WSECC_MAX_RANK, &n, "axes")
			: onnx_attr_ints(c, i, "axes", axes, WSECC_MAX_RANK, &n))
		return 0;
	x = IN(c, i, 0);
	if (n != 1 || onnx_axis(axes[0], x->rank, &ax))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR,
				    "the mean over one axis is supported (as RMSNorm takes it)");
	for (unsigned k = 0; k < x->rank; k++)
		if (k != ax || keep)
			dims[r++] = k == ax ? 1 : x->dims[k];
	c->g->nodes[i].attrs.axis = ax;
	set_out(c, i, 0, WSECC_DT_F32, r, dims);
	return 0;	/* stays WSECC_NODE_PENDING */
}

/*
 * Slice of an activation: slice_f32 along one axis, step 1. Several axes
 * are accepted when all but one keep their whole length (x[:, :T] written
 * with every axis). The fused rotary embedding finds the start in the
 * constant input; the kernel has it in attrs.start.
 */
static int op_slice(struct octx *c, size_t i)
{
	struct engine_node_attrs *a = &c->g->nodes[i].attrs;
	struct wsecc_tensor *x;
	int64_t starts[WSECC_MAX_RANK], ends[WSECC_MAX_RANK], axes[WSECC_MAX_RANK];
	int64_t steps[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	size_t ns, ne, na, nst;
	unsigned cut = 0;

	if (arity(c, i, 3, 5, 1) || onnx_attrs_known(c, i, NULL) || need_f32(c, i, 0) ||
	    const_ints(c, i, 1, starts, WSECC_MAX_RANK, &ns, "starts") ||
	    const_ints(c, i, 2, ends, WSECC_MAX_RANK, &ne, "ends") ||
	    (IN(c, i, 3) && const_ints(c, i, 3, axes, WSECC_MAX_RANK, &na, "axes")) ||
	    (IN(c, i, 4) && const_ints(c, i, 4, steps, WSECC_MAX_RANK, &nst, "steps")))
		return 0;
	x = IN(c, i, 0);
	if (!IN(c, i, 3))
		for (na = 0; na < ns; na++)
			axes[na] = (int64_t)na;
	if (!IN(c, i, 4))
		for (nst = 0; nst < ns; nst++)
			steps[nst] = 1;
	if (ns != ne || ns != na || ns != nst || !ns || ns > x->rank)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR,
				    "starts, ends, axes and steps must be as many, at most the rank");
	memcpy(dims, x->dims, sizeof(dims));
	for (size_t k = 0; k < ns; k++) {
		int64_t len, s, e;
		unsigned ax;

		if (onnx_axis(axes[k], x->rank, &ax))
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range",
					    (long long)axes[k]);
		if (steps[k] != 1)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR,
					    "a slice of an activation with step %lld (only step 1 is supported)",
					    (long long)steps[k]);
		len = x->dims[ax];
		s = starts[k] < 0 ? starts[k] + len : starts[k];
		e = ends[k] < 0 ? ends[k] + len : ends[k];
		s = s < 0 ? 0 : s > len ? len : s;
		e = e < 0 ? 0 : e > len ? len : e;
		if (e <= s)
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the slice of axis %u is empty", ax);
		if (e - s == len)
			continue;
		if (cut++)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR,
					    "a slice of an activation along more than one axis");
		dims[ax] = e - s;
		a->axis = ax;
		a->start = (size_t)s;
	}
	set_out(c, i, 0, WSECC_DT_F32, x->rank, dims);
	wsecc_map(c->g, i, cut ? ENGINE_OP_SLICE : ENGINE_OP_RESHAPE, cut ? "slice_f32" : "copy_f32");
	return 0;
}

/* Concat of activations along one axis: concat_f32. */
static int op_concat(struct octx *c, size_t i)
{
	static const char *const known[] = { "axis", NULL };
	const struct wsecc_node *n = &c->g->nodes[i];
	struct wsecc_tensor *x;
	int64_t axis, dims[WSECC_MAX_RANK];
	unsigned ax;

	if (arity(c, i, 1, ENGINE_GRAPH_MAX_IO, 1) || onnx_attrs_known(c, i, known) ||
	    need_all_f32(c, i) || onnx_attr_int(c, i, "axis", 0, &axis))
		return 0;
	x = IN(c, i, 0);
	if (onnx_axis(axis, x->rank, &ax))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range", (long long)axis);
	memcpy(dims, x->dims, sizeof(dims));
	for (size_t k = 1; k < n->n_in; k++) {
		struct wsecc_tensor *t = IN(c, i, k);

		for (unsigned d = 0; d < x->rank; d++)
			if (t->rank != x->rank || (d != ax && t->dims[d] != x->dims[d]))
				return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE,
						    "the inputs differ in more than the axis");
		dims[ax] += t->dims[ax];
	}
	c->g->nodes[i].attrs.axis = ax;
	set_out(c, i, 0, WSECC_DT_F32, x->rank, dims);
	wsecc_map(c->g, i, ENGINE_OP_CONCAT, "concat_f32");
	return 0;
}

/* --- normalization, softmax, gather -------------------------------------------------------- */

static int op_layernorm(struct octx *c, size_t i)
{
	static const char *const known[] = { "axis", "epsilon", "stash_type", NULL };
	struct engine_node_attrs *a = &c->g->nodes[i].attrs;
	struct wsecc_tensor *x, *s, *b;
	int64_t axis, stash, dims[WSECC_MAX_RANK];
	unsigned ax;

	if (arity(c, i, 2, 3, 3) || onnx_attrs_known(c, i, known) || need_all_f32(c, i) ||
	    onnx_attr_int(c, i, "axis", -1, &axis) || onnx_attr_int(c, i, "stash_type", 1, &stash) ||
	    onnx_attr_float(c, i, "epsilon", 1e-5f, &a->epsilon))
		return 0;
	x = IN(c, i, 0);
	s = IN(c, i, 1);
	b = IN(c, i, 2);
	if (stash != 1)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "stash_type %lld: statistics are kept in float32 (1)",
				    (long long)stash);
	if (onnx_axis(axis, x->rank, &ax))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range", (long long)axis);
	if (!(a->epsilon > 0.0f))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "epsilon must be positive");
	if (s->rank != x->rank - ax || memcmp(s->dims, x->dims + ax, s->rank * sizeof(int64_t)) ||
	    (b && (b->rank != s->rank || memcmp(b->dims, s->dims, s->rank * sizeof(int64_t)))))
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "scale and bias must have the normalized dimensions' shape");
	/* Mean and InvStdDev may be graph outputs, but feed no node: they
	 * carry no gradient.
	 */
	for (size_t k = 1; k < c->g->nodes[i].n_out; k++) {
		int t = c->g->nodes[i].out[k];

		if (t < 0)
			continue;
		memcpy(dims, x->dims, sizeof(dims));
		for (unsigned d = ax; d < x->rank; d++)
			dims[d] = 1;
		set_out(c, i, k, WSECC_DT_F32, x->rank, dims);
	}
	a->axis = ax;
	set_out(c, i, 0, WSECC_DT_F32, x->rank, x->dims);
	wsecc_map(c->g, i, ENGINE_OP_LAYERNORM, "layernorm_f32");
	return 0;
}

static int op_softmax(struct octx *c, size_t i)
{
	static const char *const known[] = { "axis", NULL };
	struct wsecc_tensor *x;
	int64_t axis;
	unsigned ax;

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, known) || need_all_f32(c, i) ||
	    onnx_attr_int(c, i, "axis", -1, &axis))
		return 0;
	x = IN(c, i, 0);
	if (onnx_axis(axis, x->rank, &ax))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range", (long long)axis);
	c->g->nodes[i].attrs.axis = ax;
	set_out(c, i, 0, WSECC_DT_F32, x->rank, x->dims);
	wsecc_map(c->g, i, ENGINE_OP_SOFTMAX, "softmax_f32");
	return 0;
}

static int op_gather(struct octx *c, size_t i)
{
	static const char *const known[] = { "axis", NULL };
	struct wsecc_tensor *d, *ix;
	int64_t axis, dims[WSECC_MAX_RANK];
	unsigned ax, r = 0;

	if (arity(c, i, 2, 2, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_int(c, i, "axis", 0, &axis))
		return 0;
	d = IN(c, i, 0);
	ix = IN(c, i, 1);
	if (ix->dtype != WSECC_DT_I64)
		return wsecc_refuse(c->g, i, WSECC_WHY_DTYPE, "indices of %s; int64 is supported",
				    wsecc_dtype_name(ix->dtype));
	if (onnx_axis(axis, d->rank, &ax))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range", (long long)axis);
	if (d->rank - 1 + ix->rank > WSECC_MAX_RANK)
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the output's rank is too large");
	for (unsigned k = 0; k < ax; k++)
		dims[r++] = d->dims[k];
	for (unsigned k = 0; k < ix->rank; k++)
		dims[r++] = ix->dims[k];
	for (unsigned k = ax + 1; k < d->rank; k++)
		dims[r++] = d->dims[k];
	c->g->nodes[i].attrs.axis = ax;
	set_out(c, i, 0, WSECC_DT_F32, r, dims);
	wsecc_map(c->g, i, ENGINE_OP_GATHER, "gather_f32");
	return 0;
}

static int op_dropout(struct octx *c, size_t i)
{
	/* seed: the masks come from the executor's seeded generator instead. */
	static const char *const known[] = { "seed", NULL };
	struct wsecc_tensor *x, *r = IN(c, i, 1), *t = IN(c, i, 2);
	float ratio = 0.5f;

	if (arity(c, i, 1, 3, 2) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0))
		return 0;
	x = IN(c, i, 0);
	if (r) {
		if (r->kind != WSECC_T_CONST || !r->data || r->dtype != WSECC_DT_F32 ||
		    wsecc_tensor_numel(r) != 1)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "the ratio must be a constant float32 scalar");
		ratio = *(float *)r->data;
	}
	if (t && (t->kind != WSECC_T_CONST || !t->data || t->dtype != WSECC_DT_BOOL))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "training_mode must be a constant bool");
	if (!(ratio >= 0.0f && ratio < 1.0f))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "ratio %g is outside [0, 1)", ratio);
	/* training_mode false: the identity even while the model trains. */
	if (t && !*(const uint8_t *)t->data)
		ratio = 0.0f;
	c->g->nodes[i].attrs.ratio = ratio;
	set_out(c, i, 0, WSECC_DT_F32, x->rank, x->dims);
	/* The mask (ONNX: bool) as fp32 1 and 0: the kernels' one element type. */
	set_out(c, i, 1, WSECC_DT_F32, x->rank, x->dims);
	wsecc_map(c->g, i, ENGINE_OP_DROPOUT, "dropout_f32");
	return 0;
}

/* --- layout ------------------------------------------------------------------------ */

static int map_copy(struct octx *c, size_t i, unsigned rank, const int64_t *dims)
{
	set_out(c, i, 0, WSECC_DT_F32, rank, dims);
	wsecc_map(c->g, i, ENGINE_OP_RESHAPE, "copy_f32");
	return 0;
}

/*
 * BatchNormalization. Training is training_mode 1 (opset 14 and later) or,
 * before, the running statistics' outputs being there (PyTorch's opset 13
 * training export writes all five outputs). The running mean and variance
 * from the initializers become state: updated by each training forward
 * pass, kept in checkpoints, never trained. ONNX's running variance is the
 * biased one, PyTorch's the unbiased: a model PyTorch exported gets
 * PyTorch's.
 */
static int op_batchnorm(struct octx *c, size_t i)
{
	static const char *const known[] = { "epsilon", "momentum", "training_mode", NULL };
	struct wsecc_node *n = &c->g->nodes[i];
	struct engine_node_attrs *a = &n->attrs;
	struct wsecc_tensor *x;
	int64_t training, ch;

	if (arity(c, i, 5, 5, c->g->opset >= 14 ? 3 : 5) || onnx_attrs_known(c, i, known) ||
	    need_all_f32(c, i) || onnx_attr_float(c, i, "epsilon", 1e-5f, &a->epsilon) ||
	    onnx_attr_float(c, i, "momentum", 0.9f, &a->momentum) ||
	    onnx_attr_int(c, i, "training_mode", 0, &training))
		return 0;
	x = IN(c, i, 0);
	if (x->rank < 2 || x->rank > 5)
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "X has rank %u; 2 to 5 ([N, C, ...]) are supported",
				    x->rank);
	ch = x->dims[1];
	for (size_t k = 1; k < 5; k++)
		if (IN(c, i, k)->rank != 1 || IN(c, i, k)->dims[0] != ch)
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE,
					    "input %zu ('%s') must be [C] = [%lld]", k, IN(c, i, k)->name,
					    (long long)ch);
	if (!(a->epsilon > 0.0f) || !(a->momentum >= 0.0f && a->momentum <= 1.0f))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "epsilon must be > 0 and momentum in [0, 1]");
	if (c->g->opset < 14)
		training = n->n_out > 1;
	if (!training && n->n_out > 1)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "the running statistics' outputs need training_mode 1");
	for (size_t k = 3; k < 5; k++) {
		struct wsecc_tensor *t = IN(c, i, k);

		if (t->kind == WSECC_T_PARAM)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR,
					    "the running statistic '%s' is also a trained parameter of another node",
					    t->name);
		/* Each BatchNorm moves its own statistics. */
		if (t->kind == WSECC_T_STATE)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR,
					    "the running statistic '%s' is another BatchNormalization's too",
					    t->name);
		if (t->kind == WSECC_T_CONST && t->from_initializer && t->data)
			t->kind = WSECC_T_STATE;
	}
	a->training_mode = training != 0;
	a->unbiased = a->training_mode && !strncmp(c->g->producer, "pytorch", 7);
	set_out(c, i, 0, WSECC_DT_F32, x->rank, x->dims);
	for (size_t k = 1; k < n->n_out; k++)
		set_out(c, i, k, WSECC_DT_F32, 1, &ch);
	wsecc_map(c->g, i, ENGINE_OP_BATCHNORM, "batchnorm_f32");
	return 0;
}

/* GlobalAveragePool, GlobalMaxPool: a 2-D pooling over the whole plane. */
static int op_global_pool(struct octx *c, size_t i, bool max)
{
	struct engine_node_attrs *a = &c->g->nodes[i].attrs;
	struct wsecc_tensor *x;
	int64_t dims[4];

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, NULL) || need_all_f32(c, i) ||
	    need_rank(c, i, 0, 4, "only 2-D pooling (NCHW) is supported"))
		return 0;
	x = IN(c, i, 0);
	memset(a->pads, 0, sizeof(a->pads));
	for (int k = 0; k < 2; k++) {
		a->kernel[k] = (size_t)x->dims[2 + k];
		a->stride[k] = 1;
		a->dilation[k] = 1;
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = dims[3] = 1;
	set_out(c, i, 0, WSECC_DT_F32, 4, dims);
	wsecc_map(c->g, i, max ? ENGINE_OP_MAXPOOL2D : ENGINE_OP_AVGPOOL2D,
		  max ? "maxpool2d_f32" : "avgpool2d_f32");
	return 0;
}

/*
 * Pad, constant mode, by zeros: nothing to do when every pad is 0 (PyTorch
 * 1.13 writes such a Pad before nn.AvgPool2d's AveragePool); padding of
 * the height and width of an image runs inside the next AveragePool or
 * Conv (compiler_fuse.c), where it is the kernel's own zero padding. Left
 * pending otherwise, and refused by the check if nothing takes it.
 */
static int op_pad(struct octx *c, size_t i)
{
	static const char *const known[] = { "mode", NULL };
	struct engine_node_attrs *a = &c->g->nodes[i].attrs;
	struct wsecc_tensor *x, *cv = IN(c, i, 2);
	int64_t pads[2 * WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	char mode[32];
	size_t n;
	bool any = false;

	if (arity(c, i, 2, 3, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_string(c, i, "mode", mode, sizeof(mode)))
		return 0;
	x = IN(c, i, 0);
	if (mode[0] && strcmp(mode, "constant"))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "mode '%s': only constant padding is supported",
				    mode);
	if (cv && (cv->kind != WSECC_T_CONST || !cv->data || cv->dtype != WSECC_DT_F32 ||
		   wsecc_tensor_numel(cv) != 1 || *(const float *)cv->data != 0.0f))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "constant_value must be a constant 0");
	if (const_ints(c, i, 1, pads, 2 * WSECC_MAX_RANK, &n, "pads"))
		return 0;
	if (n != 2 * x->rank)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "pads has %zu values for rank %u", n, x->rank);
	for (unsigned d = 0; d < x->rank; d++) {
		if (pads[d] < 0 || pads[d + x->rank] < 0)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "negative pads (cropping) are not supported");
		if (pads[d] > (1 << 20) || pads[d + x->rank] > (1 << 20))
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "pads out of range");
		dims[d] = x->dims[d] + pads[d] + pads[d + x->rank];
		any |= pads[d] || pads[d + x->rank];
	}
	if (!any)
		return map_copy(c, i, x->rank, x->dims);
	set_out(c, i, 0, WSECC_DT_F32, x->rank, dims);
	if (x->rank != 4 || pads[0] || pads[1] || pads[4] || pads[5])
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE,
				    "padding other than the height and width of an NCHW image");
	a->pads[0] = (size_t)pads[2];
	a->pads[1] = (size_t)pads[3];
	a->pads[2] = (size_t)pads[6];
	a->pads[3] = (size_t)pads[7];
	return 0;	/* pending: fused into the pooling or convolution that reads it */
}

static int op_reshape(struct octx *c, size_t i)
{
	static const char *const known[] = { "allowzero", NULL };
	struct wsecc_tensor *x;
	int64_t shape[WSECC_MAX_RANK + 1], dims[WSECC_MAX_RANK], allowzero;
	size_t n;
	unsigned rank;
	char why[128];

	if (arity(c, i, 2, 2, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_int(c, i, "allowzero", 0, &allowzero) ||
	    const_ints(c, i, 1, shape, WSECC_MAX_RANK + 1, &n, "the target shape"))
		return 0;
	x = IN(c, i, 0);
	if (onnx_reshape_dims(x->rank, x->dims, shape, n, allowzero, &rank, dims, why, sizeof(why)))
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "%s", why);
	return map_copy(c, i, rank, dims);
}

static int op_flatten(struct octx *c, size_t i)
{
	static const char *const known[] = { "axis", NULL };
	struct wsecc_tensor *x;
	int64_t axis, dims[2] = { 1, 1 };
	unsigned ax;

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_int(c, i, "axis", 1, &axis))
		return 0;
	x = IN(c, i, 0);
	/* Flatten's axis is in [-r, r]. */
	if (axis < -(int64_t)x->rank || axis > (int64_t)x->rank)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range", (long long)axis);
	ax = (unsigned)(axis < 0 ? axis + x->rank : axis);
	for (unsigned d = 0; d < x->rank; d++)
		dims[d >= ax] *= x->dims[d];
	return map_copy(c, i, 2, dims);
}

static int op_squeeze(struct octx *c, size_t i, bool squeeze)
{
	struct wsecc_tensor *x;
	int64_t axes[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	size_t n = 0;
	unsigned rank, r = 0;
	bool mark[WSECC_MAX_RANK + 1] = { false };

	static const char *const known[] = { "axes", NULL };	/* opsets before 13 */

	if (arity(c, i, 1, 2, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0))
		return 0;
	if (IN(c, i, 1) ? const_ints(c, i, 1, axes, WSECC_MAX_RANK, &n, "axes")
			: onnx_attr_ints(c, i, "axes", axes, WSECC_MAX_RANK, &n))
		return 0;
	x = IN(c, i, 0);
	rank = squeeze ? x->rank : x->rank + (unsigned)n;
	if (rank > WSECC_MAX_RANK || (!squeeze && !n))
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "bad axes");
	for (size_t k = 0; k < n; k++) {
		unsigned a;

		if (onnx_axis(axes[k], rank, &a) || mark[a] || (squeeze && x->dims[a] != 1))
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "bad axes");
		mark[a] = true;
	}
	for (unsigned k = 0, s = 0; k < rank; k++) {
		if (squeeze) {
			if (!(n ? mark[k] : x->dims[k] == 1))
				dims[r++] = x->dims[k];
		} else {
			dims[r++] = mark[k] ? 1 : x->dims[s++];
		}
	}
	return map_copy(c, i, r, dims);
}

static int op_transpose(struct octx *c, size_t i)
{
	static const char *const known[] = { "perm", NULL };
	struct engine_node_attrs *a = &c->g->nodes[i].attrs;
	struct wsecc_tensor *x;
	int64_t perm[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	size_t n;
	unsigned seen = 0;

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_ints(c, i, "perm", perm, WSECC_MAX_RANK, &n))
		return 0;
	x = IN(c, i, 0);
	if (!n)
		for (unsigned d = 0; d < x->rank; d++)
			perm[n++] = x->rank - 1 - d;
	if (n != x->rank || !x->rank)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "perm does not match the rank");
	for (unsigned d = 0; d < x->rank; d++) {
		if (perm[d] < 0 || perm[d] >= (int64_t)x->rank || (seen & (1u << perm[d])))
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "perm is not a permutation");
		seen |= 1u << perm[d];
		a->perm[d] = (size_t)perm[d];
		dims[d] = x->dims[perm[d]];
	}
	set_out(c, i, 0, WSECC_DT_F32, x->rank, dims);
	wsecc_map(c->g, i, ENGINE_OP_TRANSPOSE, "transpose_f32");
	return 0;
}

static int op_split(struct octx *c, size_t i)
{
	static const char *const known[] = { "axis", "split", "num_outputs", NULL };
	struct wsecc_node *nd = &c->g->nodes[i];
	struct wsecc_tensor *x;
	int64_t axis, sizes[ENGINE_GRAPH_MAX_IO], dims[WSECC_MAX_RANK], num;
	size_t n = 0, total = 0;
	unsigned ax;

	if (onnx_attrs_known(c, i, known) || need_f32(c, i, 0) || onnx_attr_int(c, i, "axis", 0, &axis) ||
	    onnx_attr_int(c, i, "num_outputs", 0, &num))
		return 0;
	if (nd->n_out > ENGINE_GRAPH_MAX_IO || nd->n_in < 1 || nd->in[0] < 0)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "more than %d outputs", ENGINE_GRAPH_MAX_IO);
	for (size_t k = 0; k < nd->n_out; k++)
		if (nd->out[k] < 0)
			return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "an unnamed output");
	x = IN(c, i, 0);
	if (onnx_axis(axis, x->rank, &ax))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "axis %lld is out of range", (long long)axis);
	if (IN(c, i, 1)) {
		if (const_ints(c, i, 1, sizes, ENGINE_GRAPH_MAX_IO, &n, "split"))
			return 0;
	} else if (onnx_attr_ints(c, i, "split", sizes, ENGINE_GRAPH_MAX_IO, &n)) {
		return 0;
	}
	if (!n) {
		if (x->dims[ax] % (int64_t)nd->n_out)
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "%lld does not split evenly into %zu",
					    (long long)x->dims[ax], nd->n_out);
		for (size_t k = 0; k < nd->n_out; k++)
			sizes[k] = x->dims[ax] / (int64_t)nd->n_out;
		n = nd->n_out;
	}
	if (n != nd->n_out)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "%zu sizes for %zu outputs", n, nd->n_out);
	for (size_t k = 0; k < n; k++) {
		if (sizes[k] <= 0)
			return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "zero-sized outputs are not supported");
		total += (size_t)sizes[k];
	}
	if ((int64_t)total != x->dims[ax])
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE, "the sizes do not add up to the input");
	for (size_t k = 0; k < n; k++) {
		memcpy(dims, x->dims, sizeof(dims));
		dims[ax] = sizes[k];
		set_out(c, i, k, WSECC_DT_F32, x->rank, dims);
	}
	nd->attrs.axis = ax;
	wsecc_map(c->g, i, ENGINE_OP_SPLIT, "split_f32");
	return 0;
}

static int op_identity(struct octx *c, size_t i)
{
	struct wsecc_tensor *x;

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, NULL) || need_f32(c, i, 0))
		return 0;
	x = IN(c, i, 0);
	return map_copy(c, i, x->rank, x->dims);
}

static int op_cast(struct octx *c, size_t i)
{
	static const char *const known[] = { "to", "saturate", NULL };
	struct wsecc_tensor *x;
	int64_t to;

	if (arity(c, i, 1, 1, 1) || onnx_attrs_known(c, i, known) || onnx_attr_int(c, i, "to", 0, &to))
		return 0;
	x = IN(c, i, 0);
	if (x->dtype != WSECC_DT_F32 || to != WSECC_DT_F32)
		return wsecc_refuse(c->g, i, WSECC_WHY_DTYPE, "a cast from %s to %s at run time",
				    wsecc_dtype_name(x->dtype), wsecc_dtype_name((enum wsecc_dtype)to));
	return map_copy(c, i, x->rank, x->dims);
}

static int op_sce(struct octx *c, size_t i)
{
	static const char *const known[] = { "reduction", "ignore_index", NULL };
	struct wsecc_tensor *x, *y;
	char red[16];

	if (c->g->nodes[i].n_in > 2 && c->g->nodes[i].in[2] >= 0)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "class weights are not supported");
	if (arity(c, i, 2, 2, 1) || onnx_attrs_known(c, i, known) || need_f32(c, i, 0) ||
	    onnx_attr_string(c, i, "reduction", red, sizeof(red)))
		return 0;
	if (onnx_attr(c, i, "ignore_index"))
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "ignore_index is not supported");
	if (red[0] && strcmp(red, "mean") != 0)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "reduction '%s': the loss is the mean", red);
	x = IN(c, i, 0);
	y = IN(c, i, 1);
	if (x->rank != 2 || y->rank != 1 || y->dims[0] != x->dims[0])
		return wsecc_refuse(c->g, i, WSECC_WHY_SHAPE,
				    "scores [N, C] and labels [N] are supported (classes along the last axis)");
	if (y->dtype != WSECC_DT_I64)
		return wsecc_refuse(c->g, i, WSECC_WHY_DTYPE, "labels of %s; int64 is supported",
				    wsecc_dtype_name(y->dtype));
	set_out(c, i, 0, WSECC_DT_F32, 0, NULL);
	c->g->nodes[i].state = WSECC_NODE_LOSS;
	c->g->nodes[i].kernel = "softmax_xent_f32";
	return 0;
}

int onnx_infer(struct octx *c, size_t i)
{
	static const char *const changed_at_13[] = { "Softmax", "Split", "Squeeze", "Unsqueeze",
						      "LogSoftmax", NULL };
	const char *op = c->g->nodes[i].op_type;

	for (size_t k = 0; c->g->opset < 13 && changed_at_13[k]; k++)
		if (!strcmp(op, changed_at_13[k]) && (strcmp(op, "Unsqueeze") || c->g->nodes[i].n_in > 1))
			return wsecc_refuse(c->g, i, WSECC_WHY_OP,
					    "%s of opset %lld: its meaning changed in opset 13, the one supported",
					    op, (long long)c->g->opset);

	if (!strcmp(op, "Conv"))
		return op_conv(c, i);
	if (!strcmp(op, "MaxPool"))
		return op_pool(c, i, true);
	if (!strcmp(op, "AveragePool"))
		return op_pool(c, i, false);
	if (!strcmp(op, "Gemm"))
		return op_gemm(c, i);
	if (!strcmp(op, "MatMul"))
		return op_matmul(c, i);
	if (!strcmp(op, "Add"))
		return op_binary(c, i, ENGINE_BIN_ADD);
	if (!strcmp(op, "Sub"))
		return op_binary(c, i, ENGINE_BIN_SUB);
	if (!strcmp(op, "Mul"))
		return op_binary(c, i, ENGINE_BIN_MUL);
	if (!strcmp(op, "Div"))
		return op_binary(c, i, ENGINE_BIN_DIV);
	if (!strcmp(op, "Relu"))
		return op_act(c, i, ENGINE_ACT_RELU, "relu_f32");
	if (!strcmp(op, "Tanh"))
		return op_act(c, i, ENGINE_ACT_TANH, "tanh_f32");
	if (!strcmp(op, "Sigmoid"))
		return op_act(c, i, ENGINE_ACT_SIGMOID, "sigmoid_f32");
	if (!strcmp(op, "Gelu"))
		return op_act(c, i, ENGINE_ACT_GELU, "gelu_f32");
	if (!strcmp(op, "LayerNormalization"))
		return op_layernorm(c, i);
	if (!strcmp(op, "Softmax"))
		return op_softmax(c, i);
	if (!strcmp(op, "Gather"))
		return op_gather(c, i);
	if (!strcmp(op, "Dropout"))
		return op_dropout(c, i);
	if (!strcmp(op, "BatchNormalization"))
		return op_batchnorm(c, i);
	if (!strcmp(op, "GlobalAveragePool"))
		return op_global_pool(c, i, false);
	if (!strcmp(op, "GlobalMaxPool"))
		return op_global_pool(c, i, true);
	if (!strcmp(op, "Pad"))
		return op_pad(c, i);
	if (!strcmp(op, "Reshape"))
		return op_reshape(c, i);
	if (!strcmp(op, "Flatten"))
		return op_flatten(c, i);
	if (!strcmp(op, "Squeeze"))
		return op_squeeze(c, i, true);
	if (!strcmp(op, "Unsqueeze"))
		return op_squeeze(c, i, false);
	if (!strcmp(op, "Transpose"))
		return op_transpose(c, i);
	if (!strcmp(op, "Split"))
		return op_split(c, i);
	if (!strcmp(op, "Identity"))
		return op_identity(c, i);
	if (!strcmp(op, "Cast"))
		return op_cast(c, i);
	if (!strcmp(op, "SoftmaxCrossEntropyLoss"))
		return op_sce(c, i);
	if (!strcmp(op, "ReduceMean"))
		return op_reduce_mean(c, i);
	if (!strcmp(op, "Slice"))
		return op_slice(c, i);
	if (!strcmp(op, "Concat"))
		return op_concat(c, i);
	if (!strcmp(op, "Erf") || !strcmp(op, "Sqrt") || !strcmp(op, "Reciprocal") ||
	    !strcmp(op, "Neg"))
		return op_pending(c, i, 1);
	if (!strcmp(op, "Pow"))
		return op_pending(c, i, 2);
	if (!strcmp(op, "Where"))
		return op_where(c, i);
	return wsecc_refuse(c->g, i, WSECC_WHY_OP, "no kernel for %s", op);
}
