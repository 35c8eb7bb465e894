// SPDX-License-Identifier: LGPL-2.1-or-later
/* libwse queues and jobs: QUEUE_CREATE/DESTROY, SUBMIT and WAIT. */
#include <errno.h>
#include <time.h>

#include "wse_internal.h"

int wse_queue_create(struct wse_dev *dev, uint32_t hw_queue, uint32_t depth,
		     uint32_t timeout_ms, uint32_t *queue_id)
{
	struct drm_wse_queue_create q = {
		.hw_queue = hw_queue, .depth = depth, .timeout_ms = timeout_ms,
	};
	int ret = wse_ioctl(dev, DRM_IOCTL_WSE_QUEUE_CREATE, &q);

	if (!ret)
		*queue_id = q.queue_id;
	return ret;
}

int wse_queue_destroy(struct wse_dev *dev, uint32_t queue_id)
{
	struct drm_wse_queue_destroy q = { .queue_id = queue_id };

	return wse_ioctl(dev, DRM_IOCTL_WSE_QUEUE_DESTROY, &q);
}

int wse_submit(struct wse_dev *dev, uint32_t queue_id, const struct wse_job *job,
	       uint64_t *job_id)
{
	struct drm_wse_submit s = {
		.queue_id = queue_id, .op = job->op, .handle = job->handle,
		.timeout_ms = job->timeout_ms, .bo_offset = job->bo_offset,
		.length = job->length,
		.args = { job->args[0], job->args[1], job->args[2], job->args[3] },
	};
	int ret = wse_ioctl(dev, DRM_IOCTL_WSE_SUBMIT, &s);

	if (!ret && job_id)
		*job_id = s.job_id;
	return ret;
}

int wse_wait(struct wse_dev *dev, uint32_t queue_id, uint64_t job_id, int64_t deadline_ns,
	     int *status, uint32_t *result_len)
{
	struct drm_wse_wait w = {
		.queue_id = queue_id, .job_id = job_id, .timeout_ns = deadline_ns,
	};
	/* The timeout is absolute, so restarting after EINTR waits for the rest. */
	int ret = wse_ioctl(dev, DRM_IOCTL_WSE_WAIT, &w);

	if (status)
		*status = ret ? 0 : w.status;
	if (result_len)
		*result_len = ret ? 0 : w.result_len;
	return ret;
}

int64_t wse_deadline_ns(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ms * 1000000;
}
