// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pipeline stages of a layer pipelined program: one thread per layer,
 * started when the program is loaded and joined when it goes.
 *
 * A step puts one token per micro-batch in stage 0's inbox. A token is a
 * micro-batch and a direction; whoever holds it owns that micro-batch's
 * workspace, so no two stages ever touch the same one. Stage k takes
 * tokens from its inbox in order:
 *   forward m   (stage 0 loads micro-batch m first) layer k's forward pass,
 *               then the token goes on to stage k + 1. The last stage also
 *               writes the micro-batch's losses and predictions and, when
 *               training, takes its loss and turns the token backward.
 *   backward m  layer k's backward pass, its gradient accumulated over the
 *               micro-batches (grad_beta 0 for m = 0, else 1); after the
 *               last micro-batch, layer k's optimizer update. Then on to
 *               stage k - 1, or, from stage 0, the token is retired.
 * Forward-only steps retire tokens at the last stage. So stage k forwards
 * micro-batch m while stage k + 1 forwards m - 1, and backward passes flow
 * down while later forwards still flow up.
 *
 * Determinism: every inbox is FIFO and fed by one producer, so stage k
 * sees the forward tokens in order 0, 1, ... and the backward tokens in
 * the same order; its gradient sums are those of the sequential loop. A
 * layer's weights change only after its last backward token, which comes
 * after all of the step's forward tokens; the next step starts only when
 * every token is retired. Interleaving of forward and backward tokens at a
 * stage does not matter: forward reads only the weights, which do not
 * change within the step.
 *
 * Bounds: a step has micro_max tokens at most, and an inbox holds at most
 * all of them, so a hand-off never waits for room and cannot deadlock.
 *
 * Errors and stops: the first failure is kept and the step aborted; every
 * stage then retires the tokens it is handed without computing. A stop
 * (the link going) aborts the same way. The caller returns only when all
 * tokens are retired, so every stage is idle between steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwd_log.h"
#include "fwd_pipeline.h"

#define TEXT_MAX	256
#define STOP_POLL_MS	20	/* how often a running step asks whether to stop */

struct token {
	uint32_t m;
	bool backward;
};

struct stage {
	struct fwd_pipeline *pl;
	uint32_t layer;
	pthread_t thread;
	pthread_cond_t wake;			/* a token arrived, or quit */
	struct token inbox[FWD_MICRO_BATCHES_MAX];	/* a ring */
	uint32_t head, len;
};

struct fwd_pipeline {
	struct fwd_program *p;
	int fault_stage;		/* --fault-stage-error, or -1 */
	uint32_t stages, started;

	pthread_mutex_t lock;		/* guards everything below, and the inboxes */
	pthread_cond_t settled;		/* every token of the step is retired */
	bool quit;
	/* The step in flight. */
	struct fwd_step step;
	uint32_t tokens, retired;
	bool abort;
	bool updated;
	uint32_t status;
	char text[TEXT_MAX];
	struct stage stage[ENGINE_MAX_LAYERS];
};

/* Lock held. */
static void hand_to(struct stage *st, struct token t)
{
	st->inbox[(st->head + st->len) % FWD_MICRO_BATCHES_MAX] = t;
	st->len++;
	pthread_cond_signal(&st->wake);
}

/* Lock held. */
static void retire(struct fwd_pipeline *pl)
{
	if (++pl->retired == pl->tokens)
		pthread_cond_broadcast(&pl->settled);
}

/* Layer k's backward pass of micro-batch m, and its update after the last. */
static int backward(struct stage *st, const struct fwd_step *step, uint32_t m, uint32_t n,
		    bool *updated)
{
	struct fwd_program *p = st->pl->p;
	uint32_t k = st->layer;
	struct engine_layer *el = &p->params->layer[k];
	int err;

	err = engine_backward_layer(p->micro_ws[m], k, el->w, m ? 1.0f : 0.0f, el->dw, el->db);
	if (!err && m + 1 == n) {
		err = engine_params_update_layer(p->params, &p->opt, step->t, k);
		*updated = !err;
	}
	return err;
}

/*
 * Carries token @t through stage @st: returns 0 with @t turned backward if
 * the loss was taken here and *done set when the token is finished, or an
 * engine error with *what naming the part that failed.
 */
static int run_token(struct stage *st, const struct fwd_step *step, struct token *t,
		     bool *done, bool *updated, const char **what)
{
	struct fwd_pipeline *pl = st->pl;
	struct fwd_program *p = pl->p;
	uint32_t k = st->layer, L = pl->stages, n = fwd_micro_count(p, step->batch);
	struct fwd_micro s = fwd_micro_at(p, step->batch, t->m);
	struct engine_workspace *ws = p->micro_ws[t->m];
	const struct engine_layer *el = &p->params->layer[k];
	struct engine_loss_result res;
	int err;

	*done = false;
	if (t->backward) {
		*what = "the backward pass";
		err = backward(st, step, t->m, n, updated);
		*done = !err && k == 0;
		return err;
	}
	if (k == 0) {
		*what = "loading the input";
		err = fwd_micro_load(p, t->m, s);
		if (err)
			return err;
	}
	*what = "the forward pass";
	if ((int)k == pl->fault_stage && t->m + 1 == n)
		return -EIO;	/* injected for tests: an engine failure in one stage */
	err = engine_forward_layer(ws, k, el->w, el->b);
	if (err || k + 1 < L)
		return err;
	/* The last stage: the micro-batch's results, then turn it around. */
	err = fwd_micro_results(p, step->kind, t->m, s, what);
	if (err)
		return err;
	if (step->kind != WSE_LINK_RUN_TRAIN) {
		*done = true;
		return 0;
	}
	*what = "the loss";
	err = engine_loss(ws, p->labels_u8 + s.first, step->batch, &res);
	if (err)
		return err;
	t->backward = true;
	*what = "the backward pass";
	err = backward(st, step, t->m, n, updated);
	*done = !err && k == 0;
	return err;
}

