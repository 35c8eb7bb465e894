/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libwseengine's graph executor: runs a graph of the ops of
 * wse/engine_ops.h — forward, a token-level softmax cross-entropy loss,
 * backward and the optimizer update — on the host, with every buffer
 * allocated once by engine_graph_prepare(). The compiler builds a graph
 * from an imported model (wsecc_graph_to_engine()); the firmware will build
 * the same from a program. Documentation/engine.rst, "The graph executor".
 *
 * A graph is values (tensors of fixed shape: inputs fed per step, trainable
 * parameters, constants, activations) and nodes (an op, its attributes, its
 * input and output values), added in execution order: a node's inputs must
 * be values that are inputs, parameters, constants or outputs of earlier
 * nodes. prepare() checks every node's output shapes against what its op
 * computes from its input shapes, so a graph that describes an impossible
 * computation is refused before anything runs.
 */
#ifndef WSE_ENGINE_GRAPH_H
#define WSE_ENGINE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wse/engine.h"
#include "wse/engine_ops.h"

#define ENGINE_GRAPH_MAX_IO	8	/* inputs or outputs of one node */

enum engine_dtype {
	ENGINE_DT_F32,
	ENGINE_DT_I64,		/* token ids, gather indices, labels */
};

enum engine_value_kind {
	ENGINE_VAL_INPUT,	/* fed with engine_graph_set_input() each step */
	ENGINE_VAL_PARAM,	/* trained: gradient and optimizer state */
	ENGINE_VAL_CONST,	/* fixed data */
	ENGINE_VAL_ACT,		/* computed by a node */
	/* fp32 data that the forward pass updates and nothing trains: the
	 * running statistics of batch normalization (inputs 3 and 4).
	 */
	ENGINE_VAL_STATE,
};

enum engine_op {
	ENGINE_OP_CONV2D,	/* x, w[, b] -> y */
	ENGINE_OP_MAXPOOL2D,	/* x -> y */
	ENGINE_OP_AVGPOOL2D,	/* x -> y */
	ENGINE_OP_GEMM,		/* a, b[, c] -> y */
	ENGINE_OP_MATMUL,	/* a, b -> y */
	ENGINE_OP_BINARY,	/* a, b -> y (Add, Sub, Mul, Div) */
	ENGINE_OP_ACT,		/* x -> y (ReLU, Tanh, Sigmoid, GELU, SiLU) */
	ENGINE_OP_LAYERNORM,	/* x, scale[, bias] -> y[, mean, inv_std_dev] (no gradient) */
	ENGINE_OP_SOFTMAX,	/* x -> y */
	ENGINE_OP_GATHER,	/* data, indices (i64) -> y */
	ENGINE_OP_ATTENTION,	/* q, k, v[, key mask [batch, seq] or [batch, 1, 1, seq]] -> y */
	ENGINE_OP_DROPOUT,	/* x -> y[, mask (1 kept, 0 dropped)] */
	ENGINE_OP_TRANSPOSE,	/* x -> y */
	ENGINE_OP_SPLIT,	/* x -> y0, y1, ... */
	ENGINE_OP_RESHAPE,	/* x -> y, same elements (Reshape, Flatten, Identity, ...) */
	/* x, scale, bias, running mean, running var -> y[, running mean, running var] */
	ENGINE_OP_BATCHNORM,
	ENGINE_OP_RMSNORM,	/* x, scale -> y */
	ENGINE_OP_ROTARY,	/* x [batch, seq, width], cos, sin (constants [seq, head width]) -> y */
	ENGINE_OP_CONCAT,	/* x0, x1, ... -> y, along the axis */
	ENGINE_OP_SLICE,	/* x -> y = x[start:start + y's length] along the axis */
	ENGINE_OP_WHERE,	/* cond (a constant, 1 or 0), a, b -> y = cond ? a : b */
	ENGINE_OP_COUNT,
};

