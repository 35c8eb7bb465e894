// SPDX-License-Identifier: GPL-2.0-only
/*
 * The curves, drawn by gnuplot: loss.svg and accuracy.svg, each with the
 * training reports and the evaluations against the optimizer step. The data
 * goes to gnuplot inline (datablocks), so nothing but the two SVGs is
 * written, each into the file wse/outfile.h opened for it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "report.h"
#include "wse/outfile.h"

/* The series' colours; the render test looks for them in a screenshot. */
#define COLOUR_TRAIN	"#1f77b4"
#define COLOUR_TEST	"#d62728"

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

static void datablock(FILE *g, const struct metrics *m, bool test)
{
	fprintf(g, "$%s << EOD\n", test ? "test" : "train");
	for (size_t i = 0; i < m->n; i++)
		if (m->rows[i].test == test)
			fprintf(g, "%llu %.9g %.9g\n", (unsigned long long)m->rows[i].step,
				m->rows[i].loss, m->rows[i].accuracy);
	fprintf(g, "EOD\n");
}

static void one_plot(FILE *g, const struct metrics *m, const char *path, const char *ylabel,
		     int col, const char *title)
{
	fprintf(g, "set output ");
	quoted(g, path);
	fprintf(g, "\nset title ");
	quoted(g, title);
	fprintf(g, " noenhanced\nset ylabel '%s'\nset key %s right\n", ylabel,
		col == 2 ? "top" : "bottom");
	fprintf(g, "plot ");
	if (m->train)
		fprintf(g, "$train using 1:%d with lines lw 2 lc rgb '%s' title 'train'%s", col,
			COLOUR_TRAIN, m->test ? ", " : "");
	if (m->test)
		fprintf(g, "$test using 1:%d with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title 'test'",
			col, COLOUR_TEST);
	fprintf(g, "\n");
}

/* gnuplot wrote something into @o's file (a FIFO or device is taken on trust). */
static bool nonempty(const struct wse_out *o)
{
	struct stat st;

	return !o->regular || (!stat(wse_out_name(o), &st) && st.st_size > 0);
}

static void abandon_all(struct wse_out *out, int n)
{
	for (int i = 0; i < n; i++)
		wse_out_abandon(&out[i]);
}

int plot_curves(const char *gnuplot, const struct metrics *m, const char *title,
		const char *dir, char *err, size_t errlen)
{
	static const char *const names[2] = { "loss", "accuracy" };
	struct wse_out out[2];
	char cmd[4200], path[4096];
	FILE *g;
	int st;

	/* The program name is the user's; quote it for the shell popen runs. */
	if (strchr(gnuplot, '\'')) {
		snprintf(err, errlen, "gnuplot path %s contains a quote", gnuplot);
		return -1;
	}
	/* gnuplot writes the files wse/outfile.h made: each replaced whole, or written through. */
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s.svg", dir, names[i]);
		if (wse_out_open(&out[i], path, 0, err, errlen)) {
			abandon_all(out, i);
			return -1;
		}
	}
	snprintf(cmd, sizeof(cmd), "'%s'", gnuplot);
	g = popen(cmd, "w");
	if (!g) {
		snprintf(err, errlen, "cannot run %s: %s", gnuplot, strerror(errno));
		abandon_all(out, 2);
		return -1;
	}
	fprintf(g, "set terminal svg size 560,380 dynamic font 'DejaVu Sans,13' background rgb 'white'\n"
		   "set xlabel 'step'\nset grid\nset border lw 1\n");
	if (m->train)
		datablock(g, m, false);
	if (m->test)
		datablock(g, m, true);
	one_plot(g, m, wse_out_name(&out[0]), "loss", 2, title);
	fprintf(g, "set yrange [0:1]\n");
	one_plot(g, m, wse_out_name(&out[1]), "accuracy", 3, title);
	fprintf(g, "unset output\n");
	st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(err, errlen,
				 "%s is not installed (Debian: apt install gnuplot-nox), or --gnuplot names another",
				 gnuplot);
		else
			snprintf(err, errlen, "%s failed (its messages are above)", gnuplot);
		abandon_all(out, 2);
		return -1;
	}
	if (!nonempty(&out[0]) || !nonempty(&out[1])) {
		snprintf(err, errlen, "%s wrote no plots into %s", gnuplot, dir);
		abandon_all(out, 2);
		return -1;
	}
	for (int i = 0; i < 2; i++)
		if (wse_out_commit(&out[i], err, errlen)) {
			abandon_all(out + i + 1, 1 - i);
			return -1;
		}
	return 0;
}
