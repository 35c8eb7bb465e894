// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run: epochs of training steps and an evaluation after each, or one
 * evaluation or prediction pass with a checkpoint's weights. An epoch
 * goes to the systems in chunks of at most --chunk steps, cut short so
 * that every --report and --checkpoint-every boundary and the --steps
 * limit fall between two chunks. A last batch smaller than the number of
 * systems is left out. Between chunks the run looks for Ctrl-C: it then
 * writes a checkpoint and ends with 128 + the signal.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

struct schedule {
	struct train_opts *o;
	struct train_job *j;
	struct train_steps *steps;
	struct train_report *report;
	struct train_rundir *rundir;
	struct train_saver *saver;	/* --checkpoint-every's writer */
	struct train_progress at;
	uint64_t steps_total;		/* what this run is to reach */
	uint32_t steps_per_epoch;
	struct train_final final;
	bool finished;			/* the summary was given */
};

/* The test set, forward only: loss and accuracy. */
static int evaluate(struct schedule *s)
{
	struct train_tally t;
	uint32_t n;
	double t0 = train_now();

	int ret = train_evaluate(s->j, s->steps, s->o->test_limit, &t, &n);

	if (ret < 0)
		return -1;
	/* Cut short by a signal: no figures, the run stops where it is. */
	if (!ret)
		train_report_test(s->report, &s->at, &t, n, train_now() - t0);
	return 0;
}

/* Steps of the next chunk of @b-sample batches: up to the next boundary. */
static uint64_t chunk_steps(const struct schedule *s, uint32_t left, uint32_t b)
{
	const struct train_opts *o = s->o;
	uint64_t step = s->at.step, n = b == s->j->batch ? left / b : 1;

	if (n > o->chunk)
		n = o->chunk;
	if (n > s->steps_total - step)
		n = s->steps_total - step;
	if (o->checkpoint_every && n > o->checkpoint_every - step % o->checkpoint_every)
		n = o->checkpoint_every - step % o->checkpoint_every;
	if (n > o->report - step % o->report)
		n = o->report - step % o->report;
	return n;
}

/*
 * A checkpoint of where the run is now, waited for (at the end, on
 * Ctrl-C), unless the writer has just written this very one; its path
 * kept. With the writer, the device takes the snapshot at once (it is
 * idle at this step) and it goes the writer's way.
 */
static int checkpoint(struct schedule *s)
{
	const char *path;

	if (!s->saver)
		return train_state_save(s->j, &s->at, s->final.checkpoint,
					sizeof(s->final.checkpoint));
	if (train_saver_flush(s->saver))
		return -1;
	if (train_saver_last(s->saver, &path) != s->at.step || !path[0]) {
		if (train_saver_due(s->saver, s->at.step) || train_saver_take(s->saver, &s->at) ||
		    train_saver_flush(s->saver))
			return -1;
		train_saver_last(s->saver, &path);
	}
	snprintf(s->final.checkpoint, sizeof(s->final.checkpoint), "%s", path);
	return 0;
}

static bool has_destination(const struct train_opts *o)
{
	return o->checkpoint || o->model_dir;
}

/* One epoch's training from the current position, stopping early at steps_total. */
static int train_epoch(struct schedule *s)
{
	const struct train_opts *o = s->o;
	struct train_job *j = s->j;
	struct train_progress *at = &s->at;
	uint32_t n = at->order.n;

	train_order_epoch(&at->order, at->epoch);
	while (at->position < n && at->step < s->steps_total && !train_interrupted()) {
		uint32_t left = n - at->position, b = left < j->batch ? left : j->batch;
		struct train_tally t = { 0 };
		uint64_t steps;
		bool due;

		if (b < j->n)
			break;	/* a remnant smaller than the number of systems */
		steps = chunk_steps(s, left, b);
		/* A checkpoint at the chunk's end: its state is kept there, written meanwhile. */
		due = s->saver && o->checkpoint_every && (at->step + steps) % o->checkpoint_every == 0;
		if (due && train_saver_due(s->saver, at->step + steps))
			return -1;
		if (train_steps_run(s->steps, WSE_RUN_TRAIN, &j->train, &at->order,
				    at->position, (uint32_t)steps, b, &t))
			return -1;
		at->step += steps;
		at->position += (uint32_t)steps * b;
		if ((due && train_saver_take(s->saver, at)) ||
		    (s->saver && train_saver_poll(s->saver)))
			return -1;
		train_report_add(s->report, at, &t, steps * b);
		if (at->step % o->report == 0 || at->position >= n || at->step == s->steps_total)
			train_report_progress(s->report, at);
	}
	return 0;
}

