// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse PARAMS_READ / PARAMS_WRITE of a pipelined program's resident
 * parameters. The layout of what they address is the link's
 * (Documentation/link-protocol.rst): WSE_LINK_PARAMS_WEIGHTS is the .wsep
 * weights layout; WSE_LINK_PARAMS_OPT_STATE the state arrays one after
 * another and then the optimizer's step count, a little-endian u64;
 * WSE_LINK_PARAMS_SNAPSHOT the weights, the state arrays, the step count
 * and a CRC32C of the two. That layout is known here only: callers see a
 * struct wse_params.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "wse_internal.h"
#include "wse_link.h"

/* One region (or part of one, from byte @offset) through @op. */
static int params_xfer(struct wse_ring *r, uint32_t op, uint32_t slot, uint32_t which,
		       uint64_t offset, void *buf, size_t len)
{
	struct wse_xfer x = { .op = op, .args = { slot, which, offset }, .buf = buf, .len = len,
			      .unit = 4 };
	size_t done = 0;
	int ret;

	if (!len)
		return 0;
	ret = wse_ring_xfer(r, &x, &done);
	return !ret && op == DRM_WSE_OP_PARAMS_READ && done != len ? -EIO : ret;
}

/* Weights, state arrays, step count: @op one way or the other. */
static int params_move(struct wse_ring *r, uint32_t op, uint32_t slot, const struct wse_params *p,
		       uint64_t *step_le)
{
	size_t wbytes = p->floats * sizeof(float), sbytes = p->state_arrays * wbytes;
	int ret;

	if (!p->floats || p->state_arrays > 2 || !p->weights || (sbytes && !p->state))
		return -EINVAL;
	ret = params_xfer(r, op, slot, WSE_LINK_PARAMS_WEIGHTS, 0, p->weights, wbytes);
	if (!ret)
		ret = params_xfer(r, op, slot, WSE_LINK_PARAMS_OPT_STATE, 0, p->state, sbytes);
	if (!ret)
		ret = params_xfer(r, op, slot, WSE_LINK_PARAMS_OPT_STATE, sbytes, step_le,
				  sizeof(*step_le));
	return ret;
}

int wse_params_read(struct wse_ring *ring, uint32_t slot, struct wse_params *p)
{
	uint64_t le = 0;
	int ret = params_move(ring, DRM_WSE_OP_PARAMS_READ, slot, p, &le);

	if (!ret)
		p->step = le64toh(le);
	return ret;
}

int wse_params_write(struct wse_ring *ring, uint32_t slot, const struct wse_params *p)
{
	uint64_t le = htole64(p->step);

	return params_move(ring, DRM_WSE_OP_PARAMS_WRITE, slot, p, &le);
}

int wse_params_snapshot_at(struct wse_ring *ring, uint32_t slot, uint64_t step)
{
	uint64_t le = htole64(step);

	return params_xfer(ring, DRM_WSE_OP_PARAMS_WRITE, slot, WSE_LINK_PARAMS_SNAPSHOT, 0, &le,
			   sizeof(le));
}

int wse_params_snapshot_sum(struct wse_ring *ring, uint32_t slot, uint64_t floats,
			    unsigned int state_arrays, uint64_t *step, uint32_t *crc)
{
	uint64_t body = floats * sizeof(float) * (1 + state_arrays);
	uint8_t trailer[16];
	uint64_t s;
	uint32_t c;
	int ret;

	if (!floats || state_arrays > 2)
		return -EINVAL;
	ret = params_xfer(ring, DRM_WSE_OP_PARAMS_READ, slot, WSE_LINK_PARAMS_SNAPSHOT, body,
			  trailer, sizeof(trailer));
	if (ret)
		return ret;
	memcpy(&s, trailer, 8);
	memcpy(&c, trailer + 8, 4);
	*step = le64toh(s);
	*crc = le32toh(c);
	return 0;
}

int wse_params_read_snapshot(struct wse_ring *ring, uint32_t slot, struct wse_params *p,
			     uint32_t *crc)
{
	size_t wbytes = p->floats * sizeof(float), sbytes = p->state_arrays * wbytes;
	int ret;

	if (!p->floats || p->state_arrays > 2 || !p->weights || (sbytes && !p->state))
		return -EINVAL;
	ret = params_xfer(ring, DRM_WSE_OP_PARAMS_READ, slot, WSE_LINK_PARAMS_SNAPSHOT, 0,
			  p->weights, wbytes);
	if (!ret)
		ret = params_xfer(ring, DRM_WSE_OP_PARAMS_READ, slot, WSE_LINK_PARAMS_SNAPSHOT,
				  wbytes, p->state, sbytes);
	if (!ret)
		ret = wse_params_snapshot_sum(ring, slot, p->floats, p->state_arrays, &p->step,
					      crc);
	return ret;
}

int wse_params_snapshot_store(struct wse_ring *ring, uint32_t slot, uint64_t step,
			      uint64_t offset, const char *name)
{
	struct wse_link_snapshot_store req = { .step = htole64(step), .offset = htole64(offset) };

	if (strlen(name) >= sizeof(req.name))
		return -ENAMETOOLONG;
	memcpy(req.name, name, strlen(name) + 1);
	return params_xfer(ring, DRM_WSE_OP_PARAMS_WRITE, slot, WSE_LINK_PARAMS_SNAPSHOT_STORE, 0,
			   &req, sizeof(req));
}