/* Attributes; the fields of the node's op apply. */
struct engine_node_attrs {
	/* CONV2D and pools: pads top, left, bottom, right */
	size_t kernel[2], stride[2], dilation[2], pads[4];
	bool ceil_mode, count_include_pad;
	/* GEMM */
	bool trans_a, trans_b;
	float alpha, beta;
	/* BINARY, ACT */
	enum engine_binary_kind binary;
	enum engine_act_kind act;
	/* LAYERNORM, RMSNORM, SOFTMAX, GATHER, SPLIT, CONCAT, SLICE: the axis, >= 0 */
	size_t axis;
	size_t start;		/* SLICE: the first element taken along the axis */
	float epsilon;		/* LAYERNORM, RMSNORM, BATCHNORM */
	/* BATCHNORM: ONNX's momentum (the running statistics' weight); batch
	 * statistics when training (else the running ones always); the
	 * running variance unbiased (PyTorch's) rather than biased (ONNX's)
	 */
	float momentum;
	bool training_mode, unbiased;
	/* ATTENTION, ROTARY */
	size_t heads;
	float scale;
	bool causal;
	/* DROPOUT */
	float ratio;
	/* TRANSPOSE */
	size_t perm[ENGINE_MAX_RANK];
};

struct engine_graph;

int engine_graph_create(struct engine_graph **g);
void engine_graph_destroy(struct engine_graph *g);

/*
 * Adds a value; returns its id (>= 0) or a negative errno. @data (PARAM,
 * CONST; NULL for the others) is copied: floats, or int64 for ENGINE_DT_I64.
 * Parameters are fp32. A rank of 0 is a scalar. A parameter may come
 * without data (a compiler that needs only the graph's shapes, or weights
 * bound later): it holds no memory until prepare(), which zeroes it.
 */
int engine_graph_add_value(struct engine_graph *g, enum engine_dtype dtype,
			   enum engine_value_kind kind, size_t rank, const size_t *dims,
			   const void *data);
/* Adds a node; inputs and outputs are value ids, -1 for an absent optional one. */
int engine_graph_add_node(struct engine_graph *g, enum engine_op op,
			  const struct engine_node_attrs *attrs, size_t n_in, const int *in,
			  size_t n_out, const int *out);
/*
 * The loss: softmax cross-entropy of @logits ([..., classes]) against
 * @labels (an ENGINE_DT_I64 input with the logits' shape less the last
 * dimension), averaged over every row.
 */
int engine_graph_set_loss(struct engine_graph *g, int logits, int labels);
/*
 * Checks every node's shapes and attributes against its op without
 * allocating anything (only parameters and constants hold memory before
 * prepare()): a graph from an untrusted source is checked before the sizes
 * it claims are allocated. -EINVAL names nothing: engine_graph_error() says
 * which node and why.
 */
int engine_graph_check(struct engine_graph *g);
/*
 * Checks (if not done yet) and allocates inputs, activations, gradients,
 * scratch and the state of optimizer @kind.
 */
int engine_graph_prepare(struct engine_graph *g, enum engine_optim_kind kind);
const char *engine_graph_error(const struct engine_graph *g);

size_t engine_graph_values(const struct engine_graph *g);
size_t engine_graph_nodes(const struct engine_graph *g);
/* Shape of value @id: rank, and dims into @dims (ENGINE_MAX_RANK). */
int engine_graph_shape(const struct engine_graph *g, int id, size_t *rank, size_t *dims);
enum engine_value_kind engine_graph_kind(const struct engine_graph *g, int id);
enum engine_dtype engine_graph_dtype(const struct engine_graph *g, int id);
/*
 * Node @i as it was added: its op, attributes, inputs and outputs (room for
 * ENGINE_GRAPH_MAX_IO each). -EINVAL for a node that does not exist.
 */
int engine_graph_node(const struct engine_graph *g, size_t i, enum engine_op *op,
		      struct engine_node_attrs *a, size_t *n_in, int *in, size_t *n_out, int *out);
/* The loss's logits and labels values; -1 when the graph has no loss. */
void engine_graph_loss_values(const struct engine_graph *g, int *logits, int *labels);
/* Trainable parameters, counted in floats. */
size_t engine_graph_param_floats(const struct engine_graph *g);

/* Copies a step's data into input @id (floats or int64, by its dtype). */
int engine_graph_set_input(struct engine_graph *g, int id, const void *data);
/* The buffer of value @id (after prepare); parameters may be written. */
void *engine_graph_data(struct engine_graph *g, int id);
/*
 * Parameter (or state) @id reads and updates @data (its floats) from now on instead of
 * its own copy; NULL goes back to the own copy. Several graphs of the same
 * model at different batches can share one set of weights this way, and
 * weights that arrive in a buffer are used where they are.
 */
