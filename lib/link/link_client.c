// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A small synchronous host for the link: handshake, request/response with
 * full checking of what the device sends. Used by wse-fakehost, the
 * wsefwd tests and benchmarks; the kernel driver is the real host.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "wse/link_io.h"
#include "wse/link_client.h"

static void copy_text(char *text, size_t textlen, const uint8_t *src, size_t n)
{
	size_t i;

	if (!textlen)
		return;
	if (n > textlen - 1)
		n = textlen - 1;
	for (i = 0; i < n; i++)
		text[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? (char)src[i] : '?';
	text[n] = '\0';
}

/* Answers a request the device sent us; returns -ESHUTDOWN for SHUTDOWN. */
static int answer_device(struct wse_link_client *cl, const struct wse_link_frame *req,
			 struct wse_link_err *err)
{
	struct wse_link_frame f = {
		.version = cl->rules.version, .opcode = req->opcode,
		.flags = WSE_LINK_F_RESPONSE, .tag = req->tag,
	};
	struct wse_link_status st;
	struct iovec iov = { &st, sizeof(st) };
	int ret;

	wse_link_status_encode(&st, WSE_LINK_OK);
	ret = wse_link_send(cl->fd, &f, &iov, 1, cl->timeout_ms, err);
	if (ret)
		return ret;
	if (req->opcode == WSE_LINK_OP_SHUTDOWN) {
		cl->peer_shutdown = true;
		wse_link_err_set(err, 0, WSE_LINK_CHECK_OK, "the device shut the link down");
		return -ESHUTDOWN;
	}
	return 0;
}

static struct wse_link_client_pending *find_pending(struct wse_link_client *cl, uint32_t tag)
{
	for (unsigned int i = 0; i < cl->npending; i++)
		if (cl->pending[i].tag == tag)
			return &cl->pending[i];
	return NULL;
}

static void drop_pending(struct wse_link_client *cl, struct wse_link_client_pending *p)
{
	free(p->payload);
	*p = cl->pending[--cl->npending];
}

/* Is a whole frame's first byte there within @timeout_ms? 0, -ETIMEDOUT or -errno. */
static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int64_t end = wse_link_now_ms() + timeout_ms;

	for (int tries = 0; tries < 1000; tries++) {
		int64_t left = end - wse_link_now_ms();
		int n;

		if (left < 0)
			left = 0;
		n = poll(&pfd, 1, (int)left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
	return -ETIMEDOUT;
}

/*
 * Receives until the response to @tag arrives (its frame in @f, payload in
 * cl->buf), keeping responses to other pending requests. With
 * @timeout_ms >= 0, gives up with -ETIMEDOUT between frames.
 */
static int await_response(struct wse_link_client *cl, uint32_t tag, int timeout_ms,
			  struct wse_link_frame *f, struct wse_link_err *err)
{
	int64_t end = wse_link_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	for (int frames = 0; frames < 4096; frames++) {
		struct wse_link_client_pending *p;
		uint32_t code;
		char text[160];
		int ret;

		if (timeout_ms >= 0) {
			int64_t left = end - wse_link_now_ms();

			ret = wait_readable(cl->fd, left > 0 ? (int)left : 0);
			if (ret == -ETIMEDOUT) {
				wse_link_err_set(err, 0, WSE_LINK_CHECK_OK,
						 "no response to tag %u within %d ms", tag, timeout_ms);
				return -ETIMEDOUT;
			}
			if (ret)
				return ret;
		}
		ret = wse_link_recv(cl->fd, &cl->rules, f, cl->buf, cl->cap, cl->timeout_ms, err);
		if (ret)
			return ret;
		if (f->opcode == WSE_LINK_OP_ERROR && !(f->flags & WSE_LINK_F_RESPONSE)) {
			ret = wse_link_error_decode(cl->buf, f->length, &code, text, sizeof(text), err);
			if (ret)
				return ret;
			cl->peer_error = code ? code : WSE_LINK_E_PROTO;
			wse_link_err_set(err, cl->peer_error, WSE_LINK_CHECK_OK,
					 "device sent ERROR %s: %s", wse_link_status_name(code), text);
			return -ECONNRESET;
		}
		if (!(f->flags & WSE_LINK_F_RESPONSE)) {
			if (f->opcode != WSE_LINK_OP_KEEPALIVE && f->opcode != WSE_LINK_OP_SHUTDOWN)
				return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
							"device sent an unexpected %s request (0x%02x)",
							wse_link_op_name(f->opcode), f->opcode);
			ret = answer_device(cl, f, err);
			if (ret)
				return ret;
			continue;
		}
		p = find_pending(cl, f->tag);
		if (!p || p->arrived || p->opcode != f->opcode)
			return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
						"response %s tag %u answers no pending request",
						wse_link_op_name(f->opcode), f->tag);
		if (f->queue != p->queue)
			return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
						"response on queue %u to a request on queue %u",
						f->queue, p->queue);
		if (f->tag == tag) {
			drop_pending(cl, p);
			return 0;
		}
		/* Someone else's answer: keep a copy until it is waited for. */
		p->payload = malloc(f->length ? f->length : 1);
		if (!p->payload)
			return -ENOMEM;
		memcpy(p->payload, cl->buf, f->length);
		p->len = f->length;
		p->arrived = true;
	}
	return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
				"no response among 4096 frames");
}

