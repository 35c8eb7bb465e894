/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/wsep.h: the .wsep program binary - what the compiler produces and
 * the firmware executes. Documentation/wsep-format.rst is the byte-level
 * specification; this header is its C interface.
 *
 * A program is self-describing: the wafer it was compiled for, execution
 * mode, batch and seed, input, layers, loss, optimizer, a region per
 * layer, the streams, the compiler's estimates and, optionally, initial
 * weights. A graph program (format 1.1, feature WSEP_FEATURE_GRAPH) also
 * carries a graph of engine ops, and its "layers" are the units the graph
 * is cut into: a pipeline stage each, and what weight streaming streams. Everything on disk is little-endian; every section carries a
 * CRC32C. The firmware must run a file through wsep_read() (which
 * validates) before using anything in it: the file is untrusted.
 */
#ifndef WSE_WSEP_H
#define WSE_WSEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wse/layers.h"

#define WSEP_MAGIC		0x50455357U	/* "WSEP" on disk */
#define WSEP_VERSION_MAJOR	1
#define WSEP_VERSION_MINOR	6	/* 6: fed inputs; 5: precision; 4: recompute; 3: micro-batches; 2: parameter names */
#define WSEP_HEADER_SIZE	64U
#define WSEP_SECTION_ENTRY_SIZE	32U

/* Hard limits every reader enforces. */
#define WSEP_MAX_SECTIONS	32U
#define WSEP_MAX_LAYERS		((uint32_t)WSE_MAX_LAYERS)
#define WSEP_MAX_STREAMS	(4U + 2U * WSEP_MAX_LAYERS + 8U)
#define WSEP_MAX_DIM		(1U << 24)	/* largest layer or input dimension */
/* Elements per sample entering or leaving a graph unit: the layer record's u32 fields. */
#define WSEP_MAX_UNIT_ELEMS	UINT32_MAX
#define WSEP_MAX_BATCH		65536U
#define WSEP_NAME_MAX		32U		/* model name, NUL included */
#define WSEP_WAFER_NAME_MAX	16U
#define WSEP_STREAM_NAME_MAX	16U

/*
 * Required features: the header's feature bits (the "flags" of format 1.0,
 * which must be 0 there) say what a reader must support to run the
 * program. A reader refuses a program with a bit it does not know, naming
 * it; readers of format 1.0 refuse any bit ("unknown header flags 0x1").
 * wsep_write() sets them from what the program uses, and the reader checks
 * that they match it.
 */
#define WSEP_FEATURE_GRAPH	0x1U	/* a graph of engine ops (sections graph..constants) */
#define WSEP_FEATURE_TRAINING	0x2U	/* AdamW, Nesterov or dampening, a learning-rate schedule */
#define WSEP_FEATURE_MICRO_BATCH	0x4U	/* the batch is cut into micro-batches that fit */
#define WSEP_FEATURE_RECOMPUTE	0x8U	/* activation checkpointing (WSEP_EXEC_RECOMPUTE) */
#define WSEP_FEATURE_PRECISION	0x10U	/* 16-bit compute (fp16 or bf16), format 1.5 */
#define WSEP_FEATURE_INPUTS	0x20U	/* a graph fed more than one input per sample, format 1.6 */
#define WSEP_FEATURES_KNOWN	(WSEP_FEATURE_GRAPH | WSEP_FEATURE_TRAINING | \
				 WSEP_FEATURE_MICRO_BATCH | WSEP_FEATURE_RECOMPUTE | \
				 WSEP_FEATURE_PRECISION | WSEP_FEATURE_INPUTS)

/*
 * struct wsep_program's exec_flags. RECOMPUTE (weight streaming, graph
 * programs): each unit but the last keeps only its input between its
 * forward and backward passes and recomputes the rest from it before its
 * backward pass (Documentation/compiler.rst, "Activation checkpointing").
 */
#define WSEP_EXEC_RECOMPUTE	0x1U
#define WSEP_EXEC_KNOWN		WSEP_EXEC_RECOMPUTE

/* Section types. Types with bit 15 set are optional: a reader that does not
 * know one skips it; an unknown type without that bit is refused.
 */
