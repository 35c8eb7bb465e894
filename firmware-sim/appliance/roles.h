/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The processes of an appliance (Documentation/wse-appliance.rst), one
 * binary, wse-appliance: with --role it is one of the parts, without it
 * the launcher that starts and watches them all.
 */
#ifndef APPLIANCE_ROLES_H
#define APPLIANCE_ROLES_H

#include <stdio.h>

int launcher_main(int argc, char **argv);
int coordinator_main(int argc, char **argv);
int memoryx_main(int argc, char **argv);
int swarmx_main(int argc, char **argv);
int input_main(int argc, char **argv);

/*
 * A role's common options (--listen, --port-file, --log-level) and its
 * own, parsed with getopt_long; see each role's usage.
 */
struct role_opts {
	const char *listen;
	const char *port_file;
};

#define ROLE_PROG	"wse-appliance"

/* The options every role takes, for its getopt_long table. */
#define ROLE_COMMON_OPTIONS \
	{ "listen", required_argument, NULL, 'l' }, \
	{ "port-file", required_argument, NULL, 'p' }, \
	{ "log-level", required_argument, NULL, 'L' }, \
	{ "role", required_argument, NULL, 'r' }, \
	{ "help", no_argument, NULL, 'h' }

/* A common option @c: 1 taken, 0 not one of them, -1 a bad value (said on stderr). */
int role_common_option(int c, const char *arg, struct role_opts *o);
/*
 * What a service role does once its options are read: names its log
 * lines, catches SIGTERM, listens. Returns the listening fd, or -1 (said).
 */
int role_listen(const struct role_opts *o, const char *role, const char *logname);

/* A service part (MemoryX, SwarmX, the input worker): its options, then svc_serve(). */
struct svc_ops;
struct option;
struct role_service {
	const char *role, *logname;		/* "memoryx", "wse-memoryx" */
	const struct option *options;		/* ROLE_COMMON_OPTIONS and its own */
	void (*usage)(FILE *f);
	/* Its own option @c: 0 taken, 1 a bad value (said), -1 not one of its. */
	int (*option)(struct role_service *rs, int c, const char *arg);
	/* Once the options are read, before it listens: 0, or it said why not. */
	int (*start)(void *ctx);
	struct svc_ops *ops;
	void *ctx;
	void (*drop)(void *ctx);		/* after serving: what it holds goes */
};
/* Parses the options, listens and serves; returns the exit status. */
int role_service_main(struct role_service *rs, int argc, char **argv);

#endif /* APPLIANCE_ROLES_H */
