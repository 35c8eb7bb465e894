// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench raw socket: the firmware spoken to directly with libwselink's
 * codec, the link's own limit. It is built like the kernel's side so the
 * comparison is of the paths, not of the threads: RAW_SENDERS threads each
 * frame a piece (the CRC32C over its data is computed outside the lock) and
 * send it whole under a lock, and one receiver checks each response and
 * puts a read's data in place. HELLO offers what the kernel offers, so both
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

#define RAW_TRIES	50
#define RAW_IO_MS	10000
#define RAW_SENDERS	2	/* the guest's CPUs */

int raw_open(const char *addr, struct wse_link_client *cl, char *err, size_t errlen)
{
	const struct wse_link_hello_info hello = {
		.version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.caps = WSE_LINK_CAP_MEM | WSE_LINK_CAP_EXEC,
		.max_payload = WSE_LINK_PAYLOAD_LIMIT,
	};
	struct wse_link_addr a;
	struct wse_link_err lerr;
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
				 ret < 0 ? strerror(-ret) : lerr.text);
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

/* One transfer, shared by its threads. */
struct raw_xfer {
	struct wse_link_client *cl;
	enum bench_dir dir;
	uint8_t *buf;
	size_t size, npieces;
	uint32_t piece, tag0;
	unsigned int inflight;
	pthread_mutex_t lock;		/* the counters below */
	pthread_cond_t changed;
	size_t next, answered;
	unsigned int outstanding;
	int err;
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

/* Receives every response in the calling thread. */
static int receive(struct raw_xfer *x)
{
	const struct wse_link_rx_rules *rules = &x->cl->rules;
	uint8_t *rbuf = malloc(rules->max_payload);
	struct wse_link_frame f;
	struct wse_link_err err;
	const uint8_t *rest;
	size_t rest_len, i;
	uint32_t status;
	int ret = rbuf ? 0 : -ENOMEM;

	while (!ret && x->answered < x->npieces) {
		ret = wse_link_recv(x->cl->fd, rules, &f, rbuf, rules->max_payload, BENCH_WAIT_MS,
				    &err);
		if (ret > 0 || (!ret && !(f.flags & WSE_LINK_F_RESPONSE)))
			ret = -EPROTO;	/* no device request is expected (no keepalive) */
		if (ret)
			break;
		i = f.tag - x->tag0;
		if (i >= x->npieces ||
		    wse_link_status_decode(rbuf, f.length, &status, &rest, &rest_len, &err)) {
			ret = -EPROTO;
			break;
		}
		if (status != WSE_LINK_OK) {
			ret = -EIO;
			break;
		}
		if (x->dir == BENCH_D2H) {
			uint64_t off = (uint64_t)i * x->piece;
			size_t len = x->size - off < x->piece ? x->size - off : x->piece;

			if (rest_len != len) {
				ret = -EPROTO;
				break;
			}
			memcpy(x->buf + off, rest, len);
		}
		pthread_mutex_lock(&x->lock);
		x->answered++;
		x->outstanding--;
		pthread_cond_broadcast(&x->changed);
		pthread_mutex_unlock(&x->lock);
	}
	free(rbuf);
	if (ret)
		fail(x, ret);
	return ret;
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
	pthread_t th[RAW_SENDERS];
	int n = 0, ret;

	x.npieces = (size - 1) / x.piece + 1;
	x.tag0 = cl->next_tag;
	cl->next_tag += (uint32_t)x.npieces;
	if (x.npieces == 1) {
		/* One piece: no threads to start (that would cost more than it). */
		sender(&x);
		ret = x.err ? x.err : receive(&x);
		return ret;
	}
	for (n = 0; n < RAW_SENDERS; n++) {
		if (pthread_create(&th[n], NULL, sender, &x)) {
			fail(&x, -EAGAIN);
			break;
		}
	}
	ret = n ? receive(&x) : -EAGAIN;
	while (n--)
		pthread_join(th[n], NULL);
	/* After a failure the stream is out of step: the caller stops. */
	return ret ? ret : x.err;
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
