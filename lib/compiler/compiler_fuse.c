// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pattern fusion: exporters spell some ops as several primitive nodes.
 * torch.onnx.export (opset < 20) writes GELU as x * 0.5 * (1 + erf(x /
 * sqrt 2)) and causal self-attention as reshapes and transposes around
 * MatMul, a scale, a Where over a constant triangular mask (or BERT's
 * additive key padding mask, computed from an input), Softmax and a
 * second MatMul; LLaMA's RMSNorm as Pow, ReduceMean, Add, Sqrt, Div and
 * Mul, SiLU as Sigmoid times its input, and the rotary embedding of q and
 * k as Slices, Neg, Concat, Muls by cos and sin tables and an Add. These
 * are recognised and replaced by one kernel each (the rotary embedding by
 * its own, beside the attention's): the last node of the pattern becomes
 * the kernel, the others are marked fused into it. Every intermediate
 * tensor must feed only the next node of the pattern, so nothing else
 * observes what fusion removes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_graph_internal.h"

static int producer(const struct wsecc_graph *g, int t)
{
	return t >= 0 ? g->tensors[t].producer : -1;
}

/* The only node reading tensor @t (which is no graph output), or -1. */
static int sole_consumer(const struct wsecc_graph *g, int t)
{
	int found = -1;

	if (t < 0)
		return -1;
	for (size_t i = 0; i < g->n_outputs; i++)
		if (g->outputs[i] == t)
			return -1;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state == WSECC_NODE_FOLDED)
			continue;
		for (size_t k = 0; k < n->n_in; k++)
			if (n->in[k] == t) {
				if (found >= 0)
					return -1;
				found = (int)i;
			}
	}
	return found;
}

static bool is_op(const struct wsecc_graph *g, int n, const char *op)
{
	return n >= 0 && strcmp(g->nodes[n].op_type, op) == 0 &&
	       (g->nodes[n].state == WSECC_NODE_KERNEL || g->nodes[n].state == WSECC_NODE_PENDING);
}

static bool const_scalar(const struct wsecc_graph *g, int t, double *v)
{
	const struct wsecc_tensor *x;

	if (t < 0)
		return false;
	x = &g->tensors[t];
	if (x->kind != WSECC_T_CONST || !x->data || x->dtype != WSECC_DT_F32 ||
	    wsecc_tensor_numel(x) != 1)
		return false;
	*v = *(const float *)x->data;
	return true;
}

/* For a two-input node: the input other than @t, or -2 if @t is not one. */
static int other_input(const struct wsecc_graph *g, int n, int t)
{
	const struct wsecc_node *nd = &g->nodes[n];

	if (nd->n_in != 2)
		return -2;
	if (nd->in[0] == t)
		return nd->in[1];
	if (nd->in[1] == t)
		return nd->in[0];
	return -2;
}

/* A two-input node with a scalar constant operand near @want: the other one, or -1. */
static int with_scalar(const struct wsecc_graph *g, int n, double want, double tol)
{
	const struct wsecc_node *nd = &g->nodes[n];
	double v;

	if (nd->n_in != 2)
		return -1;
	for (int k = 0; k < 2; k++)
		if (const_scalar(g, nd->in[k], &v) && fabs(v - want) <= tol)
			return nd->in[1 - k];
	return -1;
}

static void fuse_into(struct wsecc_graph *g, int n, int into)
{
	g->nodes[n].state = WSECC_NODE_FUSED;
	g->nodes[n].fused_into = into;
}

/* Makes node @n a kernel with inputs @in (its out[0] stays). */
static bool become(struct wsecc_graph *g, int n, const int *in, size_t n_in, enum engine_op op,
		   const char *kernel)
{
	struct wsecc_node *nd = &g->nodes[n];
	int *arr = realloc(nd->in, n_in * sizeof(*arr));

	if (!arr)
		return false;
	memcpy(arr, in, n_in * sizeof(*arr));
	nd->in = arr;
	nd->n_in = n_in;
	nd->state = WSECC_NODE_KERNEL;
	nd->op = op;
	nd->kernel = kernel;
	return true;
}

