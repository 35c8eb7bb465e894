// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsereport: a training run's pictures. For each run directory wsetrain
 * wrote, draws the loss and accuracy curves with gnuplot and writes
 * index.html with them beside the wafer map. Documentation/wsereport.rst.
 * Exit status: 0 every report written, 1 one could not be, 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/filekind.h"
#include "wse/usage.h"
#include "wse_version.h"
#include "report.h"

#define EXIT_FAILED	1
#define EXIT_USAGE	2

static const char usage_text[] =
	"usage: wsereport [--gnuplot PROGRAM] RUN_DIR\n"
	"       wsereport [--gnuplot PROGRAM] -o DIR RUN_DIR RUN_DIR...\n"
	"Draw a wsetrain run's loss, accuracy, rate and learning-rate curves\n"
	"(RUN_DIR/loss.svg, accuracy.svg, rate.svg, lr.svg) and write\n"
	"RUN_DIR/index.html with them beside the wafer map. Given several runs,\n"
	"also write one page comparing them, DIR/index.html: their curves\n"
	"overlaid and their settings and results side by side, differences marked.\n"
	"RUN_DIR holds what wsetrain wrote: metrics.csv (needed); run.json,\n"
	"wafer.svg and timing.json (the timing model's step and per-layer times,\n"
	"shown beside the measured step time) when present.\n"
	"\n"
	"  -o, --output DIR    where the comparison page goes (made if missing)\n"
	"  --gnuplot PROGRAM   the gnuplot to run (default: gnuplot on PATH)\n"
	"  -q, --quiet         do not print the pages written\n"
	"  -h, --help          this help\n"
	"  -V, --version       print the version\n"
	"\n"
	"Exit status: 0 every report written, 1 one was not, 2 usage error.\n"
	"See Documentation/wsereport.rst.\n";

