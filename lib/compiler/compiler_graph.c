// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The graph IR: building it, lowering a text model into it, checking that
 * every node runs, and the --validate-only listing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_graph_internal.h"

const char *wsecc_dtype_name(enum wsecc_dtype dt)
{
	switch (dt) {
	case WSECC_DT_F32: return "float32";
	case WSECC_DT_U8: return "uint8";
	case WSECC_DT_I8: return "int8";
	case WSECC_DT_U16: return "uint16";
	case WSECC_DT_I16: return "int16";
	case WSECC_DT_I32: return "int32";
	case WSECC_DT_I64: return "int64";
	case WSECC_DT_STRING: return "string";
	case WSECC_DT_BOOL: return "bool";
	case WSECC_DT_F16: return "float16";
	case WSECC_DT_F64: return "float64";
	case WSECC_DT_U32: return "uint32";
	case WSECC_DT_U64: return "uint64";
	case WSECC_DT_BF16: return "bfloat16";
	default: return "undefined";
	}
}

const char *wsecc_why_name(enum wsecc_why why)
{
	switch (why) {
	case WSECC_WHY_OP: return "unsupported op";
	case WSECC_WHY_SHAPE: return "shape";
	case WSECC_WHY_DTYPE: return "dtype";
	case WSECC_WHY_ATTR: return "unsupported attribute";
	case WSECC_WHY_INPUT: return "input";
	default: return "";
	}
}

size_t wsecc_dtype_size(enum wsecc_dtype dt)
{
	switch (dt) {
	case WSECC_DT_F32: return sizeof(float);
	case WSECC_DT_I64: return sizeof(int64_t);
	case WSECC_DT_BOOL:
	case WSECC_DT_U8: return 1;
	default: return 0;
	}
}

uint64_t wsecc_tensor_numel(const struct wsecc_tensor *t)
{
	uint64_t n = 1;

	for (unsigned i = 0; i < t->rank; i++)
		n *= (uint64_t)t->dims[i];
	return n;
}

struct wsecc_graph *wsecc_graph_new(const char *file)
{
	struct wsecc_graph *g = calloc(1, sizeof(*g));

	if (g)
		snprintf(g->file, sizeof(g->file), "%s", file ? file : "");
	return g;
}

void wsecc_tensor_release(struct wsecc_tensor *t)
{
	if (!t)
		return;
	free(t->name);
	if (!t->data_mapped)
		free(t->data);
	t->name = NULL;
	t->data = NULL;
}

void wsecc_graph_free(struct wsecc_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_tensors; i++)
		wsecc_tensor_release(&g->tensors[i]);
	for (size_t i = 0; i < g->n_nodes; i++) {
		free(g->nodes[i].name);
		free(g->nodes[i].op_type);
		free(g->nodes[i].in);
		free(g->nodes[i].out);
	}
	free(g->tensors);
	free(g->nodes);
	free(g->notes);
	wsecc_graph_unmap(g);
	free(g);
}

int wsecc_graph_add_tensor(struct wsecc_graph *g, const char *name, enum wsecc_dtype dt,
			   enum wsecc_tensor_kind kind)
{
	struct wsecc_tensor *t;

	if (g->n_tensors == g->cap_tensors) {
		size_t cap = g->cap_tensors ? 2 * g->cap_tensors : 64;
		struct wsecc_tensor *nt = realloc(g->tensors, cap * sizeof(*nt));

		if (!nt || cap > INT32_MAX)
			return -ENOMEM;
		g->tensors = nt;
		g->cap_tensors = cap;
	}
	t = &g->tensors[g->n_tensors];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name ? name : "");
	if (!t->name)
		return -ENOMEM;
	t->dtype = dt;
	t->kind = kind;
	t->producer = -1;
	t->input_scale = 1.0f;
	return (int)g->n_tensors++;
}

