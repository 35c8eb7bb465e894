// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A checked graph as an engine graph (wse/engine_graph.h), for the host
 * executor now and the firmware later: one engine value per tensor that a
 * kernel reads or writes, one engine node per kernel node, in order. Only
 * this file of the compiler needs libwseengine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_graph_internal.h"

/* @param_data: give parameters their values (else only their shapes). */
static int value_for(const struct wsecc_graph *g, struct engine_graph *eg, int *ids, int t,
		     bool param_data, struct wsecc_error *err)
{
	const void *data = NULL;
	float *as_float = NULL;
	const struct wsecc_tensor *x = &g->tensors[t];
	size_t dims[WSECC_MAX_RANK];
	enum engine_dtype dt;
	enum engine_value_kind kind;
	int id;

	if (ids[t] >= 0)
		return ids[t];
	for (unsigned d = 0; d < x->rank; d++)
		dims[d] = (size_t)x->dims[d];
	switch (x->dtype) {
	case WSECC_DT_F32:
	case WSECC_DT_U8:	/* pixels: the caller converts them to float */
		dt = ENGINE_DT_F32;
		break;
	case WSECC_DT_I64:
		dt = ENGINE_DT_I64;
		break;
	case WSECC_DT_BOOL:	/* a Where's constant condition: 1 and 0 as floats */
		if (x->kind != WSECC_T_CONST || !x->data)
			return wsecc_fail(err, g->file, 0, 0, "tensor '%s' of bool is not a constant",
					  x->name);
		dt = ENGINE_DT_F32;
		as_float = malloc(wsecc_tensor_numel(x) * sizeof(float) + 1);
		if (!as_float)
			return wsecc_fail(err, g->file, 0, 0, "out of memory");
		for (uint64_t i = 0; i < wsecc_tensor_numel(x); i++)
			as_float[i] = ((const uint8_t *)x->data)[i] ? 1.0f : 0.0f;
		break;
	default:
		return wsecc_fail(err, g->file, 0, 0, "tensor '%s' of %s cannot reach a kernel", x->name,
				  wsecc_dtype_name(x->dtype));
	}
	switch (x->kind) {
	case WSECC_T_INPUT:
		kind = ENGINE_VAL_INPUT;
		break;
	case WSECC_T_PARAM:
		kind = ENGINE_VAL_PARAM;
		break;
	case WSECC_T_CONST:
		kind = ENGINE_VAL_CONST;
		break;
	case WSECC_T_STATE:
		kind = ENGINE_VAL_STATE;
		break;
	default:
		kind = ENGINE_VAL_ACT;
		break;
	}
	if (kind == ENGINE_VAL_CONST && x->dtype == WSECC_DT_U8)
		return wsecc_fail(err, g->file, 0, 0, "constant '%s' of uint8", x->name);
	if (kind == ENGINE_VAL_CONST ||
	    ((kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_STATE) && param_data))
		data = as_float ? as_float : x->data;
	id = engine_graph_add_value(eg, dt, kind, x->rank, dims, data);
	free(as_float);
	if (id < 0)
		return wsecc_fail(err, g->file, 0, 0, "tensor '%s': %s", x->name,
				  engine_graph_error(eg));
	ids[t] = id;
	return id;
}

static int add_loss(const struct wsecc_graph *g, struct engine_graph *eg, int logits, int *labels,
		    struct wsecc_error *err)
{
	size_t rank, dims[ENGINE_MAX_RANK];

	if (engine_graph_shape(eg, logits, &rank, dims) || rank < 1)
		return wsecc_fail(err, g->file, 0, 0, "the loss needs logits of rank 1 or more");
	*labels = engine_graph_add_value(eg, ENGINE_DT_I64, ENGINE_VAL_INPUT, rank - 1, dims, NULL);
	if (*labels < 0 || engine_graph_set_loss(eg, logits, *labels))
		return wsecc_fail(err, g->file, 0, 0, "the loss: %s", engine_graph_error(eg));
	return 0;
}

