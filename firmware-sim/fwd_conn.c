// SPDX-License-Identifier: GPL-2.0-only
/*
 * A host link: the receive state machine (header, opcode prefix, body),
 * frame validation in the specified order, dispatch through the opcode
 * table, and the one send path every frame takes.
 *
 * The socket is non-blocking and only read when poll() says so; a body is
 * read straight into where it belongs (device memory for MEM_WRITE) and its
 * CRC is computed while the bytes are still in cache.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fwd_conn.h"
#include "fwd_device.h"
#include "fwd_log.h"
#include "fwd_ops.h"

/* Frames handled per readable event before poll() gets another look. */
#define RX_BURST		64
/* How long the device waits for the answer to its SHUTDOWN. */
#define SHUTDOWN_WAIT_MS	2000
/* Never declare a host dead sooner than this, whatever its interval. */
#define KEEPALIVE_FLOOR_MS	1000
/* Room for a reply's own first piece (status + text or HELLO reply). */
#define FIRST_PIECE_MAX		512

static void rx_reset(struct fwd_conn *c)
{
	c->phase = FWD_RX_HEADER;
	c->got = 0;
	c->op = NULL;
	c->prefix_len = 0;
	c->body_cnt = 0;
	c->body_idx = 0;
	c->body_left = 0;
	c->body_in_scratch = false;
	c->crc = 0;
	memset(&c->ctx, 0, sizeof(c->ctx));
}

int fwd_conn_init(struct fwd_conn *c, struct fwd_device *dev, int fd)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->send_lock, NULL);
	c->fd = fd;
	c->dev = dev;
	wse_link_peer_name(fd, c->peer, sizeof(c->peer));
	wse_link_tune_socket(fd);
	c->rules.version = WSE_LINK_VERSION_MIN;
	c->rules.max_payload = WSE_LINK_PAYLOAD_MIN;
	c->max_payload = WSE_LINK_PAYLOAD_MIN;
	c->scratch_cap = WSE_LINK_PAYLOAD_MIN;
	c->scratch = malloc(c->scratch_cap);
	if (!c->scratch)
		return -ENOMEM;
	c->accepted_ms = c->last_rx_ms = wse_link_now_ms();
	fwd_fault_init(&c->fault, &dev->cfg->fault);
	rx_reset(c);
	return 0;
}

void fwd_conn_release(struct fwd_conn *c)
{
	pthread_mutex_destroy(&c->send_lock);
	free(c->scratch);
	c->scratch = NULL;
}

static void send_locked(struct fwd_conn *c, struct wse_link_frame *f,
			const struct iovec *iov, int iovcnt);

void fwd_conn_send(struct fwd_conn *c, struct wse_link_frame *f,
		   const struct iovec *iov, int iovcnt)
{
	pthread_mutex_lock(&c->send_lock);
	send_locked(c, f, iov, iovcnt);
	pthread_mutex_unlock(&c->send_lock);
}

