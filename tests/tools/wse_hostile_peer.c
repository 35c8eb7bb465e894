// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-hostile-peer: a device that lies. It listens on an address, accepts
 * hosts one after another (up to a bound) and feeds each malformed or random
 * frames, seeded and bounded in count and time, to exercise the host's
 * validation (the kernel driver's, from a selftest in the QEMU guest).
 *
 * Modes: after-hello answers HELLO correctly and then misbehaves; handshake
 * misbehaves in the HELLO reply itself; mixed picks per connection. Since a
 * correct host closes the link on the first violation, one connection
 * normally carries one bad frame and the peer accepts the next connection.
 * semantic relays a real firmware and lies about content with good
 * digests (hostile_semantic.c).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wse/link_payloads.h"
#include "wse/link_io.h"
#include "wse/link_addr.h"
#include "wse/link_malform.h"
#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse/splitmix64.h"

#include "hostile_semantic.h"

enum mode { MODE_AFTER_HELLO, MODE_HANDSHAKE, MODE_MIXED, MODE_SEMANTIC };

/* Ways to spoil the HELLO reply beyond the generic malformed frames. */
enum hello_bad {
	HB_SHORT_BODY,
	HB_VERSION_OUTSIDE,
	HB_ZERO_QUEUES,
	HB_SMALL_PAYLOAD,
	HB_SRAM_MISMATCH,
	HB_EMPTY_WAFER,
	HB_WRONG_TAG,
	HB_NOT_RESPONSE,
	HB_WRONG_OPCODE,
	HB_ERROR_FRAME,
	HB_GENERIC,		/* one of the generic malformed frames */
	HB_COUNT
};

static const char *const hello_bad_names[HB_COUNT] = {
	"hello-short-body", "hello-version-outside", "hello-zero-queues",
	"hello-small-payload", "hello-sram-mismatch", "hello-empty-wafer",
	"hello-wrong-tag", "hello-not-response", "hello-wrong-opcode",
	"hello-error-frame", "hello-generic",
};

struct options {
	const char *listen;
	const char *port_file;
	long frames;
	long connections;
	long per_connection;
	enum mode mode;
	bool kinds[WSE_LINK_MAL_COUNT];
	bool hello_kinds[HB_COUNT];
	uint64_t seed;
	int time_limit_s;
	int accept_timeout_ms;
	int close_wait_ms;
	int request_wait_ms;
	bool expect_close;
	bool verbose;
	struct semantic_opts sem;
};

struct stats {
	long connections;
	long frames;
	long host_closed;
	long host_error_frames;
	long left_open;
	long bad_hello;
	long per_kind[WSE_LINK_MAL_COUNT];
	long per_hello_bad[HB_COUNT];
};

static void usage(FILE *out)
{
	fprintf(out,
"usage: wse-hostile-peer --listen tcp:HOST:PORT|unix:PATH [options]\n"
"\n"
"Pretends to be a wse device and sends malformed and random frames to each\n"
"host that connects, to test the host's frame validation.\n"
"\n"
"  --listen ADDR          where to listen (required); tcp port 0 picks a port\n"
"  --port-file FILE       write the TCP port chosen to FILE\n"
"  --frames N             bad frames to send in all (default 1000)\n"
"  --connections N        connections to accept at most (default 1000)\n"
"  --per-connection N     bad frames per connection (default 1)\n"
"  --mode MODE            after-hello (default), handshake, mixed, or semantic:\n"
"                         relay a real firmware (--upstream) and answer some\n"
"                         of the host's requests wrongly, with good digests\n"
"  --upstream ADDR        semantic: the firmware to relay (wsefwd's address)\n"
"  --mutate-every N       semantic: lie about one answer in N (default 8)\n"
"  --mutations N          semantic: lies in all, over every connection\n"
"                         (default 1000); --frames does not apply\n"
"  --semantic-kinds K,... semantic: which lies (default all): error-status,\n"
"                         short-data, long-data, other-tag, unissued-tag,\n"
"                         wrong-opcode, wrong-queue, duplicate, dropped,\n"
"                         unasked-keepalive, device-request\n"
"  --kinds K1,K2,...      generic kinds to use (default all):\n"
"                         ");
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		fprintf(out, "%s%s", wse_link_malform_name(k),
			k + 1 < WSE_LINK_MAL_COUNT ? (k % 4 == 3 ? ",\n                         " : ", ") : "\n");
	fprintf(out,
"  --hello-kinds K1,...   HELLO-reply spoilers for handshake mode (default\n"
"                         all; listed below)\n"
"  --seed N               random seed (default 1); the run is reproducible\n"
"  --time-limit SEC       stop after SEC seconds in all (default 60)\n"
"  --accept-timeout-ms MS stop when no host connects for MS (default 10000)\n"
"  --close-wait-ms MS     how long a host may take to close after a bad\n"
"                         frame (default 2000)\n"
"  --request-wait-ms MS   after HELLO, wait this long for a host request to\n"
"                         answer badly (default 100); else send unsolicited\n"
"  --expect-close         exit 1 if a host kept a link open after a frame it\n"
"                         had to reject\n"
"  --verbose              one line per frame sent\n"
"  --help\n"
"\n"
"Handshake mode spoils the HELLO reply in one of these ways:\n  ");
	for (int k = 0; k < HB_COUNT; k++)
		fprintf(out, "%s%s", hello_bad_names[k], k + 1 < HB_COUNT ? (k % 3 == 2 ? ",\n  " : ", ") : ".\n");
	fprintf(out,
"\n"
"Exit status: 0 done, 1 no host came or (with --expect-close) a host did not\n"
"close a link it should have, 2 usage.\n");
}

/* The value of number option @opt: 0, or -1 once the parser said what was wrong. */
static int number(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	return wse_opt_u64("wse-hostile-peer", opt, s, min, max, WSE_NUM_PLAIN, v) ? -1 : 0;
}

static int parse_kinds(const char *list, bool *kinds)
{
	char buf[512], *save, *tok;

	if (strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "wse-hostile-peer: --kinds list too long\n");
		return -1;
	}
	strcpy(buf, list);
	memset(kinds, 0, sizeof(bool) * WSE_LINK_MAL_COUNT);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = wse_link_malform_parse(tok);

		if (k < 0) {
			fprintf(stderr, "wse-hostile-peer: --kinds: '%s' is not a kind (see --help)\n", tok);
			return -1;
		}
		kinds[k] = true;
	}
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		if (kinds[k])
			return 0;
	fprintf(stderr, "wse-hostile-peer: --kinds names no kind (see --help)\n");
	return -1;
}

