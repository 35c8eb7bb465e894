// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queues and jobs: QUEUE_CREATE/DESTROY, SUBMIT and WAIT with their
 * negative cases, data through jobs in both directions, ordering, a full
 * queue, job timeouts, the firmware dying with jobs in flight, a file
 * closed with jobs in flight, per-file isolation and many submitters.
 * Runs in the guest with wsefwd started inside it on unix sockets.
 */
#include <pthread.h>
#include <sys/time.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse_guest.h"

static int queue_create(int fd, uint32_t hw, uint32_t depth, uint32_t timeout_ms, uint32_t *id)
{
	struct drm_wse_queue_create q = { .hw_queue = hw, .depth = depth, .timeout_ms = timeout_ms };
	int ret = guest_ioctl(fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q);

	if (!ret)
		*id = q.queue_id;
	return ret;
}

static int queue_destroy(int fd, uint32_t id)
{
	struct drm_wse_queue_destroy q = { .queue_id = id };

	return guest_ioctl(fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &q);
}

static int submit(int fd, uint32_t queue, uint32_t op, uint32_t handle, uint64_t off,
		  uint64_t len, uint64_t a0, uint64_t *job)
{
	struct drm_wse_submit s = {
		.queue_id = queue, .op = op, .handle = handle, .bo_offset = off,
		.length = len, .args = { a0 },
	};
	int ret = guest_ioctl(fd, DRM_IOCTL_WSE_SUBMIT, &s);

	if (!ret && job)
		*job = s.job_id;
	return ret;
}

/* Waits up to @ms for @job; returns the ioctl's result, the job's in @status. */
static int wait_job(int fd, uint32_t queue, uint64_t job, int ms, int *status, uint32_t *len)
{
	struct timespec ts;
	struct drm_wse_wait w = { .queue_id = queue, .job_id = job };
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ms)
		w.timeout_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + (int64_t)ms * 1000000;
	ret = guest_ioctl(fd, DRM_IOCTL_WSE_WAIT, &w);
	if (status)
		*status = w.status;
	if (len)
		*len = w.result_len;
	return ret;
}

FIXTURE(jobs) {
	struct guest_fw_device d;
};

FIXTURE_SETUP(jobs)
{
	ASSERT_EQ(0, guest_fw_device_init(&self->d));
}

FIXTURE_TEARDOWN(jobs)
{
	guest_fw_device_fini(&self->d);
}

/* Starts a wsefwd with @knob @value (or none) and opens its device. */
static void bring_up(struct __test_metadata *_metadata, FIXTURE_DATA(jobs) *self,
		     const char *knob, const char *value)
{
	ASSERT_EQ(0, guest_fw_device_up(&self->d, knob, value));
}

TEST_F(jobs, queue_create_and_destroy)
{
	uint32_t a, b;
	struct drm_wse_queue_destroy d = { .queue_id = 1, .pad = 1 };

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 8, 0, &a));
	ASSERT_EQ(0, queue_create(self->d.fd, self->d.dev.num_queues - 1, 256, 600000, &b));
	EXPECT_NE(a, b);
	EXPECT_EQ(-EINVAL, queue_create(self->d.fd, self->d.dev.num_queues, 8, 0, &b));
	EXPECT_EQ(-EINVAL, queue_create(self->d.fd, UINT32_MAX, 8, 0, &b));
	EXPECT_EQ(-EINVAL, queue_create(self->d.fd, 0, 0, 0, &b));
	EXPECT_EQ(-EINVAL, queue_create(self->d.fd, 0, 257, 0, &b));
	EXPECT_EQ(-EINVAL, queue_create(self->d.fd, 0, 8, 600001, &b));
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &d));
	EXPECT_EQ(0, queue_destroy(self->d.fd, a));
	EXPECT_EQ(-ENOENT, queue_destroy(self->d.fd, a));
	EXPECT_EQ(-ENOENT, queue_destroy(self->d.fd, 9999));
}

