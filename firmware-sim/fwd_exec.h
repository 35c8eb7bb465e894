/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Execution: loaded programs, their streams, and the per-queue workers
 * that carry out the execution opcodes (Documentation/link-protocol.rst,
 * "Execution").
 *
 * Threads. The connection thread receives every frame; an execution
 * request is copied into a struct fwd_req and appended to its queue's
 * FIFO. Each queue has a worker thread that takes its requests in order
 * and runs them to completion, blocking where the protocol says a request
 * waits (a full input stream, an empty output stream, a RUN waiting for
 * input); so a wait on one queue never holds up another. Workers answer
 * through fwd_conn_reply(), whose send path is locked.
 *
 * The connection thread never stops reading: a request beyond the
 * read-ahead bound (WSE_LINK_QUEUED_REQS, _BYTES) is refused with E_BUSY,
 * and CANCEL (fwd_exec_cancel()) takes a request out of its FIFO, or
 * flags the worker executing it, whose waits (fwd_exec_wait()) then end.
 *
 * One mutex (exec->lock) guards the programs, streams, assemblies,
 * counters and FIFOs. A queue's worker waits on its queue's condition (a
 * request came); everyone else (transfers, a RUN's thread, programs coming
 * and going) on exec->changed, broadcast whenever the state changes, so a
 * finished request, which changes nothing another waits for, wakes nobody.
 * The arithmetic of a RUN runs unlocked, on a program marked busy (unload,
 * replace and params access refuse it).
 */
#ifndef FWD_EXEC_H
#define FWD_EXEC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "wse/engine.h"
#include "wse/link_region.h"
#include "fwd_config.h"
#include "timing/timing.h"
#include "fwd_request.h"
#include "fwd_wire16.h"
#include "wse/wsep.h"

struct fwd_conn;
struct fwd_device;
struct fwd_graph;
struct fwd_pipeline;

#define FWD_PROGRAM_SLOTS	256	/* slots 1..255 */
#define FWD_MAX_QUEUES		64
/* Stream buffers: per-sample streams hold this many batches, per-transfer
 * streams this many transfers.
 */
#define FWD_STREAM_BATCHES	4
#define FWD_STREAM_TRANSFERS	2

/* A bounded byte ring: one stream's buffer on the device. */
struct fwd_stream {
	const struct wsep_stream *decl;
	uint32_t unit;		/* bytes a transfer must be a multiple of */
	uint64_t record;	/* bytes of one sample's record, or of one transfer */
	uint8_t *buf;
	uint64_t cap, head, len;
	bool writing, reading;	/* a transfer copies in or out without the lock */
	/*
	 * A layer's weights may be held by reference: whole transfers lying in
	 * a region the host mapped (STREAM_WRITE_REGION), read where they lie.
	 * Then len counts them and the ring's bytes are unused.
	 */
	const uint8_t *ref[FWD_STREAM_TRANSFERS];
	uint32_t ref_region[FWD_STREAM_TRANSFERS];
	uint32_t nref;
	/* A layer's weights of a 16-bit program: what may come as 16 bits. */
	struct fwd_wire16 wire;
};

