// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-fuzz's calls: ioctls, io_uring commands, mmaps and control-plane
 * queries, with arguments drawn near what is valid, one structure in
 * eight then with a random bit flipped; and the longer scenarios: loading
 * the real program into a slot (and closing the file while the load still
 * waits behind a request the firmware blocks on), probing every slot with
 * another user's calls, and requests that block at the firmware.
 *
 * Everything received is searched for another uid's canary: job replies
 * (through a map of their buffer object), maps of buffer objects, new
 * buffer objects, io_uring replies in the thread's buffer, GET_INFO.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "drm/wse_accel.h"
#include "wse/ctl.h"
#include "wse/link_io.h"
#include "wse_fuzz.h"

/* Bytes of the canary-filled object a file sends data from. */
#define DATA_BO_SIZE	(1 << 20)

static const char *const op_names[] = {
	"op 0", "MEM_WRITE", "MEM_READ", "PROGRAM_LOAD", "PROGRAM_UNLOAD", "STREAM_WRITE",
	"STREAM_READ", "RUN", "PARAMS_READ", "PARAMS_WRITE", "DEVICE_STATS",
};

static const char *op_name(uint32_t op)
{
	return op < sizeof(op_names) / sizeof(op_names[0]) ? op_names[op] : "an unknown op";
}

static bool op_receives(uint32_t op)
{
	return op < 64 && (DRM_WSE_OPS_RECEIVE & (1ULL << op));
}

static int64_t deadline_ns(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)ms * 1000000;
}

/* Clears what a file remembers (its number and state stay). */
void file_forget(struct dev_file *f)
{
	f->nhandles = 0;
	f->nqueues = 0;
	f->njobs = 0;
	f->image_handle = 0;
	f->data_handle = 0;
	f->users = 0;
	memset(f->slots, 0, sizeof(f->slots));
}

/*
 * A user pointer after a bit flip: one that still lies in the guarded
 * region, or is one of the bad ones drawn on purpose, stays; one moved
 * elsewhere in this process becomes a kernel address, still a bad
 * pointer for the driver to refuse.
 */
static uint64_t keep_ptr_safe(const struct thr *t, uint64_t ptr)
{
	uint64_t lo = (uintptr_t)t->buf - GUARD_SIZE, hi = (uintptr_t)t->buf + BUF_SIZE + GUARD_SIZE;

	if (ptr < 0x10000 || ptr >= 0xffff800000000000ULL || (ptr >= lo && ptr < hi))
		return ptr;
	return 0xffff800000000000ULL | ptr;
}

/* Whether [addr, addr + len) lies in the thread's buffer. */
static bool in_buf(const struct thr *t, uint64_t addr, uint64_t len)
{
	uint64_t lo = (uintptr_t)t->buf;

	return addr >= lo && len <= BUF_SIZE && addr - lo <= BUF_SIZE - len;
}

/* A size near the interesting ones. */
static uint64_t pick_size(struct thr *t)
{
	static const uint64_t sizes[] = {
		0, 1, 7, 64, 4095, 4096, 65536, 1 << 20, (4 << 20) - 4096, 4 << 20,
		(16 << 20) + 1, 1ULL << 32, UINT64_MAX,
	};

	return sizes[draw(t, sizeof(sizes) / sizeof(sizes[0]))];
}

/* A user address: the buffer, somewhere in it, NULL, or nowhere. */
static uint64_t pick_addr(struct thr *t, uint64_t len)
{
	switch (draw(t, 6)) {
	case 0:
		return 0;
	case 1:
		return 0x1000;
	case 2:
		return 0xffff800000000000ULL;	/* the kernel's half */
	default:
		return (uintptr_t)t->buf + (len < BUF_SIZE ? draw(t, BUF_SIZE - len) : 0);
	}
}

/* A handle of the file: one it made, mostly, or a small or random number. */
static uint32_t pick_handle(struct thr *t, const struct fref *r)
{
	struct dev_file *f;
	uint32_t h;

	proc_lock(t);
	f = file_of(t, r);
	if (f && f->nhandles && draw(t, 8))
		h = f->handles[draw(t, f->nhandles)];
	else
		h = draw(t, 2) ? 1 + (uint32_t)draw(t, 4) : (uint32_t)draw(t, 1000);
	proc_unlock(t);
	return h;
}

/*
 * A queue id: one the file's threads made, the one the driver hands out
 * next (the lowest free: ids are allocated from 1), a small one, or any.
 * Its hardware queue in *@hw when known.
 */
static uint32_t pick_queue(struct thr *t, const struct fref *r, uint32_t *hw)
{
	struct dev_file *f;
	uint32_t id = 0, x = (uint32_t)draw(t, 8), i;

	proc_lock(t);
	f = file_of(t, r);
	if (f && f->nqueues && x < 4) {
		i = (uint32_t)draw(t, f->nqueues);
		id = f->queues[i].id;
		if (hw)
			*hw = f->queues[i].hw;
	} else if (f && x < 6) {
		for (id = 1; id < MAX_QUEUES; id++) {
			for (i = 0; i < f->nqueues && f->queues[i].id != id; i++)
				;
			if (i == f->nqueues)
				break;
		}
	} else if (x < 7) {
		id = 1 + (uint32_t)draw(t, 4);
	} else {
		id = (uint32_t)draw(t, 1000);
	}
	proc_unlock(t);
	return id;
}