/* x * 0.5 * (1 + erf(x / sqrt 2)), in torch's order: Div, Erf, Add, Mul, Mul. */
static void fuse_gelu_erf(struct wsecc_graph *g, int erf)
{
	int div = producer(g, g->nodes[erf].in[0]), add, m1, m2, x;

	if (!is_op(g, div, "Div") && !is_op(g, div, "Mul"))
		return;
	x = with_scalar(g, div, is_op(g, div, "Div") ? M_SQRT2 : M_SQRT1_2, 1e-4);
	if (x < 0 || g->nodes[div].in[0] != x || sole_consumer(g, g->nodes[div].out[0]) != erf)
		return;
	add = sole_consumer(g, g->nodes[erf].out[0]);
	if (!is_op(g, add, "Add") || with_scalar(g, add, 1.0, 0.0) != g->nodes[erf].out[0])
		return;
	m1 = sole_consumer(g, g->nodes[add].out[0]);
	if (!is_op(g, m1, "Mul") || other_input(g, m1, g->nodes[add].out[0]) != x)
		return;
	m2 = sole_consumer(g, g->nodes[m1].out[0]);
	if (!is_op(g, m2, "Mul") || with_scalar(g, m2, 0.5, 0.0) != g->nodes[m1].out[0])
		return;
	if (!become(g, m2, &x, 1, ENGINE_OP_ACT, "gelu_f32"))
		return;
	g->nodes[m2].attrs.act = ENGINE_ACT_GELU;
	fuse_into(g, div, m2);
	fuse_into(g, erf, m2);
	fuse_into(g, add, m2);
	fuse_into(g, m1, m2);
}

/*
 * x * sigmoid(x), as F.silu exports (opset < 20): Sigmoid, then Mul by its
 * own input. The Mul becomes SiLU. SwiGLU's product with the up
 * projection stays an element-wise Mul of two activations.
 */
static void fuse_silu(struct wsecc_graph *g, int sig)
{
	int x = g->nodes[sig].in[0], mul = sole_consumer(g, g->nodes[sig].out[0]);

	if (!is_op(g, mul, "Mul") || other_input(g, mul, g->nodes[sig].out[0]) != x ||
	    !become(g, mul, &x, 1, ENGINE_OP_ACT, "silu_f32"))
		return;
	g->nodes[mul].attrs.act = ENGINE_ACT_SILU;
	fuse_into(g, sig, mul);
}

/* The node after @n on the pattern's path: the sole reader of its output if that is @op. */
static int next_op(const struct wsecc_graph *g, int n, const char *op)
{
	int k = sole_consumer(g, g->nodes[n].out[0]);

	return is_op(g, k, op) ? k : -1;
}

/*
 * LLaMA's RMSNorm as torch.onnx.export writes it: Pow(x, 2), ReduceMean
 * over the last axis (kept), Add eps, Sqrt, then 1 / that (Div or
 * Reciprocal) times x, or x divided by it, and Mul by the weight [C].
 * The weight's Mul becomes one RMSNorm kernel of x and the weight.
 */
