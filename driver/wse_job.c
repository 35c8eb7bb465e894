// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: jobs. A job is one request to the firmware on a queue: its data is
 * a range of a buffer object (sent, or where the reply lands), it has a
 * dma_fence, and it finishes exactly once - answered, refused, failed with
 * the link, timed out, or aborted with its queue - whichever comes first.
 *
 * A job's life: SUBMIT maps the buffer object, queues the job and sends
 * the request; the receive thread writes the reply straight into the
 * mapping and finishes it; WAIT collects it. Finishing retires the buffer
 * object (unmap, put) and signals the fence.
 */

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/dma-fence.h>
#include <linux/ktime.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "wse_drv.h"
#include "wse_job.h"

/* What each operation is on the wire, and which way its data goes. */
struct wse_op_desc {
	u8 opcode;
	bool sends;		/* the range is the request's data */
	bool receives;		/* the reply lands in the range */
	u8 nargs;		/* arguments used; the rest must be 0 */
	u8 hdr_len;		/* the request header built from the arguments */
};

static const struct wse_op_desc wse_ops[] = {
	[DRM_WSE_OP_MEM_WRITE] = { WSE_LINK_OP_MEM_WRITE, true, false, 1,
				   sizeof(struct wse_link_mem) },
	[DRM_WSE_OP_MEM_READ] = { WSE_LINK_OP_MEM_READ, false, true, 1,
				  sizeof(struct wse_link_mem) },
	[DRM_WSE_OP_PROGRAM_LOAD] = { WSE_LINK_OP_PROGRAM_LOAD, true, true, 4,
				      sizeof(struct wse_link_program_load) },
	[DRM_WSE_OP_PROGRAM_UNLOAD] = { WSE_LINK_OP_PROGRAM_UNLOAD, false, false, 1,
					sizeof(struct wse_link_program_ref) },
	[DRM_WSE_OP_STREAM_WRITE] = { WSE_LINK_OP_STREAM_WRITE, true, false, 2,
				      sizeof(struct wse_link_stream) },
	[DRM_WSE_OP_STREAM_READ] = { WSE_LINK_OP_STREAM_READ, false, true, 2,
				     sizeof(struct wse_link_stream) },
	[DRM_WSE_OP_RUN] = { WSE_LINK_OP_RUN, false, true, 4, sizeof(struct wse_link_run) },
	[DRM_WSE_OP_PARAMS_READ] = { WSE_LINK_OP_PARAMS_READ, false, true, 3,
				     sizeof(struct wse_link_params) },
	[DRM_WSE_OP_PARAMS_WRITE] = { WSE_LINK_OP_PARAMS_WRITE, true, false, 3,
				      sizeof(struct wse_link_params) },
	[DRM_WSE_OP_DEVICE_STATS] = { WSE_LINK_OP_DEVICE_STATS, false, true, 0, 0 },
};

/* The request headers, one of which a job sends before its data. */
union wse_job_hdr {
	struct wse_link_mem mem;
	struct wse_link_program_load load;
	struct wse_link_program_ref ref;
	struct wse_link_stream stream;
	struct wse_link_run run;
	struct wse_link_params params;
};

/* Arguments become the wire header; each is range-checked, so userspace
 * cannot put a value on the wire that its field cannot hold.
 */