/* Remembers a new object of the file; false if there is no room left. */
static bool note_handle(struct thr *t, const struct fref *r, uint32_t h)
{
	struct dev_file *f;
	bool room;

	proc_lock(t);
	f = file_of(t, r);
	room = f && f->nhandles < MAX_HANDLES;
	if (room)
		f->handles[f->nhandles++] = h;
	proc_unlock(t);
	return room;
}

static void forget_handle(struct thr *t, const struct fref *r, uint32_t h)
{
	struct dev_file *f;
	unsigned int i;

	proc_lock(t);
	f = file_of(t, r);
	for (i = 0; f && i < f->nhandles; i++)
		if (f->handles[i] == h)
			f->handles[i--] = f->handles[--f->nhandles];
	if (f && f->image_handle == h)
		f->image_handle = 0;
	if (f && f->data_handle == h)
		f->data_handle = 0;
	proc_unlock(t);
}

static void note_queue(struct thr *t, const struct fref *r, uint32_t id, uint32_t hw)
{
	struct dev_file *f;
	unsigned int i;

	proc_lock(t);
	f = file_of(t, r);
	for (i = 0; f && i < f->nqueues && f->queues[i].id != id; i++)
		;
	if (f && i < MAX_QUEUES) {
		f->queues[i].id = id;
		f->queues[i].hw = hw;
		if (i == f->nqueues)
			f->nqueues++;
	}
	proc_unlock(t);
}

static void forget_queue(struct thr *t, const struct fref *r, uint32_t id)
{
	struct dev_file *f;
	unsigned int i;

	proc_lock(t);
	f = file_of(t, r);
	for (i = 0; f && i < f->nqueues; i++)
		if (f->queues[i].id == id)
			f->queues[i--] = f->queues[--f->nqueues];
	for (i = 0; f && i < f->njobs; i++)
		if (f->jobs[i].queue == id)
			f->jobs[i--] = f->jobs[--f->njobs];
	proc_unlock(t);
}

static void note_job(struct thr *t, const struct fref *r, const struct fuzz_job *j)
{
	struct dev_file *f;

	proc_lock(t);
	f = file_of(t, r);
	if (f && f->njobs < MAX_JOBS)
		f->jobs[f->njobs++] = *j;
	proc_unlock(t);
}

/* Takes a collected job out of the file's list; true if it was there (in *@out). */
static bool forget_job(struct thr *t, const struct fref *r, uint32_t queue, uint64_t id,
		       struct fuzz_job *out)
{
	struct dev_file *f;
	unsigned int i;
	bool found = false;

	proc_lock(t);
	f = file_of(t, r);
	for (i = 0; f && i < f->njobs; i++) {
		if (f->jobs[i].queue == queue && f->jobs[i].id == id) {
			*out = f->jobs[i];
			f->jobs[i] = f->jobs[--f->njobs];
			found = true;
			break;
		}
	}
	proc_unlock(t);
	return found;
}

static void set_slot(struct thr *t, const struct fref *r, uint64_t slot, enum slot_state s)
{
	struct dev_file *f;

	if (!slot || slot > FUZZ_SLOTS)
		return;
	proc_lock(t);
	f = file_of(t, r);
	if (f && (s != S_CLAIMED || f->slots[slot] == S_NONE))
		f->slots[slot] = (uint8_t)s;
	proc_unlock(t);
}

/* A slot this file loaded a program into, other than @not; 0 if none. */
static uint32_t loaded_slot(struct thr *t, const struct fref *r, uint32_t not)
{
	uint32_t have[FUZZ_SLOTS], n = 0, s;
	struct dev_file *f;

	proc_lock(t);
	f = file_of(t, r);
	for (s = 1; f && s <= FUZZ_SLOTS; s++)
		if (f->slots[s] == S_LOADED && s != not)
			have[n++] = s;
	proc_unlock(t);
	return n ? have[draw(t, n)] : 0;
}

/* A stream of the program, out (device to host) or in; its index, or -1. */
static int pick_stream(struct thr *t, bool out)
{
	const struct fuzz_image *img = t->p->img;
	int have[MAX_STREAMS], n = 0;
	unsigned int i;

	for (i = 0; img && i < img->nstreams; i++)
		if (img->streams[i].out == out)
			have[n++] = (int)i;
	return n ? have[draw(t, (uint64_t)n)] : -1;
}

/* Maps an object of the file; its size in *@size. MAP_FAILED on failure. */
static uint8_t *bo_map(const struct fref *r, uint32_t handle, uint64_t *size)
{
	struct drm_wse_bo_info i = { .handle = handle };
	void *m;

	if (ioctl(r->fd, DRM_IOCTL_WSE_BO_INFO, &i) || !i.size || i.size > (64 << 20))
		return MAP_FAILED;
	m = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, (off_t)i.mmap_offset);
	*size = i.size;
	return m;
}

/*
 * Looks at [@off, @off + @len) of an object for another uid's canary,
 * then makes it this uid's own again (it is sent from later).
 */
static void bo_check(struct thr *t, const struct fref *r, uint32_t handle, uint64_t off,
		     uint64_t len, const char *how)
{
	uint64_t size = 0;
	uint8_t *m = bo_map(r, handle, &size);

	if (m == MAP_FAILED)
		return;
	if (off <= size && len <= size - off) {
		canary_check(t, r, m + off, len, how);
		canary_fill(m + off, len, t->p->uid);
	}
	munmap(m, size);
}

