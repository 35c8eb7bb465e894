// SPDX-License-Identifier: GPL-2.0-only
/*
 * The curves, drawn by gnuplot: loss.svg and accuracy.svg (the training
 * reports and the evaluations against the optimizer step), rate.svg (the
 * training rate) and, when the runs' schedules are known, lr.svg. One run
 * is drawn in two colours, train and test; several runs are overlaid, a
 * colour each, train as a line and test as points. The data goes to
 * gnuplot inline (datablocks), so nothing but the SVGs is written, each
 * into the file wse/outfile.h opened for it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "report.h"
#include "wse/outfile.h"

/* One run's series' colours; the render test looks for them in a screenshot. */
#define COLOUR_TRAIN	"#1f77b4"
#define COLOUR_TEST	"#d62728"

/* Several runs: a colour each, in this order (the render test knows the first two). */
static const char *const run_colour[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define N_COLOURS	(sizeof(run_colour) / sizeof(run_colour[0]))

enum plot_kind { P_LOSS, P_ACCURACY, P_RATE, P_LR, P_COUNT };
static const char *const plot_name[P_COUNT] = { "loss", "accuracy", "rate", "lr" };
static const char *const plot_ylabel[P_COUNT] = {
	"loss", "accuracy", "samples/s", "learning rate",
};

/* A gnuplot single-quoted string: no escapes but '' for a quote. */
static void quoted(FILE *g, const char *s)
{
	fputc('\'', g);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', g);
		if (*s != '\n')
			fputc(*s, g);
	}
	fputc('\'', g);
}

/* Columns: step loss accuracy samples/s lr; NaN (no value) as gnuplot's NaN. */
static void datablock(FILE *g, const struct metrics *m, size_t run, bool test)
{
	fprintf(g, "$%s%zu << EOD\n", test ? "test" : "train", run);
	for (size_t i = 0; i < m->n; i++) {
		const struct metrics_row *r = &m->rows[i];

		if (r->test != test)
			continue;
		fprintf(g, "%llu %.9g %.9g", (unsigned long long)r->step, r->loss, r->accuracy);
		fprintf(g, isnan(r->samples_per_s) ? " NaN" : " %.9g", r->samples_per_s);
		fprintf(g, isnan(r->lr) ? " NaN\n" : " %.9g\n", r->lr);
	}
	fprintf(g, "EOD\n");
}

bool metrics_have_lr(const struct metrics *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->rows[i].test && !isnan(m->rows[i].lr))
			return true;
	return false;
}

static void one_plot(FILE *g, const struct plot_run *runs, size_t n, enum plot_kind k,
		     const char *path, const char *title)
{
	const char *sep = "";
	int col = 2 + k;

	fprintf(g, "set output ");
	quoted(g, path);
	fprintf(g, "\nset title ");
	quoted(g, title);
	fprintf(g, " noenhanced\nset ylabel '%s'\nset key %s right noenhanced\n",
		plot_ylabel[k], k == P_ACCURACY ? "bottom" : "top");
	/* From 0 for rates, so a constant learning rate is a line, not a range gnuplot warns of. */
	fprintf(g, k == P_ACCURACY ? "set yrange [0:1]\n" :
		   k == P_LOSS ? "set yrange [*:*]\n" : "set yrange [0:*]\n");
	fprintf(g, k == P_RATE ? "set format y '%%.0f'\n" : "set format y '%%g'\n");
	/* Room above the highest value: a constant learning rate is a line, not the frame's top edge. */
	fprintf(g, k == P_LR ? "set offsets 0, 0, graph 0.1, 0\n" : "set offsets 0, 0, 0, 0\n");
	fprintf(g, "plot ");
	for (size_t r = 0; r < n; r++) {
		const struct metrics *m = runs[r].m;
		const char *train_colour = n == 1 ? COLOUR_TRAIN : run_colour[r % N_COLOURS];
		const char *test_colour = n == 1 ? COLOUR_TEST : run_colour[r % N_COLOURS];
		bool train = m->train && (k != P_LR || metrics_have_lr(m));

		/* The rate and the learning rate are the training reports' alone. */
		if (train) {
			fprintf(g, "%s$train%zu using 1:%d with lines lw 2 lc rgb '%s' title ", sep, r,
				col, train_colour);
			if (n == 1)
				fprintf(g, "'train'");
			else
				quoted(g, runs[r].name);
			sep = ", ";
		}
		if (m->test && (k == P_LOSS || k == P_ACCURACY)) {
			fprintf(g, "%s$test%zu using 1:%d with linespoints lw 2 dt %d pt 7 ps 0.8 lc rgb '%s' title ",
				sep, r, col, n == 1 ? 1 : 2, test_colour);
			if (n == 1) {
				fprintf(g, "'test'");
			} else {
				char t[300];

				snprintf(t, sizeof(t), "%s (test)", runs[r].name);
				quoted(g, t);
			}
			sep = ", ";
		}
	}
	fprintf(g, "\n");
}

