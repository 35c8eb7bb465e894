/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse-fuzz: what its parts share. The parent (wse_fuzz.c) parses the
 * options, sets the devices up, watches the links and the kernel log and
 * reports; each worker process (wse_fuzz_worker.c) runs several threads
 * that share its open device files and the objects on them; the calls
 * themselves are in wse_fuzz_calls.c, the canaries and the program image
 * in wse_fuzz_canary.c.
 */
#ifndef WSE_FUZZ_H
#define WSE_FUZZ_H

#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MAX_FDS		4	/* device files a process holds at once */
#define MAX_HANDLES	16	/* buffer objects remembered per file */
#define MAX_QUEUES	64	/* queues remembered per file: the driver's limit */
#define MAX_JOBS	64	/* jobs remembered per file */
#define MAX_THREADS	16
#define MAX_UIDS	4
#define MAX_ADDRS	4	/* --keep-up, --hostile, --require-link-up */
#define MAX_LINKS	16	/* devices whose links are watched */
#define MAX_STREAMS	16	/* streams of the program remembered */
#define FUZZ_SLOTS	8	/* program slots drawn: 1 .. FUZZ_SLOTS */
#define BUF_SIZE	(1 << 20)
/*
 * Each thread's buffer, which the kernel is told to read and write, sits
 * between two no-access regions, each larger than any job (a frame's
 * payload is at most 16 MiB): a length that runs past it, or a pointer a
 * flipped bit moved, faults in the kernel (EFAULT) instead of overwriting
 * the fuzzer's own heap, libraries, TLS or another thread's stack.
 */
#define GUARD_SIZE	(64ULL << 20)

/* What a thread can do; each a weight in the draw. A forked child draws
 * only those before A_PROGRAM.
 */
enum action {
	A_OPEN, A_CLOSE, A_GET_INFO, A_BO_CREATE, A_BO_INFO, A_GEM_CLOSE, A_MMAP,
	A_QUEUE_CREATE, A_QUEUE_DESTROY, A_SUBMIT, A_WAIT, A_MEM_XFER, A_URING,
	A_RING_EXIT, A_NETLINK, A_PROGRAM, A_PROBE, A_BLOCK, A_FORK, A_RACE, A_COUNT
};

extern const char *const action_names[A_COUNT];

struct options {
	uint64_t calls, seed;
	unsigned int procs, threads;
	int time_limit_s;
	const char *keep_up[MAX_ADDRS];
	bool keep_hostile[MAX_ADDRS];	/* given with --hostile */
	unsigned int nkeep_up;
	const char *require_up[MAX_ADDRS];
	unsigned int nrequire_up;
	uid_t uids[MAX_UIDS];
	unsigned int nuids;
	gid_t gid;			/* the accel group, with --uids */
	const char *program;
	unsigned int race_ms;		/* the longest race */
	bool stop_on_report;
};

/* One device whose link the watcher follows. */
struct link_watch {
	char addr[160];		/* the --keep-up address, or the device's peer */
	bool kept;		/* attached (again) by the watcher */
	bool hostile;		/* a lying peer: its deaths and leaks are expected */
	bool required;		/* --require-link-up: a death fails the run */
	bool up;		/* watcher's: attached and up at the last look */
	uint32_t index;		/* watcher's: the device's index */
	uint64_t deaths;
	uint64_t attach_failures;
	char reason[80];	/* why the last death happened */
	int64_t death_ms;	/* when, from the start of the run */
};

/* Counted in memory every process shares, for the report. */
struct shared {
	uint64_t calls[A_COUNT];
	uint64_t mutated, reattached;
	uint64_t races, race_calls;
	uint64_t canary_checks, canary_bytes, violations, hostile_violations;
	uint64_t max_users;		/* most threads inside one file at once */
	uint64_t loads, loads_done, params_canary, early_closes, blocking, claims;
	int stop;			/* set by the parent: stop drawing */
	int watcher_ready;		/* the first attaches are done */
	unsigned int nlinks;
	struct link_watch links[MAX_LINKS];
};

/* The program image of --program, as one uid sends it. */
struct fuzz_image {
	uint8_t *bytes;
	size_t len;
	uint32_t batch;
	bool canary_weights;	/* its initial weights are the uid's canary */
	unsigned int nstreams;
	struct {
		uint32_t id;
		bool out;		/* device to host */
		uint64_t record;	/* bytes of one sample, or of one transfer */
		uint64_t batch_bytes;	/* one step's worth */
	} streams[MAX_STREAMS];
};

/* A file slot's states. */
enum file_state { F_FREE, F_OPENING, F_OPEN, F_DOOMED };

/* What a slot of a file holds, as far as this file knows. */
enum slot_state { S_NONE, S_LOADING, S_LOADED, S_CLAIMED };