/* The file's object of canaries, made when it has none; 0 if it cannot be. */
static uint32_t data_bo(struct thr *t, const struct fref *r)
{
	struct drm_wse_bo_create c = { .size = DATA_BO_SIZE };
	struct dev_file *f;
	uint64_t size = 0;
	uint32_t h = 0;
	uint8_t *m;

	proc_lock(t);
	f = file_of(t, r);
	if (f)
		h = f->data_handle;
	proc_unlock(t);
	if (h) {
		struct drm_wse_bo_info i = { .handle = h };

		if (!ioctl(r->fd, DRM_IOCTL_WSE_BO_INFO, &i) && i.size >= DATA_BO_SIZE)
			return h;
	}
	if (ioctl(r->fd, DRM_IOCTL_WSE_BO_CREATE, &c))
		return 0;
	m = bo_map(r, c.handle, &size);
	if (m != MAP_FAILED) {
		canary_check(t, r, m, size, "a new buffer object (BO_CREATE, mmap)");
		canary_fill(m, size, t->p->uid);
		munmap(m, size);
	}
	note_handle(t, r, c.handle);
	proc_lock(t);
	f = file_of(t, r);
	if (f)
		f->data_handle = c.handle;
	proc_unlock(t);
	return c.handle;
}

/* The file's object holding this uid's program image, written afresh. */
static uint32_t image_bo(struct thr *t, const struct fref *r)
{
	const struct fuzz_image *img = t->p->img;
	struct drm_wse_bo_create c = { .size = img->len };
	struct dev_file *f;
	uint64_t size = 0;
	uint32_t h = 0;
	uint8_t *m;

	proc_lock(t);
	f = file_of(t, r);
	if (f)
		h = f->image_handle;
	proc_unlock(t);
	m = h ? bo_map(r, h, &size) : MAP_FAILED;
	if (m == MAP_FAILED) {
		if (ioctl(r->fd, DRM_IOCTL_WSE_BO_CREATE, &c))
			return 0;
		h = c.handle;
		note_handle(t, r, h);
		proc_lock(t);
		f = file_of(t, r);
		if (f)
			f->image_handle = h;
		proc_unlock(t);
		m = bo_map(r, h, &size);
		if (m == MAP_FAILED)
			return 0;
	}
	if (size < img->len) {
		munmap(m, size);
		return 0;
	}
	/* A reply (a load's placement) may have landed in it. */
	memcpy(m, img->bytes, img->len);
	munmap(m, size);
	return h;
}

/* A queue of the file on a hardware queue other than 0 if @busy_hw and
 * there is one; one is made if the file has none.
 */
static uint32_t own_queue(struct thr *t, const struct fref *r, bool not_hw0, uint32_t depth,
			  uint32_t *hw)
{
	struct drm_wse_queue_create q = { .depth = depth, .timeout_ms = 5000 };
	uint32_t ids[MAX_QUEUES], hws[MAX_QUEUES], n = 0, i, nq = 1;
	struct dev_file *f;

	proc_lock(t);
	f = file_of(t, r);
	for (i = 0; f && i < f->nqueues; i++) {
		if (not_hw0 && !f->queues[i].hw)
			continue;
		ids[n] = f->queues[i].id;
		hws[n++] = f->queues[i].hw;
	}
	if (f)
		nq = f->num_queues;
	proc_unlock(t);
	if (n && draw(t, 4)) {
		i = (uint32_t)draw(t, n);
		*hw = hws[i];
		return ids[i];
	}
	q.hw_queue = not_hw0 && nq > 1 ? 1 + (uint32_t)draw(t, nq - 1) : (uint32_t)draw(t, nq);
	if (ioctl(r->fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q))
		return 0;
	note_queue(t, r, q.queue_id, q.hw_queue);
	*hw = q.hw_queue;
	return q.queue_id;
}

/* SUBMIT without a flipped bit; 0 or -errno, the job remembered (and in *@out). */
static int submit_job(struct thr *t, const struct fref *r, uint32_t queue, uint32_t op,
		      uint32_t handle, uint64_t off, uint64_t len, const uint64_t args[4],
		      uint32_t timeout_ms, struct fuzz_job *out)
{
	struct drm_wse_submit s = {
		.queue_id = queue, .op = op, .handle = handle, .timeout_ms = timeout_ms,
		.bo_offset = off, .length = len,
	};
	struct fuzz_job j = { .queue = queue, .handle = handle, .op = op, .bo_offset = off,
			      .length = len };

	memcpy(s.args, args, sizeof(s.args));
	if (ioctl(r->fd, DRM_IOCTL_WSE_SUBMIT, &s))
		return -errno;
	j.id = s.job_id;
	note_job(t, r, &j);
	if (out)
		*out = j;
	return 0;
}

/*
 * WAITs up to @ms for a job and collects it; what it received is looked
 * at. Returns the WAIT's result (0 or -errno), the job's status in *@status.
 */
static int collect(struct thr *t, const struct fref *r, const struct fuzz_job *j, int ms,
		   int *status, const char *how)
{
	struct drm_wse_wait w = { .queue_id = j->queue, .job_id = j->id };
	struct fuzz_job seen;
	char what[160];

	w.timeout_ns = ms ? deadline_ns(ms) : 0;
	if (ioctl(r->fd, DRM_IOCTL_WSE_WAIT, &w))
		return -errno;
	if (status)
		*status = w.status;
	forget_job(t, r, j->queue, j->id, &seen);
	if (!w.status && w.result_len && j->handle && op_receives(j->op)) {
		snprintf(what, sizeof(what), "%s (%s, job %llu of queue %u)", op_name(j->op), how,
			 (unsigned long long)j->id, j->queue);
		bo_check(t, r, j->handle, j->bo_offset, w.result_len, what);
	}
	return 0;
}

