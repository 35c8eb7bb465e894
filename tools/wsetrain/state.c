// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's state in and out of a checkpoint: where the schedule is
 * (step, epoch, position, shuffle seed) and what the mode holds (weights,
 * optimizer state, its step count), which the mode captures and restores
 * in the .wsep weights layout whichever mode it is, so a checkpoint taken
 * in one mode resumes in the other.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mode.h"
#include "wse/engine_wsep.h"

/* Optimizer state arrays the program's optimizer keeps beside the weights. */
static uint32_t state_arrays(const struct wsep_program *p)
{
	struct engine_optim opt;

	/* A loaded program's optimizer is one the engine knows. */
	return engine_optim_from_wsep(&p->opt, &opt) ? 0 : engine_optim_state_arrays(opt.kind);
}

int train_state_save(struct train_job *j, const struct train_progress *at)
{
	const struct wsep_program *p = j->p;
	struct train_checkpoint c = {
		.mode = p->mode, .systems = j->n, .fingerprint = train_fingerprint(p),
		.step = at->step, .epoch = at->epoch, .position = at->position,
		.shuffle_seed = at->order.seed,
		.floats = wsep_total_params(p->layers, p->num_layers),
		.state_arrays = state_arrays(p),
	};
	struct wse_params params;
	int ret = -1;

	snprintf(c.model, sizeof(c.model), "%s", p->model_name);
	c.weights = malloc(c.floats * sizeof(float));
	c.state = malloc((c.state_arrays ? c.state_arrays : 1) * c.floats * sizeof(float));
	if (!c.weights || !c.state) {
		train_fail("out of memory for a checkpoint");
		goto out;
	}
	params = (struct wse_params){ .floats = c.floats, .state_arrays = c.state_arrays,
				      .weights = c.weights, .state = c.state };
	if (j->mode->capture(j->mode_state, &params))
		goto out;
	if (params.step != at->step) {
		train_fail("%s has taken %llu optimizer steps, this run %llu: not checkpointing an inconsistent state",
			   j->sys[0].name, (unsigned long long)params.step,
			   (unsigned long long)at->step);
		goto out;
	}
	ret = train_checkpoint_save(j->o->checkpoint, &c);
	if (!ret && !j->o->quiet)
		printf("checkpoint: step %llu -> %s\n", (unsigned long long)at->step,
		       j->o->checkpoint);
out:
	train_checkpoint_free(&c);
	return ret;
}

/* Reads --resume's checkpoint and checks it is of @j's program. */
static int load_checkpoint(struct train_job *j, struct train_checkpoint *c)
{
	const struct train_opts *o = j->o;
	const struct wsep_program *p = j->p;
	char err[512];

	if (train_checkpoint_load(o->resume, c, err, sizeof(err)))
		return train_fail("--resume: %s", err);
	if (c->fingerprint != train_fingerprint(p) ||
	    c->floats != wsep_total_params(p->layers, p->num_layers) ||
	    c->state_arrays != state_arrays(p)) {
		train_fail("--resume %s: the checkpoint is of model %s with other layers, optimizer or batch than %s",
			   o->resume, c->model, p->model_name);
		train_checkpoint_free(c);
		return -1;
	}
	return 0;
}

int train_state_weights(struct train_job *j)
{
	struct train_checkpoint c;
	struct wse_params params;
	int ret;

	if (load_checkpoint(j, &c))
		return -1;
	params = (struct wse_params){ .floats = c.floats, .state_arrays = c.state_arrays,
				      .weights = c.weights, .state = c.state, .step = c.step };
	ret = j->mode->restore(j->mode_state, &params);
	train_checkpoint_free(&c);
	return ret;
}

int train_state_resume(struct train_job *j, struct train_progress *at)
{
	const struct train_opts *o = j->o;
	struct train_checkpoint c;
	struct wse_params params;
	int ret;

	if (load_checkpoint(j, &c))
		return -1;
	ret = -1;
	if (c.position > at->order.n || c.epoch >= o->epochs) {
		train_fail("--resume %s: it is at epoch %u, sample %u, beyond this run's %u epochs of %u samples",
			   o->resume, c.epoch + 1, c.position, o->epochs, at->order.n);
		goto out;
	}
	/* 1, 2, 4 and 8 systems sum the same leaves in the same tree; others do not. */
	if (c.systems != j->n && (8 % c.systems || 8 % j->n) && !o->quiet)
		printf("note: the checkpoint was written on %u systems, this run has %u: the gradients are summed in another order\n",
		       c.systems, j->n);
	params = (struct wse_params){ .floats = c.floats, .state_arrays = c.state_arrays,
				      .weights = c.weights, .state = c.state, .step = c.step };
	if (j->mode->restore(j->mode_state, &params))
		goto out;
	at->step = c.step;
	at->epoch = c.epoch;
	at->position = c.position;
	at->order.seed = c.shuffle_seed;
	if (!o->quiet)
		printf("resumed from %s: step %llu, epoch %u, %u samples into it\n", o->resume,
		       (unsigned long long)c.step, c.epoch + 1, c.position);
	ret = 0;
out:
	train_checkpoint_free(&c);
	return ret;
}
