// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench raw socket: the firmware spoken to directly with libwselink's
 * codec, the link's own limit, so nothing but the socket is serial:
 * RAW_SENDERS threads each frame a piece (the CRC32C over its data is
 * computed outside the lock) and send it whole under a lock; one thread
 * reads responses off the socket and RAW_CHECKERS threads check their CRC
 * and status and put a read's data in place. HELLO offers what the kernel offers, so both
 * negotiate the same frame size. The firmware serves one host at a time and
 * may still be closing the kernel's connection: a refusal is retried.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wsebench.h"
#include "wse/link_addr.h"
#include "wse/link_io.h"

#define RAW_TRIES	50
#define RAW_IO_MS	10000
#define RAW_SENDERS	2	/* the guest's CPUs */
#define RAW_CHECKERS	2
#define RAW_SLOTS	4	/* replies read and waiting for a checker, at most */
#define RAW_TEXT_ROOM	256	/* a refusal's text after its status */

int raw_open(const char *addr, struct wse_link_client *cl, char *err, size_t errlen)
{
	const struct wse_link_hello_info hello = {
		.version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.caps = WSE_LINK_CAP_MEM | WSE_LINK_CAP_EXEC,
		.max_payload = WSE_LINK_PAYLOAD_LIMIT,
	};
	struct wse_link_addr a;
	struct wse_link_err lerr = { 0 };
	char text[200] = "";
	uint32_t status = 0;
	int fd, ret = -EIO, i;

	if (wse_link_addr_parse(addr, &a, err, errlen))
		return -EINVAL;
	for (i = 0; i < RAW_TRIES; i++) {
		if (i)
			usleep(100000);
		fd = wse_link_connect(&a, RAW_IO_MS, err, errlen);
		if (fd < 0) {
			ret = -ECONNREFUSED;
			continue;
		}
		wse_link_tune_socket(fd);
		memset(cl, 0, sizeof(*cl));
		ret = wse_link_client_hello(cl, fd, &hello, RAW_IO_MS, &status, text,
					    sizeof(text), &lerr);
		if (!ret && status == WSE_LINK_OK)
			return 0;
		if (ret)
			snprintf(err, errlen, "HELLO to %s: %s", addr,
				 lerr.text[0] ? lerr.text : strerror(-ret));
		else
			snprintf(err, errlen, "HELLO to %s refused: %s (%s)", addr,
				 wse_link_status_name(status), text);
		ret = ret < 0 ? ret : -EPROTO;
		wse_link_client_free(cl);
		close(fd);
	}
	return ret;
}

void raw_close(struct wse_link_client *cl)
{
	int fd = cl->fd;

	wse_link_client_free(cl);
	close(fd);
}

/* A received frame waiting for its check. */
struct raw_slot {
	uint8_t *buf;
	size_t cap;
	struct wse_link_frame f;
};

/* One transfer, shared by its threads. */
struct raw_xfer {
	struct wse_link_client *cl;
	enum bench_dir dir;
	uint8_t *buf;
	size_t size, npieces;
	uint32_t piece, tag0;
	unsigned int inflight;
	pthread_mutex_t lock;		/* everything below but @tx */
	pthread_cond_t changed;
	size_t next, received, answered;
	unsigned int outstanding;
	int err;
	struct raw_slot slots[RAW_SLOTS];
	unsigned int free_slots[RAW_SLOTS], nfree;
	unsigned int ready[RAW_SLOTS], ready_head, nready;
	pthread_mutex_t tx;		/* one frame at a time on the socket */
};

static void fail(struct raw_xfer *x, int err)
{
	pthread_mutex_lock(&x->lock);
	if (!x->err)
		x->err = err;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
}

