// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Graph programs (Documentation/wsep-format.rst, "Graph programs"): the
 * structure of the graph checked against the program before anything
 * trusts it. What is checked here is what the firmware relies on to
 * address memory: every id in range, every activation computed once and
 * before it is read, every parameter inside its unit's share of the
 * weights and read by that unit only, every constant inside the constants
 * section, the sizes bounded, and the units' boundaries as the layer
 * records say. Whether each node's shapes fit its op is the engine's to say
 * (engine_graph_check(), which the firmware runs on a loaded program
 * before it allocates anything).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wsep_internal.h"

uint32_t wsep_label_rows(const struct wsep_program *p)
{
	return p->graph ? p->graph->rows : 1;
}

uint32_t wsep_input_shape(const struct wsep_program *p, uint32_t *shape, uint32_t max)
{
	const struct wsep_graph_value *v;
	uint64_t values = 1;
	uint32_t rank = 0;

	if (p->graph && p->graph->input >= 0 && (uint32_t)p->graph->input < p->graph->num_values) {
		v = &p->graph->values[p->graph->input];
		for (uint32_t i = 0; i < v->rank && rank < max; i++)
			if ((int32_t)i != v->batch_dim && v->dims[i] <= UINT32_MAX) {
				shape[rank++] = (uint32_t)v->dims[i];
				values *= v->dims[i];
			}
		/* Every dimension but the batch taken, making input_dim: else the flat size. */
		if (rank && rank + (v->batch_dim >= 0) == v->rank && values == p->input_dim)
			return rank;
	}
	shape[0] = p->input_dim;
	return 1;
}

uint32_t wsep_classes(const struct wsep_program *p)
{
	return p->graph ? p->graph->classes : p->layers[p->num_layers - 1].out;
}

uint32_t wsep_features(const struct wsep_program *p)
{
	const struct wsep_optimizer *o = &p->opt;
	uint32_t f = p->graph ? WSEP_FEATURE_GRAPH : 0;

	if (o->kind == WSEP_OPT_ADAMW || o->dampening != 0 || o->nesterov ||
	    o->schedule != WSEP_LR_CONSTANT)
		f |= WSEP_FEATURE_TRAINING;
	/* An older reader would run the whole batch at once: more than fits. */
	if (p->micro_batch && p->micro_batch < p->batch)
		f |= WSEP_FEATURE_MICRO_BATCH;
	/* An older reader would keep every activation: more than fits. */
	if (p->exec_flags & WSEP_EXEC_RECOMPUTE)
		f |= WSEP_FEATURE_RECOMPUTE;
	/* An older reader would compute in fp32 and never scale the loss. */
	if (p->precision != WSEP_PRECISION_FP32)
		f |= WSEP_FEATURE_PRECISION;
	/* An older reader would feed the whole record to the first input. */
	if (p->graph && p->graph->n_inputs > 1)
		f |= WSEP_FEATURE_INPUTS;
	return f;
}

void wsep_graph_unit_nodes(const struct wsep_graph *g, uint32_t k, uint32_t *first, uint32_t *end)
{
	uint32_t i = 0;

	while (i < g->num_nodes && g->nodes[i].unit < k)
		i++;
	*first = i;
	while (i < g->num_nodes && g->nodes[i].unit == k)
		i++;
	*end = i;
}

/* Elements of @v, or 0 when a dimension is 0 or they exceed WSEP_GRAPH_MAX_ELEMS. */
static uint64_t numel(const struct wsep_graph_value *v)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < v->rank && d < WSEP_GRAPH_MAX_RANK; d++) {
		/* n <= 2^48 and dims[d] <= 2^48: the product cannot wrap once checked so. */
		if (!v->dims[d] || v->dims[d] > WSEP_GRAPH_MAX_ELEMS ||
		    n > WSEP_GRAPH_MAX_ELEMS / v->dims[d])
			return 0;
		n *= v->dims[d];
	}
	return n;
}

