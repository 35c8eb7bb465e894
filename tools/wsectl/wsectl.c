// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsectl: devices, links and health of the virtual WSE, over the "wse"
 * generic netlink family. See Documentation/wsectl.rst.
 *
 * This file is the command line: global options anywhere on it (as ip(8)
 * takes -j before or after the object), then the command's own options
 * and arguments, each command in the table below.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse_version.h"
#include "wsectl.h"

/* Option codes above any character. */
enum {
	OPT_KEEPALIVE = 256,
	OPT_TIMEOUT,
};

/* Options that any command takes, before or after it. */
#define GLOBAL_OPTIONS \
	{ "json", no_argument, NULL, 'j' }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }
#define GLOBAL_SHORT "jhV"

struct command {
	const char *name;
	const char *synopsis;	/* after the name, for the usage */
	const char *summary;
	int min_args, max_args;
	const char *shortopts;	/* the command's own, after GLOBAL_SHORT */
	const struct option *opts;
	int (*run)(const struct wsectl_opts *o, int argc, char **argv);
};

static const struct option no_opts[] = {
	GLOBAL_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static const struct option attach_opts[] = {
	GLOBAL_OPTIONS,
	{ "keepalive-ms", required_argument, NULL, OPT_KEEPALIVE },
	{ NULL, 0, NULL, 0 },
};

static const struct option stats_opts[] = {
	GLOBAL_OPTIONS,
	{ "watch", required_argument, NULL, 'w' },
	{ "count", required_argument, NULL, 'c' },
	{ NULL, 0, NULL, 0 },
};

static const struct option monitor_opts[] = {
	GLOBAL_OPTIONS,
	{ "count", required_argument, NULL, 'c' },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ NULL, 0, NULL, 0 },
};

static const struct command commands[] = {
	{ "list", "", "every device: index, accel node, link, peer, wafer",
	  0, 0, "", no_opts, wsectl_list },
	{ "info", "DEV", "one device in full", 1, 1, "", no_opts, wsectl_info },
	{ "stats", "DEV [-w SEC [-c N]]",
	  "link and device counters; with -w, their rates every\n"
	  "SEC seconds, until interrupted or for N lines",
	  1, 1, "w:c:", stats_opts, wsectl_stats },
	{ "attach", "ADDR [--keepalive-ms MS]",
	  "connect to a firmware at ADDR (tcp:HOST:PORT or\n"
	  "unix:PATH) and create a device on that link",
	  1, 1, "", attach_opts, wsectl_attach },
	{ "detach", "DEV", "shut the device's link down and remove it",
	  1, 1, "", no_opts, wsectl_detach },
	{ "reset", "DEV", "abort what is in flight and zero the counters",
	  1, 1, "", no_opts, wsectl_reset },
	{ "monitor", "[-c N] [--timeout-ms MS]",
	  "print events (link up/down, firmware error, timeout,\n"
	  "reset) as they arrive",
	  0, 0, "c:", monitor_opts, wsectl_monitor },
};
#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wsectl [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Devices, links and health of the virtual Wafer-Scale Engine.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];
		char head[64];
		const char *s = c->summary;

		snprintf(head, sizeof(head), "%s %s", c->name, c->synopsis);
		if (strlen(head) > 20)
			fprintf(f, "  %s\n%23s", head, "");
		else
			fprintf(f, "  %-21s", head);
		/* The summary's later lines line up under its first. */
		for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1)
			fprintf(f, "%.*s\n%23s", (int)(nl - s), s, "");
		fprintf(f, "%s\n", s);
	}
	fprintf(f,
		"\n"
		"options (anywhere on the line):\n"
		"  -j, --json           machine-readable output (JSON)\n"
		"  -h, --help           this text\n"
		"  -V, --version        the version of wsectl\n"
		"\n"
		"DEV is the device index that 'wsectl list' shows. attach, detach and\n"
		"reset need CAP_NET_ADMIN. Exit status: 0 done, 1 failed, 2 usage.\n");
}