struct fwd_program {
	uint32_t slot;
	struct wsep_program *prog;
	uint64_t sram_bytes;
	uint64_t est_cycles_per_step;
	struct engine_shape shape;
	struct engine_optim opt;
	/* The learning rate step by step (layer programs; graphs keep their own). */
	struct engine_lr_schedule sched;
	/* A step's batch is cut into micro-batches of micro_size samples (the
	 * last may be shorter), each with its own workspace so that pipeline
	 * stages can hold different ones at once: micro_max workspaces of
	 * ws_rows samples. micro_size is micro_default (--micro-batches)
	 * unless a RUN names its leaf size.
	 */
	uint32_t micro_size, micro_default, micro_max, ws_rows;
	struct engine_workspace *micro_ws[FWD_MICRO_BATCHES_MAX];
	struct engine_params *params;	/* pipelined layers: the resident weights; else NULL */
	struct fwd_graph *graph;	/* a graph program's graphs and weights (fwd_graph.h) */
	struct fwd_pipeline *pipeline;	/* the worker threads that run its steps */
	uint64_t step;			/* optimizer steps taken (Adam's t) */
	/* fp16, pipelined: the loss scale, GradScaler's rules (fwd_pipeline.c). */
	bool loss_scaling;
	struct engine_loss_scaler scaler;
	struct fwd_stream *streams;	/* prog->num_streams */
	bool resident;			/* pipelined: the weights live here */
	int samples, labels, losses, predictions, logits;	/* stream indexes, -1 if none */
	int weights[ENGINE_MAX_LAYERS], grads[ENGINE_MAX_LAYERS];
	/* Staging, allocated once: a batch's inputs and outputs. */
	uint8_t *in_bytes;
	float *in_f32;
	uint8_t *labels_u8;
	int32_t *labels_i32;
	int32_t *preds_i32;
	uint8_t *preds_u8;
	float *losses_f32;
	float *logits_f32;		/* graph programs, predict */
	bool busy;
	uint32_t io;			/* stream copies in progress (fwd_stream.c) */
	/*
	 * The parameters kept aside at a step (fwd_snapshot.c): weights, state
	 * arrays, then the step and a CRC32C; asked for at snap_at, taken
	 * (snap_taken), copied out by snap_readers readers. Lock held for all.
	 */
	uint8_t *snap;
	uint64_t snap_at;
	bool snap_asked, snap_taken, snap_filling;
	uint32_t snap_readers;
};

/* A program image arriving in pieces. */
struct fwd_assembly {
	uint64_t total, got;
	uint8_t *buf;
};

/* An execution request, decoded and waiting for its worker; r.data points into data. */
struct fwd_req {
	struct fwd_req *next;
	struct fwd_request r;
	uint8_t data[];
};

struct fwd_queue {
	struct fwd_req *head, *tail;
	pthread_t thread;
	bool started;
	pthread_cond_t cond;	/* a request came, or the link is going */
	/* The request the worker carries out, and whether the host cancelled it. */
	bool executing;
	bool cancel;
	uint32_t tag;
	/* Still counted in pending_*: until its answer goes (fwd_exec_answering()). */
	bool counted;
	uint32_t length;
};

struct fwd_exec_stats {
	uint64_t cycles, est_cycles, steps, samples;
	uint64_t bytes_in, bytes_out;
};

struct fwd_exec {
	struct fwd_device *dev;
	struct fwd_conn *conn;		/* the link being served, NULL between hosts */
	struct fwd_timing timing;
	uint64_t max_program;

	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool stopping;			/* the link is going: workers finish */
	struct fwd_program *slots[FWD_PROGRAM_SLOTS];
	struct fwd_assembly *assembling[FWD_PROGRAM_SLOTS];
	uint64_t assembling_bytes;
	uint64_t sram_used;
	uint32_t programs;
	struct fwd_queue queues[FWD_MAX_QUEUES];
	/* Queued or executing: what WSE_LINK_QUEUED_REQS and _BYTES bound. */
	uint32_t pending_reqs;
	uint64_t pending_bytes;
	int wake_fd;			/* eventfd: the poll loop's doorbell */
	struct fwd_exec_stats stats;
	/* Shared-memory regions the host mapped (REGION_MAP), by id - 1, and
	 * copies in progress that may use one.
	 */
	struct wse_link_region regions[WSE_LINK_REGIONS_MAX];
	uint32_t region_users;
};

/* fwd_exec_queue.c: life cycle, FIFOs and workers. */
int fwd_exec_init(struct fwd_exec *x, struct fwd_device *dev);
void fwd_exec_destroy(struct fwd_exec *x);
/* A host's link begins / ends: workers stop, programs and counters go. */
void fwd_exec_attach(struct fwd_exec *x, struct fwd_conn *c);
void fwd_exec_detach(struct fwd_exec *x);
/*
 * Appends a copy of @r (with its data) to its queue; starts the worker.
 * -EBUSY when the queues hold WSE_LINK_QUEUED_REQS requests already, or
 * @r's payload would take theirs past WSE_LINK_QUEUED_BYTES; -ENOMEM or
 * a thread's error otherwise.
 */
int fwd_exec_submit(struct fwd_exec *x, const struct fwd_request *r);
/*
 * CANCEL of the host's request @tag (connection thread): each queued
 * request with that tag leaves its FIFO and the bound, onto *@dropped
 * (linked by ->next) for the caller to answer E_CANCELED and free; a
 * worker executing one is told (fwd_exec_cancelled()) and woken.
 */
