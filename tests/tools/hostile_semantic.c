// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-hostile-peer --mode semantic: a device that lies about content, not
 * framing. It stands between a host and a real wsefwd (--upstream),
 * passes the handshake and every request through unchanged, and answers
 * some of the real requests wrongly with frames whose digests are all
 * good: wrong lengths, statuses, tags, queues and opcodes, answers sent
 * twice, dropped, or never asked for. The host must survive every one:
 * fail the request, count it, or close the link, and nothing else.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile_semantic.h"
#include "wse/link_addr.h"
#include "wse/link_io.h"
#include "wse/link_payloads.h"
#include "wse/splitmix64.h"

/* Frames of either side are read whole: the most a link may carry. */
#define FRAME_MAX	WSE_LINK_PAYLOAD_LIMIT
/* How long a read waits before it looks whether the other side ended. */
#define POLL_MS		200
/* Requests remembered, to answer one with another's tag. */
#define RECENT		64

static const char *const kind_names[SEM_COUNT] = {
	[SEM_STATUS] = "error-status", [SEM_SHORT] = "short-data",
	[SEM_LONG] = "long-data", [SEM_TAG_OTHER] = "other-tag",
	[SEM_TAG_UNISSUED] = "unissued-tag", [SEM_OPCODE] = "wrong-opcode",
	[SEM_QUEUE] = "wrong-queue", [SEM_DUPLICATE] = "duplicate",
	[SEM_DROP] = "dropped", [SEM_KEEPALIVE] = "unasked-keepalive",
	[SEM_REQUEST] = "device-request",
};

const char *semantic_kind_name(enum semantic_kind k)
{
	return k < SEM_COUNT ? kind_names[k] : "?";
}

/* One relayed connection: the two sockets and what both threads share. */
struct relay {
	int host, fw;
	const struct semantic_opts *o;
	struct semantic_stats *st;
	uint64_t rng;
	pthread_mutex_t lock;	/* @recent, @nrecent, @done, @st, @rng */
	struct wse_link_frame recent[RECENT];
	unsigned int nrecent;
	bool done;
};

static bool relay_done(struct relay *r)
{
	bool done;

	pthread_mutex_lock(&r->lock);
	done = r->done;
	pthread_mutex_unlock(&r->lock);
	return done;
}

static void relay_end(struct relay *r)
{
	pthread_mutex_lock(&r->lock);
	r->done = true;
	pthread_mutex_unlock(&r->lock);
	/* Wake the other thread's read. */
	shutdown(r->host, SHUT_RDWR);
	shutdown(r->fw, SHUT_RDWR);
}

/*
 * Reads one whole frame from @fd into @buf, waiting as long as the other
 * side goes on. Returns 0, or -1 at EOF, on an error or when the relay
 * ended.
 */
static int read_frame(struct relay *r, int fd, struct wse_link_frame *f, uint8_t *buf)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = FRAME_MAX };
	struct wse_link_err err;
	int ret;

	for (;;) {
		ret = wse_link_recv(fd, &rules, f, buf, FRAME_MAX, POLL_MS, &err);
		if (!ret)
			return 0;
		if (ret != -ETIMEDOUT || relay_done(r) || *r->o->stop)
			return -1;
	}
}

static int send_frame(int fd, struct wse_link_frame *f, const void *p, size_t len)
{
	struct iovec iov = { (void *)p, len };
	struct wse_link_err err;

	return wse_link_send(fd, f, &iov, len ? 1 : 0, 10000, &err);
}

/* Host to firmware: unchanged, remembering each request. */
static void *host_to_fw(void *arg)
{
	struct relay *r = arg;
	struct wse_link_frame f;
	uint8_t *buf = malloc(FRAME_MAX);

	while (buf && !read_frame(r, r->host, &f, buf)) {
		if (!(f.flags & WSE_LINK_F_RESPONSE)) {
			pthread_mutex_lock(&r->lock);
			r->recent[r->nrecent++ % RECENT] = f;
			pthread_mutex_unlock(&r->lock);
		}
		if (send_frame(r->fw, &f, buf, f.length))
			break;
	}
	free(buf);
	relay_end(r);
	return NULL;
}

/* The kind of lie for this answer, or SEM_COUNT to tell the truth. */
static enum semantic_kind pick(struct relay *r)
{
	uint64_t x;
	int n = 0, k, choice;

	pthread_mutex_lock(&r->lock);
	x = wse_splitmix64(&r->rng);
	pthread_mutex_unlock(&r->lock);
	if (x % r->o->every)
		return SEM_COUNT;
	for (k = 0; k < SEM_COUNT; k++)
		n += r->o->kinds[k];
	choice = (int)((x / r->o->every) % (uint64_t)n);
	for (k = 0; k < SEM_COUNT; k++)
		if (r->o->kinds[k] && !choice--)
			break;
	return k;
}

