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
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "../uapi/drm/wse_accel.h"
#include "wse_fdinfo.h"
#include "wse_link.h"

struct drm_device;
struct drm_file;
struct drm_gem_object;
struct wse_device;

/**
 * struct wse_file - what one open file of the accel device owns
 * @ref: the open file and each of its queues hold references; the
 *	queues, and their jobs, may outlive the file
 * @wdev: the device
 * @user: the user who opened it (referenced): what the file holds counts
 *	against the user's share too (wse_users.c)
 * @queues: queue id -> &struct wse_queue; the xarray's lock guards
 *	membership, a reference is taken before the lock is dropped. A
 *	QUEUE_CREATE under way holds its id reserved (a zero entry, which
 *	lookups and QUEUE_DESTROY pass over) until its queue is whole
 * @kbuf_bytes: bytes of kernel buffers its jobs hold
 * @slots: program slots it holds; &struct wse_slots.lock
 * @admin: its opener had CAP_SYS_ADMIN, so it may do what reaches past
 *	its own programs: read and write device memory directly (MEM_WRITE,
 *	MEM_READ, MEM_XFER), which every opener shares; set an appliance's
 *	default job (PARAMS_JOB on slot 0); have snapshots stored anywhere
 *	in the firmware's shared storage
 * @usage: what its jobs used of each hardware queue, for fdinfo
 */
struct wse_file {
	struct kref ref;
	struct wse_device *wdev;
	struct wse_user *user;
	struct xarray queues;
	atomic64_t kbuf_bytes;
	u32 slots;
	bool admin;
	struct wse_usage usage;
};

/**
 * struct wse_queue - a file's queue on one hardware queue
 * @ref: the file's queue table, each job, and callers hold references
 * @wdev: the device (referenced)
 * @wfile: the file it belongs to (referenced)
 * @id: the queue's id in its file
 * @hw_queue: the hardware queue its requests go to
 * @depth: most jobs held before they are collected
 * @timeout: default job timeout, jiffies
 * @fence_context: the dma_fence context of its jobs
 * @timeline: the fences' timeline name
 * @jobs: job id -> &struct wse_job, from submission until collected; the
 *	xarray's own lock guards it, and whoever erases a job drops the
 *	table's reference and counts it out of @held
 * @held: jobs that hold a place: in @jobs, or with a frame not yet
 *	sent; bounded by @depth
 * @next_seqno: the id the next job gets
 * @closed: destroyed; no more submissions
 */
struct wse_queue {
	struct kref ref;
	struct wse_device *wdev;
	struct wse_file *wfile;
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

/*
 * Bits of &wse_job.flags: the request is queued on the link; its time is
 * up.
 */
#define WSE_JOB_SUBMITTED	0
#define WSE_JOB_EXPIRED		1
/* Counted in its file's usage (fdinfo) until it finishes. */
#define WSE_JOB_IN_USAGE	3

/**
 * struct wse_job - one request to the firmware, with a fence
 * @fence: signalled when the job finishes; its refcount is the job's
 *	lifetime (the queue's table, the request until the job finishes,
 *	the link until the firmware is done with the request, the link's
 *	sender until the frame is sent, the timeout work while scheduled,
 *	and waiters hold references)
 * @req: the link request
 * @hdr: the request header, sent from here
 * @data_users: who still uses @obj's mapping: the job until it finishes,
 *	and the sender until the frame is sent; the last retires @obj
 * @slot_users: who holds the job's place in its queue: the queue's table
 *	until the job is collected, and the link until the firmware is done
 *	with the request (answered it, even after the job gave up on it, or
 *	never got it); the last gives it back
 * @flags: WSE_JOB_SUBMITTED, WSE_JOB_EXPIRED, WSE_JOB_IN_USAGE
 * @queue: the queue (referenced)
 * @obj: the buffer object, until the job is retired
 * @map: @obj's kernel mapping, until the job is retired
 * @timeout_work: aborts the job when its time is up
 * @id: the job's number in its queue
 * @kbuf: a kernel copy of the data, for jobs that do not use a buffer
 *	object; freed once the frame is sent if nothing is received into
 *	it, else with the job
 * @kbuf_len: bytes at @kbuf, counted against the file and the device
 * @ucmd: the io_uring command the job answers, if it came that way
 * @slot: the program slot it names and holds (wse_slots_begin()), or 0
 * @load_last: it is the last piece of a program load
 * @fw_bytes: its payload, counted against the firmware's read-ahead
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
	atomic_t slot_users;
	unsigned long flags;
	struct wse_queue *queue;
	struct drm_gem_object *obj;
	struct iosys_map map;
	struct delayed_work timeout_work;
	u64 id;
	void *kbuf;
	u32 kbuf_len;
	struct io_uring_cmd *ucmd;
	u32 slot;
	bool load_last;
	u32 fw_bytes;
	void (*on_finish)(struct wse_job *job);
	atomic_t finished;
	int status;
	u32 result_len;
};

/* Whether a job's data is checked (wse_job_check_data()) before it is sent. */
static inline bool wse_job_data_checked(u32 op, const u64 *args)
{
	return op == DRM_WSE_OP_PARAMS_WRITE && args[1] == WSE_LINK_PARAMS_SNAPSHOT_STORE;
}

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
int wse_job_admit(struct wse_job *job, struct wse_file *wfile, const struct wse_op_desc *d,
		  const u64 *args, u64 length);
int wse_job_check_data(struct wse_file *wfile, const u64 *args, u32 op, const void *data,
		       u64 length);
int wse_job_request(const struct wse_op_desc *d, u32 op, const u64 *args, u64 length,
		    union wse_job_hdr *hdr, void *data, struct kvec *vec, unsigned int *nvec);
struct wse_job *wse_job_new(struct wse_queue *queue, u32 op);
int wse_job_alloc_kbuf(struct wse_job *job, u32 len);
void wse_job_discard(struct wse_job *job);
void wse_file_put(struct wse_file *wfile);
int wse_job_start(struct wse_job *job, u32 timeout_ms, const struct kvec *vec,
		  unsigned int nvec, bool nonblock, u64 *job_id);
void wse_job_finish(struct wse_job *job, int status, u32 result_len);
void wse_job_collect(struct wse_job *job);

int wse_ioctl_queue_create(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_queue_destroy(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __WSE_JOB_H__ */