uint64_t wsep_graph_value_elems(const struct wsep_program *p, const struct wsep_graph_value *v,
				uint32_t batch)
{
	uint64_t n = numel(v);

	if (v->batch_dim < 0 || !n)
		return n;
	return n / p->batch * batch;
}

/* Elements per sample of @v: a value without a batch dimension counts whole. */
static uint64_t per_sample(const struct wsep_program *p, const struct wsep_graph_value *v)
{
	return v->batch_dim < 0 ? numel(v) : numel(v) / p->batch;
}

uint32_t wsep_graph_n_inputs(const struct wsep_graph *g)
{
	if (g->n_inputs <= 1)
		return 1;
	return g->n_inputs < WSEP_GRAPH_MAX_INPUTS ? g->n_inputs : WSEP_GRAPH_MAX_INPUTS;
}

int32_t wsep_graph_input_id(const struct wsep_graph *g, uint32_t i)
{
	return i ? g->inputs[i] : g->input;
}

uint64_t wsep_graph_input_at(const struct wsep_program *p, uint32_t i, uint64_t *elems)
{
	const struct wsep_graph *g = p->graph;
	uint64_t at = 0;

	for (uint32_t k = 0; k < i; k++)
		at += per_sample(p, &g->values[wsep_graph_input_id(g, k)]);
	*elems = per_sample(p, &g->values[wsep_graph_input_id(g, i)]);
	return at;
}

/* Whether value @v is one of the fed inputs. */
static bool fed(const struct wsep_graph *g, int32_t v)
{
	for (uint32_t i = 0; i < wsep_graph_n_inputs(g); i++)
		if (wsep_graph_input_id(g, i) == v)
			return true;
	return false;
}

