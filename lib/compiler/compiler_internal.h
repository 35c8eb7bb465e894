/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared inside lib/compiler; not public. */
#ifndef WSECC_INTERNAL_H
#define WSECC_INTERNAL_H

#include "wse/compiler.h"

/*
 * The cost model's kernel figures (Documentation/compiler.rst, "Cost
 * model"). The firmware's timing model reads the same from its parameter
 * file (firmware-sim/timing/wse2.params), where each carries its source.
 */
#define WSECC_ELEMENTWISE_CYCLES	1.0	/* bias, ReLU, scaling, a copy: per element */
#define WSECC_LOSS_FWD_CYCLES		5.0	/* softmax cross-entropy per logit: max, exp, sum, divide, log */
#define WSECC_LOSS_BWD_CYCLES		1.0	/* softmax minus one-hot */
#define WSECC_TRANSCENDENTAL_CYCLES	8.0	/* tanh, sigmoid, GELU's erf: a polynomial */
#define WSECC_NORMALIZE_CYCLES		5.0	/* layer norm: mean, variance, subtract, scale, shift */
#define WSECC_SOFTMAX_CYCLES		4.0	/* max, exp, sum, divide */
#define WSECC_WINDOW_CYCLES		1.0	/* pooling: a compare or add per window element */
#define WSECC_SRAM_BYTES_PER_WEIGHT	16.0	/* read forward, for dL/dx, read and write dL/dW */
#define WSECC_FABRIC_DIRECTIONS		2.0	/* activations along rows, sums down columns, both passes */
/* Host bytes per sample besides the input: label (i32), loss and prediction. */
#define WSECC_HOST_EXTRA_BYTES		12.0
/*
 * A wavelet's cost per router hop: one wavelet per port per cycle (Sean Lie,
 * "Cerebras Architecture Deep Dive", Hot Chips 34, 2022); the timing
 * model's hop_cycles.
 */
#define WSECC_HOP_CYCLES		1.0

/* Sets @e (file, position, message) and returns -EINVAL. */
int wsecc_fail(struct wsecc_error *e, const char *file, unsigned line, unsigned col,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Bytes per PE kept for code, routes and I/O buffers (1/8 of the SRAM). */
uint64_t wsecc_reserve_per_pe(const struct wse_wafer *w);

/* Optimizer state floats per parameter: 0 sgd, 1 momentum, 2 adam. */
unsigned wsecc_opt_state_per_param(const struct wsep_optimizer *o);

/* FLOPs of one optimizer step per parameter. */
double wsecc_opt_flops_per_param(const struct wsep_optimizer *o);

/* Forward + backward + amortised update FLOPs of layer @i per sample. */
double wsecc_layer_flops(const struct wsecc_model *m, uint32_t i);

/*
 * What placement, weight streaming and the mode choice need of a network,
 * whatever it is made of: its stages (dense layers, or the units of a
 * graph) and what each costs on a rectangle of PEs.
 */
struct wsecc_stages {
	const void *ctx;
	const char *file;		/* for messages */
	const char *name;		/* the model's */
	const char *opt_name;		/* its optimizer's, for the memory it needs */
	uint32_t n, batch;
	uint32_t micro_batch;		/* asked for (--micro-batch); 0: choose */
	enum wsecc_recompute recompute;	/* weight streaming (--recompute) */
	bool can_recompute;		/* its stages can (graph units; not dense layers) */
	struct wsecc_pos batch_pos;	/* where the model sets its batch */
	double host_bytes;		/* per sample: its input in, its results out */
	double weight_bytes;		/* a weight or gradient streamed: 4, 2 at 16 bits; 0: 4 */
	/*
	 * Stage @i on a region of @h rows by @w columns, of which it uses no
	 * more than rows() and cols(), holding the activations of @held
	 * samples: fills @lp (region 0,0,w,h; act_bytes those of @held
	 * samples); 0 if it fits that SRAM, -1 if not.
	 */
	int (*cost)(const void *ctx, uint32_t i, const struct wse_wafer *wf, uint32_t h, uint32_t w,
		    uint32_t held, struct wsecc_layer_plan *lp);
	/* Pipelined: per stage, the samples it holds (set by wsecc_choose_mode()). */
	const uint32_t *held;
	/* The most rows and columns stage @i has work for. */
	uint32_t (*rows)(const void *ctx, uint32_t i);
	uint32_t (*cols)(const void *ctx, uint32_t i);
	/* "layer 0 (784x256)" for messages, and its place in the model file. */
	void (*describe)(const void *ctx, uint32_t i, char *buf, size_t len, struct wsecc_pos *pos);
};

/* A text model's dense layers as stages. */
void wsecc_model_stages(const struct wsecc_model *m, struct wsecc_stages *st);

/*
 * wsecc_choose_mode() - the mode, the placement and the estimate of @st
 * (mode choice in Documentation/compiler.rst). The caller sets @plan's
 * wafer, name, labels, batch, num_layers, mem (what running
 * layer-pipelined needs), total_flops_per_sample and host_io_samples_per_s.
 */
int wsecc_choose_mode(const struct wsecc_stages *st, enum wsecc_mode mode,
		      struct wsecc_plan *plan, struct wsecc_error *err);

/**
 * wsecc_cost_pipelined() - a layer's stage on an h x w region
 * Fills @lp (tile, SRAM per PE, estimate) for a region of @h rows and @w
 * columns; returns 0 if the layer fits in that region's SRAM, -1 if not.
 */
int wsecc_cost_pipelined(const struct wsecc_model *m, uint32_t i, const struct wse_wafer *wf,
			 uint32_t h, uint32_t w, uint32_t held, struct wsecc_layer_plan *lp);

/*
 * wsecc_pipelined_step_cycles() - one training step of @batch samples on
 * the @n stages @lp, entering in micro-batches of @micro: the slowest
 * stage's rate, plus filling and draining the pipeline once (see
 * compiler_cost.c).
 */
double wsecc_pipelined_step_cycles(const struct wsecc_layer_plan *lp, uint32_t n, uint32_t batch,
				   uint32_t micro);

/*
 * wsecc_pipeline_depth() - micro-batches stage @i of @n holds at once in
 * steady state: 2 (n - i) - 1 (Documentation/compiler.rst, "Pipelined
 * memory").
 */
uint32_t wsecc_pipeline_depth(uint32_t i, uint32_t n);

/* Pipelined placement (balanced) and the even split, into @plan. */
int wsecc_place_pipelined(const struct wsecc_stages *st, struct wsecc_plan *plan,
			  struct wsecc_error *err);

/*
 * What a program records as its micro-batch (struct wsep_program): weight
 * streaming, the one its activations were fitted for; pipelined, @asked
 * (--micro-batch, 0 if none: the plan streams samples one by one, which
 * the firmware groups as it likes, holding no more than that).
 */
uint32_t wsecc_program_micro_batch(const struct wsecc_plan *plan, uint32_t asked);

/* Weight-streaming plan into @plan. */
int wsecc_plan_streaming(const struct wsecc_stages *st, struct wsecc_plan *plan,
			 struct wsecc_error *err);

/* "adam lr=0.001 beta1=0.9 ..., 30 warm-up steps then cosine to 0 at step 300" */
void wsecc_optimizer_text(const struct wsep_optimizer *o, char *buf, size_t len);

/* The estimate lines of the report (both front ends): estimate, PEs, utilization, host I/O, even split. */
void wsecc_report_summary(FILE *f, const struct wsecc_plan *plan);

/* Human-readable byte counts: "5.61 MB". */
void wsecc_bytes(char *buf, size_t len, double bytes);

#endif /* WSECC_INTERNAL_H */
