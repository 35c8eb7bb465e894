/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libwse: the runtime API of the wse accelerator. Devices, buffer objects,
 * queues, jobs (SUBMIT/WAIT), program loading, and memory and stream
 * transfers through io_uring. The control plane (attach, list, events) is
 * wse/ctl.h, which this header includes.
 *
 * Every function that can fail returns 0 (or a count) or a negative errno;
 * wse_strerror() turns such a code into a message. Documentation/libwse.rst
 * is the reference.
 */
#ifndef WSE_WSE_H
#define WSE_WSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "drm/wse_accel.h"
#include "wse/ctl.h"

struct wse_dev;
struct wse_ring;

/* ------------------------------------------------------------ devices */

/*
 * Opens a device. @spec is a control-plane index ("0": the device wsectl
 * lists as 0), a path ("/dev/accel/accel1"), or "any" (the first device
 * whose link is up). Errors: -EINVAL a malformed spec, -ENODEV no such
 * device (or none with a live link for "any"), -ENOTTY the path is not a
 * wse accel node, and open()'s own errors.
 */
int wse_open(const char *spec, struct wse_dev **out);
void wse_close(struct wse_dev *dev);

/*
 * The group the installed udev rule gives the accel nodes (mode 0660):
 * systemd's group for accel and DRM render nodes.
 */
#define WSE_ACCESS_GROUP	"render"

/*
 * After wse_open(@spec) failed with -EACCES or -EPERM: a sentence in @buf
 * naming the node, its group and mode, and what to do - join its group,
 * log in again after joining, or install the udev rule (and the group)
 * that gives it group WSE_ACCESS_GROUP. 0, or a negative errno when @spec
 * names no node (@buf is then empty).
 */
int wse_access_hint(const char *spec, char *buf, size_t len);

/* The accel file descriptor (owned by @dev) and the control-plane index
 * (-1 when the control plane does not know the node).
 */
int wse_dev_fd(const struct wse_dev *dev);
int wse_dev_index(const struct wse_dev *dev);

/* What DRM_IOCTL_WSE_GET_INFO reports. */
struct wse_info {
	uint64_t caps;			/* DRM_WSE_CAP_* */
	struct drm_wse_device_info dev;
	uint64_t max_bo_size;
	uint64_t max_job_bytes;		/* 0 on a device without a link */
};

int wse_info(struct wse_dev *dev, struct wse_info *info);

/* ------------------------------------------------------ buffer objects */

struct wse_bo {
	uint32_t handle;
	uint64_t size;			/* rounded up to pages by the kernel */
	void *map;			/* NULL until wse_bo_map() */
};

/* Creates a zero-filled object of at least @size bytes (not mapped). */
int wse_bo_alloc(struct wse_dev *dev, uint64_t size, struct wse_bo *bo);
/* Maps the whole object read-write (shared); sets bo->map. */
int wse_bo_map(struct wse_dev *dev, struct wse_bo *bo);
/* Unmaps it if mapped and closes the handle. */
int wse_bo_free(struct wse_dev *dev, struct wse_bo *bo);

/* ------------------------------------------------------- queues, jobs */

/* @depth 1..DRM_WSE_MAX_QUEUE_DEPTH; @timeout_ms up to DRM_WSE_TIMEOUT_MS_MAX, 0 for the default. */
int wse_queue_create(struct wse_dev *dev, uint32_t hw_queue, uint32_t depth,
		     uint32_t timeout_ms, uint32_t *queue_id);
int wse_queue_destroy(struct wse_dev *dev, uint32_t queue_id);

/* One job: an enum drm_wse_op on a buffer-object range (handle 0: none). */
struct wse_job {
	uint32_t op;
	uint32_t handle;
	uint64_t bo_offset;
	uint64_t length;
	uint64_t args[4];
	uint32_t timeout_ms;		/* 0: the queue's */
};

/* Queues @job; -EBUSY when the queue is full (collect with wse_wait). */
int wse_submit(struct wse_dev *dev, uint32_t queue_id, const struct wse_job *job,
	       uint64_t *job_id);
/*
 * Waits until absolute CLOCK_MONOTONIC @deadline_ns (0: only looks) and
 * collects the job. Returns the ioctl's result (-ETIME: not finished, still
 * queued); *@status gets the job's own 0 or negative errno, *@result_len
 * the reply bytes. Either pointer may be NULL.
 */
int wse_wait(struct wse_dev *dev, uint32_t queue_id, uint64_t job_id, int64_t deadline_ns,
	     int *status, uint32_t *result_len);
/* Now plus @ms, as an absolute CLOCK_MONOTONIC deadline for wse_wait(). */
int64_t wse_deadline_ns(int64_t ms);

/* --------------------------------------------------------- programs */