static int check_value(const struct wsep_program *p, uint32_t i, uint64_t *param_at,
		       uint64_t *elems, char *err, size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	const struct wsep_graph_value *v = &g->values[i];
	uint64_t n = numel(v), size = v->dtype == WSEP_ELEM_I64 ? 8 : 4;

	if (v->dtype != WSEP_ELEM_F32 && v->dtype != WSEP_ELEM_I64)
		return wsep_fail(err, errlen, "value %u: element type %u is not f32 or i64", i,
				 v->dtype);
	if (v->kind < WSEP_VAL_INPUT || v->kind > WSEP_VAL_STATE)
		return wsep_fail(err, errlen, "value %u: unknown kind %u", i, (unsigned)v->kind);
	if (v->rank > WSEP_GRAPH_MAX_RANK || !n)
		return wsep_fail(err, errlen,
				 "value %u: rank %u or its dimensions out of range (rank <= %u, each dimension >= 1, at most 2^48 elements)",
				 i, v->rank, WSEP_GRAPH_MAX_RANK);
	for (uint32_t d = v->rank; d < WSEP_GRAPH_MAX_RANK; d++)
		if (v->dims[d])
			return wsep_fail(err, errlen, "value %u: dimension %u beyond its rank %u is not 0",
					 i, d, v->rank);
	if (v->batch_dim < -1 || v->batch_dim >= (int32_t)v->rank ||
	    (v->batch_dim >= 0 && v->dims[v->batch_dim] % p->batch))
		return wsep_fail(err, errlen,
				 "value %u: batch dimension %d is not one of its %u dimensions, a multiple of the batch %u",
				 i, v->batch_dim, v->rank, p->batch);
	if ((v->kind == WSEP_VAL_PARAM || v->kind == WSEP_VAL_CONST || v->kind == WSEP_VAL_STATE) &&
	    v->batch_dim >= 0)
		return wsep_fail(err, errlen, "value %u: a parameter, state or constant has no batch dimension", i);
	if (v->kind != WSEP_VAL_PARAM && v->kind != WSEP_VAL_STATE && v->unit != -1)
		return wsep_fail(err, errlen, "value %u: only a parameter or state belongs to a unit", i);
	/* MemoryX takes back gradients only: state would never leave the device. */
	if (v->kind == WSEP_VAL_STATE && p->mode == WSEP_MODE_WEIGHT_STREAMING)
		return wsep_fail(err, errlen,
				 "value %u: state (running statistics) in a weight-streaming program", i);
	switch (v->kind) {
	case WSEP_VAL_STATE:
	case WSEP_VAL_PARAM: {
		const struct wsep_layer *l;

		/* In the order of the weights layout, one after another. */
		if (v->dtype != WSEP_ELEM_F32 || v->offset != *param_at)
			return wsep_fail(err, errlen,
					 "value %u: a parameter is f32 and starts where the previous one ends (float %llu, not %llu)",
					 i, (unsigned long long)*param_at,
					 (unsigned long long)v->offset);
		if (v->unit < 0 || (uint32_t)v->unit >= p->num_layers)
			return wsep_fail(err, errlen, "value %u: unit %d of %u", i, v->unit,
					 p->num_layers);
		l = &p->layers[v->unit];
		if (v->offset < l->weight_offset ||
		    v->offset + n > l->weight_offset + wsep_layer_params(l))
			return wsep_fail(err, errlen,
					 "value %u: floats %llu..%llu lie outside unit %d's parameters",
					 i, (unsigned long long)v->offset,
					 (unsigned long long)(v->offset + n - 1), v->unit);
		*param_at += n;
		break;
	}
	case WSEP_VAL_CONST:
		if (v->offset > p->graph->const_bytes || n * size > p->graph->const_bytes - v->offset)
			return wsep_fail(err, errlen,
					 "value %u: its %llu bytes at %llu lie outside the %llu bytes of constants",
					 i, (unsigned long long)(n * size), (unsigned long long)v->offset,
					 (unsigned long long)p->graph->const_bytes);
		break;
	default:
		if (v->offset)
			return wsep_fail(err, errlen, "value %u: an input or activation has no offset", i);
		if (v->kind == WSEP_VAL_INPUT && !fed(g, (int32_t)i) && (int32_t)i != g->labels)
			return wsep_fail(err, errlen,
					 "value %u: an input that is neither a fed input nor the labels", i);
		/* Each term is at most 2^48: stop adding before the sum could wrap. */
		*elems = *elems > WSEP_GRAPH_MAX_ELEMS ? *elems : *elems + n;
	}
	return 0;
}

/*
 * The fed inputs: distinct inputs with a batch dimension, each further one
 * f32 or i64 in the 4-byte elements of i32 or f32 samples, and together
 * the input_dim elements of a sample's record.
 */
static int check_fed(const struct wsep_program *p, char *err, size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	uint32_t n = wsep_graph_n_inputs(g);
	uint64_t total = 0;

	if (g->n_inputs > WSEP_GRAPH_MAX_INPUTS || (g->n_inputs > 1 && g->inputs[0] != g->input))
		return wsep_fail(err, errlen, "graph: %u fed inputs, the first not the input %d; 1..%u",
				 g->n_inputs, g->input, WSEP_GRAPH_MAX_INPUTS);
	if (n > 1 && p->input_type == WSEP_ELEM_U8)
		return wsep_fail(err, errlen,
				 "graph: %u fed inputs in u8 samples; several inputs travel in 4-byte elements (i32 or f32 samples)",
				 n);
	for (uint32_t i = 0; i < n; i++) {
		int32_t id = wsep_graph_input_id(g, i);
		const struct wsep_graph_value *v;

		if (id < 0 || (uint32_t)id >= g->num_values || id == g->labels)
			return wsep_fail(err, errlen, "graph: fed input %u is value %d of %u", i, id,
					 g->num_values);
		v = &g->values[id];
		for (uint32_t k = 0; k < i; k++)
			if (wsep_graph_input_id(g, k) == id)
				return wsep_fail(err, errlen, "graph: value %d is fed twice", id);
		if (i && (v->kind != WSEP_VAL_INPUT || v->batch_dim < 0 ||
			  (v->dtype != WSEP_ELEM_F32 && v->dtype != WSEP_ELEM_I64)))
			return wsep_fail(err, errlen,
					 "graph: fed input %u (value %d) must be an f32 or i64 input with a batch dimension",
					 i, id);
		total += per_sample(p, v);
	}
	if (total != p->input_dim)
		return wsep_fail(err, errlen,
				 "graph: its %u fed input%s hold %llu elements per sample; the program's input_dim is %u",
				 n, n > 1 ? "s" : "", (unsigned long long)total, p->input_dim);
	return 0;
}

