// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the user sees of a run: the opening line, the progress, the test
 * results after each evaluation and the summary; the same figures go to
 * the metrics files (metrics.c).
 *
 * Progress is a bar redrawn in place when stdout is a terminal that can
 * (TERM set, and not "dumb"), or with --progress bar; plain lines otherwise: one per --report steps, with
 * Rate= (the windowed rate, smoothed as ModelZoo does) and GlobalRate=
 * (samples over the time since the clock started). A terminal still gets
 * a line at the end of every epoch. The ETA comes from eta.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "train.h"
#include "wse/engine_wsep.h"

#define RATE_SMOOTHING	0.4	/* the previous Rate's weight (ModelZoo's default) */
#define BAR_TEXT	70	/* room the bar's words and figures take, at most */

struct train_report {
	const struct train_job *j;
	struct train_metrics *metrics;
	bool bar;			/* a bar, redrawn in place */
	bool bar_shown;			/* the bar is on the screen's last line */
	double t_start;
	uint64_t samples;		/* trained since the clock started */
	double eval_s;			/* of that time, in evaluations */
	struct train_eta eta;
	double eta_t;			/* the clock when the ETA's tally was last brought up to date */
	/* The current report window. */
	double win_loss, win_t0;
	double win_right;		/* samples right (a sample of tokens: its share of them) */
	uint64_t win_samples;
	double win_weight;		/* what win_loss and win_right are means over */
	double rate;			/* smoothed over the windows so far */
	bool have_rate;
	/* The last evaluation. */
	bool have_test;
	double test_acc, test_loss;
	/* What the ETA still has to account for. */
	uint64_t steps_total;
	uint32_t steps_per_epoch, evals_left;
	uint64_t eval_samples;
	double eta_s;			/* the estimate (< 0: none yet) */
	struct train_eta_shown bar_eta, line_eta;	/* what each showed last */
};

double train_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The report of the run under way, for notes from elsewhere (one run a process). */
static struct train_report *current;

static void clear_bar(struct train_report *r)
{
	if (r && r->bar_shown) {
		fputs("\r\033[K", stdout);
		r->bar_shown = false;
	}
}

