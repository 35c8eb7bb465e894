// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-fuzz: random calls into the wse driver, syzkaller-style but seeded
 * and bounded: ioctls, io_uring commands, mmaps, control-plane queries,
 * closes and ring exits, made by several processes at once (and children
 * that exit in the middle of things) on every device the control plane
 * lists. Arguments are drawn near what is valid, and then, one time in
 * eight, have a random bit of the structure flipped. With --keep-up the
 * parent also keeps devices attached: a link a hostile peer got killed is
 * detached and attached again, so the fuzzing goes on.
 *
 * The judge is the kernel: wsevm fails the run on any WARN, BUG, KFENCE
 * report or hung task in the guest's log. wse-fuzz itself fails only if a
 * process does not finish in time (a call that hangs).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drm/wse_accel.h"
#include "wse/ctl.h"
#include "wse/link_io.h"
#include "wse/numparse.h"
#include "wse/splitmix64.h"
#include "wse_genl.h"

#define MAX_FDS		4
#define MAX_HANDLES	8
#define MAX_QUEUES	8
#define MAX_JOBS	32
#define MAX_KEEP_UP	4
#define BUF_SIZE	(1 << 20)
/*
 * The buffer the kernel is told to read and write sits between two
 * no-access regions, each larger than any job (a frame's payload is at
 * most 16 MiB): a length that runs past it, or a pointer a flipped bit
 * moved, faults in the kernel (EFAULT) instead of overwriting this
 * process's own heap, libraries or TLS (where a clobbered stack canary
 * ended a run with "stack smashing detected").
 */
#define GUARD_SIZE	(64ULL << 20)

/* What a process can do; each a weight in the draw. */
enum action {
	A_OPEN, A_CLOSE, A_GET_INFO, A_BO_CREATE, A_BO_INFO, A_GEM_CLOSE, A_MMAP,
	A_QUEUE_CREATE, A_QUEUE_DESTROY, A_SUBMIT, A_WAIT, A_MEM_XFER, A_URING,
	A_RING_EXIT, A_NETLINK, A_FORK, A_COUNT
};

static const char *const action_names[A_COUNT] = {
	"open", "close", "get-info", "bo-create", "bo-info", "gem-close", "mmap",
	"queue-create", "queue-destroy", "submit", "wait", "mem-xfer", "uring",
	"ring-exit", "netlink", "fork",
};

static const unsigned int weights[A_COUNT] = {
	[A_OPEN] = 3, [A_CLOSE] = 1, [A_GET_INFO] = 4, [A_BO_CREATE] = 4, [A_BO_INFO] = 3,
	[A_GEM_CLOSE] = 2, [A_MMAP] = 2, [A_QUEUE_CREATE] = 4, [A_QUEUE_DESTROY] = 1,
	[A_SUBMIT] = 16, [A_WAIT] = 8, [A_MEM_XFER] = 2, [A_URING] = 12, [A_RING_EXIT] = 1,
	[A_NETLINK] = 2, [A_FORK] = 1,
};

struct options {
	uint64_t calls, seed;
	unsigned int procs;
	int time_limit_s;
	const char *keep_up[MAX_KEEP_UP];
	unsigned int nkeep_up;
	bool verbose;
};

/* One open device file and what this process made on it. */
struct dev_file {
	int fd;
	uint32_t handles[MAX_HANDLES];
	unsigned int nhandles;
	uint32_t queues[MAX_QUEUES];
	unsigned int nqueues;
	uint64_t jobs[MAX_JOBS];	/* queue << 48 | job id */
	unsigned int njobs;
	bool ring_up;
	struct io_uring ring;
	unsigned int inflight;
};

/* Counted in shared memory, for the report. */
struct shared_counts {
	uint64_t calls[A_COUNT];
	uint64_t mutated;
	uint64_t reattached;
};

struct proc {
	uint64_t rng;
	struct dev_file files[MAX_FDS];
	unsigned int nfiles;
	struct wse_ctl *ctl;
	uint8_t *buf;
	struct shared_counts *counts;
};

