// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-fuzz's worker processes. A worker (dropped to its uid first, with
 * --uids) runs --threads threads that share its open device files and
 * everything on them: the buffer objects, queues and jobs each thread
 * made are remembered per file, under the process's lock, so that any
 * thread's next call may name them - and the ids the driver hands out
 * are small and predictable, so a call often names one that another
 * thread is creating or destroying at that moment.
 *
 * Now and then a thread starts a race: the process's other threads join
 * it, and for a while they make two kinds of call against each other on
 * one file, as fast as they can (create against destroy, submit against
 * wait, use against close), which is how a window of a few instructions
 * in the kernel gets hit.
 *
 * A file is closed while other threads may be inside a call on it: its
 * number is pointed at /dev/null (dup2) at once, so the kernel's file
 * loses the table's reference while those calls still hold theirs, and
 * the number itself is closed only when no thread uses it any more, so
 * no thread can ever call into an unrelated file that took the number.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wse/ctl.h"
#include "wse/link_io.h"
#include "wse/splitmix64.h"
#include "wse_fuzz.h"

const char *const action_names[A_COUNT] = {
	"open", "close", "get-info", "bo-create", "bo-info", "gem-close", "mmap",
	"queue-create", "queue-destroy", "submit", "wait", "mem-xfer", "uring",
	"ring-exit", "netlink", "program", "probe-slots", "block", "fork", "race",
};

static const unsigned int weights[A_COUNT] = {
	[A_OPEN] = 3, [A_CLOSE] = 1, [A_GET_INFO] = 4, [A_BO_CREATE] = 4, [A_BO_INFO] = 3,
	[A_GEM_CLOSE] = 2, [A_MMAP] = 2, [A_QUEUE_CREATE] = 4, [A_QUEUE_DESTROY] = 2,
	[A_SUBMIT] = 16, [A_WAIT] = 8, [A_MEM_XFER] = 2, [A_URING] = 12, [A_RING_EXIT] = 1,
	[A_NETLINK] = 2, [A_PROGRAM] = 3, [A_PROBE] = 2, [A_BLOCK] = 2, [A_FORK] = 1,
	[A_RACE] = 3,
};

/*
 * The pairs a race runs, weighted: an object's creation against its
 * destruction first (a half-made object published too early), then uses
 * against destruction (an object freed under a call).
 */
static const struct {
	enum action a, b;
	unsigned int weight;
} race_pairs[] = {
	{ A_QUEUE_CREATE, A_QUEUE_DESTROY, 6 },
	{ A_BO_CREATE, A_GEM_CLOSE, 6 },
	{ A_SUBMIT, A_WAIT, 6 },
	{ A_SUBMIT, A_QUEUE_DESTROY, 2 },
	{ A_URING, A_QUEUE_DESTROY, 2 },
	{ A_WAIT, A_QUEUE_DESTROY, 2 },
	{ A_SUBMIT, A_GEM_CLOSE, 2 },
	{ A_MMAP, A_GEM_CLOSE, 2 },
	{ A_BO_INFO, A_GEM_CLOSE, 1 },
	{ A_MEM_XFER, A_GEM_CLOSE, 1 },
	{ A_URING, A_CLOSE, 1 },
	{ A_SUBMIT, A_CLOSE, 1 },
	{ A_WAIT, A_CLOSE, 1 },
	{ A_PROGRAM, A_PROBE, 1 },
};

/* The most calls one thread makes in one race. */
#define RACE_MAX_CALLS	20000

/* The worker's process, for the fork handlers (one per process). */
static struct proc *fork_proc;

uint64_t draw(struct thr *t, uint64_t n)
{
	return n ? wse_splitmix64(&t->rng) % n : 0;
}

/* One time in eight, flips a random bit of @obj, as a fuzzer would. */
void maybe_mutate(struct thr *t, void *obj, size_t len)
{
	if (draw(t, 8))
		return;
	((uint8_t *)obj)[draw(t, len)] ^= (uint8_t)(1u << draw(t, 8));
	__atomic_fetch_add(&t->p->sh->mutated, 1, __ATOMIC_RELAXED);
}

void proc_lock(struct thr *t)
{
	pthread_mutex_lock(&t->p->lock);
}

void proc_unlock(struct thr *t)
{
	pthread_mutex_unlock(&t->p->lock);
}

/* The file @r names, if it is still that file; call with the lock held. */
struct dev_file *file_of(struct thr *t, const struct fref *r)
{
	struct dev_file *f = &t->p->files[r->slot];

	return (f->state == F_OPEN || f->state == F_DOOMED) && f->gen == r->gen ? f : NULL;
}