static void *sender(void *arg)
{
	struct raw_xfer *x = arg;
	struct wse_link_hdr raw;
	struct wse_link_mem mem;
	struct wse_link_err err;
	struct iovec iov[3];
	size_t i;
	int ret;

	for (;;) {
		struct wse_link_frame f = { .version = x->cl->rules.version };
		uint64_t off;
		uint32_t len;

		pthread_mutex_lock(&x->lock);
		while (!x->err && x->next < x->npieces && x->outstanding >= x->inflight)
			pthread_cond_wait(&x->changed, &x->lock);
		if (x->err || x->next >= x->npieces) {
			pthread_mutex_unlock(&x->lock);
			return NULL;
		}
		i = x->next++;
		x->outstanding++;
		pthread_mutex_unlock(&x->lock);

		off = (uint64_t)i * x->piece;
		len = x->size - off < x->piece ? (uint32_t)(x->size - off) : x->piece;
		wse_link_mem_encode(&mem, off, len);
		iov[1].iov_base = &mem;
		iov[1].iov_len = sizeof(mem);
		iov[2].iov_base = x->buf + off;
		iov[2].iov_len = x->dir == BENCH_H2D ? len : 0;
		f.opcode = x->dir == BENCH_H2D ? WSE_LINK_OP_MEM_WRITE : WSE_LINK_OP_MEM_READ;
		f.tag = x->tag0 + (uint32_t)i;
		f.length = (uint32_t)(iov[1].iov_len + iov[2].iov_len);
		f.data_crc = wse_crc32c_iov(0, &iov[1], 2);
		wse_link_hdr_encode(&raw, &f);
		iov[0].iov_base = &raw;
		iov[0].iov_len = sizeof(raw);
		pthread_mutex_lock(&x->tx);
		ret = wse_link_write_all(x->cl->fd, iov, 3, wse_link_now_ms() + BENCH_WAIT_MS, &err);
		pthread_mutex_unlock(&x->tx);
		if (ret) {
			fail(x, ret);
			return NULL;
		}
	}
}

/* Reads one frame into @s, checking only its header. */
static int read_frame(struct raw_xfer *x, struct raw_slot *s)
{
	const struct wse_link_rx_rules *rules = &x->cl->rules;
	int64_t deadline = wse_link_now_ms() + BENCH_WAIT_MS;
	struct wse_link_hdr raw;
	struct wse_link_err err;
	int ret;

	ret = wse_link_read_all(x->cl->fd, &raw, sizeof(raw), deadline, &err);
	if (!ret)
		ret = wse_link_hdr_decode(&raw, rules, &s->f, &err) ? -EPROTO : 0;
	/* No device request is expected: HELLO asked for no keepalives. */
	if (!ret && (!(s->f.flags & WSE_LINK_F_RESPONSE) || s->f.length > s->cap))
		ret = -EPROTO;
	if (!ret)
		ret = wse_link_read_all(x->cl->fd, s->buf, s->f.length, deadline, &err);
	return ret;
}

/* The payload's CRC, status and tag; a read's data put in place. */
static int check_frame(struct raw_xfer *x, const struct raw_slot *s)
{
	struct wse_link_err err;
	const uint8_t *rest;
	size_t rest_len, i = s->f.tag - x->tag0, len;
	uint32_t status;
	uint64_t off;

	if (wse_link_check_data_crc(&s->f, wse_crc32c(0, s->buf, s->f.length), &err) ||
	    i >= x->npieces ||
	    wse_link_status_decode(s->buf, s->f.length, &status, &rest, &rest_len, &err))
		return -EPROTO;
	if (status != WSE_LINK_OK)
		return -EIO;
	if (x->dir == BENCH_D2H) {
		off = (uint64_t)i * x->piece;
		len = x->size - off < x->piece ? x->size - off : x->piece;
		if (rest_len != len)
			return -EPROTO;
		memcpy(x->buf + off, rest, len);
	}
	return 0;
}

/*
 * Checkers: the CRC over a reply and the copy of its data are most of the
 * receiving work, so they run beside the thread that reads the socket.
 */
static void *checker(void *arg)
{
	struct raw_xfer *x = arg;
	unsigned int k;
	int ret;

	for (;;) {
		pthread_mutex_lock(&x->lock);
		while (!x->err && !x->nready && x->answered < x->npieces)
			pthread_cond_wait(&x->changed, &x->lock);
		if (x->err || x->answered >= x->npieces) {
			pthread_mutex_unlock(&x->lock);
			return NULL;
		}
		k = x->ready[x->ready_head];
		x->ready_head = (x->ready_head + 1) % RAW_SLOTS;
		x->nready--;
		pthread_mutex_unlock(&x->lock);

		ret = check_frame(x, &x->slots[k]);
		pthread_mutex_lock(&x->lock);
		if (ret && !x->err)
			x->err = ret;
		x->free_slots[x->nfree++] = k;
		x->answered++;
		x->outstanding--;
		pthread_cond_broadcast(&x->changed);
		pthread_mutex_unlock(&x->lock);
	}
}

