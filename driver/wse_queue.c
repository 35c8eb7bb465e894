// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: per-file contexts and their queues. A queue is a file's window onto
 * one of the device's hardware queues; its jobs are carried out in order
 * and it holds at most @depth of them until they are collected.
 */

#include <drm/drm_file.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dma-fence.h>
#include <linux/slab.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_users.h"

#define WSE_JOB_TIMEOUT_MS_DEFAULT	10000
#define WSE_JOB_TIMEOUT_MS_MAX		600000

int wse_file_open(struct drm_device *drm, struct drm_file *file)
{
	struct wse_file *wfile;

	wfile = kzalloc(sizeof(*wfile), GFP_KERNEL_ACCOUNT);
	if (!wfile)
		return -ENOMEM;
	wfile->wdev = wse_drm_device(drm);
	wfile->user = wse_user_get(wfile->wdev, current_euid());
	if (!wfile->user) {
		kfree(wfile);
		return -ENOMEM;
	}
	kref_init(&wfile->ref);
	wse_usage_init(&wfile->usage);
	/* Decided by who opened the file, as for any file capability. */
	wfile->admin = capable(CAP_SYS_ADMIN);
	xa_init_flags(&wfile->queues, XA_FLAGS_ALLOC1);
	file->driver_priv = wfile;
	return 0;
}

static void wse_file_release(struct kref *ref)
{
	struct wse_file *wfile = container_of(ref, struct wse_file, ref);

	xa_destroy(&wfile->queues);
	wse_user_put(wfile->user);
	kfree(wfile);
}

void wse_file_put(struct wse_file *wfile)
{
	kref_put(&wfile->ref, wse_file_release);
}

static void wse_queue_release(struct kref *ref)
{
	struct wse_queue *queue = container_of(ref, struct wse_queue, ref);

	xa_destroy(&queue->jobs);
	wse_file_put(queue->wfile);
	wse_device_put(queue->wdev);
	kfree(queue);
}

void wse_queue_put(struct wse_queue *queue)
{
	kref_put(&queue->ref, wse_queue_release);
}

/* A referenced queue of this file, or NULL. */
struct wse_queue *wse_queue_lookup(struct drm_file *file, u32 id)
{
	struct wse_file *wfile = file->driver_priv;
	struct wse_queue *queue;

	xa_lock(&wfile->queues);
	queue = xa_load(&wfile->queues, id);
	if (queue)
		kref_get(&queue->ref);
	xa_unlock(&wfile->queues);
	return queue;
}

/* Closes a queue removed from its file: nothing new gets in, and every
 * job still held is aborted (or finishes as it is being answered) and
 * released.
 */
static void wse_queue_close(struct wse_queue *queue)
{
	struct wse_job *job;
	unsigned long id = 0;

	mutex_lock(&queue->submit_lock);
	spin_lock(&queue->lock);
	queue->closed = true;
	spin_unlock(&queue->lock);
	mutex_unlock(&queue->submit_lock);

	wse_queue_abort_jobs(queue);

	while ((job = wse_queue_next_job(queue, &id))) {
		/* Unless a WAIT collected it meanwhile, drop the table's reference. */
		wse_job_collect(job);
		wse_job_put(job);
		id++;
	}
	wse_queue_put(queue);
}

void wse_file_close(struct drm_device *drm, struct drm_file *file)
{
	struct wse_file *wfile = file->driver_priv;
	struct wse_queue *queue;
	unsigned long id;

	xa_for_each(&wfile->queues, id, queue) {
		xa_erase(&wfile->queues, id);
		wse_queue_close(queue);
	}
	/* Its jobs are aborted: now its programs go. */
	wse_slots_release(wfile->wdev, wfile);
	wse_file_put(wfile);
}

int wse_ioctl_queue_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct wse_device *wdev = wse_drm_device(drm);
	struct wse_file *wfile = file->driver_priv;
	struct drm_wse_queue_create *args = data;
	struct wse_queue *queue;
	u32 id;
	int ret;

	if (args->flags || args->pad ||
	    args->hw_queue >= wdev->info.num_queues || !args->depth ||
	    args->depth > DRM_WSE_MAX_QUEUE_DEPTH || args->timeout_ms > WSE_JOB_TIMEOUT_MS_MAX)
		return -EINVAL;
	if (wdev->is_test)
		return -ENOTCONN;

	queue = kzalloc(sizeof(*queue), GFP_KERNEL_ACCOUNT);
	if (!queue)
		return -ENOMEM;
	kref_init(&queue->ref);
	wse_device_get(wdev);
	queue->wdev = wdev;
	kref_get(&wfile->ref);
	queue->wfile = wfile;
	queue->hw_queue = args->hw_queue;
	queue->depth = args->depth;
	queue->timeout = msecs_to_jiffies(args->timeout_ms ?: WSE_JOB_TIMEOUT_MS_DEFAULT);
	queue->fence_context = dma_fence_context_alloc(1);
	queue->next_seqno = 1;
	mutex_init(&queue->submit_lock);
	spin_lock_init(&queue->lock);
	spin_lock_init(&queue->fence_lock);
	xa_init(&queue->jobs);

	/*
	 * A file may have at most 64 queues. The id is reserved first and the
	 * queue stored only once it is whole: from the store on, another
	 * thread's QUEUE_DESTROY may find it and free it.
	 */
	ret = xa_alloc(&wfile->queues, &id, NULL, XA_LIMIT(1, 64), GFP_KERNEL);
	if (ret) {
		wse_queue_put(queue);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	queue->id = id;
	snprintf(queue->timeline, sizeof(queue->timeline), "wse%u-q%u", wdev->index, id);
	args->queue_id = id;
	/* The reserved slot exists: storing into it allocates nothing. */
	xa_store(&wfile->queues, id, queue, GFP_KERNEL);
	return 0;
}

int wse_ioctl_queue_destroy(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct wse_file *wfile = file->driver_priv;
	struct drm_wse_queue_destroy *args = data;
	struct wse_queue *queue;

	if (args->pad)
		return -EINVAL;
	/* An id reserved by a QUEUE_CREATE still under way is not a queue
	 * yet: erasing it would free the id for a second queue.
	 */
	xa_lock(&wfile->queues);
	queue = xa_load(&wfile->queues, args->queue_id);
	if (queue)
		__xa_erase(&wfile->queues, args->queue_id);
	xa_unlock(&wfile->queues);
	if (!queue)
		return -ENOENT;
	wse_queue_close(queue);
	return 0;
}