int wse_link_client_submit(struct wse_link_client *cl, uint8_t opcode, uint16_t queue,
			   const struct iovec *iov, int iovcnt, uint32_t *tag,
			   struct wse_link_err *err)
{
	struct wse_link_frame f = {
		.version = cl->rules.version, .opcode = opcode, .queue = queue,
		.tag = cl->next_tag++,
	};
	int ret;

	if (cl->npending == WSE_LINK_CLIENT_MAX_PENDING) {
		wse_link_err_set(err, 0, WSE_LINK_CHECK_OK, "%u requests already in flight",
				 cl->npending);
		return -EBUSY;
	}
	ret = wse_link_send(cl->fd, &f, iov, iovcnt, cl->timeout_ms, err);
	if (ret)
		return ret;
	cl->pending[cl->npending++] = (struct wse_link_client_pending){
		.tag = f.tag, .opcode = opcode, .queue = queue,
	};
	*tag = f.tag;
	return 0;
}

int wse_link_client_wait(struct wse_link_client *cl, uint32_t tag, int timeout_ms,
			 uint32_t *status, size_t *rest_len, struct wse_link_err *err)
{
	struct wse_link_client_pending *p = find_pending(cl, tag);
	struct wse_link_frame r;
	size_t len;
	int ret;

	if (!p) {
		wse_link_err_set(err, 0, WSE_LINK_CHECK_OK, "tag %u is not a pending request", tag);
		return -EINVAL;
	}
	if (p->arrived) {
		len = p->len;
		memcpy(cl->buf, p->payload, len);
		drop_pending(cl, p);
	} else {
		ret = await_response(cl, tag, timeout_ms, &r, err);
		if (ret)
			return ret;
		len = r.length;
	}
	return wse_link_status_decode(cl->buf, len, status, NULL, rest_len, err);
}

void wse_link_client_text(const struct wse_link_client *cl, size_t rest_len,
			  char *text, size_t textlen)
{
	copy_text(text, textlen, cl->buf + sizeof(struct wse_link_status), rest_len);
}

int wse_link_client_call(struct wse_link_client *cl, uint8_t opcode, uint16_t queue,
			 const struct iovec *iov, int iovcnt, uint32_t *status,
			 size_t *rest_len, struct wse_link_err *err)
{
	uint32_t tag;
	int ret;

	ret = wse_link_client_submit(cl, opcode, queue, iov, iovcnt, &tag, err);
	if (ret)
		return ret;
	return wse_link_client_wait(cl, tag, -1, status, rest_len, err);
}

int wse_link_client_cancel(struct wse_link_client *cl, uint32_t tag, int timeout_ms,
			   uint32_t *status, struct wse_link_err *err)
{
	struct wse_link_cancel raw;
	struct iovec iov = { &raw, sizeof(raw) };
	uint32_t ctag;
	int ret;

	if (!find_pending(cl, tag)) {
		wse_link_err_set(err, 0, WSE_LINK_CHECK_OK, "tag %u is not a pending request", tag);
		return -EINVAL;
	}
	wse_link_cancel_encode(&raw, tag);
	ret = wse_link_client_submit(cl, WSE_LINK_OP_CANCEL, 0, &iov, 1, &ctag, err);
	if (ret)
		return ret;
	/* The cancelled request's own answer, if it comes first, is kept for its wait. */
	return wse_link_client_wait(cl, ctag, timeout_ms, status, NULL, err);
}

int wse_link_client_hello(struct wse_link_client *cl, int fd,
			  const struct wse_link_hello_info *hello, int timeout_ms,
			  uint32_t *status, char *text, size_t textlen,
			  struct wse_link_err *err)
{
	struct wse_link_hello raw;
	struct iovec iov = { &raw, sizeof(raw) };
	size_t rest_len, base;
	const uint8_t *body;
	uint32_t max;
	uint8_t *buf;
	int ret;

