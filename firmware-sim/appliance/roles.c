// SPDX-License-Identifier: GPL-2.0-only
/* What every role of wse-appliance shares: its common options and start (roles.h). */
#include <stdio.h>
#include <getopt.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "roles.h"
#include "svc.h"
#include "wse/usage.h"

int role_common_option(int c, const char *arg, struct role_opts *o)
{
	int level;

	switch (c) {
	case 'l':
		o->listen = arg;
		return 1;
	case 'p':
		o->port_file = arg;
		return 1;
	case 'r':
		return 1;	/* already chosen */
	case 'L':
		level = fwd_log_parse_level(arg);
		if (level < 0) {
			fprintf(stderr, "%s: --log-level '%s': error, warn, info or debug\n",
				ROLE_PROG, arg);
			return -1;
		}
		fwd_log_set_level(level);
		return 1;
	}
	return 0;
}

int role_listen(const struct role_opts *o, const char *role, const char *logname)
{
	int fd;

	fwd_log_set_name(logname);
	if (!o->listen) {
		fprintf(stderr, "%s: the %s role needs --listen ADDR\n", ROLE_PROG, role);
		return -1;
	}
	svc_catch_signals();
	fd = svc_listen(o->listen, o->port_file);
	return fd < 0 ? -1 : fd;
}

int role_service_main(struct role_service *rs, int argc, char **argv)
{
	struct role_opts o = { 0 };
	int c, fd, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", rs->options, NULL)) != -1) {
		if (c == '?')
			return wse_usage_bad_option(ROLE_PROG, argv, optind, optopt);
		ret = role_common_option(c, optarg, &o);
		if (ret < 0)
			return wse_usage_hint(ROLE_PROG);
		if (ret)
			continue;
		if (c == 'h') {
			rs->usage(stdout);
			return 0;
		}
		ret = rs->option ? rs->option(rs, c, optarg) : -1;
		/* -1: not the role's option; 1: it said what was wrong with the value. */
		if (ret < 0)
			return wse_usage_bad_option(ROLE_PROG, argv, optind, optopt);
		if (ret)
			return wse_usage_hint(ROLE_PROG);
	}
	if (rs->start && rs->start(rs->ctx))
		return 1;
	fd = role_listen(&o, rs->role, rs->logname);
	if (fd < 0)
		return o.listen ? 1 : 2;
	ret = svc_serve(rs->ops, rs->ctx, fd);
	rs->drop(rs->ctx);
	close(fd);
	return ret;
}