static void *stage_main(void *arg)
{
	struct stage *st = arg;
	struct fwd_pipeline *pl = st->pl;

	pthread_mutex_lock(&pl->lock);
	for (;;) {
		struct fwd_step step;
		struct token t;
		const char *what = "";
		bool done, updated = false;
		int err;

		while (!st->len && !pl->quit)
			pthread_cond_wait(&st->wake, &pl->lock);
		if (pl->quit)
			break;
		t = st->inbox[st->head];
		st->head = (st->head + 1) % FWD_MICRO_BATCHES_MAX;
		st->len--;
		if (pl->abort) {
			retire(pl);
			continue;
		}
		step = pl->step;
		pthread_mutex_unlock(&pl->lock);

		err = run_token(st, &step, &t, &done, &updated, &what);

		pthread_mutex_lock(&pl->lock);
		pl->updated |= updated;
		if (err && !pl->abort) {
			pl->abort = true;
			pl->status = fwd_micro_failed(pl->text, sizeof(pl->text), step.number, what,
						      err);
		}
		if (err || done)
			retire(pl);
		else if (t.backward)
			hand_to(&pl->stage[st->layer - 1], t);
		else
			hand_to(&pl->stage[st->layer + 1], t);
	}
	pthread_mutex_unlock(&pl->lock);
	return NULL;
}

void fwd_pipeline_destroy(struct fwd_pipeline *pl)
{
	if (!pl)
		return;
	pthread_mutex_lock(&pl->lock);
	pl->quit = true;
	for (uint32_t k = 0; k < pl->started; k++)
		pthread_cond_signal(&pl->stage[k].wake);
	pthread_mutex_unlock(&pl->lock);
	for (uint32_t k = 0; k < pl->started; k++)
		pthread_join(pl->stage[k].thread, NULL);
	for (uint32_t k = 0; k < pl->stages; k++)
		pthread_cond_destroy(&pl->stage[k].wake);
	pthread_cond_destroy(&pl->settled);
	pthread_mutex_destroy(&pl->lock);
	free(pl);
}

int fwd_pipeline_create(struct fwd_program *p, int fault_stage, struct fwd_pipeline **out)
{
	struct fwd_pipeline *pl = calloc(1, sizeof(*pl));
	pthread_condattr_t attr;
	int err = 0;

	if (!pl)
		return -ENOMEM;
	pl->p = p;
	pl->fault_stage = fault_stage;
	pl->stages = p->prog->num_layers;
	pthread_mutex_init(&pl->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&pl->settled, &attr);
	pthread_condattr_destroy(&attr);
	for (uint32_t k = 0; k < pl->stages; k++) {
		pl->stage[k].pl = pl;
		pl->stage[k].layer = k;
		pthread_cond_init(&pl->stage[k].wake, NULL);
	}
	for (uint32_t k = 0; k < pl->stages && !err; k++) {
		err = -pthread_create(&pl->stage[k].thread, NULL, stage_main, &pl->stage[k]);
		if (!err)
			pl->started++;
	}
	if (err) {
		fwd_pipeline_destroy(pl);
		return err;
	}
	*out = pl;
	return 0;
}

uint32_t fwd_pipeline_step(struct fwd_pipeline *pl, const struct fwd_step *step,
			   bool (*stopping)(void *arg), void *arg, char *text, size_t len,
			   bool *updated)
{
	uint32_t n = fwd_micro_count(pl->p, step->batch), status, through = 0;
	bool stopped = false;

	pthread_mutex_lock(&pl->lock);
	pl->step = *step;
	pl->tokens = n;
	pl->retired = 0;
	pl->abort = false;
	pl->updated = false;
	pl->status = WSE_LINK_OK;
	pl->text[0] = '\0';
	for (uint32_t m = 0; m < n; m++)
		hand_to(&pl->stage[0], (struct token){ .m = m });
	while (pl->retired < pl->tokens) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += STOP_POLL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&pl->settled, &pl->lock, &ts) != ETIMEDOUT || pl->abort)
			continue;
		/* Still running: ask about the link without holding the stages up. */
		pthread_mutex_unlock(&pl->lock);
		stopped = stopping(arg);
		pthread_mutex_lock(&pl->lock);
		if (stopped && !pl->abort) {
			pl->abort = true;	/* the stages drop what they are handed */
			through = pl->retired;
		}
	}
	status = stopped ? FWD_RUN_STOPPED : pl->status;
	if (status && !stopped)
		snprintf(text, len, "%s", pl->text);
	*updated = pl->updated;
	pthread_mutex_unlock(&pl->lock);
	if (stopped)
		fwd_dbg("step %u stopped with %u of %u micro-batches through: the link is going",
			step->number, through, n);
	return status;
}