void train_report_note(const char *fmt, ...)
{
	va_list ap;

	clear_bar(current);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void stamp(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

int train_report_open(const struct train_job *j, struct train_report **out)
{
	const struct train_opts *o = j->o;
	struct train_report *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return train_fail("out of memory");
	r->j = j;
	r->bar = !o->quiet && (o->progress == TRAIN_PROGRESS_BAR ||
			       (o->progress == TRAIN_PROGRESS_AUTO && isatty(STDOUT_FILENO) &&
				getenv("TERM") && strcmp(getenv("TERM"), "dumb")));
	if (train_metrics_open(o, &r->metrics)) {
		free(r);
		return -1;
	}
	if (!o->quiet) {
		/* The samples evaluated, as run.json's test_samples counts them. */
		uint32_t tested = o->no_eval ? 0 :
				  o->test_limit && o->test_limit < j->test.count ? o->test_limit :
				  j->test.count;

		printf("wsetrain: %s, %s on %u system%s (%s), batch %u, %u training and %u test samples\n",
		       j->p->model_name, wsep_mode_name(j->p->mode), j->n, j->n == 1 ? "" : "s",
		       j->sys[0].name, j->batch, j->used, tested);
		fflush(stdout);
	}
	current = r;
	*out = r;
	return 0;
}

void train_report_start(struct train_report *r, uint64_t steps_total, uint32_t steps_per_epoch,
			uint32_t evals_left, uint64_t eval_samples)
{
	r->t_start = train_now();
	r->win_t0 = r->t_start;
	r->eta_t = r->t_start;
	r->steps_total = steps_total;
	r->steps_per_epoch = steps_per_epoch;
	r->evals_left = evals_left;
	r->eval_samples = eval_samples;
	r->eta_s = -1;
}

int train_report_close(struct train_report *r)
{
	int ret;

	if (!r)
		return 0;
	clear_bar(r);
	ret = train_metrics_close(r->metrics);
	if (current == r)
		current = NULL;
	free(r);
	return ret;
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

/* Brings the ETA up to date at step @step: training time is all but the evaluations'. */
static void update_eta(struct train_report *r, uint64_t step, uint64_t samples)
{
	double now = train_now();

	train_eta_train(&r->eta, samples, now - r->eta_t);
	r->eta_t = now;
	r->eta_s = train_eta_left(&r->eta, (r->steps_total - step) * r->j->batch, r->evals_left,
				  r->eval_samples);
}

static int term_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		return ws.ws_col;
	if (cols && atoi(cols) >= 40)
		return atoi(cols);
	return 80;
}

/* The bar: epoch, a gauge of the epoch, step, the window's loss and accuracy, rate, ETA. */
static void draw_bar(struct train_report *r, const struct train_progress *at)
{
	const struct train_opts *o = r->j->o;
	uint64_t in_epoch = at->step - (uint64_t)at->epoch * r->steps_per_epoch;
	double dt = train_now() - r->win_t0;
	/* The current window's rate so far (Rate itself moves only at report lines). */
	double rate = r->win_samples && dt > 0 ? r->win_samples / dt : r->rate;
	char head[48], tail[160], eta[32];
	/* The gauge keeps its width as the figures beside it change theirs. */
	int gauge = term_width() - 1 - BAR_TEXT, full;

	fmt_time(train_eta_show(&r->bar_eta, r->eta_s), eta, sizeof(eta));
	snprintf(head, sizeof(head), "epoch %u/%u ", at->epoch + 1, o->epochs);
	if (r->win_samples)
		snprintf(tail, sizeof(tail), " %llu/%u loss %.4f acc %.3f %.0f samples/s ETA %s",
			 (unsigned long long)in_epoch, r->steps_per_epoch,
			 r->win_loss / r->win_weight, (double)r->win_right / r->win_weight,
			 rate, eta);
	else
		snprintf(tail, sizeof(tail), " %llu/%u %.0f samples/s ETA %s",
			 (unsigned long long)in_epoch, r->steps_per_epoch, rate, eta);
	if (gauge > 30)
		gauge = 30;
	fputs("\r", stdout);
	fputs(head, stdout);
	if (gauge >= 5) {
		full = r->steps_per_epoch ? (int)(gauge * in_epoch / r->steps_per_epoch) : 0;
		putchar('[');
		for (int i = 0; i < gauge; i++)
			putchar(i < full ? '#' : '.');
		putchar(']');
	}
	fputs(tail, stdout);
	fputs("\033[K", stdout);
	fflush(stdout);
	r->bar_shown = true;
}

void train_report_add(struct train_report *r, const struct train_progress *at,
		      const struct train_tally *t, uint64_t samples)
{
	r->win_loss += t->loss;
	r->win_right += t->right;
	r->win_samples += samples;
	r->win_weight += t->weight > 0 ? t->weight : (double)samples;
	r->samples += samples;
	update_eta(r, at->step, samples);
	if (r->bar)
		draw_bar(r, at);
}

/* The learning rate the device updated with at optimizer step @step (1-based), as the firmware computes it. */
static double step_lr(const struct wsep_optimizer *opt, uint64_t step)
{
	struct engine_lr_schedule s;

	if (engine_lr_from_wsep(opt, &s))
		return NAN;
	return engine_lr_at(&s, opt->lr, step);
}

void train_report_progress(struct train_report *r, const struct train_progress *at)
{
	const struct train_opts *o = r->j->o;
	double now = train_now(), local, global, loss, acc, dt, eta_s;
	bool epoch_end;
	char when[32], eta[32];

	if (!r->win_samples)
		return;
	dt = now - r->win_t0;
	local = r->win_samples / (dt > 1e-9 ? dt : 1e-9);
	r->rate = r->have_rate ? RATE_SMOOTHING * r->rate + (1 - RATE_SMOOTHING) * local : local;
	r->have_rate = true;
	global = r->samples / (now - r->t_start > 1e-9 ? now - r->t_start : 1e-9);
	loss = r->win_loss / r->win_weight;
	acc = (double)r->win_right / r->win_weight;
	epoch_end = at->step % r->steps_per_epoch == 0 || at->step == r->steps_total;
	eta_s = train_eta_show(&r->line_eta, r->eta_s);
	fmt_time(eta_s, eta, sizeof(eta));
	if (!o->quiet && (!r->bar || epoch_end)) {
		clear_bar(r);
		stamp(when, sizeof(when));
		printf("%s | Train Epoch=%u/%u, Step=%llu/%u, Loss=%.5f, Accuracy=%.4f, Rate=%.0f samples/s, GlobalRate=%.0f samples/s, ETA=%s\n",
		       when, at->epoch + 1, o->epochs,
		       (unsigned long long)(at->step - (uint64_t)at->epoch * r->steps_per_epoch),
		       r->steps_per_epoch, loss, acc, r->rate, global, eta);
		fflush(stdout);
	}
	train_metrics_train(r->metrics, at->step, at->epoch, loss, acc, r->rate, global, eta_s,
			    step_lr(&r->j->p->opt, at->step));
	r->win_loss = 0;
	r->win_right = 0;
	r->win_samples = 0;
	r->win_weight = 0;
	r->win_t0 = now;
}

void train_report_test(struct train_report *r, const struct train_progress *at,
		       const struct train_tally *t, uint32_t samples, double seconds)
{
	const struct train_opts *o = r->j->o;
	char when[32];

	r->test_loss = t->loss / (t->weight > 0 ? t->weight : samples);
	r->test_acc = (double)t->right / (t->weight > 0 ? t->weight : samples);
	r->have_test = true;
	/* The evaluation's time is not training's; what it cost says what the next will. */
	r->eval_s += seconds;
	r->eta_t += seconds;
	train_eta_eval(&r->eta, samples, seconds);
	if (r->evals_left)
		r->evals_left--;
	if (!o->quiet) {
		clear_bar(r);
		stamp(when, sizeof(when));
		printf("%s | Eval Epoch=%u/%u, Step=%llu, Loss=%.5f, Accuracy=%.4f, Samples=%u, Time=%.2fs\n",
		       when, at->epoch + 1, o->epochs, (unsigned long long)at->step, r->test_loss,
		       r->test_acc, samples, seconds);
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
			  const struct train_step_times *times, struct train_final *f)
{
	const struct train_job *j = r->j;
	double wall = train_now() - r->t_start;
	/* As the device's RUNs reported them. */
	uint64_t cycles = j->sys[0].cycles, est = j->sys[0].est_cycles;

	clear_bar(r);
	printf("summary: %s, %s on %u system%s: trained to step %llu, %llu samples in %.1fs, %.0f samples/s",
	       j->p->model_name, wsep_mode_name(j->p->mode), j->n, j->n == 1 ? "" : "s",
	       (unsigned long long)at->step, (unsigned long long)times->trained, wall,
	       wall > 0 ? times->trained / wall : 0.0);
	if (r->have_test)
		printf(", test accuracy %.4f (loss %.4f)", r->test_acc, r->test_loss);
	printf("\nsummary: host time in transfers %.1fs, in %s %.1fs; device cycles modelled %llu, compiler estimate %llu\n",
	       times->io,
	       j->streaming ? "bookkeeping (MemoryX updates in the appliance)" : "bookkeeping",
	       times->update, (unsigned long long)cycles, (unsigned long long)est);
	fflush(stdout);
	f->step = at->step;
	f->samples = times->trained;
	f->seconds = wall;
	f->samples_per_s = wall > 0 ? times->trained / wall : 0.0;
	f->have_test = r->have_test;
	f->test_loss = r->test_loss;
	f->test_accuracy = r->test_acc;
}
