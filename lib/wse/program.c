// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse programs: a .wsep image goes to the device as PROGRAM_LOAD jobs
 * of at most max-job-bytes each, in order on one queue; the last piece's
 * reply (the placement) overwrites the start of that piece in the buffer
 * object, so the last piece is kept at least as long as the reply.
 */
#include <errno.h>
#include <string.h>

#include "wse/link_payloads.h"
#include "wse_internal.h"

#define LOAD_WINDOW	4	/* pieces in flight at once */
/*
 * Per piece: the kernel ends a job at its queue's timeout (at most
 * DRM_WSE_TIMEOUT_MS_MAX), so wait past the longest, and a minute more.
 * A shorter wait gave up on a 606 MB program whose last piece an
 * appliance was still taking in, while the kernel still waited for it.
 */
#define LOAD_WAIT_MS	(DRM_WSE_TIMEOUT_MS_MAX + 60000)

/* Length of the piece at @off, leaving a remainder of 0 or >= @tail bytes. */
static uint64_t piece_len(uint64_t len, uint64_t off, uint64_t piece, uint64_t tail)
{
	uint64_t l = len - off < piece ? len - off : piece;
	uint64_t rest = len - off - l;

	if (rest && rest < tail)
		l -= tail - rest;
	return l;
}

static int wait_piece(struct wse_dev *dev, uint32_t queue_id, uint64_t job_id, uint32_t *rlen)
{
	int status, ret;

	ret = wse_wait(dev, queue_id, job_id, wse_deadline_ns(LOAD_WAIT_MS), &status, rlen);
	return ret ? ret : status;
}

int wse_program_load(struct wse_dev *dev, uint32_t queue_id, uint32_t slot,
		     const void *image, size_t len, struct wse_program_info *info)
{
	const uint64_t tail = sizeof(struct wse_link_program_info);
	uint64_t ids[LOAD_WINDOW], off = 0, last_off = 0, piece = dev->max_job_bytes;
	unsigned int head = 0, count = 0;
	struct wse_link_prog_info pi;
	struct wse_link_err err;
	struct wse_bo bo;
	uint32_t rlen = 0;
	int ret, first = 0;

	if (slot < 1 || slot > 255 || !image || len < tail)
		return -EINVAL;
	if (piece <= tail)
		return -ENOTCONN;	/* a device without a link takes no jobs */
	ret = wse_bo_alloc(dev, len, &bo);
	if (!ret)
		ret = wse_bo_map(dev, &bo);
	if (ret)
		goto out;
	memcpy(bo.map, image, len);

	while ((off < len && !first) || count) {
		if (off < len && count < LOAD_WINDOW && !first) {
			uint64_t l = piece_len(len, off, piece, tail);
			struct wse_job job = {
				.op = DRM_WSE_OP_PROGRAM_LOAD, .handle = bo.handle,
				.bo_offset = off, .length = l,
				.args = { slot, off + l == len ? 1 : 0, len, off },
			};

			ret = wse_submit(dev, queue_id, &job, &ids[(head + count) % LOAD_WINDOW]);
			if (!ret) {
				last_off = off;
				off += l;
				count++;
				continue;
			}
			if (ret != -EBUSY || !count) {
				first = ret;
				if (!count)
					break;
			}
		}
		/* Collect the oldest piece; after a failure, collect the rest. */
		ret = wait_piece(dev, queue_id, ids[head], &rlen);
		if (ret && !first)
			first = ret;
		head = (head + 1) % LOAD_WINDOW;
		count--;
	}
	ret = first;
	if (!ret && info) {
		if (wse_link_prog_info_decode((uint8_t *)bo.map + last_off, rlen, &pi, &err)) {
			ret = -EPROTO;
		} else {
			info->slot = pi.program;
			info->mode = pi.mode;
			info->num_layers = pi.num_layers;
			info->num_streams = pi.num_streams;
			info->batch = pi.batch;
			info->sram_bytes = pi.sram_bytes;
			info->est_cycles_per_step = pi.est_cycles_per_step;
		}
	}
out:
	if (bo.handle)
		wse_bo_free(dev, &bo);
	return ret;
}

int wse_program_unload(struct wse_dev *dev, uint32_t queue_id, uint32_t slot)
{
	struct wse_job job = { .op = DRM_WSE_OP_PROGRAM_UNLOAD, .args = { slot } };
	uint64_t id;
	int ret;

	if (slot < 1 || slot > 255)
		return -EINVAL;
	ret = wse_submit(dev, queue_id, &job, &id);
	return ret ? ret : wait_piece(dev, queue_id, id, NULL);
}