static void send_locked(struct fwd_conn *c, struct wse_link_frame *f,
			const struct iovec *iov, int iovcnt)
{
	const struct fwd_config *cfg = c->dev->cfg;
	struct iovec vec[2 + FWD_MEM_MAX_IOV];
	uint8_t first[FIRST_PIECE_MAX];
	struct wse_link_hdr raw;
	struct wse_link_err err;
	uint64_t length = 0;
	uint64_t frame_no;
	int ret;

	if (c->dead)
		return;
	if (iovcnt > (int)FWD_MEM_MAX_IOV + 1) {
		fwd_err("internal: frame of %d pieces", iovcnt);
		c->dead = true;
		return;
	}
	if (f->flags & WSE_LINK_F_RESPONSE)
		fwd_fault_delay(&c->fault);
	frame_no = ++c->frames_tx;

	if ((f->flags & WSE_LINK_F_RESPONSE) &&
	    fwd_fault_malformed(&c->fault, c->frames_rx)) {
		uint8_t bad[WSE_LINK_MALFORM_MAX];
		enum wse_link_malform kind = fwd_fault_next_kind(&c->fault);
		bool close_after;
		size_t n = wse_link_malform_build(kind, &c->fault.rng, f->version,
						  f->opcode, f->tag, bad, &close_after);

		fwd_warn("fault: answering %s tag %u with a malformed frame (%s, %zu bytes)",
			 wse_link_op_name(f->opcode), f->tag, wse_link_malform_name(kind), n);
		vec[0].iov_base = bad;
		vec[0].iov_len = n;
		ret = wse_link_write_all(c->fd, vec, 1,
					 wse_link_now_ms() + cfg->send_timeout_ms, &err);
		if (ret || close_after)
			c->dead = true;
		return;
	}

	for (int i = 0; i < iovcnt; i++)
		length += iov[i].iov_len;
	f->length = (uint32_t)length;
	f->data_crc = wse_crc32c_iov(0, iov, iovcnt);
	wse_link_hdr_encode(&raw, f);
	vec[0].iov_base = &raw;
	vec[0].iov_len = sizeof(raw);
	if (iovcnt)
		memcpy(&vec[1], iov, sizeof(*iov) * (size_t)iovcnt);

	if (fwd_fault_corrupt(&c->fault, frame_no)) {
		/* Flip one bit after the digests were computed: in the payload's
		 * first piece (a copy: it may not be ours to change) or, for an
		 * empty frame, in the header's tag.
		 */
		if (iovcnt && iov[0].iov_len && iov[0].iov_len <= sizeof(first)) {
			memcpy(first, iov[0].iov_base, iov[0].iov_len);
			first[0] ^= 0x01;
			vec[1].iov_base = first;
			fwd_warn("fault: corrupting sent frame %llu (%s): payload bit flipped",
				 (unsigned long long)frame_no, wse_link_op_name(f->opcode));
		} else {
			raw.tag ^= 0x01;
			fwd_warn("fault: corrupting sent frame %llu (%s): header bit flipped",
				 (unsigned long long)frame_no, wse_link_op_name(f->opcode));
		}
	}
	fwd_dbg("tx %s%s tag %u queue %u len %u", wse_link_op_name(f->opcode),
		(f->flags & WSE_LINK_F_RESPONSE) ? " response" : "", f->tag, f->queue,
		f->length);
	ret = wse_link_write_all(c->fd, vec, 1 + iovcnt,
				 wse_link_now_ms() + cfg->send_timeout_ms, &err);
	if (ret) {
		fwd_warn("link to %s: %s; closing", c->peer, err.text);
		c->dead = true;
		return;
	}
	c->bytes_tx += sizeof(raw) + length;
}

void fwd_conn_reply(struct fwd_conn *c, const struct wse_link_frame *req,
		    uint32_t status, const struct iovec *iov, int iovcnt)
{
	struct wse_link_frame f = {
		/* HELLO's answer speaks version 1 whatever was negotiated. */
		.version = req->opcode == WSE_LINK_OP_HELLO ? WSE_LINK_VERSION_MIN
							    : c->rules.version,
		.opcode = req->opcode,
		.flags = WSE_LINK_F_RESPONSE,
		.queue = req->queue,
		.tag = req->tag,
	};
	struct iovec vec[1 + FWD_MEM_MAX_IOV];
	struct wse_link_status st;

	if (iovcnt > (int)FWD_MEM_MAX_IOV) {
		fwd_err("internal: reply of %d pieces", iovcnt);
		c->dead = true;
		return;
	}
	wse_link_status_encode(&st, status);
	vec[0].iov_base = &st;
	vec[0].iov_len = sizeof(st);
	if (iovcnt)
		memcpy(&vec[1], iov, sizeof(*iov) * (size_t)iovcnt);
	/* Answered, a queued request no longer counts against the read-ahead. */
	fwd_exec_answering(&c->dev->exec, req);
	fwd_conn_send(c, &f, vec, 1 + iovcnt);
}

void fwd_conn_reply_text(struct fwd_conn *c, const struct wse_link_frame *req,
			 uint32_t status, const char *fmt, ...)
{
	char text[256];
	struct iovec iov;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fwd_info("%s tag %u refused (%s): %s", wse_link_op_name(req->opcode), req->tag,
		 wse_link_status_name(status), text);
	iov.iov_base = text;
	iov.iov_len = strlen(text);
	fwd_conn_reply(c, req, status, &iov, 1);
}