enum wsep_section_type {
	WSEP_SEC_WAFER = 1,
	WSEP_SEC_PROGRAM = 2,
	WSEP_SEC_LAYERS = 3,
	WSEP_SEC_REGIONS = 4,
	WSEP_SEC_STREAMS = 5,
	WSEP_SEC_ESTIMATES = 6,
	WSEP_SEC_SUMMARY = 7,
	WSEP_SEC_WEIGHTS = 8,
	WSEP_SEC_GRAPH = 9,		/* graph programs: what the graph reads and writes */
	WSEP_SEC_VALUES = 10,		/* ... its tensors */
	WSEP_SEC_NODES = 11,		/* ... its ops, in execution order */
	WSEP_SEC_CONSTANTS = 12,	/* ... the constants' bytes (absent if none) */
	/* Optional (format 1.2): each parameter tensor's name; readers may skip it. */
	WSEP_SEC_PARAM_NAMES = 0x800D,
};
#define WSEP_SEC_OPTIONAL_BIT	0x8000U

/* On-disk record sizes (a newer minor version may append fields: readers
 * accept larger records and read the prefix they know).
 */
#define WSEP_WAFER_RECORD	96U
#define WSEP_PROGRAM_RECORD	184U	/* 176 in 1.3 and 1.4, 168 in 1.1 and 1.2, 128 in 1.0 */
#define WSEP_PROGRAM_RECORD_1_3	176U
#define WSEP_PROGRAM_RECORD_1_1	168U
#define WSEP_PROGRAM_RECORD_1_0	128U
#define WSEP_LAYER_RECORD	40U	/* 32 in format 1.0 */
#define WSEP_LAYER_RECORD_1_0	32U
#define WSEP_REGION_RECORD	16U
#define WSEP_STREAM_RECORD	48U
#define WSEP_ESTIMATE_RECORD	48U
#define WSEP_SUMMARY_RECORD	48U
#define WSEP_GRAPH_RECORD	64U
#define WSEP_VALUE_RECORD	80U
#define WSEP_NODE_RECORD	176U
#define WSEP_PARAM_NAME_RECORD	328U

enum wsep_mode {
	WSEP_MODE_PIPELINED = 1,
	WSEP_MODE_WEIGHT_STREAMING = 2,
};

/*
 * Compute precision (format 1.5): the inputs of every matrix product in
 * 16 bits with fp32 accumulation; master weights, optimizer state and the
 * other kernels fp32. fp16 scales the loss (GradScaler's rules).
 */
enum wsep_precision {
	WSEP_PRECISION_FP32 = 0,
	WSEP_PRECISION_FP16 = 1,
	WSEP_PRECISION_BF16 = 2,
};

enum wsep_layer_kind {
	WSEP_LAYER_DENSE = 1,	/* y = W x + b, W is [out][in] */
	WSEP_LAYER_UNIT = 2,	/* graph programs: the graph's nodes of one unit */
};

enum wsep_activation {
	WSEP_ACT_NONE = 0,
	WSEP_ACT_RELU = 1,
};

enum wsep_loss {
	WSEP_LOSS_SOFTMAX_XENT = 1,	/* softmax then cross-entropy, mean over the batch */
};

enum wsep_optimizer_kind {
	WSEP_OPT_SGD = 1,
	WSEP_OPT_MOMENTUM = 2,	/* SGD with (PyTorch-style) momentum */
	WSEP_OPT_ADAM = 3,
	WSEP_OPT_ADAMW = 4,	/* Adam with decoupled weight decay (feature TRAINING) */
};

enum wsep_lr_schedule {
	WSEP_LR_CONSTANT = 0,
	WSEP_LR_WARMUP_COSINE = 1,	/* linear warm-up, then cosine decay (feature TRAINING) */
};

enum wsep_elem {
	WSEP_ELEM_U8 = 1,
	WSEP_ELEM_I32 = 2,
	WSEP_ELEM_F32 = 3,
	WSEP_ELEM_I64 = 4,	/* graph values only (token ids, labels) */
};

enum wsep_direction {
	WSEP_DIR_HOST_TO_DEVICE = 1,
	WSEP_DIR_DEVICE_TO_HOST = 2,
};

enum wsep_stream_unit {
	WSEP_UNIT_PER_SAMPLE = 1,	/* @elems per sample, batch samples per batch */
	WSEP_UNIT_PER_TRANSFER = 2,	/* @elems per transfer (e.g. a whole layer) */
};

