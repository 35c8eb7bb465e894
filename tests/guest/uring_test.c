// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring commands on the accel file: jobs on plain user memory and on
 * registered (fixed) buffers, many in flight, their negative cases, and a
 * ring torn down with commands in flight. Runs in the guest with wsefwd
 * started inside it.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse_guest.h"
#include "wse_guest_uring.h"

static int queue_create(int fd, uint32_t hw, uint32_t depth, uint32_t *id)
{
	struct drm_wse_queue_create q = { .hw_queue = hw, .depth = depth };
	int ret = guest_ioctl(fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q);

	if (!ret)
		*id = q.queue_id;
	return ret;
}

static struct drm_wse_uring_job job_of(uint32_t queue, uint32_t op, void *addr, uint32_t len,
				       uint64_t dev_addr)
{
	struct drm_wse_uring_job j = {
		.queue_id = queue, .op = op, .addr = (uintptr_t)addr, .length = len,
		.args = { dev_addr },
	};

	return j;
}

/* Submits one job and returns its CQE's res. */
static int run_one(struct io_uring *ring, int fd, const struct drm_wse_uring_job *job,
		   int fixed_index)
{
	struct io_uring_cqe *cqe;
	int res;

	guest_uring_prep(io_uring_get_sqe(ring), fd, job, 42, fixed_index);
	if (io_uring_submit(ring) != 1)
		return -1000;
	if (io_uring_wait_cqe(ring, &cqe))
		return -1001;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

FIXTURE(uring) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status dev;
	struct io_uring ring;
	bool attached, ring_up;
	uint32_t queue;
	int fd;
};

FIXTURE_SETUP(uring)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };

	self->attached = false;
	self->ring_up = false;
	self->fd = -1;
	self->fw.pid = 0;
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &self->dev));
	self->attached = true;
	self->fd = guest_open_accel(self->dev.accel_minor);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, queue_create(self->fd, 0, 64, &self->queue));
	ASSERT_EQ(0, io_uring_queue_init_params(64, &self->ring, &p));
	self->ring_up = true;
}

FIXTURE_TEARDOWN(uring)
{
	if (self->ring_up)
		io_uring_queue_exit(&self->ring);
	if (self->fd >= 0)
		close(self->fd);
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
}

static uint8_t byte_at(uint64_t i, unsigned int seed)
{
	return (uint8_t)((i * 2246822519u) >> 11 ^ seed);
}

/* Plain user memory, every size and misalignment, both directions. */
TEST_F(uring, write_read_plain_memory)
{
	static const uint32_t sizes[] = { 1, 5, 4096, 65537, 1 << 20 };
	uint8_t *w = malloc((1 << 20) + 64), *r = malloc((1 << 20) + 64);
	struct drm_wse_uring_job j;
	unsigned int k;
	uint64_t i;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, r);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		unsigned int off = k * 3 + 1;

		for (i = 0; i < sizes[k]; i++)
			w[off + i] = byte_at(i, k);
		memset(r, 0, (1 << 20) + 64);
		j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, w + off, sizes[k], 4096 * k + 3);
		ASSERT_EQ(0, run_one(&self->ring, self->fd, &j, -1));
		j = job_of(self->queue, DRM_WSE_OP_MEM_READ, r + off + 1, sizes[k], 4096 * k + 3);
		ASSERT_EQ((int)sizes[k], run_one(&self->ring, self->fd, &j, -1));
		ASSERT_EQ(0, memcmp(w + off, r + off + 1, sizes[k]));
	}
	free(w);
	free(r);
}