void fwd_exec_cancel(struct fwd_exec *x, uint32_t tag, struct fwd_req **dropped);
/* Clears the doorbell after poll() saw it. */
void fwd_exec_ack_wake(struct fwd_exec *x);
/*
 * Waits on exec->changed (lock held) for at most a second; returns false
 * when the caller must give up: the link is going (it answers nothing),
 * or the host cancelled the request the calling worker executes
 * (fwd_exec_cancelled(): it answers E_CANCELED).
 */
bool fwd_exec_wait(struct fwd_exec *x);
/* Lock held: has the host cancelled the calling worker's request (and the link stays)? */
bool fwd_exec_cancelled(struct fwd_exec *x);
/*
 * Lock not held, before answer @f goes out: if it answers the calling
 * worker's request, the request stops counting against the read-ahead
 * bound now, so that a host that saw the answer may send another.
 */
void fwd_exec_answering(struct fwd_exec *x, const struct wse_link_frame *f);

/* fwd_program.c: the program in a slot; PROGRAM_LOAD and _UNLOAD are its ops. */
void fwd_program_free(struct fwd_program *p);
/* The program in @slot, or NULL with a refusal text in @text. Lock held. */
struct fwd_program *fwd_program_get(struct fwd_exec *x, uint32_t slot, char *text, size_t len);

/* fwd_region.c: the host's regions (lock held); NULL and a text if @ref is not in one. */
/* Does a program hold transfers of region @id by reference, or run? (lock held) */
bool fwd_region_in_use(struct fwd_exec *x, uint32_t id);
void *fwd_region_at(struct fwd_exec *x, const struct wse_link_region_ref_info *ref,
		    uint64_t len, char *text, size_t textlen);
void fwd_region_unmap_all(struct fwd_exec *x);
/* fwd_params.c: floats [first, first + n) of array @slot (-1: the weights) to or from @buf. */
void fwd_params_copy(struct fwd_program *p, int slot, uint64_t first, uint64_t n,
		     uint8_t *buf, bool to_device);

/* fwd_snapshot.c: PARAMS_WRITE / PARAMS_READ of WSE_LINK_PARAMS_SNAPSHOT. */
/* Bytes of @p's snapshot region. */
uint64_t fwd_snapshot_size(const struct fwd_program *p);
/* Asks for a snapshot at step @step (lock held); 0, or a text why not. */
int fwd_snapshot_ask(struct fwd_exec *x, struct fwd_program *p, uint64_t step, char *text,
		     size_t len);
/* After a training step of a RUN (lock not held): the snapshot, if this is its step. */
void fwd_snapshot_after_step(struct fwd_exec *x, struct fwd_program *p);
/*
 * Holds the snapshot (of step @step unless @any) for a reader, lock held:
 * it is not retaken, nor its program unloaded, until released (lock not
 * held). 0, or a text why not (none taken, another step).
 */
int fwd_snapshot_hold(struct fwd_program *p, bool any, uint64_t step, char *text, size_t len);
void fwd_snapshot_release(struct fwd_exec *x, struct fwd_program *p);
/* Saves the held snapshot into a file of the shared storage; 0, or a text. */
int fwd_snapshot_store(struct fwd_exec *x, struct fwd_program *p,
		       const struct wse_link_snapshot_store *req, char *text, size_t len);

/* fwd_stream.c: the rings (STREAM_WRITE and _READ are its ops). */
int fwd_stream_setup(struct fwd_program *p);
void fwd_stream_put(struct fwd_stream *s, const void *data, uint64_t n);
void fwd_stream_get(struct fwd_stream *s, void *data, uint64_t n);
/*
 * In place, for a RUN (lock held): @n bytes of @s from @off bytes past its
 * first if they are there and lie in one piece of its ring or are one
 * transfer held by reference (else NULL), dropped from the front by
 * fwd_stream_consume() once used; and room for @n
 * bytes after its data, in one piece (else NULL), made data by
 * fwd_stream_commit() once written.
 */
const void *fwd_stream_peek(const struct fwd_stream *s, uint64_t off, uint64_t n);
void fwd_stream_consume(struct fwd_stream *s, uint64_t n);
void *fwd_stream_reserve(struct fwd_stream *s, uint64_t n);
void fwd_stream_commit(struct fwd_stream *s, uint64_t n);

#endif /* FWD_EXEC_H */
