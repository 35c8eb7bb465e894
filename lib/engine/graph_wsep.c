// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph program's graph (wse/wsep.h, struct wsep_graph) as an engine
 * graph, at any batch up to the program's: the firmware builds one per
 * micro-batch size. The program was validated by libwsep (ids in range,
 * activations computed before they are read, parameters and constants
 * inside their sections); whether each node's shapes fit its op is
 * checked here by engine_graph_check(), before anything is allocated.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wse/engine_graph.h"
#include "wse/engine_wsep.h"

static const enum engine_op ops[] = {
	[WSEP_OP_CONV2D] = ENGINE_OP_CONV2D,	   [WSEP_OP_MAXPOOL2D] = ENGINE_OP_MAXPOOL2D,
	[WSEP_OP_AVGPOOL2D] = ENGINE_OP_AVGPOOL2D, [WSEP_OP_GEMM] = ENGINE_OP_GEMM,
	[WSEP_OP_MATMUL] = ENGINE_OP_MATMUL,	   [WSEP_OP_BINARY] = ENGINE_OP_BINARY,
	[WSEP_OP_ACT] = ENGINE_OP_ACT,		   [WSEP_OP_LAYERNORM] = ENGINE_OP_LAYERNORM,
	[WSEP_OP_SOFTMAX] = ENGINE_OP_SOFTMAX,	   [WSEP_OP_GATHER] = ENGINE_OP_GATHER,
	[WSEP_OP_ATTENTION] = ENGINE_OP_ATTENTION, [WSEP_OP_DROPOUT] = ENGINE_OP_DROPOUT,
	[WSEP_OP_TRANSPOSE] = ENGINE_OP_TRANSPOSE, [WSEP_OP_SPLIT] = ENGINE_OP_SPLIT,
	[WSEP_OP_RESHAPE] = ENGINE_OP_RESHAPE,	   [WSEP_OP_BATCHNORM] = ENGINE_OP_BATCHNORM,
	[WSEP_OP_RMSNORM] = ENGINE_OP_RMSNORM,	   [WSEP_OP_ROTARY] = ENGINE_OP_ROTARY,
	[WSEP_OP_CONCAT] = ENGINE_OP_CONCAT,	   [WSEP_OP_SLICE] = ENGINE_OP_SLICE,
	[WSEP_OP_WHERE] = ENGINE_OP_WHERE,
};

static const enum engine_binary_kind binaries[] = {
	[WSEP_BIN_ADD] = ENGINE_BIN_ADD, [WSEP_BIN_SUB] = ENGINE_BIN_SUB,
	[WSEP_BIN_MUL] = ENGINE_BIN_MUL, [WSEP_BIN_DIV] = ENGINE_BIN_DIV,
};

static const enum engine_act_kind acts[] = {
	[WSEP_FN_RELU] = ENGINE_ACT_RELU,	  [WSEP_FN_TANH] = ENGINE_ACT_TANH,
	[WSEP_FN_SIGMOID] = ENGINE_ACT_SIGMOID, [WSEP_FN_GELU] = ENGINE_ACT_GELU,
	[WSEP_FN_GELU_TANH] = ENGINE_ACT_GELU_TANH, [WSEP_FN_SILU] = ENGINE_ACT_SILU,
};