/* The run ends early on a signal: a checkpoint of where it is, then 128 + the signal. */
static int interrupted(struct schedule *s)
{
	int sig = train_interrupted();

	if (!has_destination(s->o)) {
		train_report_note("interrupted at step %llu: no --checkpoint or run directory to write a checkpoint to",
				  (unsigned long long)s->at.step);
		return 128 + sig;
	}
	if (checkpoint(s))
		return EXIT_TRAIN_FAILED;
	train_report_note("interrupted at step %llu; continue with --resume %s%s%s",
			  (unsigned long long)s->at.step, s->final.checkpoint,
			  s->o->model_dir ? ", or the same command with --model_dir " : "",
			  s->o->model_dir ? s->o->model_dir : "");
	return 128 + sig;
}

/* A signal's stop: the checkpoint, the summary, 128 + the signal. */
static int stop_here(struct schedule *s)
{
	int ret = interrupted(s);

	train_report_summary(s->report, &s->at, train_steps_times(s->steps), &s->final);
	s->finished = true;
	return ret;
}

uint64_t train_steps_total(const struct train_job *j, uint32_t *per_epoch)
{
	const struct train_opts *o = j->o;
	uint32_t n = j->used, epoch = n / j->batch + (n % j->batch >= j->n);
	uint64_t total = (uint64_t)epoch * o->epochs;

	if (per_epoch)
		*per_epoch = epoch;
	return o->max_steps && o->max_steps < total ? o->max_steps : total;
}

static int train(struct schedule *s)
{
	const struct train_opts *o = s->o;
	struct train_job *j = s->j;
	struct train_progress *at = &s->at;
	uint32_t used, n = at->order.n, evals;
	uint64_t start_step;
	double accuracy;

	s->steps_total = train_steps_total(j, &s->steps_per_epoch);
	if (o->resume && train_state_resume(j, at))
		return EXIT_TRAIN_FAILED;
	if (o->init_from && train_state_init_from(j, "--init-from", o->init_from))
		return EXIT_TRAIN_FAILED;
	start_step = at->step;
	/* One evaluation for each epoch the run reaches into, from this one. */
	evals = o->no_eval || !s->steps_per_epoch ? 0 :
		(uint32_t)((s->steps_total + s->steps_per_epoch - 1) / s->steps_per_epoch) -
		at->epoch;
	train_report_start(s->report, s->steps_total, s->steps_per_epoch, evals,
			   o->test_limit && o->test_limit < j->test.count ? o->test_limit :
									    j->test.count);
	used = n - (n % j->batch < j->n ? n % j->batch : 0);
	while (at->epoch < o->epochs && at->step < s->steps_total) {
		if (train_epoch(s))
			return EXIT_TRAIN_FAILED;
		if (train_interrupted())
			return stop_here(s);
		if (at->position < used)
			break;	/* stopped by --steps inside the epoch */
		if (!o->no_eval && evaluate(s))
			return EXIT_TRAIN_FAILED;
		/* Its evaluation cut short: a resumed run evaluates this epoch again. */
		if (train_interrupted())
			return stop_here(s);
		at->epoch++;
		at->position = 0;
	}
	/* Stopped inside an epoch: still say how good the model is. */
	if (!o->no_eval && !train_report_accuracy(s->report, &accuracy) &&
	    at->step > start_step && evaluate(s))
		return EXIT_TRAIN_FAILED;
	if (train_interrupted())
		return stop_here(s);
	if (has_destination(o) && checkpoint(s))
		return EXIT_TRAIN_FAILED;
	train_report_summary(s->report, at, train_steps_times(s->steps), &s->final);
	if (s->saver)
		train_saver_summary(s->saver);
	s->finished = true;
	if (o->expect_accuracy >= 0 &&
	    (!train_report_accuracy(s->report, &accuracy) || accuracy < o->expect_accuracy)) {
		train_fail("the test accuracy %.4f is below the expected %.4f", accuracy,
			   o->expect_accuracy);
		return EXIT_TRAIN_FAILED;
	}
	return 0;
}