static int parse_hello_kinds(const char *list, bool *kinds)
{
	char buf[512], *save, *tok;
	int k;

	if (strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "wse-hostile-peer: --hello-kinds list too long\n");
		return -1;
	}
	strcpy(buf, list);
	memset(kinds, 0, sizeof(bool) * HB_COUNT);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < HB_COUNT && strcmp(tok, hello_bad_names[k]); k++)
			;
		if (k == HB_COUNT) {
			fprintf(stderr, "wse-hostile-peer: --hello-kinds: '%s' is not a kind (see --help)\n",
				tok);
			return -1;
		}
		kinds[k] = true;
	}
	for (k = 0; k < HB_COUNT; k++)
		if (kinds[k])
			return 0;
	fprintf(stderr, "wse-hostile-peer: --hello-kinds names no kind (see --help)\n");
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port-file", required_argument, NULL, 'P' },
		{ "frames", required_argument, NULL, 'f' },
		{ "connections", required_argument, NULL, 'c' },
		{ "per-connection", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "hello-kinds", required_argument, NULL, 'H' },
		{ "seed", required_argument, NULL, 's' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "accept-timeout-ms", required_argument, NULL, 'a' },
		{ "close-wait-ms", required_argument, NULL, 'w' },
		{ "request-wait-ms", required_argument, NULL, 'r' },
		{ "expect-close", no_argument, NULL, 'e' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "upstream", required_argument, NULL, 'U' },
		{ "mutate-every", required_argument, NULL, 'E' },
		{ "mutations", required_argument, NULL, 'M' },
		{ "semantic-kinds", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int opt;

	memset(o, 0, sizeof(*o));
	o->frames = 1000;
	o->connections = 1000;
	o->per_connection = 1;
	o->seed = 1;
	o->time_limit_s = 60;
	o->accept_timeout_ms = 10000;
	o->close_wait_ms = 2000;
	o->request_wait_ms = 100;
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		o->kinds[k] = true;
	for (int k = 0; k < HB_COUNT; k++)
		o->hello_kinds[k] = true;
	o->sem.every = 8;
	o->sem.limit = 1000;
	for (int k = 0; k < SEM_COUNT; k++)
		o->sem.kinds[k] = true;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'l': o->listen = optarg; break;
		case 'P': o->port_file = optarg; break;
		case 'f': if (number("--frames", optarg, 1, 10000000, &v)) return -1; o->frames = (long)v; break;
		case 'c': if (number("--connections", optarg, 1, 1000000, &v)) return -1; o->connections = (long)v; break;
		case 'p': if (number("--per-connection", optarg, 1, 100000, &v)) return -1; o->per_connection = (long)v; break;
		case 'm':
			if (!strcmp(optarg, "after-hello"))
				o->mode = MODE_AFTER_HELLO;
			else if (!strcmp(optarg, "handshake"))
				o->mode = MODE_HANDSHAKE;
			else if (!strcmp(optarg, "mixed"))
				o->mode = MODE_MIXED;
			else if (!strcmp(optarg, "semantic"))
				o->mode = MODE_SEMANTIC;
			else {
				fprintf(stderr, "wse-hostile-peer: --mode '%s': use after-hello, handshake, mixed or semantic\n", optarg);
				return -1;
			}
			break;
		case 'k': if (parse_kinds(optarg, o->kinds)) return -1; break;
		case 'H': if (parse_hello_kinds(optarg, o->hello_kinds)) return -1; break;
		case 's':
			if (number("--seed", optarg, 0, UINT64_MAX, &o->seed))
				return -1;
			break;
		case 't': if (number("--time-limit", optarg, 1, 86400, &v)) return -1; o->time_limit_s = (int)v; break;
		case 'a': if (number("--accept-timeout-ms", optarg, 1, 3600000, &v)) return -1; o->accept_timeout_ms = (int)v; break;
		case 'w': if (number("--close-wait-ms", optarg, 1, 600000, &v)) return -1; o->close_wait_ms = (int)v; break;
		case 'r': if (number("--request-wait-ms", optarg, 0, 600000, &v)) return -1; o->request_wait_ms = (int)v; break;
		case 'e': o->expect_close = true; break;
		case 'v': o->verbose = true; break;
		case 'U': o->sem.upstream = optarg; break;
		case 'E': if (number("--mutate-every", optarg, 1, 1000000, &o->sem.every)) return -1; break;
		case 'M': if (number("--mutations", optarg, 1, 100000000, &v)) return -1; o->sem.limit = (long)v; break;
		case 'K': if (semantic_parse_kinds(optarg, o->sem.kinds)) return -1; break;
		case 'h': usage(stdout); return 1;
		default:
			fprintf(stderr, "wse-hostile-peer: bad option '%s' (see --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (!o->listen || optind < argc) {
		fprintf(stderr, "wse-hostile-peer: give --listen ADDR and no other arguments (see --help)\n");
		return -1;
	}
	if ((o->mode == MODE_SEMANTIC) != !!o->sem.upstream) {
		fprintf(stderr, "wse-hostile-peer: --upstream goes with --mode semantic, and it needs one\n");
		return -1;
	}
	return 0;
}

