// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse io_uring transfers: DRM_WSE_URING_CMD_JOB commands on a ring of
 * the library's own (128-byte SQEs for the 64-byte payload) and a queue of
 * its own, many in flight, submitted in batches, on plain or registered
 * memory. liburing 2.3 has no helper for URING_CMD: SQEs are filled here.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "wse_internal.h"

#define RING_DEFAULT_DEPTH	64
#define RING_WAIT_MARGIN_MS	20000	/* beyond a command's own timeout */

int wse_ring_open(struct wse_dev *dev, const struct wse_ring_params *params,
		  struct wse_ring **out)
{
	struct io_uring_params up = { .flags = IORING_SETUP_SQE128 };
	struct wse_ring *r;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (params)
		r->p = *params;
	if (!r->p.depth)
		r->p.depth = RING_DEFAULT_DEPTH;
	if (r->p.depth > DRM_WSE_MAX_QUEUE_DEPTH || r->p.timeout_ms > DRM_WSE_TIMEOUT_MS_MAX) {
		free(r);
		return -EINVAL;
	}
	if (!r->p.batch)
		r->p.batch = r->p.depth / 4 ? r->p.depth / 4 : 1;
	if (r->p.batch > r->p.depth)
		r->p.batch = r->p.depth;
	if (!r->p.piece || r->p.piece > dev->max_job_bytes)
		r->p.piece = (uint32_t)(dev->max_job_bytes < UINT32_MAX ?
					dev->max_job_bytes : UINT32_MAX);
	r->dev = dev;
	ret = wse_queue_create(dev, r->p.hw_queue, r->p.depth, r->p.timeout_ms, &r->queue_id);
	if (ret) {
		free(r);
		return ret;
	}
	ret = io_uring_queue_init_params(r->p.depth, &r->ring, &up);
	if (ret) {
		wse_queue_destroy(dev, r->queue_id);
		free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void wse_ring_close(struct wse_ring *r)
{
	struct wse_completion c[16];

	if (!r)
		return;
	if (r->queued)
		wse_ring_submit(r);
	/* Let what is in flight finish; the kernel's job timeout bounds it. */
	while (r->inflight &&
	       wse_ring_reap(r, c, 16, 1, wse_deadline_ns(DRM_WSE_TIMEOUT_MS_DEFAULT +
							  RING_WAIT_MARGIN_MS)) > 0)
		;
	io_uring_queue_exit(&r->ring);
	wse_queue_destroy(r->dev, r->queue_id);
	free(r->regs);
	free(r);
}

void wse_ring_get_stats(const struct wse_ring *r, struct wse_ring_stats *st)
{
	*st = r->st;
}

int wse_ring_register(struct wse_ring *r, const struct iovec *iov, unsigned int n)
{
	struct iovec *copy;
	int ret;

	if (!n || r->nregs)
		return r->nregs ? -EBUSY : -EINVAL;
	copy = calloc(n, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, iov, n * sizeof(*copy));
	ret = io_uring_register_buffers(&r->ring, iov, n);
	if (ret) {
		free(copy);
		return ret;
	}
	r->regs = copy;
	r->nregs = n;
	return 0;
}

int wse_ring_unregister(struct wse_ring *r)
{
	int ret;

	if (!r->nregs)
		return -ENOENT;
	ret = io_uring_unregister_buffers(&r->ring);
	free(r->regs);
	r->regs = NULL;
	r->nregs = 0;
	return ret;
}

/* The registered buffer holding all of [buf, buf + len), or -1. */
static int fixed_index(const struct wse_ring *r, const void *buf, size_t len)
{
	uintptr_t a = (uintptr_t)buf;
	unsigned int i;

	for (i = 0; i < r->nregs; i++) {
		uintptr_t b = (uintptr_t)r->regs[i].iov_base;

		if (a >= b && len <= r->regs[i].iov_len && a - b <= r->regs[i].iov_len - len)
			return (int)i;
	}
	return -1;
}

/* Puts one command on the SQ; @flags are IOSQE_* flags. */
static int prep(struct wse_ring *r, const struct wse_cmd *cmd, int fixed, uint8_t flags)
{
	struct drm_wse_uring_job job = {
		.queue_id = r->queue_id, .op = cmd->op, .addr = (uintptr_t)cmd->buf,
		.length = cmd->len, .timeout_ms = r->p.timeout_ms,
		.args = { cmd->args[0], cmd->args[1], cmd->args[2], cmd->args[3] },
	};
	struct io_uring_sqe *sqe;

	if (r->queued + r->inflight >= r->p.depth)
		return -EBUSY;
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = r->dev->fd;
	sqe->flags = flags;
	sqe->cmd_op = DRM_WSE_URING_CMD_JOB;
	sqe->user_data = cmd->user_data;
	if (fixed >= 0) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = (uint16_t)fixed;
		r->st.fixed++;
	}
	memcpy(sqe->cmd, &job, sizeof(job));
	r->queued++;
	return 0;
}

int wse_ring_prep(struct wse_ring *r, const struct wse_cmd *cmd)
{
	return prep(r, cmd, cmd->len ? fixed_index(r, cmd->buf, cmd->len) : -1, 0);
}

int wse_ring_submit(struct wse_ring *r)
{
	int n;

	if (!r->queued)
		return 0;
	do {
		n = io_uring_submit(&r->ring);
	} while (n == -EINTR);
	if (n < 0)
		return n;
	r->queued -= (unsigned int)n;
	r->inflight += (unsigned int)n;
	if (n)
		r->st.submits++;
	if (r->inflight > r->st.max_inflight)
		r->st.max_inflight = r->inflight;
	return n;
}

/* Moves ready CQEs to @out; returns how many. */
static unsigned int take(struct wse_ring *r, struct wse_completion *out, unsigned int max)
{
	struct io_uring_cqe *cqe;
	unsigned int n = 0;

	while (n < max && !io_uring_peek_cqe(&r->ring, &cqe)) {
		out[n].user_data = cqe->user_data;
		out[n].res = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		n++;
	}
	r->inflight -= n;
	r->st.commands += n;
	return n;
}

int wse_ring_reap(struct wse_ring *r, struct wse_completion *out, unsigned int max,
		  unsigned int min, int64_t deadline_ns)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	unsigned int got = 0;
	int64_t left;
	int ret;

