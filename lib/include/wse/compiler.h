/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/compiler.h: the wse compiler as a library, libwsecompiler (link it
 * with wsep and wafer, and -lm; wsecc is its CLI; libwse
 * and wsetrain link it too).
 *
 *   model text --wsecc_parse_file()--> struct wsecc_model
 *              --wsecc_validate()----> every op maps to a kernel
 *              --wsecc_compile()-----> struct wsecc_plan (mode, regions, estimates)
 *              --wsecc_report() / wsecc_write_svg()
 *              --wsecc_emit() / wsecc_emit_file() / wsecc_build_program()--> .wsep
 *
 * Documentation/model-format.rst (the model language),
 * Documentation/compiler.rst (mode choice, placement, estimates).
 */
#ifndef WSE_COMPILER_H
#define WSE_COMPILER_H

#include <stdint.h>
#include <stdio.h>

#include "wse/wafer.h"
#include "wse/wsep.h"

#define WSECC_MAX_LAYERS	WSEP_MAX_LAYERS
#define WSECC_PATH_MAX		256
#define WSECC_MSG_MAX		512

/**
 * struct wsecc_error - what went wrong, and where
 * @file: the model file (or the name given to wsecc_parse_string())
 * @line, @col: 1-based position; 0 when the error has no position
 * @msg: what was wrong and, for syntax, what was expected
 */
struct wsecc_error {
	char file[WSECC_PATH_MAX];
	unsigned line, col;
	char msg[WSECC_MSG_MAX];
};

/* "file:line:col: msg" (or "file: msg" without a position). */
void wsecc_error_format(const struct wsecc_error *e, char *buf, size_t len);

/* A position in the model file. */
struct wsecc_pos {
	unsigned line, col;
};

/* Activations the model language knows; only some have kernels. */
enum wsecc_act {
	WSECC_ACT_NONE,
	WSECC_ACT_RELU,
	WSECC_ACT_TANH,		/* parses; no kernel yet */
	WSECC_ACT_SIGMOID,	/* parses; no kernel yet */
	WSECC_ACT_GELU,		/* parses; no kernel yet */
};

enum wsecc_loss {
	WSECC_LOSS_SOFTMAX_XENT,
	WSECC_LOSS_MSE,		/* parses; no kernel yet */
};

struct wsecc_layer {
	uint32_t in, out;
	enum wsecc_act act;
	struct wsecc_pos pos;		/* the "dense" keyword */
	struct wsecc_pos in_pos;	/* its input size */
	struct wsecc_pos act_pos;	/* the activation */
};

/**
 * struct wsecc_model - a parsed model
 * @input_type: WSEP_ELEM_U8 (pixels; scaled by 1/255) or WSEP_ELEM_F32
 * @opt: optimizer; fields that do not apply to its kind are 0
 * @wafer: the wafer the model names as its default ("" if none)
 */
struct wsecc_model {
	char file[WSECC_PATH_MAX];
	char name[WSEP_NAME_MAX];
	uint32_t input_dim;
	enum wsep_elem input_type;
	float input_scale;
	uint32_t num_layers;
	struct wsecc_layer layers[WSECC_MAX_LAYERS];
	enum wsecc_loss loss;
	struct wsep_optimizer opt;
	uint32_t batch;
	/* Samples per micro-batch (wsecc --micro-batch); 0: the compiler chooses. */
	uint32_t micro_batch;
	/* Compute precision (wsecc --precision); fp32 unless told. */
	enum wsep_precision precision;
	uint64_t seed;
	char wafer[64];
	struct wsecc_pos input_pos, loss_pos, opt_pos, batch_pos;
};

/**
 * wsecc_parse_string() - parse model text
 * @name: the file name to use in messages
 * Return: 0, or -EINVAL with @err set (file:line:col and what was
 * expected); wsecc_parse_file() also the errno of opening the file.
 */
int wsecc_parse_string(const char *text, const char *name, struct wsecc_model *m,
		       struct wsecc_error *err);
