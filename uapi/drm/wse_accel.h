/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * wse: DRM accel UAPI of the virtual, network-attached Wafer-Scale Engine.
 *
 * Rules every structure here follows (Documentation/process/botching-up-ioctls.rst):
 * sizes are multiples of 8 bytes, pointers travel as __u64, padding is
 * explicit and must be zero, unknown flags are refused, and structures only
 * ever grow by appending members.
 *
 * Userspace builds this against libdrm's drm.h (pkg-config --cflags libdrm).
 */
#ifndef __UAPI_WSE_ACCEL_H__
#define __UAPI_WSE_ACCEL_H__

#include <linux/const.h>

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_WSE_GET_INFO		0x00
#define DRM_WSE_BO_CREATE		0x01
#define DRM_WSE_BO_INFO			0x02
#define DRM_WSE_MEM_XFER		0x03
#define DRM_WSE_QUEUE_CREATE		0x04
#define DRM_WSE_QUEUE_DESTROY		0x05
#define DRM_WSE_SUBMIT			0x06
#define DRM_WSE_WAIT			0x07

#define DRM_IOCTL_WSE_GET_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WSE_GET_INFO, struct drm_wse_get_info)
#define DRM_IOCTL_WSE_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WSE_BO_CREATE, struct drm_wse_bo_create)
#define DRM_IOCTL_WSE_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WSE_BO_INFO, struct drm_wse_bo_info)
#define DRM_IOCTL_WSE_MEM_XFER \
	DRM_IOW(DRM_COMMAND_BASE + DRM_WSE_MEM_XFER, struct drm_wse_mem_xfer)
#define DRM_IOCTL_WSE_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WSE_QUEUE_CREATE, struct drm_wse_queue_create)
#define DRM_IOCTL_WSE_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_WSE_QUEUE_DESTROY, struct drm_wse_queue_destroy)
#define DRM_IOCTL_WSE_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WSE_SUBMIT, struct drm_wse_submit)
#define DRM_IOCTL_WSE_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WSE_WAIT, struct drm_wse_wait)

/**
 * enum drm_wse_param - what &struct drm_wse_get_info asks for
 *
 * Each parameter names the type the kernel writes at &drm_wse_get_info.ptr.
 */
enum drm_wse_param {
	/** @DRM_WSE_PARAM_CAPABILITIES: __u64 mask of DRM_WSE_CAP_* bits. */
	DRM_WSE_PARAM_CAPABILITIES = 0,
	/** @DRM_WSE_PARAM_DEVICE_INFO: &struct drm_wse_device_info. */
	DRM_WSE_PARAM_DEVICE_INFO = 1,
	/** @DRM_WSE_PARAM_MAX_BO_SIZE: __u64, the largest size BO_CREATE accepts. */
	DRM_WSE_PARAM_MAX_BO_SIZE = 2,
	/** @DRM_WSE_PARAM_MAX_JOB_BYTES: __u64, the most data one job may carry. */
	DRM_WSE_PARAM_MAX_JOB_BYTES = 3,
};

/* Capability bits reported by DRM_WSE_PARAM_CAPABILITIES. */
/** DRM_WSE_CAP_BO: buffer objects can be created and mmap()ed. */
#define DRM_WSE_CAP_BO			_BITULL(0)
/** DRM_WSE_CAP_LINK: the device has a firmware link (not a test device). */
#define DRM_WSE_CAP_LINK		_BITULL(1)
/** DRM_WSE_CAP_MEM_XFER: DRM_IOCTL_WSE_MEM_XFER copies to and from device memory. */
#define DRM_WSE_CAP_MEM_XFER		_BITULL(2)
/** DRM_WSE_CAP_JOBS: queues, SUBMIT and WAIT. */
#define DRM_WSE_CAP_JOBS		_BITULL(3)

/**
 * struct drm_wse_get_info - query one parameter of the device
 *
 * The kernel writes min(@size, the parameter's size) bytes to @ptr and then
 * sets @size to the parameter's full size, so a caller passing @size = 0
 * learns how large a buffer to offer. Fields a newer kernel appends to a
 * parameter structure are simply not written for an older, shorter caller.
 */
