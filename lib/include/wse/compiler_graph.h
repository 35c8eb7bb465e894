/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/compiler_graph.h: the compiler's graph IR, which both front ends
 * lower to, and what is done with it.
 *
 *   model text --wsecc_parse_file()--> struct wsecc_model --wsecc_graph_from_model()--\
 *   model.onnx --wsecc_onnx_import()-------------------------------------------------> struct wsecc_graph
 *              --wsecc_graph_list()      each node and its kernel, or why none
 *              --wsecc_graph_check()     the first node without one, as an error
 *              --wsecc_graph_to_engine() an engine graph (wse/engine_graph.h) to run
 *
 * A graph is tensors (inputs, trainable parameters, constants, values
 * computed by nodes) and nodes in execution order. Every shape is static:
 * the importer binds a symbolic batch dimension to a number and folds the
 * shape arithmetic an exporter writes (Shape, Gather, Concat, ...) into
 * constants. Each node ends up in one state: mapped to an engine kernel,
 * folded into a constant, fused into another node (the exported pieces of
 * attention or GELU), or refused with a reason. Documentation/onnx-import.rst.
 */
#ifndef WSE_COMPILER_GRAPH_H
#define WSE_COMPILER_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "wse/compiler.h"
#include "wse/engine_graph.h"

#define WSECC_MAX_RANK ENGINE_MAX_RANK

/* Element types, numbered as ONNX's TensorProto.DataType. */
enum wsecc_dtype {
	WSECC_DT_UNDEFINED = 0,
	WSECC_DT_F32 = 1,
	WSECC_DT_U8 = 2,
	WSECC_DT_I8 = 3,
	WSECC_DT_U16 = 4,
	WSECC_DT_I16 = 5,
	WSECC_DT_I32 = 6,
	WSECC_DT_I64 = 7,
	WSECC_DT_STRING = 8,
	WSECC_DT_BOOL = 9,
	WSECC_DT_F16 = 10,
	WSECC_DT_F64 = 11,
	WSECC_DT_U32 = 12,
	WSECC_DT_U64 = 13,
	WSECC_DT_BF16 = 16,
};

const char *wsecc_dtype_name(enum wsecc_dtype dt);

enum wsecc_tensor_kind {
	WSECC_T_INPUT,		/* fed per step (pixels, tokens) */
	WSECC_T_PARAM,		/* trainable fp32, with initial data */
	WSECC_T_CONST,		/* fixed data: folded shapes, masks, node-test bindings */
	WSECC_T_VALUE,		/* computed by a node */
	WSECC_T_STATE,		/* fp32 data the forward pass updates, never trained
				 * (BatchNormalization's running statistics) */
};

/**
 * struct wsecc_tensor - one tensor
 * @data: PARAM and CONST: the elements, fp32 as float, int64 as int64_t,
 *	bool as uint8_t (other types are not kept)
 * @producer: the node computing a VALUE, -1 otherwise
 * @input_scale: an INPUT of u8 pixels is multiplied by this (text models)
 * @from_initializer: the data comes from the model's initializers (its
 *	weights and buffers), directly or through folding; such fp32 data
 *	that a kernel consumes is trained (the importer makes it a PARAM)
 * @no_values: an initializer whose values were not read (--no-weights) or
 *	that has none (a shapes-only export): @data is NULL, the shape is real
 * @data_mapped: @data points into a memory-mapped external data file
 *	(the graph owns the mapping; the tensor does not free it)
 * @source: the importer's, while importing: where the values of an
 *	initializer not read yet are (NULL once read, and after the import)
 */
struct wsecc_tensor {
	char *name;
	enum wsecc_dtype dtype;
	enum wsecc_tensor_kind kind;
	bool shape_known;
	unsigned rank;
	int64_t dims[WSECC_MAX_RANK];
	void *data;
	int producer;
	float input_scale;
	bool from_initializer;
	bool no_values;
	bool data_mapped;
	const void *source;
	bool initializer;	/* one of the model's initializers */
	bool frozen;		/* an initializer --freeze keeps constant */
};

enum wsecc_node_state {
	WSECC_NODE_KERNEL,	/* runs engine op @op */
	WSECC_NODE_LOSS,	/* the loss: softmax cross-entropy */
	WSECC_NODE_FOLDED,	/* computed at compile time into a constant */
	WSECC_NODE_FUSED,	/* part of node @fused_into */
	WSECC_NODE_PENDING,	/* shape known; only runs inside a fused pattern */
	WSECC_NODE_REFUSED,	/* no kernel: @why, @reason */
};

enum wsecc_why {
	WSECC_WHY_NONE,
	WSECC_WHY_OP,		/* unsupported op */
	WSECC_WHY_SHAPE,	/* dynamic or unsupported shape */
	WSECC_WHY_DTYPE,	/* unsupported element type */
	WSECC_WHY_ATTR,		/* unsupported attribute or attribute value */
	WSECC_WHY_INPUT,	/* an input comes from a refused node */
};

const char *wsecc_why_name(enum wsecc_why why);