static void note_users(struct shared *sh, unsigned int users)
{
	uint64_t seen = __atomic_load_n(&sh->max_users, __ATOMIC_RELAXED);

	while (users > seen &&
	       !__atomic_compare_exchange_n(&sh->max_users, &seen, users, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * Takes a reference to an open file: slot @want, or (-1) any. The file
 * stays open (its number stays its own) until the reference is put.
 */
bool file_get(struct thr *t, int want, struct fref *r)
{
	struct proc *p = t->p;
	unsigned int open[MAX_FDS], n = 0, i;
	struct dev_file *f;

	proc_lock(t);
	for (i = 0; i < MAX_FDS; i++)
		if (p->files[i].state == F_OPEN && (want < 0 || (unsigned int)want == i))
			open[n++] = i;
	if (!n) {
		proc_unlock(t);
		return false;
	}
	r->slot = open[draw(t, n)];
	f = &p->files[r->slot];
	r->fd = f->fd;
	r->gen = f->gen;
	f->users++;
	note_users(p->sh, f->users);
	proc_unlock(t);
	return true;
}

/* Closes the number of a doomed file nobody uses; call with the lock held. */
static void file_reap(struct dev_file *f)
{
	if (f->state != F_DOOMED || f->users)
		return;
	close(f->fd);
	file_forget(f);
	f->fd = -1;
	f->state = F_FREE;
}

void file_put(struct thr *t, struct fref *r)
{
	struct dev_file *f = &t->p->files[r->slot];

	proc_lock(t);
	if (f->gen == r->gen && f->users) {
		f->users--;
		file_reap(f);
	}
	proc_unlock(t);
}

/*
 * Closes the file in slot @slot (if it is still generation @gen) for the
 * kernel at once, by pointing its number at /dev/null; the number goes
 * when its last user lets go.
 */
void file_doom(struct thr *t, unsigned int slot, unsigned int gen)
{
	struct dev_file *f = &t->p->files[slot];

	proc_lock(t);
	if (f->state == F_OPEN && f->gen == gen) {
		f->state = F_DOOMED;
		/* Should it fail, the file goes when the number is closed. */
		if (dup2(t->p->null_fd, f->fd) < 0) {
		}
		file_reap(f);
	}
	proc_unlock(t);
}

/* What pthread_atfork() runs: a forked child finds the bookkeeping whole. */
static void fork_prepare(void)
{
	if (fork_proc)
		pthread_mutex_lock(&fork_proc->lock);
}

static void fork_release(void)
{
	if (fork_proc)
		pthread_mutex_unlock(&fork_proc->lock);
}

static enum action pick_action(struct thr *t)
{
	unsigned int total = 0, x, a;

	for (a = 0; a < A_COUNT; a++)
		total += weights[a];
	x = (unsigned int)draw(t, total);
	for (a = 0; a < A_COUNT; a++) {
		if (x < weights[a])
			break;
		x -= weights[a];
	}
	return (enum action)a;
}

/* A child of a thread, with every file of the process, makes a few calls
 * and goes at once: it has only the thread that forked it.
 */
static void do_fork(struct thr *t)
{
	pid_t pid = fork();
	int i;

	if (pid == 0) {
		t->rng ^= (uint64_t)getpid() << 32;
		t->in_child = true;
		for (i = 0; i < 8; i++)
			one_call(t, (enum action)draw(t, A_PROGRAM), NULL);
		_exit(0);
	}
	if (pid < 0)
		return;
	if (!draw(t, 2))
		kill(pid, SIGKILL);
	/* Its calls wait 50 ms at most: ten seconds is a child that hangs. */
	for (i = 0; i < 1000 && waitpid(pid, NULL, WNOHANG) != pid; i++)
		usleep(10000);
	if (i == 1000) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static bool take_call(struct proc *p)
{
	return __atomic_fetch_add(&p->made, 1, __ATOMIC_RELAXED) < p->budget &&
	       !__atomic_load_n(&p->sh->stop, __ATOMIC_RELAXED) && wse_link_now_ms() < p->end_ms;
}

/* Runs one role of a race on its file until the race ends. */
static void race_role(struct thr *t, enum action a, unsigned int gen, struct fref *r,
		      int64_t until)
{
	struct proc *p = t->p;
	unsigned int i;

	for (i = 0; i < RACE_MAX_CALLS && wse_link_now_ms() < until; i++) {
		if (__atomic_load_n(&p->race.gen, __ATOMIC_ACQUIRE) != gen ||
		    !__atomic_load_n(&p->race.active, __ATOMIC_ACQUIRE) || !take_call(p))
			break;
		__atomic_fetch_add(&p->sh->race_calls, 1, __ATOMIC_RELAXED);
		if (a == A_CLOSE) {
			/* Once, a moment in: the others are inside their calls. */
			usleep((useconds_t)draw(t, 20000));
			__atomic_fetch_add(&p->sh->calls[A_CLOSE], 1, __ATOMIC_RELAXED);
			do_close(t, r);
			break;
		}
		one_call(t, a, r);
	}
}

/* Starts a race on a file, runs its first role, and ends it. */
static void do_race(struct thr *t)
{
	struct proc *p = t->p;
	unsigned int total = 0, x, i, gen;
	struct fref r;
	int64_t until, start;
	enum action a;

	if (t->in_child || !file_get(t, -1, &r))
		return;
	for (i = 0; i < sizeof(race_pairs) / sizeof(race_pairs[0]); i++)
		total += race_pairs[i].weight;
	x = (unsigned int)draw(t, total);
	for (i = 0; x >= race_pairs[i].weight; i++)
		x -= race_pairs[i].weight;
	until = wse_link_now_ms() + 50 + (int64_t)draw(t, p->o->race_ms);
	if (until > p->end_ms)
		until = p->end_ms;
	proc_lock(t);
	if (p->race.active || wse_link_now_ms() < p->race.calm_until_ms) {
		proc_unlock(t);
		file_put(t, &r);
		return;
	}
	/* Either call may be the starter's. */
	a = draw(t, 2) ? race_pairs[i].a : race_pairs[i].b;
	p->race.roles[0] = a;
	p->race.roles[1] = a == race_pairs[i].a ? race_pairs[i].b : race_pairs[i].a;
	p->race.file = r.slot;
	p->race.file_gen = r.gen;
	p->race.joined = 0;
	p->race.until_ms = until;
	gen = p->race.gen + 1;
	__atomic_store_n(&p->race.gen, gen, __ATOMIC_RELEASE);
	__atomic_store_n(&p->race.active, true, __ATOMIC_RELEASE);
	t->race_gen = gen;
	proc_unlock(t);
	__atomic_fetch_add(&p->sh->races, 1, __ATOMIC_RELAXED);
	start = wse_link_now_ms();
	race_role(t, a, gen, &r, until);
	proc_lock(t);
	if (p->race.gen == gen) {
		__atomic_store_n(&p->race.active, false, __ATOMIC_RELEASE);
		/* Half as long without a race as the race took: the other calls get a third. */
		p->race.calm_until_ms = wse_link_now_ms() + (wse_link_now_ms() - start) / 2;
	}
	proc_unlock(t);
	file_put(t, &r);
}

/* Joins the process's race, if one runs that this thread has not joined. */
static bool race_join(struct thr *t)
{
	struct proc *p = t->p;
	unsigned int gen, file_gen;
	struct fref r;
	enum action a;
	int64_t until;

	if (!__atomic_load_n(&p->race.active, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&p->race.gen, __ATOMIC_ACQUIRE) == t->race_gen)
		return false;
	proc_lock(t);
	gen = p->race.gen;
	t->race_gen = gen;
	if (!p->race.active) {
		proc_unlock(t);
		return false;
	}
	/* Joiners alternate the roles: the starter's partner first. */
	a = p->race.roles[(++p->race.joined) % 2];
	until = p->race.until_ms;
	r.slot = p->race.file;
	file_gen = p->race.file_gen;
	proc_unlock(t);
	if (!file_get(t, (int)r.slot, &r))
		return false;
	if (r.gen != file_gen) {
		/* Closed and opened again since: not the race's file. */
		file_put(t, &r);
		return false;
	}
	race_role(t, a, gen, &r, until);
	file_put(t, &r);
	return true;
}

void one_call(struct thr *t, enum action a, struct fref *forced)
{
	struct fref r;
	bool held = false;

	if (t->in_child && (a == A_FORK || a == A_RACE))
		a = A_GET_INFO;
	if (a != A_OPEN && a != A_NETLINK && a != A_FORK && a != A_RACE && !forced) {
		held = file_get(t, -1, &r);
		if (!held)
			a = A_OPEN;
	}
	if (forced)
		r = *forced;
	if (a == A_RACE) {
		__atomic_fetch_add(&t->p->sh->calls[A_RACE], 1, __ATOMIC_RELAXED);
		do_race(t);
		return;
	}
	__atomic_fetch_add(&t->p->sh->calls[a], 1, __ATOMIC_RELAXED);
	switch (a) {
	case A_OPEN: do_open(t); break;
	case A_CLOSE: do_close(t, &r); break;
	case A_GET_INFO: do_get_info(t, &r); break;
	case A_BO_CREATE: do_bo_create(t, &r); break;
	case A_BO_INFO: do_bo_info(t, &r); break;
	case A_GEM_CLOSE: do_gem_close(t, &r); break;
	case A_MMAP: do_mmap(t, &r); break;
	case A_QUEUE_CREATE: do_queue_create(t, &r); break;
	case A_QUEUE_DESTROY: do_queue_destroy(t, &r); break;
	case A_SUBMIT: do_submit(t, &r); break;
	case A_WAIT: do_wait(t, &r); break;
	case A_MEM_XFER: do_mem_xfer(t, &r); break;
	case A_URING: do_uring(t, &r); break;
	case A_RING_EXIT: do_ring_exit(t, &r); break;
	case A_NETLINK: do_netlink(t); break;
	case A_PROGRAM: do_program(t, &r); break;
	case A_PROBE: do_probe(t, &r); break;
	case A_BLOCK: do_block(t, &r); break;
	case A_FORK: do_fork(t); break;
	default: break;
	}
	if (held)
		file_put(t, &r);
}

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

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	struct proc *p = t->p;
	unsigned int i;

	while (take_call(p)) {
		/* The call race_join() made came out of the budget: give one back. */
		if (race_join(t)) {
			__atomic_fetch_sub(&p->made, 1, __ATOMIC_RELAXED);
			continue;
		}
		one_call(t, pick_action(t), NULL);
	}
	for (i = 0; i < MAX_FDS; i++)
		ring_drop(t, i);
	return NULL;
}

/* Becomes @uid, in group @gid only; 0 or -1. */
static int become(uid_t uid, gid_t gid)
{
	gid_t groups[1] = { gid };

	if (setgroups(1, groups) || setgid((gid_t)uid) || setuid(uid))
		return -1;
	return 0;
}

int worker(unsigned int index, const struct options *o, struct shared *sh,
	   const uint8_t *image, size_t image_len, int64_t end_ms)
{
	static struct proc p;
	struct fuzz_image img;
	struct thr *threads;
	pthread_t tids[MAX_THREADS];
	bool started[MAX_THREADS] = { false };
	char err[256];
	unsigned int i;

	memset(&p, 0, sizeof(p));
	p.o = o;
	p.sh = sh;
	p.index = index;
	p.end_ms = end_ms;
	p.budget = o->calls / o->procs + (index < o->calls % o->procs);
	pthread_mutex_init(&p.lock, NULL);
	for (i = 0; i < MAX_FDS; i++)
		p.files[i].fd = -1;
	/* Another user before anything is opened: everything is that user's. */
	if (o->nuids && become(o->uids[index % o->nuids], o->gid)) {
		fprintf(stderr, "wse-fuzz: process %u cannot become uid %u: %s\n", index,
			(unsigned int)o->uids[index % o->nuids], strerror(errno));
		return 1;
	}
	p.uid = getuid();
	p.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (p.null_fd < 0)
		return 1;
	if (image) {
		if (image_make(image, image_len, p.uid, &img, err, sizeof(err))) {
			fprintf(stderr, "wse-fuzz: process %u: the program: %s\n", index, err);
			return 1;
		}
		p.img = &img;
	}
	threads = calloc(o->threads, sizeof(*threads));
	if (!threads)
		return 1;
	for (i = 0; i < o->threads; i++) {
		threads[i].p = &p;
		threads[i].index = i;
		threads[i].rng = o->seed ^ (0x9e3779b97f4a7c15ULL * (index + 1)) ^
				 (0xd1b54a32d192ed03ULL * i);
		threads[i].buf = guarded_buf();
		if (!threads[i].buf || wse_ctl_open(&threads[i].ctl))
			return 1;
		canary_fill(threads[i].buf, BUF_SIZE, p.uid);
	}
	fork_proc = &p;
	pthread_atfork(fork_prepare, fork_release, fork_release);
	for (i = 1; i < o->threads; i++)
		started[i] = !pthread_create(&tids[i], NULL, thread_main, &threads[i]);
	thread_main(&threads[0]);
	for (i = 1; i < o->threads; i++)
		if (started[i])
			pthread_join(tids[i], NULL);
	for (i = 0; i < MAX_FDS; i++) {
		struct dev_file *f = &p.files[i];

		if (f->state == F_OPEN || f->state == F_DOOMED) {
			close(f->fd);
			file_forget(f);
			f->state = F_FREE;
		}
	}
	for (i = 0; i < o->threads; i++) {
		wse_ctl_close(threads[i].ctl);
		munmap(threads[i].buf - GUARD_SIZE, GUARD_SIZE + BUF_SIZE + GUARD_SIZE);
	}
	free(threads);
	if (p.img)
		image_free(&img);
	return 0;
}