static int to_engine(const struct wsecc_graph *g, struct engine_graph *eg, int *ids, bool add_xent,
		     int *labels, bool param_data, struct wsecc_error *err)
{
	bool have_loss = false;

	if (wsecc_graph_check(g, err))
		return -EINVAL;
	*labels = -1;
	for (size_t t = 0; t < g->n_tensors; t++)
		ids[t] = -1;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];
		int in[ENGINE_GRAPH_MAX_IO], out[ENGINE_GRAPH_MAX_IO];
		size_t n_out = 0;

		if (n->state == WSECC_NODE_LOSS) {
			int z = value_for(g, eg, ids, n->in[0], param_data, err), l;

			if (z < 0)
				return -EINVAL;
			/* Labels are fed per step, even when a node test binds them. */
			l = engine_graph_add_value(eg, ENGINE_DT_I64, ENGINE_VAL_INPUT, 1,
						   (size_t[]){ (size_t)g->tensors[n->in[1]].dims[0] }, NULL);
			if (l < 0 || engine_graph_set_loss(eg, z, l))
				return wsecc_fail(err, g->file, 0, 0, "node %s: %s", n->name,
						  engine_graph_error(eg));
			ids[n->in[1]] = l;
			*labels = l;
			have_loss = true;
			continue;
		}
		if (n->state != WSECC_NODE_KERNEL)
			continue;
		/* Shapes, split sizes, ratios: folded into the attributes. */
		size_t n_in = n->op == ENGINE_OP_RESHAPE || n->op == ENGINE_OP_SPLIT ||
			      n->op == ENGINE_OP_DROPOUT || n->op == ENGINE_OP_SLICE ? 1 : n->n_in;

		if (n_in > ENGINE_GRAPH_MAX_IO || n->n_out > ENGINE_GRAPH_MAX_IO)
			return wsecc_fail(err, g->file, 0, 0, "node %s: too many inputs or outputs", n->name);
		for (size_t k = 0; k < n_in; k++)
			in[k] = n->in[k] < 0 ? -1 : value_for(g, eg, ids, n->in[k], param_data, err);
		for (size_t k = 0; k < n_in; k++)
			if (n->in[k] >= 0 && in[k] < 0)
				return -EINVAL;
		for (size_t k = 0; k < n->n_out; k++) {
			if (n->out[k] < 0) {
				/* A hole before a later output (LayerNormalization's
				 * Mean left out, InvStdDev kept): a value nobody reads.
				 */
				bool later = false;

				for (size_t j = k + 1; j < n->n_out; j++)
					later |= n->out[j] >= 0;
				if (!later)
					break;
				const struct wsecc_tensor *x0 = &g->tensors[n->out[0]];
				size_t dims[WSECC_MAX_RANK];

				for (unsigned d = 0; d < x0->rank; d++)
					dims[d] = (size_t)x0->dims[d];
				out[k] = engine_graph_add_value(eg, ENGINE_DT_F32, ENGINE_VAL_ACT, x0->rank,
								dims, NULL);
			} else {
				out[k] = value_for(g, eg, ids, n->out[k], param_data, err);
			}
			if (out[k] < 0)
				return -EINVAL;
			n_out = k + 1;
		}
		if (engine_graph_add_node(eg, n->op, &n->attrs, n_in, in, n_out, out) < 0)
			return wsecc_fail(err, g->file, 0, 0, "node %s: %s", n->name, engine_graph_error(eg));
	}
	if (add_xent && !have_loss) {
		int z;

		if (!g->n_outputs || ids[g->outputs[0]] < 0)
			return wsecc_fail(err, g->file, 0, 0, "the graph has no computed output to take a loss of");
		z = ids[g->outputs[0]];
		if (add_loss(g, eg, z, labels, err))
			return -EINVAL;
	}
	return 0;
}

int wsecc_graph_to_engine(const struct wsecc_graph *g, struct engine_graph *eg, int *ids,
			  bool add_xent, int *labels, struct wsecc_error *err)
{
	return to_engine(g, eg, ids, add_xent, labels, true, err);
}

int wsecc_graph_to_engine_shapes(const struct wsecc_graph *g, struct engine_graph *eg, int *ids,
				 bool add_xent, int *labels, struct wsecc_error *err)
{
	return to_engine(g, eg, ids, add_xent, labels, false, err);
}