static enum wse_link_malform pick_kind(const struct options *o, uint64_t *rng)
{
	int n = 0, choice;

	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		n += o->kinds[k];
	choice = (int)(wse_splitmix64(rng) % (uint64_t)n);
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		if (o->kinds[k] && choice-- == 0)
			return (enum wse_link_malform)k;
	return WSE_LINK_MAL_RANDOM;
}

static enum hello_bad pick_hello_kind(const struct options *o, uint64_t *rng)
{
	int n = 0, choice;

	for (int k = 0; k < HB_COUNT; k++)
		n += o->hello_kinds[k];
	choice = (int)(wse_splitmix64(rng) % (uint64_t)n);
	for (int k = 0; k < HB_COUNT; k++)
		if (o->hello_kinds[k] && choice-- == 0)
			return (enum hello_bad)k;
	return HB_GENERIC;
}

static void peer_device(struct wse_link_device_info *d, uint16_t version, uint32_t max_payload)
{
	memset(d, 0, sizeof(*d));
	d->version = version;
	d->caps = WSE_LINK_CAP_MEM;
	d->max_payload = max_payload;
	d->version_min = WSE_LINK_VERSION_MIN;
	d->version_max = WSE_LINK_VERSION_MAX;
	d->device_id = 0xbadbadbadULL;
	d->wafer_width = 8;
	d->wafer_height = 8;
	d->sram_per_pe = 48 * 1024;
	d->sram_total = 64ULL * 48 * 1024;
	d->clock_khz = 850000;
	d->num_queues = 2;
	snprintf(d->fw_version, sizeof(d->fw_version), "wse-hostile-peer");
}

