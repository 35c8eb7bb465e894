// SPDX-License-Identifier: GPL-2.0-only
/*
 * The driver holds against its own users, a peer that misbehaves and
 * resource exhaustion (issue 16): a request one opener gets wrong fails
 * that request only, never the link every opener shares; what a user
 * submits cannot pile up in the kernel; a peer that stops reading holds
 * up neither detach nor the control plane. Runs in the guest with wsefwd
 * started inside it on unix sockets.
 */
#include <pthread.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "wse/link_io.h"
#include "wse/link_payloads.h"
#include "wse_guest.h"
#include "wse_guest_uring.h"

FIXTURE(harden) {
	struct guest_fw_device d;
};

FIXTURE_SETUP(harden)
{
	ASSERT_EQ(0, guest_fw_device_init(&self->d));
}

FIXTURE_TEARDOWN(harden)
{
	guest_fw_device_fini(&self->d);
}

/* Starts a wsefwd with up to two extra arguments (or NULLs) and opens
 * its device.
 */
static void bring_up(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self,
		     const char *a0, const char *a1)
{
	ASSERT_EQ(0, guest_fw_device_up(&self->d, a0, a1));
}

/* The link is up, and a job on it still goes through. */
static void expect_link_works(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self)
{
	struct wse_dev_status dev;
	uint32_t q, h;
	uint64_t job;
	int status;

	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, false, &dev));
	ASSERT_EQ(WSE_LINK_STATE_UP, dev.link_state) TH_LOG("link down: %s", dev.reason);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 1, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &job));
	ASSERT_EQ(0, guest_wait_job(self->d.fd, q, job, 10000, &status, NULL));
	EXPECT_EQ(0, status);
}

/*
 * The reproducer of issue 16: DEVICE_STATS with room for one byte. Its
 * answer cannot fit; the request is refused, and the link every opener
 * shares stays up.
 */
TEST_F(harden, device_stats_with_one_byte_leaves_the_link_up)
{
	uint32_t q, h;
	uint64_t job;
	int status, ret;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 3, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	ret = guest_submit(self->d.fd, q, DRM_WSE_OP_DEVICE_STATS, h, 0, 1, NULL, &job);
	if (!ret) {
		ASSERT_EQ(0, guest_wait_job(self->d.fd, q, job, 10000, &status, NULL));
		EXPECT_NE(0, status);
	} else {
		EXPECT_EQ(-EINVAL, ret);
	}
	expect_link_works(_metadata, self);
}

/* Arguments the wire cannot carry as given are refused at SUBMIT: unknown
 * PROGRAM_LOAD flags, and room for less than a fixed-size answer.
 */
TEST_F(harden, submit_refuses_flags_and_short_reply_room)
{
	uint64_t load_bad_flags[4] = { 1, 2, 4096, 0 };
	uint64_t load_last[4] = { 1, 1, 16, 0 };
	uint64_t run[4] = { 1, 1, 1, 1 };
	uint32_t q, h;
	uint64_t job;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	EXPECT_EQ(-EINVAL, guest_submit(self->d.fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096,
					 load_bad_flags, &job));
	/* The last piece's answer is the placement, 40 bytes. */
	EXPECT_EQ(-EINVAL, guest_submit(self->d.fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 16,
					 load_last, &job));
	EXPECT_EQ(-EINVAL, guest_submit(self->d.fd, q, DRM_WSE_OP_RUN, h, 0, 31, run, &job));
	EXPECT_EQ(-EINVAL, guest_submit(self->d.fd, q, DRM_WSE_OP_DEVICE_STATS, h, 0, 63, NULL,
					 &job));
	expect_link_works(_metadata, self);
}

/* MemAvailable from /proc/meminfo, in KiB, or -1. */
static long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* A job on plain memory, through io_uring. */
static void prep_uring_job(struct io_uring_sqe *sqe, int fd, uint32_t queue, uint32_t op,
			   void *buf, uint32_t len, uint32_t timeout_ms, uint64_t a0)
{
	struct drm_wse_uring_job j = {
		.queue_id = queue, .op = op, .addr = (uintptr_t)buf, .length = len,
		.timeout_ms = timeout_ms, .args = { a0 },
	};

	guest_uring_prep(sqe, fd, &j, 0, -1);
}

/*
 * A device whose firmware has stopped reading: a queue of @depth on
 * hardware queue @hw, a ring of @depth SQE128 entries, and @len bytes of
 * plain memory for its jobs, which it returns.
 */
static void *stalled_ring(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self,
			  uint32_t hw, unsigned int depth, uint32_t len, struct io_uring *ring,
			  uint32_t *q)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	void *buf;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, hw, depth, 0, q));
	ASSERT_EQ(0, io_uring_queue_init_params(depth, ring, &p));
	buf = calloc(1, len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGSTOP));
	return buf;
}