struct drm_wse_get_info {
	/** @param: in, an &enum drm_wse_param value. */
	__u32 param;
	/** @size: in, bytes available at @ptr; out, the parameter's size. */
	__u32 size;
	/** @ptr: in, user address the value is written to (may be 0 if @size is 0). */
	__u64 ptr;
	/** @flags: in, must be 0: no flags are defined yet. */
	__u32 flags;
	/** @pad: must be 0. */
	__u32 pad;
};

/**
 * struct drm_wse_device_info - what a device is (DRM_WSE_PARAM_DEVICE_INFO)
 */
struct drm_wse_device_info {
	/** @wafer_width: processing elements per row of the mesh. */
	__u32 wafer_width;
	/** @wafer_height: rows of processing elements in the mesh. */
	__u32 wafer_height;
	/** @sram_per_pe: bytes of SRAM beside each processing element. */
	__u64 sram_per_pe;
	/** @sram_total: bytes of SRAM on the wafer. */
	__u64 sram_total;
	/** @clock_khz: the modelled fabric clock, in kHz. */
	__u32 clock_khz;
	/** @num_queues: hardware queues (DMA channels) the device exposes. */
	__u32 num_queues;
	/** @device_id: the device's identifier, unique per firmware instance. */
	__u64 device_id;
	/** @fw_version: firmware version, NUL-terminated and NUL-padded. */
	char fw_version[32];
};

/**
 * struct drm_wse_bo_create - create a buffer object
 *
 * The object is host memory the device reads and writes through its queues;
 * it is zero-filled and mapped with mmap() at the offset DRM_IOCTL_WSE_BO_INFO
 * returns. It is destroyed with DRM_IOCTL_GEM_CLOSE.
 */
struct drm_wse_bo_create {
	/** @size: in, bytes (1 to DRM_WSE_PARAM_MAX_BO_SIZE), rounded up to pages. */
	__u64 size;
	/** @flags: in, must be 0: no flags are defined yet. */
	__u32 flags;
	/** @handle: out, the GEM handle of the new object in this file. */
	__u32 handle;
};

/**
 * struct drm_wse_bo_info - where and how large a buffer object is
 */
struct drm_wse_bo_info {
	/** @handle: in, a GEM handle of this file. */
	__u32 handle;
	/** @pad: must be 0. */
	__u32 pad;
	/** @mmap_offset: out, the offset to pass to mmap() on the device file. */
	__u64 mmap_offset;
	/** @size: out, the object's size in bytes (a multiple of the page size). */
	__u64 size;
	/** @flags: in, must be 0: no flags are defined yet. */
	__u32 flags;
	/** @reserved: must be 0. */
	__u32 reserved;
};

/* Directions of &struct drm_wse_mem_xfer; exactly one must be set. */
#define DRM_WSE_XFER_TO_DEVICE		0x1
#define DRM_WSE_XFER_FROM_DEVICE	0x2

/**
 * struct drm_wse_mem_xfer - copy between a buffer object and device memory
 *
 * A synchronous copy over the link: the call returns when the firmware has
 * acknowledged every byte, or fails. Device memory is the wafer's SRAM,
 * addressed 0 .. sram_total - 1.
 */
struct drm_wse_mem_xfer {
	/** @handle: in, the buffer object. */
	__u32 handle;
	/** @flags: in, DRM_WSE_XFER_TO_DEVICE or DRM_WSE_XFER_FROM_DEVICE. */
	__u32 flags;
	/** @bo_offset: in, byte offset in the buffer object. */
	__u64 bo_offset;
	/** @dev_addr: in, byte address in device memory. */
	__u64 dev_addr;
	/** @length: in, bytes to copy (at least 1). */
	__u64 length;
	/** @timeout_ms: in, how long one piece may wait for the firmware; 0 for the default. */
	__u32 timeout_ms;
	/** @pad: must be 0. */
	__u32 pad;
};

