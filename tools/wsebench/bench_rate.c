// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench small commands: a fixed number of small MEM_WRITE jobs kept
 * @depth in flight, through io_uring (libwse single commands: every
 * completion reaped is replaced and the replacements go in one submit) and
 * through SUBMIT/WAIT ioctls (wait for the oldest, submit the next).
 * Latency is from submission to the caller seeing the completion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wsebench.h"

static void summarize(const double *lat, unsigned int n, double elapsed, struct rate_result *res)
{
	res->per_s = n / elapsed;
	res->p50_us = bench_percentile(lat, n, 50) * 1e6;
	res->p99_us = bench_percentile(lat, n, 99) * 1e6;
}

int rate_uring(struct wse_dev *dev, unsigned int depth, uint32_t bytes, unsigned int n,
	       double max_s, struct rate_result *res)
{
	struct wse_ring_params p = { .hw_queue = 0, .depth = depth, .batch = depth };
	struct wse_completion c[64];
	struct wse_ring *ring;
	double *lat, *sent, t0, now;
	unsigned int issued = 0, done = 0, i;
	uint8_t *buf;
	int ret, k, got;

	lat = calloc(n, sizeof(*lat));
	sent = calloc(depth, sizeof(*sent));
	buf = calloc(1, bytes);
	ret = lat && sent && buf ? wse_ring_open(dev, &p, &ring) : -ENOMEM;
	if (ret)
		goto out;
	t0 = bench_now();
	for (i = 0; i < depth && issued < n; i++, issued++) {
		struct wse_cmd cmd = { .op = DRM_WSE_OP_MEM_WRITE, .buf = buf, .len = bytes,
				       .args = { (uint64_t)i * bytes }, .user_data = i };

		sent[i] = bench_now();
		ret = wse_ring_prep(ring, &cmd);
		if (ret)
			goto close;
	}
	ret = wse_ring_submit(ring);
	while (ret >= 0 && done < issued) {
		got = wse_ring_reap(ring, c, 64, 1, wse_deadline_ns(BENCH_WAIT_MS));
		if (got < 0) {
			ret = got;
			break;
		}
		now = bench_now();
		for (k = 0; k < got; k++) {
			unsigned int slot = (unsigned int)c[k].user_data;

			if (c[k].res < 0 && ret >= 0)
				ret = c[k].res;
			lat[done++] = now - sent[slot];
			/* Past the time limit, only drain what is in flight. */
			if (issued < n && ret >= 0 && now - t0 < max_s) {
				struct wse_cmd cmd = {
					.op = DRM_WSE_OP_MEM_WRITE, .buf = buf, .len = bytes,
					.args = { (uint64_t)slot * bytes }, .user_data = slot,
				};

				sent[slot] = bench_now();
				if (wse_ring_prep(ring, &cmd) == 0)
					issued++;
			}
		}
		if (ret >= 0)
			ret = wse_ring_submit(ring);
	}
	if (ret >= 0) {
		summarize(lat, done, bench_now() - t0, res);
		ret = 0;
	}
close:
	wse_ring_close(ring);
out:
	free(lat);
	free(sent);
	free(buf);
	return ret;
}

int rate_ioctl(struct wse_dev *dev, unsigned int depth, uint32_t bytes, unsigned int n,
	       double max_s, struct rate_result *res)
{
	uint64_t *ids = calloc(depth, sizeof(*ids));
	double *lat = calloc(n, sizeof(*lat)), *sent = calloc(depth, sizeof(*sent)), t0;
	unsigned int issued = 0, done = 0, head = 0;
	struct wse_bo bo = { 0 };
	uint32_t queue = 0;
	bool have_queue = false;
	int ret, status;

	ret = ids && lat && sent ? wse_bo_alloc(dev, (uint64_t)bytes * depth, &bo) : -ENOMEM;
	if (!ret)
		ret = wse_queue_create(dev, 0, depth, 0, &queue);
	have_queue = !ret;
	if (ret)
		goto out;
	t0 = bench_now();
	while (!ret && done < n) {
		/* Keep depth jobs queued; slot i always reuses bytes i*len of the BO. */
		while (issued < n && issued - done < depth && bench_now() - t0 < max_s) {
			unsigned int slot = issued % depth;
			struct wse_job job = {
				.op = DRM_WSE_OP_MEM_WRITE, .handle = bo.handle,
				.bo_offset = (uint64_t)slot * bytes, .length = bytes,
				.args = { (uint64_t)slot * bytes },
			};

			sent[slot] = bench_now();
			ret = wse_submit(dev, queue, &job, &ids[slot]);
			if (ret)
				break;
			issued++;
		}
		if (ret || done == issued)
			break;
		head = done % depth;
		ret = wse_wait(dev, queue, ids[head], wse_deadline_ns(BENCH_WAIT_MS), &status, NULL);
		if (!ret)
			ret = status;
		lat[done++] = bench_now() - sent[head];
	}
	if (!ret)
		summarize(lat, done, bench_now() - t0, res);
out:
	if (have_queue)
		wse_queue_destroy(dev, queue);
	if (bo.handle)
		wse_bo_free(dev, &bo);
	free(ids);
	free(lat);
	free(sent);
	return ret;
}