/* Sends a HELLO response: status, then @body of @body_len bytes. */
static int send_hello_response(int fd, const struct wse_link_frame *hello, uint8_t opcode,
			       uint16_t flags, uint32_t tag, uint32_t status,
			       const void *body, size_t body_len)
{
	struct wse_link_frame f = {
		.version = WSE_LINK_VERSION_MIN, .opcode = opcode, .flags = flags,
		.queue = hello->queue, .tag = tag,
	};
	struct wse_link_status st;
	struct iovec iov[2] = { { &st, sizeof(st) }, { (void *)body, body_len } };
	struct wse_link_err err;

	wse_link_status_encode(&st, status);
	return wse_link_send(fd, &f, iov, 2, 2000, &err);
}

/* Waits for the host to close: returns true if it did, counting an ERROR. */
static bool await_close(int fd, int ms, struct stats *st)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = WSE_LINK_PAYLOAD_LIMIT };
	int64_t end = wse_link_now_ms() + ms;
	static uint8_t buf[1 << 16];

	for (int frames = 0; frames < 64; frames++) {
		struct wse_link_frame f;
		struct wse_link_err err;
		int64_t left = end - wse_link_now_ms();
		int ret;

		if (left <= 0)
			return false;
		ret = wse_link_recv(fd, &rules, &f, buf, sizeof(buf), (int)left, &err);
		if (ret == -ETIMEDOUT)
			return false;
		if (ret && err.check == WSE_LINK_CHECK_IO)
			return true;		/* EOF or reset */
		if (ret)
			break;			/* not a frame: just wait for EOF */
		if (f.opcode == WSE_LINK_OP_ERROR)
			st->host_error_frames++;
	}
	/* Drain whatever else arrives until EOF or the deadline. */
	while (wse_link_now_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)(end - wse_link_now_ms())) <= 0)
			return false;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}