/* --mode eval: the test set with a checkpoint's weights. */
static int eval_only(struct schedule *s)
{
	const struct train_opts *o = s->o;
	struct train_tally t;
	uint32_t n;
	double t0, w;

	if (train_state_init_from(s->j, "--init-from", o->init_from))
		return EXIT_TRAIN_FAILED;
	t0 = train_now();
	if (train_evaluate(s->j, s->steps, o->test_limit, &t, &n))
		return EXIT_TRAIN_FAILED;
	/* Masked LM: the means over the predicted rows. */
	w = t.weight > 0 ? t.weight : n;
	printf("eval: %s on %u test samples: loss %.4f, accuracy %.4f (%.1fs)\n", o->init_from,
	       n, t.loss / w, (double)t.right / w, train_now() - t0);
	if (o->expect_accuracy >= 0 && (double)t.right / w < o->expect_accuracy) {
		train_fail("the test accuracy %.4f is below the expected %.4f", (double)t.right / w,
			   o->expect_accuracy);
		return EXIT_TRAIN_FAILED;
	}
	return 0;
}

static int predict(struct schedule *s)
{
	if (train_state_init_from(s->j, "--predict", s->o->init_from) ||
	    train_predict(s->j, s->steps))
		return EXIT_TRAIN_FAILED;
	return 0;
}

/*
 * With a run directory of earlier runs, the newest checkpoint there: to
 * resume from (training), to evaluate (--mode eval). 1: nothing to do.
 */
static int from_model_dir(struct train_opts *o, char *buf, size_t len)
{
	int ret;

	if (!o->model_dir || o->runs || o->resume || o->init_from)
		return 0;
	ret = train_rundir_newest(o->model_dir, buf, len);
	if (ret == -ENOENT && o->task != TRAIN_TASK_EVAL)
		return 0;
	if (ret)
		return train_fail("--model_dir %s: no checkpoint_<step>.ckpt to evaluate there", o->model_dir);
	if (o->task == TRAIN_TASK_EVAL) {
		o->init_from = buf;
	} else {
		struct train_checkpoint c;
		char err[512];
		bool done;

		if (train_checkpoint_load(buf, &c, err, sizeof(err)))
			return train_fail("--model_dir: %s (move it away to start afresh)", err);
		done = c.epoch >= o->epochs || (o->max_steps && c.step >= o->max_steps);
		train_checkpoint_free(&c);
		if (done) {
			printf("%s is where this run ends (step %llu): nothing to train; raise --epochs or --steps to go on\n",
			       buf, (unsigned long long)c.step);
			return 1;
		}
		if (!o->quiet)
			printf("continuing from %s, the newest checkpoint in --model_dir\n", buf);
		o->resume = buf;
	}
	return 0;
}

