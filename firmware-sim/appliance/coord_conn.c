// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user node's link to the coordinator: the device side of the link
 * protocol (Documentation/link-protocol.rst). The calling thread receives
 * every frame and checks it (libwselink), answers the link-level ones and
 * hands each execution request, copied, to a worker of its queue and of
 * the program (slot) it names, its lane: a lane carries its requests out
 * in order and may wait (a RUN, a read of losses not yet there) without
 * holding up the other queues, nor the other programs' requests on its
 * own queue, which are another user's as often as not (slot 0's and
 * those naming no slot form lane 0). A lane's worker is started when a
 * request comes and ends when none came for a while. As
 * wsefwd, it never stops reading for queued work: a request past
 * WSE_LINK_QUEUED_REQS queued or executing, or whose payload takes theirs
 * past WSE_LINK_QUEUED_BYTES, is refused (E_BUSY) as it arrives; CANCEL
 * takes a queued request back (E_CANCELED) or tells the worker carrying
 * it out, whose waits end (coord_cancelled()).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "coord.h"
#include "svc.h"
#include "wse/link_addr.h"
#include "wse/link_io.h"

#define FRAME_MS	10000	/* the rest of a frame once it began */
#define SEND_MS		WSE_LINK_SEND_MS
#define POLL_MS		500
#define LANES		COORD_SLOTS	/* a lane per slot of a queue */
#define LANE_IDLE_MS	5000	/* a lane's worker ends when no request came for so long */

struct coord_req {
	struct coord_req *next;
	struct coord_request r;
	uint8_t data[];
};

/* A lane: the requests of one queue naming one slot, and their worker. */
struct coord_queue {
	struct coord_conn *conn;
	uint16_t queue;
	struct coord_req *head, *tail;
	pthread_t thread;
	bool started;		/* a thread was started: it is joined */
	bool serving;		/* and has not ended */
	pthread_cond_t cond;	/* a request came, or the link is going */
	uint8_t *reply_buf;	/* the worker's: replies of programs on a system */
	/* The request the worker carries out, and whether the host cancelled it. */
	bool executing;
	bool cancel;
	uint32_t tag;
	/* Still counted in pending_*: until its answer goes (send_frame()). */
	bool counted;
	size_t length;
};

struct coord_conn {
	struct coord *c;
	int fd;
	char peer[128];
	struct wse_link_rx_rules rules;
	pthread_mutex_t tx_lock;
	bool send_failed;
	/* Under c->lock: */
	struct coord_queue q[COORD_QUEUES][LANES];
	uint32_t pending_reqs;
	uint64_t pending_bytes;
};

/* The queue whose worker this thread is (NULL on other threads). */
static _Thread_local struct coord_queue *self_queue;
static const bool never;

bool coord_cancelled(struct coord *c)
{
	return !c->stopping && self_queue && self_queue->cancel;
}

const bool *coord_cancel_flag(void)
{
	return self_queue ? &self_queue->cancel : &never;
}

uint8_t *coord_reply_buf(void)
{
	if (self_queue && !self_queue->reply_buf)
		self_queue->reply_buf = malloc(WSE_LINK_PAYLOAD_LIMIT);
	return self_queue ? self_queue->reply_buf : NULL;
}

bool coord_wait(struct coord *c, int ms)
{
	return coord_wait_on(c, &c->changed, ms);
}

void coord_wake_all(struct coord *c)
{
	pthread_cond_broadcast(&c->changed);
	pthread_cond_broadcast(&c->input_cond);
	pthread_cond_broadcast(&c->update_cond);
	pthread_cond_broadcast(&c->output_cond);
	if (c->conn)
		for (int i = 0; i < COORD_QUEUES; i++)
			for (int l = 0; l < LANES; l++)
				if (c->conn->q[i][l].serving)
					pthread_cond_broadcast(&c->conn->q[i][l].cond);
}

bool coord_wait_on(struct coord *c, pthread_cond_t *cond, int ms)
{
	struct timespec until;

	if (c->stopping || coord_cancelled(c))
		return false;
	until = hostlink_deadline(ms);
	pthread_cond_timedwait(cond, &c->lock, &until);
	return !c->stopping && !coord_cancelled(c);
}

/* c->lock held: the request queue @q carries out no longer counts. */
static void uncount(struct coord_conn *conn, struct coord_queue *q)
{
	if (!q->counted)
		return;
	q->counted = false;
	conn->pending_reqs--;
	conn->pending_bytes -= q->length;
}