/* Spoils the HELLO reply. Returns true when the host must close. */
static bool bad_hello_reply(int fd, const struct options *o, const struct wse_link_frame *hello,
			    const struct wse_link_hello_info *hi, uint64_t *rng, struct stats *st)
{
	enum hello_bad how = pick_hello_kind(o, rng);
	struct wse_link_hello_reply raw;
	struct wse_link_device_info d;
	uint8_t buf[WSE_LINK_MALFORM_MAX];
	uint32_t max = hi->max_payload < (64U << 10) ? hi->max_payload : (64U << 10);
	bool close_after = false, must_close = true;
	size_t n;

	peer_device(&d, 1, max);
	switch (how) {
	case HB_VERSION_OUTSIDE:
		d.version = 9;
		d.version_min = 9;
		d.version_max = 9;
		break;
	case HB_ZERO_QUEUES:
		d.num_queues = 0;
		break;
	case HB_SMALL_PAYLOAD:
		d.max_payload = WSE_LINK_PAYLOAD_MIN - 1;
		break;
	case HB_SRAM_MISMATCH:
		d.sram_total++;
		break;
	case HB_EMPTY_WAFER:
		d.wafer_width = 0;
		d.sram_total = 0;
		break;
	default:
		break;
	}
	wse_link_hello_reply_encode(&raw, &d);
	st->per_hello_bad[how]++;
	if (o->verbose)
		printf("conn %ld: %s\n", st->connections, hello_bad_names[how]);
	switch (how) {
	case HB_SHORT_BODY:
		send_hello_response(fd, hello, WSE_LINK_OP_HELLO, WSE_LINK_F_RESPONSE, hello->tag,
				    WSE_LINK_OK, &raw, sizeof(raw) - 1 - wse_splitmix64(rng) % 40);
		break;
	case HB_WRONG_TAG:
		send_hello_response(fd, hello, WSE_LINK_OP_HELLO, WSE_LINK_F_RESPONSE,
				    hello->tag ^ 0x1000, WSE_LINK_OK, &raw, sizeof(raw));
		break;
	case HB_NOT_RESPONSE:
		send_hello_response(fd, hello, WSE_LINK_OP_HELLO, 0, hello->tag, WSE_LINK_OK,
				    &raw, sizeof(raw));
		break;
	case HB_WRONG_OPCODE:
		send_hello_response(fd, hello, WSE_LINK_OP_MEM_READ, WSE_LINK_F_RESPONSE,
				    hello->tag, WSE_LINK_OK, &raw, sizeof(raw));
		break;
	case HB_ERROR_FRAME: {
		struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_ERROR };
		struct wse_link_err err;
		struct iovec iov = { buf, 0 };

		iov.iov_len = wse_link_error_encode(buf, sizeof(buf), WSE_LINK_E_INTERNAL,
						    "hostile peer: the device failed");
		wse_link_send(fd, &f, &iov, 1, 2000, &err);
		break;
	}
	case HB_GENERIC: {
		enum wse_link_malform kind = pick_kind(o, rng);
		struct iovec iov = { buf, 0 };
		struct wse_link_err err;

		n = wse_link_malform_build(kind, rng, 1, WSE_LINK_OP_HELLO, hello->tag, buf,
					   &close_after);
		iov.iov_len = n;
		wse_link_write_all(fd, &iov, 1, wse_link_now_ms() + 2000, &err);
		st->per_kind[kind]++;
		must_close = !close_after && !(kind == WSE_LINK_MAL_RANDOM && n < WSE_LINK_HDR_SIZE);
		break;
	}
	default:
		send_hello_response(fd, hello, WSE_LINK_OP_HELLO, WSE_LINK_F_RESPONSE, hello->tag,
				    WSE_LINK_OK, &raw, sizeof(raw));
		break;
	}
	st->frames++;
	if (close_after)
		return false;
	return must_close;
}

