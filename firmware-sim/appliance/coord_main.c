// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coordinator's process (wse-appliance --role coordinator): its
 * options, its parts connected, and the user node's hosts served one at a
 * time; a second host meanwhile is told E_BUSY and closed, as a system
 * does, unless the first has left and is being tidied up after: then the
 * second waits for that.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "coord.h"
#include "roles.h"
#include "svc.h"
#include "wse/link_addr.h"
#include "wse/link_io.h"
#include "wse/numparse.h"
#include "wse/usage.h"

static struct coord coord;
static atomic_bool serving;
static char served_peer[128];

struct host {
	int fd;
};

static void *serve_main(void *arg)
{
	struct host *h = arg;

	coord_conn_serve(&coord, h->fd);
	close(h->fd);
	free(h);
	atomic_store(&serving, false);
	return NULL;
}

/*
 * The served host's link has ended and the coordinator is tidying up
 * after it (its workers, its programs on the systems): the next host
 * waits for that instead of being refused. A host that detaches and
 * attaches again at once (tests do) would otherwise find it busy.
 */
static bool host_leaving(void)
{
	bool leaving;

	pthread_mutex_lock(&coord.lock);
	leaving = coord.stopping;
	pthread_mutex_unlock(&coord.lock);
	return leaving;
}

/* A host while another is served: ERROR E_BUSY, as a device says it. */
static void refuse_busy(int fd)
{
	struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_ERROR };
	char text[200];
	uint8_t buf[256];
	struct iovec iov = { buf, 0 };
	struct wse_link_err err;

	snprintf(text, sizeof(text), "device already serves host %s", served_peer);
	iov.iov_len = wse_link_error_encode(buf, sizeof(buf), WSE_LINK_E_BUSY, text);
	wse_link_send(fd, &f, &iov, 1, 1000, &err);
	close(fd);
}

int coord_leaves_parse(const char *s, unsigned int *out)
{
	uint64_t v;

	if (wse_opt_u64(ROLE_PROG, "--leaves", s, 1, COORD_LEAVES_MAX, WSE_NUM_PLAIN, &v))
		return -1;
	if (v & (v - 1)) {
		fprintf(stderr, "%s: --leaves %s: a power of two (1, 2, 4, ... %u), so that shards are subtrees\n",
			ROLE_PROG, s, COORD_LEAVES_MAX);
		return -1;
	}
	if (out)
		*out = (unsigned int)v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wse-appliance --role coordinator --listen ADDR --system ADDR...\n"
"                     --memoryx ADDR --swarmx ADDR --input ADDR\n"
"                     [--max-program BYTES] [--memoryx-capacity BYTES]\n"
"                     [--hello-timeout-ms MS] [--no-regions] [--leaves N]\n"
"                     [--port-file FILE]\n"
"                     [--log-level LEVEL]\n"
"\n"
"The coordinator: the device a user node attaches (wsectl attach ADDR), the\n"
"host of every system's link (--system, once per system, in order) and of\n"
"MemoryX's, SwarmX's and the input workers'. The systems' data go through\n"
"shared memory when they are on this machine; --no-regions sends them in\n"
"frames, as to systems on other machines. A weight-streaming batch is cut\n"
"into at least --leaves micro-batches (default 8). wse-appliance starts it; see\n"
"Documentation/wse-appliance.rst.\n");
}

