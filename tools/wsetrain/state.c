// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's state in and out of a checkpoint: where the schedule is
 * (step, epoch, position, shuffle seed) and what the mode holds (weights,
 * optimizer state, its step count), which the mode captures and restores
 * in the .wsep weights layout whichever mode it is, so a checkpoint taken
 * in one mode resumes in the other.
 *
 * A resume continues a run: the same layers and optimizer, and by default
 * the same learning rate and batch (a change of either is allowed, with a
 * note). --init-from only takes the weights: the optimizer starts afresh
 * at step 0, so the batch, the learning rate, even the optimizer may
 * differ; only the input and the layers must match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "wse/engine_wsep.h"

/* Optimizer state arrays the program's optimizer keeps beside the weights. */
static uint32_t state_arrays(const struct wsep_program *p)
{
	struct engine_optim opt;

	/* A loaded program's optimizer is one the engine knows. */
	return engine_optim_from_wsep(&p->opt, &opt) ? 0 : engine_optim_state_arrays(opt.kind);
}

void train_state_describe(const struct train_job *j, const struct train_progress *at,
			  struct train_checkpoint *c)
{
	const struct wsep_program *p = j->p;

	c->mode = p->mode;
	c->systems = j->n;
	c->fingerprint = train_fingerprint(p);
	c->step = at->step;
	c->epoch = at->epoch;
	c->position = at->position;
	c->shuffle_seed = at->order.seed;
	c->floats = wsep_total_params(p->layers, p->num_layers);
	c->state_arrays = state_arrays(p);
	c->shape_fingerprint = train_shape_fingerprint(p);
	c->lr = p->opt.lr;
	c->batch = p->batch;
	c->crc_known = false;
	c->num_names = p->num_param_names;
	c->names = p->param_names;
	snprintf(c->model, sizeof(c->model), "%s", p->model_name);
}

int train_state_new(const struct train_job *j, const struct train_progress *at,
		    struct train_checkpoint *c)
{
	*c = (struct train_checkpoint){ 0 };
	train_state_describe(j, at, c);
	c->weights = malloc(c->floats * sizeof(float));
	c->state = malloc((c->state_arrays ? c->state_arrays : 1) * c->floats * sizeof(float));
	if (!c->weights || !c->state) {
		train_checkpoint_free(c);
		return train_fail("out of memory for a checkpoint");
	}
	return 0;
}

int train_state_capture(struct train_job *j, const struct train_progress *at,
			struct train_checkpoint *c)
{
	struct wse_params params;

	if (train_state_new(j, at, c))
		return -1;
	params = (struct wse_params){ .floats = c->floats, .state_arrays = c->state_arrays,
				      .weights = c->weights, .state = c->state };
	if (train_weights_capture(j, &params))
		goto fail;
	if (params.step != at->step) {
		train_fail("%s has taken %llu optimizer steps, this run %llu: not checkpointing an inconsistent state",
			   j->sys[0].name, (unsigned long long)params.step,
			   (unsigned long long)at->step);
		goto fail;
	}
	return 0;
fail:
	train_checkpoint_free(c);
	return -1;
}

void train_state_destination(const struct train_opts *o, uint64_t step, char *path, size_t len)
{
	if (o->checkpoint)
		snprintf(path, len, "%s", o->checkpoint);
	else
		train_rundir_checkpoint_path(o->model_dir, step, path, len);
}

int train_state_write(const struct train_opts *o, const struct train_checkpoint *c,
		      char *path, size_t len)
{
	train_state_destination(o, c->step, path, len);
	if (train_checkpoint_save(path, c))
		return -1;
	train_state_written(o);
	return 0;
}

void train_state_written(const struct train_opts *o)
{
	if (!o->checkpoint)
		train_rundir_prune(o->model_dir, o->keep);
}

int train_state_save(struct train_job *j, const struct train_progress *at, char *path,
		     size_t len)
{
	struct train_checkpoint c;
	int ret;

	if (train_state_capture(j, at, &c))
		return -1;
	ret = train_state_write(j->o, &c, path, len);
	train_checkpoint_free(&c);
	if (!ret && !j->o->quiet)
		train_report_note("checkpoint: step %llu -> %s", (unsigned long long)at->step, path);
	return ret;
}