/* Where the device placed a program (the last piece's reply). */
struct wse_program_info {
	uint32_t slot, mode, num_layers, num_streams, batch;
	uint64_t sram_bytes, est_cycles_per_step;
};

/*
 * Loads the .wsep image @image (@len bytes) into program slot @slot
 * (1..255) through queue @queue_id, in pieces of at most max-job-bytes
 * (PROGRAM_LOAD: slot, flags = 1 on the last piece, total, offset). @info
 * may be NULL. Errors: the jobs' statuses, e.g. -ENOSPC (does not fit the
 * wafer) or -EINVAL (an image the firmware refuses).
 */
int wse_program_load(struct wse_dev *dev, uint32_t queue_id, uint32_t slot,
		     const void *image, size_t len, struct wse_program_info *info);
int wse_program_unload(struct wse_dev *dev, uint32_t queue_id, uint32_t slot);

/* ------------------------------------------------ io_uring transfers */

struct wse_ring_params {
	uint32_t hw_queue;		/* the hardware queue of the ring's own queue */
	uint32_t depth;			/* most commands in flight: 1..256 (0: 64) */
	uint32_t batch;			/* SQEs per io_uring_submit() (0: depth / 4, >= 1) */
	uint32_t piece;			/* most bytes per command (0: max-job-bytes) */
	uint32_t timeout_ms;		/* per command (0: DRM_WSE_TIMEOUT_MS_DEFAULT) */
};

/* Counters of what a ring did, for tests and benchmarks. */
struct wse_ring_stats {
	uint64_t commands;		/* commands completed */
	uint64_t submits;		/* io_uring_submit() calls that sent any */
	uint32_t max_inflight;		/* most commands in flight at once */
	uint32_t fixed;			/* commands on registered buffers */
};

/*
 * A ring of its own (IORING_SETUP_SQE128) and a queue of its own on @dev,
 * which must outlive it. @params may be NULL for the defaults.
 */
int wse_ring_open(struct wse_dev *dev, const struct wse_ring_params *params,
		  struct wse_ring **out);
void wse_ring_close(struct wse_ring *ring);
void wse_ring_get_stats(const struct wse_ring *ring, struct wse_ring_stats *st);

/*
 * Registers buffers with the ring (io_uring_register_buffers). Afterwards a
 * transfer whose whole range lies inside one of them goes as fixed-buffer
 * commands (IORING_URING_CMD_FIXED); others stay plain.
 */
int wse_ring_register(struct wse_ring *ring, const struct iovec *iov, unsigned int n);
int wse_ring_unregister(struct wse_ring *ring);

/*
 * A transfer: @op with @args over @len bytes at @buf. Memory operations
 * (MEM_WRITE/MEM_READ) advance the device address (args[0]) piece by piece,
 * parameter operations (PARAMS_WRITE/PARAMS_READ) their offset (args[2]);
 * other operations repeat their arguments on every piece. Every piece but
 * the last is a whole number of @unit bytes (0 or 1: any size): a stream
 * moves whole records.
 */
struct wse_xfer {
	uint32_t op;
	uint64_t args[4];
	void *buf;
	size_t len;
	uint32_t unit;
};

/*
 * Carries out @x as commands of at most the ring's piece size, up to the
 * ring's depth in flight, submitted in batches. *@done (may be NULL) gets
 * the bytes moved: for operations that receive, the replies' lengths,
 * packed together in order (a short stream reply is not a gap). Returns 0
 * or the first failing command's negative errno (the rest are still
 * reaped).
 */
int wse_ring_xfer(struct wse_ring *ring, const struct wse_xfer *x, size_t *done);

int wse_mem_write(struct wse_ring *ring, uint64_t dev_addr, const void *buf, size_t len);
int wse_mem_read(struct wse_ring *ring, uint64_t dev_addr, void *buf, size_t len);
/*
 * Streams of program @slot. @record is the stream's record size in bytes
 * (elements per sample times element size for a per-sample stream, the
 * element size for a per-transfer one): pieces are whole records.
 */
int wse_stream_write(struct wse_ring *ring, uint32_t slot, uint32_t stream, uint32_t record,
		     const void *buf, size_t len);
/* Reads up to @len bytes; *@got gets how many came. */
int wse_stream_read(struct wse_ring *ring, uint32_t slot, uint32_t stream, uint32_t record,
		    void *buf, size_t len, size_t *got);

/* One transfer of a stream batch: all @len bytes go, or all of them come back. */
struct wse_stream_io {
	uint32_t op;			/* DRM_WSE_OP_STREAM_WRITE or DRM_WSE_OP_STREAM_READ */
	uint32_t stream;
	uint32_t record;		/* the stream's record size, as for wse_stream_write() */
	void *buf;
	size_t len;
};