#define WSECC_REASON_MAX 200

struct wsecc_node {
	char *name;		/* never empty: the importer names anonymous nodes */
	char *op_type;		/* ONNX's, or the text model's ("Gemm", "Relu") */
	size_t n_in, n_out;
	int *in, *out;		/* tensor indices; -1 for an absent optional input */
	enum wsecc_node_state state;
	enum engine_op op;
	struct engine_node_attrs attrs;
	const char *kernel;	/* e.g. "conv2d_f32" (KERNEL, LOSS, fused patterns) */
	int fused_into;
	enum wsecc_why why;
	char reason[WSECC_REASON_MAX];
	unsigned line;		/* text models: the statement's line */
};

struct wsecc_mapped;

/*
 * @mapped, @n_mapped: the external data files mapped for the tensors'
 * values (compiler_onnx_external.c), unmapped with the graph
 */
struct wsecc_graph {
	char file[WSECC_PATH_MAX];
	char name[WSEP_NAME_MAX];
	char producer[64];
	int64_t opset;
	int64_t batch;
	size_t n_tensors, cap_tensors;
	struct wsecc_tensor *tensors;
	size_t n_nodes, cap_nodes;
	struct wsecc_node *nodes;
	size_t n_inputs, n_outputs;
	int inputs[8], outputs[8];	/* the graph's data inputs and outputs */
	/* Training, from the text model (ONNX: the trainer's choice). */
	struct wsep_optimizer opt;
	uint64_t seed;
	struct wsecc_mapped *mapped;
	size_t n_mapped;
	bool trainable_listed;	/* the model says its parameters ("wse.parameters") */
	/* About the parameters, one a line, each "warning: " or "note: " (or NULL). */
	char *notes;
};

/**
 * struct wsecc_bind - a graph input given a fixed value at import
 * (ONNX node tests bind their shapes and indices this way)
 */
struct wsecc_bind {
	const char *name;
	enum wsecc_dtype dtype;
	unsigned rank;
	int64_t dims[WSECC_MAX_RANK];
	const void *data;
};

/**
 * struct wsecc_onnx_options - how to import
 * @batch: the value of a symbolic first dimension of the inputs (0: 1)
 * @binds, @n_binds: inputs that become constants
 * @no_weights: do not read the weights (the fp32 initializers that kernels
 *	consume): they become PARAMs with @no_values. Initializers that
 *	folding or the importer's checks need (shapes, axes, masks) are still
 *	read where the model has their values.
 * @freeze, @n_freeze: glob patterns (fnmatch()); an initializer whose name
 *	matches one stays a constant, even one the model lists as a
 *	parameter. A pattern that matches no initializer is an error.
 *
 * An initializer's values are read when they are needed, not before: by a
 * node that folds over it, by the importer's checks of a node, or at the
 * end of the import for the kernels that consume it. Values in an external
 * data file (ONNX external_data: location, offset, length, relative to the
 * model's directory) are memory-mapped, so reading them costs no copy and
 * pages come in only when touched.
 */
struct wsecc_onnx_options {
	int64_t batch;
	const struct wsecc_bind *binds;
	size_t n_binds;
	bool no_weights;
	const char *const *freeze;
	size_t n_freeze;
};

/* Largest .onnx file read, and largest constant folded, in bytes. */
#define WSECC_ONNX_MAX_BYTES	(2ULL << 30)
#define WSECC_FOLD_MAX_ELEMS	(1ULL << 24)

/**
 * wsecc_onnx_import() - read an .onnx file into a graph
 * @opt: may be NULL (batch 1, nothing bound)
 *
 * Return: 0 with *@out set, even when some nodes are refused (see
 * wsecc_graph_check()); -EINVAL with @err for a file that cannot be read, is
 * not an ONNX model (truncated, corrupted), uses an opset older than 13,
 * or describes an inconsistent graph (a tensor used before it is made, an
 * initializer whose data does not match its shape); the message names
 * the node or tensor.
 */
int wsecc_onnx_import(const char *path, const struct wsecc_onnx_options *opt,
		      struct wsecc_graph **out, struct wsecc_error *err);
/*
 * The same from bytes in memory; @name is used in messages, and external
 * data locations are relative to its directory.
 */
int wsecc_onnx_import_buffer(const void *buf, size_t len, const char *name,
			     const struct wsecc_onnx_options *opt, struct wsecc_graph **out,
			     struct wsecc_error *err);

/**
 * wsecc_onnx_read_tensor() - read a serialized TensorProto (a node test's
 * input_N.pb) into @t (free with wsecc_tensor_release())
 */
int wsecc_onnx_read_tensor(const char *path, struct wsecc_tensor *t, struct wsecc_error *err);
void wsecc_tensor_release(struct wsecc_tensor *t);

/* The text model as a graph: per layer Gemm (transB) and Relu, then the loss. */
int wsecc_graph_from_model(const struct wsecc_model *m, struct wsecc_graph **out,
			   struct wsecc_error *err);

void wsecc_graph_free(struct wsecc_graph *g);

