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

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/dma-fence.h>
#include <linux/ktime.h>
#include <linux/overflow.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_users.h"

#define WSE_JOB_TIMEOUT_MS_MAX		600000

static const struct wse_op_desc wse_ops[] = {
	[DRM_WSE_OP_MEM_WRITE] = { WSE_LINK_OP_MEM_WRITE, true, false, 1,
				   sizeof(struct wse_link_mem) },
	[DRM_WSE_OP_MEM_READ] = { WSE_LINK_OP_MEM_READ, false, true, 1,
				  sizeof(struct wse_link_mem) },
	/* The placement answers the last piece only. */
	[DRM_WSE_OP_PROGRAM_LOAD] = { WSE_LINK_OP_PROGRAM_LOAD, true, true, 4,
				      sizeof(struct wse_link_program_load),
				      sizeof(struct wse_link_program_info) },
	[DRM_WSE_OP_PROGRAM_UNLOAD] = { WSE_LINK_OP_PROGRAM_UNLOAD, false, false, 1,
					sizeof(struct wse_link_program_ref) },
	[DRM_WSE_OP_STREAM_WRITE] = { WSE_LINK_OP_STREAM_WRITE, true, false, 2,
				      sizeof(struct wse_link_stream) },
	[DRM_WSE_OP_STREAM_READ] = { WSE_LINK_OP_STREAM_READ, false, true, 2,
				     sizeof(struct wse_link_stream) },
	[DRM_WSE_OP_RUN] = { WSE_LINK_OP_RUN, false, true, 4, sizeof(struct wse_link_run),
			     sizeof(struct wse_link_run_result) },
	[DRM_WSE_OP_PARAMS_READ] = { WSE_LINK_OP_PARAMS_READ, false, true, 3,
				     sizeof(struct wse_link_params) },
	[DRM_WSE_OP_PARAMS_WRITE] = { WSE_LINK_OP_PARAMS_WRITE, true, false, 3,
				      sizeof(struct wse_link_params) },
	[DRM_WSE_OP_DEVICE_STATS] = { WSE_LINK_OP_DEVICE_STATS, false, true, 0, 0,
				      sizeof(struct wse_link_dev_stats) },
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
		if (a[0] > U32_MAX || a[1] & ~(u64)WSE_LINK_PROG_LAST)
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

/**
 * wse_job_alloc_kbuf() - a kernel buffer for a job's data, charged to the
 * submitter's memory cgroup and counted against its file, user and device
 * @job: a job without one
 * @len: bytes
 *
 * Return: 0, -ENOBUFS if the file, its user or the device already holds
 * as much as it may (wse_kbuf_charge()), or -ENOMEM.
 */
int wse_job_alloc_kbuf(struct wse_job *job, u32 len)
{
	struct wse_file *wfile = job->queue->wfile;
	int ret;

	ret = wse_kbuf_charge(wfile, len);
	if (ret)
		return ret;
	job->kbuf = kvmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!job->kbuf) {
		wse_kbuf_uncharge(wfile, len);
		return -ENOMEM;
	}
	job->kbuf_len = len;
	return 0;
}

static void wse_job_free_kbuf(struct wse_job *job)
{
	if (!job->kbuf)
		return;
	kvfree(job->kbuf);
	job->kbuf = NULL;
	wse_kbuf_uncharge(job->queue->wfile, job->kbuf_len);
}

