// SPDX-License-Identifier: GPL-2.0-only
/*
 * A step's engine calls as a graph of tasks, run by a few worker threads
 * (--workers, by default one per CPU), started when a program is loaded
 * and joined when it goes. Both execution modes run their steps here.
 *
 * Tasks, for micro-batch m and layer k (L layers, n micro-batches):
 *   F(k, m)   (k = 0: load the input) layer k's forward pass. The last
 *             layer's also writes m's losses and predictions and, when
 *             training, takes the loss and masks its output gradient.
 *   X(k, m)   k > 0: the gradient of layer k's input, then layer k - 1's
 *             ReLU mask on it (engine_backward_input, _mask).
 *   G(k, m)   layer k's weight and bias gradients of m into the buffer of
 *             its pair of micro-batches (m / 2): grad_beta 0 for the first
 *             of the pair, 1 for the second (engine_backward_params).
 *   A(k, i)   adds pair buffer i of layer k into the one on its left in
 *             the reduction tree (below), once both are complete.
 *   U(k)      layer pipelined: layer k's optimizer update, once the step's
 *             last X(k, .) and the tree's root are done. With fp16 loss
 *             scaling, once every layer's are: U(0) divides every layer's
 *             gradient by the scale and, if any is not finite, skips the
 *             step (every U) and halves the scale (GradScaler's rules);
 *             the other U(k) follow it.
 * Dependencies: F(k, m) after F(k - 1, m) and layer k's forward weights;
 * X(k, m) after m's gradient reached layer k (the loss, or X(k + 1, m));
 * G(k, m) after the same and, for the second of a pair, after the first.
 * A micro-batch's F and X tasks hold its workspace one at a time; a G
 * task only reads what they have finished with, so G(k, m) runs beside
 * X(k, m) or X(k - 1, m).
 *
 * The reduction tree. A layer's gradient is the sum over the step's
 * micro-batches in the engine's sum tree (wse/engine.h): pairs first (the
 * second GEMM of a pair adds its product to the first's once, as an
 * explicit add would), then the pairs' sums. A power-of-two run of
 * micro-batches aligned to its size is a subtree, so a data-parallel host
 * that gives each system such a run of the same micro-batches (a RUN's
 * leaf size) and sums the systems' results in the same tree (SwarmX) gets
 * the bits of one system doing all of them (Documentation/
 * wse-appliance.rst). The micro-batches must be the same, not only the
 * sums: a sample's forward bits depend on the number of rows of the sgemm
 * its micro-batch makes.
 *
 * Determinism: every task is one fixed engine call sequence on fixed
 * inputs, whichever thread runs it and whenever, and the sums across
 * micro-batches follow the tree. So the results are the same for any
 * number of workers and in both modes. A layer's weights change only in
 * U(k), after every task that reads them.
 *
 * A graph program's units are its layers (fwd_graph.h): X(k, m) is unit
 * k's whole backward pass on m's graph, for unit 0 too, and G(k, m) adds
 * what it left in m's graph, so it follows X(k, m).
 *
 * Layer pipelined, every layer is open from the start with the program's
 * resident parameters. Weight streaming, the RUN's thread opens a layer's
 * forward pass, input gradients and gradient buffer as its weights arrive
 * and its gradient buffer has room (fwd_run.c), and asks which layers are
 * done with them.
 *
 * Errors and stops: the first failure is kept and no task starts after it
 * (nor after fwd_pipeline_end() aborts the step); fwd_pipeline_end()
 * returns once no task runs, so the workers are idle between steps and a
 * stop waits only for the engine calls in progress.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/engine_wsep.h"
#include "fwd_graph.h"
#include "fwd_log.h"
#include "wse/engine_wsep.h"
#include "fwd_pipeline.h"

#define TEXT_MAX	256

enum task_kind { TASK_NONE, TASK_F, TASK_X, TASK_G, TASK_A, TASK_U };

struct task {
	enum task_kind kind;
	uint32_t k, m;		/* A: m is the right pair, lo the left */
	uint32_t lo;
};