static bool is_file(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* Reads @dir's metrics.csv, run.json and timing.json into @run; messages on stderr. */
static int load_run(const char *dir, struct compare_run *run)
{
	char path[4096], err[REPORT_ERR_MAX], base[4096];
	struct stat st;

	memset(run, 0, sizeof(*run));
	run->dir = dir;
	snprintf(base, sizeof(base), "%s", dir);
	snprintf(run->name, sizeof(run->name), "%s", basename(base));
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "wsereport: %s: %s\n", dir,
			errno && !S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/metrics.csv", dir);
	if (metrics_read(path, &run->m, err, sizeof(err))) {
		fprintf(stderr, "wsereport: %s%s\n", err,
			is_file(dir, "metrics.csv") ? "" :
			" (wsetrain writes it into its run directory; is this one?)");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/run.json", dir);
	if (is_file(dir, "run.json")) {
		if (run_info_read(path, &run->ri, err, sizeof(err))) {
			fprintf(stderr, "wsereport: %s\n", err);
			metrics_free(&run->m);
			return -1;
		}
		run_info_fill_lr(&run->ri, &run->m);
	} else {
		run->ri.title = strdup(run->name);
		if (!run->ri.title) {
			fprintf(stderr, "wsereport: out of memory\n");
			metrics_free(&run->m);
			return -1;
		}
	}
	/* Runs from before wsetrain kept the timing model have none. */
	snprintf(path, sizeof(path), "%s/timing.json", dir);
	if (is_file(dir, "timing.json")) {
		if (timing_read(path, &run->t, err, sizeof(err))) {
			fprintf(stderr, "wsereport: %s\n", err);
			run_info_free(&run->ri);
			metrics_free(&run->m);
			return -1;
		}
		run->have_timing = true;
	}
	return 0;
}

static void free_run(struct compare_run *run)
{
	timing_free(&run->t);
	run_info_free(&run->ri);
	metrics_free(&run->m);
}

/* A run's own page, in its directory. */
static int report_one(const struct compare_run *run, const char *gnuplot, bool quiet)
{
	const struct plot_run curves = { &run->m, run->ri.title };
	char err[REPORT_ERR_MAX];

	if (plot_curves(gnuplot, &curves, 1, run->ri.title, run->dir, err, sizeof(err)) ||
	    html_write(run->dir, &run->ri, &run->m, run->have_timing ? &run->t : NULL,
		       is_file(run->dir, "wafer.svg"), err, sizeof(err))) {
		fprintf(stderr, "wsereport: %s: %s\n", run->dir, err);
		return -1;
	}
	if (!quiet)
		printf("%s/index.html\n", run->dir);
	return 0;
}

/* The comparison page in @out (made if missing), its curves beside it. */
static int report_compare(const char *out, const struct compare_run *runs, size_t n,
			  const char *gnuplot, bool quiet)
{
	struct plot_run *curves = calloc(n, sizeof(*curves));
	char err[REPORT_ERR_MAX], title[64];
	int ret = -1;

	if (!curves) {
		fprintf(stderr, "wsereport: out of memory\n");
		return -1;
	}
	if (mkdir(out, 0777) && errno != EEXIST) {
		fprintf(stderr, "wsereport: -o %s: %s\n", out, strerror(errno));
		goto out;
	}
	if (wse_file_expect("wsereport", out, WSE_FILE_BIT(WSE_FILE_DIRECTORY),
			    "a directory for the comparison page"))
		goto out;
	for (size_t r = 0; r < n; r++) {
		curves[r].m = &runs[r].m;
		/* The key names each run by its directory, as the table's columns do. */
		curves[r].name = runs[r].name;
	}
	snprintf(title, sizeof(title), "%zu runs", n);
	if (plot_curves(gnuplot, curves, n, title, out, err, sizeof(err)) ||
	    compare_write(out, runs, n, err, sizeof(err))) {
		fprintf(stderr, "wsereport: -o %s: %s\n", out, err);
		goto out;
	}
	if (!quiet)
		printf("%s/index.html\n", out);
	ret = 0;
out:
	free(curves);
	return ret;
}

/* @out is one of the runs' directories: its page would be replaced by the comparison. */
static const char *out_is_a_run(const char *out, char **dirs, int n)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (!realpath(out, a))
		return NULL;
	for (int i = 0; i < n; i++)
		if (realpath(dirs[i], b) && !strcmp(a, b))
			return dirs[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "gnuplot", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *gnuplot = "gnuplot", *out = NULL, *clash;
	struct compare_run *runs;
	bool quiet = false, all = true;
	int c, n, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			gnuplot = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			fputs(WSE_VERSION_LINE("wsereport"), stdout);
			return 0;
		default:
			return wse_usage_bad_option("wsereport", argv, optind, optopt);
		}
	}
	if (optind == argc)
		return wse_usage_error("wsereport", "give a run directory (e.g. runs/fc-mnist-20261124T070000Z)");
	n = argc - optind;
	if (n > 1 && !out)
		return wse_usage_error("wsereport",
				       "several runs are compared on one page: give -o DIR for it (e.g. -o runs/compare)");
	if (n == 1 && out)
		return wse_usage_error("wsereport", "-o DIR is for comparing two or more runs");
	clash = out ? out_is_a_run(out, argv + optind, n) : NULL;
	if (clash)
		return wse_usage_error("wsereport",
				       "-o is a run directory: the comparison would replace its page; give another");
	runs = calloc(n, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "wsereport: out of memory\n");
		return EXIT_FAILED;
	}
	/* gnuplot may be missing or die early: its pipe must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < n; i++) {
		if (wse_file_expect("wsereport", argv[optind + i], WSE_FILE_BIT(WSE_FILE_DIRECTORY),
				    "a run directory") ||
		    load_run(argv[optind + i], &runs[i])) {
			all = false;
			ret = EXIT_FAILED;
			runs[i].dir = NULL;
			continue;
		}
		if (report_one(&runs[i], gnuplot, quiet))
			ret = EXIT_FAILED;
	}
	/* Only whole: a comparison missing a run would mislead. */
	if (out && !all)
		fprintf(stderr, "wsereport: no comparison page written, as not every run read\n");
	else if (out && report_compare(out, runs, n, gnuplot, quiet))
		ret = EXIT_FAILED;
	for (int i = 0; i < n; i++)
		if (runs[i].dir)
			free_run(&runs[i]);
	free(runs);
	return ret;
}