static void wse_job_release(struct dma_fence *fence)
{
	struct wse_job *job = container_of(fence, struct wse_job, fence);

	/* Normally freed once the reply is copied out; not if it never ran. */
	wse_job_free_kbuf(job);
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

/* Unmaps and lets go of the buffer object (the job's data is retired),
 * and of the DRM device it needs until it is freed.
 */
static void wse_job_release_bo(struct wse_job *job)
{
	struct drm_device *drm;

	if (!job->obj)
		return;
	drm = job->obj->dev;
	drm_gem_vunmap_unlocked(job->obj, &job->map);
	drm_gem_object_put(job->obj);
	job->obj = NULL;
	drm_dev_put(drm);
}

/* One user of the buffer object's mapping is done with it. */
static void wse_job_put_data(struct wse_job *job)
{
	if (atomic_dec_and_test(&job->data_users))
		wse_job_release_bo(job);
}

/*
 * The queue's table and the link each hold the job's place in its queue;
 * the last to let go gives it back. So a job that finished before the
 * firmware answered it (a timeout, a cancel) still counts against the
 * depth until the firmware has answered it or its frame was taken back
 * unsent: no submitter can pile up requests faster than the firmware
 * gets rid of them.
 */
static void wse_job_put_slot(struct wse_job *job)
{
	struct wse_queue *queue = job->queue;

	if (atomic_dec_and_test(&job->slot_users)) {
		spin_lock(&queue->lock);
		queue->held--;
		spin_unlock(&queue->lock);
	}
}

/* The link's sender is done with the request's frame, or it was taken
 * back unsent: what only the frame needed goes.
 */
static void wse_job_sent(struct wse_link_req *req)
{
	struct wse_job *job = container_of(req, struct wse_job, req);

	/* A buffer only sent is no longer needed; one the reply lands in is. */
	if (!job->req.resp)
		wse_job_free_kbuf(job);
	wse_job_put_data(job);
	wse_job_put(job);
}

/*
 * The firmware is done with the job's request (@status: its answer, or
 * why none will come), or it never reached the firmware: what the request
 * held in the firmware's name goes - its count in the firmware's
 * read-ahead, its hold on its slot, its place in the queue - and so does
 * the reference that kept the job while the firmware had it.
 */
static void wse_job_let_go(struct wse_job *job, int status)
{
	struct wse_queue *queue = job->queue;

	wse_fw_uncharge(queue->wdev, queue->wfile, job->fw_bytes);
	if (job->slot)
		wse_slots_end(&queue->wdev->slots, job->slot, job->load_last && !status);
	wse_job_put_slot(job);
	wse_job_put(job);
}

static void wse_job_retired(struct wse_link_req *req)
{
	wse_job_let_go(container_of(req, struct wse_job, req), req->status);
}

/*
 * Finishes the job once: retire, record, signal. Drops the reference the
 * request held. Process context; whoever calls it owns the request (the
 * link finished it, or wse_link_abandon() took it back).
 */
void wse_job_finish(struct wse_job *job, int status, u32 result_len)
{
	if (atomic_xchg(&job->finished, 1))
		return;
	if (test_bit(WSE_JOB_IN_USAGE, &job->flags))
		wse_usage_end(&job->queue->wfile->usage, job->queue->hw_queue);
	/* Finished before its frame left (a timeout, an abort): it never will. */
	wse_link_withdraw(&job->queue->wdev->link, &job->req);
	wse_job_put_data(job);
	job->status = status;
	job->result_len = status ? 0 : result_len;
	if (status)
		dma_fence_set_error(&job->fence, status);
	dma_fence_signal(&job->fence);
	/* The timeout work holds a reference while it is pending. */
	if (cancel_delayed_work(&job->timeout_work))
		wse_job_put(job);
	/* The request's reference: to the hook, if there is one. */
	if (job->on_finish)
		job->on_finish(job);
	else
		wse_job_put(job);
}

/* The link finished the request: answered, or failed with the link. */
static void wse_job_done(struct wse_link_req *req)
{
	struct wse_job *job = container_of(req, struct wse_job, req);

	/* Before its waiter hears of it: the program is there to use. */
	if (job->slot && job->load_last && !req->status)
		wse_slots_confirm(&job->queue->wdev->slots, job->slot);
	wse_job_finish(job, req->status, req->resp_len);
}

/* The job's time is up: take its request back, if it is still out. */
static void wse_job_expire(struct wse_job *job)
{
	struct wse_link *link = &job->queue->wdev->link;

	if (wse_link_abandon(link, &job->req)) {
		atomic64_inc(&link->stats.timeouts);
		wse_job_finish(job, -ETIMEDOUT, 0);
	}
}

/*
 * The timer is armed before the request has a tag: armed after, a quick
 * answer could come first and leave it pending for nothing. So whichever
 * comes second - the timer, or the request going out - expires the job.
 */
static void wse_job_timeout(struct work_struct *work)
{
	struct wse_job *job = container_of(to_delayed_work(work), struct wse_job,
					   timeout_work);

	set_bit(WSE_JOB_EXPIRED, &job->flags);
	/* Pairs with the barrier in wse_job_start(): one of the two sees both bits. */
	smp_mb__after_atomic();
	if (test_bit(WSE_JOB_SUBMITTED, &job->flags))
		wse_job_expire(job);
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
		if (!atomic_read(&job->finished) &&
		    wse_link_abandon(&queue->wdev->link, &job->req))
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

/* Checks a job's arguments against its operation and the frame size. */
int wse_job_check(const u64 *args, bool has_data, u64 length, const struct wse_op_desc *d,
		  u32 max_payload)
{
	unsigned int i;

	for (i = d->nargs; i < 4; i++)
		if (args[i])
			return -EINVAL;
	if ((d->sends || d->receives) != has_data)
		return -EINVAL;
	if (!has_data)
		return length ? -EINVAL : 0;
	if (!length)
		return -EINVAL;
	/* One job is one frame each way: DRM_WSE_PARAM_MAX_JOB_BYTES. */
	if (length > wse_job_max_bytes(max_payload))
		return -E2BIG;
	/* An answer of known size must fit: the link would refuse it. */
	if (length < d->reply_len &&
	    (d->opcode != WSE_LINK_OP_PROGRAM_LOAD || args[1] & WSE_LINK_PROG_LAST))
		return -EINVAL;
	return 0;
}

/*
 * The slot a job names and what it does there, or why it may not: device
 * memory is one space every opener shares, and only a privileged opener
 * reaches it directly; a program and everything in its slot belong to the
 * file that loaded it (wse_slots.c). A params kind is checked against the
 * device: an appliance's own kinds (the job, its parts, its input) exist
 * only on one, and go only where they reach the caller's own program.
 * Returns 0 with *@slot and *@use (WSE_SLOT_NONE: it names no slot), -EPERM
 * or -EINVAL.
 */
static int wse_job_slot_use(struct wse_file *wfile, const struct wse_op_desc *d,
			    const u64 *args, u64 *slot, enum wse_slot_use *use)
{
	bool appliance = wfile->wdev->link.fw_caps & WSE_LINK_CAP_APPLIANCE;
	bool write = d->opcode == WSE_LINK_OP_PARAMS_WRITE;

	*slot = args[0];
	*use = WSE_SLOT_USE;
	switch (d->opcode) {
	case WSE_LINK_OP_MEM_WRITE:
	case WSE_LINK_OP_MEM_READ:
		*use = WSE_SLOT_NONE;
		return wfile->admin ? 0 : -EPERM;
	case WSE_LINK_OP_DEVICE_STATS:
		*use = WSE_SLOT_NONE;
		return 0;
	case WSE_LINK_OP_PROGRAM_LOAD:
		*use = WSE_SLOT_CLAIM;
		return 0;
	case WSE_LINK_OP_PROGRAM_UNLOAD:
		*use = WSE_SLOT_UNLOAD;
		return 0;
	case WSE_LINK_OP_PARAMS_READ:
	case WSE_LINK_OP_PARAMS_WRITE:
		break;
	default:
		return 0;
	}
	switch (args[1]) {
	case WSE_LINK_PARAMS_WEIGHTS:
	case WSE_LINK_PARAMS_OPT_STATE:
	case WSE_LINK_PARAMS_SNAPSHOT:
		return 0;
	case WSE_LINK_PARAMS_SNAPSHOT_STORE:
		return write ? 0 : -EINVAL;
	case WSE_LINK_PARAMS_JOB:
		if (!appliance || !write)
			return -EINVAL;
		/* Slot 0's job is every later job's default: the device's. */
		if (!args[0]) {
			*use = WSE_SLOT_NONE;
			return wfile->admin ? 0 : -EPERM;
		}
		/* A slot's own job comes before its program: it claims the slot. */
		*use = WSE_SLOT_CLAIM;
		return 0;
	case WSE_LINK_PARAMS_APPLIANCE:
		/* The parts' state: slot 0 only, anyone may read it. */
		*use = WSE_SLOT_NONE;
		return appliance && !write && !args[0] ? 0 : -EINVAL;
	case WSE_LINK_PARAMS_INPUT:
		/* The input of the caller's own program, and no other. */
		return appliance && write ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

/**
 * wse_job_admit() - whether a file may submit a job, and what it holds
 * @job: from wse_job_new()
 * @wfile: the file
 * @d: the job's operation
 * @args: its arguments, already checked by wse_job_check()
 * @length: its data's length
 *
 * A job that names a slot counts as its file's request for the slot from
 * here until the firmware has answered it (wse_slots_begin()), or until it
 * is discarded.
 *
 * Return: 0, -EPERM, -EINVAL, or what wse_slots_begin() returns.
 */
int wse_job_admit(struct wse_job *job, struct wse_file *wfile, const struct wse_op_desc *d,
		  const u64 *args, u64 length)
{
	enum wse_slot_use use;
	u64 slot;
	int ret;

	ret = wse_job_slot_use(wfile, d, args, &slot, &use);
	if (ret)
		return ret;
	/* What a device queues counts against its read-ahead, bytes and all. */
	if (d->opcode != WSE_LINK_OP_MEM_WRITE && d->opcode != WSE_LINK_OP_MEM_READ)
		job->fw_bytes = d->hdr_len + (d->sends ? length : 0);
	job->load_last = d->opcode == WSE_LINK_OP_PROGRAM_LOAD && args[1] & WSE_LINK_PROG_LAST;
	/* Every other job names a slot, 1..255 (wse_slots_begin() refuses 0). */
	if (use == WSE_SLOT_NONE)
		return 0;
	ret = wse_slots_begin(&wfile->wdev->slots, wfile, slot, use);
	if (!ret)
		job->slot = slot;
	return ret;
}

/**
 * wse_job_check_data() - check what a job sends, where its meaning matters
 * @wfile: the submitter's file
 * @args: the job's arguments
 * @op: its &enum drm_wse_op
 * @data: the data it sends, which the submitter can no longer change
 * @length: bytes at @data
 *
 * A snapshot the firmware stores goes into a file of the storage it
 * shares with every user: an unprivileged caller may name only files in
 * its own area, "u<uid>/..." (Documentation/uapi.rst, "Ownership").
 *
 * Return: 0, -EINVAL for a malformed request, -EACCES for a file outside
 * the caller's area.
 */
int wse_job_check_data(struct wse_file *wfile, const u64 *args, u32 op, const void *data,
		       u64 length)
{
	const struct wse_link_snapshot_store *st = data;
	char area[16];
	int n;

	if (!wse_job_data_checked(op, args))
		return 0;
	if (length != sizeof(*st) || args[2] || !memchr(st->name, 0, sizeof(st->name)))
		return -EINVAL;
	if (wfile->admin)
		return 0;
	n = snprintf(area, sizeof(area), "u%u/", wfile->user->uid);
	return strncmp(st->name, area, n) ? -EACCES : 0;
}

/**
 * wse_job_discard() - free a job that never got its fence
 * @job: from wse_job_new(), refused before it was queued (its id is 0)
 */
void wse_job_discard(struct wse_job *job)
{
	/* A claim it made and that nothing else used is undone. */
	if (job->slot)
		wse_slots_end(&job->queue->wdev->slots, job->slot, false);
	wse_job_release_bo(job);
	wse_job_free_kbuf(job);
	wse_queue_put(job->queue);
	kfree(job);
}

/**
 * wse_job_new() - a job for one operation on a queue
 * @queue: the queue; the job takes over the caller's reference
 * @op: an &enum drm_wse_op, already checked
 *
 * Return: the job, or NULL (and the queue reference dropped) without memory.
 */
struct wse_job *wse_job_new(struct wse_queue *queue, u32 op)
{
	struct wse_job *job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);

	if (!job) {
		wse_queue_put(queue);
		return NULL;
	}
	job->queue = queue;
	job->req.opcode = wse_ops[op].opcode;
	job->req.queue = queue->hw_queue;
	job->req.done = wse_job_done;
	job->req.retire = wse_job_retired;
	job->req.tx_done = wse_job_sent;
	atomic_set(&job->data_users, 1);
	INIT_DELAYED_WORK(&job->timeout_work, wse_job_timeout);
	return job;
}

/**
 * wse_job_start() - queue a job and send its request
 * @job: from wse_job_new(), with its data and reply buffer set up
 * @timeout_ms: the job's timeout, 0 for the queue's
 * @vec: the request payload, in @job (its header, its data)
 * @nvec: entries in @vec
 * @nonblock: do not send here: the link's transmit work sends it
 * @job_id: set to the job's id
 *
 * Requests go on the link in the order their jobs get their ids: the
 * queue's order is the wire order.
 *
 * Return: 0, the job queued and its request on its way (without
 * @nonblock: sent); it finishes later, exactly once. Or a negative errno:
 * -ENOENT (the queue is closed) and -EBUSY (it is full, or the firmware
 * holds as many requests of the file's user, or of the device's users,
 * as it may: wse_fw_charge()) refuse the job before it gets an id, and
 * the caller still owns it (wse_job_discard());
 * after any other error the job has finished with it. Whenever the job
 * got an id, the caller holds a reference to it, which it drops with
 * wse_job_put(): the job may finish and be collected before this returns.
 */
int wse_job_start(struct wse_job *job, u32 timeout_ms, const struct kvec *vec,
		  unsigned int nvec, bool nonblock, u64 *job_id)
{
	struct wse_queue *queue = job->queue;
	/* Held by the device, which the caller's open file holds. */
	struct wse_link *link = &queue->wdev->link;
	int ret;

	/* Counted until the firmware answers it: wse_job_let_go(). */
	ret = wse_fw_charge(queue->wdev, queue->wfile, job->fw_bytes);
	if (ret)
		return ret;
	mutex_lock(&queue->submit_lock);
	spin_lock(&queue->lock);
	if (queue->closed) {
		ret = -ENOENT;
	} else if (queue->held >= queue->depth) {
		ret = -EBUSY;	/* collect finished jobs first */
	} else {
		dma_fence_init(&job->fence, &wse_job_fence_ops, &queue->fence_lock,
			       queue->fence_context, queue->next_seqno);
		job->id = queue->next_seqno++;
		queue->held++;
	}
	spin_unlock(&queue->lock);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		wse_fw_uncharge(queue->wdev, queue->wfile, job->fw_bytes);
		return ret;
	}

	/* From here the fence counts references: one for the request (taken
	 * by dma_fence_init), the caller's, one for the queue's table, one
	 * for the timeout work, one for the sender and one for the link until
	 * the firmware is done with it. The place in the queue is the table's
	 * and the link's.
	 */
	atomic_set(&job->slot_users, 1);
	dma_fence_get(&job->fence);
	dma_fence_get(&job->fence);
	ret = xa_insert(&queue->jobs, job->id, job, GFP_KERNEL);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		job->on_finish = NULL;
		wse_job_finish(job, ret, 0);
		/* Neither in the table nor sent: the count, the slot's hold, the
		 * place and the reference taken for the table go as the link's
		 * would.
		 */
		wse_job_let_go(job, ret);
		return ret;
	}
	*job_id = job->id;
	dma_fence_get(&job->fence);
	queue_delayed_work(wse_wq, &job->timeout_work,
			   timeout_ms ? msecs_to_jiffies(timeout_ms) : queue->timeout);
	/* The sender's references, the job's and its data's, until sent. */
	dma_fence_get(&job->fence);
	atomic_inc(&job->data_users);
	/* The link's, until the firmware is done with the request. */
	dma_fence_get(&job->fence);
	atomic_inc(&job->slot_users);
	/* Before the request is out: its answer may come at once. */
	wse_usage_begin(&queue->wfile->usage, queue->hw_queue);
	set_bit(WSE_JOB_IN_USAGE, &job->flags);
	/* Queued under submit_lock, in id order; sent outside it. */
	ret = wse_link_submit(link, &job->req, vec, nvec);
	mutex_unlock(&queue->submit_lock);
	if (ret) {
		/* Never queued: the frame's and the link's references go now,
		 * and the caller hears why.
		 */
		wse_job_sent(&job->req);
		wse_job_let_go(job, ret);
		job->on_finish = NULL;
		wse_job_finish(job, ret, 0);
		wse_job_collect(job);
		return ret;
	}
	if (job->slot)
		wse_slots_sent(&queue->wdev->slots, job->slot);
	set_bit(WSE_JOB_SUBMITTED, &job->flags);
	/* Pairs with the barrier in wse_job_timeout(). */
	smp_mb__after_atomic();
	if (test_bit(WSE_JOB_EXPIRED, &job->flags))
		wse_job_expire(job);
	wse_link_push(link, nonblock);
	return 0;
}

/* Takes a job out of its queue's table, if nobody else did. */
void wse_job_collect(struct wse_job *job)
{
	struct wse_queue *queue = job->queue;

	if (xa_cmpxchg(&queue->jobs, job->id, job, NULL, GFP_KERNEL) == job) {
		wse_job_put_slot(job);
		wse_job_put(job);
	}
}

/* Where a job's data is, and which way it goes, for submit and io_uring. */
const struct wse_op_desc *wse_job_op(u32 op)
{
	if (!op || op >= ARRAY_SIZE(wse_ops) || !wse_ops[op].opcode)
		return NULL;
	return &wse_ops[op];
}

/* Builds the request: the header from the arguments, then the data. */
int wse_job_request(const struct wse_op_desc *d, u32 op, const u64 *args, u64 length,
		    union wse_job_hdr *hdr, void *data, struct kvec *vec, unsigned int *nvec)
{
	int ret = wse_job_build_hdr(op, args, length, hdr);

	if (ret)
		return ret;
	*nvec = 0;
	if (d->hdr_len) {
		vec[*nvec].iov_base = hdr;
		vec[(*nvec)++].iov_len = d->hdr_len;
	}
	if (d->sends) {
		vec[*nvec].iov_base = data;
		vec[(*nvec)++].iov_len = length;
	}
	return 0;
}

int wse_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_wse_submit *args = data;
	const struct wse_op_desc *d = wse_job_op(args->op);
	struct wse_queue *queue;
	struct wse_job *job;
	struct kvec vec[2];
	unsigned int nvec;
	void *bo_data = NULL;
	u64 end;
	int ret;

	if (!d || args->flags || args->pad || args->timeout_ms > WSE_JOB_TIMEOUT_MS_MAX)
		return -EINVAL;
	queue = wse_queue_lookup(file, args->queue_id);
	if (!queue)
		return -ENOENT;
	ret = wse_job_check(args->args, args->handle, args->length, d,
			    queue->wdev->link.max_payload);
	if (!ret && !args->handle && args->bo_offset)
		ret = -EINVAL;
	if (ret) {
		wse_queue_put(queue);
		return ret;
	}
	job = wse_job_new(queue, args->op);
	if (!job)
		return -ENOMEM;
	ret = wse_job_admit(job, file->driver_priv, d, args->args, args->length);
	if (ret)
		goto discard;

	if (args->handle) {
		job->obj = drm_gem_object_lookup(file, args->handle);
		if (!job->obj) {
			ret = -ENOENT;
			goto discard;
		}
		if (check_add_overflow(args->bo_offset, args->length, &end) ||
		    end > job->obj->size) {
			drm_gem_object_put(job->obj);
			job->obj = NULL;
			ret = -EINVAL;
			goto discard;
		}
		ret = drm_gem_vmap_unlocked(job->obj, &job->map);
		if (ret) {
			drm_gem_object_put(job->obj);
			job->obj = NULL;
			goto discard;
		}
		/* The object's last put may come after a detach unplugged the
		 * device, from the transmit work: it must still be there.
		 */
		drm_dev_get(drm);
		bo_data = job->map.vaddr + args->bo_offset;
		if (d->receives) {
			job->req.resp = bo_data;
			job->req.resp_cap = args->length;
		}
	}
	/* Data whose meaning is checked is sent from a copy the submitter
	 * cannot change after the check, as io_uring jobs' always are.
	 */
	if (wse_job_data_checked(args->op, args->args)) {
		ret = wse_job_alloc_kbuf(job, args->length);
		if (ret)
			goto discard;
		memcpy(job->kbuf, bo_data, args->length);
		bo_data = job->kbuf;
		ret = wse_job_check_data(file->driver_priv, args->args, args->op, bo_data,
					 args->length);
		if (ret)
			goto discard;
	}
	ret = wse_job_request(d, args->op, args->args, args->length, &job->hdr, bo_data, vec,
			      &nvec);
	if (ret)
		goto discard;
	ret = wse_job_start(job, args->timeout_ms, vec, nvec, false, &args->job_id);
	if (!job->id)
		goto discard;
	wse_job_put(job);
	return ret;

discard:
	wse_job_discard(job);
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
	/* An io_uring job is collected by its completion, never by WAIT. */
	if (job && job->ucmd)
		job = NULL;
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
	wse_job_collect(job);
	ret = 0;
put_job:
	wse_job_put(job);
put_queue:
	wse_queue_put(queue);
	return ret;
}
