// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tied weights: PyTorch's exporter writes a weight shared by two modules
 * (a GPT's token embedding and its output head) twice, once as the
 * parameter and once as a second initializer, often transposed by its
 * constant folding (onnx::MatMul_148). An initializer that is bit for bit
 * a copy or the transpose of a parameter is tied back to it: its readers
 * read the parameter, through a Transpose node for a transpose, whose
 * backward transposes the gradient. The engine sums the gradients of a
 * value read twice, so the one parameter gets both uses' gradient and one
 * optimizer update, as in PyTorch (Documentation/onnx-import.rst).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_onnx_internal.h"

/*
 * A weight worth comparing: fp32 data, not all one value (a LayerNorm's
 * ones or a zero bias equal each other without being tied).
 */
static bool is_weight(const struct wsecc_tensor *t)
{
	const uint32_t *x = t->data;
	uint64_t n;

	if (t->dtype != WSECC_DT_F32 || !x || !t->shape_known ||
	    !(t->kind == WSECC_T_PARAM || (t->kind == WSECC_T_CONST && t->initializer)))
		return false;
	n = wsecc_tensor_numel(t);
	for (uint64_t i = 1; i < n; i++)
		if (x[i] != x[0])
			return true;
	return false;
}

/* Is @b's data bit for bit @a's, or (both rank 2) @a's transpose? 1 copy, 2 transpose. */
static int same_weight(const struct wsecc_tensor *a, const struct wsecc_tensor *b)
{
	uint64_t n = wsecc_tensor_numel(a);
	const uint32_t *x = a->data, *y = b->data;

	if (n != wsecc_tensor_numel(b) || n < 2)
		return 0;
	if (a->rank == b->rank && !memcmp(a->dims, b->dims, a->rank * sizeof(a->dims[0])) &&
	    !memcmp(x, y, n * sizeof(float)))
		return 1;
	if (a->rank != 2 || b->rank != 2 || a->dims[0] != b->dims[1] || a->dims[1] != b->dims[0])
		return 0;
	for (int64_t i = 0; i < a->dims[0]; i++)
		for (int64_t j = 0; j < a->dims[1]; j++)
			if (x[i * a->dims[1] + j] != y[j * a->dims[0] + i])
				return 0;
	return 2;
}

/*
 * Does a node that runs, or runs inside a fused pattern, read tensor @t?
 * The first such node into *@first.
 */
static bool read_by_kernel(const struct wsecc_graph *g, int t, size_t *first)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state == WSECC_NODE_FOLDED || n->state == WSECC_NODE_REFUSED)
			continue;
		for (size_t k = 0; k < n->n_in; k++)
			if (n->in[k] == t) {
				*first = i;
				return true;
			}
	}
	return false;
}

/*
 * Moves the node just appended to index @at, keeping the order the
 * executor runs them in; node indices past @at (producers, fused_into, the
 * importer's protos) move up by one.
 */
static int move_last_node(struct octx *c, size_t at)
{
	struct wsecc_graph *g = c->g;
	size_t last = g->n_nodes - 1;
	struct wsecc_node moved = g->nodes[last];

	if (c->proto) {
		const Onnx__NodeProto **p = realloc(c->proto, g->n_nodes * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->proto = p;
		memmove(p + at + 1, p + at, (c->n_proto - at) * sizeof(*p));
		p[at] = NULL;
		c->n_proto++;
	}
	memmove(g->nodes + at + 1, g->nodes + at, (last - at) * sizeof(*g->nodes));
	g->nodes[at] = moved;
	for (size_t i = 0; i < g->n_nodes; i++)
		if (i != at && g->nodes[i].state == WSECC_NODE_FUSED && g->nodes[i].fused_into >= (int)at)
			g->nodes[i].fused_into++;
	for (size_t t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].producer >= (int)at && g->tensors[t].producer != (int)last)
			g->tensors[t].producer++;
	return 0;
}

/* @copy's readers read @param instead; @copy is left unread (freed with the unread constants). */
static void tie_copy(struct wsecc_graph *g, int param, int copy)
{
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i].n_in; k++)
			if (g->nodes[i].in[k] == copy)
				g->nodes[i].in[k] = param;
	g->tensors[copy].kind = WSECC_T_CONST;
	g->tensors[copy].from_initializer = false;
	g->tensors[copy].initializer = false;
}