/*
 * A job that times out before its frame could be sent gives its frame
 * back: resubmitting on every timeout, with a peer that reads nothing,
 * piles up no kernel memory. (The queue slot came back at once, the frame
 * and its 1 MiB stayed queued.)
 */
TEST_F(harden, timed_out_jobs_do_not_pile_up_frames)
{
	const uint32_t len = 1 << 20;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	long before, after;
	int i, timeouts = 0;
	uint32_t q;
	void *buf;

	buf = stalled_ring(_metadata, self, 1, 8, len, &ring, &q);
	before = mem_available_kb();
	for (i = 0; i < 300; i++) {
		prep_uring_job(io_uring_get_sqe(&ring), self->d.fd, q, DRM_WSE_OP_MEM_WRITE, buf, len,
			       1, 0);
		ASSERT_EQ(1, io_uring_submit(&ring));
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		timeouts += cqe->res == -ETIMEDOUT;
		io_uring_cqe_seen(&ring, cqe);
	}
	after = mem_available_kb();
	EXPECT_LT(before - after, 64 * 1024) TH_LOG("%ld KiB gone after 300 timeouts",
						      before - after);
	EXPECT_LE(290, timeouts);
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGCONT));
	io_uring_queue_exit(&ring);
	free(buf);
	expect_link_works(_metadata, self);
}

/*
 * The kernel buffers of io_uring jobs a file holds are capped: room for
 * 80 answers of 4 MiB from a peer that reads nothing is refused with
 * ENOBUFS past the cap, not allocated.
 */
TEST_F(harden, kernel_buffers_per_file_are_capped)
{
	const uint32_t len = (4 << 20) - 4096;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	long before, after;
	int i, nobufs = 0;
	uint32_t q;
	void *buf;

	buf = stalled_ring(_metadata, self, 2, 128, len, &ring, &q);
	before = mem_available_kb();
	for (i = 0; i < 80; i++)
		prep_uring_job(io_uring_get_sqe(&ring), self->d.fd, q, DRM_WSE_OP_MEM_READ, buf, len,
			       0, 0);
	ASSERT_EQ(80, io_uring_submit(&ring));
	/* Refusals come back at once; the rest wait for the peer. */
	while (io_uring_peek_cqe(&ring, &cqe) == 0) {
		nobufs += cqe->res == -ENOBUFS;
		io_uring_cqe_seen(&ring, cqe);
	}
	after = mem_available_kb();
	EXPECT_LT(0, nobufs);
	EXPECT_LT(before - after, 300 * 1024) TH_LOG("%ld KiB held", before - after);
	/* The ring's exit cancels the rest; the firmware is killed stopped. */
	io_uring_queue_exit(&ring);
	free(buf);
}

/* A peer that stopped reading, with large frames queued for it. */
static void stall_with_frames_queued(struct __test_metadata *_metadata,
				     FIXTURE_DATA(harden) *self, int fd)
{
	uint32_t q, h;
	uint64_t job;
	int i;

	ASSERT_EQ(0, guest_queue_create(fd, 0, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(fd, 4 << 20, &h, NULL));
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGSTOP));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, guest_submit(fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, (4 << 20) - 4096,
					  NULL, &job));
	usleep(200000);		/* the transmit work is blocked in the socket */
}

/*
 * DETACH of a device whose peer stopped reading, with frames half sent,
 * returns at once: well within the keepalive timeout (3 x 5 s), not after
 * the socket's send timeout.
 */
TEST_F(harden, detach_is_not_held_by_a_peer_that_stopped_reading)
{
	int64_t t0, took;

	bring_up(_metadata, self, NULL, NULL);
	stall_with_frames_queued(_metadata, self, self->d.fd);
	t0 = guest_now_ms();
	ASSERT_EQ(0, wse_ctl_detach(self->d.ctl, self->d.dev.index));
	took = guest_now_ms() - t0;
	self->d.attached = false;
	EXPECT_GT(2000, took) TH_LOG("DETACH took %lld ms", (long long)took);
	kill(self->d.fw.pid, SIGCONT);
}

/*
 * The file is closed and the device detached while the transmit work still
 * holds frames of its buffer objects: their last put comes after the DRM
 * device is unregistered, which must still be there (KFENCE and the
 * kernel log catch a use after free).
 */
TEST_F(harden, detach_after_close_with_frames_in_flight)
{
	int round;

	for (round = 0; round < 4; round++) {
		bring_up(_metadata, self, NULL, NULL);
		stall_with_frames_queued(_metadata, self, self->d.fd);
		close(self->d.fd);
		self->d.fd = -1;
		ASSERT_EQ(0, wse_ctl_detach(self->d.ctl, self->d.dev.index));
		self->d.attached = false;
		guest_peer_stop(&self->d.fw, SIGKILL);
	}
}