int wsecc_graph_add_node(struct wsecc_graph *g, const char *name, const char *op_type,
			 size_t n_in, size_t n_out)
{
	struct wsecc_node *n;

	if (g->n_nodes == g->cap_nodes) {
		size_t cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
		struct wsecc_node *nn = realloc(g->nodes, cap * sizeof(*nn));

		if (!nn || cap > INT32_MAX)
			return -ENOMEM;
		g->nodes = nn;
		g->cap_nodes = cap;
	}
	n = &g->nodes[g->n_nodes];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->op_type = strdup(op_type);
	n->in = malloc((n_in ? n_in : 1) * sizeof(int));
	n->out = malloc((n_out ? n_out : 1) * sizeof(int));
	if (!n->name || !n->op_type || !n->in || !n->out) {
		free(n->name);
		free(n->op_type);
		free(n->in);
		free(n->out);
		return -ENOMEM;
	}
	n->n_in = n_in;
	n->n_out = n_out;
	for (size_t i = 0; i < n_in; i++)
		n->in[i] = -1;
	for (size_t i = 0; i < n_out; i++)
		n->out[i] = -1;
	n->state = WSECC_NODE_PENDING;
	n->fused_into = -1;
	return (int)g->n_nodes++;
}

int wsecc_graph_find(const struct wsecc_graph *g, const char *name)
{
	/* Latest first: ONNX names are unique, so this is only a search. */
	for (size_t i = g->n_tensors; i-- > 0;)
		if (strcmp(g->tensors[i].name, name) == 0)
			return (int)i;
	return -1;
}

void wsecc_tensor_set_shape(struct wsecc_tensor *t, unsigned rank, const int64_t *dims)
{
	t->rank = rank;
	if (rank)
		memcpy(t->dims, dims, rank * sizeof(*dims));
	t->shape_known = true;
}

int wsecc_refuse(struct wsecc_graph *g, size_t i, enum wsecc_why why, const char *fmt, ...)
{
	struct wsecc_node *n = &g->nodes[i];
	va_list ap;

	n->state = WSECC_NODE_REFUSED;
	n->why = why;
	va_start(ap, fmt);
	vsnprintf(n->reason, sizeof(n->reason), fmt, ap);
	va_end(ap);
	return 0;
}

void wsecc_map(struct wsecc_graph *g, size_t i, enum engine_op op, const char *kernel)
{
	g->nodes[i].state = WSECC_NODE_KERNEL;
	g->nodes[i].op = op;
	g->nodes[i].kernel = kernel;
}

size_t wsecc_tensor_uses(const struct wsecc_graph *g, int t)
{
	size_t uses = 0;

	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state == WSECC_NODE_FOLDED)
			continue;
		for (size_t j = 0; j < n->n_in; j++)
			uses += n->in[j] == t;
	}
	for (size_t i = 0; i < g->n_outputs; i++)
		uses += g->outputs[i] == t;
	return uses;
}

/* --- the text model as a graph --------------------------------------------------- */

static int add_param(struct wsecc_graph *g, const char *name, unsigned rank, const int64_t *dims,
		     float *data)
{
	int t = wsecc_graph_add_tensor(g, name, WSECC_DT_F32, WSECC_T_PARAM);

	if (t < 0)
		return -ENOMEM;
	wsecc_tensor_set_shape(&g->tensors[t], rank, dims);
	g->tensors[t].data = data;
	return t;
}

static int add_value(struct wsecc_graph *g, const char *name, int64_t batch, int64_t width)
{
	int t = wsecc_graph_add_tensor(g, name, WSECC_DT_F32, WSECC_T_VALUE);
	const int64_t dims[2] = { batch, width };

	if (t >= 0)
		wsecc_tensor_set_shape(&g->tensors[t], 2, dims);
	return t;
}

