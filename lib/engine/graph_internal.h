/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The graph executor's structures, shared by graph.c and graph_exec.c. */
#ifndef WSE_ENGINE_GRAPH_INTERNAL_H
#define WSE_ENGINE_GRAPH_INTERNAL_H

#include "wse/engine_graph.h"

struct gvalue {
	enum engine_dtype dtype;
	enum engine_value_kind kind;
	size_t rank, dims[ENGINE_MAX_RANK], n;
	void *data;		/* float or int64_t [n]: @own, or bound memory */
	void *own;		/* what the graph allocated (and frees) */
	float *grad;		/* [n] when requires_grad */
	float *state[2];	/* optimizer state of a parameter */
	int producer;		/* node index, -1 if none */
	bool requires_grad;
	bool fresh;		/* grad holds this step's gradient */
};

struct gnode {
	enum engine_op op;
	struct engine_node_attrs a;
	size_t n_in, n_out;
	int in[ENGINE_GRAPH_MAX_IO], out[ENGINE_GRAPH_MAX_IO];
	/* Set by prepare: the kernel's own description. */
	union {
		struct engine_conv2d conv;
		struct engine_pool2d pool;
		struct engine_gemm gemm;
		struct engine_matmul mm;
		struct engine_binary bin;
		struct engine_attention att;
		struct engine_rotary rot;
		struct engine_batchnorm bn;
		struct engine_where wh;
	} k;
	/* layernorm (outer rows x inner cols), softmax, gather, split, concat, slice */
	size_t outer, len, inner;
	size_t sizes[ENGINE_GRAPH_MAX_IO];	/* split, concat */
	float *aux;		/* layernorm and batchnorm mean and rstd, attention probabilities */
	uint8_t *keep;		/* dropout mask */
	size_t aux_n, keep_n;	/* their sizes, set by the check */
	bool dropped;		/* dropout applied, batch statistics used, in the last forward pass */
};

struct engine_graph {
	struct gvalue *v;
	size_t nv, cap_v;
	struct gnode *n;
	size_t nn, cap_n;
	int loss_logits, loss_labels;
	size_t loss_rows, classes;
	bool checked, prepared, forward_done, loss_done;
	float loss_scale;	/* the loss gradient's factor (fp16 loss scaling); 1 */
	enum engine_optim_kind kind;
	float *scratch;		/* im2col, attention backward */
	float *acc[3];		/* gradients to add into a tensor's gradient */
	size_t max_n;
	char err[256];
};

#endif
