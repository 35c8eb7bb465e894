// SPDX-License-Identifier: GPL-2.0-only
/*
 * index.html: one small static page per run, the curves and the wafer map
 * side by side, then what run.json says and the run's files. No scripts
 * and nothing fetched from elsewhere: it opens from the disk in any browser.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/outfile.h"
#include "report.h"

const char report_style[] =
	"body{font-family:'DejaVu Sans',sans-serif;margin:1.5em;color:#222;background:#fff}"
	"h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.2em 0 .4em}"
	".sub{color:#555;margin:0 0 1em}"
	".row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}"
	"figure{margin:0;border:1px solid #ddd;padding:.4em;background:#fff}"
	"figure img{display:block;width:440px;height:auto}"
	"figure#wafer img{width:330px}"
	"figcaption{font-size:.9em;color:#555;text-align:center}"
	"table{border-collapse:collapse;font-size:.9em}"
	"td{border-top:1px solid #eee;padding:.15em .8em .15em 0;vertical-align:top}"
	"td:first-child{color:#555;white-space:nowrap}"
	"th{text-align:left;padding:.15em .8em .15em 0;border-bottom:1px solid #ccc}"
	"td.diff{background:#fff3b0;font-weight:bold}"
	/* The bars' colour is theirs alone: the browser test counts it. */
	"td.bar{width:240px}td.bar span{display:block;height:.8em;background:#6b6ecf}"
	"tr.slowest td{font-weight:bold}";

void html_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

void html_figure(FILE *f, const char *id, const char *file, const char *alt,
		   const char *caption)
{
	fprintf(f, "<figure id=\"%s\"><img src=\"%s\" alt=\"%s\"><figcaption>%s</figcaption></figure>\n",
		id, file, alt, caption);
}

/* The last evaluation and the last training report, in one line. */
static void summary(FILE *f, const struct metrics *m)
{
	const struct metrics_row *test = NULL, *train = NULL;

	for (size_t i = 0; i < m->n; i++) {
		if (m->rows[i].test)
			test = &m->rows[i];
		else
			train = &m->rows[i];
	}
	char a[32], b[32], c[32];

	fprintf(f, "<p class=\"sub\">");
	if (test) {
		report_number(a, sizeof(a), test->accuracy);
		report_number(b, sizeof(b), test->loss);
		fprintf(f, "test accuracy <b>%s</b> (loss %s) at step %llu", a, b,
			(unsigned long long)test->step);
	}
	if (train) {
		report_number(a, sizeof(a), train->loss);
		report_number(b, sizeof(b), isnan(train->samples_per_s) ? 0.0 :
			      round(train->samples_per_s));
		fprintf(f, "%slast training report: step %llu, loss %s, %s samples/s",
			test ? "; " : "", (unsigned long long)train->step, a, b);
		if (!isnan(train->lr)) {
			report_number(c, sizeof(c), train->lr);
			fprintf(f, ", learning rate %s", c);
		}
	}
	fprintf(f, "</p>\n");
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Links to the run's files, sorted, with their sizes. */
static void files(FILE *f, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char **grown;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "index.html"))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown)
			break;
		names = grown;
		names[n] = strdup(e->d_name);
		if (!names[n])
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	fprintf(f, "<h2>Files</h2>\n<table>\n");
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		fprintf(f, "<tr><td><a href=\"");
		html_escape(f, names[i]);
		fprintf(f, "\">");
		html_escape(f, names[i]);
		fprintf(f, "</a></td><td>");
		if (!stat(path, &st)) {
			char size[32];

			report_bytes(size, sizeof(size), (double)st.st_size);
			fprintf(f, "%s", size);
		}
		fprintf(f, "</td></tr>\n");
		free(names[i]);
	}
	fprintf(f, "</table>\n");
	free(names);
}

int html_write(const char *dir, const struct run_info *ri, const struct metrics *m,
	       const struct timing *t, bool has_wafer, char *err, size_t errlen)
{
	struct wse_out out;
	char path[4096];
	FILE *f;

	/* Replaced whole; its temporary file is hidden, so files() does not list it. */
	snprintf(path, sizeof(path), "%s/index.html", dir);
	if (wse_out_open(&out, path, 0, err, errlen))
		return -1;
	f = wse_out_stream(&out, err, errlen);
	if (!f) {
		wse_out_abandon(&out);
		return -1;
	}
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>wse run: ");
	html_escape(f, ri->title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", report_style);
	html_escape(f, ri->title);
	fprintf(f, "</h1>\n");
	summary(f, m);
	fprintf(f, "<div class=\"row\">\n");
	html_figure(f, "loss", "loss.svg", "loss against step, train and test", "Loss");
	html_figure(f, "accuracy", "accuracy.svg", "accuracy against step, train and test",
	       "Accuracy");
	if (m->train)
		html_figure(f, "rate", "rate.svg", "training samples per second against step",
		       "Training rate");
	if (metrics_have_lr(m))
		html_figure(f, "lr", "lr.svg", "learning rate against step", "Learning rate");
	if (has_wafer)
		html_figure(f, "wafer", "wafer.svg", "the program's regions on the wafer",
			    t && t->units ? "The wafer: each unit's region" :
			    "The wafer: each layer's region");
	fprintf(f, "</div>\n");
	if (t)
		timing_html(f, t, m);
	fprintf(f, "<h2>Run</h2>\n<table>\n");
	for (size_t i = 0; i < ri->n; i++) {
		fprintf(f, "<tr><td>");
		html_escape(f, ri->label[i]);
		fprintf(f, "</td><td>");
		html_escape(f, ri->value[i]);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	files(f, dir);
	fprintf(f, "</body>\n</html>\n");
	return wse_out_commit(&out, err, errlen) ? -1 : 0;
}