TEST_F(jobs, submit_refuses_bad_arguments)
{
	uint32_t q, h, other_h;
	uint64_t job, max = 0;
	struct drm_wse_get_info gi = { .param = DRM_WSE_PARAM_MAX_JOB_BYTES,
				       .size = sizeof(max), .ptr = (uintptr_t)&max };
	struct drm_wse_submit s;
	int other;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_GET_INFO, &gi));
	ASSERT_LT(4096, max);
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 2 * max, &h, NULL));

	EXPECT_EQ(-ENOENT, submit(self->d.fd, q + 7, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 0, &job));
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, 0, h, 0, 64, 0, &job));
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, 99, h, 0, 64, 0, &job));
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, 0, 0, 64, 0, &job));
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 0, 0, &job));
	EXPECT_EQ(-E2BIG, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, max + 1, 0, &job));
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 2 * max - 8, 64, 0, &job));
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, UINT64_MAX, 64, 0, &job));
	EXPECT_EQ(-ENOENT, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h + 50, 0, 64, 0, &job));
	/* An operation without data takes no buffer object. */
	EXPECT_EQ(-EINVAL, submit(self->d.fd, q, DRM_WSE_OP_PROGRAM_UNLOAD, h, 0, 64, 1, &job));

	memset(&s, 0, sizeof(s));
	s.queue_id = q;
	s.op = DRM_WSE_OP_MEM_WRITE;
	s.handle = h;
	s.length = 64;
	s.args[1] = 1;		/* MEM_WRITE uses one argument */
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_SUBMIT, &s));
	s.args[1] = 0;
	s.timeout_ms = 600001;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_SUBMIT, &s));
	s.timeout_ms = 0;
	s.op = DRM_WSE_OP_STREAM_WRITE;
	s.args[0] = 1ULL << 32;	/* a program slot the wire cannot hold */
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_SUBMIT, &s));

	/* Another file's queue and buffer objects are not this file's. */
	other = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, guest_bo(other, 4096, &other_h, NULL));
	EXPECT_EQ(-ENOENT, submit(other, q, DRM_WSE_OP_MEM_WRITE, other_h, 0, 64, 0, &job));
	EXPECT_EQ(-ENOENT, wait_job(other, q, 1, 0, NULL, NULL));
	close(other);
}

static uint8_t byte_at(uint64_t i, unsigned int seed)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ seed);
}

/* Data written by jobs comes back through jobs, in order on one queue. */
TEST_F(jobs, write_then_read_in_order)
{
	static const uint64_t sizes[] = { 1, 7, 4096, 100003, 1 << 20 };
	uint8_t *w, *r;
	uint32_t q, hw, hr, len;
	uint64_t jw, jr, i;
	unsigned int k;
	int status;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, queue_create(self->d.fd, 1, 16, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 2 << 20, &hw, (void **)&w));
	ASSERT_EQ(0, guest_bo(self->d.fd, 2 << 20, &hr, (void **)&r));
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t off = k * 5 + 3, addr = 777777ULL * k + 1;

		for (i = 0; i < sizes[k]; i++)
			w[off + i] = byte_at(i, k);
		memset(r, 0, 2 << 20);
		/* The read is submitted before the write is waited for. */
		ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, hw, off, sizes[k], addr, &jw));
		ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_READ, hr, off + 1, sizes[k], addr,
				    &jr));
		EXPECT_EQ(jw + 1, jr);
		ASSERT_EQ(0, wait_job(self->d.fd, q, jr, 10000, &status, &len));
		EXPECT_EQ(0, status);
		EXPECT_EQ(sizes[k], len);
		ASSERT_EQ(0, wait_job(self->d.fd, q, jw, 10000, &status, &len));
		EXPECT_EQ(0, status);
		EXPECT_EQ(0, len);
		ASSERT_EQ(0, memcmp(w + off, r + off + 1, sizes[k])) TH_LOG("size %llu",
								       (unsigned long long)sizes[k]);
		/* Collected: the ids are gone. */
		EXPECT_EQ(-ENOENT, wait_job(self->d.fd, q, jw, 0, NULL, NULL));
	}
}

