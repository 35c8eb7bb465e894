/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wsereport's parts: a run's metrics.csv, its run.json, the curves drawn
 * by gnuplot and the HTML page that shows them beside the wafer map.
 * Documentation/wsereport.rst.
 */
#ifndef WSEREPORT_REPORT_H
#define WSEREPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_ERR_MAX	512

/* One row of metrics.csv: a progress report ("train") or an evaluation ("test"). */
struct metrics_row {
	bool test;
	uint64_t step;
	uint32_t epoch;
	double loss, accuracy;
	double samples_per_s;		/* NaN for test rows */
	double wall_s;
	double lr;			/* the learning rate at the step; NaN: not known */
};

struct metrics {
	struct metrics_row *rows;
	size_t n, cap;
	size_t train, test;		/* rows of each kind */
};

/* metrics_csv.c: reads wsetrain's metrics.csv; on error a message naming the line in @err. */
int metrics_read(const char *path, struct metrics *m, char *err, size_t errlen);
void metrics_free(struct metrics *m);

/* plot.c: one run's series, or one of several overlaid; @name labels it. */
struct plot_run {
	const struct metrics *m;
	const char *name;
};

/*
 * Draws loss.svg, accuracy.svg, rate.svg and (when a run's learning rate is
 * known) lr.svg in @dir with gnuplot (@gnuplot: its path).
 */
int plot_curves(const char *gnuplot, const struct plot_run *runs, size_t n, const char *title,
		const char *dir, char *err, size_t errlen);
/* A training row of @m has a learning rate. */
bool metrics_have_lr(const struct metrics *m);

/* run_info.c: what run.json says, as label/value rows for the page. */
struct run_info {
	char *title;			/* "fc-mnist, pipelined on 1 system" */
	size_t n;
	char **label, **value;		/* numbers rounded for people */
	/* The learning rate's schedule, when run.json records it. */
	bool have_lr;
	double lr, min_lr;
	uint64_t warmup, schedule_steps;	/* schedule_steps 0: constant */
};

int run_info_read(const char *path, struct run_info *ri, char *err, size_t errlen);
/* The value of row @label ("model", "final.test_accuracy"), or NULL. */
const char *run_info_get(const struct run_info *ri, const char *label);
/* Fills the training rows' lr from the schedule, where metrics.csv had none. */
void run_info_fill_lr(const struct run_info *ri, struct metrics *m);
/* @v as people read it: 0.8882 for 0.88819999999999999, 17000.5, 1876. */
void report_number(char *buf, size_t len, double v);
struct json_object;
/* @path's JSON, or NULL with @err saying why. */
struct json_object *report_json_read(const char *path, char *err, size_t errlen);
/* Member @key of @o as a finite number >= 0 in *@v; false if it is not one. */
bool report_json_number(struct json_object *o, const char *key, double *v);
void run_info_free(struct run_info *ri);

/* timing.c: the timing model wsetrain kept (timing.json), per system. */
struct timing_layer {
	char label[128];		/* "dense 784x256", "unit 3: gemm add" */
	char limit[32];			/* what bounds it: "compute", "memory", ... */
	double step_s;			/* its modelled time in one step */
};

struct timing {
	char mode[32], wafer[64];
	bool units;			/* a graph program's units, not layers */
	uint32_t batch;
	double samples_per_s, step_s;	/* the modelled rate and step */
	size_t bottleneck;		/* the slowest layer */
	size_t n;
	struct timing_layer *layers;
};

int timing_read(const char *path, struct timing *t, char *err, size_t errlen);
void timing_free(struct timing *t);
/*
 * The measured seconds per step of @batch: the median training report's
 * rate, the first left out (it holds the load); NaN with @reports 0 if none.
 */
double timing_measured_step_s(const struct metrics *m, uint32_t batch, size_t *reports);
/* The page's section: modelled and measured step, a bar per layer. */
void timing_html(FILE *f, const struct timing *t, const struct metrics *m);
/* @s seconds as people read them: "12.3 ms", "1.25 s". */
void report_seconds(char *buf, size_t len, double s);
/* @bytes as people read them: "1.2 MB", "830 bytes". */
void report_bytes(char *buf, size_t len, double bytes);

/* html.c: writes @dir/index.html; @has_wafer: wafer.svg is there; @t: NULL, or the timing model. */
int html_write(const char *dir, const struct run_info *ri, const struct metrics *m,
	       const struct timing *t, bool has_wafer, char *err, size_t errlen);

/* One run of a comparison: its directory, what run.json says, its metrics. */
struct compare_run {
	const char *dir;
	char name[256];			/* the directory's last component */
	struct run_info ri;
	struct metrics m;
	bool have_timing;
	struct timing t;		/* timing.json, where there is one */
};

/* compare.c: writes @dir/index.html comparing @n runs (their plots already in @dir). */
int compare_write(const char *dir, const struct compare_run *runs, size_t n,
		  char *err, size_t errlen);
/* The pages' style sheet; a figure of @file (an image) with its caption. */
extern const char report_style[];
void html_figure(FILE *f, const char *id, const char *file, const char *alt,
		 const char *caption);
/* Writes @s with &, <, >, " escaped. */
void html_escape(FILE *f, const char *s);

#endif /* WSEREPORT_REPORT_H */