/* Attaches one end of a socket pair; the other end never answers HELLO. */
static void *attach_silent_pair(void *arg)
{
	struct wse_dev_status dev;
	struct wse_ctl *ctl;
	int *fd = arg;

	if (wse_ctl_open(&ctl) == 0) {
		wse_ctl_attach_fd(ctl, *fd, 0, &dev);
		wse_ctl_close(ctl);
	}
	return NULL;
}

/*
 * An ATTACH waiting 5 s for a silent peer's HELLO holds up no other
 * command: LIST answers meanwhile.
 */
TEST_F(harden, control_plane_is_not_held_by_a_slow_attach)
{
	struct wse_dev_status *list;
	int64_t t0, took;
	pthread_t t;
	size_t n;
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pthread_create(&t, NULL, attach_silent_pair, &sv[0]));
	usleep(300000);
	t0 = guest_now_ms();
	ASSERT_EQ(0, wse_ctl_list(self->d.ctl, &list, &n));
	took = guest_now_ms() - t0;
	free(list);
	EXPECT_GT(1000, took) TH_LOG("LIST took %lld ms behind a stalled ATTACH",
				     (long long)took);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* Reads the HELLO, then sends the start of an answer a byte every 400 ms:
 * 30 bytes, less than a header, in 12 s.
 */
static void *trickle_hello_answer(void *arg)
{
	int fd = *(int *)arg;
	uint8_t buf[512];
	int i;

	if (recv(fd, buf, sizeof(buf), 0) <= 0)
		return NULL;
	for (i = 0; i < 30; i++) {
		usleep(400000);
		if (send(fd, buf, 1, MSG_NOSIGNAL) != 1)
			break;
	}
	return NULL;
}

/*
 * ATTACH waits for the HELLO answer with one deadline (5 s), however the
 * answer trickles in: a byte every 400 ms does not stretch it, where
 * each byte used to start the 5 s again.
 */
TEST_F(harden, a_trickling_hello_answer_does_not_stretch_attach)
{
	struct wse_dev_status dev;
	int64_t t0, took;
	pthread_t t;
	int sv[2], ret;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pthread_create(&t, NULL, trickle_hello_answer, &sv[1]));
	t0 = guest_now_ms();
	ret = wse_ctl_attach_fd(self->d.ctl, sv[0], 0, &dev);
	took = guest_now_ms() - t0;
	EXPECT_NE(0, ret);
	EXPECT_GT(8000, took) TH_LOG("ATTACH took %lld ms", (long long)took);
	/* The writer's next send fails once no one holds the other end. */
	close(sv[0]);
	pthread_join(t, NULL);
	close(sv[1]);
}

/*
 * STATS from an unprivileged user never waits for the firmware: with a
 * firmware that stopped reading it answers at once, from the copy the
 * device keeps.
 */
TEST_F(harden, unprivileged_stats_do_not_wait_for_the_firmware)
{
	int status;
	pid_t pid;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGSTOP));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct wse_dev_status dev;
		struct wse_ctl *ctl;
		int64_t t0;
		int i, ret;

		if (setgid(65534) || setuid(65534) || wse_ctl_open(&ctl))
			_exit(10);
		for (i = 0; i < 3; i++) {
			t0 = guest_now_ms();
			ret = wse_ctl_get(ctl, self->d.dev.index, true, &dev);
			if (ret)
				_exit(11);
			if (guest_now_ms() - t0 > 500)
				_exit(12);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("12: STATS waited for the firmware");
	kill(self->d.fw.pid, SIGCONT);
}

/*
 * io_uring commands refused at start (the queue is full) race with the
 * ring going away, issued from io-wq workers (IOSQE_ASYNC): the cancel
 * must never find a job that is already freed.
 */
TEST_F(harden, ring_exit_races_refused_commands)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring ring;
	uint32_t q, h;
	uint64_t job;
	int round, i;
	char buf[64];

	bring_up(_metadata, self, "--fault-delay-ms", "3000");
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 1, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));
	ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &job));
	for (round = 0; round < 100; round++) {
		ASSERT_EQ(0, io_uring_queue_init_params(16, &ring, &p));
		for (i = 0; i < 8; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			prep_uring_job(sqe, self->d.fd, q, DRM_WSE_OP_MEM_WRITE, buf, sizeof(buf),
				       0, 0);
			sqe->flags |= IOSQE_ASYNC;
		}
		ASSERT_EQ(8, io_uring_submit(&ring));
		io_uring_queue_exit(&ring);
	}
}

struct wait_args {
	int fd, ret;
	uint32_t queue;
};

static void *wait_first_job(void *arg)
{
	struct wait_args *w = arg;

	/* The queue's first job is number 1. */
	w->ret = guest_wait_job(w->fd, w->queue, 1, 5000, NULL, NULL);
	return NULL;
}