static int wse_job_build_hdr(u32 op, const u64 *a, u64 length, union wse_job_hdr *h)
{
	memset(h, 0, sizeof(*h));
	switch (op) {
	case DRM_WSE_OP_MEM_WRITE:
	case DRM_WSE_OP_MEM_READ:
		h->mem.addr = cpu_to_le64(a[0]);
		h->mem.length = cpu_to_le32(length);
		return 0;
	case DRM_WSE_OP_PROGRAM_LOAD:
		if (a[0] > U32_MAX || a[1] > U32_MAX)
			return -EINVAL;
		h->load.program = cpu_to_le32(a[0]);
		h->load.flags = cpu_to_le32(a[1]);
		h->load.total = cpu_to_le64(a[2]);
		h->load.offset = cpu_to_le64(a[3]);
		return 0;
	case DRM_WSE_OP_PROGRAM_UNLOAD:
		if (a[0] > U32_MAX)
			return -EINVAL;
		h->ref.program = cpu_to_le32(a[0]);
		return 0;
	case DRM_WSE_OP_STREAM_WRITE:
	case DRM_WSE_OP_STREAM_READ:
		if (a[0] > U32_MAX || a[1] > U32_MAX)
			return -EINVAL;
		h->stream.program = cpu_to_le32(a[0]);
		h->stream.stream = cpu_to_le32(a[1]);
		h->stream.length = cpu_to_le32(length);
		return 0;
	case DRM_WSE_OP_RUN:
		if (a[0] > U32_MAX || a[1] > U32_MAX || a[2] > U32_MAX || a[3] > U32_MAX)
			return -EINVAL;
		h->run.program = cpu_to_le32(a[0]);
		h->run.kind = cpu_to_le32(a[1]);
		h->run.steps = cpu_to_le32(a[2]);
		h->run.batch = cpu_to_le32(a[3]);
		return 0;
	case DRM_WSE_OP_PARAMS_READ:
	case DRM_WSE_OP_PARAMS_WRITE:
		if (a[0] > U32_MAX || a[1] > U32_MAX)
			return -EINVAL;
		h->params.program = cpu_to_le32(a[0]);
		h->params.which = cpu_to_le32(a[1]);
		h->params.offset = cpu_to_le64(a[2]);
		h->params.length = cpu_to_le32(length);
		return 0;
	default:
		return 0;
	}
}

static const char *wse_job_driver_name(struct dma_fence *fence)
{
	return WSE_DRIVER_NAME;
}

static const char *wse_job_timeline_name(struct dma_fence *fence)
{
	return container_of(fence, struct wse_job, fence)->queue->timeline;
}

static void wse_job_release(struct dma_fence *fence)
{
	struct wse_job *job = container_of(fence, struct wse_job, fence);

	wse_queue_put(job->queue);
	dma_fence_free(fence);
}

static const struct dma_fence_ops wse_job_fence_ops = {
	.get_driver_name = wse_job_driver_name,
	.get_timeline_name = wse_job_timeline_name,
	.release = wse_job_release,
};

void wse_job_put(struct wse_job *job)
{
	dma_fence_put(&job->fence);
}

/* Unmaps and lets go of the buffer object. */
static void wse_job_retire(struct wse_job *job)
{
	if (!job->obj)
		return;
	drm_gem_vunmap_unlocked(job->obj, &job->map);
	drm_gem_object_put(job->obj);
	job->obj = NULL;
}

/*
 * Finishes the job once: retire, record, signal. Drops the reference the
 * request held. Process context; whoever calls it owns the request (the
 * link finished it, or wse_link_cancel() took it back).
 */
static void wse_job_finish(struct wse_job *job, int status, u32 result_len)
{
	if (atomic_xchg(&job->finished, 1))
		return;
	wse_job_retire(job);
	job->status = status;
	job->result_len = status ? 0 : result_len;
	if (status)
		dma_fence_set_error(&job->fence, status);
	dma_fence_signal(&job->fence);
	/* The timeout work holds a reference while it is pending. */
	if (cancel_delayed_work(&job->timeout_work))
		wse_job_put(job);
	wse_job_put(job);
}

/* The link finished the request. */
static void wse_job_done(struct wse_link_req *req)
{
	struct wse_job *job = container_of(req, struct wse_job, req);

	wse_job_finish(job, req->status, req->resp_len);
}

static void wse_job_timeout(struct work_struct *work)
{
	struct wse_job *job = container_of(to_delayed_work(work), struct wse_job,
					   timeout_work);

	if (wse_link_cancel(job->queue->link, &job->req)) {
		atomic64_inc(&job->queue->link->stats.timeouts);
		wse_job_finish(job, -ETIMEDOUT, 0);
	}
	wse_job_put(job);
}