struct layer_state {
	const float *w, *b;	/* forward */
	const float *wx;	/* for the input gradient */
	float *dw, *db;		/* gradient buffers: pair 0, the tree's root */
	bool fwd_open, in_open, grad_open;
	uint32_t forwarded;	/* micro-batches through F(k, .) */
	uint32_t inputs;	/* through X(k, .) */
	uint64_t g_busy, g_done;	/* bit m: G(k, m) running, done */
	uint32_t a_busy, a_done;	/* bit i: the add of pair i into its left */
	bool updating, updated;
	uint32_t most_held;	/* pipelined training: the most micro-batches holding activations here */
};

struct micro_state {
	uint32_t fwd;		/* layers forwarded */
	int32_t dy;		/* lowest layer whose output gradient is ready; L: none;
				 * -1: a graph's unit 0 is through (X(0, m) done) */
	bool busy;		/* an F or X task holds its workspace */
};

struct fwd_pipeline {
	struct fwd_program *p;
	int fault_stage;		/* --fault-stage-error, or -1 */
	uint32_t workers, started, idle;
	pthread_t thread[FWD_WORKERS_MAX];

	pthread_mutex_t lock;		/* guards everything below */
	pthread_cond_t work;		/* a task may be ready, or quit */
	pthread_cond_t quiet;		/* no task runs */
	bool quit;
	/* The step in flight. */
	bool active, abort;
	struct fwd_step step;
	uint32_t n, L;		/* micro-batches (the leaves of the gradient sums), layers */
	bool train, resident;
	bool graph;			/* a graph program: X(0, m) too, G(k, m) after X(k, m) */
	void (*notify)(void *arg);
	void *notify_arg;
	bool notify_layers;		/* tell of layers done, not only of the step */
	uint32_t running;
	uint32_t status;
	char text[TEXT_MAX];
	bool updated;
	/* fp16 loss scaling this step; U(0) has checked every gradient; one was inf or NaN. */
	bool scaling, scale_checked, found_inf;
	struct layer_state layer[ENGINE_MAX_LAYERS];
	struct micro_state micro[FWD_MICRO_BATCHES_MAX];
	/* Pair buffers 1.. of each layer (W then b each), for scratch_pairs pairs. */
	float *scratch[ENGINE_MAX_LAYERS];
	uint32_t scratch_pairs;
};

static uint32_t pairs_of(uint32_t n)
{
	return (n + 1) / 2;
}

/* Lock held. Have pair i's G tasks all run? */
static bool pair_done(const struct fwd_pipeline *pl, const struct layer_state *ls, uint32_t i)
{
	uint32_t m = 2 * i;

	return (ls->g_done >> m & 1) && (m + 1 >= pl->n || (ls->g_done >> (m + 1) & 1));
}

/* Lock held. Is the tree node over pairs [lo, lo + c) complete? */
static bool node_done(const struct fwd_pipeline *pl, const struct layer_state *ls, uint32_t lo,
		      uint32_t c)
{
	return c == 1 ? pair_done(pl, ls, lo) : (ls->a_done >> (lo + engine_sum_tree_split(c)) & 1);
}

/* Lock held. An add of the subtree over pairs [lo, lo + c) that can run, or false. */
static bool ready_add(const struct fwd_pipeline *pl, const struct layer_state *ls, uint32_t lo,
		      uint32_t c, struct task *t)
{
	uint32_t h, mid;

	if (c < 2)
		return false;
	h = engine_sum_tree_split(c);
	mid = lo + h;
	if (ls->a_done >> mid & 1)
		return false;
	if (node_done(pl, ls, lo, h) && node_done(pl, ls, mid, c - h)) {
		t->m = mid;
		t->lo = lo;
		return !(ls->a_busy >> mid & 1);
	}
	return ready_add(pl, ls, lo, h, t) || ready_add(pl, ls, mid, c - h, t);
}

