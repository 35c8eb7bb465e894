// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the user sees of a run: the opening line, a progress line per
 * report window (loss, accuracy, samples/s and ETA), the test results
 * after each evaluation, and the summary; the same figures go to the
 * metrics files (metrics.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mode.h"

struct train_report {
	const struct train_job *j;
	struct train_metrics *metrics;
	double t_start;
	/* The current report window. */
	double win_loss, win_t0;
	double win_right;		/* samples right (a sample of tokens: its share of them) */
	uint64_t win_samples;
	/* The last evaluation. */
	bool have_test;
	double test_acc, test_loss;
};

double train_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int train_report_open(const struct train_job *j, struct train_report **out)
{
	struct train_report *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return train_fail("out of memory");
	r->j = j;
	if (train_metrics_open(j->o, &r->metrics)) {
		free(r);
		return -1;
	}
	if (!j->o->quiet) {
		printf("wsetrain: %s, %s on %u system%s (%s), batch %u, %u training and %u test samples\n",
		       j->p->model_name, wsep_mode_name(j->p->mode), j->n, j->n == 1 ? "" : "s",
		       j->sys[0].name, j->batch, j->used, j->o->no_eval ? 0 : j->test.count);
		fflush(stdout);
	}
	*out = r;
	return 0;
}

void train_report_start(struct train_report *r)
{
	r->t_start = train_now();
	r->win_t0 = r->t_start;
}

int train_report_close(struct train_report *r)
{
	int ret;

	if (!r)
		return 0;
	ret = train_metrics_close(r->metrics);
	free(r);
	return ret;
}

void train_report_add(struct train_report *r, const struct train_tally *t, uint64_t samples)
{
	r->win_loss += t->loss;
	r->win_right += t->right;
	r->win_samples += samples;
}

static void fmt_time(double s, char *buf, size_t len)
{
	if (s < 0 || !isfinite(s))
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

void train_report_progress(struct train_report *r, const struct train_progress *at,
			   uint64_t steps_total, uint32_t steps_per_epoch)
{
	const struct train_opts *o = r->j->o;
	double now = train_now(), rate, loss, acc;
	char eta[32];

	if (!r->win_samples)
		return;
	rate = r->win_samples / (now - r->win_t0 > 1e-9 ? now - r->win_t0 : 1e-9);
	loss = r->win_loss / r->win_samples;
	acc = (double)r->win_right / r->win_samples;
	fmt_time((double)(steps_total - at->step) * r->j->batch / rate, eta, sizeof(eta));
	if (!o->quiet) {
		printf("epoch %u/%u  step %5llu/%llu  loss %.4f  accuracy %.3f  %8.0f samples/s  ETA %s\n",
		       at->epoch + 1, o->epochs,
		       (unsigned long long)(at->step - (uint64_t)at->epoch * steps_per_epoch),
		       (unsigned long long)steps_per_epoch, loss, acc, rate, eta);
		fflush(stdout);
	}
	train_metrics_train(r->metrics, at->step, at->epoch, loss, acc, rate);
	r->win_loss = 0;
	r->win_right = 0;
	r->win_samples = 0;
	r->win_t0 = now;
}

void train_report_test(struct train_report *r, const struct train_progress *at,
		       const struct train_tally *t, uint32_t samples, double seconds)
{
	const struct train_opts *o = r->j->o;

	r->test_loss = t->loss / samples;
	r->test_acc = (double)t->right / samples;
	r->have_test = true;
	if (!o->quiet) {
		printf("epoch %u/%u  test: loss %.4f  accuracy %.4f  (%u samples, %.1fs)\n",
		       at->epoch + 1, o->epochs, r->test_loss, r->test_acc, samples, seconds);
		fflush(stdout);
	}
	train_metrics_test(r->metrics, at->step, at->epoch, r->test_loss, r->test_acc);
}

bool train_report_accuracy(const struct train_report *r, double *accuracy)
{
	*accuracy = r->have_test ? r->test_acc : 0.0;
	return r->have_test;
}

void train_report_summary(struct train_report *r, const struct train_progress *at,
			  const struct train_step_times *times)
{
	const struct train_job *j = r->j;
	double wall = train_now() - r->t_start;
	uint64_t cycles = 0, est = 0;

	for (unsigned int m = 0; m < j->n; m++) {
		cycles += j->sys[m].cycles;
		est += j->sys[m].est_cycles;
	}
	printf("summary: %s, %s on %u system%s: trained to step %llu, %llu samples in %.1fs, %.0f samples/s",
	       j->p->model_name, wsep_mode_name(j->p->mode), j->n, j->n == 1 ? "" : "s",
	       (unsigned long long)at->step, (unsigned long long)times->trained, wall,
	       wall > 0 ? times->trained / wall : 0.0);
	if (r->have_test)
		printf(", test accuracy %.4f (loss %.4f)", r->test_acc, r->test_loss);
	printf("\nsummary: host time in transfers %.1fs, in %s %.1fs; device cycles modelled %llu, compiler estimate %llu\n",
	       times->io, j->mode->update_name, times->update, (unsigned long long)cycles,
	       (unsigned long long)est);
	fflush(stdout);
}
