/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: per-file queues and the jobs on them.
 */
#ifndef __WSE_JOB_H__
#define __WSE_JOB_H__

#include <linux/dma-fence.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "wse_link.h"

struct drm_device;
struct drm_file;
struct drm_gem_object;
struct wse_device;

/**
 * struct wse_file - what one open file of the accel device owns
 * @wdev: the device
 * @queues: queue id -> &struct wse_queue; the xarray's lock guards
 *	membership, a reference is taken before the lock is dropped
 */
struct wse_file {
	struct wse_device *wdev;
	struct xarray queues;
};

/**
 * struct wse_queue - a file's queue on one hardware queue
 * @ref: the file's queue table, each job, and callers hold references
 * @wdev: the device (referenced)
 * @id: the queue's id in its file
 * @hw_queue: the hardware queue its requests go to
 * @depth: most jobs held before they are collected
 * @timeout: default job timeout, jiffies
 * @fence_context: the dma_fence context of its jobs
 * @timeline: the fences' timeline name
 * @jobs: job id -> &struct wse_job, from submission until collected; the
 *	xarray's own lock guards it, and whoever erases a job drops the
 *	table's reference and counts it out of @held
 * @held: jobs in @jobs, bounded by @depth
 * @next_seqno: the id the next job gets
 * @closed: destroyed; no more submissions
 */
struct wse_queue {
	struct kref ref;
	struct wse_device *wdev;
	u32 id;
	u32 hw_queue;
	u32 depth;
	unsigned long timeout;
	u64 fence_context;
	char timeline[32];
	/** @submit_lock: orders submissions: job N is on the wire before N + 1. */
	struct mutex submit_lock;
	/** @lock: protects @held, @next_seqno and @closed. */
	spinlock_t lock;
	/** @fence_lock: the lock of its jobs' fences. */
	spinlock_t fence_lock;
	struct xarray jobs;
	u32 held;
	u64 next_seqno;
	bool closed;
};

/* What an operation is on the wire, and which way its data goes. */
struct wse_op_desc {
	u8 opcode;
	bool sends;		/* the data is the request's payload */
	bool receives;		/* the reply is the data */
	u8 nargs;		/* arguments used; the rest must be 0 */
	u8 hdr_len;		/* the request header built from the arguments */
	u8 reply_len;		/* a reply of fixed size needs this much room */
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

struct io_uring_cmd;

/**
 * struct wse_job - one request to the firmware, with a fence
 * @fence: signalled when the job finishes; its refcount is the job's
 *	lifetime (the queue's table, the link while in flight, the link's
 *	sender until the frame is sent, the timeout work while scheduled,
 *	and waiters hold references)
 * @req: the link request
 * @hdr: the request header, sent from here
 * @data_users: who still uses @obj's mapping: the job until it finishes,
 *	and the sender until the frame is sent; the last retires @obj
 * @queue: the queue (referenced)
 * @obj: the buffer object, until the job is retired
 * @map: @obj's kernel mapping, until the job is retired
 * @timeout_work: aborts the job when its time is up
 * @id: the job's number in its queue
 * @kbuf: a kernel copy of the data, for jobs that do not use a buffer
 *	object; freed with the job
 * @ucmd: the io_uring command the job answers, if it came that way
 * @on_finish: if set, called when the job finishes, with the request's
 *	reference to pass on or drop
 * @finished: set once, by whoever finishes the job
 * @status: 0 or a negative errno, once finished
 * @result_len: reply bytes written, once finished
 */
struct wse_job {
	struct dma_fence fence;
	struct wse_link_req req;
	union wse_job_hdr hdr;
	atomic_t data_users;
	struct wse_queue *queue;
	struct drm_gem_object *obj;
	struct iosys_map map;
	struct delayed_work timeout_work;
	u64 id;
	void *kbuf;
	struct io_uring_cmd *ucmd;
	void (*on_finish)(struct wse_job *job);
	atomic_t finished;
	int status;
	u32 result_len;
};

int wse_file_open(struct drm_device *drm, struct drm_file *file);
void wse_file_close(struct drm_device *drm, struct drm_file *file);
struct wse_queue *wse_queue_lookup(struct drm_file *file, u32 id);
void wse_queue_put(struct wse_queue *queue);
void wse_queue_abort_jobs(struct wse_queue *queue);
struct wse_job *wse_queue_next_job(struct wse_queue *queue, unsigned long *id);
void wse_job_put(struct wse_job *job);
u64 wse_job_max_bytes(u32 max_payload);
const struct wse_op_desc *wse_job_op(u32 op);
int wse_job_check(const u64 *args, bool has_data, u64 length, const struct wse_op_desc *d,
		  u32 max_payload);
int wse_job_request(const struct wse_op_desc *d, u32 op, const u64 *args, u64 length,
		    union wse_job_hdr *hdr, void *data, struct kvec *vec, unsigned int *nvec);
struct wse_job *wse_job_new(struct wse_queue *queue, u32 op);
int wse_job_start(struct wse_job *job, u32 timeout_ms, const struct kvec *vec,
		  unsigned int nvec, bool nonblock, u64 *job_id);
void wse_job_finish(struct wse_job *job, int status, u32 result_len);
void wse_job_collect(struct wse_job *job);

int wse_ioctl_queue_create(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_queue_destroy(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __WSE_JOB_H__ */