/* The samples, labels and logits against the program's input and streams. */
static int check_ends(const struct wsep_program *p, char *err, size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	const struct wsep_graph_value *in, *lab, *z;
	uint32_t want = p->input_type == WSEP_ELEM_I32 ? WSEP_ELEM_I64 : WSEP_ELEM_F32;

	if (g->input < 0 || (uint32_t)g->input >= g->num_values || g->labels < 0 ||
	    (uint32_t)g->labels >= g->num_values || g->logits < 0 ||
	    (uint32_t)g->logits >= g->num_values || g->input == g->labels)
		return wsep_fail(err, errlen, "graph: input %d, labels %d or logits %d is not a value",
				 g->input, g->labels, g->logits);
	in = &g->values[g->input];
	lab = &g->values[g->labels];
	z = &g->values[g->logits];
	if (in->kind != WSEP_VAL_INPUT || in->dtype != want || in->batch_dim < 0)
		return wsep_fail(err, errlen,
				 "graph: the input (value %d) must be a %s input with a batch dimension",
				 g->input, wsep_elem_name(want));
	if (check_fed(p, err, errlen))
		return -EINVAL;
	if (!g->rows || !g->classes || g->classes > WSEP_MAX_DIM)
		return wsep_fail(err, errlen, "graph: %u rows of %u classes", g->rows, g->classes);
	if (lab->kind != WSEP_VAL_INPUT || lab->dtype != WSEP_ELEM_I64 || lab->batch_dim < 0 ||
	    per_sample(p, lab) != g->rows)
		return wsep_fail(err, errlen,
				 "graph: the labels (value %d) must be an i64 input of %u per sample, with a batch dimension",
				 g->labels, g->rows);
	if (z->kind != WSEP_VAL_ACT || z->dtype != WSEP_ELEM_F32 || z->rank != lab->rank + 1 ||
	    memcmp(z->dims, lab->dims, lab->rank * sizeof(z->dims[0])) ||
	    z->dims[z->rank - 1] != g->classes)
		return wsep_fail(err, errlen,
				 "graph: the logits (value %d) must be an f32 activation shaped as the labels and %u classes",
				 g->logits, g->classes);
	return 0;
}

