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
	"usage: wsereport [--gnuplot PROGRAM] RUN_DIR...\n"
	"Draw a wsetrain run's loss and accuracy curves (RUN_DIR/loss.svg,\n"
	"accuracy.svg) and write RUN_DIR/index.html with them beside the wafer map.\n"
	"RUN_DIR holds what wsetrain wrote: metrics.csv (needed), run.json and\n"
	"wafer.svg (shown when present).\n"
	"\n"
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

static int report_one(const char *dir, const char *gnuplot, bool quiet)
{
	char path[4096], err[REPORT_ERR_MAX], base[4096];
	struct run_info ri = { 0 };
	struct metrics m;
	struct stat st;
	int ret = -1;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "wsereport: %s: %s\n", dir,
			errno && !S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/metrics.csv", dir);
	if (metrics_read(path, &m, err, sizeof(err))) {
		fprintf(stderr, "wsereport: %s%s\n", err,
			is_file(dir, "metrics.csv") ? "" :
			" (wsetrain writes it into its run directory; is this one?)");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/run.json", dir);
	if (is_file(dir, "run.json")) {
		if (run_info_read(path, &ri, err, sizeof(err))) {
			fprintf(stderr, "wsereport: %s\n", err);
			goto out;
		}
	} else {
		snprintf(base, sizeof(base), "%s", dir);
		ri.title = strdup(basename(base));
		if (!ri.title) {
			fprintf(stderr, "wsereport: out of memory\n");
			goto out;
		}
	}
	if (plot_curves(gnuplot, &m, ri.title, dir, err, sizeof(err)) ||
	    html_write(dir, &ri, &m, is_file(dir, "wafer.svg"), err, sizeof(err))) {
		fprintf(stderr, "wsereport: %s: %s\n", dir, err);
		goto out;
	}
	if (!quiet)
		printf("%s/index.html\n", dir);
	ret = 0;
out:
	run_info_free(&ri);
	metrics_free(&m);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "gnuplot", required_argument, NULL, 'g' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *gnuplot = "gnuplot";
	bool quiet = false;
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			gnuplot = optarg;
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
	/* gnuplot may be missing or die early: its pipe must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	for (int i = optind; i < argc; i++)
		if (wse_file_expect("wsereport", argv[i], WSE_FILE_BIT(WSE_FILE_DIRECTORY),
				    "a run directory") ||
		    report_one(argv[i], gnuplot, quiet))
			ret = EXIT_FAILED;
	return ret;
}