/* Loads @path and checks that its weights fit @p; a message and -1 if not. */
static int load_for(const char *opt, const char *path, const struct wsep_program *p,
		    struct train_checkpoint *c)
{
	char err[512];
	int ret = train_checkpoint_load(path, c, err, sizeof(err));

	if (ret)
		return train_fail("%s: %s", opt, err);
	if (c->floats != wsep_total_params(p->layers, p->num_layers) ||
	    (c->shape_fingerprint && c->shape_fingerprint != train_shape_fingerprint(p))) {
		train_fail("%s %s: the checkpoint is of model %s, whose layers are not %s's",
			   opt, path, c->model, p->model_name);
		train_checkpoint_free(c);
		return -1;
	}
	return 0;
}

int train_state_resume(struct train_job *j, struct train_progress *at)
{
	const struct train_opts *o = j->o;
	const struct wsep_program *p = j->p;
	struct train_checkpoint c;
	struct wse_params params;
	int ret = -1;

	if (load_for("--resume", o->resume, p, &c))
		return -1;
	/* The same run but perhaps for the learning rate and the batch. */
	if (c.state_arrays != state_arrays(p) ||
	    (c.fingerprint != train_fingerprint(p) &&
	     (!c.batch || c.fingerprint != train_fingerprint_as(p, c.lr, c.batch)))) {
		train_fail("--resume %s: the checkpoint is of model %s with another optimizer%s than %s; --init-from takes its weights alone",
			   o->resume, c.model, c.batch ? "" : ", learning rate or batch",
			   p->model_name);
		goto out;
	}
	if (c.epoch >= o->epochs || (o->max_steps && c.step >= o->max_steps)) {
		train_fail("--resume %s: it is at step %llu, epoch %u, where this run of %u epochs%s ends: raise --epochs or --steps to train further",
			   o->resume, (unsigned long long)c.step, c.epoch + 1, o->epochs,
			   o->max_steps ? " and --steps" : "");
		goto out;
	}
	if (c.position > at->order.n) {
		train_fail("--resume %s: it is %u samples into epoch %u, beyond this run's %u samples",
			   o->resume, c.position, c.epoch + 1, at->order.n);
		goto out;
	}
	/* 1, 2, 4 and 8 systems sum the same leaves in the same tree; others do not. */
	if (c.systems != j->n && (8 % c.systems || 8 % j->n) && !o->quiet)
		printf("note: the checkpoint was written on %u systems, this run has %u: the gradients are summed in another order\n",
		       c.systems, j->n);
	if (!o->quiet && c.lr && c.lr != p->opt.lr)
		printf("note: the checkpoint was trained at learning rate %g; continuing at %g\n",
		       c.lr, p->opt.lr);
	if (!o->quiet && c.batch && c.batch != p->batch)
		printf("note: the checkpoint was trained with batches of %u; continuing with %u\n",
		       c.batch, p->batch);
	params = (struct wse_params){ .floats = c.floats, .state_arrays = c.state_arrays,
				      .weights = c.weights, .state = c.state, .step = c.step };
	if (train_weights_restore(j, &params))
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

int train_state_init_from(struct train_job *j, const char *opt, const char *path)
{
	const struct wsep_program *p = j->p;
	struct train_checkpoint c;
	struct wse_params params;
	uint32_t arrays = state_arrays(p);
	float *state;
	int ret = -1;

	if (load_for(opt, path, p, &c))
		return -1;
	/* A fresh optimizer: its state arrays zero, at step 0. */
	state = calloc((arrays ? arrays : 1) * c.floats, sizeof(float));
	if (!state) {
		train_checkpoint_free(&c);
		return train_fail("out of memory");
	}
	params = (struct wse_params){ .floats = c.floats, .state_arrays = arrays,
				      .weights = c.weights, .state = state, .step = 0 };
	if (!train_weights_restore(j, &params)) {
		ret = 0;
		/* Predictions may be going to stdout; characters are all there is to say. */
		if (!j->o->quiet && !j->o->sample) {
			FILE *f = j->o->task == TRAIN_TASK_PREDICT ? stderr : stdout;

			/* Flushed: an evaluation may take a while before its next line. */
			fprintf(f, "weights from %s (model %s, step %llu)\n", path, c.model,
				(unsigned long long)c.step);
			fflush(f);
		}
	}
	free(state);
	train_checkpoint_free(&c);
	return ret;
}