enum wsep_limit {
	WSEP_LIMIT_COMPUTE = 1,		/* PE arithmetic */
	WSEP_LIMIT_FABRIC = 2,		/* wavelets over the region's edge */
	WSEP_LIMIT_HOST_IO = 3,		/* samples in / results out over the host link */
	WSEP_LIMIT_WEIGHT_IO = 4,	/* weights in / gradients out (weight streaming) */
	WSEP_LIMIT_SRAM_BW = 5,		/* SRAM bandwidth */
};

struct wsep_wafer {
	char name[WSEP_WAFER_NAME_MAX];
	uint32_t width, height;
	uint64_t sram_per_pe;
	uint64_t clock_hz;
	double fp32_flops_per_cycle;
	double sram_bytes_per_cycle;
	double link_bytes_per_cycle;
	double io_bytes_per_s;
};

/*
 * The optimizer, with torch.optim's semantics (Documentation/engine.rst,
 * "Optimizers"). Fields that do not apply to its kind are 0. The learning
 * rate at optimizer step t (1-based) follows @schedule: constant, or
 * lr * t / warmup up to @warmup, then a cosine from lr down to @min_lr at
 * @total_steps (engine_lr_at()).
 */
struct wsep_optimizer {
	enum wsep_optimizer_kind kind;
	double lr;
	double momentum;	/* WSEP_OPT_MOMENTUM */
	double beta1, beta2, eps;	/* WSEP_OPT_ADAM, _ADAMW */
	double weight_decay;	/* L2 added to the gradient; decoupled for AdamW */
	double dampening;	/* WSEP_OPT_MOMENTUM, [0, 1) */
	uint32_t nesterov;	/* WSEP_OPT_MOMENTUM: 0 or 1 */
	enum wsep_lr_schedule schedule;
	uint64_t warmup, total_steps;
	double min_lr;
};

/**
 * struct wsep_layer - one layer, or one unit of a graph program
 * @in, @out: dense: the layer's inputs and outputs; a unit: the elements
 *	per sample of the activations entering it from the unit before (the
 *	program's input for unit 0) and leaving it for the next (the
 *	logits for the last)
 * @weight_offset: index (in floats) of this layer's parameters in the
 *	weights layout: dense, W then b; a unit, its parameter tensors one
 *	after another. Always set, even without a weights section: it is the
 *	layout MemoryX and checkpoints use too.
 * @params: its parameters, in floats (dense: in * out + out), the unit of
 *	weight streaming (weights.K and grads.K carry them)
 * @sram_bytes: SRAM the compiler reserved for the layer on the wafer
 */
struct wsep_layer {
	enum wsep_layer_kind kind;
	enum wsep_activation act;
	uint32_t in, out;
	uint64_t sram_bytes;
	uint64_t weight_offset;
	uint64_t params;
};

/* A rectangle of PEs: columns x..x+w-1, rows y..y+h-1. */
struct wsep_region {
	uint32_t x, y, w, h;
};

/**
 * struct wsep_stream - a named stream between host and device
 * @layer: layer index for weights.K / grads.K, -1 otherwise
 * @elems: elements per @unit
 */
struct wsep_stream {
	uint32_t id;
	enum wsep_direction dir;
	enum wsep_elem elem;
	int32_t layer;
	uint64_t elems;
	enum wsep_stream_unit unit;
	char name[WSEP_STREAM_NAME_MAX];
};

/**
 * struct wsep_estimate - the compiler's per-layer estimate
 *
 * Pipelined: cycles per sample of the layer's stage. Weight streaming:
 * cycles per batch of the layer on the whole wafer.
 * @flops_per_sample: forward + backward + amortised optimizer FLOPs
 * @fwd_cycles, @bwd_cycles: compute (or, streaming, max(compute, weights in))
 * @io_cycles: pipelined: fabric/host transfer cycles; streaming: gradient out
 * @stage_cycles: what the layer costs in total (the max or sum above)
 * @limit: enum wsep_limit, what sets @stage_cycles
 */
struct wsep_estimate {
	double flops_per_sample;
	double fwd_cycles;
	double bwd_cycles;
	double io_cycles;
	double stage_cycles;
	uint32_t limit;
};

