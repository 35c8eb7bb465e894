// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench bandwidth through the driver: the same transfers of device
 * memory through libwse's io_uring path and through SUBMIT/WAIT ioctls on
 * a buffer object (bench_raw.c has the raw socket). Each path keeps
 * several pieces in flight; a transfer ends when its last piece is answered.
 */
#include <errno.h>
#include <string.h>

#include "wsebench.h"

#define MAX_INFLIGHT	256

static size_t transfers(size_t size, size_t total)
{
	return total > size ? total / size : 1;
}

int bw_uring(struct wse_ring *ring, enum bench_dir dir, uint8_t *buf, size_t size,
	     size_t total, double max_s, double *mbps)
{
	size_t n = transfers(size, total), i;
	double t0 = bench_now(), t;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = dir == BENCH_H2D ? wse_mem_write(ring, 0, buf, size)
				       : wse_mem_read(ring, 0, buf, size);
		if (bench_now() - t0 > max_s)
			break;
	}
	t = bench_now() - t0;
	*mbps = (double)size * (double)(i < n ? i + 1 : n) / t / 1e6;
	return ret;
}

/* One transfer of @size bytes as jobs of at most @piece, @inflight at once. */
static int ioctl_transfer(struct wse_dev *dev, uint32_t queue, unsigned int inflight,
			  const struct wse_bo *bo, uint32_t op, size_t size, uint64_t piece)
{
	uint64_t ids[MAX_INFLIGHT];
	unsigned int head = 0, count = 0;
	size_t off = 0;
	int first = 0, ret, status;

	while ((off < size && !first) || count) {
		if (off < size && !first && count < inflight) {
			uint64_t len = size - off < piece ? size - off : piece;
			struct wse_job job = {
				.op = op, .handle = bo->handle, .bo_offset = off,
				.length = len, .args = { off },
			};

			ret = wse_submit(dev, queue, &job, &ids[(head + count) % MAX_INFLIGHT]);
			if (!ret) {
				off += len;
				count++;
				continue;
			}
			first = ret;
			if (!count)
				break;
		}
		ret = wse_wait(dev, queue, ids[head], wse_deadline_ns(BENCH_WAIT_MS), &status, NULL);
		if (!first)
			first = ret ? ret : status;
		head = (head + 1) % MAX_INFLIGHT;
		count--;
	}
	return first;
}

int bw_ioctl(struct wse_dev *dev, uint32_t queue, unsigned int inflight, const struct wse_bo *bo,
	     enum bench_dir dir, size_t size, size_t total, double max_s, double *mbps)
{
	uint32_t op = dir == BENCH_H2D ? DRM_WSE_OP_MEM_WRITE : DRM_WSE_OP_MEM_READ;
	size_t n = transfers(size, total), i;
	struct wse_info info;
	double t0, t;
	int ret;

	if (inflight > MAX_INFLIGHT || size > bo->size)
		return -EINVAL;
	ret = wse_info(dev, &info);
	if (ret)
		return ret;
	t0 = bench_now();
	for (i = 0; i < n && !ret; i++) {
		ret = ioctl_transfer(dev, queue, inflight, bo, op, size, info.max_job_bytes);
		if (bench_now() - t0 > max_s)
			break;
	}
	t = bench_now() - t0;
	*mbps = (double)size * (double)(i < n ? i + 1 : n) / t / 1e6;
	return ret;
}
