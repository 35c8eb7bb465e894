// SPDX-License-Identifier: GPL-2.0-only
/*
 * The appliance's host side of a link (hostlink.h): a handshake with
 * libwselink's client, then a receive thread that checks every frame
 * (the peer is another process: trusted no more than the kernel trusts
 * the firmware) and hands each answer to its waiter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostlink.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/link_io.h"

#define SEND_MS		WSE_LINK_SEND_MS

/* Lock held: the link is gone; every waiter hears why. */
static void die_locked(struct hostlink *h, int err, const char *why)
{
	if (h->dead)
		return;
	h->dead = true;
	h->dead_err = err;
	snprintf(h->reason, sizeof(h->reason), "%s", why);
	for (int i = 0; i < HOSTLINK_PENDING; i++) {
		struct hostlink_pending *p = &h->pending[i];

		if (p->used && !p->done) {
			p->done = true;
			p->err = err;
		}
		pthread_cond_broadcast(&p->cond);
	}
	pthread_cond_broadcast(&h->slot_cond);
}

/* Lock held: slot @p is free again. */
static void release_locked(struct hostlink *h, struct hostlink_pending *p)
{
	p->used = false;
	if (h->slot_waiters)
		pthread_cond_signal(&h->slot_cond);
}

static void die(struct hostlink *h, int err, const char *why)
{
	pthread_mutex_lock(&h->lock);
	die_locked(h, err, why);
	pthread_mutex_unlock(&h->lock);
}