/**
 * struct wsep_summary - the compiler's overall estimate
 * @samples_per_s: estimated training throughput
 * @even_split_samples_per_s: the same for a naive even split of the wafer
 *	(pipelined only; 0 for weight streaming)
 * @utilization: achieved fp32 FLOP/s / peak of the whole mesh, 0..1
 * @active_pes: PEs inside some layer's region
 * @sram_bytes: SRAM reserved on the wafer in total
 * @bottleneck_layer: the slowest stage (pipelined) or the costliest layer
 * @limit: enum wsep_limit of the bottleneck
 */
struct wsep_summary {
	double samples_per_s;
	double even_split_samples_per_s;
	double utilization;
	uint64_t active_pes;
	uint64_t sram_bytes;
	uint32_t bottleneck_layer;
	uint32_t limit;
};

/*
 * The graph of a graph program (Documentation/wsep-format.rst, "Graph
 * programs"): the tensors ("values") and the engine ops that compute them,
 * in execution order, each node belonging to one unit (a layer record).
 * Shapes are those at the program's batch; a value's @batch_dim scales with
 * the batch, so the firmware can run micro-batches and short batches.
 */
#define WSEP_GRAPH_MAX_RANK	6
#define WSEP_GRAPH_MAX_IO	8
#define WSEP_GRAPH_MAX_VALUES	65536U
#define WSEP_GRAPH_MAX_NODES	65536U
/* Fed inputs of a graph (format 1.6): the samples' record holds each in turn. */
#define WSEP_GRAPH_MAX_INPUTS	4U
/*
 * Elements of one value, and of every input and activation together at the
 * program's batch: a bound that keeps every byte count and offset in 64
 * bits, far above any wafer (whether the activations fit is the compiler's
 * and the firmware's SRAM check).
 */
#define WSEP_GRAPH_MAX_ELEMS	(1ULL << 48)

enum wsep_value_kind {
	WSEP_VAL_INPUT = 1,	/* the samples, or the labels */
	WSEP_VAL_PARAM = 2,	/* trained: floats of the weights layout */
	WSEP_VAL_CONST = 3,	/* bytes of the constants section */
	WSEP_VAL_ACT = 4,	/* computed by a node */
	/* floats of the weights layout that the forward pass updates and no
	 * optimizer touches: BatchNormalization's running statistics
	 */
	WSEP_VAL_STATE = 5,
};

/* The engine ops (wse/engine_graph.h), numbered for the file. */
enum wsep_op {
	WSEP_OP_CONV2D = 1,	/* x, w[, b] -> y */
	WSEP_OP_MAXPOOL2D,	/* x -> y */
	WSEP_OP_AVGPOOL2D,	/* x -> y */
	WSEP_OP_GEMM,		/* a, b[, c] -> y */
	WSEP_OP_MATMUL,		/* a, b -> y */
	WSEP_OP_BINARY,		/* a, b -> y */
	WSEP_OP_ACT,		/* x -> y */
	WSEP_OP_LAYERNORM,	/* x, scale[, bias] -> y[, mean, inv_std_dev] */
	WSEP_OP_SOFTMAX,	/* x -> y */
	WSEP_OP_GATHER,		/* data, indices -> y */
	WSEP_OP_ATTENTION,	/* q, k, v[, key mask] -> y */
	WSEP_OP_DROPOUT,	/* x -> y */
	WSEP_OP_TRANSPOSE,	/* x -> y */
	WSEP_OP_SPLIT,		/* x -> y0, y1, ... */
	WSEP_OP_RESHAPE,	/* x -> y */
	WSEP_OP_BATCHNORM,	/* x, scale, bias, mean, var -> y[, mean, var] */
	WSEP_OP_RMSNORM,	/* x, scale -> y */
	WSEP_OP_ROTARY,		/* x, cos, sin -> y */
	WSEP_OP_CONCAT,		/* x0, x1, ... -> y */
	WSEP_OP_SLICE,		/* x -> y */
	WSEP_OP_WHERE,		/* cond, a, b -> y */
};
#define WSEP_OP_COUNT	WSEP_OP_WHERE