/* 0 when every node runs (kernel, folded or fused); else -EINVAL with @err at
 * the first refused node: "node NAME (OP): why: reason".
 */
int wsecc_graph_check(const struct wsecc_graph *g, struct wsecc_error *err);

/* Counts of nodes per state. */
void wsecc_graph_counts(const struct wsecc_graph *g, size_t counts[WSECC_NODE_REFUSED + 1]);

/* The --validate-only listing: one line per node. */
void wsecc_graph_list(FILE *f, const struct wsecc_graph *g);
/* The parameters it trains and the initializers frozen, one a line, with shapes. */
void wsecc_graph_list_params(FILE *f, const struct wsecc_graph *g);

/* Index of the tensor named @name, or -1. */
int wsecc_graph_find(const struct wsecc_graph *g, const char *name);

/* Number of elements of tensor @t (1 for a scalar). */
uint64_t wsecc_tensor_numel(const struct wsecc_tensor *t);

/**
 * wsecc_graph_to_engine() - build the engine graph of a checked graph
 * @ids: per tensor of @g, its engine value id, or -1 (folded away)
 * @labels: set to the id of the labels input when the graph has a loss
 *	node or @add_loss is set (-1 otherwise)
 * @add_loss: append the token-level softmax cross-entropy of the graph's
 *	first output against a new int64 labels input (ONNX models have no
 *	loss of their own)
 * The caller prepares @eg. Return: 0, or -EINVAL with @err.
 */
int wsecc_graph_to_engine(const struct wsecc_graph *g, struct engine_graph *eg, int *ids,
			  bool add_loss, int *labels, struct wsecc_error *err);

/**
 * struct wsecc_graph_options - how to compile an ONNX model into a program
 * @batch: the batch (the value of the inputs' symbolic first dimension)
 * @micro_batch: samples per micro-batch (0: the compiler chooses), as for
 *	a text model's
 * @mode: as for a text model
 * @recompute: activation checkpointing in weight streaming (auto: when
 *	a micro-batch's full activations do not fit)
 * @opt: the optimizer and its learning-rate schedule (ONNX has none)
 * @seed: dropout masks and the host's batch order
 * @float_input: what a float input is fed with: WSEP_ELEM_U8 (pixels,
 *	scaled by 1/255 on the device) or WSEP_ELEM_F32
 * @no_weights: compile from shapes alone (wsecc_onnx_options.no_weights):
 *	the program is planned and estimated and its graph checked, but it
 *	has no weights (prog->weights is NULL), so it cannot be written
 *	(wsep_write() refuses it): it is for the report
 * @freeze, @n_freeze: as for wsecc_onnx_options
 * @precision: compute precision (wsecc --precision), as for a text model's
 */
struct wsecc_graph_options {
	uint32_t batch;
	uint32_t micro_batch;
	enum wsep_precision precision;
	enum wsecc_mode mode;
	enum wsecc_recompute recompute;
	struct wsep_optimizer opt;
	uint64_t seed;
	enum wsep_elem float_input;
	bool no_weights;
	const char *const *freeze;
	size_t n_freeze;
};

/**
 * struct wsecc_graph_program - an ONNX model compiled for a wafer
 * @plan: the mode, each unit's region and estimate (as for a text model)
 * @prog: the program, with its graph and initial weights
 * @unit_ops: per unit, its kernels in order ("conv2d relu maxpool2d")
 */
struct wsecc_graph_program {
	char file[WSECC_PATH_MAX];
	char producer[64];
	int64_t opset;
	struct wsecc_plan plan;
	struct wsep_program *prog;
	uint64_t params;
	char unit_ops[WSECC_MAX_LAYERS][96];
	char *notes;	/* the importer's wsecc_graph.notes (or NULL) */
};

/**
 * wsecc_graph_compile() - import @path, cut its graph into units, place
 * or stream them on @w, and build the program
 *
 * The model is imported twice, at the batch and at one more, to find the
 * dimension of each tensor that is the batch (so the device can run
 * micro-batches and short batches); a graph whose shapes depend on the
 * batch otherwise is refused.
 * Return: 0 with *@out set (free with wsecc_graph_program_free()), or a
 * negative errno with @err naming the node, tensor or limit.
 */
int wsecc_graph_compile(const char *path, const struct wsecc_graph_options *o,
			const struct wse_wafer *w, struct wsecc_graph_program **out,
			struct wsecc_error *err);
/* The same from the file's bytes in memory; @name as for wsecc_onnx_import_buffer(). */
int wsecc_graph_compile_buffer(const void *buf, size_t len, const char *name,
			       const struct wsecc_graph_options *o, const struct wse_wafer *w,
			       struct wsecc_graph_program **out, struct wsecc_error *err);
void wsecc_graph_program_free(struct wsecc_graph_program *gp);

/* The --report of a compiled ONNX model: its units, then the estimate. */
void wsecc_graph_report(FILE *f, const struct wsecc_graph_program *gp);

#endif /* WSE_COMPILER_GRAPH_H */