/* Most jobs a queue holds before WAIT collects them. */
#define DRM_WSE_MAX_QUEUE_DEPTH		256

/* Timeouts in ms: what a timeout_ms of 0 means, and the most one may ask for. */
#define DRM_WSE_TIMEOUT_MS_DEFAULT	10000
#define DRM_WSE_TIMEOUT_MS_MAX		600000

/**
 * struct drm_wse_queue_create - open a queue on one of the device's
 * hardware queues (its DMA channels)
 *
 * Queues belong to the file that created them. Jobs on one queue are
 * carried out in the order they were submitted; queues are independent.
 */
struct drm_wse_queue_create {
	/** @hw_queue: in, the hardware queue, 0 .. num_queues - 1. */
	__u32 hw_queue;
	/** @depth: in, jobs the queue may hold uncollected, 1 .. DRM_WSE_MAX_QUEUE_DEPTH. */
	__u32 depth;
	/** @timeout_ms: in, how long a job may take before it is aborted; 0 for 10 s. */
	__u32 timeout_ms;
	/** @queue_id: out, the queue's id in this file. */
	__u32 queue_id;
	/** @flags: in, must be 0: no flags are defined yet. */
	__u32 flags;
	/** @pad: must be 0. */
	__u32 pad;
};

/**
 * struct drm_wse_queue_destroy - close a queue; its unfinished jobs are aborted
 */
struct drm_wse_queue_destroy {
	/** @queue_id: in, a queue of this file. */
	__u32 queue_id;
	/** @pad: must be 0. */
	__u32 pad;
};

/**
 * enum drm_wse_op - what a job asks of the device
 *
 * "Sends" means the job's buffer-object range is the request's data;
 * "receives" means the reply lands in that range. The arguments go in
 * &drm_wse_submit.args, in the order given; unused ones must be 0.
 */
enum drm_wse_op {
	/** @DRM_WSE_OP_MEM_WRITE: sends; args: device address. */
	DRM_WSE_OP_MEM_WRITE = 1,
	/** @DRM_WSE_OP_MEM_READ: receives; args: device address. */
	DRM_WSE_OP_MEM_READ = 2,
	/**
	 * @DRM_WSE_OP_PROGRAM_LOAD: sends a piece of a .wsep image and, on the
	 * last piece, receives the program's placement; args: slot, flags
	 * (1 = last piece), image size, offset of the piece.
	 */
	DRM_WSE_OP_PROGRAM_LOAD = 3,
	/** @DRM_WSE_OP_PROGRAM_UNLOAD: args: slot. */
	DRM_WSE_OP_PROGRAM_UNLOAD = 4,
	/** @DRM_WSE_OP_STREAM_WRITE: sends; args: slot, stream id. */
	DRM_WSE_OP_STREAM_WRITE = 5,
	/** @DRM_WSE_OP_STREAM_READ: receives up to the length; args: slot, stream id. */
	DRM_WSE_OP_STREAM_READ = 6,
	/** @DRM_WSE_OP_RUN: receives the run's result; args: slot, kind, steps, batch. */
	DRM_WSE_OP_RUN = 7,
	/** @DRM_WSE_OP_PARAMS_READ: receives; args: slot, which, byte offset. */
	DRM_WSE_OP_PARAMS_READ = 8,
	/** @DRM_WSE_OP_PARAMS_WRITE: sends; args: slot, which, byte offset. */
	DRM_WSE_OP_PARAMS_WRITE = 9,
	/** @DRM_WSE_OP_DEVICE_STATS: receives the device's counters. */
	DRM_WSE_OP_DEVICE_STATS = 10,
};

/* The operations that send and those that receive, a bit (1 << op) each. */
#define DRM_WSE_OPS_SEND \
	(_BITULL(DRM_WSE_OP_MEM_WRITE) | _BITULL(DRM_WSE_OP_PROGRAM_LOAD) | \
	 _BITULL(DRM_WSE_OP_STREAM_WRITE) | _BITULL(DRM_WSE_OP_PARAMS_WRITE))