bool fwd_conn_reply_fits(struct fwd_conn *c, const struct wse_link_frame *req, uint32_t len)
{
	uint32_t room = c->max_payload - (uint32_t)sizeof(struct wse_link_status);

	if (len <= room)
		return true;
	fwd_conn_reply_text(c, req, WSE_LINK_E_INVAL,
			    "read of %u bytes does not fit one response (at most %u with a max payload of %u)",
			    len, room, c->max_payload);
	return false;
}

void fwd_conn_fail(struct fwd_conn *c, uint32_t code, const char *fmt, ...)
{
	struct wse_link_frame f = {
		.version = c->rules.version,
		.opcode = WSE_LINK_OP_ERROR,
	};
	uint8_t payload[sizeof(struct wse_link_error) + 256];
	char text[256];
	struct iovec iov;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fwd_warn("link to %s: %s: %s; sending ERROR and closing", c->peer,
		 wse_link_status_name(code), text);
	iov.iov_base = payload;
	iov.iov_len = wse_link_error_encode(payload, sizeof(payload), code, text);
	fwd_conn_send(c, &f, &iov, 1);
	c->dead = true;
}

/* Body into the scratch buffer (its size is the negotiated maximum). */
static void body_to_scratch(struct fwd_conn *c, uint32_t len)
{
	c->body[0].iov_base = c->scratch;
	c->body[0].iov_len = len;
	c->body_cnt = 1;
	c->body_in_scratch = true;
}

static void start_body(struct fwd_conn *c, uint32_t len);
static void on_frame(struct fwd_conn *c);

static void on_header(struct fwd_conn *c)
{
	struct wse_link_err err;
	const struct fwd_op *op;

	if (wse_link_hdr_decode(&c->raw, &c->rules, &c->f, &err)) {
		fwd_conn_fail(c, err.code, "%s", err.text);
		return;
	}
	fwd_dbg("rx %s%s tag %u queue %u len %u", wse_link_op_name(c->f.opcode),
		(c->f.flags & WSE_LINK_F_RESPONSE) ? " response" : "", c->f.tag,
		c->f.queue, c->f.length);
	op = (c->f.flags & WSE_LINK_F_RESPONSE) ? NULL : fwd_op_lookup(c->f.opcode);
	c->op = op;
	if (op && op->place && op->prefix_len && c->f.length >= op->prefix_len &&
	    (c->hello_done || op->before_hello)) {
		c->prefix_len = op->prefix_len;
		c->phase = FWD_RX_PREFIX;
		c->got = 0;
		return;
	}
	body_to_scratch(c, c->f.length);
	start_body(c, c->f.length);
}

static void start_body(struct fwd_conn *c, uint32_t len)
{
	c->body_left = len;
	c->body_idx = 0;
	c->phase = FWD_RX_BODY;
	if (!len)
		on_frame(c);
}

static void on_prefix(struct fwd_conn *c)
{
	uint32_t body_len = c->f.length - c->prefix_len;
	int cnt = 0;

	c->crc = wse_crc32c(0, c->prefix, c->prefix_len);
	c->op->place(c, &c->ctx, c->prefix, body_len, c->body, &cnt);
	if (cnt)
		c->body_cnt = cnt;
	else
		body_to_scratch(c, body_len);
	start_body(c, body_len);
}

static bool payload_size_ok(struct fwd_conn *c, const struct fwd_op *op)
{
	if (op->exact_len ? c->f.length == op->min_len : c->f.length >= op->min_len)
		return true;
	fwd_conn_fail(c, WSE_LINK_E_PROTO, "%s payload is %u bytes, expected %s%u",
		      wse_link_op_name(c->f.opcode), c->f.length,
		      op->exact_len ? "" : "at least ", op->min_len);
	return false;
}

