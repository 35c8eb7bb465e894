// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse stream batches (wse_stream_batch): what goes in on one ring and
 * what comes back on the other, prepared and submitted together, then
 * reaped. Transfers too long for one command go first, one at a time,
 * through wse_ring_xfer(), which keeps a stream's pieces in order; a read
 * that came back short is carried on the same way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "wse_internal.h"

static bool is_read(const struct wse_stream_io *io)
{
	return io->op == DRM_WSE_OP_STREAM_READ;
}

/* Does @io fit one command of @r (a whole number of records)? */
static bool one_command(const struct wse_ring *r, const struct wse_stream_io *io)
{
	uint64_t piece = r->p.piece;

	if (io->record > 1)
		piece -= piece % io->record;
	return io->len <= piece;
}

/* All of @len bytes at @buf through @r, a piece at a time. */
static int whole(struct wse_ring *r, uint32_t slot, const struct wse_stream_io *io, size_t from)
{
	size_t have = from, got;
	int ret;

	if (!is_read(io))
		return wse_stream_write(r, slot, io->stream, io->record, io->buf, io->len);
	while (have < io->len) {
		ret = wse_stream_read(r, slot, io->stream, io->record, (uint8_t *)io->buf + have,
				      io->len - have, &got);
		if (ret)
			return ret;
		if (!got)
			return -EIO;
		have += got;
	}
	return 0;
}

/* Reaps @want completions of @r into @res, indexed by command. */
static int reap(struct wse_ring *r, unsigned int want, int32_t *res)
{
	struct wse_completion c[64];
	int n;

	while (want) {
		n = wse_ring_reap(r, c, want < 64 ? want : 64, 1,
				  wse_deadline_ns(wse_ring_wait_ms(r)));
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			res[c[i].user_data] = c[i].res;
		want -= (unsigned int)n;
	}
	return 0;
}

/*
 * Prepares every one-command transfer of @io on its ring and sends them;
 * a ring with no room left is sent and reaped before more go on it.
 */
static int all_at_once(struct wse_ring *in, struct wse_ring *out, uint32_t slot,
		       const struct wse_stream_io *io, unsigned int n, int32_t *res)
{
	struct wse_ring *rings[2] = { in, out };
	unsigned int queued[2] = { 0, 0 };
	int ret = 0, r;

	for (unsigned int i = 0; i < n && !ret; i++) {
		int side = is_read(&io[i]) && out != in;
		struct wse_cmd c = {
			.op = io[i].op, .args = { slot, io[i].stream }, .buf = io[i].buf,
			.len = (uint32_t)io[i].len, .user_data = i,
		};

		res[i] = 0;
		if (!one_command(rings[side], &io[i]))
			continue;
		ret = wse_ring_prep(rings[side], &c);
		if (ret == -EBUSY && queued[side]) {
			/* The ring is full: let what is on it finish first. */
			ret = wse_ring_submit(rings[side]);
			if (ret >= 0)
				ret = reap(rings[side], queued[side], res);
			queued[side] = 0;
			if (!ret)
				ret = wse_ring_prep(rings[side], &c);
		}
		if (!ret)
			queued[side]++;
	}
	/* Everything prepared goes out, even after a failure: then it is reaped. */
	for (int side = 0; side < 2; side++)
		if (queued[side] && (r = wse_ring_submit(rings[side])) < 0 && !ret)
			ret = r;
	for (int side = 0; side < 2; side++)
		if (queued[side] && (r = reap(rings[side], queued[side], res)) && !ret)
			ret = r;
	return ret;
}

int wse_stream_batch(struct wse_ring *in, struct wse_ring *out, uint32_t slot,
		     const struct wse_stream_io *io, unsigned int n)
{
	int32_t *res;
	int ret = 0;

	for (unsigned int i = 0; i < n; i++)
		if (!io[i].buf || !io[i].len ||
		    (io[i].op != DRM_WSE_OP_STREAM_WRITE && !is_read(&io[i])))
			return -EINVAL;
	res = calloc(n ? n : 1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	for (unsigned int i = 0; i < n && !ret; i++)
		if (!one_command(is_read(&io[i]) ? out : in, &io[i]))
			ret = whole(is_read(&io[i]) ? out : in, slot, &io[i], 0);
	if (!ret)
		ret = all_at_once(in, out, slot, io, n, res);
	for (unsigned int i = 0; i < n && !ret; i++) {
		if (!one_command(is_read(&io[i]) ? out : in, &io[i]))
			continue;
		if (res[i] < 0)
			ret = res[i];
		/* A read that came back short: the rest, in order. */
		else if (is_read(&io[i]) && (size_t)res[i] < io[i].len)
			ret = whole(out, slot, &io[i], (size_t)res[i]);
	}
	free(res);
	return ret;
}