/*
 * WAIT collects only jobs SUBMIT queued: an io_uring job's id is not one.
 * The WAIT comes from another thread, so the ring's completion, which runs
 * in the submitting thread, cannot get there first.
 */
TEST_F(harden, wait_does_not_collect_uring_jobs)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_cqe *cqe;
	struct wait_args w;
	struct io_uring ring;
	char buf[64] = { 0 };
	pthread_t t;
	uint32_t q;

	bring_up(_metadata, self, "--fault-delay-ms", "300");
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 4, 0, &q));
	ASSERT_EQ(0, io_uring_queue_init_params(4, &ring, &p));
	prep_uring_job(io_uring_get_sqe(&ring), self->d.fd, q, DRM_WSE_OP_MEM_WRITE, buf,
		       sizeof(buf), 0, 0);
	ASSERT_EQ(1, io_uring_submit(&ring));
	w.fd = self->d.fd;
	w.queue = q;
	ASSERT_EQ(0, pthread_create(&t, NULL, wait_first_job, &w));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	pthread_join(t, NULL);
	EXPECT_EQ(-ENOENT, w.ret);
	io_uring_queue_exit(&ring);
}

/*
 * Takes the host's HELLO on @fd and answers it as device @d; with @text,
 * the version text is that, NUL, and garbage after it. 0, or -1 if no
 * HELLO came.
 */
static int fake_hello(int fd, const struct wse_link_device_info *d, const char *text)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = 4096 };
	struct wse_link_hello_reply reply;
	struct wse_link_status st;
	struct iovec iov[2] = { { &st, sizeof(st) }, { &reply, sizeof(reply) } };
	struct wse_link_frame f;
	struct wse_link_err err;
	char buf[4096];

	if (wse_link_recv(fd, &rules, &f, buf, sizeof(buf), 5000, &err))
		return -1;
	wse_link_hello_reply_encode(&reply, d);
	if (text) {
		memset(reply.fw_version, 'X', sizeof(reply.fw_version));
		memcpy(reply.fw_version, text, strlen(text) + 1);
	}
	wse_link_status_encode(&st, WSE_LINK_OK);
	f.flags = WSE_LINK_F_RESPONSE;
	wse_link_send(fd, &f, iov, 2, 5000, &err);
	return 0;
}

/* Answers HELLO with a device whose version text is "v1", then garbage. */
static void *garbage_after_version(void *arg)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = 4096 };
	struct wse_link_device_info d = {
		.version = 1, .caps = WSE_LINK_CAP_MEM, .max_payload = 65536,
		.version_min = 1, .version_max = 1, .device_id = 9, .wafer_width = 8,
		.wafer_height = 8, .sram_per_pe = 1024, .sram_total = 64 * 1024,
		.clock_khz = 1000, .num_queues = 1,
	};
	struct wse_link_frame f;
	struct wse_link_err err;
	int fd = *(int *)arg;
	char buf[4096];

	if (fake_hello(fd, &d, "v1"))
		return NULL;
	/* Stay until the host goes. */
	wse_link_recv(fd, &rules, &f, buf, sizeof(buf), 5000, &err);
	return NULL;
}

/* What follows the NUL of the firmware's version text does not reach
 * userspace: the UAPI's fw_version is NUL-padded.
 */
TEST_F(harden, fw_version_is_nul_padded)
{
	struct drm_wse_device_info info;
	struct drm_wse_get_info gi = { .param = DRM_WSE_PARAM_DEVICE_INFO,
				       .size = sizeof(info), .ptr = (uintptr_t)&info };
	pthread_t t;
	size_t i;
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pthread_create(&t, NULL, garbage_after_version, &sv[1]));
	ASSERT_EQ(0, wse_ctl_attach_fd(self->d.ctl, sv[0], 0, &self->d.dev))
		TH_LOG("%s", wse_ctl_error(self->d.ctl) ?: "");
	self->d.attached = true;
	self->d.fd = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, self->d.fd);
	memset(&info, 0x55, sizeof(info));
	ASSERT_EQ(0, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_GET_INFO, &gi));
	EXPECT_STREQ("v1", info.fw_version);
	for (i = 2; i < sizeof(info.fw_version); i++)
		EXPECT_EQ(0, info.fw_version[i]) TH_LOG("byte %zu", i);
	close(self->d.fd);
	self->d.fd = -1;
	wse_ctl_detach(self->d.ctl, self->d.dev.index);
	self->d.attached = false;
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* A socket already attached cannot be attached again: two devices on one
 * stream would read each other's frames.
 */