static void fuse_rmsnorm(struct wsecc_graph *g, int pw)
{
	const struct wsecc_tensor *xs, *ws;
	int x = g->nodes[pw].in[0], rm, add, sq, inv, m1, m2, w, nodes[6];
	double two, one, eps;
	size_t nn = 0;

	if (g->nodes[pw].n_in != 2 || !const_scalar(g, g->nodes[pw].in[1], &two) || two != 2.0)
		return;
	xs = &g->tensors[x];
	rm = next_op(g, pw, "ReduceMean");
	if (rm < 0 || xs->rank < 1 || g->nodes[rm].attrs.axis != xs->rank - 1 ||
	    g->tensors[g->nodes[rm].out[0]].rank != xs->rank)
		return;
	add = next_op(g, rm, "Add");
	if (add < 0 || other_input(g, add, g->nodes[rm].out[0]) < 0 ||
	    !const_scalar(g, other_input(g, add, g->nodes[rm].out[0]), &eps) || !(eps > 0.0))
		return;
	sq = next_op(g, add, "Sqrt");
	if (sq < 0)
		return;
	nodes[nn++] = pw;
	nodes[nn++] = rm;
	nodes[nn++] = add;
	nodes[nn++] = sq;
	/* x / sqrt(...), or x * (1 / sqrt(...)) with Div or Reciprocal. */
	m1 = sole_consumer(g, g->nodes[sq].out[0]);
	if (is_op(g, m1, "Div") && g->nodes[m1].in[0] == x && g->nodes[m1].in[1] == g->nodes[sq].out[0]) {
		inv = -1;
	} else if (is_op(g, m1, "Reciprocal") ||
		   (is_op(g, m1, "Div") && g->nodes[m1].in[1] == g->nodes[sq].out[0] &&
		    const_scalar(g, g->nodes[m1].in[0], &one) && one == 1.0)) {
		inv = m1;
		nodes[nn++] = inv;
		m1 = next_op(g, inv, "Mul");
		if (m1 < 0 || other_input(g, m1, g->nodes[inv].out[0]) != x)
			return;
	} else {
		return;
	}
	nodes[nn++] = m1;
	m2 = next_op(g, m1, "Mul");
	if (m2 < 0)
		return;
	w = other_input(g, m2, g->nodes[m1].out[0]);
	if (w < 0)
		return;
	ws = &g->tensors[w];
	if (ws->rank != 1 || ws->dims[0] != xs->dims[xs->rank - 1] ||
	    g->tensors[g->nodes[m2].out[0]].rank != xs->rank)
		return;
	const int in[2] = { x, w };

	if (!become(g, m2, in, 2, ENGINE_OP_RMSNORM, "rmsnorm_f32"))
		return;
	g->nodes[m2].attrs.axis = xs->rank - 1;
	g->nodes[m2].attrs.epsilon = (float)eps;
	for (size_t i = 0; i < nn; i++)
		fuse_into(g, nodes[i], m2);
}

/* --- attention --------------------------------------------------------------------- */

static bool perm_is(const struct wsecc_graph *g, int n, size_t a, size_t b, size_t c, size_t d)
{
	const size_t *p = g->nodes[n].attrs.perm;

	return is_op(g, n, "Transpose") && g->tensors[g->nodes[n].out[0]].rank == 4 && p[0] == a &&
	       p[1] == b && p[2] == c && p[3] == d;
}

/*
 * Follows Transpose(perm) <- Reshape <- x[B, T, C] back from tensor @t:
 * the source x, or -1. Sets *@heads, adds the nodes to @nodes.
 */
static int heads_source(const struct wsecc_graph *g, int tr, int *heads, int *nodes, size_t *nn)
{
	int rs, x;
	const struct wsecc_tensor *xs, *rsout;

	if (tr < 0)
		return -1;
	rs = producer(g, g->nodes[tr].in[0]);
	if (!is_op(g, rs, "Reshape") || sole_consumer(g, g->nodes[rs].out[0]) != tr)
		return -1;
	x = g->nodes[rs].in[0];
	xs = &g->tensors[x];
	rsout = &g->tensors[g->nodes[rs].out[0]];
	if (xs->rank != 3 || rsout->rank != 4 || rsout->dims[0] != xs->dims[0] ||
	    rsout->dims[1] != xs->dims[1] || rsout->dims[2] * rsout->dims[3] != xs->dims[2])
		return -1;
	*heads = (int)rsout->dims[2];
	nodes[(*nn)++] = tr;
	nodes[(*nn)++] = rs;
	return x;
}

static int heads_view(const struct wsecc_graph *g, int t, int *heads, int *nodes, size_t *nn)
{
	if (sole_consumer(g, t) < 0)
		return -1;
	return heads_source(g, producer(g, t), heads, nodes, nn);
}

/* How many nodes read tensor @t (which is no graph output), or -1. */
static int readers(const struct wsecc_graph *g, int t)
{
	int found = 0;

	for (size_t i = 0; i < g->n_outputs; i++)
		if (g->outputs[i] == t)
			return -1;
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; g->nodes[i].state != WSECC_NODE_FOLDED && k < g->nodes[i].n_in; k++)
			found += g->nodes[i].in[k] == t;
	return found;
}