/* Lock held. Layer k's gradient complete: every G task ran and the tree is summed. */
static bool grads_done(const struct fwd_pipeline *pl, const struct layer_state *ls)
{
	uint64_t all = pl->n == 64 ? ~0ULL : (1ULL << pl->n) - 1;

	return ls->g_done == all && node_done(pl, ls, 0, pairs_of(pl->n));
}

/*
 * Pair @i's gradient buffers of layer @k: W, and b after it (a graph's
 * unit: one range, *@b NULL).
 */
static float *pair_buf(struct fwd_pipeline *pl, uint32_t k, uint32_t i, float **b)
{
	const struct wsep_layer *l = &pl->p->prog->layers[k];
	size_t wn = (size_t)l->in * l->out;
	float *w;

	if (!i) {
		*b = pl->layer[k].db;
		return pl->layer[k].dw;
	}
	w = pl->scratch[k] + (size_t)(i - 1) * wsep_layer_params(l);
	*b = pl->graph ? NULL : w + wn;
	return w;
}

/* Lock held. Has layer k's backward finished (its gradients, and the update if resident)? */
static bool layer_backward_done(const struct fwd_pipeline *pl, uint32_t k)
{
	const struct layer_state *ls = &pl->layer[k];

	if (!grads_done(pl, ls) || ((k || pl->graph) && ls->inputs < pl->n))
		return false;
	return !pl->resident || ls->updated;
}

/* Lock held. Is every task of the step done? */
static bool step_done(const struct fwd_pipeline *pl)
{
	if (!pl->train)
		return pl->layer[pl->L - 1].forwarded == pl->n;
	for (uint32_t k = 0; k < pl->L; k++)
		if (!layer_backward_done(pl, k))
			return false;
	return true;
}

/* Lock held. Has micro-batch @m let go of its activations at layer @k (G and X done there)? */
static bool released(const struct fwd_pipeline *pl, uint32_t k, uint32_t m)
{
	bool x_done = pl->micro[m].dy < (int32_t)k || (!k && !pl->graph);

	return (pl->layer[k].g_done >> m & 1) && x_done;
}

/*
 * Lock held. May micro-batch @m enter layer @k forward? Layer pipelined
 * training, micro-batches enter a layer in order and only while fewer than
 * its pipeline depth, 2 (L - k) - 1, hold activations there: what the
 * compiler sized its SRAM for (Documentation/compiler.rst, "Pipelined
 * memory"). The oldest micro-batch not done always finds room, so the
 * step cannot stall. Weight streaming runs a layer's micro-batches while
 * its weights are there; forward only, none is held.
 */
static bool may_enter(const struct fwd_pipeline *pl, uint32_t k, uint32_t m)
{
	uint32_t held = 0;

	if (!pl->resident || !pl->train)
		return true;
	if (m != pl->layer[k].forwarded)
		return false;
	for (uint32_t j = 0; j < m; j++)
		held += !released(pl, k, j);
	return held < 2 * (pl->L - k) - 1;
}

/*
 * Lock held. The next ready task: updates, then input gradients (they
 * open the layers below), then weight gradients and their sums, then
 * forward passes, earliest micro-batch first. Weight gradients go from the
 * lowest layer up when the device updates the layers itself (layer 0's
 * chain is the longest); weight streaming, from the top layer down, so
 * that the host updates the upper layers while layer 0's gradients are
 * still being summed, and layer 0's update, which the next step waits
 * for first, is the only one left at the end. The order changes no bit.
 */
/* Lock held. Are layer k's gradients complete, ready for its update? */
static bool grads_ready(const struct fwd_pipeline *pl, uint32_t k)
{
	const struct layer_state *ls = &pl->layer[k];

	return grads_done(pl, ls) && ((!k && !pl->graph) || ls->inputs == pl->n);
}