static void send_frame(struct coord_conn *conn, const struct wse_link_frame *req, uint32_t status,
		       const struct iovec *data, int ndata)
{
	struct wse_link_frame f = { .version = conn->rules.version, .opcode = req->opcode,
				    .flags = WSE_LINK_F_RESPONSE, .queue = req->queue,
				    .tag = req->tag };
	struct wse_link_status st;
	struct iovec iov[4] = { { &st, sizeof(st) } };
	struct wse_link_err err;
	int n = 1;

	wse_link_status_encode(&st, status);
	for (int i = 0; i < ndata && i < 3; i++)
		iov[n++] = data[i];
	/* The answer to the calling worker's request: it no longer counts against the read-ahead. */
	if (self_queue && self_queue->conn == conn && self_queue->counted &&
	    self_queue->tag == req->tag && self_queue->queue == req->queue) {
		pthread_mutex_lock(&conn->c->lock);
		uncount(conn, self_queue);
		pthread_mutex_unlock(&conn->c->lock);
	}
	pthread_mutex_lock(&conn->tx_lock);
	if (!conn->send_failed && wse_link_send(conn->fd, &f, iov, n, SEND_MS, &err)) {
		fwd_warn("sending to %s failed: %s; closing", conn->peer, err.text);
		conn->send_failed = true;
		shutdown(conn->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&conn->tx_lock);
}

void coord_reply(struct coord_conn *conn, const struct wse_link_frame *f, uint32_t status,
		 const struct iovec *iov, int iovcnt)
{
	send_frame(conn, f, status, iov, iovcnt);
}

void coord_reply_text(struct coord_conn *conn, const struct wse_link_frame *f, uint32_t status,
		      const char *fmt, ...)
{
	char text[512];
	struct iovec iov = { text, 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	iov.iov_len = strlen(text);
	fwd_dbg("%s refused: %s", wse_link_op_name(f->opcode), text);
	send_frame(conn, f, status, &iov, 1);
}

/* An unsolicited ERROR, then the link is closed. */
static void send_error(struct coord_conn *conn, uint32_t code, const char *text)
{
	struct wse_link_frame f = { .version = conn->rules.version, .opcode = WSE_LINK_OP_ERROR };
	uint8_t buf[256];
	struct iovec iov = { buf, wse_link_error_encode(buf, sizeof(buf), code, text) };
	struct wse_link_err err;

	pthread_mutex_lock(&conn->tx_lock);
	wse_link_send(conn->fd, &f, &iov, 1, SEND_MS, &err);
	pthread_mutex_unlock(&conn->tx_lock);
}

static void *worker_main(void *arg)
{
	struct coord_queue *q = arg;
	struct coord_conn *conn = q->conn;
	struct coord *c = conn->c;

	self_queue = q;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct timespec until = hostlink_deadline(LANE_IDLE_MS);
		struct coord_req *r;

		while (!q->head && !c->stopping &&
		       pthread_cond_timedwait(&q->cond, &c->lock, &until) != ETIMEDOUT)
			;
		if (c->stopping || !q->head)
			break;
		r = q->head;
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
		/* From here a CANCEL of its tag finds it executing, not queued. */
		q->executing = true;
		q->cancel = false;
		q->tag = r->r.f.tag;
		q->counted = true;
		q->length = r->r.len;
		pthread_mutex_unlock(&c->lock);
		coord_execute(c, conn, &r->r);
		pthread_mutex_lock(&c->lock);
		q->executing = false;
		q->cancel = false;
		uncount(conn, q);	/* unanswered: the link is going */
		free(r);
	}
	/* Idle, or the link is going: the next request starts a worker again. */
	q->serving = false;
	pthread_mutex_unlock(&c->lock);
	free(q->reply_buf);
	q->reply_buf = NULL;
	return NULL;
}

/* The program (slot) a request names, its lane: 0 for slot 0 and for requests naming none. */
static unsigned int lane_of(const struct wse_link_frame *f, const uint8_t *payload)
{
	uint32_t slot;

	switch (f->opcode) {
	case WSE_LINK_OP_PROGRAM_LOAD:
	case WSE_LINK_OP_PROGRAM_UNLOAD:
	case WSE_LINK_OP_STREAM_WRITE:
	case WSE_LINK_OP_STREAM_READ:
	case WSE_LINK_OP_RUN:
	case WSE_LINK_OP_PARAMS_READ:
	case WSE_LINK_OP_PARAMS_WRITE:
		/* Each of their payloads starts with the slot (le32). */
		if (f->length < 4)
			return 0;
		slot = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
		       (uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24;
		return slot < LANES ? slot : 0;
	}
	return 0;
}

/* Queues a copy of request @f for its lane's worker (started if it is not serving). */
static int submit(struct coord_conn *conn, const struct wse_link_frame *f, const uint8_t *payload)
{
	struct coord *c = conn->c;
	struct coord_queue *q = &conn->q[f->queue][lane_of(f, payload)];
	struct coord_req *r;

	/* Read-ahead bounded: refused, not waited for (the receive thread reads on). */
	pthread_mutex_lock(&c->lock);
	if (conn->pending_reqs >= WSE_LINK_QUEUED_REQS ||
	    f->length > WSE_LINK_QUEUED_BYTES - conn->pending_bytes) {
		pthread_mutex_unlock(&c->lock);
		return -EBUSY;
	}
	pthread_mutex_unlock(&c->lock);
	r = malloc(sizeof(*r) + f->length);
	if (!r)
		return -ENOMEM;
	r->next = NULL;
	r->r.f = *f;
	memcpy(r->data, payload, f->length);
	r->r.payload = r->data;
	r->r.len = f->length;
	pthread_mutex_lock(&c->lock);
	if (!q->serving) {
		/* One that ended idle takes c->lock no more: joined at once. */
		if (q->started)
			pthread_join(q->thread, NULL);
		q->started = false;
		if (pthread_create(&q->thread, NULL, worker_main, q)) {
			pthread_mutex_unlock(&c->lock);
			free(r);
			return -EAGAIN;
		}
		q->started = q->serving = true;
	}
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
	conn->pending_reqs++;
	conn->pending_bytes += r->r.len;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * CANCEL of the host's request @tag: a queued one leaves its queue and is
 * answered E_CANCELED here; a worker carrying one out is told, and every
 * waiter woken to look (the worker answers E_CANCELED if it waited, or as
 * usual past its waits). The CANCEL itself is answered OK.
 */
static void cancel(struct coord_conn *conn, const struct wse_link_frame *f, uint32_t tag)
{
	struct coord *c = conn->c;
	struct coord_req *dropped = NULL, **end = &dropped, *next;

	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < COORD_QUEUES * LANES; i++) {
		struct coord_queue *q = &conn->q[i / LANES][i % LANES];
		struct coord_req *prev = NULL, *r = q->head;

		for (; r; r = next) {
			next = r->next;
			if (r->r.f.tag != tag) {
				prev = r;
				continue;
			}
			if (prev)
				prev->next = next;
			else
				q->head = next;
			if (q->tail == r)
				q->tail = prev;
			conn->pending_reqs--;
			conn->pending_bytes -= r->r.len;
			r->next = NULL;
			*end = r;
			end = &r->next;
		}
		if (q->executing && q->tag == tag && !q->cancel) {
			q->cancel = true;
			coord_wake_all(c);
		}
	}
	pthread_mutex_unlock(&c->lock);
	for (; dropped; dropped = next) {
		next = dropped->next;
		coord_reply_text(conn, &dropped->r.f, WSE_LINK_E_CANCELED,
				 "cancelled by the host before it started");
		free(dropped);
	}
	send_frame(conn, f, WSE_LINK_OK, NULL, 0);
}

/* HELLO: the host's offer, our identity, the appliance appendix if it asked. */
static int handshake(struct coord_conn *conn, uint8_t *buf)
{
	struct coord *c = conn->c;
	const struct wse_link_device_info *sys0 = &c->sys[0].dev;
	struct wse_link_device_info dev = {
		.version = 1, .version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.caps = WSE_LINK_CAP_EXEC | WSE_LINK_CAP_APPLIANCE | WSE_LINK_CAP_CANCEL,
		.max_payload = 4U << 20, .device_id = sys0->device_id | (1ULL << 63),
		.wafer_width = sys0->wafer_width, .wafer_height = sys0->wafer_height,
		.sram_per_pe = sys0->sram_per_pe, .sram_total = sys0->sram_total,
		.clock_khz = sys0->clock_khz, .num_queues = COORD_QUEUES,
	};
	struct wse_link_hello_info hello;
	struct wse_link_hello_reply raw;
	uint8_t appendix[WSE_LINK_PAYLOAD_MIN];
	struct iovec iov[2] = { { &raw, sizeof(raw) }, { appendix, 0 } };
	struct wse_link_frame f;
	struct wse_link_err err;
	struct pollfd p = { .fd = conn->fd, .events = POLLIN };
	int ret;

	conn->rules = (struct wse_link_rx_rules){ .version = 1, .max_payload = WSE_LINK_PAYLOAD_MIN };
	if (poll(&p, 1, c->o.hello_timeout_ms) <= 0) {
		send_error(conn, WSE_LINK_E_PROTO, "no HELLO came");
		return -ETIMEDOUT;
	}
	ret = wse_link_recv(conn->fd, &conn->rules, &f, buf, WSE_LINK_PAYLOAD_MIN, FRAME_MS, &err);
	if (ret)
		return ret;
	if (f.opcode != WSE_LINK_OP_HELLO || (f.flags & WSE_LINK_F_RESPONSE)) {
		send_error(conn, WSE_LINK_E_PROTO, "the first frame must be HELLO");
		return -EPROTO;
	}
	ret = wse_link_hello_decode(buf, f.length, &hello, &err);
	if (ret == -EPROTO) {
		send_error(conn, WSE_LINK_E_PROTO, err.text);
		return ret;
	}
	if (ret || hello.version_min > WSE_LINK_VERSION_MAX || hello.version_max < WSE_LINK_VERSION_MIN) {
		coord_reply_text(conn, &f, ret ? WSE_LINK_E_INVAL : WSE_LINK_E_VERSION, "%s",
				 ret ? err.text : "no common protocol version");
		return -EPROTO;
	}
	if (hello.max_payload < dev.max_payload)
		dev.max_payload = hello.max_payload;
	snprintf(dev.fw_version, sizeof(dev.fw_version), "wse-appliance 1, %u system%s", c->nsys,
		 c->nsys == 1 ? "" : "s");
	wse_link_hello_reply_encode(&raw, &dev);
	if (hello.caps & WSE_LINK_CAP_APPLIANCE)
		iov[1].iov_len = wse_link_appliance_id_encode(appendix, sizeof(appendix), &c->id);
	send_frame(conn, &f, WSE_LINK_OK, iov, iov[1].iov_len ? 2 : 1);
	conn->rules.version = 1;
	conn->rules.max_payload = dev.max_payload;
	return conn->send_failed ? -EPIPE : 0;
}

/* Receives until the host goes: link-level frames answered here, the rest queued. */
static void receive(struct coord_conn *conn, uint8_t *buf)
{
	for (;;) {
		struct wse_link_frame f;
		struct wse_link_err err;
		struct pollfd p = { .fd = conn->fd, .events = POLLIN };
		int n = poll(&p, 1, POLL_MS), ret;

		if (n < 0 && errno != EINTR)
			return;
		if (svc_stopping()) {
			struct wse_link_frame sd = { .version = conn->rules.version,
						     .opcode = WSE_LINK_OP_SHUTDOWN };
			pthread_mutex_lock(&conn->tx_lock);
			wse_link_send(conn->fd, &sd, NULL, 0, SEND_MS, &err);
			pthread_mutex_unlock(&conn->tx_lock);
			return;
		}
		if (n <= 0)
			continue;
		ret = wse_link_recv(conn->fd, &conn->rules, &f, buf, conn->rules.max_payload, FRAME_MS,
				    &err);
		/*
		 * The header's digest proved the framing: a request whose data
		 * changed on its way (the host's buffer is its user's) is
		 * refused, and the link goes on.
		 */
		if (ret && err.check == WSE_LINK_CHECK_DATA_CRC && !(f.flags & WSE_LINK_F_RESPONSE)) {
			fwd_warn("%s tag %u from %s: %s; refused", wse_link_op_name(f.opcode), f.tag,
				 conn->peer, err.text);
			coord_reply_text(conn, &f, WSE_LINK_E_DATA_CRC, "%s", err.text);
			continue;
		}
		if (ret) {
			if (ret != -EPIPE) {
				fwd_warn("host %s: %s; closing", conn->peer, err.text);
				send_error(conn, err.code ? err.code : WSE_LINK_E_PROTO, err.text);
			}
			return;
		}
		if (f.flags & WSE_LINK_F_RESPONSE) {
			/* We ask the host nothing but SHUTDOWN, whose answer ends the link. */
			return;
		}
		switch (f.opcode) {
		case WSE_LINK_OP_KEEPALIVE:
			send_frame(conn, &f, WSE_LINK_OK, NULL, 0);
			continue;
		case WSE_LINK_OP_SHUTDOWN:
			fwd_info("host %s asked for SHUTDOWN", conn->peer);
			send_frame(conn, &f, WSE_LINK_OK, NULL, 0);
			return;
		case WSE_LINK_OP_ERROR:
		case WSE_LINK_OP_HELLO:
			if (f.opcode == WSE_LINK_OP_HELLO)
				send_error(conn, WSE_LINK_E_PROTO, "a second HELLO");
			return;
		case WSE_LINK_OP_CANCEL: {
			uint32_t tag;

			if (wse_link_cancel_decode(buf, f.length, &tag, &err) || f.queue) {
				if (f.queue)
					snprintf(err.text, sizeof(err.text),
						 "CANCEL is a link-level frame but names queue %u", f.queue);
				fwd_warn("host %s: %s; closing", conn->peer, err.text);
				send_error(conn, WSE_LINK_E_PROTO, err.text);
				return;
			}
			cancel(conn, &f, tag);
			continue;
		}
		case WSE_LINK_OP_MEM_READ:
		case WSE_LINK_OP_MEM_WRITE:
			coord_reply_text(conn, &f, WSE_LINK_E_UNSUPPORTED,
					 "an appliance has no one device memory: load programs instead");
			continue;
		}
		if (!coord_serves(f.opcode)) {
			coord_reply_text(conn, &f, WSE_LINK_E_UNSUPPORTED,
					 "the appliance does not serve opcode 0x%02x", f.opcode);
			continue;
		}
		if (f.queue >= COORD_QUEUES) {
			coord_reply_text(conn, &f, WSE_LINK_E_INVAL,
					 "queue %u does not exist (the appliance has %u queues)",
					 f.queue, COORD_QUEUES);
			continue;
		}
		ret = submit(conn, &f, buf);
		if (ret == -EBUSY)
			coord_reply_text(conn, &f, WSE_LINK_E_BUSY,
					 "the appliance holds %u requests or %u MiB of their payloads ahead of their answers already (its read-ahead): ask again once some are answered",
					 WSE_LINK_QUEUED_REQS, WSE_LINK_QUEUED_BYTES >> 20);
		else if (ret)
			coord_reply_text(conn, &f, WSE_LINK_E_INTERNAL,
					 "the coordinator cannot queue the request (out of memory or threads)");
	}
}

void coord_conn_serve(struct coord *c, int fd)
{
	struct coord_conn *conn = calloc(1, sizeof(*conn));
	uint8_t *buf = malloc(WSE_LINK_PAYLOAD_LIMIT);

	if (!conn || !buf) {
		fwd_err("out of memory for a host");
		free(conn);
		free(buf);
		return;
	}
	conn->c = c;
	conn->fd = fd;
	pthread_mutex_init(&conn->tx_lock, NULL);
	for (int i = 0; i < COORD_QUEUES; i++) {
		for (int l = 0; l < LANES; l++) {
			conn->q[i][l].conn = conn;
			conn->q[i][l].queue = (uint16_t)i;
			pthread_cond_init(&conn->q[i][l].cond, NULL);
		}
	}
	wse_link_tune_socket(fd);
	wse_link_peer_name(fd, conn->peer, sizeof(conn->peer));
	fwd_info("host %s connected", conn->peer);
	if (!handshake(conn, buf)) {
		c->conn = conn;
		receive(conn, buf);
	}
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	coord_wake_all(c);
	pthread_mutex_unlock(&c->lock);
	shutdown(fd, SHUT_RDWR);
	for (int i = 0; i < COORD_QUEUES * LANES; i++) {
		struct coord_queue *q = &conn->q[i / LANES][i % LANES];

		if (q->started)
			pthread_join(q->thread, NULL);
		while (q->head) {
			struct coord_req *r = q->head;

			q->head = r->next;
			free(r);
		}
		pthread_cond_destroy(&q->cond);
	}
	coord_host_gone(c);
	pthread_mutex_lock(&c->lock);
	c->conn = NULL;
	c->stopping = false;
	pthread_mutex_unlock(&c->lock);
	fwd_info("host %s left", conn->peer);
	pthread_mutex_destroy(&conn->tx_lock);
	free(conn);
	free(buf);
}