void do_open(struct thr *t)
{
	struct proc *p = t->p;
	struct wse_dev_status *list = NULL;
	struct drm_wse_device_info info = { 0 };
	struct drm_wse_get_info g = { .param = DRM_WSE_PARAM_DEVICE_INFO, .size = sizeof(info),
				      .ptr = (uintptr_t)&info };
	struct dev_file *f;
	uint64_t max_job = 0;
	unsigned int slot, i;
	bool hostile = false;
	char path[64];
	size_t n = 0;
	int fd = -1, minor = -1;

	proc_lock(t);
	for (slot = 0; slot < MAX_FDS && p->files[slot].state != F_FREE; slot++)
		;
	if (slot < MAX_FDS)
		p->files[slot].state = F_OPENING;
	proc_unlock(t);
	if (slot == MAX_FDS)
		return;
	if (!wse_ctl_list(t->ctl, &list, &n) && n) {
		i = (unsigned int)draw(t, n);
		minor = list[i].accel_minor;
		for (unsigned int k = 0; k < p->sh->nlinks; k++)
			if (p->sh->links[k].hostile && !strcmp(p->sh->links[k].addr, list[i].peer))
				hostile = true;
	}
	free(list);
	if (minor >= 0) {
		snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd >= 0) {
		ioctl(fd, DRM_IOCTL_WSE_GET_INFO, &g);
		g = (struct drm_wse_get_info){ .param = DRM_WSE_PARAM_MAX_JOB_BYTES,
					       .size = sizeof(max_job), .ptr = (uintptr_t)&max_job };
		ioctl(fd, DRM_IOCTL_WSE_GET_INFO, &g);
	}
	proc_lock(t);
	f = &p->files[slot];
	if (fd >= 0) {
		file_forget(f);
		f->fd = fd;
		f->gen++;
		f->state = F_OPEN;
		f->minor = minor;
		f->hostile = hostile;
		f->num_queues = info.num_queues ? info.num_queues : 4;
		f->max_job = max_job ? max_job : 1 << 20;
	} else {
		f->state = F_FREE;
	}
	proc_unlock(t);
}

/* This thread's ring for the file, made if @make; NULL if there is none. */
static struct thr_ring *ring_for(struct thr *t, const struct fref *r, bool make)
{
	struct thr_ring *tr = &t->rings[r->slot];

	if (tr->up && tr->gen != r->gen)
		ring_drop(t, r->slot);	/* that file is closed: exit with what is in flight */
	if (!tr->up && make) {
		struct io_uring_params prm = { .flags = draw(t, 8) ? IORING_SETUP_SQE128 : 0 };
		struct iovec iov = { t->buf, BUF_SIZE };

		if (io_uring_queue_init_params(16, &tr->ring, &prm))
			return NULL;
		tr->up = true;
		tr->gen = r->gen;
		tr->inflight = 0;
		if (draw(t, 2))
			io_uring_register_buffers(&tr->ring, &iov, 1);
	}
	return tr->up ? tr : NULL;
}

void ring_drop(struct thr *t, unsigned int slot)
{
	struct thr_ring *tr = &t->rings[slot];

	if (tr->up) {
		io_uring_queue_exit(&tr->ring);
		tr->up = false;
		tr->inflight = 0;
	}
}

void do_close(struct thr *t, struct fref *r)
{
	ring_drop(t, r->slot);
	file_doom(t, r->slot, r->gen);
}

void do_get_info(struct thr *t, struct fref *r)
{
	struct drm_wse_get_info g = {
		.param = (uint32_t)draw(t, 6), .size = (uint32_t)pick_size(t) & 0xff,
	};

	g.ptr = pick_addr(t, g.size);
	maybe_mutate(t, &g, sizeof(g));
	g.ptr = keep_ptr_safe(t, g.ptr);
	if (!ioctl(r->fd, DRM_IOCTL_WSE_GET_INFO, &g) && g.size && in_buf(t, g.ptr, g.size)) {
		canary_check(t, r, (void *)(uintptr_t)g.ptr, g.size, "GET_INFO");
		canary_fill((void *)(uintptr_t)g.ptr, g.size, t->p->uid);
	}
}

void do_bo_create(struct thr *t, struct fref *r)
{
	struct drm_wse_bo_create c = { .size = pick_size(t) };
	uint64_t size = 0;
	uint8_t *m;

	maybe_mutate(t, &c, sizeof(c));
	/* Sizes the driver takes are kept small: a job maps all of an object,
	 * and the guest's memory is small. Larger ones it must refuse.
	 */
	if (c.size > (4 << 20) && c.size <= (4ULL << 30))
		c.size = 4 << 20;
	if (ioctl(r->fd, DRM_IOCTL_WSE_BO_CREATE, &c))
		return;
	/* One the file cannot remember goes at once: a race creates thousands. */
	if (!note_handle(t, r, c.handle)) {
		struct drm_gem_close g = { .handle = c.handle };

		ioctl(r->fd, DRM_IOCTL_GEM_CLOSE, &g);
		return;
	}
	/* A new object is zero-filled: nobody's data. Then it is this uid's
	 * (its first MiB: the pages written stay in memory).
	 */
	if (draw(t, 4) && (m = bo_map(r, c.handle, &size)) != MAP_FAILED) {
		uint64_t len = size < (1 << 20) ? size : 1 << 20;

		canary_check(t, r, m, len, "a new buffer object (BO_CREATE, mmap)");
		canary_fill(m, len, t->p->uid);
		munmap(m, size);
	}
}