/* A Slice of @xt's last axis from @start, feeding only @into; its output tensor. */
static bool half_of(const struct wsecc_graph *g, int sl, int xt, int64_t start, int64_t half)
{
	const struct wsecc_tensor *st, *o;
	int64_t s, len = g->tensors[xt].dims[3];

	if (!is_op(g, sl, "Slice") || g->nodes[sl].in[0] != xt || g->nodes[sl].attrs.axis != 3)
		return false;
	st = &g->tensors[g->nodes[sl].in[1]];
	o = &g->tensors[g->nodes[sl].out[0]];
	if (st->dtype != WSECC_DT_I64 || !st->data || wsecc_tensor_numel(st) != 1 || o->dims[3] != half)
		return false;
	s = *(const int64_t *)st->data;
	s = s < 0 ? s + len : s;
	return s == start;
}

/* A constant [..., T, D] table: the rotary embedding's cos or sin. */
static bool rotary_table(const struct wsecc_graph *g, int t, int64_t seq, int64_t dim)
{
	const struct wsecc_tensor *x = t >= 0 ? &g->tensors[t] : NULL;

	return x && x->kind == WSECC_T_CONST && x->data && x->dtype == WSECC_DT_F32 &&
	       x->rank >= 2 && x->dims[x->rank - 1] == dim && x->dims[x->rank - 2] == seq &&
	       wsecc_tensor_numel(x) == (uint64_t)(seq * dim);
}

/* A two-input Mul's operands, the constant one in *@tab (either order); false if neither is. */
static bool mul_by_const(const struct wsecc_graph *g, int m, int *act, int *tab)
{
	const struct wsecc_node *n = &g->nodes[m];

	if (!is_op(g, m, "Mul") || n->n_in != 2)
		return false;
	for (int k = 0; k < 2; k++)
		if (g->tensors[n->in[k]].kind == WSECC_T_CONST) {
			*tab = n->in[k];
			*act = n->in[1 - k];
			return g->tensors[*act].kind != WSECC_T_CONST;
		}
	return false;
}

/* A rotary embedding the attention takes in: the Add node, its tables, its pattern's nodes. */
struct rotary {
	int add, x, cos, sin, heads, nodes[10];
	size_t nn;
};

/*
 * LLaMA's rotary embedding of one of attention's heads views (the
 * reference model's rotate()): xt * cos + Concat(-xt[..., D/2:],
 * xt[..., :D/2]) * sin, xt = Transpose(Reshape(x)) [B, H, T, D], the
 * tables constants. Fills @r with x [B, T, C]; nothing is changed yet.
 */
static bool rotary_view(const struct wsecc_graph *g, int t, struct rotary *r)
{
	int add = producer(g, t), m1, m2, cat, neg, xt, tab1, tab2, hi, lo;
	const struct wsecc_tensor *xs;

	r->nn = 0;
	if (!is_op(g, add, "Add") || g->nodes[add].n_in != 2)
		return false;
	m1 = producer(g, g->nodes[add].in[0]);
	m2 = producer(g, g->nodes[add].in[1]);
	/* m1 = xt * cos, m2 = Concat(...) * sin, in either order. */
	if (!mul_by_const(g, m1, &xt, &tab1) || !mul_by_const(g, m2, &cat, &tab2))
		return false;
	if (is_op(g, producer(g, xt), "Concat")) {
		int sw = m1;

		m1 = m2;
		m2 = sw;
		sw = xt;
		xt = cat;
		cat = sw;
		sw = tab1;
		tab1 = tab2;
		tab2 = sw;
	}
	cat = producer(g, cat);
	if (sole_consumer(g, g->nodes[m1].out[0]) != add || sole_consumer(g, g->nodes[m2].out[0]) != add)
		return false;
	xs = &g->tensors[xt];
	if (xs->rank != 4 || xs->dims[3] % 2 || !is_op(g, cat, "Concat") ||
	    g->nodes[cat].n_in != 2 || g->nodes[cat].attrs.axis != 3 ||
	    sole_consumer(g, g->nodes[cat].out[0]) != m2 ||
	    !rotary_table(g, tab1, xs->dims[2], xs->dims[3]) ||
	    !rotary_table(g, tab2, xs->dims[2], xs->dims[3]))
		return false;
	neg = producer(g, g->nodes[cat].in[0]);
	lo = producer(g, g->nodes[cat].in[1]);
	if (!is_op(g, neg, "Neg") || sole_consumer(g, g->nodes[neg].out[0]) != cat ||
	    sole_consumer(g, g->nodes[cat].in[1]) != cat)
		return false;
	hi = producer(g, g->nodes[neg].in[0]);
	if (sole_consumer(g, g->nodes[neg].in[0]) != neg ||
	    !half_of(g, hi, xt, xs->dims[3] / 2, xs->dims[3] / 2) ||
	    !half_of(g, lo, xt, 0, xs->dims[3] / 2) || readers(g, xt) != 3 ||
	    !perm_is(g, producer(g, xt), 0, 2, 1, 3))
		return false;
	r->nodes[r->nn++] = m1;
	r->nodes[r->nn++] = m2;
	r->nodes[r->nn++] = cat;
	r->nodes[r->nn++] = neg;
	r->nodes[r->nn++] = hi;
	r->nodes[r->nn++] = lo;
	r->x = heads_source(g, producer(g, xt), &r->heads, r->nodes, &r->nn);
	r->add = add;
	r->cos = tab1;
	r->sin = tab2;
	return r->x >= 0;
}

