// SPDX-License-Identifier: GPL-2.0-only
/*
 * The comparison page: several runs' curves overlaid (plot.c drew them
 * into the page's directory), then one table of their settings and final
 * figures, a column per run, with the rows where the runs differ marked.
 * Like a run's own page it is static and opens from the disk.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/outfile.h"
#include "report.h"

/* The rows of the table, as run.json names them, and what the page calls them. */
static const struct {
	const char *key, *label;
} setting[] = {
	{ "model", "model" },
	{ "task", "task" },
	{ "mode", "execution mode" },
	{ "systems", "systems" },
	{ "precision", "precision" },
	{ "batch", "batch" },
	{ "optimizer", "optimizer" },
	{ "lr", "learning rate" },
	{ "schedule", "schedule" },
	{ "warmup", "warmup steps" },
	{ "schedule_steps", "schedule steps" },
	{ "min_lr", "final learning rate" },
	{ "epochs", "epochs" },
	{ "steps", "steps" },
	{ "status", "status" },
	{ "final.step", "final step" },
	{ "final.test_accuracy", "test accuracy" },
	{ "final.test_loss", "test loss" },
	{ "final.samples_per_s", "samples/s (whole run)" },
	{ "final.seconds", "seconds" },
};
#define N_SETTINGS	(sizeof(setting) / sizeof(setting[0]))

/*
 * The last training report's loss and the last evaluation's accuracy, from
 * metrics.csv; the step time the timing model gives (timing.json) and the
 * one measured.
 */
enum measured { M_TRAIN_LOSS, M_TEST_ACCURACY, M_MODEL_STEP, M_MEASURED_STEP, M_COUNT };
static const char *const measured_label[M_COUNT] = {
	"last training loss", "last test accuracy (metrics.csv)",
	"step time, timing model (one system)", "step time, measured (median)",
};

static void measured(const struct compare_run *run, enum measured k, char *buf, size_t len)
{
	const struct metrics *m = &run->m;
	size_t reports;

	buf[0] = '\0';
	if (k == M_MODEL_STEP || k == M_MEASURED_STEP) {
		double s;

		if (!run->have_timing)
			return;
		s = k == M_MODEL_STEP ? run->t.step_s :
		    timing_measured_step_s(m, run->t.batch, &reports);
		if (!isnan(s))
			report_seconds(buf, len, s);
		return;
	}
	for (size_t i = m->n; i-- > 0;) {
		const struct metrics_row *r = &m->rows[i];

		if (k == M_TRAIN_LOSS && !r->test) {
			report_number(buf, len, r->loss);
			return;
		}
		if (k == M_TEST_ACCURACY && r->test) {
			report_number(buf, len, r->accuracy);
			return;
		}
	}
}

/*
 * @to relative to @from (both directories), for the links to each run's
 * page; the absolute path where either cannot be resolved.
 */
static void relative(const char *from, const char *to, char *buf, size_t len)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t common = 0, at = 0;

	if (!realpath(from, a) || !realpath(to, b)) {
		snprintf(buf, len, "%s", to);
		return;
	}
	/* The longest common prefix that ends at a path component. */
	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i + 1] == '/' || a[i + 1] == '\0')
			if (b[i + 1] == '/' || b[i + 1] == '\0')
				common = i + 1;
	buf[0] = '\0';
	for (const char *p = a + common; *p; p++)
		if (*p == '/')
			at += snprintf(buf + at, at < len ? len - at : 0, "../");
	snprintf(buf + (at < len ? at : len - 1), at < len ? len - at : 1, "%s",
		 b[common] == '/' ? b + common + 1 : b + common);
	if (!buf[0])
		snprintf(buf, len, ".");
}

