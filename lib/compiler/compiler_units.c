// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph's kernels cut into units: a pipeline stage each, placed on its
 * own rectangle, and what weight streaming streams at a time
 * (Documentation/compiler.rst, "Graph programs").
 *
 * 1. Segments: the graph is cut wherever exactly one activation is live
 *    (computed before and read after): a convolution's output, the
 *    residual stream between two halves of a transformer block.
 * 2. Units: a segment with a weight op (a convolution, Gemm or MatMul by a
 *    parameter, an embedding's Gather) starts a unit, unless the unit
 *    before comes from the same module: PyTorch's exporter names each
 *    node after the module it belongs to ("/blocks/blocks.0/attn/qkv/
 *    MatMul"), and two segments whose nodes share a module path
 *    ("/blocks/blocks.0") belong to one block. A segment without weights
 *    (an activation, pooling, a flatten, a final LayerNorm) joins the unit
 *    before it.
 * 3. A parameter read in two units (tied weights) joins them and everything
 *    between, so every parameter streams with the one unit that uses it.
 * 4. A graph of more units than a program holds (WSECC_MAX_LAYERS: GPT-3
 *    175B's 96 blocks and its embedding and head) has runs of consecutive
 *    units merged, as few units to a run as makes them fit, the same number
 *    in each run but the last.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler_graph_internal.h"

struct node_info {
	enum engine_op op;
	struct engine_node_attrs a;
	size_t n_in, n_out;
	int in[ENGINE_GRAPH_MAX_IO], out[ENGINE_GRAPH_MAX_IO];
};

static void get_node(const struct engine_graph *eg, size_t i, struct node_info *n)
{
	engine_graph_node(eg, i, &n->op, &n->a, &n->n_in, n->in, &n->n_out, n->out);
}

static bool is_param(const struct engine_graph *eg, int v)
{
	return v >= 0 && engine_graph_kind(eg, v) == ENGINE_VAL_PARAM;
}

/* A node that multiplies by, or looks up in, a parameter. */
static bool weight_op(const struct engine_graph *eg, const struct node_info *n)
{
	switch (n->op) {
	case ENGINE_OP_CONV2D:
	case ENGINE_OP_GEMM:
	case ENGINE_OP_MATMUL:
		return n->n_in > 1 && is_param(eg, n->in[1]);
	case ENGINE_OP_GATHER:
		return is_param(eg, n->in[0]);
	default:
		return false;
	}
}

/* Length of the module path of @name: up to its last '/'. */
static size_t dir_len(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? (size_t)(slash - name) : 0;
}

/* The longest module path (whole components) @a and @b share. */
static size_t common(const char *a, size_t la, const char *b, size_t lb)
{
	size_t n = 0;

	while (n < la && n < lb && a[n] == b[n])
		n++;
	if ((n == la || a[n] == '/') && (n == lb || b[n] == '/'))
		return n;
	while (n && a[n] != '/')
		n--;
	return n;
}

struct seg {
	size_t first, end;
	bool weighted;
	const char *scope;
	size_t scope_len;
};

int wsecc_units(const struct engine_graph *eg, const char *const *names,
		struct wsecc_units *u, const char *file, struct wsecc_error *err)
{
	size_t nn = engine_graph_nodes(eg), nv = engine_graph_values(eg), ns = 0;
	int *producer = malloc(nv * sizeof(int)), *last = malloc(nv * sizeof(int));
	struct seg *seg = calloc(nn, sizeof(*seg));
	/* The units before step 4, as many as there are segments at most. */
	size_t *useg = malloc((nn ? nn : 1) * sizeof(*useg));
	bool *uweighted = malloc((nn ? nn : 1) * sizeof(*uweighted));
	uint32_t nu = 0, per;
	int ret = -1;

	if (!producer || !last || !seg || !useg || !uweighted) {
		wsecc_fail(err, file, 0, 0, "out of memory");
		goto out;
	}
	for (size_t v = 0; v < nv; v++)
		producer[v] = last[v] = -1;
	for (size_t i = 0; i < nn; i++) {
		struct node_info n;

		get_node(eg, i, &n);
		for (size_t k = 0; k < n.n_in; k++)
			if (n.in[k] >= 0)
				last[n.in[k]] = (int)i;
		for (size_t k = 0; k < n.n_out; k++)
			producer[n.out[k]] = (int)i;
	}
	/* 1. Segments: cut where one activation is live. */
	for (size_t i = 0; i < nn; i++) {
		size_t live = 0;
		struct node_info n;

		for (size_t v = 0; i && v < nv; v++)
			if (producer[v] >= 0 && producer[v] < (int)i && last[v] >= (int)i)
				live++;
		if (!i || live == 1) {
			seg[ns].first = i;
			seg[ns].scope = names[i];
			seg[ns].scope_len = dir_len(names[i]);
			ns++;
		}
		seg[ns - 1].end = i + 1;
		get_node(eg, i, &n);
		seg[ns - 1].weighted |= weight_op(eg, &n);
		seg[ns - 1].scope_len = common(seg[ns - 1].scope, seg[ns - 1].scope_len, names[i],
					       dir_len(names[i]));
	}
	/* 2. Units from segments. */
	for (size_t s = 0; s < ns; s++) {
		struct seg *cur = nu ? &seg[useg[nu - 1]] : NULL;
		bool join = cur && (!seg[s].weighted || !uweighted[nu - 1] ||
				    (cur->scope_len && cur->scope_len == seg[s].scope_len &&
				     !memcmp(cur->scope, seg[s].scope, cur->scope_len)));

		if (!join) {
			useg[nu] = s;
			uweighted[nu] = false;
			nu++;
		}
		/* A unit takes the module path of its first segment with weights. */
		if (seg[s].weighted && !uweighted[nu - 1])
			useg[nu - 1] = s;
		uweighted[nu - 1] |= seg[s].weighted;
		for (size_t i = seg[s].first; i < seg[s].end; i++)
			u->unit[i] = nu - 1;
	}
	/* 3. A parameter read in several units joins them. */
	for (bool again = true; again;) {
		again = false;
		for (size_t v = 0; v < nv && !again; v++) {
			uint32_t lo = UINT32_MAX, hi = 0;

			if (!is_param(eg, (int)v))
				continue;
			for (size_t i = 0; i < nn; i++) {
				struct node_info n;

				get_node(eg, i, &n);
				for (size_t k = 0; k < n.n_in; k++)
					if (n.in[k] == (int)v) {
						lo = u->unit[i] < lo ? u->unit[i] : lo;
						hi = u->unit[i] > hi ? u->unit[i] : hi;
					}
			}
			if (lo >= hi)
				continue;
			for (size_t i = 0; i < nn; i++)
				if (u->unit[i] > lo)
					u->unit[i] = u->unit[i] <= hi ? lo : u->unit[i] - (hi - lo);
			for (uint32_t k = lo; k <= hi; k++)
				uweighted[lo] |= uweighted[k];
			memmove(&useg[lo + 1], &useg[hi + 1], (nu - hi - 1) * sizeof(useg[0]));
			memmove(&uweighted[lo + 1], &uweighted[hi + 1], (nu - hi - 1) * sizeof(uweighted[0]));
			nu -= hi - lo;
			again = true;
		}
	}
	/* 4. Runs of @per units where there are too many. */
	per = (nu + WSECC_MAX_LAYERS - 1) / WSECC_MAX_LAYERS;
	u->n = (nu + per - 1) / per;
	for (size_t i = 0; i < nn; i++)
		u->unit[i] /= per;
	for (uint32_t k = 0; k < u->n; k++) {
		u->seg[k] = useg[k * per];
		u->weighted[k] = false;
		for (uint32_t j = k * per; j < nu && j < (k + 1) * per; j++)
			u->weighted[k] |= uweighted[j];
	}
	for (uint32_t k = 0; k < u->n; k++) {
		const struct seg *s = &seg[u->seg[k]];
		uint32_t more = (k + 1) * per <= nu ? per - 1 : nu - k * per - 1;
		const char *p = s->scope, *slash = NULL;

		/* The last component of the module path, or where it starts. */
		for (size_t i = 0; i < s->scope_len; i++)
			if (p[i] == '/')
				slash = p + i;
		if (slash && (size_t)(slash - p) + 1 < s->scope_len)
			snprintf(u->name[k], sizeof(u->name[k]), "%.*s",
				 (int)(s->scope_len - (size_t)(slash - p) - 1), slash + 1);
		else
			snprintf(u->name[k], sizeof(u->name[k]), "%s", names[s->first]);
		/* A run says how many units follow its first: "blocks.1 +1". */
		if (more) {
			size_t at = strnlen(u->name[k], sizeof(u->name[k]) - 8);

			snprintf(u->name[k] + at, sizeof(u->name[k]) - at, " +%u", more);
		}
	}
	ret = 0;
out:
	free(producer);
	free(last);
	free(seg);
	free(useg);
	free(uweighted);
	return ret;
}