int wsecc_parse_file(const char *path, struct wsecc_model *m, struct wsecc_error *err);

/* Ops: what the model lowers to, forward, loss, backward, update. */
enum wsecc_op_kind {
	WSECC_OP_INPUT_SCALE,		/* u8 pixels -> f32 */
	WSECC_OP_DENSE_FWD,
	WSECC_OP_ACT_FWD,
	WSECC_OP_LOSS_FWD,
	WSECC_OP_LOSS_BWD,
	WSECC_OP_ACT_BWD,
	WSECC_OP_DENSE_BWD_DATA,	/* dL/dx, not needed for layer 0 */
	WSECC_OP_DENSE_BWD_WEIGHTS,	/* dL/dW, dL/db */
	WSECC_OP_OPT_UPDATE,
};

/**
 * struct wsecc_op - one op and the kernel that runs it
 * @name: e.g. "relu_fwd"; @kernel: e.g. "relu_fwd_f32", NULL if none
 * @layer: the layer it belongs to, -1 for input and loss
 */
struct wsecc_op {
	enum wsecc_op_kind kind;
	int layer;
	const char *name;
	const char *kernel;
	struct wsecc_pos pos;
};

/* Maximum ops of any model: input, 2 per layer forward, loss x2, 3 per
 * layer backward, one update per layer.
 */
#define WSECC_MAX_OPS (3 + 6 * WSECC_MAX_LAYERS)

/* Lowers @m into @ops (at most @max); returns the number of ops. */
size_t wsecc_lower(const struct wsecc_model *m, struct wsecc_op *ops, size_t max);

/**
 * wsecc_validate() - does every op map to a kernel? (fast: no placement)
 * Return: 0, or -EINVAL with @err at the first op without one.
 */
int wsecc_validate(const struct wsecc_model *m, struct wsecc_error *err);

enum wsecc_mode {
	WSECC_MODE_AUTO = 0,
	WSECC_MODE_PIPELINED = WSEP_MODE_PIPELINED,
	WSECC_MODE_WEIGHT_STREAMING = WSEP_MODE_WEIGHT_STREAMING,
};

/* Parses "auto", "pipelined", "weight_streaming"; -EINVAL if none. */
int wsecc_mode_parse(const char *s, enum wsecc_mode *mode);

/*
 * Activation checkpointing in weight streaming (wsecc --recompute): auto
 * turns it on only when a micro-batch's full activations do not fit.
 */
enum wsecc_recompute {
	WSECC_RECOMPUTE_AUTO = 0,
	WSECC_RECOMPUTE_ON,
	WSECC_RECOMPUTE_OFF,
};

/* Parses "auto", "on", "off"; -EINVAL if none. */
int wsecc_recompute_parse(const char *s, enum wsecc_recompute *r);

/**
 * struct wsecc_memory - SRAM a model needs to run layer-pipelined
 * @usable: SRAM of the whole mesh after each PE's reserve
 * @reserve_per_pe: bytes per PE kept for code, routes and I/O buffers
 */
struct wsecc_memory {
	uint64_t weights, grads, opt_state, activations, total;
	uint64_t usable, reserve_per_pe;
};

/**
 * struct wsecc_layer_plan - one layer's placement and estimate
 * @region: its rectangle (the whole wafer for weight streaming)
 * @pes: PEs in the region
 * @tile_in, @tile_out: the slice of W each PE holds (ceil(in/h) x ceil(out/w))
 * @sram_per_pe: bytes each PE of the region uses
 * @sram_bytes: @sram_per_pe * @pes
 * @est: the estimate, as written to the program
 */
struct wsecc_layer_plan {
	struct wsep_region region;
	uint64_t pes;
	uint32_t tile_in, tile_out;
	uint64_t sram_per_pe;
	uint64_t sram_bytes;
	struct wsep_estimate est;
	/* What weight streaming combines: per sample, the backward compute
	 * without the update and the update's share; the activations of the
	 * samples the stage holds (struct wsecc_stages' cost()); the
	 * parameters that stream.
	 */
	double bwd_compute, opt_cycles;
	uint64_t act_bytes, params;
	/* The stage's input activations of those samples: what recompute keeps. */
	uint64_t in_bytes;
	/* Weight streaming: the forward compute per sample (est.fwd_cycles
	 * becomes the batch's), for the estimate across systems.
	 */
	double fwd_compute;
};