/* A response from the host: only the answer to our SHUTDOWN is expected. */
static void on_response(struct fwd_conn *c)
{
	if (c->stopping && c->f.opcode == WSE_LINK_OP_SHUTDOWN &&
	    c->f.tag == c->shutdown_tag) {
		fwd_info("host %s acknowledged SHUTDOWN", c->peer);
		c->dead = true;
		return;
	}
	fwd_conn_fail(c, WSE_LINK_E_PROTO,
		      "%s response with tag %u answers no request of the device",
		      wse_link_op_name(c->f.opcode), c->f.tag);
}

static void on_frame(struct fwd_conn *c)
{
	struct wse_link_frame f = c->f;
	const struct fwd_op *op = c->op;
	struct wse_link_err err;

	c->frames_rx++;
	if (wse_link_check_data_crc(&f, c->crc, &err)) {
		/*
		 * The header's digest proved the framing: a request's data
		 * that changed on its way (the host's buffer is its user's)
		 * fails that request, not the link.
		 */
		if (c->hello_done && !c->stopping && !(f.flags & WSE_LINK_F_RESPONSE)) {
			fwd_warn("%s tag %u from %s: %s; refused", wse_link_op_name(f.opcode),
				 f.tag, c->peer, err.text);
			fwd_conn_reply_text(c, &f, WSE_LINK_E_DATA_CRC, "%s", err.text);
			rx_reset(c);
			return;
		}
		fwd_conn_fail(c, err.code, "%s", err.text);
		return;
	}
	if (fwd_fault_drop(&c->fault, c->frames_rx)) {
		fwd_warn("fault: dropping the link to %s on receiving frame %llu (%s)",
			 c->peer, (unsigned long long)c->frames_rx, wse_link_op_name(f.opcode));
		c->dead = true;
		c->abrupt = true;
		return;
	}
	if (fwd_fault_silent(&c->fault, c->frames_rx))
		goto done;
	if (f.flags & WSE_LINK_F_RESPONSE) {
		on_response(c);
		goto done;
	}
	if (c->stopping) {
		/* Our SHUTDOWN is out: nothing is served, but a SHUTDOWN that
		 * crossed ours is answered so that neither side waits.
		 */
		if (f.opcode == WSE_LINK_OP_SHUTDOWN && !f.length) {
			fwd_conn_reply(c, &f, WSE_LINK_OK, NULL, 0);
			c->dead = true;
		}
		goto done;
	}
	if (!c->hello_done && f.opcode != WSE_LINK_OP_HELLO) {
		fwd_conn_fail(c, WSE_LINK_E_PROTO, "the first frame must be HELLO, not %s (0x%02x)",
			      wse_link_op_name(f.opcode), f.opcode);
		return;
	}
	if (!op) {
		fwd_conn_reply_text(c, &f, WSE_LINK_E_UNSUPPORTED,
				    "opcode 0x%02x is not supported by this device", f.opcode);
		goto done;
	}
	if (op->link_level && f.queue) {
		fwd_conn_fail(c, WSE_LINK_E_PROTO, "%s is a link-level frame but names queue %u",
			      wse_link_op_name(f.opcode), f.queue);
		return;
	}
	if (!payload_size_ok(c, op))
		return;
	if (c->ctx.fatal) {
		fwd_conn_fail(c, c->ctx.status, "%s", c->ctx.text);
		return;
	}
	fwd_dispatch(c, op, &f, &c->ctx, c->prefix_len ? c->prefix : c->scratch);
done:
	rx_reset(c);
}

/* Accounts @n received bytes to the current phase; completes it if full. */
static void advance(struct fwd_conn *c, size_t n)
{
	switch (c->phase) {
	case FWD_RX_HEADER:
		c->got += n;
		if (c->got == sizeof(c->raw))
			on_header(c);
		break;
	case FWD_RX_PREFIX:
		c->got += n;
		if (c->got == c->prefix_len)
			on_prefix(c);
		break;
	case FWD_RX_BODY:
		c->body_left -= (uint32_t)n;
		while (n) {
			struct iovec *v = &c->body[c->body_idx];
			size_t take = n < v->iov_len ? n : v->iov_len;

			c->crc = wse_crc32c(c->crc, v->iov_base, take);
			v->iov_base = (uint8_t *)v->iov_base + take;
			v->iov_len -= take;
			n -= take;
			if (!v->iov_len)
				c->body_idx++;
		}
		if (!c->body_left)
			on_frame(c);
		break;
	}
}