void do_bo_info(struct thr *t, struct fref *r)
{
	struct drm_wse_bo_info i = { .handle = pick_handle(t, r) };

	maybe_mutate(t, &i, sizeof(i));
	ioctl(r->fd, DRM_IOCTL_WSE_BO_INFO, &i);
}

void do_gem_close(struct thr *t, struct fref *r)
{
	struct drm_gem_close c = { .handle = pick_handle(t, r) };

	if (!ioctl(r->fd, DRM_IOCTL_GEM_CLOSE, &c))
		forget_handle(t, r, c.handle);
}

/* Maps an object (or a wrong offset), looks at it, writes it, unmaps it. */
void do_mmap(struct thr *t, struct fref *r)
{
	struct drm_wse_bo_info i = { .handle = pick_handle(t, r) };
	size_t len = 4096 * (1 + draw(t, 4));
	void *m;

	if (ioctl(r->fd, DRM_IOCTL_WSE_BO_INFO, &i))
		i.mmap_offset = draw(t, 1 << 20) * 4096;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, draw(t, 8) ? MAP_SHARED : MAP_PRIVATE,
		 r->fd, (off_t)i.mmap_offset);
	if (m == MAP_FAILED)
		return;
	if (len <= i.size) {
		canary_check(t, r, m, len, "mmap of a buffer object");
		canary_fill(m, len, t->p->uid);
	}
	munmap(m, len);
}

void do_queue_create(struct thr *t, struct fref *r)
{
	struct drm_wse_queue_create q = {
		.hw_queue = (uint32_t)draw(t, 5),
		.depth = (uint32_t)(draw(t, 2) ? 1 + draw(t, 16) : draw(t, 300)),
		.timeout_ms = draw(t, 4) ? (uint32_t)draw(t, 2000) : (uint32_t)draw(t, 700000),
	};

	maybe_mutate(t, &q, sizeof(q));
	if (!ioctl(r->fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q))
		note_queue(t, r, q.queue_id, q.hw_queue);
}

void do_queue_destroy(struct thr *t, struct fref *r)
{
	struct drm_wse_queue_destroy d = { .queue_id = pick_queue(t, r, NULL) };

	maybe_mutate(t, &d, sizeof(d));
	if (!ioctl(r->fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &d))
		forget_queue(t, r, d.queue_id);
}

/* Arguments near what an operation takes: a slot 1..FUZZ_SLOTS first. */
static void pick_args(struct thr *t, __u64 args[4])
{
	args[0] = draw(t, 8) ? 1 + draw(t, FUZZ_SLOTS) : pick_size(t);
	args[1] = draw(t, 4) ? draw(t, 4) : pick_size(t);
	args[2] = draw(t, 2) ? draw(t, 4) : pick_size(t);
	args[3] = draw(t, 2) ? draw(t, 64) : pick_size(t);
	for (int i = 0; i < 4; i++)
		if (!draw(t, 3))
			args[i] = 0;
}

void do_submit(struct thr *t, struct fref *r)
{
	struct drm_wse_submit s = {
		.queue_id = pick_queue(t, r, NULL), .op = (uint32_t)draw(t, 12),
		.handle = draw(t, 6) ? pick_handle(t, r) : 0,
		.timeout_ms = draw(t, 3) ? 0 : (uint32_t)draw(t, 50),
		.bo_offset = draw(t, 4) ? 0 : pick_size(t),
		.length = draw(t, 3) ? 1 + draw(t, 8192) : pick_size(t),
	};
	struct fuzz_job j;

	pick_args(t, s.args);
	maybe_mutate(t, &s, sizeof(s));
	if (ioctl(r->fd, DRM_IOCTL_WSE_SUBMIT, &s))
		return;
	j = (struct fuzz_job){ .queue = s.queue_id, .id = s.job_id, .handle = s.handle,
			       .op = s.op, .bo_offset = s.bo_offset, .length = s.length };
	note_job(t, r, &j);
}

void do_wait(struct thr *t, struct fref *r)
{
	struct drm_wse_wait w = { 0 };
	struct dev_file *f;
	struct fuzz_job j = { 0 };
	bool known = false;
	char what[160];

	proc_lock(t);
	f = file_of(t, r);
	if (f && f->njobs && draw(t, 8)) {
		j = f->jobs[draw(t, f->njobs)];
		known = true;
	}
	proc_unlock(t);
	if (known) {
		w.queue_id = j.queue;
		w.job_id = j.id;
	} else {
		w.queue_id = pick_queue(t, r, NULL);
		w.job_id = draw(t, 100);
	}
	if (draw(t, 2))
		w.timeout_ns = deadline_ns((int)draw(t, 50));
	maybe_mutate(t, &w, sizeof(w));
	if (ioctl(r->fd, DRM_IOCTL_WSE_WAIT, &w))
		return;
	/* Collected: another thread's WAIT on it fails from now on. */
	if (!forget_job(t, r, w.queue_id, w.job_id, &j))
		return;
	if (!w.status && w.result_len && j.handle && op_receives(j.op)) {
		snprintf(what, sizeof(what), "%s (SUBMIT, WAIT)", op_name(j.op));
		bo_check(t, r, j.handle, j.bo_offset, w.result_len, what);
	}
}