/*
 * A batch of stream transfers of program @slot, such as one training
 * step's: writes go on @in, reads on @out (rings on different hardware
 * queues, so a write waiting for room in a device stream never holds up
 * the read that would make it; @in == @out is allowed when that cannot
 * happen). A transfer longer than one command goes first, by itself,
 * piece by piece in order; the others are all in flight at once, so the
 * order between them is not kept: a batch writes a stream at most once,
 * or twice with the same bytes. A read that comes back short is carried
 * on until its @len bytes are in (-EIO if the device sends nothing).
 * Returns 0 or the first failure's negative errno; everything submitted
 * is still reaped.
 */
int wse_stream_batch(struct wse_ring *in, struct wse_ring *out, uint32_t slot,
		     const struct wse_stream_io *io, unsigned int n);

/* ------------------------------------------------- runs, parameters */

/* What a RUN does (the RUN job's kind argument; the link's WSE_LINK_RUN_*). */
enum wse_run_kind {
	WSE_RUN_TRAIN = 1,		/* forward, loss, backward, update */
	WSE_RUN_EVAL = 2,		/* forward and loss */
	WSE_RUN_PREDICT = 3,		/* forward only */
};

/* A RUN: @steps steps of @batch samples of the program in @slot. */
struct wse_run {
	uint32_t slot, kind, steps, batch;
};

/* How a RUN went, decoded from its reply. */
struct wse_run_result {
	uint32_t steps;			/* steps completed */
	uint32_t samples;
	uint64_t cycles;		/* device cycles, by the firmware's timing model */
	uint64_t est_cycles;		/* the compiler's estimate of the same work */
	uint64_t host_ns;		/* wall time the simulator took */
};

/* Room a RUN's reply takes in its buffer object. */
#define WSE_RUN_RESULT_BYTES	32U

/*
 * Submits @run as a job on queue @queue_id; its reply will land at the
 * start of @result (at least WSE_RUN_RESULT_BYTES, mapped). A RUN waits on
 * the device for its input streams, so it goes on a queue of its own.
 */
int wse_run_submit(struct wse_dev *dev, uint32_t queue_id, const struct wse_bo *result,
		   const struct wse_run *run, uint64_t *job_id);
/*
 * Waits until @deadline_ns (as wse_wait()) for the RUN and decodes its
 * result into @res. Returns 0, the wait's or the job's negative errno, or
 * -EPROTO for a reply that is not a run result.
 */
int wse_run_wait(struct wse_dev *dev, uint32_t queue_id, uint64_t job_id,
		 const struct wse_bo *result, int64_t deadline_ns, struct wse_run_result *res);

/*
 * A layer-pipelined program's resident parameters, for checkpoints: the
 * weights in the .wsep layout, the optimizer's state arrays (each laid out
 * as the weights, one after another) and its step count (Adam's t). The
 * caller sets @floats and @state_arrays and provides the arrays.
 */
struct wse_params {
	uint64_t floats;
	unsigned int state_arrays;	/* 0 (SGD), 1 (momentum) or 2 (Adam) */
	float *weights;			/* @floats */
	float *state;			/* @state_arrays * @floats */
	uint64_t step;
};

/* PARAMS_READ / PARAMS_WRITE of all of @p on @ring; 0 or a negative errno. */
int wse_params_read(struct wse_ring *ring, uint32_t slot, struct wse_params *p);
int wse_params_write(struct wse_ring *ring, uint32_t slot, const struct wse_params *p);

/* ---------------------------------------------------------- appliances */

/*
 * A Wafer-Scale Cluster appliance (wse-appliance) is one device: its
 * coordinator spreads a weight-streaming program over the appliance's
 * systems, keeps the weights and optimizer state in MemoryX (whose
 * PARAMS_READ and PARAMS_WRITE wse_params_read() and _write() reach) and
 * may read the samples itself from a dataset it shares with the user
 * node. These calls reach what only an appliance has (slot 0's params).
 */
/* The link's WSE_LINK_APPLIANCE_SYSTEMS_MAX (libwse asserts they agree). */
#define WSE_APPLIANCE_SYSTEMS_MAX	16

enum wse_part_state {
	WSE_PART_UP = 1,		/* connected and answering */
	WSE_PART_DOWN = 2,		/* lost, until a job connects it: the reason says why */
	WSE_PART_IDLE = 3,		/* not connected, nothing wrong: no job holds it */
};

struct wse_appliance_system {
	uint64_t device_id;
	enum wse_part_state state;
	uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx;	/* the coordinator's link to it */
	uint64_t steps, samples;
	char address[65];
	char reason[65];
};