/* Registered buffers: the same through IORING_URING_CMD_FIXED. */
TEST_F(uring, write_read_fixed_buffers)
{
	size_t len = 1 << 20;
	uint8_t *bufs = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov[2];
	struct drm_wse_uring_job j;
	uint64_t i;

	ASSERT_NE(MAP_FAILED, bufs);
	iov[0].iov_base = bufs;
	iov[0].iov_len = len;
	iov[1].iov_base = bufs + len;
	iov[1].iov_len = len;
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, iov, 2));
	for (i = 0; i < len; i++)
		bufs[i] = byte_at(i, 99);
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, bufs + 7, len - 100, 1 << 20);
	ASSERT_EQ(0, run_one(&self->ring, self->fd, &j, 0));
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, bufs + len + 3, len - 100, 1 << 20);
	ASSERT_EQ((int)(len - 100), run_one(&self->ring, self->fd, &j, 1));
	EXPECT_EQ(0, memcmp(bufs + 7, bufs + len + 3, len - 100));
	/* An address outside the registered buffer is refused. */
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, bufs + len - 10, 4096, 0);
	EXPECT_EQ(-EFAULT, run_one(&self->ring, self->fd, &j, 0));
	io_uring_unregister_buffers(&self->ring);
	munmap(bufs, 2 * len);
}

/* Many commands in flight at once, submitted in batches, all completing
 * with the right data.
 */
TEST_F(uring, many_in_flight)
{
	enum { N = 48, SZ = 16384 };
	uint8_t *w = malloc(N * SZ), *r = calloc(N, SZ);
	struct io_uring_cqe *cqe;
	struct drm_wse_uring_job j;
	int i, seen = 0, bad = 0;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, r);
	for (i = 0; i < N * SZ; i++)
		w[i] = byte_at(i, 5);
	for (i = 0; i < N; i++) {
		j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, w + i * SZ, SZ, (uint64_t)i * SZ);
		guest_uring_prep(io_uring_get_sqe(&self->ring), self->fd, &j, i, -1);
	}
	ASSERT_EQ(N, io_uring_submit(&self->ring));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
		bad += cqe->res != 0;
		io_uring_cqe_seen(&self->ring, cqe);
	}
	EXPECT_EQ(0, bad);
	for (i = 0; i < N; i++) {
		j = job_of(self->queue, DRM_WSE_OP_MEM_READ, r + i * SZ, SZ, (uint64_t)i * SZ);
		guest_uring_prep(io_uring_get_sqe(&self->ring), self->fd, &j, 1000 + i, -1);
	}
	ASSERT_EQ(N, io_uring_submit(&self->ring));
	while (seen < N) {
		ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
		EXPECT_EQ(SZ, cqe->res);
		EXPECT_LE(1000, cqe->user_data);
		seen++;
		io_uring_cqe_seen(&self->ring, cqe);
	}
	EXPECT_EQ(0, memcmp(w, r, N * SZ));
	free(w);
	free(r);
}

/* Plain memory the driver cannot pin page by page still works through
 * the ordinary copy (a mapped buffer object), and memory with a hole, or
 * read-only memory to read into, gives EFAULT, not a partial transfer.
 */
TEST_F(uring, plain_memory_edges)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 3 * pg;
	uint8_t *bo_map, *holed, *ro, *r = malloc(len);
	struct drm_wse_uring_job j;
	uint32_t handle;
	size_t i;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, guest_bo(self->fd, len, &handle, (void **)&bo_map));
	for (i = 0; i < len; i++)
		bo_map[i] = byte_at(i, 9);
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, bo_map + 1, (uint32_t)(len - 2), 4096);
	EXPECT_EQ(0, run_one(&self->ring, self->fd, &j, -1));
	memset(r, 0, len);
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, r, (uint32_t)(len - 2), 4096);
	EXPECT_EQ((int)(len - 2), run_one(&self->ring, self->fd, &j, -1));
	EXPECT_EQ(0, memcmp(bo_map + 1, r, len - 2));
	/* Reading into a buffer object's mapping. */
	memset(bo_map, 0, len);
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, bo_map + 2, (uint32_t)(len - 2), 4096);
	EXPECT_EQ((int)(len - 2), run_one(&self->ring, self->fd, &j, -1));
	EXPECT_EQ(0, memcmp(bo_map + 2, r, len - 2));

	holed = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, holed);
	memset(holed, 1, len);
	ASSERT_EQ(0, munmap(holed + pg, pg));
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, holed + 10, (uint32_t)(len - 20), 0);
	EXPECT_EQ(-EFAULT, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, holed + 10, (uint32_t)(len - 20), 0);
	EXPECT_EQ(-EFAULT, run_one(&self->ring, self->fd, &j, -1));

	ro = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, ro, (uint32_t)len, 0);
	EXPECT_EQ(-EFAULT, run_one(&self->ring, self->fd, &j, -1));
	/* Read-only memory is fine to send from (zeros). */
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, ro, (uint32_t)len, 0);
	EXPECT_EQ(0, run_one(&self->ring, self->fd, &j, -1));

	munmap(ro, len);
	munmap(holed, pg);
	munmap(holed + 2 * pg, pg);
	munmap(bo_map, len);
	free(r);
}

