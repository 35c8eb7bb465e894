/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The coordinator (wse-appliance --role coordinator): the device the user
 * node attaches, over the link protocol, as one device. It is the host of
 * every system's link and of MemoryX's, SwarmX's and the input workers'.
 *
 *   coord_main.c   options, the parts connected at start, hosts served one after another
 *   coord_conn.c   the user node's link: handshake, receive thread, a worker per queue and slot
 *   coord_parts.c  systems and services: connecting, reconnecting, their state
 *   coord_exec.c   each request of the user node; pipelined programs handed to a system
 *   coord_job.c    a weight-streaming job: its set up, input and output rings
 *   coord_run.c    a weight-streaming RUN: a driver thread per system, the reductions
 *   coord_feed.c   a pipelined program's samples from the input workers, written to its system
 *
 * Locking: coord->lock guards the job's rings, progress and failure and the
 * parts' states. Waiters wait on what they wait for: the input rings
 * (data in, room freed: input_cond), MemoryX's updates (update_cond), the
 * output rings and the steps committed (output_cond), a queue's requests
 * (its own condition); the rest (the job's RUN ending, read-ahead) on
 * coord->changed. A failure or the link going wakes them all
 * (coord_wake_all()), and every wait is bounded.
 * Each link (hostlink.h) has its own locks; a service link is called by one
 * thread at a time under its own mutex. No thread waits on a link holding
 * coord->lock.
 */
#ifndef APPLIANCE_COORD_H
#define APPLIANCE_COORD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "hostlink.h"
#include "svc_proto.h"
#include "wse/engine.h"
#include "wse/link_region.h"
#include "../fwd_wire16.h"
#include "wse/wsep.h"

#define COORD_SYSTEMS_MAX	WSE_LINK_APPLIANCE_SYSTEMS_MAX
#define COORD_QUEUES		WSE_LINK_Q_ROLES
#define COORD_SLOTS		256
/* A batch's gradient is summed over this many leaves (micro-batches) at
 * least by default (--leaves), whatever the number of systems: so 1, 2, 4
 * and 8 give the same bits.
 */
#define COORD_LEAVES		8
#define COORD_LEAVES_MAX	32	/* a system's micro-batches at most (FWD_MICRO_BATCHES_MAX) */
/* Input and output rings hold this many batches. */
#define COORD_RING_BATCHES	4
#define COORD_PART_MS		60000	/* a part's answer to one request */
/*
 * Requests of pipelined programs forwarded to one system at once, at
 * most: the rest of its link's HOSTLINK_PENDING are the coordinator's own.
 */
#define COORD_FORWARDS		(HOSTLINK_PENDING - 16)

/* Queues of a system's link, and of the coordinator's to the user node. */
#define Q_RUN		WSE_LINK_Q_RUN
#define Q_IN		WSE_LINK_Q_IN
#define Q_OUT		WSE_LINK_Q_OUT
#define Q_CTL		WSE_LINK_Q_CTL
/*
 * The coordinator's own queue on a system that has more than the user
 * node's COORD_QUEUES (wse-appliance starts its systems with --queues 5):
 * loads, unloads and counters there wait behind no request a user's
 * program sent on the queues it chose. Q_CTL on a system of 4 queues.
 */
#define Q_OWN		COORD_QUEUES

struct coord_opts {
	const char *listen;
	const char *port_file;
	const char *system[COORD_SYSTEMS_MAX];
	unsigned int systems;
	const char *memoryx, *swarmx, *input;
	uint64_t max_program;
	uint64_t memoryx_capacity;	/* what HELLO reports */
	int hello_timeout_ms;
	bool no_regions;		/* systems' data in frames, as to other machines */
	unsigned int leaves;		/* a batch's micro-batches at least (--leaves) */
};

/* A part: a system, or a service. */
struct coord_part {
	const char *addr;
	char name[64];			/* "system 1 (unix:...)", "MemoryX (unix:...)" */
	struct hostlink link;
	bool opened;			/* link set up (it may have died since) */
	char reason[HOSTLINK_TEXT];	/* why it is down */
	pthread_mutex_t call_lock;	/* services: one call at a time */
	/* Systems only: */
	struct wse_link_device_info dev;	/* from its last HELLO */
	bool maps_regions;		/* on this machine: data go through regions */
	uint64_t steps, samples;	/* from its RUN results */
	unsigned int forwarding;	/* programs' requests waiting on it (under coord->lock) */
	uint64_t base_frames_tx, base_frames_rx, base_bytes_tx, base_bytes_rx;	/* earlier links */
};

/* System @s's queue for the coordinator's own requests (Q_OWN, or Q_CTL if it has no such queue). */
static inline uint16_t coord_own_queue(const struct coord_part *s)
{
	return s->dev.num_queues > Q_OWN ? Q_OWN : Q_CTL;
}

/* A byte ring: input rings lie in the coordinator's input region. */
struct coord_ring {
	uint8_t *buf;
	uint64_t at;			/* the buffer's offset in its region (input rings) */
	uint64_t cap, head, len;
};

struct coord_conn;

/* A weight-streaming job (coord_job.c). */
struct coord_job {
	bool active;
	uint32_t slot;
	struct wsep_program *prog;
	struct wse_link_prog_info info;		/* as system 0 placed it */
	unsigned int n;				/* systems */
	unsigned int sys[COORD_SYSTEMS_MAX];	/* their indexes */
	uint32_t samples_id, labels_id, losses_id, preds_id;	/* stream ids */
	int64_t logits_id;			/* a graph program's logits (PREDICT); -1: none */
	uint32_t weights_id[WSEP_MAX_LAYERS], grads_id[WSEP_MAX_LAYERS];
	/* Which of layer k's floats go to a system in frames as 16 bits. */
	struct fwd_wire16 wire[WSEP_MAX_LAYERS];
	uint32_t record;			/* bytes of a sample */
	uint32_t rows;				/* labels and predictions per sample */
	uint32_t logit_bytes;			/* logits of a sample */
	uint64_t floats;			/* weights, all layers */
	/* Regions: MemoryX's weights, SwarmX's slots, ours for the input. */
	struct wse_link_region mx_region, sx_region, in_region;
	struct wse_link_region_map_info mx_map, sx_map, in_map;
	struct coord_ring samples, labels;	/* in in_region */
	struct coord_ring losses, preds, logits;	/* to the user node */
	/* Where the samples come from: the host's writes, or the input workers. */
	bool from_dataset;
	uint32_t dataset_left;			/* samples the workers still have in the epoch */
	/* Progress, all under coord->lock. */
	uint64_t step;				/* optimizer steps taken: MemoryX's t */
	uint64_t updated[WSEP_MAX_LAYERS];	/* steps whose update of layer k is done */
	/*
	 * fp16: GradScaler's state, one for all systems (each RUN of a step
	 * carries its scale); a step's updates wait in MemoryX until every
	 * layer's summed gradient is checked, then all apply or none (coord_run.c).
	 */
	bool loss_scaling;
	struct engine_loss_scaler scaler;
	bool failed;
	char why[256];				/* the failure, naming the part */
	struct coord_run *run;			/* the RUN in progress, or NULL */
};

struct coord_slot {
	enum { SLOT_EMPTY, SLOT_SYSTEM, SLOT_JOB } kind;
	unsigned int system;			/* SLOT_SYSTEM: where it runs */
	/* WSE_LINK_PARAMS_JOB on this slot: its programs' systems; 0: c->job_systems. */
	uint32_t job_systems;
	/* SLOT_SYSTEM, what the input workers need to feed it (coord_feed.c): */
	bool feedable;				/* trains on byte images, a label each */
	uint32_t samples_id, labels_id, record, batch, classes;
	uint32_t input_rank, input_shape[SVC_INPUT_MAX_RANK];	/* a sample's shape */
	uint8_t *image;				/* arriving in pieces */
	uint64_t total, got;
};

/*
 * The input workers feeding a pipelined program (coord_feed.c): set by
 * PARAMS_INPUT on its slot, used by its RUNs, all on the user node's
 * queue workers one request at a time; the feeder thread of a RUN only
 * reads it.
 */
struct coord_feed {
	bool active;
	uint32_t slot;
	unsigned int system;
	struct wse_link_region region;		/* FEED_BATCHES batches of samples, then of labels */
	struct wse_link_region_map_info map;
	bool by_region;				/* the system maps it; else frames */
	uint32_t samples_id, labels_id, record, batch;
	uint64_t labels_at;			/* in the region */
	uint32_t left;				/* samples left in the epoch */
};

struct coord {
	struct coord_opts o;
	unsigned int nsys;
	struct coord_part sys[COORD_SYSTEMS_MAX];
	struct coord_part mx, sx, in;
	struct wse_link_appliance_id id;	/* what HELLO says */
	uint32_t job_systems;			/* from WSE_LINK_PARAMS_JOB on slot 0; 0: all */
	struct wse_link_input_info input;	/* from WSE_LINK_PARAMS_INPUT */
	struct coord_conn *conn;		/* the user node being served */
	pthread_mutex_t parts_lock;		/* systems' links opened and closed */
	/*
	 * What changes the slots, the job and the input workers' feed
	 * (PROGRAM_LOAD, PROGRAM_UNLOAD, the appliance's own PARAMS), one at
	 * a time: the queues' workers carry requests out in parallel, and
	 * two users loading on two queues must not open two jobs at once.
	 */
	pthread_mutex_t setup_lock;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pthread_cond_t input_cond, update_cond, output_cond;
	bool stopping;				/* the user node's link is going */
	struct coord_slot slots[COORD_SLOTS];
	uint64_t assembling;			/* image bytes being assembled */
	struct coord_job job;
	struct coord_feed feed;
	char failure[256];			/* the last failure naming a part (a job's, a
						 * pipelined program's); a new user node clears it */
	uint64_t broadcast;			/* weight bytes sent to systems */
	uint64_t reduced;			/* gradient bytes summed (as SwarmX was asked) */
};

/* coord_conn.c: the user node's link. */
/* Serves one connected host until it goes; returns when every worker stopped. */
void coord_conn_serve(struct coord *c, int fd);
/* Answers request @f with @status and data (OK) ... */
void coord_reply(struct coord_conn *conn, const struct wse_link_frame *f, uint32_t status,
		 const struct iovec *iov, int iovcnt);
/* ... or a text (not OK). */
void coord_reply_text(struct coord_conn *conn, const struct wse_link_frame *f, uint32_t status,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * Lock held: waits on c->changed at most @ms; false when the link is going,
 * or the host cancelled the request the calling worker carries out
 * (coord_cancelled(): it answers E_CANCELED).
 */
bool coord_wait(struct coord *c, int ms);
/* The same on another of the coordinator's conditions. */
bool coord_wait_on(struct coord *c, pthread_cond_t *cond, int ms);
/* Lock held: has the host cancelled the calling worker's request (and the link stays)? */
bool coord_cancelled(struct coord *c);
/*
 * The calling worker's flag (read under c->lock): set when the host
 * cancels the request it carries out, for the threads it starts to see.
 */
const bool *coord_cancel_flag(void);
/*
 * The calling worker's buffer of WSE_LINK_PAYLOAD_LIMIT bytes for what it
 * answers (a program's reply from its system, the parts' state), made on
 * first use; NULL without memory, or on a thread that is no worker.
 */
uint8_t *coord_reply_buf(void);
/* Lock held: the job failed or the link is going; every waiter looks. */
void coord_wake_all(struct coord *c);

/* A request as a queue worker sees it: decoded header, payload copied. */
struct coord_request {
	struct wse_link_frame f;
	const uint8_t *payload;
	size_t len;
};

/* coord_exec.c: one request of the user node, on its queue's worker. */
void coord_execute(struct coord *c, struct coord_conn *conn, const struct coord_request *r);
/* Does coord_execute() carry out @opcode (queued), or is it refused as it arrives? */
bool coord_serves(uint8_t opcode);
/* The host went: programs unloaded, the job dropped. */
void coord_host_gone(struct coord *c);

/* --leaves N: a power of two in 1..COORD_LEAVES_MAX into *@out (if not NULL), or -1 said. */
int coord_leaves_parse(const char *s, unsigned int *out);

/* coord_parts.c */
/* Connects the parts; the systems must answer (their wafers make HELLO). */
int coord_parts_start(struct coord *c);
void coord_parts_stop(struct coord *c);
/* A system's link, reconnecting it first if it died; false with @text if it cannot. */
bool coord_system_ready(struct coord *c, unsigned int i, char *text, size_t len);
/* A service's link likewise. */
bool coord_service_ready(struct coord *c, struct coord_part *p, char *text, size_t len);
/* Calls service @p (one caller at a time): as hostlink_call(). */
int coord_service_call(struct coord *c, struct coord_part *p, uint8_t op, const struct iovec *iov,
		       int iovcnt, void *out, size_t cap, size_t *len, char *text, size_t textlen);
/* Drops system @i's link (after a failed job): the device forgets what it ran. */
void coord_system_reset(struct coord *c, unsigned int i);
/*
 * A new user node starts clean, as on a system: every part's link is
 * dropped (each forgets what it held) and the counters start again. The
 * links come back when a job needs them.
 */
void coord_parts_restart(struct coord *c);
/* WSE_LINK_PARAMS_APPLIANCE's reply for the user node. */
size_t coord_parts_state(struct coord *c, void *buf, size_t cap);

/*
 * coord_exec.c, setup_lock held: is system @i one of the weight-streaming
 * job's? How many layer-pipelined programs (of slots other than @except)
 * does it hold? A system runs the job or pipelined programs, never both.
 */
bool coord_in_job(struct coord *c, unsigned int i);
unsigned int coord_programs_on(struct coord *c, unsigned int i, uint32_t except);
/* coord_exec.c: an image loaded into system @sys's @slot; *@status its answer, @info on OK. */
int coord_load_image(struct coord *c, unsigned int sys, uint32_t slot, const uint8_t *img,
		     uint64_t len, struct wse_link_prog_info *info, uint32_t *status, char *text,
		     size_t textlen);

/* coord_job.c */
/* Maps region @info as @id on the part behind @h: its status, or E_INTERNAL if it went. */
uint32_t coord_map_on(struct hostlink *h, const struct wse_link_region_map_info *info, uint32_t id,
		      char *text, size_t len);
/* The job of @prog in @slot, on @systems of the appliance's free ones (coord_programs_on()). */
int coord_job_open(struct coord *c, uint32_t slot, struct wsep_program *prog, unsigned int systems,
		   const void *image, size_t len, struct wse_link_prog_info *info, char *text,
		   size_t textlen);
void coord_job_close(struct coord *c);
/* Lock held: the job has failed (first failure wins; kept in c->failure); wakes everyone. */
void coord_job_fail(struct coord *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The user node's STREAM_WRITE / STREAM_READ of the job's samples, labels, losses, predictions. */
void coord_job_write(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		     const struct wse_link_stream_info *in);
void coord_job_read(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		    const struct wse_link_stream_info *in);
/* WSE_LINK_PARAMS_INPUT: where the coming RUNs' samples come from. */
void coord_job_input(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		     const struct wse_link_input_info *in);
/* After the optimizer state (and its step count) was written into MemoryX: the job's t. */
void coord_job_sync_step(struct coord *c);
/* Byte rings. */
uint64_t coord_ring_room(const struct coord_ring *r);
void coord_ring_put(struct coord_ring *r, const void *data, uint64_t n);
void coord_ring_get(struct coord_ring *r, void *data, uint64_t n);
/* [@at, @at + @n) past the head as up to two contiguous pieces; returns their count. */
int coord_ring_pieces(const struct coord_ring *r, uint64_t at, uint64_t n, uint64_t off[2],
		      uint64_t len[2]);

/* coord_feed.c */
struct feed_run;
/* What a pipelined program's feed needs of it, noted when it is loaded. */
void coord_feed_note(struct coord_slot *s, const struct wsep_program *prog);
/* WSE_LINK_PARAMS_INPUT on pipelined slot @slot: its samples from the input workers, or the host's. */
void coord_feed_input(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		      uint32_t slot, const struct wse_link_input_info *in);
/* Does the feed write @stream of @slot (so the host may not)? */
bool coord_feed_takes(struct coord *c, uint32_t slot, uint32_t stream);
/* A RUN of a fed slot: its feeder started (*@out; NULL if the slot is not fed), or -errno with @text. */
int coord_feed_start(struct coord *c, const struct wse_link_run_info *in, struct feed_run **out,
		     char *text, size_t len);
/* After the system answered the RUN (or it went): the feeder joined; -EIO with @text if it failed. */
int coord_feed_end(struct feed_run *fr, char *text, size_t len);
/* The feed's region gone (the host went). */
void coord_feed_close(struct coord *c);

/* coord_run.c */
void coord_run_execute(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		       const struct wse_link_run_info *in);

#endif /* APPLIANCE_COORD_H */