void do_mem_xfer(struct thr *t, struct fref *r)
{
	struct drm_wse_mem_xfer x = {
		.handle = pick_handle(t, r), .flags = 1 + (uint32_t)draw(t, 2),
		.bo_offset = draw(t, 4) ? 0 : pick_size(t), .dev_addr = draw(t, 1 << 20),
		.length = 1 + draw(t, 65536), .timeout_ms = (uint32_t)draw(t, 200),
	};

	maybe_mutate(t, &x, sizeof(x));
	ioctl(r->fd, DRM_IOCTL_WSE_MEM_XFER, &x);
}

/*
 * A CQE's user_data says where its reply lands: bit 63, the slot the job
 * names (bits 53..60), the offset in the thread's buffer (bits 32..52),
 * the length (bits 8..28) and the op.
 */
static uint64_t reply_tag(const struct thr *t, const struct drm_wse_uring_job *j)
{
	if (!op_receives(j->op) || !j->length || !in_buf(t, j->addr, j->length))
		return 0;
	return 1ULL << 63 | (j->args[0] & 0xff) << 53 | (j->addr - (uintptr_t)t->buf) << 32 |
	       (uint64_t)j->length << 8 | (j->op & 0xff);
}

static void cqe_seen(struct thr *t, const struct fref *r, struct thr_ring *tr,
		     struct io_uring_cqe *cqe)
{
	uint64_t tag = cqe->user_data, off = tag >> 32 & 0x1fffff, len = tag >> 8 & 0x1fffff;
	char what[96];

	if (tag >> 63 && cqe->res > 0 && off + len <= BUF_SIZE) {
		if ((uint64_t)cqe->res < len)
			len = (uint64_t)cqe->res;
		snprintf(what, sizeof(what), "%s naming slot %u (io_uring)",
			 op_name((uint32_t)(tag & 0xff)), (unsigned int)(tag >> 53 & 0xff));
		canary_check(t, r, t->buf + off, len, what);
		canary_fill(t->buf + off, len, t->p->uid);
	}
	io_uring_cqe_seen(&tr->ring, cqe);
	if (tr->inflight)
		tr->inflight--;
}

/* Collects what completions are there, waiting up to @ms for one more. */
static void reap(struct thr *t, const struct fref *r, struct thr_ring *tr, int ms)
{
	struct __kernel_timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	struct io_uring_cqe *cqe;
	unsigned int n;

	for (n = 0; n < 64 && tr->inflight && !io_uring_peek_cqe(&tr->ring, &cqe); n++)
		cqe_seen(t, r, tr, cqe);
	if (ms && tr->inflight && !io_uring_wait_cqe_timeout(&tr->ring, &cqe, &ts))
		cqe_seen(t, r, tr, cqe);
}

/* Puts one well-formed job in an SQE of @tr (SQE128 rings only). */
static bool uring_prep(struct thr *t, const struct fref *r, struct thr_ring *tr,
		       const struct drm_wse_uring_job *j)
{
	struct io_uring_sqe *sqe;

	if (!(tr->ring.flags & IORING_SETUP_SQE128) || !(sqe = io_uring_get_sqe(&tr->ring)))
		return false;
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = r->fd;
	sqe->cmd_op = DRM_WSE_URING_CMD_JOB;
	sqe->user_data = reply_tag(t, j);
	memcpy(sqe->cmd, j, sizeof(*j));
	tr->inflight++;
	return true;
}

void do_uring(struct thr *t, struct fref *r)
{
	unsigned int n = 1 + (unsigned int)draw(t, 8), i;
	struct thr_ring *tr = ring_for(t, r, true);

	if (!tr)
		return;
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&tr->ring);
		struct drm_wse_uring_job j = {
			.queue_id = pick_queue(t, r, NULL), .op = (uint32_t)draw(t, 12),
			.length = draw(t, 3) ? 1 + (uint32_t)draw(t, 65536) : (uint32_t)pick_size(t),
			.timeout_ms = draw(t, 3) ? 0 : (uint32_t)draw(t, 50),
		};

		if (!sqe)
			break;
		j.addr = pick_addr(t, j.length);
		pick_args(t, j.args);
		maybe_mutate(t, &j, sizeof(j));
		j.addr = keep_ptr_safe(t, j.addr);
		/* A 64-byte ring has room for the first 16 bytes only. */
		memset(sqe, 0, (tr->ring.flags & IORING_SETUP_SQE128) ? 128 : 64);
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = r->fd;
		sqe->cmd_op = draw(t, 16) ? DRM_WSE_URING_CMD_JOB : (uint32_t)draw(t, 1 << 30);
		sqe->user_data = reply_tag(t, &j);
		if (!draw(t, 4))
			sqe->flags |= IOSQE_ASYNC;
		if (!draw(t, 4)) {
			sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
			sqe->buf_index = (uint16_t)draw(t, 2);
		}
		memcpy(sqe->cmd, &j, (tr->ring.flags & IORING_SETUP_SQE128) ? sizeof(j) : 16);
		if (!draw(t, 16))
			sqe->addr = 1;	/* not zero where it must be */
		tr->inflight++;
	}
	if (io_uring_submit(&tr->ring) < 0)
		tr->inflight = 0;
	reap(t, r, tr, 20);
}

void do_ring_exit(struct thr *t, struct fref *r)
{
	ring_drop(t, r->slot);
}

void do_netlink(struct thr *t)
{
	struct wse_dev_status d, *list = NULL;
	size_t n;

	switch (draw(t, 3)) {
	case 0:
		if (!wse_ctl_list(t->ctl, &list, &n))
			free(list);
		break;
	case 1:
		wse_ctl_get(t->ctl, (uint32_t)draw(t, 8), false, &d);
		break;
	default:
		wse_ctl_get(t->ctl, (uint32_t)draw(t, 8), true, &d);
		break;
	}
}