/* Reads every response in the calling thread and hands it to a checker. */
static void reader(struct raw_xfer *x)
{
	unsigned int k;
	int ret;

	while (x->received < x->npieces) {
		pthread_mutex_lock(&x->lock);
		while (!x->err && !x->nfree)
			pthread_cond_wait(&x->changed, &x->lock);
		if (x->err) {
			pthread_mutex_unlock(&x->lock);
			return;
		}
		k = x->free_slots[--x->nfree];
		pthread_mutex_unlock(&x->lock);

		ret = read_frame(x, &x->slots[k]);
		if (ret) {
			fail(x, ret);
			return;
		}
		pthread_mutex_lock(&x->lock);
		x->ready[(x->ready_head + x->nready) % RAW_SLOTS] = k;
		x->nready++;
		x->received++;
		pthread_cond_broadcast(&x->changed);
		pthread_mutex_unlock(&x->lock);
	}
}

static int raw_transfer(struct wse_link_client *cl, unsigned int inflight, enum bench_dir dir,
			uint8_t *buf, size_t size)
{
	struct raw_xfer x = {
		.cl = cl, .dir = dir, .buf = buf, .size = size, .inflight = inflight,
		.piece = cl->rules.max_payload - (uint32_t)sizeof(struct wse_link_mem),
		.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER,
		.tx = PTHREAD_MUTEX_INITIALIZER,
	};
	pthread_t th[RAW_SENDERS + RAW_CHECKERS];
	int n = 0, ret = 0;
	unsigned int k;
	size_t cap;

	x.npieces = (size - 1) / x.piece + 1;
	x.tag0 = cl->next_tag;
	cl->next_tag += (uint32_t)x.npieces;
	/* Room for the largest reply (a read's piece after its status), no more:
	 * small transfers should not pay for buffers they do not use.
	 */
	cap = sizeof(struct wse_link_status) + RAW_TEXT_ROOM +
	      (dir == BENCH_D2H ? (x.npieces > 1 ? x.piece : size) : 0);
	for (k = 0; k < RAW_SLOTS && k < x.npieces && !ret; k++) {
		x.slots[k].cap = cap;
		x.slots[k].buf = malloc(cap);
		if (!x.slots[k].buf)
			ret = -ENOMEM;
		x.free_slots[x.nfree++] = k;
	}
	if (!ret && x.npieces == 1) {
		/* One piece: no threads to start (that would cost more than it). */
		sender(&x);
		ret = x.err;
		if (!ret)
			ret = read_frame(&x, &x.slots[0]);
		if (!ret)
			ret = check_frame(&x, &x.slots[0]);
	} else if (!ret) {
		for (n = 0; n < RAW_SENDERS + RAW_CHECKERS; n++) {
			if (pthread_create(&th[n], NULL, n < RAW_SENDERS ? sender : checker, &x)) {
				fail(&x, -EAGAIN);
				break;
			}
		}
		reader(&x);
		while (n--)
			pthread_join(th[n], NULL);
		/* After a failure the stream is out of step: the caller stops. */
		ret = x.err;
	}
	for (k = 0; k < RAW_SLOTS; k++)
		free(x.slots[k].buf);
	return ret;
}

int bw_raw(struct wse_link_client *cl, unsigned int inflight, enum bench_dir dir, uint8_t *buf,
	   size_t size, size_t total, double max_s, double *mbps)
{
	size_t n = total > size ? total / size : 1, i;
	double t0 = bench_now(), t;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = raw_transfer(cl, inflight, dir, buf, size);
		if (bench_now() - t0 > max_s)
			break;
	}
	t = bench_now() - t0;
	*mbps = (double)size * (double)(i < n ? i + 1 : n) / t / 1e6;
	return ret;
}
