/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The WSE timing model: modelled device cycles for the work a RUN does,
 * from the wafer's per-PE figures (lib/wafer) and a parameter file of
 * kernel costs (firmware-sim/timing/wse2.params), each with its source.
 * Documentation/timing-model.rst derives every formula.
 */
#ifndef FWD_TIMING_H
#define FWD_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "wse/wafer.h"
#include "wse/wsep.h"

/* What the parameter file holds (what lib/wafer does not). */
struct fwd_timing_params {
	double clock_hz;
	double elementwise_cycles;
	double loss_fwd_cycles_per_logit;
	double loss_bwd_cycles_per_logit;
	double sgd_flops_per_param;
	double momentum_flops_per_param;
	double adam_flops_per_param;
	double weight_decay_flops_per_param;
	double sram_bytes_per_weight;
	double fabric_directions;
	double host_extra_bytes_per_sample;
	double hop_cycles;
	/* Graph programs (wse/wsep_cost.h): cycles per element per PE. */
	double transcendental_cycles;
	double normalize_cycles;
	double softmax_cycles;
	double window_cycles;
};

/*
 * fwd_timing_params_parse() - read "key = value  # source" lines
 *
 * Every key must appear once, with a finite value >= 0 (clock > 0) and a
 * non-empty source after '#'. Blank and comment lines are skipped.
 * Return: 0, or -1 with "FILE:LINE: what was wrong" in @err.
 */
int fwd_timing_params_parse(const char *text, const char *name,
			    struct fwd_timing_params *p, char *err, size_t errlen);
int fwd_timing_params_load(const char *path, struct fwd_timing_params *p,
			   char *err, size_t errlen);

/* The model: the device's wafer and the parameters. */
struct fwd_timing {
	struct wse_wafer wafer;		/* clock_hz is the device's clock */
	struct fwd_timing_params p;
};

/* What a RUN does, for the model and for the compiler's estimate. */
enum fwd_timing_kind {
	FWD_TIMING_TRAIN,	/* forward, loss, backward, update */
	FWD_TIMING_FORWARD,	/* forward (and loss): eval and predict */
};

/*
 * Per-layer cost, cycles. Pipelined: per sample of the layer's stage;
 * weight streaming: per batch of the layer on the whole wafer.
 */
struct fwd_timing_layer {
	double compute;		/* forward (+ backward + update share) */
	double sram;		/* SRAM traffic / SRAM bandwidth */
	double fabric;		/* wavelets over the region's edge */
	double host;		/* host I/O (pipelined layer 0) */
	double weights;		/* weight streaming: weights in, per pass */
	double stage;		/* the largest, what the layer costs */
};

/* Cost of layer @k of @prog, its region as placed in the program. */
void fwd_timing_layer(const struct fwd_timing *t, const struct wsep_program *prog,
		      uint32_t k, enum fwd_timing_kind kind, uint32_t batch,
		      struct fwd_timing_layer *out);

/* Modelled cycles of @steps steps of @batch samples each. */
uint64_t fwd_timing_run_cycles(const struct fwd_timing *t, const struct wsep_program *prog,
			       enum fwd_timing_kind kind, uint32_t steps, uint32_t batch);

/*
 * The compiler's estimate for the same work, from the program's own
 * estimates section: pipelined, samples x the slowest stage (train) or the
 * slowest forward half (eval); weight streaming, per step the sum of the
 * layers' costs plus the samples' host transfer, scaled by batch.
 */
uint64_t fwd_timing_est_cycles(const struct wsep_program *prog, enum fwd_timing_kind kind,
			       uint32_t steps, uint32_t batch);

#endif /* FWD_TIMING_H */