TEST_F(harden, attach_of_an_attached_socket_is_refused)
{
	struct wse_dev_status again;
	char err[256];
	int fd;

	ASSERT_EQ(0, guest_peer_start(&self->d.fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, wse_ctl_connect(self->d.fw.addr, &fd, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, wse_ctl_attach_fd(self->d.ctl, fd, 0, &self->d.dev));
	self->d.attached = true;
	EXPECT_EQ(-EBUSY, wse_ctl_attach_fd(self->d.ctl, fd, 0, &again));
	close(fd);
	self->d.fd = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, self->d.fd);
	expect_link_works(_metadata, self);
}

/*
 * A job's timeout is armed before its request has a tag; one that fires
 * first still expires the job. Many 1 ms timeouts against a firmware that
 * answers nothing all end the jobs, none is lost.
 */
TEST_F(harden, job_timeouts_are_never_lost)
{
	uint64_t jobs[32];
	uint32_t q, h;
	int i, status;

	bring_up(_metadata, self, "--fault-silent-after", "1");
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 32, 1, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 1 << 20, &h, NULL));
	for (i = 0; i < 32; i++)
		ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 1 << 20, NULL,
					  &jobs[i]));
	for (i = 0; i < 32; i++) {
		ASSERT_EQ(0, guest_wait_job(self->d.fd, q, jobs[i], 3000, &status, NULL))
			TH_LOG("job %d never timed out", i);
		EXPECT_EQ(-ETIMEDOUT, status);
	}
}

/*
 * A buffer object rewritten between SUBMIT and the frame going out fails
 * its data digest at the firmware: the firmware refuses that request
 * (E_DATA_CRC, EBADMSG here) and the link goes on.
 */
TEST_F(harden, data_changed_before_send_fails_only_its_job)
{
	const uint64_t len = (4 << 20) - 4096;
	uint64_t jobs[3];
	int i, status, bad = 0;
	uint32_t q, h;
	uint8_t *map;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 3 * len, &h, (void **)&map));
	memset(map, 0x11, 3 * len);
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGSTOP));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, i * len, len, NULL,
					  &jobs[i]));
	usleep(100000);
	memset(map, 0x22, 3 * len);	/* digests were computed over 0x11 */
	ASSERT_EQ(0, kill(self->d.fw.pid, SIGCONT));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, guest_wait_job(self->d.fd, q, jobs[i], 20000, &status, NULL));
		EXPECT_TRUE(status == 0 || status == -EBADMSG) TH_LOG("job %d: %d", i, status);
		bad += status == -EBADMSG;
	}
	EXPECT_LT(0, bad);
	expect_link_works(_metadata, self);
}

/*
 * Every structure has room to grow: flags no kernel knows and padding
 * that is not 0 are refused, in the ioctls and in the parts of an
 * io_uring command it does not use (Documentation/process/botching-up-ioctls.rst).
 */
TEST_F(harden, unknown_flags_and_pads_are_refused)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct drm_wse_queue_create qc = { .hw_queue = 0, .depth = 4 };
	struct drm_wse_get_info gi = { .param = DRM_WSE_PARAM_CAPABILITIES };
	struct drm_wse_bo_info bi;
	struct drm_wse_submit sub;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	char buf[64] = { 0 };
	uint32_t q, h;
	int i;

	bring_up(_metadata, self, NULL, NULL);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, NULL));

	gi.flags = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_GET_INFO, &gi));
	gi.flags = 0;
	gi.pad = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_GET_INFO, &gi));

	memset(&bi, 0, sizeof(bi));
	bi.handle = h;
	bi.flags = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_BO_INFO, &bi));
	bi.flags = 0;
	bi.reserved = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_BO_INFO, &bi));

	qc.flags = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_QUEUE_CREATE, &qc));
	qc.flags = 0;
	qc.pad = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_QUEUE_CREATE, &qc));

	memset(&sub, 0, sizeof(sub));
	sub.queue_id = q;
	sub.op = DRM_WSE_OP_MEM_WRITE;
	sub.handle = h;
	sub.length = 64;
	sub.flags = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_SUBMIT, &sub));
	sub.flags = 0;
	sub.pad = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(self->d.fd, DRM_IOCTL_WSE_SUBMIT, &sub));

	/* io_uring: the SQE's addr and len, and the command area past the job. */
	ASSERT_EQ(0, io_uring_queue_init_params(8, &ring, &p));
	for (i = 0; i < 4; i++) {
		sqe = io_uring_get_sqe(&ring);
		prep_uring_job(sqe, self->d.fd, q, DRM_WSE_OP_MEM_WRITE, buf, sizeof(buf), 0, 0);
		sqe->user_data = i;
		if (i == 0)
			sqe->addr = 1;
		else if (i == 1)
			sqe->len = 1;
		else if (i == 2)
			((uint8_t *)sqe->cmd)[sizeof(struct drm_wse_uring_job)] = 1;
		else
			((uint8_t *)sqe->cmd)[128 - 48 - 1] = 1;	/* the area's last byte */
	}
	ASSERT_EQ(4, io_uring_submit(&ring));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(-EINVAL, cqe->res) TH_LOG("command %llu", (unsigned long long)cqe->user_data);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	expect_link_works(_metadata, self);
}