/**
 * struct wsecc_plan - the compiler's result
 * @mode_note: why this mode ("fits: ...", "forced by --mode", ...)
 * @summary: overall estimate, as written to the program
 * @even: the naive even split's layers (pipelined only)
 * @host_io_samples_per_s: the host link's limit on its own
 * @micro_batch: samples per micro-batch: weight streaming, what one
 *	micro-batch's activations fit (the batch runs in ceil(batch /
 *	micro_batch) of them); pipelined, the granule samples enter the
 *	pipeline in (1: sample by sample)
 * @micro_batch_fit: weight streaming, the most samples whose activations
 *	fit (not capped by the batch; at most WSEP_MAX_BATCH)
 * @recompute: weight streaming, activation checkpointing is on: every
 *	stage but the last keeps only its input between its passes and
 *	recomputes the rest before its backward pass
 * @act_per_pe: weight streaming, the activations a PE holds at most for
 *	one micro-batch (all stages', or with @recompute the stages' inputs
 *	and one stage's whole); @act_full_per_pe, what all stages' would be
 * @in_flight: pipelined, per stage, the samples whose activations it holds
 *	between their forward and backward passes (the pipeline depth times
 *	@micro_batch, at most the batch); weight streaming, @micro_batch
 * @weight_bytes: weight streaming, the bytes a weight or gradient takes on
 *	the wire (4, 2 in fp16 or bf16)
 */
struct wsecc_plan {
	struct wse_wafer wafer;
	char name[WSEP_NAME_MAX];
	/* Per layer (or unit): "dense 784x256", "conv1: conv2d relu maxpool2d" */
	char label[WSECC_MAX_LAYERS][64];
	enum wsep_mode mode;
	char mode_note[512];
	uint32_t batch;
	uint32_t micro_batch, micro_batch_fit;
	bool recompute;
	uint64_t act_per_pe, act_full_per_pe;
	uint32_t in_flight[WSECC_MAX_LAYERS];
	uint32_t num_layers;
	struct wsecc_layer_plan layers[WSECC_MAX_LAYERS];
	struct wsecc_layer_plan even[WSECC_MAX_LAYERS];
	uint32_t even_columns;
	struct wsecc_memory mem;
	struct wsep_summary summary;
	double host_io_samples_per_s;
	double total_flops_per_sample;
	double weight_bytes;
	/* The peak utilization is measured against: the wafer's FLOP/s in
	 * matrix products at the program's precision (16-bit: the fp16 rate).
	 */
	double peak_flops;
};

/*
 * SRAM the model needs to run layer-pipelined on @w with every stage
 * holding the whole batch's activations (one micro-batch of the batch);
 * wsecc_compile() sizes them by the samples in flight instead.
 */
void wsecc_memory_needed(const struct wsecc_model *m, const struct wse_wafer *w,
			 struct wsecc_memory *mem);

/**
 * wsecc_compile() - choose the mode, place, estimate
 * @mode: WSECC_MODE_AUTO picks pipelined when the model fits; a forced
 *	pipelined mode that cannot fit is refused, with the numbers.
 * Return: 0, or -EINVAL with @err.
 */
int wsecc_compile(const struct wsecc_model *m, const struct wse_wafer *w, enum wsecc_mode mode,
		  struct wsecc_plan *plan, struct wsecc_error *err);

/*
 * Weight streaming across systems (Documentation/timing-model.rst, "Across
 * systems"): N systems train data-parallel, each on the program's batch;
 * SwarmX broadcasts each layer's weights from MemoryX to all of them and
 * sums their gradients on the way back, MemoryX updates once per step.
 */
#define WSECC_SCALE_MAX_SYSTEMS	192U	/* the largest cluster Cerebras describes */
#define WSECC_SCALE_MAX_POINTS	32U

