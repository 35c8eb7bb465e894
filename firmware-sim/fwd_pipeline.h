/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Micro-batches and the task graph that runs a step on them.
 *
 * A step's batch is cut into micro-batches (fwd_micro.c); each layer runs
 * forward on them and, training, carries them back with its gradient
 * accumulated over them in order (grad_beta 0 for the first, 1 after) and
 * the loss normalised by the whole batch. Both modes run these calls as
 * the tasks of one graph on worker threads (fwd_pipeline.c); they differ
 * only in where a layer's weights come from and its gradients go, so the
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

/*
 * Sizes a program's micro-batches for @wanted per full batch (0: the
 * default rule), more if the program's micro-batch (the most samples its
 * activations were sized for) needs more: 0, or -E2BIG past
 * FWD_MICRO_BATCHES_MAX.
 */
int fwd_micro_setup(struct fwd_program *p, uint32_t wanted);
/*
 * The micro-batches of steps of @batch for a RUN whose gradient sums go
 * over leaves of @leaf samples, which are then its micro-batches (0: the
 * program's default micro-batches are the leaves): workspaces for them,
 * made or remade between steps. 0, -EINVAL (more than
 * FWD_MICRO_BATCHES_MAX) or the engine's -ENOMEM.
 */
int fwd_micro_prepare(struct fwd_program *p, uint32_t leaf, uint32_t batch);
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

/*
 * fwd_pipeline.c: a step's engine calls as a task graph on worker threads
 * (both modes). The results are those of this sequential loop, whatever
 * the number of workers and in either mode:
 *   for m: (load m) for k: engine_forward_layer(m, k)
 *          (last layer) results of m; train: engine_loss over norm, mask
 *   for k = L-1 .. 0, for m: engine_backward_input(m, k), mask k - 1 (k > 0)
 *                            engine_backward_params(m, k, m & 1) into pair m / 2
 *          the pairs summed in the engine's sum tree (fwd_pipeline.c)
 *          pipelined: update layer k
 */
struct fwd_step {
	uint32_t kind;		/* WSE_LINK_RUN_* */
	uint32_t batch;
	uint32_t norm;		/* the batch the loss is averaged over */
	/* graph programs: its rows whose label is not -100 (ENGINE_XENT_IGNORE) */
	uint64_t norm_rows;
	uint32_t number;	/* 1-based within the RUN, for error texts */
	uint64_t t;		/* the optimizer step a TRAIN step takes (pipelined) */
};

/*
 * Starts @workers threads for program @p (its micro-batch workspaces, and
 * for a pipelined program its params, set up). @fault_stage:
 * --fault-stage-error, or -1.
 */
int fwd_pipeline_create(struct fwd_program *p, uint32_t workers, int fault_stage,
			struct fwd_pipeline **out);
/*
 * Room for the pair sums of steps of up to @micro micro-batches; between
 * steps. 0 or -ENOMEM.
 */
int fwd_pipeline_reserve(struct fwd_pipeline *pl, uint32_t micro);
/* Ends and joins the workers; no step may be in flight. */
void fwd_pipeline_destroy(struct fwd_pipeline *pl);

/*
 * Starts a step on the batch staged in @p. A pipelined program's layers
 * are open at once with its resident parameters; weight streaming opens
 * them with the calls below. @notify(@arg) is called from a worker, with
 * no lock of the pipeline held, when the step ends or fails and, weight
 * streaming, when a layer's backward pass is complete.
 */
void fwd_pipeline_begin(struct fwd_pipeline *pl, const struct fwd_step *step,
			void (*notify)(void *arg), void *arg);
/* Weight streaming: layer @k's weights for its forward passes. */
void fwd_pipeline_open_forward(struct fwd_pipeline *pl, uint32_t k, const float *w,
			       const float *b);
/* ... for its input gradients (k > 0). */
void fwd_pipeline_open_input(struct fwd_pipeline *pl, uint32_t k, const float *w);
/* ... and where its gradients accumulate (W then b). */
void fwd_pipeline_open_grads(struct fwd_pipeline *pl, uint32_t k, float *dw, float *db);

struct fwd_pipeline_state {
	bool failed, done;
	uint32_t micro, through;	/* micro-batches, and those all the way through */
	uint64_t backward;	/* bit k: layer k's backward pass is complete */
	/*
	 * Pipelined training: the layer that held the most micro-batches'
	 * activations for its pipeline depth, how many, and its depth.
	 */
	uint32_t held_layer, held_most, held_depth;
};
void fwd_pipeline_state(struct fwd_pipeline *pl, struct fwd_pipeline_state *st);

/*
 * Ends the step, with @abort before it is complete (nothing more starts).
 * Returns once no task runs: WSE_LINK_OK, or the status of a failed task
 * with @text filled in. *updated: whether a layer took the optimizer step.
 */
uint32_t fwd_pipeline_end(struct fwd_pipeline *pl, bool abort, char *text, size_t len,
			  bool *updated);

#endif /* FWD_PIPELINE_H */
