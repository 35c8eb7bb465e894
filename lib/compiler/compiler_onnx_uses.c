// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Folded constants nobody reads any more are freed as the import goes.
 * An exporter's shape arithmetic folds large intermediates: GPT's causal
 * mask is sliced, compared and selected per layer, 16 MB a step at a
 * sequence of 2048, which 96 layers would keep (6 GB) though each is read
 * once, by the next fold. Every tensor's readers are counted from the
 * model's nodes up front (names sorted, so each count is a binary search);
 * when the last reader has been imported and all of them folded, the
 * tensor's values go. What a kernel reads, and the graph's outputs, stay.
 * After fusion, the constants only fused nodes read (the masks, whose
 * meaning is now the attention's causal flag) go too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_onnx_internal.h"

struct onnx_uses {
	const char **names;	/* every node input and graph output, sorted */
	size_t n_names;
	uint32_t *left;		/* per tensor: readers not imported yet; UINT32_MAX unknown */
	bool *by_kernel;	/* per tensor: a reader that did not fold */
	size_t cap;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int onnx_uses_init(struct octx *c, const Onnx__GraphProto *gp)
{
	struct onnx_uses *u = calloc(1, sizeof(*u));
	size_t n = gp->n_output;

	c->uses = u;
	if (!u)
		return -EINVAL;
	for (size_t k = 0; k < gp->n_node; k++)
		n += gp->node[k]->n_input;
	u->names = malloc((n ? n : 1) * sizeof(*u->names));
	if (!u->names)
		return -EINVAL;
	for (size_t k = 0; k < gp->n_node; k++)
		for (size_t j = 0; j < gp->node[k]->n_input; j++)
			if (gp->node[k]->input[j] && gp->node[k]->input[j][0])
				u->names[u->n_names++] = gp->node[k]->input[j];
	for (size_t k = 0; k < gp->n_output; k++)
		if (gp->output[k]->name)
			u->names[u->n_names++] = gp->output[k]->name;
	qsort(u->names, u->n_names, sizeof(*u->names), by_name);
	return 0;
}

void onnx_uses_free(struct octx *c)
{
	if (!c->uses)
		return;
	free(c->uses->names);
	free(c->uses->left);
	free(c->uses->by_kernel);
	free(c->uses);
	c->uses = NULL;
}

/* Readers of @name in the whole model. */
static uint32_t count(const struct onnx_uses *u, const char *name)
{
	size_t lo = 0, hi = u->n_names, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(u->names[mid], name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < u->n_names && !strcmp(u->names[lo], name))
		lo++;
	return (uint32_t)(lo - first);
}

static int grow(struct onnx_uses *u, size_t n)
{
	size_t cap = u->cap ? u->cap : 256;
	uint32_t *left;
	bool *k;

	while (cap < n)
		cap *= 2;
	left = realloc(u->left, cap * sizeof(*left));
	if (left)
		u->left = left;
	k = left ? realloc(u->by_kernel, cap * sizeof(*k)) : NULL;
	if (!k)
		return -ENOMEM;
	u->by_kernel = k;
	for (size_t i = u->cap; i < cap; i++) {
		u->left[i] = UINT32_MAX;
		u->by_kernel[i] = false;
	}
	u->cap = cap;
	return 0;
}

void onnx_uses_done(struct octx *c, size_t i)
{
	struct onnx_uses *u = c->uses;
	struct wsecc_graph *g = c->g;
	const struct wsecc_node *n = &g->nodes[i];

	if (!u || (g->n_tensors > u->cap && grow(u, g->n_tensors)))
		return;	/* (out of memory: nothing is freed, which is only slower) */
	for (size_t k = 0; k < n->n_in; k++) {
		int t = n->in[k];
		struct wsecc_tensor *x;

		if (t < 0)
			continue;
		x = &g->tensors[t];
		if (u->left[t] == UINT32_MAX)
			u->left[t] = count(u, x->name);
		if (u->left[t])
			u->left[t]--;
		if (n->state != WSECC_NODE_FOLDED)
			u->by_kernel[t] = true;
		if (!u->left[t] && !u->by_kernel[t] && x->kind == WSECC_T_CONST && x->data &&
		    !x->data_mapped && !x->source) {
			free(x->data);
			x->data = NULL;
		}
	}
}

void onnx_free_unread(struct octx *c)
{
	struct wsecc_graph *g = c->g;
	bool *read = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*read));

	if (!read)
		return;
	/* Read by what runs or is listed as refused; fused nodes' constants are in attributes. */
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state == WSECC_NODE_FOLDED || n->state == WSECC_NODE_FUSED)
			continue;
		for (size_t k = 0; k < n->n_in; k++)
			if (n->in[k] >= 0)
				read[n->in[k]] = true;
	}
	for (size_t i = 0; i < g->n_outputs; i++)
		read[g->outputs[i]] = true;
	for (size_t t = 0; t < g->n_tensors; t++) {
		struct wsecc_tensor *x = &g->tensors[t];

		if (!read[t] && x->kind == WSECC_T_CONST && x->data && !x->data_mapped) {
			free(x->data);
			x->data = NULL;
		}
	}
	free(read);
}