	if (min > max || min > r->inflight)
		return -EINVAL;
	got = take(r, out, max);
	while (got < min) {
		left = deadline_ns - wse_deadline_ns(0);
		if (left <= 0)
			return got ? (int)got : -ETIME;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		ret = io_uring_wait_cqes(&r->ring, &cqe, min - got, &ts, NULL);
		if (ret && ret != -EINTR && ret != -ETIME)
			return got ? (int)got : ret;
		got += take(r, out + got, max - got);
	}
	return (int)got;
}

int64_t wse_ring_wait_ms(const struct wse_ring *r)
{
	return (r->p.timeout_ms ? r->p.timeout_ms : DRM_WSE_TIMEOUT_MS_DEFAULT) + RING_WAIT_MARGIN_MS;
}

static bool op_receives(uint32_t op)
{
	return op < 64 && (DRM_WSE_OPS_RECEIVE >> op & 1);
}

int wse_ring_xfer(struct wse_ring *r, const struct wse_xfer *x, size_t *done)
{
	const bool memory = x->op == DRM_WSE_OP_MEM_WRITE || x->op == DRM_WSE_OP_MEM_READ;
	const bool params = x->op == DRM_WSE_OP_PARAMS_WRITE || x->op == DRM_WSE_OP_PARAMS_READ;
	const bool receives = op_receives(x->op);
	struct wse_completion c[64];
	uint64_t piece = r->p.piece;
	size_t npieces, next = 0, i, total = 0, moved;
	uint32_t *got = NULL;
	int fixed, first = 0, n, k;
	/*
	 * Memory and parameter pieces name their own offsets and go depth at
	 * a time. A
	 * stream's pieces go one at a time: the driver would keep them in
	 * order, but a stream write waiting for room holds its queue, and
	 * the device refuses (E_BUSY) what passes its read-ahead of 256
	 * requests or 256 MiB (the RUN that would make room, submitted from
	 * elsewhere, could be crowded out).
	 */
	const unsigned int window = memory || params ? r->p.depth : 1;

	if (done)
		*done = 0;
	if (!piece)
		return -ENOTCONN;	/* no link: the device takes no jobs */
	if (!x->buf || !x->len)
		return -EINVAL;
	if (r->queued || r->inflight)
		return -EBUSY;		/* single commands of the caller's pending */
	if (x->unit > 1) {
		if (x->unit > piece)
			return -E2BIG;	/* one record does not fit a command */
		piece -= piece % x->unit;
	}
	npieces = (x->len + piece - 1) / piece;
	if (receives) {
		got = calloc(npieces, sizeof(*got));
		if (!got)
			return -ENOMEM;
	}
	fixed = fixed_index(r, x->buf, x->len);

	while ((next < npieces && !first) || r->inflight || r->queued) {
		while (next < npieces && !first && r->queued + r->inflight < window) {
			uint64_t off = next * piece;
			struct wse_cmd cmd = {
				.op = x->op, .buf = (uint8_t *)x->buf + off,
				.len = (uint32_t)(x->len - off < piece ? x->len - off : piece),
				.args = { x->args[0], x->args[1], x->args[2], x->args[3] },
				.user_data = next,
			};
			if (memory)
				cmd.args[0] += off;
			else if (params)
				cmd.args[2] += off;
			n = prep(r, &cmd, fixed, 0);
			if (n) {
				first = n;
				break;
			}
			next++;
			if (r->queued >= r->p.batch) {
				n = wse_ring_submit(r);
				if (n < 0 && !first)
					first = n;
				if (n < 0)
					break;
			}
		}
		if (r->queued) {
			n = wse_ring_submit(r);
			if (n < 0) {
				/* Nothing more can go out: drop what is prepared. */
				if (!first)
					first = n;
				if (!r->inflight)
					break;
			}
		}
		if (!r->inflight)
			continue;
		n = wse_ring_reap(r, c, 64, 1, wse_deadline_ns(wse_ring_wait_ms(r)));
		if (n < 0) {
			if (!first)
				first = n;
			break;	/* the kernel stopped answering: give up */
		}
		for (k = 0; k < n; k++) {
			if (c[k].res < 0) {
				if (!first)
					first = c[k].res;
			} else if (receives) {
				got[c[k].user_data] = (uint32_t)c[k].res;
			}
		}
	}
	if (!first && done) {
		if (!receives) {
			total = x->len;
		} else {
			/* Pack short replies together, in order. */
			for (i = 0; i < npieces; i++) {
				moved = got[i];
				if (total != i * piece && moved)
					memmove((uint8_t *)x->buf + total,
						(uint8_t *)x->buf + i * piece, moved);
				total += moved;
			}
		}
		*done = total;
	}
	free(got);
	return first;
}