/* Commands submitted in one batch reach their queue in submission order:
 * overlapping writes, each covering the next seven's start, leave every
 * block holding the last writer's bytes. Workers issuing them in parallel
 * (as before the inline issue) leave an earlier writer's bytes somewhere.
 */
TEST_F(uring, batch_keeps_submission_order)
{
	enum { N = 48, BLK = 4096, SPAN = 8 * BLK, ROUNDS = 6 };
	const size_t region = (size_t)(N - 1) * BLK + SPAN;
	uint8_t *w = malloc((size_t)N * SPAN), *r = malloc(region);
	struct io_uring_cqe *cqe;
	struct drm_wse_uring_job j;
	int i, k, round, bad, misplaced = 0;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, r);
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < N; i++) {
			memset(w + (size_t)i * SPAN, (uint8_t)(i * 7 + round * 3 + 1), SPAN);
			j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, w + (size_t)i * SPAN, SPAN,
				   (uint64_t)i * BLK);
			guest_uring_prep(io_uring_get_sqe(&self->ring), self->fd, &j, i, -1);
		}
		ASSERT_EQ(N, io_uring_submit(&self->ring));
		for (i = 0, bad = 0; i < N; i++) {
			ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
			bad += cqe->res != 0;
			io_uring_cqe_seen(&self->ring, cqe);
		}
		ASSERT_EQ(0, bad);
		memset(r, 0, region);
		j = job_of(self->queue, DRM_WSE_OP_MEM_READ, r, region, 0);
		ASSERT_EQ((int)region, run_one(&self->ring, self->fd, &j, -1));
		/* Block k was written last by command min(k, N - 1). */
		for (k = 0; k < (int)(region / BLK); k++) {
			int last = k < N - 1 ? k : N - 1;
			uint8_t want = (uint8_t)(last * 7 + round * 3 + 1);

			if (r[(size_t)k * BLK] != want || r[(size_t)k * BLK + BLK - 1] != want) {
				if (!misplaced)
					TH_LOG("round %d: block %d holds %u, command %d wrote %u",
					       round, k, r[(size_t)k * BLK], last, want);
				misplaced++;
			}
		}
	}
	EXPECT_EQ(0, misplaced);
	free(w);
	free(r);
}

/* SUBMIT after io_uring_submit() on the same queue goes after the whole
 * batch: its write, over the middle of the batch's, is what stays.
 */