/* Lock held. May U(k) start? Loss scaling waits for every gradient and U(0)'s check. */
static bool may_update(const struct fwd_pipeline *pl, uint32_t k)
{
	if (!pl->scaling)
		return grads_ready(pl, k);
	for (uint32_t j = 0; j < pl->L; j++)
		if (!grads_ready(pl, j))
			return false;
	return k == 0 || pl->scale_checked;
}

static struct task pick(const struct fwd_pipeline *pl)
{
	uint32_t L = pl->L, n = pl->n;
	struct task t = { TASK_NONE, 0, 0, 0 };

	if (!pl->active || pl->abort)
		return t;
	if (pl->train) {
		for (uint32_t k = 0; pl->resident && k < L; k++) {
			const struct layer_state *ls = &pl->layer[k];

			if (!ls->updated && !ls->updating && may_update(pl, k))
				return (struct task){ TASK_U, k, 0, 0 };
		}
		for (uint32_t m = 0; m < n; m++) {
			const struct micro_state *ms = &pl->micro[m];
			int32_t k = ms->dy;

			if (!ms->busy && k >= (pl->graph ? 0 : 1) && k < (int32_t)L &&
			    pl->layer[k].in_open)
				return (struct task){ TASK_X, (uint32_t)k, m, 0 };
		}
		for (uint32_t i = 0; i < L; i++) {
			uint32_t k = pl->resident ? i : L - 1 - i;
			const struct layer_state *ls = &pl->layer[k];

			if (!ls->grad_open)
				continue;
			if (ready_add(pl, ls, 0, pairs_of(pl->n), &t)) {
				t.kind = TASK_A;
				t.k = k;
				return t;
			}
			for (uint32_t l = 0; l < pl->n; l++) {
				uint64_t bit = 1ULL << l;

				/* Dense: l's gradient reached layer k; a graph: X(k, l) is done. */
				if (!(ls->g_done & bit) && !(ls->g_busy & bit) &&
				    pl->micro[l].dy + (pl->graph ? 1 : 0) <= (int32_t)k &&
				    (!(l & 1) || (ls->g_done & bit >> 1)))
					return (struct task){ TASK_G, k, l, 0 };
			}
		}
	}
	for (uint32_t m = 0; m < n; m++) {
		const struct micro_state *ms = &pl->micro[m];

		if (!ms->busy && ms->fwd < L && pl->layer[ms->fwd].fwd_open &&
		    may_enter(pl, ms->fwd, m))
			return (struct task){ TASK_F, ms->fwd, m, 0 };
	}
	return (struct task){ TASK_NONE, 0, 0, 0 };
}

/* Lock held: marks what @t holds while it runs. */
static void claim(struct fwd_pipeline *pl, const struct task *t)
{
	switch (t->kind) {
	case TASK_F:
	case TASK_X:
		pl->micro[t->m].busy = true;
		break;
	case TASK_G:
		pl->layer[t->k].g_busy |= 1ULL << t->m;
		break;
	case TASK_A:
		pl->layer[t->k].a_busy |= 1U << t->m;
		break;
	case TASK_U:
		pl->layer[t->k].updating = true;
		break;
	case TASK_NONE:
		break;
	}
}

/*
 * Lock held: what @t's completion makes true. Returns whether the RUN's
 * thread should hear of it: a layer's backward pass complete (weight
 * streaming sends its gradients out then).
 */