/* The queue's job at *@id or after it, referenced; NULL at the end. */
struct wse_job *wse_queue_next_job(struct wse_queue *queue, unsigned long *id)
{
	struct wse_job *job;

	xa_lock(&queue->jobs);
	job = xa_find(&queue->jobs, id, ULONG_MAX, XA_PRESENT);
	if (job)
		dma_fence_get(&job->fence);
	xa_unlock(&queue->jobs);
	return job;
}

/* Aborts every job of the queue still waiting for an answer. */
void wse_queue_abort_jobs(struct wse_queue *queue)
{
	struct wse_job *job;
	unsigned long id = 0;

	while ((job = wse_queue_next_job(queue, &id))) {
		if (!atomic_read(&job->finished) && wse_link_cancel(queue->link, &job->req))
			wse_job_finish(job, -ECANCELED, 0);
		wse_job_put(job);
		id++;
	}
}

/* The most data a job carries: a frame's payload less the largest request
 * header (which is larger than a response's status).
 */
u64 wse_job_max_bytes(u32 max_payload)
{
	return max_payload > sizeof(union wse_job_hdr) ?
	       max_payload - sizeof(union wse_job_hdr) : 0;
}

/* Checks a submission against the operation and the link's frame size. */
static int wse_job_check(const struct drm_wse_submit *args, const struct wse_op_desc *d,
			 u32 max_payload)
{
	unsigned int i;

	for (i = d->nargs; i < ARRAY_SIZE(args->args); i++)
		if (args->args[i])
			return -EINVAL;
	if ((d->sends || d->receives) != !!args->handle)
		return -EINVAL;
	if (!args->handle)
		return args->length || args->bo_offset ? -EINVAL : 0;
	if (!args->length)
		return -EINVAL;
	/* One job is one frame each way: DRM_WSE_PARAM_MAX_JOB_BYTES. */
	if (args->length > wse_job_max_bytes(max_payload))
		return -E2BIG;
	return 0;
}