enum wsep_binary { WSEP_BIN_ADD, WSEP_BIN_SUB, WSEP_BIN_MUL, WSEP_BIN_DIV };
enum wsep_act_fn {
	WSEP_FN_RELU, WSEP_FN_TANH, WSEP_FN_SIGMOID, WSEP_FN_GELU, WSEP_FN_GELU_TANH, WSEP_FN_SILU,
};

/* wsep_graph_attrs.flags */
#define WSEP_ATTR_CEIL_MODE		0x01U
#define WSEP_ATTR_COUNT_INCLUDE_PAD	0x02U
#define WSEP_ATTR_TRANS_A		0x04U
#define WSEP_ATTR_TRANS_B		0x08U
#define WSEP_ATTR_CAUSAL		0x10U
#define WSEP_ATTR_TRAINING_MODE		0x20U	/* batchnorm: batch statistics in training */
#define WSEP_ATTR_UNBIASED		0x40U	/* batchnorm: PyTorch's running variance */
#define WSEP_ATTR_FLAGS			0x7fU

/* A node's attributes: those of its op apply, the others are 0. */
struct wsep_graph_attrs {
	uint32_t kernel[2], stride[2], dilation[2], pads[4];	/* pads: top, left, bottom, right */
	uint32_t flags;
	float alpha, beta;	/* gemm */
	uint32_t binary;	/* enum wsep_binary */
	uint32_t act;		/* enum wsep_act_fn */
	uint32_t axis;		/* layernorm, rmsnorm, softmax, gather, split, concat, slice */
	float epsilon;		/* layernorm, rmsnorm, batchnorm */
	uint32_t heads;		/* attention, rotary */
	float scale;		/* attention */
	float ratio;		/* dropout */
	uint8_t perm[WSEP_GRAPH_MAX_RANK];	/* transpose */
	float momentum;		/* batchnorm: ONNX's (the running statistics' weight) */
	uint32_t start;		/* slice: the first element taken along the axis */
};

/**
 * struct wsep_graph_value - a tensor of the graph
 * @dtype: WSEP_ELEM_F32 or WSEP_ELEM_I64
 * @batch_dim: the dimension that is the batch times a constant, -1 if none
 * @dims: at the program's batch
 * @offset: PARAM, STATE: its first float in the weights layout; CONST: its
 *	first byte in the constants section
 * @unit: PARAM, STATE: the unit (layer) whose parameters hold it; else -1
 */
struct wsep_graph_value {
	uint32_t dtype;
	enum wsep_value_kind kind;
	uint32_t rank;
	int32_t batch_dim;
	uint64_t dims[WSEP_GRAPH_MAX_RANK];
	uint64_t offset;
	int32_t unit;
};

/* A node: its op, unit, inputs (value ids, -1 for an absent optional one) and outputs. */
struct wsep_graph_node {
	enum wsep_op op;
	uint32_t unit;
	uint32_t n_in, n_out;
	int32_t in[WSEP_GRAPH_MAX_IO], out[WSEP_GRAPH_MAX_IO];
	struct wsep_graph_attrs a;
};

/**
 * struct wsep_graph - what a graph program computes
 * @input: the value the samples stream feeds (an INPUT: f32 for u8 or f32
 *	samples, i64 for i32 token ids); @inputs[0]
 * @n_inputs, @inputs: the values a sample's record feeds, in its order
 *	(format 1.6; 1 and @input before): the first as @input says, each
 *	further one (f32, or i64 sent as i32) in 4-byte elements
 *	(Documentation/wsep-format.rst, "Fed inputs")
 * @logits: the value the loss reads, [..., classes]
 * @labels: the i64 INPUT of the labels, the logits' shape less the last dimension
 * @rows: labels (and predictions) per sample; @classes: the logits' last dimension
 */
struct wsep_graph {
	uint32_t num_values, num_nodes;
	int32_t input, logits, labels;
	uint32_t n_inputs;
	int32_t inputs[WSEP_GRAPH_MAX_INPUTS];
	uint32_t rows, classes;
	struct wsep_graph_value *values;
	struct wsep_graph_node *nodes;
	uint64_t const_bytes;
	uint8_t *consts;
};

/*
 * The parameters' names (format 1.2, the optional section param_names):
 * one record per parameter tensor of the weights layout, in layout order,
 * so that trained weights can go back to the model they came from
 * (wsetrain --export, models/wse_checkpoint.py). A graph program names its
 * PARAM values, in value order; a layer program its layers' W and b.
 */