/**
 * struct wsecc_scale_params - what the estimate across systems assumes
 * @fanout: systems (or nodes) one SwarmX node broadcasts to and reduces from
 * @hop_latency_s: one SwarmX level's latency, and MemoryX's link's
 * @memoryx_bytes_per_s: MemoryX memory bandwidth for the optimizer update
 */
struct wsecc_scale_params {
	uint32_t fanout;
	double hop_latency_s;
	double memoryx_bytes_per_s;
};

/* The defaults for @plan's wafer, each with its source in compiler_scale.c. */
void wsecc_scale_default_params(const struct wsecc_plan *plan, struct wsecc_scale_params *p);

/**
 * struct wsecc_scale_point - one step of N systems
 * @systems: N
 * @tree_levels: SwarmX levels between MemoryX and a system, ceil(log_fanout N)
 * @latency_s: one way, MemoryX to a system: (1 + @tree_levels) hops
 * @update_s: MemoryX's update of every parameter, once per step
 * @boundary_s: what the step boundary adds to one system's compute and
 *	streaming: the last gradients' way back, the updates not yet hidden
 *	behind the backward pass, the first weights' way out
 * @step_s: one step of N x batch samples
 * @samples_per_s: N x batch / @step_s
 * @speedup: @samples_per_s over one system's
 * @efficiency: @speedup / N
 */
struct wsecc_scale_point {
	uint32_t systems;
	uint32_t tree_levels;
	double latency_s;
	double update_s;
	double boundary_s;
	double step_s;
	double samples_per_s;
	double speedup;
	double efficiency;
};

/**
 * wsecc_scale_estimate() - a weight-streaming @plan on @systems systems
 * @opt: the program's optimizer (the state MemoryX reads and writes)
 * Return: 0, or -EINVAL if @plan is not weight streaming or @systems is
 * not 1..WSECC_SCALE_MAX_SYSTEMS.
 */
int wsecc_scale_estimate(const struct wsecc_plan *plan, const struct wsep_optimizer *opt,
			 const struct wsecc_scale_params *p, uint32_t systems,
			 struct wsecc_scale_point *pt);

/* 1, 2, 4 ... 128, 192: what --report prints unless told otherwise. */
extern const uint32_t wsecc_scale_default_systems[];
extern const uint32_t wsecc_scale_default_count;

/**
 * wsecc_scale_parse() - "1,2,4,16" into @systems (at most WSECC_SCALE_MAX_POINTS)
 * Return: the count, or -EINVAL with @err saying what was wrong.
 */
int wsecc_scale_parse(const char *list, uint32_t *systems, char *err, size_t errlen);

/* The report's table of a weight-streaming @plan on each of @systems. */
void wsecc_scale_report(FILE *f, const struct wsecc_plan *plan, const struct wsep_optimizer *opt,
			const uint32_t *systems, uint32_t count);

/* The text report (placement and estimates). */
void wsecc_report(FILE *f, const struct wsecc_model *m, const struct wsecc_plan *plan);

/* An SVG picture of the wafer with each layer's (or unit's) region. 0 or -EIO. */
int wsecc_write_svg(FILE *f, const struct wsecc_plan *plan);

/**
 * wsecc_build_program() - the plan as a program (free with wsep_program_free())
 * @with_weights: include initial weights (from the seed, wsep_init_weights())
 */
int wsecc_build_program(const struct wsecc_model *m, const struct wsecc_plan *plan,
			int with_weights, struct wsep_program **out, struct wsecc_error *err);

/* The program as .wsep bytes in a new buffer (free()), or written to @path. */
int wsecc_emit(const struct wsecc_model *m, const struct wsecc_plan *plan, int with_weights,
	       void **buf, size_t *len, struct wsecc_error *err);
int wsecc_emit_file(const struct wsecc_model *m, const struct wsecc_plan *plan,
		    int with_weights, const char *path, struct wsecc_error *err);

#endif /* WSE_COMPILER_H */