/* What the link must do about each lie of the semantic hostile peer. */
static const struct {
	const char *kind;
	bool link_dies;		/* a violation: the link must go */
	bool either;		/* it may go or stay, depending on the tags */
} lies[] = {
	{ "error-status", false, false }, { "short-data", false, false },
	{ "long-data", false, false }, { "other-tag", false, true },
	{ "unissued-tag", true, false }, { "wrong-opcode", true, false },
	{ "wrong-queue", true, false }, { "duplicate", true, false },
	{ "dropped", false, false }, { "unasked-keepalive", true, false },
	{ "device-request", true, false },
};

/*
 * A peer that completes the handshake and then answers real requests
 * with good digests but wrong content (wse-hostile-peer --mode semantic,
 * relaying a real wsefwd): every job ends, none waits past its timeout,
 * and the link goes down exactly for the lies that break the protocol.
 */
TEST_F_TIMEOUT(harden, semantic_hostile_peer, 240)
{
	struct guest_peer proxy = { 0 };
	unsigned int k;

	ASSERT_EQ(0, guest_peer_start(&self->d.fw, "wsefwd", "--wafer", "64x64", NULL));
	for (k = 0; k < sizeof(lies) / sizeof(lies[0]); k++) {
		struct wse_dev_status dev;
		uint64_t jobs[16];
		uint32_t q, h;
		int i, status, failed = 0;

		ASSERT_EQ(0, guest_peer_start(&proxy, "wse-hostile-peer", "--mode", "semantic",
					      "--upstream", self->d.fw.addr, "--mutate-every", "2",
					      "--semantic-kinds", lies[k].kind, "--connections", "1",
					      NULL));
		ASSERT_EQ(0, guest_attach(self->d.ctl, proxy.addr, 0, &self->d.dev))
			TH_LOG("%s: %s", lies[k].kind, wse_ctl_error(self->d.ctl) ?: "");
		self->d.attached = true;
		self->d.fd = guest_open_accel(self->d.dev.accel_minor);
		ASSERT_LE(0, self->d.fd);
		ASSERT_EQ(0, guest_queue_create(self->d.fd, 1, 16, 1000, &q));
		ASSERT_EQ(0, guest_bo(self->d.fd, 65536, &h, NULL));
		for (i = 0; i < 16; i++) {
			int ret = guest_submit(self->d.fd, q, i & 1 ? DRM_WSE_OP_MEM_READ :
					       DRM_WSE_OP_MEM_WRITE, h, 4096 * (i / 2), 4096, NULL,
					       &jobs[i]);

			if (ret) {
				EXPECT_EQ(-ENOTCONN, ret) TH_LOG("%s: job %d", lies[k].kind, i);
				break;
			}
		}
		for (int j = 0; j < i; j++) {
			ASSERT_EQ(0, guest_wait_job(self->d.fd, q, jobs[j], 5000, &status, NULL))
				TH_LOG("%s: job %d did not end", lies[k].kind, j);
			failed += status != 0;
		}
		ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
		if (!lies[k].either)
			EXPECT_EQ(lies[k].link_dies ? WSE_LINK_STATE_DEAD : WSE_LINK_STATE_UP,
				  dev.link_state) TH_LOG("%s: link %s (%s)", lies[k].kind,
							 wse_link_state_name(dev.link_state),
							 dev.reason);
		if (lies[k].link_dies)
			EXPECT_LE(1, dev.stats.proto_errors) TH_LOG("%s", lies[k].kind);
		TH_LOG("%s: %d of %d jobs failed, link %s%s%s", lies[k].kind, failed, i,
		       wse_link_state_name(dev.link_state), dev.reason[0] ? ": " : "",
		       dev.reason);
		close(self->d.fd);
		self->d.fd = -1;
		ASSERT_EQ(0, wse_ctl_detach(self->d.ctl, self->d.dev.index));
		self->d.attached = false;
		guest_peer_stop(&proxy, SIGTERM);
	}
}

/* A device that answers HELLO, then reads nothing and answers tag 16. */
static void *answer_before_reading(void *arg)
{
	struct wse_link_device_info d = {
		.version = 1, .caps = WSE_LINK_CAP_MEM, .max_payload = 65536,
		.version_min = 1, .version_max = 1, .device_id = 9, .wafer_width = 8,
		.wafer_height = 8, .sram_per_pe = 1 << 20, .sram_total = 64ULL << 20,
		.clock_khz = 1000, .num_queues = 2, .fw_version = "early",
	};
	struct wse_link_status st;
	struct iovec iov = { &st, sizeof(st) };
	struct wse_link_frame f = {
		.version = 1, .opcode = WSE_LINK_OP_MEM_WRITE, .flags = WSE_LINK_F_RESPONSE,
		.queue = 1, .tag = 16,
	};
	struct wse_link_err err;
	int fd = *(int *)arg;

	if (fake_hello(fd, &d, NULL))
		return NULL;
	/* The host queues 16 writes; the socket takes a few. */
	usleep(500000);
	wse_link_status_encode(&st, WSE_LINK_OK);
	wse_link_send(fd, &f, &iov, 1, 5000, &err);
	return NULL;
}