/* Checks node @i's ids and attributes; marks what it produces. */
static int check_node(const struct wsep_program *p, uint32_t i, int32_t *producer,
		      char *err, size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	const struct wsep_graph_node *nd = &g->nodes[i];
	const struct wsep_graph_attrs *a = &nd->a;

	if (nd->op < WSEP_OP_CONV2D || nd->op > WSEP_OP_COUNT)
		return wsep_fail(err, errlen, "node %u: unknown op %u", i, (unsigned)nd->op);
	if (nd->unit >= p->num_layers || (i && nd->unit < g->nodes[i - 1].unit))
		return wsep_fail(err, errlen,
				 "node %u (%s): unit %u; the nodes come unit by unit, units 0..%u",
				 i, wsep_op_name(nd->op), nd->unit, p->num_layers - 1);
	if (!nd->n_in || nd->n_in > WSEP_GRAPH_MAX_IO || !nd->n_out || nd->n_out > WSEP_GRAPH_MAX_IO)
		return wsep_fail(err, errlen, "node %u (%s): %u inputs and %u outputs, 1..%u of each",
				 i, wsep_op_name(nd->op), nd->n_in, nd->n_out, WSEP_GRAPH_MAX_IO);
	for (uint32_t k = 0; k < WSEP_GRAPH_MAX_IO; k++) {
		int32_t v = nd->in[k];

		if (k >= nd->n_in || v == -1) {
			if (v != -1 || (k < nd->n_in && !k))
				return wsep_fail(err, errlen, "node %u (%s): input slot %u", i,
						 wsep_op_name(nd->op), k);
			continue;
		}
		if (v < 0 || (uint32_t)v >= g->num_values)
			return wsep_fail(err, errlen, "node %u (%s): input %u is value %d of %u", i,
					 wsep_op_name(nd->op), k, v, g->num_values);
		if (g->values[v].kind == WSEP_VAL_ACT && producer[v] < 0)
			return wsep_fail(err, errlen,
					 "node %u (%s): input %u (value %d) is not computed by an earlier node",
					 i, wsep_op_name(nd->op), k, v);
		/* A unit's parameters travel with it: no other unit reads them. */
		if ((g->values[v].kind == WSEP_VAL_PARAM || g->values[v].kind == WSEP_VAL_STATE) &&
		    (uint32_t)g->values[v].unit != nd->unit)
			return wsep_fail(err, errlen,
					 "node %u (%s) of unit %u reads parameter value %d of unit %d",
					 i, wsep_op_name(nd->op), nd->unit, v, g->values[v].unit);
	}
	for (uint32_t k = 0; k < WSEP_GRAPH_MAX_IO; k++) {
		int32_t v = nd->out[k];

		if (k >= nd->n_out) {
			if (v != -1)
				return wsep_fail(err, errlen, "node %u (%s): output slot %u", i,
						 wsep_op_name(nd->op), k);
			continue;
		}
		if (v < 0 || (uint32_t)v >= g->num_values || g->values[v].kind != WSEP_VAL_ACT ||
		    producer[v] >= 0)
			return wsep_fail(err, errlen,
					 "node %u (%s): output %u (value %d) is not an activation computed here for the first time",
					 i, wsep_op_name(nd->op), k, v);
		producer[v] = (int32_t)i;
	}
	if ((a->flags & ~WSEP_ATTR_FLAGS) || a->binary > WSEP_BIN_DIV || a->act > WSEP_FN_SILU ||
	    a->axis >= WSEP_GRAPH_MAX_RANK || !(a->momentum >= 0.0f && a->momentum <= 1.0f))
		return wsep_fail(err, errlen, "node %u (%s): an attribute is out of range", i,
				 wsep_op_name(nd->op));
	for (int d = 0; d < WSEP_GRAPH_MAX_RANK; d++)
		if (a->perm[d] >= WSEP_GRAPH_MAX_RANK)
			return wsep_fail(err, errlen, "node %u (%s): perm[%d] is %u", i,
					 wsep_op_name(nd->op), d, a->perm[d]);
	return 0;
}