int wse_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_wse_submit *args = data;
	const struct wse_op_desc *d;
	union wse_job_hdr hdr;
	struct wse_queue *queue;
	struct wse_job *job;
	struct kvec vec[2];
	unsigned int nvec = 0;
	u64 end;
	int ret;

	if (!args->op || args->op >= ARRAY_SIZE(wse_ops) || !wse_ops[args->op].opcode)
		return -EINVAL;
	d = &wse_ops[args->op];
	if (args->timeout_ms > 600000)
		return -EINVAL;

	queue = wse_queue_lookup(file, args->queue_id);
	if (!queue)
		return -ENOENT;
	ret = wse_job_check(args, d, queue->link->max_payload);
	if (!ret)
		ret = wse_job_build_hdr(args->op, args->args, args->length, &hdr);
	if (ret)
		goto put_queue;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto put_queue;
	}
	job->queue = queue;	/* the job takes over the lookup's reference */
	job->req.opcode = d->opcode;
	job->req.queue = queue->hw_queue;
	job->req.done = wse_job_done;
	INIT_DELAYED_WORK(&job->timeout_work, wse_job_timeout);

	if (args->handle) {
		job->obj = drm_gem_object_lookup(file, args->handle);
		if (!job->obj) {
			ret = -ENOENT;
			goto free_job;
		}
		if (check_add_overflow(args->bo_offset, args->length, &end) ||
		    end > job->obj->size) {
			ret = -EINVAL;
			goto put_obj;
		}
		ret = drm_gem_vmap_unlocked(job->obj, &job->map);
		if (ret)
			goto put_obj;
		if (d->receives) {
			job->req.resp = job->map.vaddr + args->bo_offset;
			job->req.resp_cap = args->length;
		}
	}
	if (d->hdr_len) {
		vec[nvec].iov_base = &hdr;
		vec[nvec++].iov_len = d->hdr_len;
	}
	if (d->sends) {
		vec[nvec].iov_base = job->map.vaddr + args->bo_offset;
		vec[nvec++].iov_len = args->length;
	}

	mutex_lock(&queue->submit_lock);
	spin_lock(&queue->lock);
	if (queue->closed) {
		ret = -ENOENT;
	} else if (queue->held >= queue->depth) {
		ret = -EBUSY;	/* collect finished jobs with WAIT first */
	} else {
		dma_fence_init(&job->fence, &wse_job_fence_ops, &queue->fence_lock,
			       queue->fence_context, queue->next_seqno);
		args->job_id = queue->next_seqno++;
		queue->held++;
	}
	spin_unlock(&queue->lock);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		goto unmap;
	}

	/* From here the fence counts references: one for the queue's table,
	 * one for the request, one for the timeout work.
	 */
	dma_fence_get(&job->fence);
	ret = xa_insert(&queue->jobs, args->job_id, job, GFP_KERNEL);
	if (ret) {
		spin_lock(&queue->lock);
		queue->held--;
		spin_unlock(&queue->lock);
		mutex_unlock(&queue->submit_lock);
		wse_job_finish(job, ret, 0);
		wse_job_put(job);	/* the table's */
		return ret;
	}
	dma_fence_get(&job->fence);
	schedule_delayed_work(&job->timeout_work,
			      args->timeout_ms ? msecs_to_jiffies(args->timeout_ms) :
			      queue->timeout);
	ret = wse_link_submit(queue->link, &job->req, vec, nvec);
	mutex_unlock(&queue->submit_lock);
	if (ret) {
		/* Never sent: the job is not queued, SUBMIT fails. */
		wse_job_finish(job, ret, 0);
		if (xa_cmpxchg(&queue->jobs, args->job_id, job, NULL, GFP_KERNEL) == job) {
			spin_lock(&queue->lock);
			queue->held--;
			spin_unlock(&queue->lock);
			wse_job_put(job);
		}
		return ret;
	}
	return 0;

unmap:
	if (job->obj)
		drm_gem_vunmap_unlocked(job->obj, &job->map);
put_obj:
	if (job->obj)
		drm_gem_object_put(job->obj);
free_job:
	kfree(job);
put_queue:
	wse_queue_put(queue);
	return ret;
}

int wse_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_wse_wait *args = data;
	struct wse_queue *queue;
	struct wse_job *job;
	long timeout, ret;
	s64 left;

	if (args->flags || args->timeout_ns < 0)
		return -EINVAL;
	queue = wse_queue_lookup(file, args->queue_id);
	if (!queue)
		return -ENOENT;

	xa_lock(&queue->jobs);
	job = xa_load(&queue->jobs, args->job_id);
	if (job)
		dma_fence_get(&job->fence);
	xa_unlock(&queue->jobs);
	if (!job) {
		ret = -ENOENT;
		goto put_queue;
	}

	if (!dma_fence_is_signaled(&job->fence)) {
		left = args->timeout_ns - ktime_get_ns();
		if (!args->timeout_ns || left <= 0) {
			ret = -ETIME;
			goto put_job;
		}
		timeout = nsecs_to_jiffies(left) ?: 1;
		ret = dma_fence_wait_timeout(&job->fence, true, timeout);
		if (ret < 0)
			goto put_job;	/* -ERESTARTSYS: the absolute timeout restarts */
		if (!ret) {
			ret = -ETIME;
			goto put_job;
		}
	}

	args->status = job->status;
	args->result_len = job->result_len;
	/* Collect it, unless another WAIT got there first. */
	if (xa_cmpxchg(&queue->jobs, args->job_id, job, NULL, GFP_KERNEL) == job) {
		spin_lock(&queue->lock);
		queue->held--;
		spin_unlock(&queue->lock);
		wse_job_put(job);
	}
	ret = 0;
put_job:
	wse_job_put(job);
put_queue:
	wse_queue_put(queue);
	return ret;
}