/*
 * Tags are easy to guess: an answer to a request whose frame has not
 * begun to leave (it waits behind others for a peer that reads nothing)
 * is a lie, and ends the link, instead of finishing the job and freeing
 * its place while its frame is still queued.
 */
TEST_F(harden, answer_to_a_request_not_yet_sent_ends_the_link)
{
	struct wse_dev_status dev;
	uint64_t jobs[16];
	pthread_t t;
	uint32_t q, h;
	int sv[2], i, status;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pthread_create(&t, NULL, answer_before_reading, &sv[1]));
	ASSERT_EQ(0, wse_ctl_attach_fd(self->d.ctl, sv[0], 0, &self->d.dev))
		TH_LOG("%s", wse_ctl_error(self->d.ctl) ?: "");
	self->d.attached = true;
	self->d.fd = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, self->d.fd);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 1, 16, 0, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 65536, &h, NULL));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 60000, NULL,
					  &jobs[i]));
	pthread_join(t, NULL);
	ASSERT_EQ(0, guest_wait_state(self->d.ctl, self->d.dev.index, WSE_LINK_STATE_DEAD, 3000,
				      &dev));
	EXPECT_NE(NULL, strstr(dev.reason, "not yet sent")) TH_LOG("reason: %s", dev.reason);
	ASSERT_EQ(0, guest_wait_job(self->d.fd, q, jobs[15], 3000, &status, NULL));
	EXPECT_NE(0, status);
	close(sv[0]);
	close(sv[1]);
}

/* What the wraparound device saw: the tags of the requests it read (not
 * the keepalives' and goodbye's tag 0).
 */
struct wrap_peer {
	int fd;
	int late_after;		/* the first request is answered after this one */
	uint32_t tags[8];
	int n;
	int sv[2];		/* the host's end, the device's end */
	pthread_t thread;
};

/*
 * A device that answers HELLO, leaves its first request unanswered, and
 * answers every later one; after the @late_after-th, it answers the first
 * too, late. Stays until the host goes.
 */
static void *answer_late_after_wrap(void *arg)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = 65536 };
	struct wse_link_device_info d = {
		.version = 1, .caps = WSE_LINK_CAP_MEM, .max_payload = 65536,
		.version_min = 1, .version_max = 1, .device_id = 9, .wafer_width = 8,
		.wafer_height = 8, .sram_per_pe = 1 << 20, .sram_total = 64ULL << 20,
		.clock_khz = 1000, .num_queues = 2, .fw_version = "wrap",
	};
	struct wrap_peer *p = arg;
	struct wse_link_status st;
	struct iovec iov = { &st, sizeof(st) };
	struct wse_link_frame f, first = { 0 };
	struct wse_link_err err;
	static char buf[65536];

	if (fake_hello(p->fd, &d, NULL))
		return NULL;
	wse_link_status_encode(&st, WSE_LINK_OK);
	while (p->n < (int)ARRAY_SIZE(p->tags) &&
	       !wse_link_recv(p->fd, &rules, &f, buf, sizeof(buf), 10000, &err)) {
		if (f.flags & WSE_LINK_F_RESPONSE)
			continue;	/* this device asks the host nothing */
		if (!f.tag) {
			/* A keepalive, or the host's goodbye: not a request of the test's. */
			f.flags = WSE_LINK_F_RESPONSE;
			wse_link_send(p->fd, &f, &iov, 1, 5000, &err);
			continue;
		}
		p->tags[p->n++] = f.tag;
		if (p->n == 1) {
			first = f;
			continue;
		}
		f.flags = WSE_LINK_F_RESPONSE;
		wse_link_send(p->fd, &f, &iov, 1, 5000, &err);
		if (p->n == p->late_after) {
			first.flags = WSE_LINK_F_RESPONSE;
			wse_link_send(p->fd, &first, &iov, 1, 5000, &err);
		}
	}
	return NULL;
}

/* Sets a parameter of wse.ko's, which links made from now on use. */
static int set_param(const char *name, uint32_t value)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/wse/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%u\n", value) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/*
 * Attaches @peer (answer_late_after_wrap() on a socket pair) as a link made
 * with wse.ko's @param at @value, then set back to @restore; opens it with
 * queue *@qa on hardware queue 0 (jobs time out after 100 ms), *@q on 1,
 * and a buffer object *@h.
 */