/* After a good HELLO reply: bad frames. Returns true when the host must close. */
static bool bad_frames(int fd, const struct options *o, long count, uint8_t version,
		       uint64_t *rng, struct stats *st, bool *closed_by_us)
{
	struct wse_link_rx_rules rules = { .version = version, .max_payload = 64U << 10 };
	static uint8_t req_buf[64U << 10];
	bool must_close = false;

	for (long i = 0; i < count && st->frames < o->frames; i++) {
		uint8_t buf[WSE_LINK_MALFORM_MAX];
		uint8_t opcode = WSE_LINK_OP_KEEPALIVE;
		uint32_t tag = (uint32_t)wse_splitmix64(rng);
		struct wse_link_frame req;
		struct wse_link_err err;
		struct iovec iov = { buf, 0 };
		enum wse_link_malform kind;
		bool close_after;
		size_t n;

		/* Answer a real request badly if the host sends one soon. */
		if (o->request_wait_ms &&
		    !wse_link_recv(fd, &rules, &req, req_buf, sizeof(req_buf), o->request_wait_ms,
				   &err) && !(req.flags & WSE_LINK_F_RESPONSE)) {
			opcode = req.opcode;
			tag = req.tag;
		}
		kind = pick_kind(o, rng);
		n = wse_link_malform_build(kind, rng, version, opcode, tag, buf, &close_after);
		iov.iov_len = n;
		if (o->verbose)
			printf("conn %ld: %s (%zu bytes) for %s tag %u\n", st->connections,
			       wse_link_malform_name(kind), n, wse_link_op_name(opcode), tag);
		if (wse_link_write_all(fd, &iov, 1, wse_link_now_ms() + 2000, &err))
			return must_close;	/* the host already closed */
		st->frames++;
		st->per_kind[kind]++;
		if (close_after) {
			*closed_by_us = true;
			return false;
		}
		if (!(kind == WSE_LINK_MAL_RANDOM && n < WSE_LINK_HDR_SIZE))
			must_close = true;
	}
	return must_close;
}

static int serve_one(int fd, const struct options *o, uint64_t *rng, struct stats *st)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = WSE_LINK_PAYLOAD_MIN };
	struct wse_link_hello_info hi;
	struct wse_link_frame hello;
	struct wse_link_err err;
	uint8_t buf[WSE_LINK_PAYLOAD_MIN];
	bool handshake, must_close, closed_by_us = false;

	if (wse_link_recv(fd, &rules, &hello, buf, sizeof(buf), o->close_wait_ms, &err) ||
	    hello.opcode != WSE_LINK_OP_HELLO || (hello.flags & WSE_LINK_F_RESPONSE) ||
	    wse_link_hello_decode(buf, hello.length, &hi, &err)) {
		fprintf(stderr, "wse-hostile-peer: connection %ld: no valid HELLO from the host: %s\n",
			st->connections, err.text);
		st->bad_hello++;
		return 0;
	}
	handshake = o->mode == MODE_HANDSHAKE ||
		    (o->mode == MODE_MIXED && (wse_splitmix64(rng) & 1));
	if (handshake) {
		must_close = bad_hello_reply(fd, o, &hello, &hi, rng, st);
	} else {
		struct wse_link_hello_reply raw;
		struct wse_link_device_info d;
		uint32_t max = hi.max_payload < (64U << 10) ? hi.max_payload : (64U << 10);

		if (hi.version_min > WSE_LINK_VERSION_MAX || hi.version_max < WSE_LINK_VERSION_MIN) {
			fprintf(stderr, "wse-hostile-peer: host speaks versions %u..%u only\n",
				hi.version_min, hi.version_max);
			st->bad_hello++;
			return 0;
		}
		peer_device(&d, WSE_LINK_VERSION_MAX < hi.version_max ? WSE_LINK_VERSION_MAX
								       : hi.version_max, max);
		wse_link_hello_reply_encode(&raw, &d);
		if (send_hello_response(fd, &hello, WSE_LINK_OP_HELLO, WSE_LINK_F_RESPONSE,
					hello.tag, WSE_LINK_OK, &raw, sizeof(raw)))
			return 0;
		must_close = bad_frames(fd, o, o->per_connection, (uint8_t)d.version, rng, st,
					&closed_by_us);
	}
	if (closed_by_us)
		return 0;
	if (await_close(fd, o->close_wait_ms, st)) {
		st->host_closed++;
	} else if (must_close) {
		st->left_open++;
		fprintf(stderr, "wse-hostile-peer: connection %ld: the host kept the link open after a bad frame\n",
			st->connections);
	}
	return 0;
}