static bool complete(struct fwd_pipeline *pl, const struct task *t)
{
	struct layer_state *ls = &pl->layer[t->k];
	struct micro_state *ms = &pl->micro[t->m];

	switch (t->kind) {
	case TASK_F:
		ms->busy = false;
		ms->fwd = t->k + 1;
		if (t->k + 1 == pl->L && pl->train)
			ms->dy = (int32_t)t->k;
		ls->forwarded++;
		if (pl->resident && pl->train) {
			uint32_t held = 0;

			for (uint32_t j = 0; j < pl->n; j++)
				held += pl->micro[j].fwd > t->k && !released(pl, t->k, j);
			if (held > ls->most_held)
				ls->most_held = held;
		}
		return false;
	case TASK_X:
		ms->busy = false;
		ms->dy = (int32_t)t->k - 1;
		return ++ls->inputs == pl->n && grads_done(pl, ls);
	case TASK_G:
		ls->g_busy &= ~(1ULL << t->m);
		ls->g_done |= 1ULL << t->m;
		return grads_done(pl, ls) && ((!t->k && !pl->graph) || ls->inputs == pl->n);
	case TASK_A:
		ls->a_busy &= ~(1U << t->m);
		ls->a_done |= 1U << t->m;
		return grads_done(pl, ls) && ((!t->k && !pl->graph) || ls->inputs == pl->n);
	case TASK_U:
		ls->updating = false;
		ls->updated = true;
		pl->scale_checked |= t->k == 0;
		pl->updated = true;
		return true;
	case TASK_NONE:
		break;
	}
	return false;
}

/*
 * U(0) under fp16 loss scaling: every layer's gradient divided by the
 * step's scale; whether all are finite decides the step and moves the
 * scaler on. The other U tasks wait for this one.
 */
static void unscale_all(struct fwd_pipeline *pl)
{
	struct fwd_program *p = pl->p;
	float scale = p->scaler.scale;
	bool finite = true;

	for (uint32_t k = 0; k < pl->L; k++) {
		const struct wsep_layer *l = &p->prog->layers[k];
		struct layer_state *ls = &pl->layer[k];

		if (pl->graph) {
			finite &= engine_unscale(ls->dw, wsep_layer_params(l), scale);
		} else {
			finite &= engine_unscale(ls->dw, (size_t)l->in * l->out, scale);
			finite &= engine_unscale(ls->db, l->out, scale);
		}
	}
	pl->found_inf = !finite;
	engine_loss_scaler_update(&p->scaler, !finite);
	if (!finite)
		fwd_info("step %llu: fp16 gradients overflowed at loss scale %g: the step is skipped, the scale is now %g (%llu skipped)",
			 (unsigned long long)pl->step.number, scale, p->scaler.scale,
			 (unsigned long long)p->scaler.skipped);
}

/* U(k): the update, unless loss scaling found the step's gradients not finite. */
static bool update_skipped(struct fwd_pipeline *pl, const struct task *t)
{
	if (!pl->scaling)
		return false;
	if (t->k == 0)
		unscale_all(pl);
	return pl->found_inf;
}

/* A graph program's task (fwd_graph.h). */
static int run_graph_task(struct fwd_pipeline *pl, const struct task *t, const char **what)
{
	struct fwd_program *p = pl->p;
	const struct layer_state *ls = &pl->layer[t->k];
	float *dw, *db, *rw, *rb;

	switch (t->kind) {
	case TASK_F:
		if ((int)t->k == pl->fault_stage && t->m + 1 == pl->n) {
			*what = "the forward pass";
			return -EIO;	/* injected for tests: an engine failure in one unit */
		}
		return fwd_graph_forward(p, &pl->step, t->k, t->m, ls->w, what);
	case TASK_X:
		return fwd_graph_backward(p, &pl->step, t->k, t->m, ls->wx, what);
	case TASK_G:
		*what = "the backward pass";
		dw = pair_buf(pl, t->k, t->m / 2, &db);
		return fwd_graph_gradients(p, t->k, t->m, !(t->m & 1), dw);
	case TASK_A:
		*what = "the gradient sum";
		dw = pair_buf(pl, t->k, t->lo, &db);
		rw = pair_buf(pl, t->k, t->m, &rb);
		engine_vec_add(dw, rw, wsep_layer_params(&p->prog->layers[t->k]));
		return 0;
	case TASK_U:
		*what = "the optimizer update";
		return update_skipped(pl, t) ? 0 : fwd_graph_update(p, t->k, pl->step.t);
	case TASK_NONE:
		break;
	}
	return -EINVAL;
}