static int lower_model(const struct wsecc_model *m, struct wsecc_graph *g)
{
	const int64_t batch = m->batch;
	uint64_t offset = 0;
	char name[64];
	int x, t;

	x = wsecc_graph_add_tensor(g, "input", m->input_type == WSEP_ELEM_U8 ? WSECC_DT_U8 : WSECC_DT_F32,
				   WSECC_T_INPUT);
	if (x < 0)
		return -ENOMEM;
	g->tensors[x].input_scale = m->input_scale;
	{
		const int64_t dims[2] = { batch, m->input_dim };

		wsecc_tensor_set_shape(&g->tensors[x], 2, dims);
	}
	g->inputs[g->n_inputs++] = x;
	for (uint32_t i = 0; i < m->num_layers; i++) {
		const struct wsecc_layer *l = &m->layers[i];
		const int64_t wd[2] = { l->out, l->in }, bd[1] = { l->out };
		float *w = calloc((size_t)l->in * l->out + l->out, sizeof(float));
		int wt, bt, y, n;

		if (!w)
			return -ENOMEM;
		/* The same initial weights as the .wsep program from the same seed. */
		wsep_init_layer(m->seed, offset, l->in, l->out, w, w + (size_t)l->in * l->out);
		offset += (uint64_t)l->in * l->out + l->out;
		float *b = malloc(l->out * sizeof(float));

		if (!b) {
			free(w);
			return -ENOMEM;
		}
		memcpy(b, w + (size_t)l->in * l->out, l->out * sizeof(float));
		snprintf(name, sizeof(name), "layer%u.weight", i);
		wt = add_param(g, name, 2, wd, w);
		if (wt < 0) {
			free(w);
			free(b);
			return -ENOMEM;
		}
		snprintf(name, sizeof(name), "layer%u.bias", i);
		bt = add_param(g, name, 1, bd, b);
		if (bt < 0) {
			free(b);
			return -ENOMEM;
		}
		snprintf(name, sizeof(name), "layer%u.dense", i);
		y = add_value(g, name, batch, l->out);
		snprintf(name, sizeof(name), "layer%u", i);
		n = y < 0 ? -1 : wsecc_graph_add_node(g, name, "Gemm", 3, 1);
		if (n < 0)
			return -ENOMEM;
		g->nodes[n].in[0] = x;
		g->nodes[n].in[1] = wt;
		g->nodes[n].in[2] = bt;
		g->nodes[n].out[0] = y;
		g->nodes[n].line = l->pos.line;
		g->nodes[n].attrs.trans_b = true;
		g->nodes[n].attrs.alpha = 1.0f;
		g->nodes[n].attrs.beta = 1.0f;
		g->tensors[y].producer = n;
		wsecc_map(g, (size_t)n, ENGINE_OP_GEMM, "gemm_f32");
		x = y;
		if (l->act == WSECC_ACT_NONE)
			continue;
		static const char *const act_ops[] = {
			[WSECC_ACT_RELU] = "Relu", [WSECC_ACT_TANH] = "Tanh",
			[WSECC_ACT_SIGMOID] = "Sigmoid", [WSECC_ACT_GELU] = "Gelu",
		};
		snprintf(name, sizeof(name), "layer%u.act", i);
		y = add_value(g, name, batch, l->out);
		n = y < 0 ? -1 : wsecc_graph_add_node(g, name, act_ops[l->act], 1, 1);
		if (n < 0)
			return -ENOMEM;
		g->nodes[n].in[0] = x;
		g->nodes[n].out[0] = y;
		g->nodes[n].line = l->act_pos.line;
		g->tensors[y].producer = n;
		if (l->act == WSECC_ACT_RELU) {
			g->nodes[n].attrs.act = ENGINE_ACT_RELU;
			wsecc_map(g, (size_t)n, ENGINE_OP_ACT, "relu_f32");
		} else {
			/* Refused as the text model's own validation refuses them. */
			wsecc_refuse(g, (size_t)n, WSECC_WHY_OP,
				     "the device's layer stack has relu and none");
		}
		x = y;
	}
	g->outputs[g->n_outputs++] = x;
	/* The loss: its labels are a new input, and it outputs the mean. */
	t = wsecc_graph_add_tensor(g, "labels", WSECC_DT_I64, WSECC_T_INPUT);
	if (t < 0)
		return -ENOMEM;
	{
		const int64_t dims[1] = { batch };

		wsecc_tensor_set_shape(&g->tensors[t], 1, dims);
	}
	int loss = wsecc_graph_add_tensor(g, "loss", WSECC_DT_F32, WSECC_T_VALUE);
	int n = loss < 0 ? -1 : wsecc_graph_add_node(g, "loss", "SoftmaxCrossEntropyLoss", 2, 1);

	if (n < 0)
		return -ENOMEM;
	wsecc_tensor_set_shape(&g->tensors[loss], 0, NULL);
	g->nodes[n].in[0] = x;
	g->nodes[n].in[1] = t;
	g->nodes[n].out[0] = loss;
	g->nodes[n].line = m->loss_pos.line;
	g->tensors[loss].producer = n;
	g->nodes[n].state = WSECC_NODE_LOSS;
	g->nodes[n].kernel = "softmax_xent_f32";
	if (m->loss != WSECC_LOSS_SOFTMAX_XENT)
		wsecc_refuse(g, (size_t)n, WSECC_WHY_OP, "the device has softmax_xent only");
	return 0;
}