/* A usage error: one line naming it, and where to look. */
static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("wsectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'wsectl --help' for more information.\n", stderr);
	return WSECTL_USAGE;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* One option of the command (or a global one); WSECTL_OK or WSECTL_USAGE. */
static int take_option(struct wsectl_opts *o, int c, const char *arg, bool *done)
{
	uint64_t v;

	switch (c) {
	case 'j':
		o->json = true;
		return WSECTL_OK;
	case 'h':
		usage(stdout);
		*done = true;
		return WSECTL_OK;
	case 'V':
		fputs(WSE_VERSION_LINE("wsectl"), stdout);
		*done = true;
		return WSECTL_OK;
	case OPT_KEEPALIVE:
		return wse_opt_u64("wsectl", "--keepalive-ms", arg, 100, 60000, WSE_NUM_PLAIN,
				   &o->keepalive_ms) ? WSECTL_USAGE : WSECTL_OK;
	case 'c':
		if (wse_opt_u64("wsectl", "--count", arg, 1, INT32_MAX, WSE_NUM_PLAIN, &v))
			return WSECTL_USAGE;
		o->count = (long)v;
		return WSECTL_OK;
	case OPT_TIMEOUT:
		if (wse_opt_u64("wsectl", "--timeout-ms", arg, 0, INT32_MAX, WSE_NUM_PLAIN, &v))
			return WSECTL_USAGE;
		o->timeout_ms = (long)v;
		return WSECTL_OK;
	case 'w':
		return wse_opt_double("wsectl", "--watch", arg, 0.1, 86400, &o->watch_s) ?
			WSECTL_USAGE : WSECTL_OK;
	default:
		return WSECTL_USAGE;
	}
}

/*
 * getopt_long's '?' or ':' for argv[optind - 1]: an unknown option, or
 * one without its value. Named as an option, with the command it was
 * given to.
 */
static int option_error(int c, char **argv, const char *cmd)
{
	char shortopt[3] = { '-', (char)optopt, 0 };
	const char *what = optopt ? shortopt : argv[optind - 1];

	if (c == ':')
		return bad_usage("option '%s' needs a value", what);
	if (cmd)
		return bad_usage("unknown option '%s' for '%s'", what, cmd);
	return bad_usage("unknown option '%s'", what);
}

int main(int argc, char **argv)
{
	struct wsectl_opts o = { .count = -1, .timeout_ms = -1 };
	const struct command *cmd;
	char shortopts[32];
	bool done = false;
	int c, ret, nargs;

	/* Global options before the command: stop at the first word. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:" GLOBAL_SHORT, no_opts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return option_error(c, argv, NULL);
		ret = take_option(&o, c, optarg, &done);
		if (ret || done)
			return ret;
	}
	if (optind >= argc) {
		usage(stderr);
		return WSECTL_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		return bad_usage("unknown command '%s'", argv[optind]);

	/* The rest: the command's options and global ones, in any order. */
	argc -= optind;
	argv += optind;
	snprintf(shortopts, sizeof(shortopts), ":%s%s", GLOBAL_SHORT, cmd->shortopts);
	optind = 0;	/* 0, not 1: GNU getopt starts afresh */
	while ((c = getopt_long(argc, argv, shortopts, cmd->opts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return option_error(c, argv, cmd->name);
		ret = take_option(&o, c, optarg, &done);
		if (ret || done)
			return ret;
	}
	if (o.count > 0 && !strcmp(cmd->name, "stats") && !o.watch_s)
		return bad_usage("stats: --count goes with --watch (-w SEC)");
	nargs = argc - optind;
	if (nargs < cmd->min_args)
		return bad_usage("'%s' needs an argument (wsectl %s %s)", cmd->name, cmd->name,
				 cmd->synopsis);
	if (nargs > cmd->max_args)
		return bad_usage("unexpected argument '%s' (wsectl %s %s)",
				 argv[optind + cmd->max_args], cmd->name, cmd->synopsis);
	return cmd->run(&o, nargs, argv + optind);
}