/* Makes the rotary embedding's Add one kernel of x [B, T, C]: attention reads its output. */
static int apply_rotary(struct wsecc_graph *g, const struct rotary *r)
{
	struct wsecc_tensor *y = &g->tensors[g->nodes[r->add].out[0]];
	const int in[3] = { r->x, r->cos, r->sin };

	if (!become(g, r->add, in, 3, ENGINE_OP_ROTARY, "rotary_f32"))
		return -1;
	g->nodes[r->add].attrs.heads = (size_t)r->heads;
	y->rank = 3;
	memcpy(y->dims, g->tensors[r->x].dims, 3 * sizeof(int64_t));
	for (size_t i = 0; i < r->nn; i++)
		fuse_into(g, r->nodes[i], r->add);
	return g->nodes[r->add].out[0];
}

/* Is the mask (true = masked) exactly "key after query" over its last two axes? */
static bool causal_bool(const struct wsecc_tensor *m, int64_t t)
{
	if (m->dtype != WSECC_DT_BOOL || !m->data || m->rank < 2 || m->dims[m->rank - 1] != t ||
	    m->dims[m->rank - 2] != t || wsecc_tensor_numel(m) != (uint64_t)(t * t))
		return false;
	for (int64_t i = 0; i < t; i++)
		for (int64_t j = 0; j < t; j++)
			if (((const uint8_t *)m->data)[i * t + j] != (j > i))
				return false;
	return true;
}

/* An additive float mask: very negative where the key comes after the query, 0 elsewhere. */
static bool causal_add(const struct wsecc_tensor *m, int64_t t)
{
	if (m->dtype != WSECC_DT_F32 || !m->data || m->kind != WSECC_T_CONST || m->rank < 2 ||
	    m->dims[m->rank - 1] != t || m->dims[m->rank - 2] != t ||
	    wsecc_tensor_numel(m) != (uint64_t)(t * t))
		return false;
	for (int64_t i = 0; i < t; i++)
		for (int64_t j = 0; j < t; j++) {
			float v = ((const float *)m->data)[i * t + j];

			if (j > i ? !(v <= -1e4f) : v != 0.0f)
				return false;
		}
	return true;
}

/*
 * A key padding mask made additive (BERT's (1 - mask[:, None, None, :]) *
 * -10000, computed from a graph input): a float [batch, 1, 1, T] that is
 * not a constant, added to every head's and query's scores.
 */
static bool key_mask_add(const struct wsecc_tensor *m, const struct wsecc_tensor *scores)
{
	return (m->kind == WSECC_T_INPUT || m->kind == WSECC_T_VALUE) && m->dtype == WSECC_DT_F32 &&
	       m->rank == 4 && m->dims[0] == scores->dims[0] && m->dims[1] == 1 && m->dims[2] == 1 &&
	       m->dims[3] == scores->dims[3];
}