#define DRM_WSE_OPS_RECEIVE \
	(_BITULL(DRM_WSE_OP_MEM_READ) | _BITULL(DRM_WSE_OP_PROGRAM_LOAD) | \
	 _BITULL(DRM_WSE_OP_STREAM_READ) | _BITULL(DRM_WSE_OP_RUN) | \
	 _BITULL(DRM_WSE_OP_PARAMS_READ) | _BITULL(DRM_WSE_OP_DEVICE_STATS))

/**
 * struct drm_wse_submit - queue a job
 *
 * The job's data is the range [@bo_offset, @bo_offset + @length) of the
 * buffer object @handle: what is sent, or where the reply goes. The
 * buffer object must stay alive; the job holds a reference to it.
 */
struct drm_wse_submit {
	/** @queue_id: in, a queue of this file. */
	__u32 queue_id;
	/** @op: in, an &enum drm_wse_op. */
	__u32 op;
	/** @handle: in, the buffer object, or 0 for a job without data. */
	__u32 handle;
	/** @timeout_ms: in, this job's timeout; 0 for the queue's. */
	__u32 timeout_ms;
	/** @bo_offset: in, where the data starts in the buffer object. */
	__u64 bo_offset;
	/** @length: in, bytes sent, or room for the reply. */
	__u64 length;
	/** @args: in, the operation's arguments (see &enum drm_wse_op). */
	__u64 args[4];
	/** @job_id: out, the job's number in its queue, from 1. */
	__u64 job_id;
	/** @flags: in, must be 0: no flags are defined yet. */
	__u32 flags;
	/** @pad: must be 0. */
	__u32 pad;
};

/**
 * struct drm_wse_wait - wait for a job to finish, and collect it
 *
 * A finished job is collected: its slot in the queue is freed and its id
 * is not valid afterwards. A wait that times out leaves the job queued.
 */
struct drm_wse_wait {
	/** @queue_id: in, a queue of this file. */
	__u32 queue_id;
	/** @flags: in, must be 0. */
	__u32 flags;
	/** @job_id: in, a job of that queue not yet collected. */
	__u64 job_id;
	/**
	 * @timeout_ns: in, absolute CLOCK_MONOTONIC time to give up at; 0
	 * only looks. Absolute, so an interrupted wait restarts unchanged.
	 */
	__s64 timeout_ns;
	/** @status: out, 0 or the job's negative errno. */
	__s32 status;
	/** @result_len: out, bytes of reply written to the buffer object. */
	__u32 result_len;
};

/*
 * io_uring: IORING_OP_URING_CMD on the accel file, with cmd_op
 * DRM_WSE_URING_CMD_JOB and a &struct drm_wse_uring_job in the SQE's
 * command area, which needs a ring set up with IORING_SETUP_SQE128. With
 * IORING_URING_CMD_FIXED in uring_cmd_flags, @addr lies in the registered
 * buffer sqe->buf_index. What the command does not use must be 0: the
 * SQE's addr and len, and the command area's bytes after the structure,
 * so that later kernels may give them a meaning. The CQE's res is the
 * reply length for operations that receive, 0 for the others, or a
 * negative errno.
 */
#define DRM_WSE_URING_CMD_JOB		0x57530001

/**
 * struct drm_wse_uring_job - a job submitted through io_uring
 *
 * The same operations as &struct drm_wse_submit, on ordinary user memory
 * instead of a buffer object. The job counts against its queue's depth
 * until its completion is posted; it is never collected with WAIT.
 */
struct drm_wse_uring_job {
	/** @queue_id: a queue of this file. */
	__u32 queue_id;
	/** @op: an &enum drm_wse_op. */
	__u32 op;
	/** @addr: user address of the data sent, or of room for the reply. */
	__u64 addr;
	/** @length: bytes sent, or room for the reply. */
	__u32 length;
	/** @timeout_ms: this job's timeout; 0 for the queue's. */
	__u32 timeout_ms;
	/** @args: the operation's arguments (see &enum drm_wse_op). */
	__u64 args[4];
	/** @reserved: must be 0. */
	__u64 reserved;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_WSE_ACCEL_H__ */