TEST_F(uring, submit_after_batch_stays_behind_it)
{
	enum { N = 48, BLK = 4096, SPAN = 8 * BLK, AT = 20 };
	const size_t region = (size_t)(N - 1) * BLK + SPAN;
	uint8_t *w = malloc((size_t)N * SPAN), *r = malloc(region);
	struct drm_wse_submit s = {
		.queue_id = self->queue, .op = DRM_WSE_OP_MEM_WRITE, .length = SPAN,
		.args = { (uint64_t)AT * BLK },
	};
	struct drm_wse_wait wt = { .queue_id = self->queue };
	struct io_uring_cqe *cqe;
	struct drm_wse_uring_job j;
	struct timespec ts;
	int i, k, bad = 0;
	void *map;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, guest_bo(self->fd, SPAN, &s.handle, &map));
	memset(map, 0xee, SPAN);
	for (i = 0; i < N; i++) {
		memset(w + (size_t)i * SPAN, (uint8_t)(i * 5 + 1), SPAN);
		j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, w + (size_t)i * SPAN, SPAN,
			   (uint64_t)i * BLK);
		guest_uring_prep(io_uring_get_sqe(&self->ring), self->fd, &j, i, -1);
	}
	ASSERT_EQ(N, io_uring_submit(&self->ring));
	ASSERT_EQ(0, guest_ioctl(self->fd, DRM_IOCTL_WSE_SUBMIT, &s));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
		bad += cqe->res != 0;
		io_uring_cqe_seen(&self->ring, cqe);
	}
	EXPECT_EQ(0, bad);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	wt.job_id = s.job_id;
	wt.timeout_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + 10000000000LL;
	ASSERT_EQ(0, guest_ioctl(self->fd, DRM_IOCTL_WSE_WAIT, &wt));
	ASSERT_EQ(0, wt.status);

	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, r, region, 0);
	ASSERT_EQ((int)region, run_one(&self->ring, self->fd, &j, -1));
	for (k = 0, bad = 0; k < (int)(region / BLK); k++) {
		int last = k < N - 1 ? k : N - 1;
		uint8_t want = k >= AT && k < AT + SPAN / BLK ? 0xee : (uint8_t)(last * 5 + 1);

		if (r[(size_t)k * BLK] != want || r[(size_t)k * BLK + BLK - 1] != want) {
			if (!bad)
				TH_LOG("block %d holds %u, want %u", k, r[(size_t)k * BLK], want);
			bad++;
		}
	}
	EXPECT_EQ(0, bad);
	munmap(map, SPAN);
	free(w);
	free(r);
}

/* io_uring completes commands by task work, which looks like a pending
 * signal to the task; SUBMITs from that task while the batch's answers
 * come back (and the socket is full) must neither fail nor kill the link.
 */