static void fuse_attention(struct wsecc_graph *g, int sm)
{
	int nodes[16], q, k, v, hq, hk, hv, mm1, scores, cur, pv, tr, rs, kt, key_mask = -1;
	struct rotary rq, rk;
	size_t nn = 0;
	bool causal = false;
	double scale = 1.0, c;
	float ratio = 0.0f;
	const struct wsecc_tensor *so = &g->tensors[g->nodes[sm].out[0]];
	int64_t t;

	if (so->rank != 4 || g->nodes[sm].attrs.axis != 3)
		return;
	t = so->dims[3];
	if (so->dims[2] != t)
		return;
	/* Backwards from the softmax: mask, scale, Q K^T. */
	scores = g->nodes[sm].in[0];
	cur = producer(g, scores);
	if (sole_consumer(g, scores) != sm)
		return;
	if (is_op(g, cur, "Where")) {
		const struct wsecc_node *w = &g->nodes[cur];
		double fill;

		if (w->n_in != 3 || !causal_bool(&g->tensors[w->in[0]], t) ||
		    !const_scalar(g, w->in[1], &fill) || !(fill <= -1e4))
			return;
		causal = true;
		nodes[nn++] = cur;
		scores = w->in[2];
		cur = producer(g, scores);
	} else if (is_op(g, cur, "Add")) {
		const struct wsecc_node *a = &g->nodes[cur];

		for (int s = 0; s < 2 && !causal; s++)
			if (causal_add(&g->tensors[a->in[s]], t)) {
				causal = true;
				scores = a->in[1 - s];
			}
		for (int s = 0; s < 2 && !causal && key_mask < 0; s++)
			if (key_mask_add(&g->tensors[a->in[s]], so)) {
				key_mask = a->in[s];
				scores = a->in[1 - s];
			}
		if (!causal && key_mask < 0)
			return;
		nodes[nn++] = cur;
		cur = producer(g, scores);
	}
	if (sole_consumer(g, scores) < 0)
		return;
	if (is_op(g, cur, "Mul") || is_op(g, cur, "Div")) {
		const struct wsecc_node *s = &g->nodes[cur];

		if (!const_scalar(g, s->in[1], &c) || c == 0.0)
			return;
		scale = is_op(g, cur, "Mul") ? c : 1.0 / c;
		nodes[nn++] = cur;
		scores = s->in[0];
		cur = producer(g, scores);
		if (sole_consumer(g, scores) < 0)
			return;
	}
	if (!is_op(g, cur, "MatMul"))
		return;
	mm1 = cur;
	nodes[nn++] = mm1;
	/* Q: [B, H, T, D] from q [B, T, C], or the rotary embedding of that. */
	if (sole_consumer(g, g->nodes[mm1].in[0]) == mm1 &&
	    rotary_view(g, g->nodes[mm1].in[0], &rq)) {
		q = rq.x;
		hq = rq.heads;
	} else if (perm_is(g, producer(g, g->nodes[mm1].in[0]), 0, 2, 1, 3)) {
		rq.add = -1;
		q = heads_view(g, g->nodes[mm1].in[0], &hq, nodes, &nn);
	} else {
		return;
	}
	/* K^T: [B, H, D, T], one transpose or two (the second after a rotary embedding). */
	kt = producer(g, g->nodes[mm1].in[1]);
	rk.add = -1;
	if (perm_is(g, kt, 0, 2, 3, 1)) {
		k = heads_view(g, g->nodes[mm1].in[1], &hk, nodes, &nn);
	} else if (perm_is(g, kt, 0, 1, 3, 2) && sole_consumer(g, g->nodes[mm1].in[1]) == mm1 &&
		   perm_is(g, producer(g, g->nodes[kt].in[0]), 0, 2, 1, 3)) {
		nodes[nn++] = kt;
		k = heads_view(g, g->nodes[kt].in[0], &hk, nodes, &nn);
	} else if (perm_is(g, kt, 0, 1, 3, 2) && sole_consumer(g, g->nodes[mm1].in[1]) == mm1 &&
		   sole_consumer(g, g->nodes[kt].in[0]) == kt &&
		   rotary_view(g, g->nodes[kt].in[0], &rk)) {
		nodes[nn++] = kt;
		k = rk.x;
		hk = rk.heads;
	} else {
		return;
	}
	if (rq.add >= 0 && rk.add >= 0 && rq.add == rk.add)
		return;
	/* Forwards from the softmax: P V, back to [B, T, C]. */
	pv = sole_consumer(g, g->nodes[sm].out[0]);
	/* Attention dropout (nn.Dropout on the probabilities), its mask unread. */
	if (is_op(g, pv, "Dropout") &&
	    (g->nodes[pv].n_out < 2 || g->nodes[pv].out[1] < 0 ||
	     !wsecc_tensor_uses(g, g->nodes[pv].out[1]))) {
		ratio = g->nodes[pv].attrs.ratio;
		nodes[nn++] = pv;
		pv = sole_consumer(g, g->nodes[pv].out[0]);
	}
	if (!is_op(g, pv, "MatMul") || g->nodes[pv].in[0] == g->nodes[pv].in[1] ||
	    !perm_is(g, producer(g, g->nodes[pv].in[1]), 0, 2, 1, 3))
		return;
	v = heads_view(g, g->nodes[pv].in[1], &hv, nodes, &nn);
	tr = sole_consumer(g, g->nodes[pv].out[0]);
	if (!perm_is(g, tr, 0, 2, 1, 3))
		return;
	rs = sole_consumer(g, g->nodes[tr].out[0]);
	if (!is_op(g, rs, "Reshape") || q < 0 || k < 0 || v < 0 || hq != hk || hq != hv)
		return;
	const struct wsecc_tensor *y = &g->tensors[g->nodes[rs].out[0]], *qs = &g->tensors[q];

	if (y->rank != 3 || memcmp(y->dims, qs->dims, 3 * sizeof(int64_t)) ||
	    memcmp(g->tensors[k].dims, qs->dims, 3 * sizeof(int64_t)) ||
	    memcmp(g->tensors[v].dims, qs->dims, 3 * sizeof(int64_t)) || g->tensors[k].rank != 3 ||
	    g->tensors[v].rank != 3 || qs->dims[1] != t)
		return;
	nodes[nn++] = sm;
	nodes[nn++] = pv;
	nodes[nn++] = tr;
	if (rq.add >= 0 && (q = apply_rotary(g, &rq)) < 0)
		return;
	if (rk.add >= 0 && (k = apply_rotary(g, &rk)) < 0)
		return;
	const int in[4] = { q, k, v, key_mask };

	if (!become(g, rs, in, key_mask >= 0 ? 4 : 3, ENGINE_OP_ATTENTION, "attention_f32"))
		return;
	g->nodes[rs].attrs.heads = (size_t)hq;
	g->nodes[rs].attrs.scale = (float)scale;
	g->nodes[rs].attrs.causal = causal;
	g->nodes[rs].attrs.ratio = ratio;
	for (size_t i = 0; i < nn; i++)
		fuse_into(g, nodes[i], rs);
}