struct fuzz_job {
	uint32_t queue, handle, op;
	uint64_t id, bo_offset, length;
};

/* One open device file of a process and what its threads made on it. */
struct dev_file {
	enum file_state state;
	int fd;
	unsigned int gen;	/* bumped at each open: a slot reused is another file */
	unsigned int users;	/* threads inside a call on it */
	int minor;
	bool hostile;		/* the device behind a lying peer */
	uint32_t num_queues;
	uint64_t max_job;
	uint32_t handles[MAX_HANDLES];
	unsigned int nhandles;
	struct { uint32_t id, hw; } queues[MAX_QUEUES];
	unsigned int nqueues;
	struct fuzz_job jobs[MAX_JOBS];
	unsigned int njobs;
	uint32_t image_handle, data_handle;	/* the program image; canary data */
	uint8_t slots[FUZZ_SLOTS + 1];		/* enum slot_state */
};

/* A race: threads of one process run two calls against each other on one file. */
struct race {
	unsigned int gen;
	bool active;
	unsigned int file, file_gen;
	enum action roles[2];
	unsigned int joined;
	int64_t until_ms;
	int64_t calm_until_ms;	/* no race starts before: at most half the time races */
};

/* A worker process: what its threads share (under @lock). */
struct proc {
	const struct options *o;
	struct shared *sh;
	const struct fuzz_image *img;	/* NULL without --program */
	pthread_mutex_t lock;
	struct dev_file files[MAX_FDS];
	struct race race;
	uint64_t budget, made;		/* calls; @made is atomic */
	int64_t end_ms;
	uid_t uid;
	int null_fd;			/* what a closed file's number points at */
	unsigned int index;
	unsigned int violations_told;
};

struct thr_ring {
	struct io_uring ring;
	bool up;
	unsigned int gen;	/* of the file it was made for */
	unsigned int inflight;
};

/* One thread of a worker. */
struct thr {
	struct proc *p;
	uint64_t rng;
	uint8_t *buf;
	struct wse_ctl *ctl;
	struct thr_ring rings[MAX_FDS];
	unsigned int index;
	unsigned int race_gen;
	bool in_child;		/* a forked child: no races, no fork */
};

/* A reference to a file a thread holds during a call. */
struct fref {
	unsigned int slot;
	int fd;
	unsigned int gen;
};

/* wse_fuzz_worker.c */
uint64_t draw(struct thr *t, uint64_t n);
void maybe_mutate(struct thr *t, void *obj, size_t len);
bool file_get(struct thr *t, int want, struct fref *r);
void file_put(struct thr *t, struct fref *r);
void file_doom(struct thr *t, unsigned int slot, unsigned int gen);
struct dev_file *file_of(struct thr *t, const struct fref *r);
void proc_lock(struct thr *t);
void proc_unlock(struct thr *t);
void one_call(struct thr *t, enum action a, struct fref *forced);
int worker(unsigned int index, const struct options *o, struct shared *sh,
	   const uint8_t *image, size_t image_len, int64_t end_ms);

/* wse_fuzz_calls.c */
void do_open(struct thr *t);
void do_close(struct thr *t, struct fref *r);
void do_get_info(struct thr *t, struct fref *r);
void do_bo_create(struct thr *t, struct fref *r);
void do_bo_info(struct thr *t, struct fref *r);
void do_gem_close(struct thr *t, struct fref *r);
void do_mmap(struct thr *t, struct fref *r);
void do_queue_create(struct thr *t, struct fref *r);
void do_queue_destroy(struct thr *t, struct fref *r);
void do_submit(struct thr *t, struct fref *r);
void do_wait(struct thr *t, struct fref *r);
void do_mem_xfer(struct thr *t, struct fref *r);
void do_uring(struct thr *t, struct fref *r);
void do_ring_exit(struct thr *t, struct fref *r);
void do_netlink(struct thr *t);
void do_program(struct thr *t, struct fref *r);
void do_probe(struct thr *t, struct fref *r);
void do_block(struct thr *t, struct fref *r);
void ring_drop(struct thr *t, unsigned int slot);
void file_forget(struct dev_file *f);

/* wse_fuzz_canary.c */
#define CANARY_LEN	16
void canary_fill(void *dst, size_t len, uid_t uid);
/* Scans what a call gave back for another uid's canary; true if found. */
bool canary_check(struct thr *t, const struct fref *r, const void *data, size_t len,
		  const char *how);
int image_make(const uint8_t *src, size_t len, uid_t uid, struct fuzz_image *img,
	       char *err, size_t errlen);
void image_free(struct fuzz_image *img);

#endif /* WSE_FUZZ_H */