/* gnuplot wrote something into @o's file (a FIFO or device is taken on trust). */
static bool nonempty(const struct wse_out *o)
{
	struct stat st;

	return !o->regular || (!stat(wse_out_name(o), &st) && st.st_size > 0);
}

static void abandon_all(struct wse_out *out, const bool *want, int n)
{
	for (int i = 0; i < n; i++)
		if (want[i])
			wse_out_abandon(&out[i]);
}

int plot_curves(const char *gnuplot, const struct plot_run *runs, size_t n, const char *title,
		const char *dir, char *err, size_t errlen)
{
	struct wse_out out[P_COUNT];
	bool want[P_COUNT] = { true, true, false, false };
	char cmd[4200], path[4096];
	FILE *g;
	int st;

	/* The program name is the user's; quote it for the shell popen runs. */
	if (strchr(gnuplot, '\'')) {
		snprintf(err, errlen, "gnuplot path %s contains a quote", gnuplot);
		return -1;
	}
	for (size_t r = 0; r < n; r++) {
		want[P_RATE] |= runs[r].m->train > 0;
		want[P_LR] |= metrics_have_lr(runs[r].m);
	}
	/* gnuplot writes the files wse/outfile.h made: each replaced whole, or written through. */
	for (int k = 0; k < P_COUNT; k++) {
		if (!want[k])
			continue;
		snprintf(path, sizeof(path), "%s/%s.svg", dir, plot_name[k]);
		if (wse_out_open(&out[k], path, 0, err, errlen)) {
			abandon_all(out, want, k);
			return -1;
		}
	}
	snprintf(cmd, sizeof(cmd), "'%s'", gnuplot);
	g = popen(cmd, "w");
	if (!g) {
		snprintf(err, errlen, "cannot run %s: %s", gnuplot, strerror(errno));
		abandon_all(out, want, P_COUNT);
		return -1;
	}
	fprintf(g, "set terminal svg size 560,380 dynamic font 'DejaVu Sans,13' background rgb 'white'\n"
		   "set xlabel 'step'\nset grid\nset border lw 1\n");
	for (size_t r = 0; r < n; r++) {
		if (runs[r].m->train)
			datablock(g, runs[r].m, r, false);
		if (runs[r].m->test)
			datablock(g, runs[r].m, r, true);
	}
	for (int k = 0; k < P_COUNT; k++)
		if (want[k])
			one_plot(g, runs, n, k, wse_out_name(&out[k]), title);
	fprintf(g, "unset output\n");
	st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(err, errlen,
				 "%s is not installed (Debian: apt install gnuplot-nox), or --gnuplot names another",
				 gnuplot);
		else
			snprintf(err, errlen, "%s failed (its messages are above)", gnuplot);
		abandon_all(out, want, P_COUNT);
		return -1;
	}
	for (int k = 0; k < P_COUNT; k++)
		if (want[k] && !nonempty(&out[k])) {
			snprintf(err, errlen, "%s wrote no %s plot into %s", gnuplot, plot_name[k], dir);
			abandon_all(out, want, P_COUNT);
			return -1;
		}
	for (int k = 0; k < P_COUNT; k++) {
		if (!want[k])
			continue;
		if (wse_out_commit(&out[k], err, errlen)) {
			for (int j = k + 1; j < P_COUNT; j++)
				if (want[j])
					wse_out_abandon(&out[j]);
			return -1;
		}
	}
	return 0;
}