int wsecc_graph_from_model(const struct wsecc_model *m, struct wsecc_graph **out,
			   struct wsecc_error *err)
{
	struct wsecc_graph *g;

	if (!m || !out)
		return wsecc_fail(err, NULL, 0, 0, "no model");
	g = wsecc_graph_new(m->file);
	if (!g)
		return wsecc_fail(err, m->file, 0, 0, "out of memory");
	snprintf(g->name, sizeof(g->name), "%s", m->name);
	snprintf(g->producer, sizeof(g->producer), "wse model text");
	g->batch = m->batch;
	g->opt = m->opt;
	g->seed = m->seed;
	if (lower_model(m, g)) {
		wsecc_graph_free(g);
		return wsecc_fail(err, m->file, 0, 0, "out of memory");
	}
	*out = g;
	return 0;
}

/* --- checking and listing ------------------------------------------------------- */

int wsecc_graph_check(const struct wsecc_graph *g, struct wsecc_error *err)
{
	/* A refused node first: a pending one is often its consequence (a
	 * pattern that did not match because a node in it was refused).
	 */
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state == WSECC_NODE_REFUSED && n->why != WSECC_WHY_INPUT)
			return wsecc_fail(err, g->file, n->line, n->line ? 1 : 0,
					  "node %s (%s): %s: %s", n->name, n->op_type,
					  wsecc_why_name(n->why), n->reason);
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state == WSECC_NODE_REFUSED)
			return wsecc_fail(err, g->file, n->line, n->line ? 1 : 0,
					  "node %s (%s): %s: %s", n->name, n->op_type,
					  wsecc_why_name(n->why), n->reason);
		if (n->state == WSECC_NODE_PENDING)
			return wsecc_fail(err, g->file, n->line, n->line ? 1 : 0,
					  "node %s (%s): unsupported op: it runs only as part of a fused pattern, and none matched",
					  n->name, n->op_type);
	}
	return 0;
}

void wsecc_graph_counts(const struct wsecc_graph *g, size_t counts[WSECC_NODE_REFUSED + 1])
{
	memset(counts, 0, (WSECC_NODE_REFUSED + 1) * sizeof(*counts));
	for (size_t i = 0; i < g->n_nodes; i++)
		counts[g->nodes[i].state]++;
}

static void shape_str(const struct wsecc_tensor *t, char *buf, size_t len)
{
	size_t at = 0;

	if (!t->shape_known) {
		snprintf(buf, len, "?");
		return;
	}
	at += (size_t)snprintf(buf + at, len - at, "[");
	for (unsigned i = 0; i < t->rank && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "," : "",
				       (long long)t->dims[i]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
}

void wsecc_graph_list(FILE *f, const struct wsecc_graph *g)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];
		char shape[64] = "";

		if (n->n_out && n->out[0] >= 0)
			shape_str(&g->tensors[n->out[0]], shape, sizeof(shape));
		fprintf(f, "  %-4zu %-40s %-24s ", i, n->name, n->op_type);
		switch (n->state) {
		case WSECC_NODE_KERNEL:
		case WSECC_NODE_LOSS:
			fprintf(f, "-> %-18s %s\n", n->kernel, shape);
			break;
		case WSECC_NODE_FOLDED:
			fprintf(f, "-> (constant, folded) %s\n", shape);
			break;
		case WSECC_NODE_FUSED:
			fprintf(f, "-> (in %s: %s)\n", g->nodes[n->fused_into].name,
				g->nodes[n->fused_into].kernel);
			break;
		case WSECC_NODE_PENDING:
			fprintf(f, "-> NO KERNEL: unsupported op (only inside a fused pattern, none matched)\n");
			break;
		case WSECC_NODE_REFUSED:
			fprintf(f, "-> NO KERNEL: %s: %s\n", wsecc_why_name(n->why), n->reason);
			break;
		}
	}
}