/* Runs task @t's engine calls; on failure *what names the part. */
static int run_task(struct fwd_pipeline *pl, const struct task *t, const char **what)
{
	struct fwd_program *p = pl->p;
	const struct fwd_step *step = &pl->step;
	const struct layer_state *ls = &pl->layer[t->k];
	struct engine_workspace *ws = p->micro_ws[t->m];
	struct fwd_micro s = fwd_micro_at(p, step->batch, t->m);
	const struct wsep_layer *l;
	struct engine_loss_result res;
	float *dw, *db, *rw, *rb;
	int err;

	/* Matrix products at the program's precision, on whichever worker. */
	engine_set_precision(engine_precision_from_wsep(p->prog->precision));
	if (pl->graph)
		return run_graph_task(pl, t, what);
	switch (t->kind) {
	case TASK_F:
		if (t->k == 0) {
			*what = "loading the input";
			err = fwd_micro_load(p, t->m, s);
			if (err)
				return err;
		}
		*what = "the forward pass";
		if ((int)t->k == pl->fault_stage && t->m + 1 == pl->n)
			return -EIO;	/* injected for tests: an engine failure in one layer */
		err = engine_forward_layer(ws, t->k, ls->w, ls->b);
		if (err || t->k + 1 < pl->L)
			return err;
		err = fwd_micro_results(p, step->kind, t->m, s, what);
		if (err || !pl->train)
			return err;
		*what = "the loss";
		/* Weight streaming too: the scale is then the RUN's (fwd_run.c). */
		if (p->loss_scaling && !(p->scaler.scale > 0.0f)) {
			*what = "fp16 loss scaling (every step overflowed until the scale fell to 0: the weights have diverged)";
			return -ERANGE;
		}
		err = engine_loss_scaled(ws, p->labels_u8 + s.first, step->norm,
					 p->loss_scaling ? p->scaler.scale : 1.0f, &res);
		if (!err) {
			*what = "the backward pass";
			err = engine_backward_mask(ws, t->k);
		}
		return err;
	case TASK_X:
		*what = "the backward pass";
		err = engine_backward_input(ws, t->k, ls->wx);
		return err ? err : engine_backward_mask(ws, t->k - 1);
	case TASK_G:
		*what = "the backward pass";
		dw = pair_buf(pl, t->k, t->m / 2, &db);
		return engine_backward_params(ws, t->k, t->m & 1 ? 1.0f : 0.0f, dw, db);
	case TASK_A:
		*what = "the gradient sum";
		dw = pair_buf(pl, t->k, t->lo, &db);
		rw = pair_buf(pl, t->k, t->m, &rb);
		l = &p->prog->layers[t->k];
		engine_vec_add(dw, rw, (size_t)l->in * l->out);
		engine_vec_add(db, rb, l->out);
		return 0;
	case TASK_U: {
		/* The program's schedule, as a graph program's and MemoryX's follow it. */
		struct engine_optim o = engine_optim_at(&p->opt, &p->sched, step->t);

		*what = "the optimizer update";
		return update_skipped(pl, t) ? 0 :
		       engine_params_update_layer(p->params, &o, step->t, t->k);
	}
	case TASK_NONE:
		break;
	}
	return -EINVAL;
}