/* A request of the host's other than @tag, if one is remembered. */
static bool other_request(struct relay *r, uint32_t tag, struct wse_link_frame *out)
{
	bool found = false;

	pthread_mutex_lock(&r->lock);
	for (unsigned int i = 0; i < RECENT && i < r->nrecent; i++) {
		const struct wse_link_frame *f = &r->recent[(r->nrecent - 1 - i) % RECENT];

		if (f->tag != tag && f->tag) {
			*out = *f;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return found;
}

/*
 * Sends @f (a response from the firmware, @len bytes at @p) to the host,
 * told wrongly in the way @k says. Returns what the send returned.
 */
static int lie(struct relay *r, enum semantic_kind k, struct wse_link_frame *f, uint8_t *p,
	       uint32_t len)
{
	struct wse_link_frame g = *f;
	struct wse_link_status st;
	uint8_t text[64];
	int ret;

	switch (k) {
	case SEM_STATUS: {
		static const uint32_t codes[] = { WSE_LINK_E_INVAL, WSE_LINK_E_RANGE,
						  WSE_LINK_E_INTERNAL, WSE_LINK_E_DATA_CRC, 77 };

		wse_link_status_encode(&st, codes[f->tag % 5]);
		memcpy(text, &st, sizeof(st));
		memcpy(text + sizeof(st), "lied about", 10);
		return send_frame(r->host, &g, text, sizeof(st) + 10);
	}
	case SEM_SHORT:
		return send_frame(r->host, &g, p, len > sizeof(st) ? sizeof(st) + (len - sizeof(st)) / 2 : len);
	case SEM_LONG:
		/* p has room: frames are read into FRAME_MAX bytes. */
		memset(p + len, 0xa5, 4096);
		return send_frame(r->host, &g, p, len + 4096 > FRAME_MAX ? len : len + 4096);
	case SEM_TAG_OTHER: {
		struct wse_link_frame o;

		if (other_request(r, f->tag, &o))
			g.tag = o.tag;
		ret = send_frame(r->host, &g, p, len);
		g.tag = f->tag;
		return ret ?: send_frame(r->host, &g, p, len);
	}
	case SEM_TAG_UNISSUED:
		g.tag = 0x7fffff00u + (f->tag & 0xff);
		return send_frame(r->host, &g, p, len);
	case SEM_OPCODE:
		g.opcode = f->opcode == WSE_LINK_OP_MEM_READ ? WSE_LINK_OP_MEM_WRITE
							     : WSE_LINK_OP_MEM_READ;
		return send_frame(r->host, &g, p, len);
	case SEM_QUEUE:
		g.queue = (uint16_t)(f->queue + 1);
		return send_frame(r->host, &g, p, len);
	case SEM_DUPLICATE:
		ret = send_frame(r->host, &g, p, len);
		return ret ?: send_frame(r->host, &g, p, len);
	case SEM_DROP:
		return 0;
	case SEM_KEEPALIVE:
		g.opcode = WSE_LINK_OP_KEEPALIVE;
		g.tag = 0;
		g.queue = 0;
		wse_link_status_encode(&st, WSE_LINK_OK);
		ret = send_frame(r->host, &g, &st, sizeof(st));
		return ret ?: send_frame(r->host, f, p, len);
	case SEM_REQUEST:
		g.flags = 0;
		g.opcode = WSE_LINK_OP_MEM_WRITE;
		ret = send_frame(r->host, &g, p, len);
		return ret ?: send_frame(r->host, f, p, len);
	default:
		return send_frame(r->host, f, p, len);
	}
}

/* Firmware to host: the handshake as it is, then some answers wrong. */
static void *fw_to_host(void *arg)
{
	struct relay *r = arg;
	struct wse_link_frame f;
	uint8_t *buf = malloc(FRAME_MAX + 4096);
	bool hello_seen = false;
	enum semantic_kind k;

	while (buf && !read_frame(r, r->fw, &f, buf)) {
		k = SEM_COUNT;
		/* Only answers to the host's requests, after the handshake. */
		if (hello_seen && (f.flags & WSE_LINK_F_RESPONSE) && f.tag)
			k = pick(r);
		hello_seen |= f.opcode == WSE_LINK_OP_HELLO;
		if (lie(r, k, &f, buf, f.length))
			break;
		pthread_mutex_lock(&r->lock);
		r->st->frames++;
		if (k < SEM_COUNT) {
			r->st->mutated++;
			r->st->per_kind[k]++;
		}
		pthread_mutex_unlock(&r->lock);
		if (r->st->mutated >= r->o->limit)
			break;
	}
	free(buf);
	relay_end(r);
	return NULL;
}

int semantic_serve(int host, const struct semantic_opts *o, uint64_t *rng,
		   struct semantic_stats *st)
{
	struct wse_link_addr addr;
	struct relay r = { .host = host, .o = o, .st = st };
	char err[256];
	pthread_t a, b;

	if (wse_link_addr_parse(o->upstream, &addr, err, sizeof(err)))
		return -EINVAL;
	r.fw = wse_link_connect(&addr, 5000, err, sizeof(err));
	if (r.fw < 0) {
		fprintf(stderr, "wse-hostile-peer: upstream %s: %s\n", o->upstream, err);
		return r.fw;
	}
	r.rng = wse_splitmix64(rng);
	pthread_mutex_init(&r.lock, NULL);
	if (pthread_create(&a, NULL, host_to_fw, &r)) {
		close(r.fw);
		return -errno;
	}
	if (pthread_create(&b, NULL, fw_to_host, &r)) {
		relay_end(&r);
		pthread_join(a, NULL);
		close(r.fw);
		return -errno;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_mutex_destroy(&r.lock);
	close(r.fw);
	return 0;
}

int semantic_parse_kinds(const char *list, bool *kinds)
{
	char buf[512], *save, *tok;
	int k, any = 0;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	memset(kinds, 0, sizeof(bool) * SEM_COUNT);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < SEM_COUNT && strcmp(tok, kind_names[k]); k++)
			;
		if (k == SEM_COUNT) {
			fprintf(stderr, "wse-hostile-peer: --semantic-kinds: '%s' is not a kind (see --help)\n",
				tok);
			return -1;
		}
		kinds[k] = true;
		any = 1;
	}
	return any ? 0 : -1;
}