static int fail(struct engine_graph *g, int ret, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(struct engine_graph *g, int ret, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	engine_graph_destroy(g);
	return ret;
}

uint32_t engine_op_to_wsep(enum engine_op op)
{
	for (uint32_t w = WSEP_OP_CONV2D; w <= WSEP_OP_COUNT; w++)
		if (ops[w] == op)
			return w;
	return WSEP_OP_COUNT + 1;
}

void engine_attrs_to_wsep(const struct engine_node_attrs *a, struct wsep_graph_attrs *w)
{
	memset(w, 0, sizeof(*w));
	for (int i = 0; i < 2; i++) {
		w->kernel[i] = (uint32_t)a->kernel[i];
		w->stride[i] = (uint32_t)a->stride[i];
		w->dilation[i] = (uint32_t)a->dilation[i];
	}
	for (int i = 0; i < 4; i++)
		w->pads[i] = (uint32_t)a->pads[i];
	w->flags = (a->ceil_mode ? WSEP_ATTR_CEIL_MODE : 0) |
		   (a->count_include_pad ? WSEP_ATTR_COUNT_INCLUDE_PAD : 0) |
		   (a->trans_a ? WSEP_ATTR_TRANS_A : 0) | (a->trans_b ? WSEP_ATTR_TRANS_B : 0) |
		   (a->causal ? WSEP_ATTR_CAUSAL : 0) |
		   (a->training_mode ? WSEP_ATTR_TRAINING_MODE : 0) |
		   (a->unbiased ? WSEP_ATTR_UNBIASED : 0);
	w->momentum = a->momentum;
	w->alpha = a->alpha;
	w->beta = a->beta;
	for (uint32_t b = WSEP_BIN_ADD; b <= WSEP_BIN_DIV; b++)
		if (binaries[b] == a->binary)
			w->binary = b;
	for (uint32_t f = WSEP_FN_RELU; f <= WSEP_FN_SILU; f++)
		if (acts[f] == a->act)
			w->act = f;
	w->axis = (uint32_t)a->axis;
	w->epsilon = a->epsilon;
	w->heads = (uint32_t)a->heads;
	w->scale = a->scale;
	w->ratio = a->ratio;
	w->start = (uint32_t)a->start;
	for (int i = 0; i < WSEP_GRAPH_MAX_RANK && i < ENGINE_MAX_RANK; i++)
		w->perm[i] = (uint8_t)a->perm[i];
}

void engine_attrs_from_wsep(const struct wsep_graph_attrs *w, struct engine_node_attrs *a)
{
	*a = (struct engine_node_attrs){
		.ceil_mode = w->flags & WSEP_ATTR_CEIL_MODE,
		.count_include_pad = w->flags & WSEP_ATTR_COUNT_INCLUDE_PAD,
		.trans_a = w->flags & WSEP_ATTR_TRANS_A,
		.trans_b = w->flags & WSEP_ATTR_TRANS_B,
		.causal = w->flags & WSEP_ATTR_CAUSAL,
		.training_mode = w->flags & WSEP_ATTR_TRAINING_MODE,
		.unbiased = w->flags & WSEP_ATTR_UNBIASED,
		.momentum = w->momentum,
		.alpha = w->alpha, .beta = w->beta,
		.binary = binaries[w->binary <= WSEP_BIN_DIV ? w->binary : 0],
		.act = acts[w->act <= WSEP_FN_SILU ? w->act : 0],
		.axis = w->axis, .epsilon = w->epsilon, .heads = w->heads, .scale = w->scale,
		.ratio = w->ratio, .start = w->start,
	};
	for (int i = 0; i < 2; i++) {
		a->kernel[i] = w->kernel[i];
		a->stride[i] = w->stride[i];
		a->dilation[i] = w->dilation[i];
	}
	for (int i = 0; i < 4; i++)
		a->pads[i] = w->pads[i];
	for (int i = 0; i < WSEP_GRAPH_MAX_RANK && i < ENGINE_MAX_RANK; i++)
		a->perm[i] = w->perm[i];
}

int engine_graph_from_wsep(const struct wsep_program *p, uint32_t batch,
			   struct engine_graph **out, char *err, size_t errlen)
{
	const struct wsep_graph *wg = p->graph;
	struct engine_graph *g = NULL;
	int ret;

	*out = NULL;
	if (!wg || !batch || batch > p->batch || !p->weights)
		return fail(g, -EINVAL, err, errlen, "not a graph program, or batch %u outside 1..%u",
			    batch, p->batch);
	ret = engine_graph_create(&g);
	if (ret)
		return fail(g, ret, err, errlen, "out of memory");
	for (uint32_t i = 0; i < wg->num_values; i++) {
		const struct wsep_graph_value *v = &wg->values[i];
		size_t dims[ENGINE_MAX_RANK];
		const void *data = NULL;
		enum engine_value_kind kind = v->kind == WSEP_VAL_INPUT ? ENGINE_VAL_INPUT :
					      v->kind == WSEP_VAL_PARAM ? ENGINE_VAL_PARAM :
					      v->kind == WSEP_VAL_CONST ? ENGINE_VAL_CONST :
					      v->kind == WSEP_VAL_STATE ? ENGINE_VAL_STATE :
									  ENGINE_VAL_ACT;

		for (uint32_t d = 0; d < v->rank; d++)
			dims[d] = (size_t)v->dims[d];
		if (v->batch_dim >= 0)
			dims[v->batch_dim] = (size_t)(v->dims[v->batch_dim] / p->batch * batch);
		if (kind == ENGINE_VAL_PARAM || kind == ENGINE_VAL_STATE)
			data = p->weights + v->offset;
		else if (kind == ENGINE_VAL_CONST)
			data = wg->consts + v->offset;
		ret = engine_graph_add_value(g, v->dtype == WSEP_ELEM_I64 ? ENGINE_DT_I64 : ENGINE_DT_F32,
					     kind, v->rank, dims, data);
		if (ret != (int)i)
			return fail(g, ret < 0 ? ret : -EINVAL, err, errlen, "value %u: %s", i,
				    ret == -ENOMEM ? "out of memory" : engine_graph_error(g));
	}
	for (uint32_t i = 0; i < wg->num_nodes; i++) {
		const struct wsep_graph_node *nd = &wg->nodes[i];
		struct engine_node_attrs a;

		if (nd->op < WSEP_OP_CONV2D || nd->op > WSEP_OP_COUNT)
			return fail(g, -EINVAL, err, errlen, "node %u: unknown op %u", i, nd->op);
		engine_attrs_from_wsep(&nd->a, &a);
		ret = engine_graph_add_node(g, ops[nd->op], &a, nd->n_in, nd->in, nd->n_out, nd->out);
		if (ret < 0)
			return fail(g, ret, err, errlen, "%s", engine_graph_error(g));
	}
	ret = engine_graph_set_loss(g, wg->logits, wg->labels);
	if (!ret)
		ret = engine_graph_check(g);
	if (ret)
		return fail(g, ret, err, errlen, "%s", engine_graph_error(g));
	*out = g;
	return 0;
}