TEST_F(jobs, wait_refuses_bad_arguments)
{
	struct drm_wse_wait w;
	uint32_t q;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 4, 0, &q));
	memset(&w, 0, sizeof(w));
	w.queue_id = q;
	w.job_id = 1;
	EXPECT_EQ(-ENOENT, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_WAIT, &w));
	w.flags = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_WAIT, &w));
	w.flags = 0;
	w.timeout_ns = -1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_WAIT, &w));
	w.timeout_ns = 0;
	w.queue_id = 77;
	EXPECT_EQ(-ENOENT, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_WAIT, &w));
}

/* A slow firmware: WAIT's absolute timeout passes, the queue fills up,
 * collecting frees a slot.
 */
TEST_F(jobs, slow_firmware_full_queue_and_wait_timeout)
{
	uint64_t j1, j2, j3;
	uint32_t q, h;
	int status;

	bring_up(_metadata, self, "--fault-delay-ms", "400");
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 2, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 0, &j1));
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 64, &j2));
	EXPECT_EQ(-EBUSY, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 128, &j3));
	EXPECT_EQ(-ETIME, wait_job(self->d.fd, q, j1, 0, &status, NULL));
	EXPECT_EQ(-ETIME, wait_job(self->d.fd, q, j1, 10, &status, NULL));
	ASSERT_EQ(0, wait_job(self->d.fd, q, j1, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 128, &j3));
	ASSERT_EQ(0, wait_job(self->d.fd, q, j2, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, wait_job(self->d.fd, q, j3, 10000, &status, NULL));
	EXPECT_EQ(0, status);
}

/* A job nobody answers times out with its own deadline, long before the
 * keepalive would give up on the link; the link stays up.
 */
TEST_F(jobs, job_timeout)
{
	struct drm_wse_submit s;
	struct wse_dev_status dev;
	uint32_t q, h;
	int status;
	int64_t start;

	bring_up(_metadata, self, "--fault-silent-after", "1");
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	memset(&s, 0, sizeof(s));
	s.queue_id = q;
	s.op = DRM_WSE_OP_MEM_WRITE;
	s.handle = h;
	s.length = 64;
	s.timeout_ms = 300;
	start = guest_now_ms();
	ASSERT_EQ(0, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_SUBMIT, &s));
	ASSERT_EQ(0, wait_job(self->d.fd, q, s.job_id, 10000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_GT(2000, guest_now_ms() - start);
	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
	EXPECT_LE(1, dev.stats.timeouts);
}

/* The firmware dies with jobs in flight: every one finishes with
 * ENOTCONN at once, and later submissions fail.
 */
TEST_F(jobs, firmware_dies_with_jobs_in_flight)
{
	uint64_t jobs[6];
	uint32_t q, h;
	int status, i;

	bring_up(_metadata, self, "--fault-delay-ms", "2000");
	ASSERT_EQ(0, queue_create(self->d.fd, 2, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 1 << 20, &h, NULL));
	/* Small jobs: the submissions must not wait for the slow firmware. */
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, submit(self->d.fd, q, i & 1 ? DRM_WSE_OP_MEM_READ : DRM_WSE_OP_MEM_WRITE,
				    h, 0, 4096, 0, &jobs[i]));
	guest_peer_stop(&self->d.fw, SIGKILL);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, wait_job(self->d.fd, q, jobs[i], 3000, &status, NULL)) TH_LOG("job %d", i);
		EXPECT_EQ(-ENOTCONN, status);
	}
	EXPECT_EQ(-ENOTCONN, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 0, &jobs[0]));
}

/* Destroying a queue aborts what it holds. */
TEST_F(jobs, destroy_queue_with_jobs_in_flight)
{
	uint64_t job;
	uint32_t q, h;
	int i;

	bring_up(_metadata, self, "--fault-delay-ms", "500");
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 64 * i, &job));
	EXPECT_EQ(0, queue_destroy(self->d.fd, q));
	EXPECT_EQ(-ENOENT, wait_job(self->d.fd, q, job, 0, NULL, NULL));
	/* The device still works for a new queue once the late answers are in. */
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 8, 0, &q));
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 0, &job));
	ASSERT_EQ(0, wait_job(self->d.fd, q, job, 20000, &i, NULL));
	EXPECT_EQ(0, i);
}