int engine_graph_bind(struct engine_graph *g, int id, float *data);
/* The gradient of value @id after engine_graph_backward(); NULL if none. */
const float *engine_graph_grad(const struct engine_graph *g, int id);

/*
 * Forward pass. Dropout applies only when @training, with masks drawn from
 * @seed (mixed with each node's index, so nodes differ); batch
 * normalization of training_mode uses the batch's statistics and updates
 * its running ones (STATE values) only when @training.
 */
int engine_graph_forward(struct engine_graph *g, bool training, uint64_t seed);
/*
 * The forward pass of nodes [@first, @end) only, for a graph run a part at
 * a time (a pipeline stage, a streamed block): the parts in order make
 * engine_graph_forward(). A part starting at node 0 begins a step.
 */
int engine_graph_forward_nodes(struct engine_graph *g, size_t first, size_t end, bool training,
			       uint64_t seed);
/*
 * Activation checkpointing, for a graph run a part at a time in training.
 * engine_graph_forget_nodes() drops what nodes [@first, @end) keep for
 * their backward pass: the values they make that no later node reads
 * (their outputs read later, the next part's input, stay) and their saved
 * state (normalization statistics, attention probabilities, dropout
 * masks). The memory stays allocated; the values are overwritten (NaN),
 * so a backward pass that used them without recomputing them would
 * produce NaN. engine_graph_recompute_nodes() makes them again: the
 * training forward pass of those nodes with the step's @seed (the same
 * dropout masks), after the loss and before their backward pass, without
 * starting a step as engine_graph_forward_nodes() from node 0 would.
 */
int engine_graph_forget_nodes(struct engine_graph *g, size_t first, size_t end);
int engine_graph_recompute_nodes(struct engine_graph *g, size_t first, size_t end, uint64_t seed);
/* Loss and correct count of the last forward pass; with @grad the loss's
 * gradient too, which engine_graph_backward() carries back.
 */
int engine_graph_loss(struct engine_graph *g, bool grad, struct engine_loss_result *res);
/*
 * The same with the gradient divided by @norm rows instead of this graph's
 * own (0: its own, those whose label is not ENGINE_XENT_IGNORE): the rows
 * of a whole batch when this graph holds one micro-batch of it, so that
 * the micro-batches' gradients add up to the batch's.
 */
int engine_graph_loss_norm(struct engine_graph *g, bool grad, size_t norm,
			   struct engine_loss_result *res);
int engine_graph_backward(struct engine_graph *g);
/* The backward pass of nodes [@first, @end), parts in reverse order. */
int engine_graph_backward_nodes(struct engine_graph *g, size_t first, size_t end);
/* One optimizer step (of the kind given to prepare) of every parameter
 * that received a gradient; @lr >= 0 overrides opt->lr (a schedule's
 * value, which may reach 0), a negative @lr keeps opt->lr.
 */
int engine_graph_update(struct engine_graph *g, const struct engine_optim *opt, uint64_t t,
			double lr);
/* forward (training), loss, backward, update: one training step. */
int engine_graph_train_step(struct engine_graph *g, const struct engine_optim *opt, uint64_t t,
			    double lr, uint64_t seed, struct engine_loss_result *res);

/*
 * fp16 loss scaling (wse/engine.h, engine_loss_scaler): the loss gradient
 * is multiplied by @scale (1 at first, > 0 and finite);
 * engine_graph_unscale() divides the parameters' gradients by it again and
 * says whether every one is finite. engine_graph_train_step_scaled() is a
 * training step with the scaler's scale that updates only when every
 * gradient is finite (*stepped), as PyTorch's GradScaler.step(), then
 * moves the scaler on (GradScaler.update()).
 */
int engine_graph_set_loss_scale(struct engine_graph *g, float scale);
int engine_graph_unscale(struct engine_graph *g, bool *finite);
int engine_graph_train_step_scaled(struct engine_graph *g, const struct engine_optim *opt,
				   uint64_t t, double lr, uint64_t seed,
				   struct engine_loss_scaler *scaler,
				   struct engine_loss_result *res, bool *stepped);

#endif /* WSE_ENGINE_GRAPH_H */