TEST_F(uring, submits_while_completions_arrive)
{
	enum { N = 32, SPAN = 512 << 10, M = 8, BOSZ = 1 << 20, ROUNDS = 4 };
	uint8_t *w = malloc((size_t)N * SPAN);
	struct drm_wse_submit s = { .queue_id = self->queue, .op = DRM_WSE_OP_MEM_WRITE,
				    .length = BOSZ };
	struct drm_wse_wait wt = { .queue_id = self->queue };
	struct wse_dev_status dev;
	struct io_uring_cqe *cqe;
	struct drm_wse_uring_job j;
	uint64_t ids[M];
	struct timespec ts;
	int i, round, bad = 0;
	void *map;

	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, guest_bo(self->fd, BOSZ, &s.handle, &map));
	memset(map, 0x5a, BOSZ);
	memset(w, 0xa5, (size_t)N * SPAN);
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < N; i++) {
			j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, w + (size_t)i * SPAN, SPAN,
				   (uint64_t)i * SPAN);
			guest_uring_prep(io_uring_get_sqe(&self->ring), self->fd, &j, i, -1);
		}
		ASSERT_EQ(N, io_uring_submit(&self->ring));
		for (i = 0; i < M; i++) {
			s.args[0] = (uint64_t)(N * SPAN) + (uint64_t)i * BOSZ;
			ASSERT_EQ(0, guest_ioctl(self->fd, DRM_IOCTL_WSE_SUBMIT, &s))
				TH_LOG("round %d submit %d", round, i);
			ids[i] = s.job_id;
		}
		for (i = 0; i < N; i++) {
			ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
			bad += cqe->res != 0;
			io_uring_cqe_seen(&self->ring, cqe);
		}
		EXPECT_EQ(0, bad) TH_LOG("round %d", round);
		for (i = 0; i < M; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			wt.job_id = ids[i];
			wt.timeout_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec +
					30000000000LL;
			ASSERT_EQ(0, guest_ioctl(self->fd, DRM_IOCTL_WSE_WAIT, &wt));
			EXPECT_EQ(0, wt.status) TH_LOG("round %d submit %d", round, i);
		}
	}
	ASSERT_EQ(0, wse_ctl_get(self->ctl, self->dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
	munmap(map, BOSZ);
	free(w);
}

TEST_F(uring, bad_commands)
{
	struct io_uring_params p = { 0 };
	struct io_uring small;
	struct drm_wse_uring_job j;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char buf[64];

	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, buf, sizeof(buf), 0);
	j.queue_id = 999;
	EXPECT_EQ(-ENOENT, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, 77, buf, sizeof(buf), 0);
	EXPECT_EQ(-EINVAL, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, buf, sizeof(buf), 0);
	j.reserved = 1;
	EXPECT_EQ(-EINVAL, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, NULL, sizeof(buf), 0);
	EXPECT_EQ(-EINVAL, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, (void *)16, sizeof(buf), 0);
	EXPECT_EQ(-EFAULT, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, DRM_WSE_OP_MEM_READ, (void *)16, sizeof(buf), 0);
	EXPECT_EQ(-EFAULT, run_one(&self->ring, self->fd, &j, -1));
	j = job_of(self->queue, DRM_WSE_OP_MEM_WRITE, buf, sizeof(buf), 0);
	j.args[3] = 1;
	EXPECT_EQ(-EINVAL, run_one(&self->ring, self->fd, &j, -1));

	/* An unknown command number. */
	sqe = io_uring_get_sqe(&self->ring);
	guest_uring_prep(sqe, self->fd, &j, 1, -1);
	sqe->cmd_op = 0x1234;
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EOPNOTSUPP, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);

	/* A ring with 64-byte SQEs cannot carry the payload. */
	ASSERT_EQ(0, io_uring_queue_init_params(4, &small, &p));
	sqe = io_uring_get_sqe(&small);
	ASSERT_NE(NULL, sqe);
	memset(sqe, 0, 64);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = self->fd;
	sqe->cmd_op = DRM_WSE_URING_CMD_JOB;
	ASSERT_EQ(1, io_uring_submit(&small));
	ASSERT_EQ(0, io_uring_wait_cqe(&small, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&small, cqe);
	io_uring_queue_exit(&small);
}

/* A ring torn down while its commands wait on a slow firmware: they are
 * cancelled, nothing hangs, and the device keeps working.
 */
TEST_F(uring, ring_exit_with_commands_in_flight)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct guest_peer slow = { 0 };
	struct wse_dev_status dev;
	struct drm_wse_uring_job j;
	struct io_uring ring;
	char buf[4096];
	uint32_t q;
	int fd, i;
	pid_t pid;
	int status;

	ASSERT_EQ(0, guest_peer_start(&slow, "wsefwd", "--fault-delay-ms", "500", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, slow.addr, 0, &dev));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		fd = guest_open_accel(dev.accel_minor);
		if (fd < 0 || queue_create(fd, 1, 16, &q) ||
		    io_uring_queue_init_params(16, &ring, &p))
			_exit(1);
		for (i = 0; i < 8; i++) {
			j = job_of(q, DRM_WSE_OP_MEM_READ, buf, sizeof(buf), 0);
			guest_uring_prep(io_uring_get_sqe(&ring), fd, &j, i, -1);
		}
		if (io_uring_submit(&ring) != 8)
			_exit(2);
		_exit(0);	/* the ring, file and queue go with the process */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* The same device still answers (after the late replies). */
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, queue_create(fd, 1, 4, &q));
	j = job_of(q, DRM_WSE_OP_MEM_WRITE, buf, sizeof(buf), 0);
	EXPECT_EQ(0, run_one(&self->ring, fd, &j, -1));
	close(fd);
	wse_ctl_detach(self->ctl, dev.index);
	guest_peer_stop(&slow, SIGKILL);
}

TEST_HARNESS_MAIN