/* One row: its label, then each run's value; marked where they differ. */
static void row(FILE *f, const char *label, const char *const *value, size_t n)
{
	bool differ = false;

	for (size_t r = 1; r < n; r++)
		differ |= strcmp(value[r], value[0]) != 0;
	fprintf(f, "<tr%s><td>", differ ? " class=\"differs\"" : "");
	html_escape(f, label);
	fprintf(f, "</td>");
	for (size_t r = 0; r < n; r++) {
		fprintf(f, "<td%s>", differ ? " class=\"diff\"" : "");
		html_escape(f, value[r][0] ? value[r] : "\u2014");
		fprintf(f, "</td>");
	}
	fprintf(f, "</tr>\n");
}

static void table(FILE *f, const char *dir, const struct compare_run *runs, size_t n,
		  const char **value, char (*buf)[64])
{
	char link[PATH_MAX + 16];

	fprintf(f, "<h2>Settings and results</h2>\n<table id=\"runs\">\n<tr><th></th>");
	for (size_t r = 0; r < n; r++) {
		relative(dir, runs[r].dir, link, sizeof(link) - 12);
		strcat(link, "/index.html");
		fprintf(f, "<th><a href=\"");
		html_escape(f, link);
		fprintf(f, "\">");
		html_escape(f, runs[r].name);
		fprintf(f, "</a></th>");
	}
	fprintf(f, "</tr>\n");
	for (size_t s = 0; s < N_SETTINGS; s++) {
		bool any = false;

		for (size_t r = 0; r < n; r++) {
			const char *v = run_info_get(&runs[r].ri, setting[s].key);

			value[r] = v ? v : "";
			any |= v != NULL;
		}
		if (any)
			row(f, setting[s].label, value, n);
	}
	for (int k = 0; k < M_COUNT; k++) {
		bool any = false;

		for (size_t r = 0; r < n; r++) {
			measured(&runs[r], k, buf[r], sizeof(buf[r]));
			value[r] = buf[r];
			any |= buf[r][0] != '\0';
		}
		if (any)
			row(f, measured_label[k], value, n);
	}
	fprintf(f, "</table>\n<p class=\"sub\">Rows where the runs differ are marked.</p>\n");
}

int compare_write(const char *dir, const struct compare_run *runs, size_t n,
		  char *err, size_t errlen)
{
	char path[4096], (*buf)[64] = calloc(n, sizeof(*buf));
	const char **value = calloc(n, sizeof(*value));
	bool rate = false, lr = false;
	struct wse_out out;
	FILE *f;

	if (!buf || !value) {
		free(buf);
		free(value);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/index.html", dir);
	if (wse_out_open(&out, path, 0, err, errlen))
		goto fail;
	f = wse_out_stream(&out, err, errlen);
	if (!f) {
		wse_out_abandon(&out);
		goto fail;
	}
	for (size_t r = 0; r < n; r++) {
		rate |= runs[r].m.train > 0;
		lr |= metrics_have_lr(&runs[r].m);
	}
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<title>wse runs compared</title>\n<style>%s</style>\n</head>\n<body>\n"
		   "<h1>%zu runs compared</h1>\n<p class=\"sub\">", report_style, n);
	for (size_t r = 0; r < n; r++) {
		fprintf(f, "%s", r ? "; " : "");
		html_escape(f, runs[r].ri.title);
	}
	fprintf(f, "</p>\n<div class=\"row\">\n");
	html_figure(f, "loss", "loss.svg", "loss against step, each run's train and test", "Loss");
	html_figure(f, "accuracy", "accuracy.svg", "accuracy against step, each run's train and test",
		    "Accuracy");
	if (rate)
		html_figure(f, "rate", "rate.svg", "training samples per second against step, each run",
			    "Training rate");
	if (lr)
		html_figure(f, "lr", "lr.svg", "learning rate against step, each run", "Learning rate");
	fprintf(f, "</div>\n");
	table(f, dir, runs, n, value, buf);
	fprintf(f, "</body>\n</html>\n");
	free(buf);
	free(value);
	return wse_out_commit(&out, err, errlen) ? -1 : 0;
fail:
	free(buf);
	free(value);
	return -1;
}