struct wse_appliance {
	uint32_t systems;
	uint32_t job_systems;		/* systems the loaded job runs on; 0: none */
	enum wse_part_state memoryx_state, swarmx_state, input_state;
	uint64_t memoryx_capacity, memoryx_held, memoryx_updates;
	uint64_t swarmx_broadcast, swarmx_reduced;	/* bytes */
	uint64_t input_samples;
	char reason[129];		/* a service down now, or the last failure */
	struct wse_appliance_system system[WSE_APPLIANCE_SYSTEMS_MAX];
};

/*
 * The appliance's parts and counters. -EINVAL when the device refuses the
 * question: it is a single system, not an appliance.
 */
int wse_appliance_info(struct wse_ring *ring, struct wse_appliance *a);
/*
 * The next program runs on @systems of the appliance's systems (before
 * loading it): wse_appliance_job() for every slot's (slot 0, the default),
 * wse_appliance_job_slot() for the next one loaded into @slot (1..255)
 * only, until the slot is unloaded.
 */
int wse_appliance_job(struct wse_ring *ring, uint32_t systems);
int wse_appliance_job_slot(struct wse_ring *ring, uint32_t slot, uint32_t systems);

/* Where the samples of a job's coming RUNs come from. */
struct wse_input {
	bool dataset;			/* false: the host writes them (the default) */
	const char *path;		/* relative to the appliance's shared directory */
	const char *split;		/* "train", "t10k" */
	bool shuffle;			/* in libwsedata's epoch order (wsetrain's) */
	uint64_t seed;
	uint32_t epoch;
	uint32_t first;			/* the position in that order */
	uint32_t count;			/* samples of the dataset used; 0: all */
};
int wse_appliance_input(struct wse_ring *ring, uint32_t slot, const struct wse_input *in);

/*
 * Snapshots, for checkpoints that do not stop training: the device copies
 * its parameters aside at the end of step @step of a RUN (at once if the
 * program is idle at that step), and they are read from there while it
 * trains on. wse_params_snapshot_at() asks (-EINVAL when the step has
 * passed or the last snapshot is being read); wse_params_read_snapshot()
 * reads the copy into @p, step count included, and its CRC32C of the
 * weights and state arrays into *@crc (-EINVAL if not taken yet).
 */
int wse_params_snapshot_at(struct wse_ring *ring, uint32_t slot, uint64_t step);
int wse_params_read_snapshot(struct wse_ring *ring, uint32_t slot, struct wse_params *p,
			     uint32_t *crc);
/*
 * With storage the device shares with this host: the snapshot of step
 * @step saved by the device into @name (relative to that storage; a file
 * this host made there), the weights at byte @offset and the state arrays
 * after them (-EINVAL if the device has no such storage or file: the
 * message is in the device's reply); and the snapshot's step count and
 * CRC32C alone, of a program of @floats weights and @state_arrays arrays.
 */
int wse_params_snapshot_store(struct wse_ring *ring, uint32_t slot, uint64_t step,
			      uint64_t offset, const char *name);
int wse_params_snapshot_sum(struct wse_ring *ring, uint32_t slot, uint64_t floats,
			    unsigned int state_arrays, uint64_t *step, uint32_t *crc);

/*
 * Single commands, for callers that drive their own pipeline (wsebench):
 * wse_ring_prep() puts one command on the submission queue (-EBUSY when
 * depth commands are already queued or in flight); wse_ring_submit() sends
 * what is prepared; wse_ring_reap() waits until at least @min completions
 * (or @deadline_ns, absolute CLOCK_MONOTONIC, passes: -ETIME) and returns
 * how many it stored, at most @max.
 */
struct wse_cmd {
	uint32_t op;
	uint64_t args[4];
	void *buf;
	uint32_t len;
	uint64_t user_data;
};

struct wse_completion {
	uint64_t user_data;
	int32_t res;			/* reply length, 0, or a negative errno */
};

int wse_ring_prep(struct wse_ring *ring, const struct wse_cmd *cmd);
int wse_ring_submit(struct wse_ring *ring);
int wse_ring_reap(struct wse_ring *ring, struct wse_completion *out, unsigned int max,
		  unsigned int min, int64_t deadline_ns);

/* ------------------------------------------------------------- events */

/*
 * Device events come from the control plane (wse/ctl.h): wse_ctl_open(),
 * wse_ctl_subscribe(), then wse_dev_next_event() returns the next event of
 * @dev's index only, waiting at most @timeout_ms (-ETIMEDOUT: none).
 */
int wse_dev_next_event(const struct wse_dev *dev, struct wse_ctl *ctl, int timeout_ms,
		       struct wse_event *ev);

/* ------------------------------------------------------------- errors */

/* A message for 0 or a negative errno returned by libwse (or the kernel). */
const char *wse_strerror(int code);

#endif /* WSE_WSE_H */
