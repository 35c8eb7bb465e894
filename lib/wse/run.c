// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse RUN jobs: submitted like any job, and their reply decoded here,
 * so that applications see a struct wse_run_result, never the wire's.
 */
#include <errno.h>

#include "wse/link_payloads.h"
#include "wse_internal.h"

_Static_assert(WSE_RUN_TRAIN == WSE_LINK_RUN_TRAIN && WSE_RUN_EVAL == WSE_LINK_RUN_EVAL &&
	       WSE_RUN_PREDICT == WSE_LINK_RUN_PREDICT, "RUN kinds are the link's");
_Static_assert(WSE_RUN_RESULT_BYTES == sizeof(struct wse_link_run_result),
	       "a RUN's reply is a struct wse_link_run_result");

int wse_run_submit(struct wse_dev *dev, uint32_t queue_id, const struct wse_bo *result,
		   const struct wse_run *run, uint64_t *job_id)
{
	struct wse_job job = {
		.op = DRM_WSE_OP_RUN, .handle = result->handle, .length = WSE_RUN_RESULT_BYTES,
		.args = { run->slot, run->kind, run->steps, run->batch },
	};

	if (result->size < WSE_RUN_RESULT_BYTES || !result->map)
		return -EINVAL;
	return wse_submit(dev, queue_id, &job, job_id);
}

int wse_run_wait(struct wse_dev *dev, uint32_t queue_id, uint64_t job_id,
		 const struct wse_bo *result, int64_t deadline_ns, struct wse_run_result *res)
{
	struct wse_link_run_result_info r;
	struct wse_link_err err;
	uint32_t len = 0;
	int status = 0, ret;

	ret = wse_wait(dev, queue_id, job_id, deadline_ns, &status, &len);
	if (ret || status)
		return ret ? ret : status;
	if (wse_link_run_result_decode(result->map, len, &r, &err))
		return -EPROTO;
	*res = (struct wse_run_result){
		.steps = r.steps, .samples = r.samples, .cycles = r.cycles,
		.est_cycles = r.est_cycles, .host_ns = r.host_ns,
	};
	return 0;
}