/*
 * Loads this uid's program (its weights are the uid's canaries) into a
 * slot, on a queue of a hardware queue other than 0 mostly, and then
 * writes canaries into its weights. One time in four it closes the file
 * right after sending the load instead, while the load may still wait at
 * the firmware behind a request that blocks there (a read of an output
 * stream of another of its programs, which has no data): the slot must
 * not be anybody else's before the firmware has let go of it.
 */
void do_program(struct thr *t, struct fref *r)
{
	const struct fuzz_image *img = t->p->img;
	struct shared *sh = t->p->sh;
	uint32_t slot = 1 + (uint32_t)draw(t, FUZZ_SLOTS), hw = 0, q, h, d, pieces, other;
	uint64_t piece, off, max_job;
	bool early = !draw(t, 4), done = false;
	struct fuzz_job job;
	struct dev_file *f;
	int status = -1, s;

	if (!img) {
		do_submit(t, r);
		return;
	}
	q = own_queue(t, r, true, 16, &hw);
	h = q ? image_bo(t, r) : 0;
	if (!h)
		return;
	proc_lock(t);
	f = file_of(t, r);
	max_job = f ? f->max_job : 1 << 20;
	proc_unlock(t);
	other = loaded_slot(t, r, slot);
	s = pick_stream(t, true);
	if (early && other && s >= 0 && (d = data_bo(t, r))) {
		uint64_t args[4] = { other, img->streams[s].id };
		uint64_t len = img->streams[s].batch_bytes;

		if (submit_job(t, r, q, DRM_WSE_OP_STREAM_READ, d, 0,
			       len < DATA_BO_SIZE ? len : DATA_BO_SIZE, args, 0, NULL) == 0)
			__atomic_fetch_add(&sh->blocking, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&sh->loads, 1, __ATOMIC_RELAXED);
	pieces = 1 + (uint32_t)draw(t, 3);
	piece = (img->len + pieces - 1) / pieces;
	if (piece > max_job)
		piece = max_job;
	for (off = 0; off < img->len; off += piece) {
		uint64_t n = img->len - off < piece ? img->len - off : piece;
		uint64_t args[4] = { slot, off + n == img->len, img->len, off };

		if (submit_job(t, r, q, DRM_WSE_OP_PROGRAM_LOAD, h, off, n, args, 5000, &job))
			break;
		set_slot(t, r, slot, S_CLAIMED);
		if (early)
			continue;
		if (collect(t, r, &job, 3000, &status, "SUBMIT") || status)
			break;
		done = off + n == img->len;
	}
	if (early) {
		__atomic_fetch_add(&sh->early_closes, 1, __ATOMIC_RELAXED);
		do_close(t, r);
		return;
	}
	if (!done)
		return;
	set_slot(t, r, slot, S_LOADED);
	__atomic_fetch_add(&sh->loads_done, 1, __ATOMIC_RELAXED);
	d = data_bo(t, r);
	if (d) {
		uint64_t args[4] = { slot, 1, draw(t, 2) ? 0 : 4 * draw(t, 65536) };
		uint64_t len = 4096 * (1 + draw(t, 16));

		if (!submit_job(t, r, q, DRM_WSE_OP_PARAMS_WRITE, d, 0, len, args, 2000, &job) &&
		    !collect(t, r, &job, 2000, &status, "SUBMIT") && !status)
			__atomic_fetch_add(&sh->params_canary, 1, __ATOMIC_RELAXED);
	}
}

/* One job of a probe through io_uring into the thread's buffer, waited for. */
static void probe_uring(struct thr *t, const struct fref *r, uint32_t queue, uint32_t op,
			const uint64_t args[4], uint32_t len)
{
	struct thr_ring *tr = ring_for(t, r, true);
	struct drm_wse_uring_job j = { .queue_id = queue, .op = op, .length = len,
				       .timeout_ms = 300 };
	int64_t end = wse_link_now_ms() + 500;

	if (!tr || len > BUF_SIZE)
		return;
	j.addr = len ? (uintptr_t)t->buf + draw(t, BUF_SIZE - len + 1) : 0;
	memcpy(j.args, args, sizeof(j.args));
	if (!uring_prep(t, r, tr, &j))
		return;
	if (io_uring_submit(&tr->ring) < 0) {
		tr->inflight = 0;
		return;
	}
	while (tr->inflight && wse_link_now_ms() < end)
		reap(t, r, tr, 50);
}

/*
 * Another user's view of the slots: on every slot, a call that reads or
 * uses what is there - its weights or optimizer state, an output stream,
 * a RUN, an UNLOAD, or a first piece of a load (which takes a free slot)
 * followed by a read of the weights. Whatever comes back is looked at.
 */
void do_probe(struct thr *t, struct fref *r)
{
	const struct fuzz_image *img = t->p->img;
	uint32_t start = (uint32_t)draw(t, FUZZ_SLOTS), hw = 0, q, d, k;
	struct fuzz_job job;
	char how[64];
	int status;

	q = own_queue(t, r, false, 16, &hw);
	d = q ? data_bo(t, r) : 0;
	if (!d)
		return;
	for (k = 0; k < FUZZ_SLOTS && !__atomic_load_n(&t->p->sh->stop, __ATOMIC_RELAXED); k++) {
		uint32_t slot = 1 + (start + k) % FUZZ_SLOTS, op, len = 4096;
		uint64_t args[4] = { slot, 0, 0, 0 };
		int st = pick_stream(t, true);

		switch (draw(t, 6)) {
		case 0:
		case 1:
			op = DRM_WSE_OP_PARAMS_READ;
			args[1] = 1 + draw(t, 2);	/* weights, optimizer state */
			args[2] = draw(t, 2) ? 0 : 4 * draw(t, 16384);
			break;
		case 2:
			op = DRM_WSE_OP_STREAM_READ;
			args[1] = st >= 0 ? img->streams[st].id : draw(t, 8);
			break;
		case 3:
			op = DRM_WSE_OP_RUN;
			args[1] = 3;	/* predict */
			args[2] = 1;
			args[3] = img ? img->batch : 1;
			break;
		case 4:
			op = DRM_WSE_OP_PROGRAM_UNLOAD;
			len = 0;
			break;
		default:
			/* A first piece takes a free slot; then read what the slot holds. */
			if (img && (d = image_bo(t, r)) &&
			    !submit_job(t, r, q, DRM_WSE_OP_PROGRAM_LOAD, d, 0,
					img->len < 4096 ? img->len : 4096,
					(uint64_t[4]){ slot, 0, img->len, 0 }, 300, &job)) {
				set_slot(t, r, slot, S_CLAIMED);
				__atomic_fetch_add(&t->p->sh->claims, 1, __ATOMIC_RELAXED);
				collect(t, r, &job, 500, &status, "probe");
			}
			d = data_bo(t, r);
			if (!d)
				return;
			op = DRM_WSE_OP_PARAMS_READ;
			args[1] = 1;
			break;
		}
		snprintf(how, sizeof(how), "a probe of slot %u", slot);
		if (len && !draw(t, 4)) {
			probe_uring(t, r, q, op, args, len);
		} else if (!submit_job(t, r, q, op, len ? d : 0, 0, len, args, 300, &job)) {
			collect(t, r, &job, 500, &status, how);
		}
	}
}

/*
 * Requests the firmware waits on: a read of an output stream that has no
 * data, a write of more than an input stream has room for, a RUN with no
 * input; through SUBMIT or io_uring, on any hardware queue, often on deep
 * queues. They hold their hardware queue at the firmware until the data
 * comes, their program goes, or the link does. With a program of its own
 * loaded, the file sends one that surely blocks (a read of an output
 * stream) and then a pile of others behind it on the same queue, many
 * with short timeouts: the host gives up on them, the firmware holds on.
 */
void do_block(struct thr *t, struct fref *r)
{
	const struct fuzz_image *img = t->p->img;
	uint32_t hw = 0, q, d, own = loaded_slot(t, r, 0), n, i;
	struct shared *sh = t->p->sh;
	struct thr_ring *tr = NULL;

	q = draw(t, 2) ? own_queue(t, r, false, 64 + (uint32_t)draw(t, 193), &hw) :
			 pick_queue(t, r, &hw);
	d = data_bo(t, r);
	if (!q || !d)
		return;
	n = 1 + (uint32_t)draw(t, own ? 24 : 4);
	for (i = 0; i < n && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED); i++) {
		uint32_t slot = own && draw(t, 4) ? own : 1 + (uint32_t)draw(t, FUZZ_SLOTS), op;
		uint32_t timeout = draw(t, 2) ? 100 + (uint32_t)draw(t, 500) :
				   draw(t, 2) ? 0 : (uint32_t)draw(t, 5000);
		uint64_t args[4] = { slot }, len;
		int s;

		switch (i == 0 && own ? 0 : draw(t, 3)) {
		case 0:
			op = DRM_WSE_OP_STREAM_READ;
			s = pick_stream(t, true);
			args[1] = s >= 0 ? img->streams[s].id : draw(t, 8);
			len = (s >= 0 ? img->streams[s].batch_bytes : 4096) * (1 + draw(t, 4));
			break;
		case 1:
			/* Whole records, and more of them than the stream has room for. */
			op = DRM_WSE_OP_STREAM_WRITE;
			s = pick_stream(t, false);
			args[1] = s >= 0 ? img->streams[s].id : draw(t, 8);
			len = 65536 + draw(t, DATA_BO_SIZE - 65536);
			if (s >= 0 && len > img->streams[s].record)
				len -= len % img->streams[s].record;
			break;
		default:
			op = DRM_WSE_OP_RUN;
			args[1] = 1 + draw(t, 2);	/* train, eval */
			args[2] = 1 + draw(t, 8);
			args[3] = img ? img->batch : 1;
			len = 4096;
			break;
		}
		if (len > DATA_BO_SIZE)
			len = DATA_BO_SIZE;
		__atomic_fetch_add(&sh->blocking, 1, __ATOMIC_RELAXED);
		if (draw(t, 3)) {
			submit_job(t, r, q, op, d, 0, len, args, timeout, NULL);
			continue;
		}
		if (!tr)
			tr = ring_for(t, r, true);
		if (tr) {
			struct drm_wse_uring_job j = {
				.queue_id = q, .op = op, .length = (uint32_t)len, .timeout_ms = timeout,
				.addr = (uintptr_t)t->buf,
			};

			memcpy(j.args, args, sizeof(j.args));
			uring_prep(t, r, tr, &j);
		}
	}
	if (tr) {
		if (io_uring_submit(&tr->ring) < 0)
			tr->inflight = 0;
		reap(t, r, tr, 20);
	}
}