	memset(cl, 0, sizeof(*cl));
	cl->fd = fd;
	cl->timeout_ms = timeout_ms;
	cl->rules.version = WSE_LINK_VERSION_MIN;
	cl->rules.max_payload = WSE_LINK_PAYLOAD_MIN;
	cl->next_tag = 1;
	cl->cap = WSE_LINK_PAYLOAD_MIN;
	cl->buf = malloc(cl->cap);
	if (!cl->buf)
		return -ENOMEM;
	if (textlen)
		text[0] = '\0';
	wse_link_hello_encode(&raw, hello);
	ret = wse_link_client_call(cl, WSE_LINK_OP_HELLO, 0, &iov, 1, status, &rest_len, err);
	if (ret)
		return ret;
	if (*status != WSE_LINK_OK) {
		copy_text(text, textlen, cl->buf + sizeof(struct wse_link_status), rest_len);
		return 0;
	}
	/* An appliance appends what it holds, to a host that asked. */
	body = cl->buf + sizeof(struct wse_link_status);
	base = rest_len;
	if ((hello->caps & WSE_LINK_CAP_APPLIANCE) && rest_len > sizeof(struct wse_link_hello_reply))
		base = sizeof(struct wse_link_hello_reply);
	ret = wse_link_hello_reply_decode(body, base, &cl->dev, err);
	if (ret)
		return ret;
	if (base < rest_len) {
		if (!(cl->dev.caps & WSE_LINK_CAP_APPLIANCE))
			return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
						"HELLO reply is longer than its body but the device is no appliance");
		ret = wse_link_appliance_id_decode(body + base, rest_len - base, &cl->appliance,
						   err);
		if (ret)
			return ret;
	}
	if (cl->dev.version < hello->version_min || cl->dev.version > hello->version_max)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"device chose version %u outside the host's %u..%u",
					cl->dev.version, hello->version_min, hello->version_max);
	max = cl->dev.max_payload < hello->max_payload ? cl->dev.max_payload
						       : hello->max_payload;
	buf = realloc(cl->buf, max);
	if (!buf)
		return -ENOMEM;
	cl->buf = buf;
	cl->cap = max;
	cl->rules.version = (uint8_t)cl->dev.version;
	cl->rules.max_payload = max;
	return 0;
}

void wse_link_client_free(struct wse_link_client *cl)
{
	while (cl->npending)
		drop_pending(cl, &cl->pending[cl->npending - 1]);
	free(cl->buf);
	cl->buf = NULL;
	cl->cap = 0;
}

int wse_link_client_mem_write(struct wse_link_client *cl, uint16_t queue, uint64_t addr,
			      const void *data, uint32_t len, uint32_t *status,
			      char *text, size_t textlen, struct wse_link_err *err)
{
	struct wse_link_mem mem;
	struct iovec iov[2] = { { &mem, sizeof(mem) }, { (void *)data, len } };
	size_t rest_len;
	int ret;

	wse_link_mem_encode(&mem, addr, len);
	ret = wse_link_client_call(cl, WSE_LINK_OP_MEM_WRITE, queue, iov, 2, status,
				   &rest_len, err);
	if (!ret && *status != WSE_LINK_OK)
		copy_text(text, textlen, cl->buf + sizeof(struct wse_link_status), rest_len);
	else if (!ret && rest_len)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"MEM_WRITE response carries %zu unexpected bytes", rest_len);
	return ret;
}

int wse_link_client_mem_read(struct wse_link_client *cl, uint16_t queue, uint64_t addr,
			     void *data, uint32_t len, uint32_t *status,
			     char *text, size_t textlen, struct wse_link_err *err)
{
	struct wse_link_mem mem;
	struct iovec iov = { &mem, sizeof(mem) };
	size_t rest_len;
	int ret;

	wse_link_mem_encode(&mem, addr, len);
	ret = wse_link_client_call(cl, WSE_LINK_OP_MEM_READ, queue, &iov, 1, status,
				   &rest_len, err);
	if (ret)
		return ret;
	if (*status != WSE_LINK_OK) {
		copy_text(text, textlen, cl->buf + sizeof(struct wse_link_status), rest_len);
		return 0;
	}
	if (rest_len != len)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"MEM_READ of %u bytes returned %zu", len, rest_len);
	memcpy(data, cl->buf + sizeof(struct wse_link_status), len);
	return 0;
}
