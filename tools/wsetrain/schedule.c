// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run: epochs of training steps and an evaluation after each. An
 * epoch goes to the systems in chunks of at most --chunk steps, cut
 * short so that every --report and --checkpoint-every boundary and the
 * --steps limit fall between two chunks. A last batch smaller than the
 * number of systems is left out.
 */
#include <stdio.h>
#include <stdlib.h>

#include "train.h"

struct schedule {
	const struct train_opts *o;
	struct train_job *j;
	struct train_steps *steps;
	struct train_report *report;
	struct train_progress at;
	uint64_t steps_total;		/* what this run is to reach */
	uint32_t steps_per_epoch;
};

/* The test set, forward only: loss and accuracy. */
static int evaluate(struct schedule *s)
{
	const struct train_job *j = s->j;
	uint32_t n = j->test.count, b = j->batch, full, last;
	struct train_tally t = { 0 };
	double t0 = train_now();

	if (s->o->test_limit && s->o->test_limit < n)
		n = s->o->test_limit;
	full = n / b;
	last = n % b;
	for (uint32_t at = 0; at < full;) {
		uint32_t steps = full - at < s->o->chunk ? full - at : s->o->chunk;

		if (train_steps_run(s->steps, WSE_RUN_EVAL, &j->test, NULL, at * b, steps, b, &t))
			return -1;
		at += steps;
	}
	if (last >= j->n &&
	    train_steps_run(s->steps, WSE_RUN_EVAL, &j->test, NULL, full * b, 1, last, &t))
		return -1;
	if (last < j->n)
		n -= last;
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

/* One epoch's training from the current position, stopping early at steps_total. */
static int train_epoch(struct schedule *s)
{
	const struct train_opts *o = s->o;
	struct train_job *j = s->j;
	struct train_progress *at = &s->at;
	uint32_t n = at->order.n;

	train_order_epoch(&at->order, at->epoch);
	while (at->position < n && at->step < s->steps_total) {
		uint32_t left = n - at->position, b = left < j->batch ? left : j->batch;
		struct train_tally t = { 0 };
		uint64_t steps;

		if (b < j->n)
			break;	/* a remnant smaller than the number of systems */
		steps = chunk_steps(s, left, b);
		if (train_steps_run(s->steps, WSE_RUN_TRAIN, &j->train, &at->order,
				    at->position, (uint32_t)steps, b, &t))
			return -1;
		at->step += steps;
		at->position += (uint32_t)steps * b;
		train_report_add(s->report, &t, steps * b);
		if (at->step % o->report == 0 || at->position >= n || at->step == s->steps_total)
			train_report_progress(s->report, at, s->steps_total, s->steps_per_epoch);
		if (o->checkpoint_every && at->step % o->checkpoint_every == 0 &&
		    train_state_save(j, at))
			return -1;
	}
	return 0;
}

static int run(struct schedule *s)
{
	const struct train_opts *o = s->o;
	struct train_job *j = s->j;
	struct train_progress *at = &s->at;
	uint32_t used, n = at->order.n;
	uint64_t start_step;
	double accuracy;

	s->steps_per_epoch = n / j->batch + (n % j->batch >= j->n);
	s->steps_total = (uint64_t)s->steps_per_epoch * o->epochs;
	if (o->max_steps && o->max_steps < s->steps_total)
		s->steps_total = o->max_steps;
	if (o->resume && train_state_resume(j, at))
		return -1;
	start_step = at->step;
	train_report_start(s->report);
	used = n - (n % j->batch < j->n ? n % j->batch : 0);
	while (at->epoch < o->epochs && at->step < s->steps_total) {
		if (train_epoch(s))
			return -1;
		if (at->position < used)
			break;	/* stopped by --steps inside the epoch */
		if (!o->no_eval && evaluate(s))
			return -1;
		at->epoch++;
		at->position = 0;
	}
	/* Stopped inside an epoch: still say how good the model is. */
	if (!o->no_eval && !train_report_accuracy(s->report, &accuracy) &&
	    at->step > start_step && evaluate(s))
		return -1;
	if (o->checkpoint && train_state_save(j, at))
		return -1;
	train_report_summary(s->report, at, train_steps_times(s->steps));
	if (o->expect_accuracy >= 0 &&
	    (!train_report_accuracy(s->report, &accuracy) || accuracy < o->expect_accuracy))
		return train_fail("the test accuracy %.4f is below the expected %.4f", accuracy,
				  o->expect_accuracy);
	return 0;
}

int train_run(const struct train_opts *o)
{
	struct schedule s = { .o = o };
	struct train_job *j = calloc(1, sizeof(*j));
	int ret = -1;

	if (!j)
		return train_fail("out of memory");
	s.j = j;
	if (train_job_open(j, o) || train_steps_open(j, &s.steps))
		goto out;
	if (train_order_init(&s.at.order, j->used, o->seed_set ? o->seed : j->p->seed)) {
		train_fail("out of memory");
		goto out;
	}
	if (j->tokens)
		train_order_text(&s.at.order, &j->text, j->p->input_dim);
	if (train_report_open(j, &s.report))
		goto out;
	ret = run(&s);
out:
	if (ret && o->checkpoint)
		fprintf(stderr, "wsetrain: the last checkpoint written (%s), if any, is intact: continue with --resume %s\n",
			o->checkpoint, o->checkpoint);
	if (train_report_close(s.report) && !ret)
		ret = -1;
	train_job_close(j);
	train_steps_close(s.steps);
	train_order_free(&s.at.order);
	free(j);
	return ret;
}
