// SPDX-License-Identifier: GPL-2.0-only
/*
 * One step's transfers on one system, all in flight at once: what goes in
 * on the input ring, what comes back on the output ring, submitted
 * together and then reaped. Within a step a stream is written at most
 * once, or twice with the same bytes (a layer's weights for the forward
 * and the backward pass), so the order io_uring happens to issue them in
 * cannot change what the device sees. A transfer larger than one command
 * goes first, by itself, piece by piece in order.
 */
#include <errno.h>
#include <string.h>

#include "stepio.h"

static int io_slow(struct train_system *s, const struct io_cmd *c)
{
	size_t have, got;
	int ret;

	if (c->op == DRM_WSE_OP_STREAM_WRITE)
		return wse_stream_write(s->in, TRAIN_SLOT, c->stream, c->unit, c->buf, c->len);
	for (have = 0; have < c->len; have += got) {
		ret = wse_stream_read(s->out, TRAIN_SLOT, c->stream, c->unit, (uint8_t *)c->buf + have,
				      c->len - have, &got);
		if (ret)
			return ret;
		if (!got)
			return -EIO;
	}
	return 0;
}

/* Reaps @want completions of @r into @res (by command index). */
static int io_reap(struct wse_ring *r, unsigned int want, int32_t *res)
{
	struct wse_completion c[IO_MAX_CMDS];
	unsigned int have = 0;
	int n;

	while (have < want) {
		n = wse_ring_reap(r, c, IO_MAX_CMDS, 1, wse_deadline_ns(IO_WAIT_MS));
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			res[c[i].user_data] = c[i].res;
		have += (unsigned int)n;
	}
	return 0;
}

int io_run(struct train_system *s, const struct io_cmd *cmds, unsigned int n)
{
	int32_t res[IO_MAX_CMDS];
	unsigned int queued[2] = { 0, 0 };
	uint64_t piece = s->info.max_job_bytes;
	int ret = 0, r;

	if (n > IO_MAX_CMDS)
		return -E2BIG;
	for (unsigned int i = 0; i < n && !ret; i++)
		if (cmds[i].len > piece)
			ret = io_slow(s, &cmds[i]);
	for (unsigned int i = 0; i < n && !ret; i++) {
		const struct io_cmd *c = &cmds[i];
		bool out = c->op == DRM_WSE_OP_STREAM_READ;
		struct wse_cmd w = {
			.op = c->op, .args = { TRAIN_SLOT, c->stream }, .buf = c->buf,
			.len = c->len, .user_data = i,
		};

		res[i] = 0;
		if (c->len > piece)
			continue;
		ret = wse_ring_prep(out ? s->out : s->in, &w);
		if (!ret)
			queued[out]++;
	}
	/* Everything prepared goes out, even after a failure: then it is reaped. */
	if (queued[0] && (r = wse_ring_submit(s->in)) < 0 && !ret)
		ret = r;
	if (queued[1] && (r = wse_ring_submit(s->out)) < 0 && !ret)
		ret = r;
	if (queued[0] && (r = io_reap(s->in, queued[0], res)) && !ret)
		ret = r;
	if (queued[1] && (r = io_reap(s->out, queued[1], res)) && !ret)
		ret = r;
	for (unsigned int i = 0; i < n && !ret; i++) {
		const struct io_cmd *c = &cmds[i];
		struct io_cmd rest = *c;

		if (c->len > piece)
			continue;
		if (res[i] < 0) {
			ret = res[i];
			break;
		}
		/* A read that came back short: the rest, in order. */
		if (c->op == DRM_WSE_OP_STREAM_READ && (uint32_t)res[i] < c->len) {
			rest.buf = (uint8_t *)c->buf + res[i];
			rest.len = c->len - (uint32_t)res[i];
			ret = io_slow(s, &rest);
		}
	}
	return ret;
}