#define WSEP_PARAM_NAME_MAX		128U	/* NUL included */
#define WSEP_PARAM_TORCH_TRANSPOSED	0x1U	/* the PyTorch tensor is this one transposed (2-D) */
#define WSEP_PARAM_FLAGS		0x1U

/**
 * struct wsep_param_name - the name of one parameter tensor
 * @offset, @elems: its floats in the weights layout
 * @rank, @dims: its shape as the program holds it
 * @name: its name in the model the program was compiled from (an ONNX
 *	initializer, or the output of the node that copies one)
 * @torch_name: its name in the PyTorch module's state_dict(), or "" when
 *	the model did not say
 * @flags: WSEP_PARAM_*
 */
struct wsep_param_name {
	uint64_t offset, elems;
	uint32_t rank, flags;
	uint64_t dims[WSEP_GRAPH_MAX_RANK];
	char name[WSEP_PARAM_NAME_MAX];
	char torch_name[WSEP_PARAM_NAME_MAX];
};

/**
 * struct wsep_program - a parsed, validated program
 *
 * Owns all its arrays (wsep_read() copies out of the caller's buffer);
 * release with wsep_program_free(). @weights is NULL when the file has no
 * weights section (e.g. weight streaming: MemoryX holds the weights).
 */
struct wsep_program {
	uint16_t version_major, version_minor;
	uint32_t features;	/* WSEP_FEATURE_*: wsep_write() sets them */
	struct wsep_wafer wafer;
	char model_name[WSEP_NAME_MAX];
	enum wsep_mode mode;
	uint32_t batch;
	/*
	 * Samples per micro-batch: what the compiler sized the activations
	 * for, so the most a device may run at once (1..batch); 0 in formats
	 * before 1.3: the firmware's own rule.
	 */
	uint32_t micro_batch;
	uint32_t exec_flags;	/* WSEP_EXEC_*; 0 in formats before 1.4 */
	enum wsep_precision precision;	/* fp32 in formats before 1.5 */
	uint64_t seed;
	uint32_t input_dim;
	enum wsep_elem input_type;
	float input_scale;	/* input element x scale = the value fed to layer 0 */
	enum wsep_loss loss;
	struct wsep_optimizer opt;
	uint32_t num_layers;
	struct wsep_layer *layers;
	struct wsep_region *regions;	/* num_layers */
	struct wsep_estimate *estimates;	/* num_layers */
	uint32_t num_streams;
	struct wsep_stream *streams;
	struct wsep_summary summary;
	uint64_t num_weights;
	float *weights;		/* num_weights, or NULL (graph programs always have them) */
	struct wsep_graph *graph;	/* NULL: a layer program */
	uint32_t num_param_names;	/* 0: the program names no parameters (format < 1.2) */
	struct wsep_param_name *param_names;
};

/**
 * wsep_validate() - check a whole file without trusting any of it
 *
 * Checks the header, the section table, bounds, overlaps, CRCs, record
 * sizes and every field's range and consistency (layer chain, regions
 * inside the wafer and not overlapping, streams, weights finite). Never
 * reads outside [@buf, @buf + @len).
 * Return: 0, or -EINVAL with a message in @err saying what is wrong, e.g.
 * "section 2 (layers): length 120 exceeds file size 100".
 */
int wsep_validate(const void *buf, size_t len, char *err, size_t errlen);

/**
 * wsep_check() - check a program in memory as wsep_write() does before it
 * writes, without encoding it
 * @need_weights: false for a program compiled from shapes alone (wsecc
 *	--no-weights), which has no weights and cannot be written
 * Return: 0, or -EINVAL with a message in @err.
 */
int wsep_check(const struct wsep_program *p, bool need_weights, char *err, size_t errlen);

/**
 * wsep_read() - validate and parse a file into a new program
 * Return: 0 with *@out set (free with wsep_program_free()), or a negative
 * errno (-EINVAL: not a valid program; -ENOMEM) with a message in @err;
 * *@out is then NULL.
 */
int wsep_read(const void *buf, size_t len, struct wsep_program **out, char *err, size_t errlen);
/*
 * wsep_read_features() - wsep_read() as a reader that supports only the
 * features in @supported: a program that needs another is refused with
 * "this program needs NAME (feature 0xN), which this reader does not
 * support (it supports 0xM): update wsefwd and libwsep". wsep_read() is
 * this with WSEP_FEATURES_KNOWN.
 */