int wse_mem_write(struct wse_ring *r, uint64_t dev_addr, const void *buf, size_t len)
{
	struct wse_xfer x = { .op = DRM_WSE_OP_MEM_WRITE, .args = { dev_addr },
			      .buf = (void *)buf, .len = len };

	return wse_ring_xfer(r, &x, NULL);
}

int wse_mem_read(struct wse_ring *r, uint64_t dev_addr, void *buf, size_t len)
{
	struct wse_xfer x = { .op = DRM_WSE_OP_MEM_READ, .args = { dev_addr },
			      .buf = buf, .len = len };
	size_t done = 0;
	int ret = wse_ring_xfer(r, &x, &done);

	return !ret && done != len ? -EIO : ret;
}

int wse_stream_write(struct wse_ring *r, uint32_t slot, uint32_t stream, uint32_t record,
		     const void *buf, size_t len)
{
	struct wse_xfer x = { .op = DRM_WSE_OP_STREAM_WRITE, .args = { slot, stream },
			      .buf = (void *)buf, .len = len, .unit = record };

	return wse_ring_xfer(r, &x, NULL);
}

int wse_stream_read(struct wse_ring *r, uint32_t slot, uint32_t stream, uint32_t record,
		    void *buf, size_t len, size_t *got)
{
	struct wse_xfer x = { .op = DRM_WSE_OP_STREAM_READ, .args = { slot, stream },
			      .buf = buf, .len = len, .unit = record };

	return wse_ring_xfer(r, &x, got);
}