/* The buffer, with its guards around it; NULL if there is no room. */
static uint8_t *guarded_buf(void)
{
	uint8_t *all = mmap(NULL, GUARD_SIZE + BUF_SIZE + GUARD_SIZE, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (all == MAP_FAILED)
		return NULL;
	if (mprotect(all + GUARD_SIZE, BUF_SIZE, PROT_READ | PROT_WRITE)) {
		munmap(all, GUARD_SIZE + BUF_SIZE + GUARD_SIZE);
		return NULL;
	}
	return all + GUARD_SIZE;
}

/*
 * A user pointer after a bit flip: one that still lies in the guarded
 * region, or is one of the bad ones drawn on purpose, stays; one moved
 * elsewhere in this process becomes a kernel address, still a bad
 * pointer for the driver to refuse.
 */
static uint64_t keep_ptr_safe(const struct proc *p, uint64_t ptr)
{
	uint64_t lo = (uintptr_t)p->buf - GUARD_SIZE, hi = (uintptr_t)p->buf + BUF_SIZE + GUARD_SIZE;

	if (ptr < 0x10000 || ptr >= 0xffff800000000000ULL || (ptr >= lo && ptr < hi))
		return ptr;
	return 0xffff800000000000ULL | ptr;
}

static uint64_t draw(struct proc *p, uint64_t n)
{
	return n ? wse_splitmix64(&p->rng) % n : 0;
}

/* One time in eight, flips a random bit of @obj, as a fuzzer would. */
static void maybe_mutate(struct proc *p, void *obj, size_t len)
{
	if (draw(p, 8))
		return;
	((uint8_t *)obj)[draw(p, len)] ^= (uint8_t)(1u << draw(p, 8));
	__atomic_fetch_add(&p->counts->mutated, 1, __ATOMIC_RELAXED);
}

/* A size near the interesting ones. */
static uint64_t pick_size(struct proc *p)
{
	static const uint64_t sizes[] = {
		0, 1, 7, 64, 4095, 4096, 65536, 1 << 20, (4 << 20) - 4096, 4 << 20,
		(16 << 20) + 1, 1ULL << 32, UINT64_MAX,
	};

	return sizes[draw(p, sizeof(sizes) / sizeof(sizes[0]))];
}

static uint32_t pick_u32(struct proc *p, const uint32_t *set, unsigned int n)
{
	return n && draw(p, 8) ? set[draw(p, n)] : (uint32_t)draw(p, 1000);
}

static struct dev_file *pick_file(struct proc *p)
{
	return p->nfiles ? &p->files[draw(p, p->nfiles)] : NULL;
}

static void file_close(struct dev_file *f)
{
	if (f->ring_up)
		io_uring_queue_exit(&f->ring);
	close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

static void do_open(struct proc *p)
{
	struct wse_dev_status *list = NULL;
	struct dev_file *f;
	char path[64];
	size_t n = 0;
	int fd;

	if (p->nfiles == MAX_FDS || wse_ctl_list(p->ctl, &list, &n) || !n) {
		free(list);
		return;
	}
	snprintf(path, sizeof(path), "/dev/accel/accel%d", list[draw(p, n)].accel_minor);
	free(list);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	f = &p->files[p->nfiles++];
	memset(f, 0, sizeof(*f));
	f->fd = fd;
}

static void do_close(struct proc *p)
{
	unsigned int i;

	if (!p->nfiles)
		return;
	i = (unsigned int)draw(p, p->nfiles);
	file_close(&p->files[i]);
	p->files[i] = p->files[--p->nfiles];
}

/* A user address: the buffer, somewhere in it, NULL, or nowhere. */
static uint64_t pick_addr(struct proc *p, uint64_t len)
{
	switch (draw(p, 6)) {
	case 0:
		return 0;
	case 1:
		return 0x1000;
	case 2:
		return 0xffff800000000000ULL;	/* the kernel's half */
	default:
		return (uintptr_t)p->buf + (len < BUF_SIZE ? draw(p, BUF_SIZE - len) : 0);
	}
}

static void do_get_info(struct proc *p, struct dev_file *f)
{
	struct drm_wse_get_info g = {
		.param = (uint32_t)draw(p, 6), .size = (uint32_t)pick_size(p) & 0xff,
	};

	g.ptr = pick_addr(p, g.size);
	maybe_mutate(p, &g, sizeof(g));
	g.ptr = keep_ptr_safe(p, g.ptr);
	ioctl(f->fd, DRM_IOCTL_WSE_GET_INFO, &g);
}

static void do_bo_create(struct proc *p, struct dev_file *f)
{
	struct drm_wse_bo_create c = { .size = pick_size(p) };

	maybe_mutate(p, &c, sizeof(c));
	/* Sizes the driver takes are kept small: a job maps all of an object,
	 * and the guest's memory is small. Larger ones it must refuse.
	 */
	if (c.size > (4 << 20) && c.size <= (4ULL << 30))
		c.size = 4 << 20;
	if (!ioctl(f->fd, DRM_IOCTL_WSE_BO_CREATE, &c) && f->nhandles < MAX_HANDLES)
		f->handles[f->nhandles++] = c.handle;
}

static void do_bo_info(struct proc *p, struct dev_file *f)
{
	struct drm_wse_bo_info i = { .handle = pick_u32(p, f->handles, f->nhandles) };

	maybe_mutate(p, &i, sizeof(i));
	ioctl(f->fd, DRM_IOCTL_WSE_BO_INFO, &i);
}

static void do_gem_close(struct proc *p, struct dev_file *f)
{
	struct drm_gem_close c = { .handle = pick_u32(p, f->handles, f->nhandles) };

	ioctl(f->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* Maps an object (or a wrong offset), touches it, and unmaps it. */
static void do_mmap(struct proc *p, struct dev_file *f)
{
	struct drm_wse_bo_info i = { .handle = pick_u32(p, f->handles, f->nhandles) };
	size_t len = 4096 * (1 + draw(p, 4));
	void *m;

	if (ioctl(f->fd, DRM_IOCTL_WSE_BO_INFO, &i))
		i.mmap_offset = draw(p, 1 << 20) * 4096;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, draw(p, 8) ? MAP_SHARED : MAP_PRIVATE,
		 f->fd, (off_t)i.mmap_offset);
	if (m == MAP_FAILED)
		return;
	if (len <= i.size)
		memset(m, (int)draw(p, 256), len);
	munmap(m, len);
}

static void do_queue_create(struct proc *p, struct dev_file *f)
{
	struct drm_wse_queue_create q = {
		.hw_queue = (uint32_t)draw(p, 5), .depth = (uint32_t)(draw(p, 2) ? 1 + draw(p, 16) : draw(p, 300)),
		.timeout_ms = draw(p, 4) ? (uint32_t)draw(p, 2000) : (uint32_t)draw(p, 700000),
	};

	maybe_mutate(p, &q, sizeof(q));
	if (!ioctl(f->fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q) && f->nqueues < MAX_QUEUES)
		f->queues[f->nqueues++] = q.queue_id;
}

static void do_queue_destroy(struct proc *p, struct dev_file *f)
{
	struct drm_wse_queue_destroy d = { .queue_id = pick_u32(p, f->queues, f->nqueues) };
	unsigned int i;

	maybe_mutate(p, &d, sizeof(d));
	if (ioctl(f->fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &d))
		return;
	for (i = 0; i < f->nqueues; i++)
		if (f->queues[i] == d.queue_id)
			f->queues[i] = f->queues[--f->nqueues];
}

/* Arguments near what an operation takes: a slot 1..3 first. */
static void pick_args(struct proc *p, __u64 args[4])
{
	args[0] = draw(p, 8) ? 1 + draw(p, 3) : pick_size(p);
	args[1] = draw(p, 4) ? draw(p, 4) : pick_size(p);
	args[2] = draw(p, 2) ? draw(p, 4) : pick_size(p);
	args[3] = draw(p, 2) ? draw(p, 64) : pick_size(p);
	for (int i = 0; i < 4; i++)
		if (!draw(p, 3))
			args[i] = 0;
}

static void do_submit(struct proc *p, struct dev_file *f)
{
	struct drm_wse_submit s = {
		.queue_id = pick_u32(p, f->queues, f->nqueues), .op = (uint32_t)draw(p, 12),
		.handle = draw(p, 6) ? pick_u32(p, f->handles, f->nhandles) : 0,
		.timeout_ms = draw(p, 3) ? 0 : (uint32_t)draw(p, 50),
		.bo_offset = draw(p, 4) ? 0 : pick_size(p),
		.length = draw(p, 3) ? 1 + draw(p, 8192) : pick_size(p),
	};

	pick_args(p, s.args);
	maybe_mutate(p, &s, sizeof(s));
	if (!ioctl(f->fd, DRM_IOCTL_WSE_SUBMIT, &s) && f->njobs < MAX_JOBS)
		f->jobs[f->njobs++] = (uint64_t)s.queue_id << 48 | s.job_id;
}

static void do_wait(struct proc *p, struct dev_file *f)
{
	struct drm_wse_wait w = { 0 };
	struct timespec ts;
	unsigned int i = 0;

	if (f->njobs && draw(p, 8)) {
		i = (unsigned int)draw(p, f->njobs);
		w.queue_id = (uint32_t)(f->jobs[i] >> 48);
		w.job_id = f->jobs[i] & ((1ULL << 48) - 1);
	} else {
		w.queue_id = pick_u32(p, f->queues, f->nqueues);
		w.job_id = draw(p, 100);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (draw(p, 2))
		w.timeout_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec +
			       (int64_t)draw(p, 50) * 1000000;
	maybe_mutate(p, &w, sizeof(w));
	if (!ioctl(f->fd, DRM_IOCTL_WSE_WAIT, &w) && f->njobs)
		f->jobs[i] = f->jobs[--f->njobs];
}

static void do_mem_xfer(struct proc *p, struct dev_file *f)
{
	struct drm_wse_mem_xfer x = {
		.handle = pick_u32(p, f->handles, f->nhandles), .flags = 1 + (uint32_t)draw(p, 2),
		.bo_offset = draw(p, 4) ? 0 : pick_size(p), .dev_addr = draw(p, 1 << 20),
		.length = 1 + draw(p, 65536), .timeout_ms = (uint32_t)draw(p, 200),
	};

	maybe_mutate(p, &x, sizeof(x));
	ioctl(f->fd, DRM_IOCTL_WSE_MEM_XFER, &x);
}

/* Collects what completions are there, waiting a little for one. */
static void reap(struct proc *p, struct dev_file *f, bool wait)
{
	struct __kernel_timespec ts = { .tv_nsec = 20 * 1000000 };
	struct io_uring_cqe *cqe;

	while (f->inflight && !io_uring_peek_cqe(&f->ring, &cqe)) {
		io_uring_cqe_seen(&f->ring, cqe);
		f->inflight--;
	}
	if (wait && f->inflight && !io_uring_wait_cqe_timeout(&f->ring, &cqe, &ts)) {
		io_uring_cqe_seen(&f->ring, cqe);
		f->inflight--;
	}
	(void)p;
}

static void do_uring(struct proc *p, struct dev_file *f)
{
	unsigned int n = 1 + (unsigned int)draw(p, 8), i;

	if (!f->ring_up) {
		struct io_uring_params prm = { .flags = draw(p, 8) ? IORING_SETUP_SQE128 : 0 };
		struct iovec iov = { p->buf, BUF_SIZE };

		if (io_uring_queue_init_params(16, &f->ring, &prm))
			return;
		f->ring_up = true;
		f->inflight = 0;
		if (draw(p, 2))
			io_uring_register_buffers(&f->ring, &iov, 1);
	}
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);
		struct drm_wse_uring_job j = {
			.queue_id = pick_u32(p, f->queues, f->nqueues), .op = (uint32_t)draw(p, 12),
			.length = draw(p, 3) ? 1 + (uint32_t)draw(p, 65536) : (uint32_t)pick_size(p),
			.timeout_ms = draw(p, 3) ? 0 : (uint32_t)draw(p, 50),
		};

		if (!sqe)
			break;
		j.addr = pick_addr(p, j.length);
		pick_args(p, j.args);
		maybe_mutate(p, &j, sizeof(j));
		j.addr = keep_ptr_safe(p, j.addr);
		/* A 64-byte ring has room for the first 16 bytes only. */
		memset(sqe, 0, (f->ring.flags & IORING_SETUP_SQE128) ? 128 : 64);
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = f->fd;
		sqe->cmd_op = draw(p, 16) ? DRM_WSE_URING_CMD_JOB : (uint32_t)draw(p, 1 << 30);
		if (!draw(p, 4))
			sqe->flags |= IOSQE_ASYNC;
		if (!draw(p, 4)) {
			sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
			sqe->buf_index = (uint16_t)draw(p, 2);
		}
		memcpy(sqe->cmd, &j, (f->ring.flags & IORING_SETUP_SQE128) ? sizeof(j) : 16);
		if (!draw(p, 16))
			sqe->addr = 1;	/* not zero where it must be */
		f->inflight++;
	}
	if (io_uring_submit(&f->ring) < 0)
		f->inflight = 0;
	reap(p, f, true);
}

static void do_ring_exit(struct proc *p, struct dev_file *f)
{
	(void)p;
	if (f->ring_up) {
		io_uring_queue_exit(&f->ring);
		f->ring_up = false;
		f->inflight = 0;
	}
}

static void do_netlink(struct proc *p)
{
	struct wse_dev_status d, *list = NULL;
	size_t n;

	switch (draw(p, 3)) {
	case 0:
		if (!wse_ctl_list(p->ctl, &list, &n))
			free(list);
		break;
	case 1:
		wse_ctl_get(p->ctl, (uint32_t)draw(p, 8), false, &d);
		break;
	default:
		wse_ctl_get(p->ctl, (uint32_t)draw(p, 8), true, &d);
		break;
	}
}

static void one_call(struct proc *p, enum action a);

/* A child with every file of this one makes a few calls and goes at once. */
static void do_fork(struct proc *p)
{
	pid_t pid = fork();

	if (pid == 0) {
		p->rng ^= (uint64_t)getpid() << 32;
		for (int i = 0; i < 8; i++)
			one_call(p, (enum action)draw(p, A_FORK));
		_exit(0);
	}
	if (pid > 0 && !draw(p, 2))
		kill(pid, SIGKILL);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void one_call(struct proc *p, enum action a)
{
	struct dev_file *f = NULL;

	if (a != A_OPEN && a != A_NETLINK && a != A_FORK) {
		f = pick_file(p);
		if (!f)
			a = A_OPEN;
	}
	__atomic_fetch_add(&p->counts->calls[a], 1, __ATOMIC_RELAXED);
	switch (a) {
	case A_OPEN: do_open(p); break;
	case A_CLOSE: do_close(p); break;
	case A_GET_INFO: do_get_info(p, f); break;
	case A_BO_CREATE: do_bo_create(p, f); break;
	case A_BO_INFO: do_bo_info(p, f); break;
	case A_GEM_CLOSE: do_gem_close(p, f); break;
	case A_MMAP: do_mmap(p, f); break;
	case A_QUEUE_CREATE: do_queue_create(p, f); break;
	case A_QUEUE_DESTROY: do_queue_destroy(p, f); break;
	case A_SUBMIT: do_submit(p, f); break;
	case A_WAIT: do_wait(p, f); break;
	case A_MEM_XFER: do_mem_xfer(p, f); break;
	case A_URING: do_uring(p, f); break;
	case A_RING_EXIT: do_ring_exit(p, f); break;
	case A_NETLINK: do_netlink(p); break;
	case A_FORK: do_fork(p); break;
	default: break;
	}
}

static enum action pick_action(struct proc *p)
{
	unsigned int total = 0, x, a;

	for (a = 0; a < A_COUNT; a++)
		total += weights[a];
	x = (unsigned int)draw(p, total);
	for (a = 0; a < A_COUNT; a++) {
		if (x < weights[a])
			break;
		x -= weights[a];
	}
	return (enum action)a;
}

static int worker(unsigned int index, const struct options *o, struct shared_counts *counts,
		  int64_t end_ms)
{
	struct proc p = { .counts = counts };
	uint64_t budget = o->calls / o->procs + (index < o->calls % o->procs);
	uint64_t i;

	p.rng = o->seed ^ (0x9e3779b97f4a7c15ULL * (index + 1));
	p.buf = guarded_buf();
	if (!p.buf || wse_ctl_open(&p.ctl))
		return 1;
	memset(p.buf, 0x5a, BUF_SIZE);
	for (i = 0; i < budget && wse_link_now_ms() < end_ms; i++)
		one_call(&p, pick_action(&p));
	while (p.nfiles)
		do_close(&p);
	wse_ctl_close(p.ctl);
	munmap(p.buf - GUARD_SIZE, GUARD_SIZE + BUF_SIZE + GUARD_SIZE);
	return 0;
}

static volatile sig_atomic_t keeping = 1;

static void stop_keeping(int sig)
{
	(void)sig;
	keeping = 0;
}

/* Keeps a device attached to each --keep-up address until told to stop
 * (SIGTERM) or @end_ms, and then detaches them.
 */
static void keep_up(const struct options *o, struct shared_counts *counts, int64_t end_ms)
{
	uint32_t index[MAX_KEEP_UP];
	bool up[MAX_KEEP_UP] = { false };
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	unsigned int i;

	signal(SIGTERM, stop_keeping);
	if (wse_ctl_open(&ctl))
		return;
	while (keeping && wse_link_now_ms() < end_ms && getppid() != 1) {
		for (i = 0; i < o->nkeep_up; i++) {
			int fd;
			char err[256];

			if (up[i] && !wse_ctl_get(ctl, index[i], false, &d) &&
			    d.link_state == WSE_LINK_STATE_UP)
				continue;
			if (up[i])
				wse_ctl_detach(ctl, index[i]);
			up[i] = false;
			if (wse_ctl_connect(o->keep_up[i], &fd, err, sizeof(err)))
				continue;
			if (!wse_ctl_attach_fd(ctl, fd, 0, &d)) {
				index[i] = d.index;
				up[i] = true;
				__atomic_fetch_add(&counts->reattached, 1, __ATOMIC_RELAXED);
			}
			close(fd);
		}
		usleep(100000);
	}
	for (i = 0; i < o->nkeep_up; i++)
		if (up[i])
			wse_ctl_detach(ctl, index[i]);
	wse_ctl_close(ctl);
}

static void usage(FILE *out)
{
	fprintf(out,
"usage: wse-fuzz [options]\n"
"\n"
"Random, seeded calls into the wse driver from several processes at once:\n"
"ioctls, io_uring commands, mmaps, control-plane queries, closes, ring exits\n"
"and children that exit mid-call, on every device the control plane lists.\n"
"Run it in the test guest; the kernel log is the verdict (tools/wsevm fails\n"
"the run on any WARN, BUG, KFENCE report or hung task).\n"
"\n"
"  --calls N          calls in all (default 10000)\n"
"  --procs N          processes making them at once (default 4)\n"
"  --seed N           seed (default 1); the same seed draws the same calls\n"
"  --time-limit SEC   stop drawing after SEC seconds (default 600)\n"
"  --keep-up ADDR     keep a device attached to the firmware at ADDR,\n"
"                     attaching it again whenever its link dies (root;\n"
"                     up to %d times)\n"
"  --help\n"
"\n"
"Exit status: 0 done; 1 a process did not finish in time (a call hung),\n"
"could not start or died of a signal; 2 usage.\n", MAX_KEEP_UP);
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "calls", required_argument, NULL, 'c' },
		{ "procs", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "keep-up", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	*o = (struct options){ .calls = 10000, .seed = 1, .procs = 4, .time_limit_s = 600 };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (wse_opt_u64("wse-fuzz", "--calls", optarg, 1, 100000000, WSE_NUM_PLAIN,
					&o->calls))
				return -1;
			break;
		case 'p':
			if (wse_opt_u64("wse-fuzz", "--procs", optarg, 1, 64, WSE_NUM_PLAIN, &v))
				return -1;
			o->procs = (unsigned int)v;
			break;
		case 's':
			if (wse_opt_u64("wse-fuzz", "--seed", optarg, 0, UINT64_MAX, WSE_NUM_PLAIN,
					&o->seed))
				return -1;
			break;
		case 't':
			if (wse_opt_u64("wse-fuzz", "--time-limit", optarg, 1, 86400, WSE_NUM_PLAIN,
					&v))
				return -1;
			o->time_limit_s = (int)v;
			break;
		case 'k':
			if (o->nkeep_up == MAX_KEEP_UP) {
				fprintf(stderr, "wse-fuzz: at most %d --keep-up addresses\n",
					MAX_KEEP_UP);
				return -1;
			}
			o->keep_up[o->nkeep_up++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "wse-fuzz: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wse-fuzz: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct shared_counts *counts;
	struct options o;
	pid_t pids[64], keeper = 0;
	int64_t start, end;
	unsigned int i, done = 0, failed = 0;
	uint64_t total = 0;
	int ret, status;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	/* Each line as it comes: a long run in the guest shows its progress. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (counts == MAP_FAILED)
		return 1;
	memset(counts, 0, sizeof(*counts));
	start = wse_link_now_ms();
	end = start + (int64_t)o.time_limit_s * 1000;
	if (o.nkeep_up) {
		keeper = fork();
		if (keeper == 0) {
			keep_up(&o, counts, end + 60000);
			_exit(0);
		}
		sleep(1);	/* the first attach */
	}
	for (i = 0; i < o.procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker(i, &o, counts, end));
	}
	/* Every process must end soon after the time limit: a call that does not is hung. */
	while (done < o.procs && wse_link_now_ms() < end + 60000) {
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0) {
			usleep(100000);
			continue;
		}
		for (i = 0; i < o.procs; i++) {
			if (pids[i] != pid)
				continue;
			done++;
			if (WIFSIGNALED(status))
				fprintf(stderr, "wse-fuzz: process %u died of signal %d (%s)\n", i,
					WTERMSIG(status), strsignal(WTERMSIG(status)));
			else if (WEXITSTATUS(status))
				fprintf(stderr, "wse-fuzz: process %u could not start\n", i);
			failed += !WIFEXITED(status) || WEXITSTATUS(status);
		}
	}
	if (keeper) {
		kill(keeper, SIGTERM);
		waitpid(keeper, NULL, 0);
	}
	for (i = 0; i < A_COUNT; i++)
		total += counts->calls[i];
	printf("wse-fuzz: %llu calls by %u processes in %.1f s (seed %llu), %llu with a flipped bit, %llu attaches\n",
	       (unsigned long long)total, o.procs, (double)(wse_link_now_ms() - start) / 1000.0,
	       (unsigned long long)o.seed, (unsigned long long)counts->mutated,
	       (unsigned long long)counts->reattached);
	for (i = 0; i < A_COUNT; i++)
		printf("  %-14s %llu\n", action_names[i], (unsigned long long)counts->calls[i]);
	if (done < o.procs) {
		fprintf(stderr, "wse-fuzz: %u of %u processes still running a minute after the time limit: a call hangs\n",
			o.procs - done, o.procs);
		return 1;
	}
	if (failed) {
		fprintf(stderr, "wse-fuzz: %u of %u processes failed\n", failed, o.procs);
		return 1;
	}
	return 0;
}