int train_run(struct train_opts *o)
{
	struct schedule s = { .o = o };
	bool training = o->task == TRAIN_TASK_TRAIN_AND_EVAL || o->task == TRAIN_TASK_TRAIN;
	/* What @o may come to point at: it outlives this call. */
	static char model[PATH_MAX], ckpt[PATH_MAX];
	struct train_job *j;
	int ret;

	if (train_interrupt_start())
		return EXIT_TRAIN_FAILED;
	/* Evaluating or predicting, a signal ends the process at once: nothing to save. */
	if (o->task == TRAIN_TASK_EVAL)
		train_interrupt_exit_saying(TRAIN_EVAL_STOPPED);
	if (o->task == TRAIN_TASK_PREDICT)
		train_interrupt_exit_saying(TRAIN_PREDICT_STOPPED);
	ret = from_model_dir(o, ckpt, sizeof(ckpt));
	if (ret)
		return ret > 0 ? 0 : EXIT_TRAIN_FAILED;
	if (train_rundir_find_model(o, model, sizeof(model)))
		return EXIT_TRAIN_FAILED;
	/* The inputs and the device before the run directory: a refusal leaves nothing behind. */
	if (train_check_inputs(o))
		return EXIT_TRAIN_FAILED;
	if (!training) {
		o->runs = NULL;	/* inference leaves no run directory behind */
	} else if ((o->runs || o->model_dir) && train_rundir_open(o, &s.rundir)) {
		/* One the environment offered (wsevm --runs) is not worth failing the run for. */
		if (!o->runs_from_env || o->model_dir)
			return EXIT_TRAIN_FAILED;
		fprintf(stderr, "wsetrain: note: training without a run directory (WSETRAIN_RUNS=%s)\n",
			o->runs);
		o->runs = NULL;
		o->runs_root = NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		train_rundir_close(s.rundir);
		return train_fail("out of memory"), EXIT_TRAIN_FAILED;
	}
	ret = EXIT_TRAIN_FAILED;
	s.j = j;
	if (train_job_open(j, o) || train_steps_open(j, &s.steps) ||
	    train_rundir_started(s.rundir, j)) {
		/* Refused before it started: no run directory is left to explain it. */
		if (!train_rundir_withdraw(s.rundir)) {
			train_rundir_close(s.rundir);
			s.rundir = NULL;
		}
		goto out;
	}
	if (o->task == TRAIN_TASK_EVAL) {
		ret = eval_only(&s);
		goto out;
	}
	if (o->task == TRAIN_TASK_PREDICT) {
		ret = predict(&s);
		goto out;
	}
	if (train_order_init(&s.at.order, j->used, o->seed_set ? o->seed : j->p->seed)) {
		train_fail("out of memory");
		goto out;
	}
	if (j->tokens)
		train_order_text(&s.at.order, &j->text, j->rows);
	if (train_report_open(j, &s.report) ||
	    (has_destination(o) && train_saver_open(j, &s.saver)))
		goto out;
	/* The run directory is known by now: does a signal's stop write a checkpoint? */
	train_interrupt_checkpoints(has_destination(o));
	ret = train(&s);
out:
	if (s.saver && !s.final.checkpoint[0]) {
		const char *last;

		/* The writer finishes what it has in hand: the last it wrote is the one to go on from. */
		train_saver_flush(s.saver);
		if (train_saver_last(s.saver, &last))
			snprintf(s.final.checkpoint, sizeof(s.final.checkpoint), "%s", last);
	}
	if (ret == EXIT_TRAIN_FAILED && training && has_destination(o) && s.final.checkpoint[0])
		fprintf(stderr, "wsetrain: the last checkpoint written (%s) is intact: continue with --resume %s\n",
			s.final.checkpoint, s.final.checkpoint);
	else if (ret == EXIT_TRAIN_FAILED && o->checkpoint)
		fprintf(stderr, "wsetrain: the last checkpoint written (%s), if any, is intact: continue with --resume %s\n",
			o->checkpoint, o->checkpoint);
	/* The writer finishes what it has in hand before anything goes. */
	train_saver_close(s.saver);
	if (train_report_close(s.report) && !ret)
		ret = EXIT_TRAIN_FAILED;
	if (s.rundir && train_rundir_finish(s.rundir, ret == 0 ? "done" : ret > 128 ? "interrupted" : "failed",
					    s.finished ? &s.final : NULL) && !ret)
		ret = EXIT_TRAIN_FAILED;
	train_rundir_close(s.rundir);
	train_job_close(j);
	train_steps_close(s.steps);
	train_order_free(&s.at.order);
	free(j);
	return ret;
}