/* A process exits with jobs in flight and buffer objects mapped: nothing
 * leaks or hangs, late answers are counted as stale, the device goes on.
 */
TEST_F(jobs, process_exits_with_jobs_in_flight)
{
	struct wse_dev_status dev;
	uint64_t job;
	uint32_t q, h;
	pid_t pid;
	int status, i;

	bring_up(_metadata, self, "--fault-delay-ms", "300");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = guest_open_accel(self->d.dev.accel_minor);
		void *p;

		if (fd < 0 || queue_create(fd, 0, 16, 0, &q) || guest_bo(fd, 1 << 20, &h, &p))
			_exit(1);
		for (i = 0; i < 16; i++)
			if (submit(fd, q, DRM_WSE_OP_MEM_READ, h, 0, 4096, 4096 * i, &job))
				_exit(2);
		_exit(0);	/* no WAIT, no close: the kernel cleans up */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/*
	 * The write may queue behind what the firmware still holds of the
	 * 16 delayed reads: under TCG at load that passed the 10 s default
	 * job timeout once, so the job gets the 30 s the wait allows.
	 */
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 4, 30000, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 0, &job));
	ASSERT_EQ(0, wait_job(self->d.fd, q, job, 30000, &status, NULL));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
	EXPECT_LE(1, dev.stats.stale_responses);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Signals arriving while large requests are being sent (the socket full)
 * cut no frame short: every job succeeds, the data arrive intact and the
 * link stays up. A synchronous MEM_XFER may stop early with EINTR.
 */
TEST_F(jobs, signals_during_large_submits_keep_the_link)
{
	enum { SZ = 2 << 20, N = 12 };
	/* SA_RESTART keeps the harness's own writes whole; the kernel sees a
	 * pending signal all the same.
	 */
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { .it_interval = { 0, 300 }, .it_value = { 0, 300 } };
	struct itimerval off = { 0 };
	struct wse_dev_status dev;
	uint64_t jobs[N], jr;
	uint32_t q, hw, hr;
	uint8_t *w, *r;
	int i, k, ret, status;
	size_t b;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 64, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, (uint64_t)N * SZ, &hw, (void **)&w));
	ASSERT_EQ(0, guest_bo(self->d.fd, SZ, &hr, (void **)&r));
	for (b = 0; b < (size_t)N * SZ; b++)
		w[b] = byte_at(b, 77);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	for (k = 0; k < 3; k++) {
		for (i = 0; i < N; i++) {
			ret = submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, hw, (uint64_t)i * SZ, SZ,
				     (uint64_t)i * SZ, &jobs[i]);
			ASSERT_EQ(0, ret) TH_LOG("round %d job %d", k, i);
		}
		/* MEM_XFER may give up part way with EINTR, as documented. */
		ret = guest_xfer(self->d.fd, hw, DRM_WSE_XFER_TO_DEVICE, 0, 0, SZ);
		EXPECT_TRUE(ret == 0 || ret == -EINTR) TH_LOG("MEM_XFER: %d", ret);
		for (i = 0; i < N; i++) {
			ASSERT_EQ(0, wait_job(self->d.fd, q, jobs[i], 30000, &status, NULL))
				TH_LOG("round %d job %d", k, i);
			EXPECT_EQ(0, status) TH_LOG("round %d job %d", k, i);
		}
	}
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &off, NULL));
	signal(SIGALRM, SIG_DFL);

	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_READ, hr, 0, SZ, (uint64_t)i * SZ,
				    &jr));
		ASSERT_EQ(0, wait_job(self->d.fd, q, jr, 30000, &status, NULL));
		ASSERT_EQ(0, status);
		ASSERT_EQ(0, memcmp(w + (size_t)i * SZ, r, SZ)) TH_LOG("block %d", i);
	}
}

/* A firmware that stops reading (SIGSTOP) leaves a request half sent. A
 * caller waiting on it (MEM_XFER) and then SIGKILLed must not be held
 * until the send times out (10 s): it goes at once, the frame goes on
 * without it, and the link every other opener uses stays up.
 */