static int parse(int argc, char **argv, struct coord_opts *o)
{
	static const struct option lo[] = {
		ROLE_COMMON_OPTIONS,
		{ "system", required_argument, NULL, 's' },
		{ "memoryx", required_argument, NULL, 'm' },
		{ "swarmx", required_argument, NULL, 'x' },
		{ "input", required_argument, NULL, 'i' },
		{ "max-program", required_argument, NULL, 'P' },
		{ "memoryx-capacity", required_argument, NULL, 'C' },
		{ "hello-timeout-ms", required_argument, NULL, 'H' },
		{ "no-regions", no_argument, NULL, 'R' },
		{ "leaves", required_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	struct role_opts ro = { 0 };
	uint64_t v;
	int c, ret;

	*o = (struct coord_opts){ .max_program = 256ULL << 20, .memoryx_capacity = 4ULL << 30,
				  .hello_timeout_ms = 10000, .leaves = COORD_LEAVES };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		ret = role_common_option(c, optarg, &ro);
		if (ret < 0)
			return -1;
		if (ret)
			continue;
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case 's':
			if (o->systems == COORD_SYSTEMS_MAX) {
				fprintf(stderr, "%s: at most %u --system\n", ROLE_PROG, COORD_SYSTEMS_MAX);
				return -1;
			}
			o->system[o->systems++] = optarg;
			break;
		case 'm':
			o->memoryx = optarg;
			break;
		case 'x':
			o->swarmx = optarg;
			break;
		case 'i':
			o->input = optarg;
			break;
		case 'P':
		case 'C':
			if (wse_opt_u64(ROLE_PROG, c == 'P' ? "--max-program" : "--memoryx-capacity",
					optarg, 4096, 1ULL << 50, WSE_NUM_BINARY, &v))
				return -1;
			*(c == 'P' ? &o->max_program : &o->memoryx_capacity) = v;
			break;
		case 'R':
			o->no_regions = true;
			break;
		case 'E':
			if (coord_leaves_parse(optarg, &o->leaves))
				return -1;
			break;
		case 'H':
			if (wse_opt_u64(ROLE_PROG, "--hello-timeout-ms", optarg, 1, 3600000,
					WSE_NUM_PLAIN, &v))
				return -1;
			o->hello_timeout_ms = (int)v;
			break;
		default:
			wse_usage_bad_option(ROLE_PROG, argv, optind, optopt);
			return -1;
		}
	}
	o->listen = ro.listen;
	o->port_file = ro.port_file;
	if (!o->listen || !o->systems || !o->memoryx || !o->swarmx || !o->input) {
		fprintf(stderr, "%s: the coordinator needs --listen, at least one --system, --memoryx, --swarmx and --input\n",
			ROLE_PROG);
		return -1;
	}
	return 0;
}

int coordinator_main(int argc, char **argv)
{
	struct role_opts ro;
	pthread_t server;
	bool have_server = false;
	int fd, ret;

	ret = parse(argc, argv, &coord.o);
	if (ret)
		return ret > 0 ? 0 : 2;
	pthread_mutex_init(&coord.lock, NULL);
	pthread_mutex_init(&coord.parts_lock, NULL);
	pthread_mutex_init(&coord.setup_lock, NULL);
	pthread_cond_init(&coord.changed, NULL);
	pthread_cond_init(&coord.input_cond, NULL);
	pthread_cond_init(&coord.update_cond, NULL);
	pthread_cond_init(&coord.output_cond, NULL);
	ro = (struct role_opts){ .listen = coord.o.listen, .port_file = coord.o.port_file };
	fwd_log_set_name("wse-coordinator");
	svc_catch_signals();
	if (coord_parts_start(&coord))
		return 1;
	fd = role_listen(&ro, "coordinator", "wse-coordinator");
	if (fd < 0) {
		coord_parts_stop(&coord);
		return 1;
	}
	fwd_info("appliance of %u system%s, wafer %ux%u", coord.nsys, coord.nsys == 1 ? "" : "s",
		 coord.sys[0].dev.wafer_width, coord.sys[0].dev.wafer_height);
	while (!svc_stopping()) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct host *h;
		int cfd;

		if (poll(&p, 1, 500) <= 0)
			continue;
		cfd = accept(fd, NULL, NULL);
		if (cfd < 0)
			continue;
		if (atomic_load(&serving) && !host_leaving()) {
			refuse_busy(cfd);
			continue;
		}
		if (have_server)
			pthread_join(server, NULL);
		have_server = false;
		h = malloc(sizeof(*h));
		if (!h) {
			close(cfd);
			continue;
		}
		h->fd = cfd;
		wse_link_peer_name(cfd, served_peer, sizeof(served_peer));
		atomic_store(&serving, true);
		if (pthread_create(&server, NULL, serve_main, h)) {
			atomic_store(&serving, false);
			close(cfd);
			free(h);
			continue;
		}
		have_server = true;
	}
	if (have_server)
		pthread_join(server, NULL);
	coord_parts_stop(&coord);
	close(fd);
	fwd_info("stopping");
	return 0;
}