static void wrap_up(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self,
		    struct wrap_peer *peer, const char *param, uint32_t value, uint32_t restore,
		    uint32_t *qa, uint32_t *q, uint32_t *h)
{
	int ret;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, peer->sv));
	peer->fd = peer->sv[1];
	ASSERT_EQ(0, pthread_create(&peer->thread, NULL, answer_late_after_wrap, peer));
	ASSERT_EQ(0, set_param(param, value));
	ret = wse_ctl_attach_fd(self->d.ctl, peer->sv[0], 0, &self->d.dev);
	EXPECT_EQ(0, set_param(param, restore));
	ASSERT_EQ(0, ret) TH_LOG("%s", wse_ctl_error(self->d.ctl) ?: "");
	self->d.attached = true;
	self->d.fd = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, self->d.fd);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 0, 4, 100, qa));
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 1, 4, 0, q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, h, NULL));
}

/* The link is up and took one late answer as stale; detaches, and the peer ends. */
static void wrap_down(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self,
		      struct wrap_peer *peer)
{
	struct wse_dev_status dev;

	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state) TH_LOG("link down: %s", dev.reason);
	EXPECT_EQ(1, dev.stats.stale_responses);
	close(self->d.fd);
	self->d.fd = -1;
	wse_ctl_detach(self->d.ctl, self->d.dev.index);
	self->d.attached = false;
	pthread_join(peer->thread, NULL);
	close(peer->sv[0]);
	close(peer->sv[1]);
}

/*
 * Tags wrap after 2^32 - 1 requests. A link that starts two short of the
 * top hands out 0xfffffffe, 0xffffffff, then 1 and 2, never 0 (the
 * keepalives'); and a late answer to a request that gave up before the
 * wrap is a stale answer, counted, not a lie that ends the link.
 */
TEST_F(harden, tags_wrap_and_a_late_answer_from_before_is_stale)
{
	struct wrap_peer peer = { .late_after = 3 };
	uint64_t a, b, c, e;
	uint32_t qa, q, h;
	int status;

	wrap_up(_metadata, self, &peer, "first_tag", 0xfffffffe, 1, &qa, &q, &h);

	/* The first is never answered in time. */
	ASSERT_EQ(0, guest_submit(self->d.fd, qa, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &a));
	ASSERT_EQ(0, guest_wait_job(self->d.fd, qa, a, 5000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	/* Across the wrap; the first's answer comes after the third's. */
	ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &b));
	ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &c));
	ASSERT_EQ(0, guest_wait_job(self->d.fd, q, b, 5000, &status, NULL));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, guest_wait_job(self->d.fd, q, c, 5000, &status, NULL));
	EXPECT_EQ(0, status);
	/* Behind the late answer on the stream: the link took it and went on. */
	ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &e));
	ASSERT_EQ(0, guest_wait_job(self->d.fd, q, e, 5000, &status, NULL));
	EXPECT_EQ(0, status);

	wrap_down(_metadata, self, &peer);
	ASSERT_EQ(4, peer.n);
	EXPECT_EQ(0xfffffffeU, peer.tags[0]);
	EXPECT_EQ(0xffffffffU, peer.tags[1]);
	EXPECT_EQ(1U, peer.tags[2]);
	EXPECT_EQ(2U, peer.tags[3]);
}

/*
 * A tag the firmware may still answer is never handed out again (issue
 * 25, item 5): with tags 1..4 only, the first request times out and its
 * tag 1 stays taken while the device holds it; the requests after it come
 * round the tags and skip it, so the late answer to tag 1 can land in
 * nobody else's request. It is counted as stale, and the link goes on.
 */
TEST_F(harden, a_tag_the_firmware_still_holds_is_skipped)
{
	struct wrap_peer peer = { .late_after = 6 };
	uint32_t qa, q, h;
	uint64_t job;
	int status, i;

	wrap_up(_metadata, self, &peer, "tag_max", 4, UINT32_MAX, &qa, &q, &h);

	ASSERT_EQ(0, guest_submit(self->d.fd, qa, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &job));
	ASSERT_EQ(0, guest_wait_job(self->d.fd, qa, job, 5000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	/* Five more, one at a time: round the four tags, past the held one. */
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL,
					  &job));
		ASSERT_EQ(0, guest_wait_job(self->d.fd, q, job, 5000, &status, NULL));
		EXPECT_EQ(0, status) TH_LOG("request %d", i + 2);
	}
	/* The first's late answer came after the sixth: one after it sees it taken. */
	ASSERT_EQ(0, guest_submit(self->d.fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &job));
	ASSERT_EQ(0, guest_wait_job(self->d.fd, q, job, 5000, &status, NULL));
	EXPECT_EQ(0, status);

	wrap_down(_metadata, self, &peer);
	ASSERT_EQ(7, peer.n);
	EXPECT_EQ(1U, peer.tags[0]);
	for (i = 1; i < 6; i++)
		EXPECT_NE(1U, peer.tags[i]) TH_LOG("request %d got the held tag", i + 1);
}

TEST_HARNESS_MAIN