int wsep_read_features(const void *buf, size_t len, uint32_t supported, struct wsep_program **out,
		       char *err, size_t errlen);

/*
 * wsep_read_file() - wsep_read() of a whole file, memory-mapped (not read
 * into memory); its open() or mmap() errno too. Refuses a file larger than
 * the format can carry (24 GiB).
 */
int wsep_read_file(const char *path, struct wsep_program **out, char *err, size_t errlen);

void wsep_program_free(struct wsep_program *p);

/**
 * wsep_write() - serialise @p into a new buffer
 *
 * The weights section is written when @p->weights is not NULL. The result
 * is validated before it is returned, so a program with inconsistent
 * fields is refused here rather than by the firmware.
 * Return: 0 with *@buf (free()) and *@len set, or -EINVAL or -ENOMEM with
 * a message.
 */
int wsep_write(const struct wsep_program *p, void **buf, size_t *len, char *err, size_t errlen);

/*
 * wsep_write_file() - wsep_write() to @path, as wse/outfile.h writes an
 * output: a regular file (or none) replaced atomically, a device, FIFO or
 * socket written through and never replaced, a directory refused, "-"
 * standard output. Return: 0, or -EINVAL or the I/O errno with a message.
 */
int wsep_write_file(const struct wsep_program *p, const char *path, char *err, size_t errlen);

/* Parameters of one layer (dense: W and b; a unit: @params) and of all layers. */
uint64_t wsep_layer_params(const struct wsep_layer *l);
uint64_t wsep_total_params(const struct wsep_layer *layers, uint32_t n);
/* Labels (and predictions) per sample: a graph's rows, else 1; and the classes. */
uint32_t wsep_label_rows(const struct wsep_program *p);
uint32_t wsep_classes(const struct wsep_program *p);
/*
 * The shape of one input sample, outermost first, into @shape (room for
 * @max >= 1): a graph program's input value without its batch dimension,
 * or a layer program's input_dim alone (rank 1). Returns the rank.
 */
uint32_t wsep_input_shape(const struct wsep_program *p, uint32_t *shape, uint32_t max);
/* The features @p uses (what wsep_write() puts in the header). */
uint32_t wsep_features(const struct wsep_program *p);
/*
 * A graph program's fed inputs (1 before format 1.6, or when n_inputs is
 * unset), input @i's value id, and where it starts in a sample's record
 * (elements, each 1 byte for u8 samples, else 4; its elements per sample
 * in *@elems).
 */
uint32_t wsep_graph_n_inputs(const struct wsep_graph *g);
int32_t wsep_graph_input_id(const struct wsep_graph *g, uint32_t i);
uint64_t wsep_graph_input_at(const struct wsep_program *p, uint32_t i, uint64_t *elems);
/* Unit @k's nodes of a graph program: [*first, *end). */
void wsep_graph_unit_nodes(const struct wsep_graph *g, uint32_t k, uint32_t *first, uint32_t *end);
/*
 * wsep_graph_boundaries() - per unit k, the elements per sample of the
 * activations computed in units 0..k and read after k (for the last unit:
 * the logits of a sample). What a graph program's layer records hold as
 * out (and the next one's in). 0, or -EINVAL with a message.
 */
int wsep_graph_boundaries(const struct wsep_program *p, uint64_t *cross, char *err, size_t errlen);
/* Elements of value @v at @batch samples (its batch dimension scaled). */
uint64_t wsep_graph_value_elems(const struct wsep_program *p, const struct wsep_graph_value *v,
				uint32_t batch);

/**
 * wsep_init_layer() - deterministic initial weights of one layer
 * @offset: the layer's weight_offset (how many parameters come before it)
 * @w: out * in floats, [out][in]; @b: out floats
 *
 * PyTorch nn.Linear's default distribution: W and b uniform in
 * [-1/sqrt(in), 1/sqrt(in)). One splitmix64 stream, seeded with @seed,
 * runs through all layers in order, W row by row then b, one draw per
 * parameter; this layer starts at draw @offset (state seed +
 * 0x9E3779B97F4A7C15 * offset). Each draw x gives u = (x >> 40) / 2^24
 * and the value (2u - 1) / sqrt(in), in float. Host (MemoryX) and
 * firmware get the same bits, layer by layer or all at once.
 */
