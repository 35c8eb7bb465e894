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
};

struct metrics {
	struct metrics_row *rows;
	size_t n, cap;
	size_t train, test;		/* rows of each kind */
};

/* metrics_csv.c: reads wsetrain's metrics.csv; on error a message naming the line in @err. */
int metrics_read(const char *path, struct metrics *m, char *err, size_t errlen);
void metrics_free(struct metrics *m);

/* plot.c: draws loss.svg and accuracy.svg in @dir with gnuplot (@gnuplot: its path). */
int plot_curves(const char *gnuplot, const struct metrics *m, const char *title,
		const char *dir, char *err, size_t errlen);

/* run_info.c: what run.json says, as label/value rows for the page. */
struct run_info {
	char *title;			/* "fc-mnist, pipelined on 1 system" */
	size_t n;
	char **label, **value;
};

int run_info_read(const char *path, struct run_info *ri, char *err, size_t errlen);
void run_info_free(struct run_info *ri);

/* html.c: writes @dir/index.html; @has_wafer: wafer.svg is there. */
int html_write(const char *dir, const struct run_info *ri, const struct metrics *m,
	       bool has_wafer, char *err, size_t errlen);
/* Writes @s with &, <, >, " escaped. */
void html_escape(FILE *f, const char *s);

#endif /* WSEREPORT_REPORT_H */
