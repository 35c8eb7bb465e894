// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timing model beside the clock: timing.json (wsetrain writes it from
 * the program, Documentation/wsetrain.rst "Run directory") gives the
 * compiler's modelled step and each layer's share of it; metrics.csv's
 * training rates give the measured step. The page shows both and a bar
 * per layer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "report.h"

static void text(struct json_object *o, const char *key, char *buf, size_t len)
{
	struct json_object *m;

	buf[0] = '\0';
	if (json_object_object_get_ex(o, key, &m) && json_object_is_type(m, json_type_string))
		snprintf(buf, len, "%s", json_object_get_string(m));
}

int timing_read(const char *path, struct timing *t, char *err, size_t errlen)
{
	struct json_object *root, *layers;
	double batch, bottleneck = 0;
	char what[16];
	int ret = -1;

	memset(t, 0, sizeof(*t));
	root = report_json_read(path, err, errlen);
	if (!root)
		return -1;
	if (!json_object_is_type(root, json_type_object) ||
	    !report_json_number(root, "batch", &batch) || batch < 1 || batch > 1e9 ||
	    !report_json_number(root, "step_s", &t->step_s) || !(t->step_s > 0) ||
	    !report_json_number(root, "samples_per_s", &t->samples_per_s) ||
	    !json_object_object_get_ex(root, "layers", &layers) ||
	    !json_object_is_type(layers, json_type_array)) {
		snprintf(err, errlen,
			 "%s: not the timing model wsetrain writes (batch, step_s, samples_per_s and layers wanted)",
			 path);
		goto out;
	}
	t->batch = (uint32_t)batch;
	report_json_number(root, "bottleneck_layer", &bottleneck);
	t->bottleneck = (size_t)bottleneck;
	text(root, "mode", t->mode, sizeof(t->mode));
	text(root, "wafer", t->wafer, sizeof(t->wafer));
	text(root, "program", what, sizeof(what));
	t->units = !strcmp(what, "graph");
	t->n = json_object_array_length(layers);
	t->layers = calloc(t->n ? t->n : 1, sizeof(*t->layers));
	if (!t->layers) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct json_object *l = json_object_array_get_idx(layers, i);
		struct timing_layer *tl = &t->layers[i];

		if (!json_object_is_type(l, json_type_object) || !report_json_number(l, "step_s", &tl->step_s)) {
			snprintf(err, errlen, "%s: layer %zu has no step_s", path, i);
			goto out;
		}
		text(l, "label", tl->label, sizeof(tl->label));
		text(l, "limit", tl->limit, sizeof(tl->limit));
	}
	ret = 0;
out:
	json_object_put(root);
	if (ret)
		timing_free(t);
	return ret;
}

void timing_free(struct timing *t)
{
	free(t->layers);
	memset(t, 0, sizeof(*t));
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double timing_measured_step_s(const struct metrics *m, uint32_t batch, size_t *reports)
{
	double *rate = calloc(m->train ? m->train : 1, sizeof(*rate)), step;
	size_t n = 0;

	*reports = 0;
	if (!rate)
		return NAN;
	/* The first report holds the program's load and the pipeline's fill: left out when there are more. */
	for (size_t i = 0; i < m->n; i++)
		if (!m->rows[i].test && m->rows[i].samples_per_s > 0)
			rate[n++] = m->rows[i].samples_per_s;
	if (n > 1)
		memmove(rate, rate + 1, --n * sizeof(*rate));
	if (!n) {
		free(rate);
		return NAN;
	}
	qsort(rate, n, sizeof(*rate), by_value);
	step = batch / (n % 2 ? rate[n / 2] : (rate[n / 2 - 1] + rate[n / 2]) / 2);
	free(rate);
	*reports = n;
	return step;
}

void report_seconds(char *buf, size_t len, double s)
{
	double a = fabs(s);

	if (isnan(s))
		snprintf(buf, len, "?");
	else if (a >= 100)
		snprintf(buf, len, "%.0f s", s);
	else if (a >= 1)
		snprintf(buf, len, "%.3g s", s);
	else if (a >= 1e-3)
		snprintf(buf, len, "%.3g ms", s * 1e3);
	else if (a >= 1e-6)
		snprintf(buf, len, "%.3g \u00b5s", s * 1e6);
	else
		snprintf(buf, len, "%.3g ns", s * 1e9);
}

void timing_html(FILE *f, const struct timing *t, const struct metrics *m)
{
	char a[32], b[32], rate[32];
	double measured, longest = 0;
	size_t reports;

	measured = timing_measured_step_s(m, t->batch, &reports);
	report_seconds(a, sizeof(a), t->step_s);
	/* Millions where the model runs that fast: "27.6 M", not 27612242. */
	if (t->samples_per_s >= 1e6)
		snprintf(rate, sizeof(rate), "%.3g M", t->samples_per_s / 1e6);
	else
		report_number(rate, sizeof(rate), round(t->samples_per_s));
	fprintf(f, "<h2>Time per step</h2>\n<table id=\"step-time\">\n"
		   "<tr><td>timing model</td><td>%s per step of %u (%s samples/s, one system",
		a, t->batch, rate);
	if (t->wafer[0]) {
		fprintf(f, ", ");
		html_escape(f, t->wafer);
	}
	fprintf(f, ")</td></tr>\n");
	if (reports) {
		report_seconds(b, sizeof(b), measured);
		fprintf(f, "<tr><td>measured</td><td>%s per step (the median of %zu training reports)</td></tr>\n"
			   "<tr><td>measured / model</td><td>%.*f</td></tr>\n",
			b, reports, measured / t->step_s >= 100 ? 0 : 2, measured / t->step_s);
	}
	fprintf(f, "</table>\n");
	for (size_t i = 0; i < t->n; i++)
		if (t->layers[i].step_s > longest)
			longest = t->layers[i].step_s;
	fprintf(f, "<p class=\"sub\">Each %s's modelled time in one step%s.</p>\n"
		   "<table id=\"layers\">\n<tr><th>#</th><th>%s</th><th>limited by</th><th>per step</th><th></th></tr>\n",
		t->units ? "unit" : "layer",
		!strcmp(t->mode, "pipelined") ?
		", as its stage is busy (the stages run at once: the slowest sets the pace)" :
		t->units ? " (the units run in turn on the whole wafer)" :
		" (the layers run in turn on the whole wafer)",
		t->units ? "unit" : "layer");
	for (size_t i = 0; i < t->n; i++) {
		const struct timing_layer *l = &t->layers[i];
		double width = longest > 0 ? 100 * l->step_s / longest : 0;

		report_seconds(a, sizeof(a), l->step_s);
		fprintf(f, "<tr%s><td>%zu</td><td>", i == t->bottleneck ? " class=\"slowest\"" : "", i);
		html_escape(f, l->label);
		fprintf(f, "</td><td>");
		html_escape(f, l->limit);
		fprintf(f, "</td><td>%s</td><td class=\"bar\"><span style=\"width:%.1f%%\"></span></td></tr>\n",
			a, width);
	}
	fprintf(f, "</table>\n");
}