void wsep_init_layer(uint64_t seed, uint64_t offset, uint32_t in, uint32_t out,
		     float *w, float *b);

/* wsep_init_weights() - all layers into @out at each layer's weight_offset. */
void wsep_init_weights(uint64_t seed, const struct wsep_layer *layers, uint32_t n, float *out);


/*
 * The training streams (Documentation/wsep-format.rst, "streams"): the
 * streams the compiler emits, the firmware serves and a host feeds and
 * drains. weights.K is one per layer; grads.K one per layer in weight
 * streaming only.
 */
enum wsep_train_role {
	WSEP_TRAIN_SAMPLES,
	WSEP_TRAIN_LABELS,
	WSEP_TRAIN_LOSSES,
	WSEP_TRAIN_PREDICTIONS,
	WSEP_TRAIN_WEIGHTS,
	WSEP_TRAIN_GRADS,
	WSEP_TRAIN_LOGITS,	/* graph programs: every row's logits, on PREDICT */
};

/*
 * wsep_train_stream() - how @p declares training stream @role (of @layer
 * for weights and grads): every field but the id, from @p's mode, input
 * and layers. Return: 0, or -ENOENT when @p has no such stream (grads of
 * a pipelined program, a layer past the last).
 */
int wsep_train_stream(const struct wsep_program *p, enum wsep_train_role role, uint32_t layer,
		      struct wsep_stream *out);

/* Where a program's training streams are: indexes into ->streams, -1 for none. */
struct wsep_train_streams {
	int samples, labels, losses, predictions, logits;
	int weights[WSEP_MAX_LAYERS], grads[WSEP_MAX_LAYERS];
};

/*
 * wsep_train_streams() - find @p's training streams. Every one must be
 * there, declared as wsep_train_stream() says, and there must be no other.
 * Return: 0, or -EINVAL with a message in @err naming the stream.
 */
int wsep_train_streams(const struct wsep_program *p, struct wsep_train_streams *ts, char *err,
		       size_t errlen);

/*
 * wsep_param_names_check() - @n names against @p's weights layout: in
 * layout order, together exactly its parameters, each name non-empty,
 * printable and unique, a graph program's the shapes of its PARAM values.
 * Return: 0, or -EINVAL with a message naming the entry.
 */
int wsep_param_names_check(const struct wsep_program *p, const struct wsep_param_name *names,
			   uint32_t n, char *err, size_t errlen);
/*
 * The records of the param_names section (WSEP_PARAM_NAME_RECORD bytes
 * each, Documentation/wsep-format.rst), which checkpoints carry too.
 * decode() reads @count records of @record_size (a newer, larger record's
 * prefix) into a new array (free()); each name must hold a NUL. Neither
 * checks the names against a program: wsep_param_names_check() does.
 */
void wsep_param_names_encode(const struct wsep_param_name *names, uint32_t n, void *out);
int wsep_param_names_decode(const void *buf, uint32_t record_size, uint32_t count,
			    struct wsep_param_name **out, char *err, size_t errlen);
/* The entry named @name (the model's name, else the PyTorch one), or NULL. */
const struct wsep_param_name *wsep_param_name_find(const struct wsep_program *p, const char *name);

/* Names for enums, for reports and messages ("pipelined", "adam", ...). */
const char *wsep_mode_name(uint32_t mode);
const char *wsep_optimizer_name(uint32_t kind);
const char *wsep_elem_name(uint32_t elem);
const char *wsep_direction_name(uint32_t dir);
const char *wsep_limit_name(uint32_t limit);
const char *wsep_section_name(uint32_t type);
const char *wsep_op_name(uint32_t op);
const char *wsep_feature_name(uint32_t feature);
const char *wsep_precision_name(uint32_t precision);	/* "fp32", "fp16", "bf16" */
/* Bytes a weight or gradient takes on the wire to and from the wafer: 4, 2 at 16 bits. */
static inline double wsep_precision_weight_bytes(enum wsep_precision p)
{
	return p == WSEP_PRECISION_FP32 ? 4.0 : 2.0;
}

#endif /* WSE_WSEP_H */