int wsep_graph_boundaries(const struct wsep_program *p, uint64_t *cross, char *err, size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	uint32_t L = p->num_layers;
	int32_t *producer = malloc(g->num_values * sizeof(*producer));
	int32_t *last = malloc(g->num_values * sizeof(*last));
	int ret = 0;

	if (!producer || !last) {
		free(producer);
		free(last);
		return wsep_fail(err, errlen, "out of memory");
	}
	for (uint32_t v = 0; v < g->num_values; v++)
		producer[v] = last[v] = -1;
	memset(cross, 0, L * sizeof(*cross));
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct wsep_graph_node *nd = &g->nodes[i];

		for (uint32_t k = 0; k < nd->n_in && k < WSEP_GRAPH_MAX_IO; k++)
			if (nd->in[k] >= 0 && (uint32_t)nd->in[k] < g->num_values)
				last[nd->in[k]] = (int32_t)nd->unit;
		for (uint32_t k = 0; k < nd->n_out && k < WSEP_GRAPH_MAX_IO; k++)
			if (nd->out[k] >= 0 && (uint32_t)nd->out[k] < g->num_values)
				producer[nd->out[k]] = (int32_t)nd->unit;
	}
	for (uint32_t v = 0; v < g->num_values; v++) {
		const struct wsep_graph_value *x = &g->values[v];

		if (x->kind != WSEP_VAL_ACT)
			continue;
		if (producer[v] < 0) {
			ret = wsep_fail(err, errlen, "value %u: an activation no node computes", v);
			goto out;
		}
		for (int32_t k = producer[v]; k < last[v] && k < (int32_t)L; k++)
			cross[k] += per_sample(p, x);
	}
	if (g->logits < 0 || (uint32_t)g->logits >= g->num_values || producer[g->logits] != (int32_t)L - 1) {
		ret = wsep_fail(err, errlen, "graph: the logits are not computed by the last unit");
		goto out;
	}
	cross[L - 1] = (uint64_t)g->rows * g->classes;
out:
	free(producer);
	free(last);
	return ret;
}

/*
 * What crosses each boundary between units: every activation computed in
 * a unit up to k and read after it. The layer records say as much.
 */
static int check_boundaries(const struct wsep_program *p, char *err, size_t errlen)
{
	uint64_t cross[WSEP_MAX_LAYERS];

	if (wsep_graph_boundaries(p, cross, err, errlen))
		return -EINVAL;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		uint32_t first, end;

		wsep_graph_unit_nodes(p->graph, k, &first, &end);
		if (first == end)
			return wsep_fail(err, errlen, "unit %u has no nodes", k);
		if (p->layers[k].out != cross[k])
			return wsep_fail(err, errlen,
					 "layer %u: %u elements per sample leave it, its graph hands on %llu",
					 k, p->layers[k].out, (unsigned long long)cross[k]);
	}
	return 0;
}

int wsep_check_graph(const struct wsep_program *p, char *err, size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	uint64_t param_at = 0, elems = 0;
	int32_t *producer;
	int ret = 0;

	if (!g->num_values || g->num_values > WSEP_GRAPH_MAX_VALUES || !g->num_nodes ||
	    g->num_nodes > WSEP_GRAPH_MAX_NODES || !g->values || !g->nodes ||
	    (g->const_bytes && !g->consts))
		return wsep_fail(err, errlen, "graph: %u values and %u nodes, expected 1..%u of each",
				 g->num_values, g->num_nodes, WSEP_GRAPH_MAX_VALUES);
	for (uint32_t i = 0; i < g->num_values; i++)
		if (check_value(p, i, &param_at, &elems, err, errlen))
			return -EINVAL;
	if (param_at != wsep_total_params(p->layers, p->num_layers))
		return wsep_fail(err, errlen,
				 "graph: its parameters hold %llu floats, the units %llu",
				 (unsigned long long)param_at,
				 (unsigned long long)wsep_total_params(p->layers, p->num_layers));
	if (elems > WSEP_GRAPH_MAX_ELEMS)
		return wsep_fail(err, errlen,
				 "graph: more than 2^48 elements of inputs and activations at batch %u",
				 p->batch);
	if (check_ends(p, err, errlen))
		return -EINVAL;
	producer = malloc(g->num_values * sizeof(*producer));
	if (!producer)
		return wsep_fail(err, errlen, "out of memory");
	for (uint32_t v = 0; v < g->num_values; v++)
		producer[v] = -1;
	for (uint32_t i = 0; i < g->num_nodes && !ret; i++)
		ret = check_node(p, i, producer, err, errlen);
	if (!ret)
		ret = check_boundaries(p, err, errlen);
	free(producer);
	return ret;
}