static int send_frame(struct hostlink *h, struct wse_link_frame *f, const struct iovec *iov,
		      int iovcnt)
{
	struct wse_link_err err;
	size_t bytes = sizeof(struct wse_link_hdr);
	int ret;

	for (int i = 0; i < iovcnt; i++)
		bytes += iov[i].iov_len;
	pthread_mutex_lock(&h->tx_lock);
	ret = wse_link_send(h->fd, f, iov, iovcnt, SEND_MS, &err);
	pthread_mutex_unlock(&h->tx_lock);
	pthread_mutex_lock(&h->lock);
	if (ret) {
		char why[HOSTLINK_TEXT];

		snprintf(why, sizeof(why), "sending failed: %.180s", err.text);
		die_locked(h, ret, why);
	} else {
		h->frames_tx++;
		h->bytes_tx += bytes;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* A request from the peer: answered (KEEPALIVE, SHUTDOWN) or fatal (ERROR). */
static void peer_request(struct hostlink *h, const struct wse_link_frame *f, size_t len)
{
	struct wse_link_frame r = { .version = h->rules.version, .opcode = f->opcode,
				    .flags = WSE_LINK_F_RESPONSE, .queue = f->queue, .tag = f->tag };
	struct wse_link_status st;
	struct iovec iov = { &st, sizeof(st) };
	struct wse_link_err err;
	char text[160], why[HOSTLINK_TEXT];
	uint32_t code;

	switch (f->opcode) {
	case WSE_LINK_OP_KEEPALIVE:
	case WSE_LINK_OP_SHUTDOWN:
		wse_link_status_encode(&st, WSE_LINK_OK);
		send_frame(h, &r, &iov, 1);
		if (f->opcode == WSE_LINK_OP_SHUTDOWN)
			die(h, -ESHUTDOWN, "it shut the link down (stopped?)");
		return;
	case WSE_LINK_OP_ERROR:
		if (wse_link_error_decode(h->rxbuf, len, &code, text, sizeof(text), &err))
			snprintf(text, sizeof(text), "(malformed ERROR)");
		snprintf(why, sizeof(why), "it reported %s: %s", wse_link_status_name(code), text);
		die(h, -ECONNRESET, why);
		return;
	default:
		snprintf(why, sizeof(why), "it sent an unexpected request, opcode 0x%02x", f->opcode);
		die(h, -EPROTO, why);
	}
}

static void *rx_main(void *arg)
{
	struct hostlink *h = arg;

	for (;;) {
		struct wse_link_frame f;
		struct wse_link_err err;
		struct hostlink_pending *p = NULL;
		const uint8_t *rest;
		size_t rest_len;
		uint32_t status;
		char why[HOSTLINK_TEXT];
		int ret;

		ret = wse_link_recv(h->fd, &h->rules, &f, h->rxbuf, h->rules.max_payload, -1, &err);
		if (ret) {
			snprintf(why, sizeof(why), "%s",
				 ret == -EPIPE ? "the connection closed (the process is gone?)" : err.text);
			die(h, ret, why);
			break;
		}
		pthread_mutex_lock(&h->lock);
		h->frames_rx++;
		h->bytes_rx += sizeof(struct wse_link_hdr) + f.length;
		pthread_mutex_unlock(&h->lock);
		if (!(f.flags & WSE_LINK_F_RESPONSE)) {
			peer_request(h, &f, f.length);
			if (!hostlink_up(h, NULL, 0))
				break;
			continue;
		}
		if (wse_link_status_decode(h->rxbuf, f.length, &status, &rest, &rest_len, &err)) {
			die(h, -EPROTO, err.text);
			break;
		}
		pthread_mutex_lock(&h->lock);
		for (int i = 0; i < HOSTLINK_PENDING && !p; i++)
			if (h->pending[i].used && !h->pending[i].done && h->pending[i].tag == f.tag)
				p = &h->pending[i];
		if (!p) {
			snprintf(why, sizeof(why), "it answered tag %u, which nothing waits for", f.tag);
			die_locked(h, -EPROTO, why);
			pthread_mutex_unlock(&h->lock);
			break;
		}
		if (p->op != f.opcode || p->queue != f.queue) {
			snprintf(why, sizeof(why),
				 "its answer to tag %u carries opcode 0x%02x on queue %u, not the request's 0x%02x on queue %u",
				 f.tag, f.opcode, f.queue, p->op, p->queue);
			die_locked(h, -EPROTO, why);
			pthread_mutex_unlock(&h->lock);
			break;
		}
		if (p->forgotten) {
			release_locked(h, p);
			pthread_mutex_unlock(&h->lock);
			continue;
		}
		p->status = status;
		if (status != WSE_LINK_OK) {
			size_t n = rest_len < sizeof(p->text) - 1 ? rest_len : sizeof(p->text) - 1;

			for (size_t i = 0; i < n; i++)
				p->text[i] = rest[i] >= 0x20 && rest[i] < 0x7f ? (char)rest[i] : '?';
			p->text[n] = 0;
			p->len = 0;
		} else if (rest_len > p->cap) {
			snprintf(why, sizeof(why), "its reply of %zu bytes exceeds the %zu asked for",
				 rest_len, p->cap);
			die_locked(h, -EPROTO, why);
			pthread_mutex_unlock(&h->lock);
			break;
		} else {
			if (rest_len)
				memcpy(p->out, rest, rest_len);
			p->len = rest_len;
		}
		p->done = true;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&h->lock);
	}
	return NULL;
}

int hostlink_open(struct hostlink *h, const char *name, const char *addr, uint32_t caps,
		  int timeout_ms, char *text, size_t textlen)
{
	struct wse_link_hello_info hello = {
		.version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.caps = caps, .max_payload = WSE_LINK_PAYLOAD_LIMIT,
	};
	struct wse_link_client cl;
	struct wse_link_addr a;
	struct wse_link_err err;
	char why[256] = "";
	uint32_t status;
	int fd, ret;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	snprintf(h->name, sizeof(h->name), "%s", name);
	pthread_mutex_init(&h->tx_lock, NULL);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->slot_cond, NULL);
	for (int i = 0; i < HOSTLINK_PENDING; i++)
		pthread_cond_init(&h->pending[i].cond, NULL);
	if (wse_link_addr_parse(addr, &a, why, sizeof(why))) {
		snprintf(text, textlen, "%s: %s", name, why);
		return -EINVAL;
	}
	fd = wse_link_connect(&a, timeout_ms, why, sizeof(why));
	if (fd < 0) {
		snprintf(text, textlen, "%s: %s", name, why);
		return fd;
	}
	ret = wse_link_client_hello(&cl, fd, &hello, timeout_ms, &status, why, sizeof(why), &err);
	if (!ret && status)
		ret = -EPROTO;
	if (ret) {
		snprintf(text, textlen, "%s: handshake failed: %s%s", name, err.text, why);
		wse_link_client_free(&cl);
		close(fd);
		return ret;
	}
	h->fd = fd;
	h->rules = cl.rules;
	h->dev = cl.dev;
	h->appliance = cl.appliance;
	h->next_tag = 1;
	wse_link_client_free(&cl);
	h->rxbuf = malloc(h->rules.max_payload);
	if (!h->rxbuf) {
		close(fd);
		h->fd = -1;
		snprintf(text, textlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	ret = -pthread_create(&h->rx, NULL, rx_main, h);
	if (ret) {
		free(h->rxbuf);
		close(fd);
		h->fd = -1;
		snprintf(text, textlen, "%s: no receive thread: %s", name, strerror(-ret));
		return ret;
	}
	h->rx_started = true;
	return 0;
}

void hostlink_close(struct hostlink *h)
{
	if (h->fd >= 0)
		shutdown(h->fd, SHUT_RDWR);
	if (h->rx_started)
		pthread_join(h->rx, NULL);
	die(h, -ECONNRESET, "the appliance closed the link");
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	h->rx_started = false;
	free(h->rxbuf);
	h->rxbuf = NULL;
}

bool hostlink_up(struct hostlink *h, char *why, size_t len)
{
	bool up;

	pthread_mutex_lock(&h->lock);
	up = !h->dead && h->fd >= 0;
	if (!up && why)
		snprintf(why, len, "%s", h->dead ? h->reason : "not connected");
	pthread_mutex_unlock(&h->lock);
	return up;
}

int hostlink_submit(struct hostlink *h, uint8_t op, uint16_t queue, const struct iovec *iov,
		    int iovcnt, void *out, size_t cap, uint32_t *tag)
{
	struct hostlink_pending *p = NULL;
	struct wse_link_frame f = { .version = h->rules.version, .opcode = op, .queue = queue };

	pthread_mutex_lock(&h->lock);
	for (;;) {
		if (h->dead || h->fd < 0) {
			int err = h->dead ? h->dead_err : -ENOTCONN;

			pthread_mutex_unlock(&h->lock);
			return err ? err : -ECONNRESET;
		}
		for (int i = 0; i < HOSTLINK_PENDING && !p; i++)
			if (!h->pending[i].used)
				p = &h->pending[i];
		if (p)
			break;
		h->slot_waiters++;
		pthread_cond_wait(&h->slot_cond, &h->lock);
		h->slot_waiters--;
	}
	p->used = true;
	p->done = p->forgotten = false;
	p->tag = h->next_tag++;
	p->op = op;
	p->queue = queue;
	p->out = out;
	p->cap = cap;
	p->len = 0;
	p->status = 0;
	p->err = 0;
	p->text[0] = 0;
	if (!h->next_tag)
		h->next_tag = 1;
	f.tag = p->tag;
	*tag = p->tag;
	pthread_mutex_unlock(&h->lock);
	return send_frame(h, &f, iov, iovcnt);
}

int hostlink_wait(struct hostlink *h, uint32_t tag, int timeout_ms, uint32_t *status,
		  size_t *len, char *text, size_t textlen)
{
	struct hostlink_pending *p = NULL;
	struct timespec until = hostlink_deadline(timeout_ms);
	int ret = 0;

	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < HOSTLINK_PENDING && !p; i++)
		if (h->pending[i].used && h->pending[i].tag == tag)
			p = &h->pending[i];
	if (!p) {
		pthread_mutex_unlock(&h->lock);
		snprintf(text, textlen, "%s: no request with tag %u", h->name, tag);
		return -EINVAL;
	}
	while (!p->done && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&p->cond, &h->lock, &until);
	if (!p->done) {
		/* Still pending: the caller may wait again, or give up with hostlink_forget(). */
		snprintf(text, textlen, "%s did not answer within %d ms", h->name, timeout_ms);
		pthread_mutex_unlock(&h->lock);
		return -ETIMEDOUT;
	} else if (p->err) {
		snprintf(text, textlen, "%s went away: %s", h->name, h->reason);
		ret = p->err;
	} else {
		*status = p->status;
		if (len)
			*len = p->len;
		if (p->status)
			snprintf(text, textlen, "%s", p->text);
		ret = 0;
	}
	release_locked(h, p);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

bool hostlink_refused(struct hostlink *h, uint32_t tag, uint32_t *status, char *text,
		      size_t textlen)
{
	bool refused = false;

	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < HOSTLINK_PENDING; i++) {
		struct hostlink_pending *p = &h->pending[i];

		if (p->used && p->tag == tag && p->done && !p->err && p->status) {
			*status = p->status;
			snprintf(text, textlen, "%s", p->text);
			refused = true;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return refused;
}

void hostlink_forget(struct hostlink *h, uint32_t tag)
{
	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < HOSTLINK_PENDING; i++)
		if (h->pending[i].used && h->pending[i].tag == tag) {
			/* An answer may still come: the slot stays until it does or the link dies. */
			h->pending[i].forgotten = true;
			/* It came already, before anyone waited for it: nobody will. */
			if (h->pending[i].done)
				release_locked(h, &h->pending[i]);
		}
	pthread_mutex_unlock(&h->lock);
}

int hostlink_cancel(struct hostlink *h, uint32_t tag)
{
	struct wse_link_cancel raw;
	struct iovec iov = { &raw, sizeof(raw) };
	uint32_t ctag;
	int ret;

	if (!(h->dev.caps & WSE_LINK_CAP_CANCEL))
		return -EOPNOTSUPP;
	wse_link_cancel_encode(&raw, tag);
	ret = hostlink_submit(h, WSE_LINK_OP_CANCEL, 0, &iov, 1, NULL, 0, &ctag);
	if (!ret)
		hostlink_forget(h, ctag);
	return ret;
}

int hostlink_call(struct hostlink *h, uint8_t op, uint16_t queue, const struct iovec *iov,
		  int iovcnt, void *out, size_t cap, size_t *len, int timeout_ms, char *text,
		  size_t textlen)
{
	char why[HOSTLINK_TEXT];
	uint32_t tag, status;
	int ret = hostlink_submit(h, op, queue, iov, iovcnt, out, cap, &tag);

	if (ret) {
		hostlink_up(h, why, sizeof(why));
		snprintf(text, textlen, "%s went away: %s", h->name, why);
		return ret;
	}
	ret = hostlink_wait(h, tag, timeout_ms, &status, len, text, textlen);
	if (ret == -ETIMEDOUT)
		hostlink_forget(h, tag);
	if (ret)
		return ret;
	if (status) {
		snprintf(why, sizeof(why), "%s", text);
		snprintf(text, textlen, "%s refused %s (%s): %s", h->name, wse_link_op_name(op),
			 wse_link_status_name(status), why);
		return -EIO;
	}
	return 0;
}