/* SIGINT or SIGTERM: finish the connection at hand, report, exit. */
static volatile int stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int write_port_file(const char *path, int port)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", port);
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct options o;
	struct stats st = { 0 };
	struct semantic_stats sem = { 0 };
	struct wse_link_addr addr;
	char err[256];
	int64_t end;
	uint64_t rng;
	int lfd, ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (wse_link_addr_parse(o.listen, &addr, err, sizeof(err))) {
		fprintf(stderr, "wse-hostile-peer: --listen %s\n", err);
		return 2;
	}
	lfd = wse_link_listen(&addr, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "wse-hostile-peer: %s\n", err);
		return 1;
	}
	if (o.port_file && !addr.is_unix &&
	    write_port_file(o.port_file, wse_link_local_port(lfd))) {
		fprintf(stderr, "wse-hostile-peer: cannot write %s: %s\n", o.port_file, strerror(errno));
		return 1;
	}
	rng = o.seed;
	end = wse_link_now_ms() + (int64_t)o.time_limit_s * 1000;
	o.sem.stop = &stop_requested;
	{
		struct sigaction sa = { .sa_handler = on_stop };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	while ((o.mode == MODE_SEMANTIC ? sem.mutated < o.sem.limit : st.frames < o.frames) &&
	       st.connections < o.connections) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int64_t left = end - wse_link_now_ms();
		int fd, n;

		if (left <= 0) {
			fprintf(stderr, "wse-hostile-peer: time limit of %d s reached\n", o.time_limit_s);
			break;
		}
		if (stop_requested)
			break;
		n = poll(&pfd, 1, left < o.accept_timeout_ms ? (int)left : o.accept_timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!st.connections)
				fprintf(stderr, "wse-hostile-peer: no host connected within %d ms\n",
					o.accept_timeout_ms);
			break;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		wse_link_tune_socket(fd);
		st.connections++;
		if (o.mode == MODE_SEMANTIC)
			semantic_serve(fd, &o.sem, &rng, &sem);
		else
			serve_one(fd, &o, &rng, &st);
		close(fd);
	}
	close(lfd);
	if (addr.is_unix)
		unlink(addr.path);

	if (o.mode == MODE_SEMANTIC) {
		printf("wse-hostile-peer: %ld frames relayed to hosts over %ld connections, %ld told wrongly (seed %llu)\n",
		       sem.frames, st.connections, sem.mutated, (unsigned long long)o.seed);
		for (int k = 0; k < SEM_COUNT; k++)
			if (sem.per_kind[k])
				printf("  %-22s %ld\n", semantic_kind_name(k), sem.per_kind[k]);
		fflush(stdout);
		return st.connections ? 0 : 1;
	}
	printf("wse-hostile-peer: %ld bad frames over %ld connections (seed %llu); host closed %ld links, sent ERROR %ld times; %ld links left open; %ld bad HELLOs from the host\n",
	       st.frames, st.connections, (unsigned long long)o.seed, st.host_closed,
	       st.host_error_frames, st.left_open, st.bad_hello);
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		if (st.per_kind[k])
			printf("  %-22s %ld\n", wse_link_malform_name(k), st.per_kind[k]);
	for (int k = 0; k < HB_COUNT; k++)
		if (st.per_hello_bad[k])
			printf("  %-22s %ld\n", hello_bad_names[k], st.per_hello_bad[k]);
	if (!st.connections)
		return 1;
	if (o.expect_close && st.left_open)
		return 1;
	return 0;
}