TEST_F(jobs, killed_caller_is_not_held_by_a_stalled_peer)
{
	struct wse_dev_status dev;
	int64_t t0, waited;
	uint64_t job;
	uint32_t h, q;
	int status;
	pid_t pid;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_bo(self->d.fd, 4 << 20, &h, NULL));
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGSTOP));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(-guest_xfer(self->d.fd, h, DRM_WSE_XFER_TO_DEVICE, 0, 0, 4 << 20));
	usleep(500000);
	t0 = guest_now_ms();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	waited = guest_now_ms() - t0;
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_LT(waited, 5000) TH_LOG("the killed caller took %lld ms to go",
				       (long long)waited);
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGCONT));
	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, false, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state) TH_LOG("link down: %s", dev.reason);
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 4, 0, &q));
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, 0, &job));
	ASSERT_EQ(0, wait_job(self->d.fd, q, job, 20000, &status, NULL));
	EXPECT_EQ(0, status);
}

/* Keepalives go on while a sender waits for a peer that stopped reading:
 * the link is declared dead after three missed intervals, not when the
 * blocked send gives up (10 s).
 */
TEST_F(jobs, keepalive_sees_a_stopped_peer_behind_a_blocked_send)
{
	struct wse_dev_status dev;
	int64_t t0, waited;
	uint64_t job;
	uint32_t q, h;
	int status;

	ASSERT_EQ(0, guest_peer_start(&self->d.fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_attach(self->d.ctl, self->d.fw.addr, 1000, &self->d.dev));
	self->d.attached = true;
	self->d.fd = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, self->d.fd);
	ASSERT_EQ(0, queue_create(self->d.fd, 0, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4 << 20, &h, NULL));
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGSTOP));
	t0 = guest_now_ms();
	ASSERT_EQ(0, submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 2 << 20, 0, &job));
	ASSERT_EQ(0, guest_wait_state(self->d.ctl, self->d.dev.index, WSE_LINK_STATE_DEAD, 9000,
				      &dev)) TH_LOG("still up after %lld ms",
						    (long long)(guest_now_ms() - t0));
	waited = guest_now_ms() - t0;
	EXPECT_NE(NULL, strstr(dev.reason, "keepalive")) TH_LOG("reason: %s", dev.reason);
	ASSERT_EQ(0, wait_job(self->d.fd, q, job, 5000, &status, NULL));
	EXPECT_EQ(-ENOTCONN, status);
	TH_LOG("link declared dead %lld ms after the peer stopped", (long long)waited);
	kill(self->d.fw.pid, SIGCONT);
}

/* Several processes, each with its own file and queues, at once. */
TEST_F_TIMEOUT(jobs, many_submitters, 120)
{
	pid_t pids[4];
	int i, status, failures = 0;

	bring_up(_metadata, self, NULL, NULL);
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			uint8_t *w, *r;
			uint32_t q, hw, hr;
			uint64_t jw, jr, k;
			int fd = guest_open_accel(self->d.dev.accel_minor), round, st;

			if (fd < 0 || queue_create(fd, i % self->d.dev.num_queues, 8, 0, &q) ||
			    guest_bo(fd, 65536, &hw, (void **)&w) ||
			    guest_bo(fd, 65536, &hr, (void **)&r))
				_exit(10);
			for (round = 0; round < 40; round++) {
				uint64_t addr = (uint64_t)i << 24 | (uint64_t)round << 16;

				for (k = 0; k < 65536; k++)
					w[k] = byte_at(k, round * 4 + i);
				if (submit(fd, q, DRM_WSE_OP_MEM_WRITE, hw, 0, 65536, addr, &jw) ||
				    submit(fd, q, DRM_WSE_OP_MEM_READ, hr, 0, 65536, addr, &jr) ||
				    wait_job(fd, q, jw, 20000, &st, NULL) || st ||
				    wait_job(fd, q, jr, 20000, &st, NULL) || st)
					_exit(11);
				if (memcmp(w, r, 65536))
					_exit(12);
			}
			_exit(0);
		}
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("submitter %d: status %#x", i, status);
			failures++;
		}
	}
	EXPECT_EQ(0, failures);
}

TEST_HARNESS_MAIN
