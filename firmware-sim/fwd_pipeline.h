/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Micro-batches and the pipeline stages of a layer pipelined program.
 *
 * A step's batch is cut into micro-batches (fwd_micro.c); each layer runs
 * forward on them in order and, training, carries them back in order with
 * its gradient accumulated over them (grad_beta 0 for the first, 1 after)
 * and the loss normalised by the whole batch. Weight streaming runs these
 * calls one after another in the RUN's thread (fwd_run.c); layer pipelined
 * runs each layer in its own stage thread (fwd_pipeline.c). Each layer sees
 * the same calls on the same shapes in the same order either way, so the
 * two agree bit for bit.
 */
#ifndef FWD_PIPELINE_H
#define FWD_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fwd_exec.h"

/* Internal status: the link went away in the middle of a step. */
#define FWD_RUN_STOPPED	0xffffffffU

/* fwd_micro.c: which samples micro-batch m holds, and its own steps. */
struct fwd_micro {
	uint32_t first, count;	/* samples first .. first + count - 1 of the batch */
};

/* Sizes a program's micro-batches for @wanted per full batch (0: the default rule). */
void fwd_micro_setup(struct fwd_program *p, uint32_t wanted);
/* Micro-batches in a batch of @batch samples (fewer for a short batch). */
uint32_t fwd_micro_count(const struct fwd_program *p, uint32_t batch);
struct fwd_micro fwd_micro_at(const struct fwd_program *p, uint32_t batch, uint32_t m);
/* Does the input go to the engine as pixels (p->in_bytes) or floats (p->in_f32)? */
bool fwd_micro_input_is_pixels(const struct wsep_program *prog);
/* Loads micro-batch m of the staged input into its workspace. */
int fwd_micro_load(struct fwd_program *p, uint32_t m, struct fwd_micro s);
/*
 * Per-sample losses (unless predicting) and predictions of micro-batch m's
 * logits into the program's output staging, at the micro-batch's samples.
 * On failure *what names the part for the error text.
 */
int fwd_micro_results(struct fwd_program *p, uint32_t kind, uint32_t m, struct fwd_micro s,
		      const char **what);
/* "step N: WHAT failed: WHY", the text of an engine failure. */
uint32_t fwd_micro_failed(char *text, size_t len, uint32_t step, const char *what, int err);

/* fwd_pipeline.c: one stage thread per layer. */
struct fwd_step {
	uint32_t kind;		/* WSE_LINK_RUN_* */
	uint32_t batch;
	uint32_t number;	/* 1-based within the RUN, for error texts */
	uint64_t t;		/* the optimizer step a TRAIN step takes */
};

/*
 * Starts the stage threads of pipelined program @p (its params and
 * micro-batch workspaces set up). @fault_stage: --fault-stage-error, or -1.
 */
int fwd_pipeline_create(struct fwd_program *p, int fault_stage, struct fwd_pipeline **out);
/* Ends and joins the stage threads; none may be inside a step. */
void fwd_pipeline_destroy(struct fwd_pipeline *pl);
/*
 * Runs one step of the batch staged in @p: returns WSE_LINK_OK, an error
 * status with @text filled in, or FWD_RUN_STOPPED when @stopping said so
 * (asked every few tens of milliseconds while the step runs). Either way
 * every stage is idle again on return. *updated tells whether any layer
 * took the optimizer step t.
 */
uint32_t fwd_pipeline_step(struct fwd_pipeline *pl, const struct fwd_step *step,
			   bool (*stopping)(void *arg), void *arg, char *text, size_t len,
			   bool *updated);

#endif /* FWD_PIPELINE_H */