/*
 * A zero Pad of an image's height and width before an AveragePool that
 * counts padding (PyTorch's nn.AvgPool2d with padding, count_include_pad)
 * or before a Conv: the same as the kernel's own zero padding, so the pads
 * are added to the kernel's. Not before MaxPool, whose padding never wins.
 */
static void fuse_pad(struct wsecc_graph *g, int pad)
{
	struct wsecc_node *p = &g->nodes[pad];
	int k = sole_consumer(g, p->out[0]);
	struct wsecc_node *n;

	if (k < 0 || g->nodes[k].state != WSECC_NODE_KERNEL || g->nodes[k].in[0] != p->out[0])
		return;
	n = &g->nodes[k];
	if (n->op == ENGINE_OP_AVGPOOL2D) {
		bool own_pads = n->attrs.pads[0] || n->attrs.pads[1] || n->attrs.pads[2] ||
				n->attrs.pads[3];

		/* ceil_mode's last window is judged against the unpadded input. */
		if (n->attrs.ceil_mode || (own_pads && !n->attrs.count_include_pad))
			return;
	} else if (n->op != ENGINE_OP_CONV2D) {
		return;
	}
	for (int a = 0; a < 4; a++) {
		size_t span = (n->attrs.kernel[a % 2] - 1) * n->attrs.dilation[a % 2] + 1;

		/* The engine's limit: no window that sees only padding. */
		if (n->attrs.pads[a] + p->attrs.pads[a] >= span)
			return;
	}
	for (int a = 0; a < 4; a++)
		n->attrs.pads[a] += p->attrs.pads[a];
	n->attrs.count_include_pad = true;
	n->in[0] = p->in[0];
	fuse_into(g, pad, k);
}