static void *worker_main(void *arg)
{
	struct fwd_pipeline *pl = arg;

	pthread_mutex_lock(&pl->lock);
	for (;;) {
		struct task t = pick(pl);
		const char *what = "";
		bool tell;
		int err;

		if (pl->quit)
			break;
		if (t.kind == TASK_NONE) {
			pl->idle++;
			pthread_cond_wait(&pl->work, &pl->lock);
			pl->idle--;
			continue;
		}
		claim(pl, &t);
		pl->running++;
		/* Another ready task and an idle worker: wake it. */
		if (pl->idle && pick(pl).kind != TASK_NONE)
			pthread_cond_signal(&pl->work);
		pthread_mutex_unlock(&pl->lock);

		err = run_task(pl, &t, &what);

		pthread_mutex_lock(&pl->lock);
		pl->running--;
		if (err) {
			if (!pl->abort) {
				pl->abort = true;
				pl->status = fwd_micro_failed(pl->text, sizeof(pl->text),
							      pl->step.number, what, err);
			}
			tell = true;
		} else {
			tell = complete(pl, &t) && pl->notify_layers;
			tell = tell || step_done(pl);
		}
		if (!pl->running && (pl->abort || step_done(pl)))
			pthread_cond_broadcast(&pl->quiet);
		if (tell && pl->notify) {
			void (*notify)(void *) = pl->notify;
			void *narg = pl->notify_arg;

			pthread_mutex_unlock(&pl->lock);
			notify(narg);
			pthread_mutex_lock(&pl->lock);
		}
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
	pthread_cond_broadcast(&pl->work);
	pthread_mutex_unlock(&pl->lock);
	for (uint32_t i = 0; i < pl->started; i++)
		pthread_join(pl->thread[i], NULL);
	for (uint32_t k = 0; k < pl->L; k++)
		free(pl->scratch[k]);
	pthread_cond_destroy(&pl->work);
	pthread_cond_destroy(&pl->quiet);
	pthread_mutex_destroy(&pl->lock);
	free(pl);
}

int fwd_pipeline_create(struct fwd_program *p, uint32_t workers, int fault_stage,
			struct fwd_pipeline **out)
{
	struct fwd_pipeline *pl;
	int err = 0;

	if (!workers || workers > FWD_WORKERS_MAX)
		return -EINVAL;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->p = p;
	pl->fault_stage = fault_stage;
	pl->workers = workers;
	pl->L = p->prog->num_layers;
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->work, NULL);
	pthread_cond_init(&pl->quiet, NULL);
	for (uint32_t i = 0; i < workers && !err; i++) {
		err = -pthread_create(&pl->thread[i], NULL, worker_main, pl);
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

int fwd_pipeline_reserve(struct fwd_pipeline *pl, uint32_t micro)
{
	uint32_t extra = pairs_of(micro) - 1;

	if (extra <= pl->scratch_pairs)
		return 0;
	for (uint32_t k = 0; k < pl->L; k++) {
		const struct wsep_layer *l = &pl->p->prog->layers[k];
		float *s = realloc(pl->scratch[k], (size_t)extra * wsep_layer_params(l) * sizeof(float));

		if (!s)
			return -ENOMEM;
		pl->scratch[k] = s;
	}
	pl->scratch_pairs = extra;
	return 0;
}

void fwd_pipeline_begin(struct fwd_pipeline *pl, const struct fwd_step *step,
			void (*notify)(void *arg), void *arg)
{
	struct fwd_program *p = pl->p;

	pthread_mutex_lock(&pl->lock);
	pl->step = *step;
	pl->n = fwd_micro_count(p, step->batch);
	pl->train = step->kind == WSE_LINK_RUN_TRAIN;
	pl->resident = p->resident;
	pl->graph = p->graph != NULL;
	pl->notify = notify;
	pl->notify_arg = arg;
	pl->notify_layers = !pl->resident;
	pl->abort = false;
	pl->updated = false;
	pl->scaling = p->loss_scaling && pl->resident && pl->train;
	pl->scale_checked = false;
	pl->found_inf = false;
	pl->status = WSE_LINK_OK;
	pl->text[0] = '\0';
	memset(pl->layer, 0, sizeof(pl->layer[0]) * pl->L);
	for (uint32_t m = 0; m < pl->n; m++)
		pl->micro[m] = (struct micro_state){ .dy = (int32_t)pl->L };
	for (uint32_t k = 0; pl->resident && k < pl->L; k++) {
		struct layer_state *ls = &pl->layer[k];

		if (pl->graph) {
			*ls = (struct layer_state){
				.w = fwd_graph_weights(p->graph, k), .wx = fwd_graph_weights(p->graph, k),
				.dw = fwd_graph_grads(p->graph, k),
				.fwd_open = true, .in_open = true, .grad_open = true,
			};
		} else {
			struct engine_layer *el = &p->params->layer[k];

			*ls = (struct layer_state){
				.w = el->w, .b = el->b, .wx = el->w, .dw = el->dw, .db = el->db,
				.fwd_open = true, .in_open = true, .grad_open = true,
			};
		}
	}
	pl->active = true;
	pthread_cond_signal(&pl->work);
	pthread_mutex_unlock(&pl->lock);
}

void fwd_pipeline_open_forward(struct fwd_pipeline *pl, uint32_t k, const float *w,
			       const float *b)
{
	pthread_mutex_lock(&pl->lock);
	pl->layer[k].w = w;
	pl->layer[k].b = b;
	pl->layer[k].fwd_open = true;
	pthread_cond_signal(&pl->work);	/* a worker that claims a task wakes the next */
	pthread_mutex_unlock(&pl->lock);
}

void fwd_pipeline_open_input(struct fwd_pipeline *pl, uint32_t k, const float *w)
{
	pthread_mutex_lock(&pl->lock);
	pl->layer[k].wx = w;
	pl->layer[k].in_open = true;
	pthread_cond_signal(&pl->work);
	pthread_mutex_unlock(&pl->lock);
}

void fwd_pipeline_open_grads(struct fwd_pipeline *pl, uint32_t k, float *dw, float *db)
{
	pthread_mutex_lock(&pl->lock);
	pl->layer[k].dw = dw;
	pl->layer[k].db = db;
	pl->layer[k].grad_open = true;
	pthread_cond_signal(&pl->work);
	pthread_mutex_unlock(&pl->lock);
}

void fwd_pipeline_state(struct fwd_pipeline *pl, struct fwd_pipeline_state *st)
{
	pthread_mutex_lock(&pl->lock);
	st->failed = pl->abort;
	st->done = step_done(pl);
	st->micro = pl->n;
	st->through = pl->train ? (uint32_t)__builtin_popcountll(pl->layer[0].g_done) :
				  pl->layer[pl->L - 1].forwarded;
	st->backward = 0;
	for (uint32_t k = 0; pl->train && k < pl->L; k++)
		if (layer_backward_done(pl, k))
			st->backward |= 1ULL << k;
	st->held_layer = 0;
	for (uint32_t k = 1; k < pl->L; k++)
		if ((uint64_t)pl->layer[k].most_held * (2 * (pl->L - st->held_layer) - 1) >
		    (uint64_t)pl->layer[st->held_layer].most_held * (2 * (pl->L - k) - 1))
			st->held_layer = k;
	st->held_most = pl->layer[st->held_layer].most_held;
	st->held_depth = 2 * (pl->L - st->held_layer) - 1;
	pthread_mutex_unlock(&pl->lock);
}

uint32_t fwd_pipeline_end(struct fwd_pipeline *pl, bool abort, char *text, size_t len,
			  bool *updated)
{
	uint32_t status;

	pthread_mutex_lock(&pl->lock);
	if (abort)
		pl->abort = true;	/* nothing more starts */
	while (pl->running)
		pthread_cond_wait(&pl->quiet, &pl->lock);
	status = pl->status;
	if (!abort && !status && !step_done(pl)) {
		/* The caller gave up on a step the graph did not finish. */
		status = WSE_LINK_E_INTERNAL;
		snprintf(pl->text, sizeof(pl->text), "step %u: the step did not finish",
			 pl->step.number);
	}
	if (status)
		snprintf(text, len, "%s", pl->text);
	*updated = pl->updated;
	pl->active = false;
	pl->notify = NULL;
	pthread_mutex_unlock(&pl->lock);
	return status;
}