/*
 * @copy becomes the output of a new Transpose of @param, before its first
 * reader: 1, or 0 if nothing that runs reads it, -ENOMEM.
 */
static int tie_transpose(struct octx *c, int param, int copy)
{
	struct wsecc_graph *g = c->g;
	struct wsecc_tensor *x;
	char name[160];
	size_t first;
	int n;

	if (!read_by_kernel(g, copy, &first))
		return 0;
	snprintf(name, sizeof(name), "tied/%.60s/Transpose", g->tensors[param].name);
	n = wsecc_graph_add_node(g, name, "Transpose", 1, 1);
	if (n < 0)
		return -ENOMEM;
	g->nodes[n].in[0] = param;
	g->nodes[n].out[0] = copy;
	g->nodes[n].attrs.perm[0] = 1;
	g->nodes[n].attrs.perm[1] = 0;
	wsecc_map(g, (size_t)n, ENGINE_OP_TRANSPOSE, "transpose_f32");
	if (move_last_node(c, first))
		return -ENOMEM;
	x = &g->tensors[copy];
	if (!x->data_mapped)
		free(x->data);
	x->data = NULL;
	x->kind = WSECC_T_VALUE;
	x->initializer = false;
	x->from_initializer = false;
	x->frozen = false;
	x->producer = (int)first;
	return 1;
}

/*
 * Which of two equal weights stays: a parameter over a constant copy, a
 * name of the PyTorch model over the exporter's "onnx::...", else the first.
 */
static bool keeps_first(const struct wsecc_tensor *a, const struct wsecc_tensor *b)
{
	bool a_onnx = !strncmp(a->name, "onnx::", 6), b_onnx = !strncmp(b->name, "onnx::", 6);

	if (a->kind != b->kind)
		return a->kind == WSECC_T_PARAM;
	if (a_onnx != b_onnx)
		return b_onnx;
	return true;
}

/*
 * Two parameters the model's wse.parameters both lists are two parameters
 * of the PyTorch model that happen to be equal (initialised alike), not
 * one weight written twice: they train apart, as in PyTorch.
 */
static bool may_tie(const struct wsecc_graph *g, const struct wsecc_tensor *a,
		    const struct wsecc_tensor *b)
{
	if (!is_weight(b) || a->frozen || b->frozen)
		return false;
	if (a->kind == WSECC_T_PARAM && b->kind == WSECC_T_PARAM)
		return !g->trainable_listed;
	return a->kind == WSECC_T_PARAM || b->kind == WSECC_T_PARAM;
}

int onnx_tie_weights(struct octx *c)
{
	struct wsecc_graph *g = c->g;

	for (size_t a = 0; a < g->n_tensors; a++) {
		/* Once @a is tied to an earlier tensor, it is no weight any more. */
		for (size_t b = a + 1; b < g->n_tensors && is_weight(&g->tensors[a]); b++) {
			struct wsecc_tensor *ta = &g->tensors[a], *tb = &g->tensors[b];
			const struct wsecc_tensor *keep, *copy;
			char sk[48], sc[48];
			int how;

			if (!may_tie(g, ta, tb))
				continue;
			how = same_weight(ta, tb);
			if (!how)
				continue;
			keep = keeps_first(ta, tb) ? ta : tb;
			copy = keep == ta ? tb : ta;
			onnx_shape_text(copy, sc, sizeof(sc));
			if (how == 1) {
				tie_copy(g, (int)(keep - g->tensors), (int)(copy - g->tensors));
			} else {
				int tied = tie_transpose(c, (int)(keep - g->tensors),
							 (int)(copy - g->tensors));

				if (tied < 0)
					return -ENOMEM;
				if (!tied)
					continue;	/* nothing computes with it */
			}
			if (onnx_note(g, "note: '%s' %s is bit for bit %s of parameter '%s' %s (a weight tied in PyTorch, written twice by the exporter): tied, so it trains as '%s'%s",
				      copy->name, sc,
				      how == 1 ? "a copy" : "the transpose", keep->name,
				      onnx_shape_text(keep, sk, sizeof(sk)), keep->name,
				      how == 1 ? "" : " through a Transpose"))
				return -ENOMEM;
		}
	}
	return 0;
}