void fwd_conn_on_readable(struct fwd_conn *c)
{
	for (int i = 0; i < RX_BURST * 4 && !c->dead; i++) {
		ssize_t n;

		switch (c->phase) {
		case FWD_RX_HEADER:
			n = recv(c->fd, (uint8_t *)&c->raw + c->got, sizeof(c->raw) - c->got, 0);
			break;
		case FWD_RX_PREFIX:
			n = recv(c->fd, c->prefix + c->got, c->prefix_len - c->got, 0);
			break;
		default:
			n = readv(c->fd, c->body + c->body_idx, c->body_cnt - c->body_idx);
			break;
		}
		if (n == 0) {
			if (c->phase == FWD_RX_HEADER && !c->got)
				fwd_info("host %s closed the link", c->peer);
			else
				fwd_warn("host %s closed the link in the middle of a frame", c->peer);
			c->dead = true;
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				fwd_warn("link to %s: receive failed: %s", c->peer, strerror(errno));
				c->dead = true;
			}
			return;
		}
		c->last_rx_ms = wse_link_now_ms();
		c->bytes_rx += (uint64_t)n;
		advance(c, (size_t)n);
	}
}

static bool timers_suspended(const struct fwd_conn *c)
{
	/* A device told to go silent keeps the socket open, whatever the host does. */
	return c->fault.silent_logged;
}

int64_t fwd_conn_next_deadline(const struct fwd_conn *c)
{
	const struct fwd_config *cfg = c->dev->cfg;
	int64_t ka;

	if (c->stopping)
		return c->stop_deadline_ms;
	if (timers_suspended(c))
		return -1;
	if (!c->hello_done)
		return cfg->hello_timeout_ms ? c->accepted_ms + cfg->hello_timeout_ms : -1;
	if (!c->keepalive_ms)
		return -1;
	ka = 3 * (int64_t)c->keepalive_ms;
	if (ka < KEEPALIVE_FLOOR_MS)
		ka = KEEPALIVE_FLOOR_MS;
	return c->last_rx_ms + ka;
}

void fwd_conn_check_timers(struct fwd_conn *c, int64_t now)
{
	int64_t deadline = fwd_conn_next_deadline(c);

	if (deadline < 0 || now < deadline || c->dead)
		return;
	if (c->stopping) {
		fwd_info("host %s did not answer SHUTDOWN in %d ms; closing", c->peer,
			 SHUTDOWN_WAIT_MS);
		c->dead = true;
	} else if (!c->hello_done) {
		fwd_conn_fail(c, WSE_LINK_E_PROTO, "no HELLO within %u ms of connecting",
			      c->dev->cfg->hello_timeout_ms);
	} else {
		fwd_conn_fail(c, WSE_LINK_E_PROTO,
			      "nothing heard from the host for %lld ms (keepalive interval %u ms)",
			      (long long)(now - c->last_rx_ms), c->keepalive_ms);
	}
}

void fwd_conn_begin_shutdown(struct fwd_conn *c)
{
	struct wse_link_frame f = {
		.version = c->rules.version,
		.opcode = WSE_LINK_OP_SHUTDOWN,
	};

	if (c->dead || c->stopping)
		return;
	if (!c->hello_done || timers_suspended(c)) {
		c->dead = true;
		return;
	}
	/* After our SHUTDOWN nothing more is answered: the queue workers stop. */
	fwd_exec_detach(&c->dev->exec);
	c->shutdown_tag = 0x80000000U | (uint32_t)c->frames_tx;
	f.tag = c->shutdown_tag;
	fwd_info("sending SHUTDOWN to host %s", c->peer);
	c->stopping = true;
	c->stop_deadline_ms = wse_link_now_ms() + SHUTDOWN_WAIT_MS;
	fwd_conn_send(c, &f, NULL, 0);
}