/*
 * Outputs nothing reads are not computed: Dropout's mask, the running
 * statistics BatchNormalization returns. BatchNormalization's saved mean
 * and variance (opset 13's training outputs 3 and 4) have no kernel: read,
 * they refuse the node.
 */
static void prune_outputs(struct wsecc_graph *g, int i)
{
	struct wsecc_node *n = &g->nodes[i];
	bool bn = n->op == ENGINE_OP_BATCHNORM;

	if (n->op != ENGINE_OP_DROPOUT && !bn)
		return;
	for (size_t k = 3; bn && k < n->n_out; k++) {
		if (n->out[k] >= 0 && wsecc_tensor_uses(g, n->out[k])) {
			wsecc_refuse(g, (size_t)i, WSECC_WHY_ATTR,
				     "output %zu ('%s', the saved statistics) is not supported", k,
				     g->tensors[n->out[k]].name);
			return;
		}
		n->out[k] = -1;
	}
	if (bn && n->n_out >= 3 && n->out[1] >= 0 && n->out[2] >= 0 &&
	    (wsecc_tensor_uses(g, n->out[1]) || wsecc_tensor_uses(g, n->out[2])))
		return;	/* both running statistics, as the kernel computes them */
	for (size_t k = 1; k < n->n_out; k++)
		if (n->out[k] >= 0 && !wsecc_tensor_uses(g, n->out[k]))
			n->out[k] = -1;
}

/* A Pad by nothing (a copy) feeding one kernel: that kernel reads the Pad's input. */
static void drop_empty_pad(struct wsecc_graph *g, int pad)
{
	struct wsecc_node *p = &g->nodes[pad];
	int k = sole_consumer(g, p->out[0]);

	if (k < 0 || g->nodes[k].state != WSECC_NODE_KERNEL)
		return;
	for (size_t j = 0; j < g->nodes[k].n_in; j++)
		if (g->nodes[k].in[j] == p->out[0])
			g->nodes[k].in[j] = p->in[0];
	fuse_into(g, pad, k);
}

void wsecc_fuse(struct wsecc_graph *g)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		if (g->nodes[i].state == WSECC_NODE_PENDING && !strcmp(g->nodes[i].op_type, "Pad"))
			fuse_pad(g, (int)i);
		else if (g->nodes[i].state == WSECC_NODE_KERNEL && !strcmp(g->nodes[i].op_type, "Pad"))
			drop_empty_pad(g, (int)i);
		else if (g->nodes[i].state == WSECC_NODE_KERNEL)
			prune_outputs(g, (int)i);
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		if (g->nodes[i].state == WSECC_NODE_PENDING && !strcmp(g->nodes[i].op_type, "Erf"))
			fuse_gelu_erf(g, (int)i);
		else if (g->nodes[i].state == WSECC_NODE_PENDING && !strcmp(g->nodes[i].op_type, "Pow"))
			fuse_rmsnorm(g, (int)i);
		else if (g->nodes[i].state == WSECC_NODE_KERNEL && g->nodes[i].op == ENGINE_OP_ACT &&
			 g->nodes[i].attrs.act == ENGINE_ACT_SIGMOID)
			fuse_silu(g, (int)i);
		else if (g->nodes[i].state == WSECC_NODE_KERNEL && g->nodes[i].op == ENGINE_OP_SOFTMAX)
			fuse_attention(g, (int)i);
	}
}
