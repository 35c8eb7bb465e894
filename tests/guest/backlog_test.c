// SPDX-License-Identifier: GPL-2.0-only
/*
 * Requests that wait at the firmware cannot take the device from its other
 * users (issue 25, item 2). A STREAM_READ of an output stream with no data
 * waits on its hardware queue until data comes; before, one opener could
 * have 64 queues x 256 of them sent, the firmware stopped reading the
 * link once 256 waited, keepalives went unanswered and the link died for
 * every opener. Now the driver counts what the firmware holds per user
 * and per device, and holds each request's count - and its place in its
 * queue - until the firmware has answered it, even after its job gave up
 * (a timeout, a close), when it asks the firmware to cancel it. The
 * kernel buffers of io_uring jobs are shared out per user too.
 *
 * Runs as root in the guest with wsefwd started inside it, forking users
 * 1000 and 1001 (in the accel group).
 */
#include "kselftest_harness.h"
#include "wse_guest.h"
#include "wse_guest_uring.h"

#define IMAGE		"/tmp/backlog-fc-mnist.wsep"
#define HOG_UID		1000
#define OTHER_UID	1001
#define HOG_SLOT	7
#define OTHER_SLOT	8
/* The link's keepalive: three silent intervals kill it. */
#define KEEPALIVE_MS	1000

FIXTURE(backlog) {
	struct guest_fw_device d;
	struct guest_image im;
	gid_t gid;
	uint32_t losses;	/* an output stream's id */
};

FIXTURE_SETUP(backlog)
{
	struct wsep_train_streams ts;
	char err[256];

	ASSERT_EQ(0, guest_fw_device_init(&self->d));
	ASSERT_EQ(0, guest_image_init(&self->im, IMAGE, "pipelined", err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, wsep_train_streams(self->im.wsep, &ts, err, sizeof(err))) TH_LOG("%s", err);
	self->losses = self->im.wsep->streams[ts.losses].id;
	ASSERT_EQ(0, guest_peer_start(&self->d.fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_attach(self->d.ctl, self->d.fw.addr, KEEPALIVE_MS, &self->d.dev));
	self->d.attached = true;
	ASSERT_EQ(0, guest_share_node(self->d.dev.accel_minor, &self->gid));
}

FIXTURE_TEARDOWN(backlog)
{
	guest_fw_device_fini(&self->d);
	guest_image_fini(&self->im);
}

struct user_arg {
	int minor;
	const void *image;
	size_t len;
	uint32_t losses;
	int ready_fd, go_fd;	/* pipes: "done this far" out, "go on" in; or -1 */
	int taken;		/* out: jobs the driver took */
};

static int await(int fd)
{
	char c;

	return fd < 0 || read(fd, &c, 1) == 1 ? 0 : -1;
}

/*
 * Issue 25's reproducer, as user 1000: a program in slot 7, a queue of
 * depth 256 on hardware queue 1 filled with STREAM_READs of its losses
 * (none come: nothing runs), and 8 more on hardware queue 2. Says how far
 * it got, waits for the go-ahead, and closes. Exit 0, or what failed.
 */
static int hog(void *p)
{
	struct user_arg *a = p;
	uint64_t args[4] = { HOG_SLOT, a->losses };
	int fd = guest_open_accel(a->minor), taken = 0, busy = 0;
	uint32_t q0, q1, q2, h;
	uint64_t job;

	if (fd < 0)
		return 10;
	if (guest_queue_create(fd, 0, 8, 60000, &q0) ||
	    guest_queue_create(fd, 1, 256, 600000, &q1) ||
	    guest_queue_create(fd, 2, 256, 600000, &q2) || guest_bo(fd, 4096, &h, NULL))
		return 11;
	if (guest_load_program(fd, q0, HOG_SLOT, a->image, a->len))
		return 12;
	for (int i = 0; i < 256 + 8; i++) {
		int ret = guest_submit(fd, i < 256 ? q1 : q2, DRM_WSE_OP_STREAM_READ, h, 0, 4,
				       args, &job);

		if (!ret)
			taken++;
		else if (ret == -EBUSY)
			busy++;
		else
			return 13;
	}
	/* The user's share of what the firmware may hold, and no more. */
	if (!busy || taken >= 256)
		return 14;
	a->taken = taken;
	if (write(a->ready_fd, &taken, sizeof(taken)) != sizeof(taken) || await(a->go_fd))
		return 15;
	close(fd);
	return 0;
}

/* User 1001 meanwhile: loads its own program and reads its weights. */
static int other_works(void *p)
{
	const struct user_arg *a = p;
	uint64_t args[4] = { OTHER_SLOT, WSE_LINK_PARAMS_WEIGHTS, 0 };
	int fd = guest_open_accel(a->minor), status;
	uint32_t q, h;
	uint64_t job;

	if (fd < 0)
		return 20;
	if (guest_queue_create(fd, 3, 8, 30000, &q) || guest_bo(fd, 4096, &h, NULL))
		return 21;
	if (guest_load_program(fd, q, OTHER_SLOT, a->image, a->len))
		return 22;
	if (guest_submit(fd, q, DRM_WSE_OP_PARAMS_READ, h, 0, 4096, args, &job) ||
	    guest_wait_job(fd, q, job, 10000, &status, NULL) || status)
		return 23;
	close(fd);
	return 0;
}

/* User 1001 again, after the hog closed: its slot comes free. */
static int claim_hog_slot(void *p)
{
	const struct user_arg *a = p;
	uint64_t args[4] = { HOG_SLOT, 0, 4096, 0 };
	int64_t end = guest_now_ms() + 20000;
	int fd = guest_open_accel(a->minor), ret = -EBUSY;
	uint32_t q, h;
	uint64_t job;

	if (fd < 0)
		return 30;
	if (guest_queue_create(fd, 3, 8, 30000, &q) || guest_bo(fd, 4096, &h, NULL))
		return 31;
	while (ret == -EBUSY && guest_now_ms() < end) {
		ret = guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, args, &job);
		if (ret == -EBUSY)
			usleep(100000);
	}
	close(fd);
	return ret ? 32 : 0;
}

/*
 * A user process that holds what it made until told to go on: @fn(@a) as
 * user @uid, which writes how far it got (an int) to @a->ready_fd and then
 * waits on @a->go_fd. The parent reads that with held_ready() and lets it
 * end with held_finish().
 */
struct held {
	pid_t pid;
	int ready, go;		/* the parent's ends */
};

static int held_start(struct held *h, uid_t uid, gid_t gid, int (*fn)(void *), struct user_arg *a)
{
	int ready[2], go[2];

	if (pipe(ready))
		return -1;
	if (pipe(go)) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	a->ready_fd = ready[1];
	a->go_fd = go[0];
	h->pid = fork();
	if (h->pid == 0)
		_exit(guest_become(uid, gid, true) ? 9 : fn(a));
	/* Only the child writes there: its end of the pipe goes with it. */
	close(ready[1]);
	close(go[0]);
	h->ready = ready[0];
	h->go = go[1];
	return h->pid < 0 ? -1 : 0;
}

/* How far the child got; -1 if it ended first. */
static int held_ready(struct held *h)
{
	int n;

	return read(h->ready, &n, sizeof(n)) == sizeof(n) ? n : -1;
}

/* Lets the child end, and reaps it: its exit status, or -1. */
static int held_finish(struct held *h)
{
	int status = -1;

	if (write(h->go, "g", 1) != 1)
		kill(h->pid, SIGKILL);
	if (waitpid(h->pid, &status, 0) != h->pid || !WIFEXITED(status))
		status = -1;
	else
		status = WEXITSTATUS(status);
	close(h->ready);
	close(h->go);
	return status;
}

TEST_F_TIMEOUT(backlog, blocked_reads_do_not_kill_the_link, 180)
{
	struct user_arg a = { self->d.dev.accel_minor, self->im.image, self->im.len, self->losses,
			      -1, -1, 0 };
	struct wse_dev_status dev;
	struct held hog_user;
	int taken;

	ASSERT_EQ(0, held_start(&hog_user, HOG_UID, self->gid, hog, &a));
	taken = held_ready(&hog_user);
	ASSERT_LE(0, taken) TH_LOG("the first user did not get its reads in");
	TH_LOG("the driver took %d of 264 waiting reads", taken);
	/* Five keepalive intervals: the link would be dead after three. */
	usleep(5 * KEEPALIVE_MS * 1000);
	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state) TH_LOG("link %s: %s",
							     wse_link_state_name(dev.link_state),
							     dev.reason);
	EXPECT_EQ(0, guest_as_user(OTHER_UID, self->gid, 60000, other_works, &a));
	EXPECT_EQ(0, held_finish(&hog_user)) TH_LOG("the first user failed (its step)");
	/* Its reads are cancelled at the firmware, its slot unloaded and freed. */
	EXPECT_EQ(0, guest_as_user(OTHER_UID, self->gid, 60000, claim_hog_slot, &a));
	/* Nothing is left at the firmware once the last unload is answered. */
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
		if (!dev.stats.inflight)
			break;
		usleep(50000);
	}
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
	EXPECT_EQ(0, dev.stats.inflight) TH_LOG("%llu requests still at the firmware",
						(unsigned long long)dev.stats.inflight);
}

/*
 * A job that timed out keeps its place in its queue until the firmware
 * has answered it: asked to cancel, it does so at once.
 */
static int timeout_holds_its_place(void *p)
{
	const struct user_arg *a = p;
	uint64_t args[4] = { HOG_SLOT, a->losses };
	int fd = guest_open_accel(a->minor), status, ret = -EBUSY;
	int64_t end;
	uint32_t q0, q, h;
	uint64_t job;

	if (fd < 0)
		return 40;
	if (guest_queue_create(fd, 0, 8, 60000, &q0) || guest_queue_create(fd, 1, 1, 300, &q) ||
	    guest_bo(fd, 4096, &h, NULL))
		return 41;
	if (guest_load_program(fd, q0, HOG_SLOT, a->image, a->len))
		return 42;
	if (guest_submit(fd, q, DRM_WSE_OP_STREAM_READ, h, 0, 4, args, &job))
		return 43;
	if (guest_wait_job(fd, q, job, 10000, &status, NULL) || status != -ETIMEDOUT)
		return 44;
	/* Collected, but the firmware may not have answered the cancel yet. */
	end = guest_now_ms() + 5000;
	while (ret == -EBUSY && guest_now_ms() < end) {
		ret = guest_submit(fd, q, DRM_WSE_OP_STREAM_READ, h, 0, 4, args, &job);
		if (ret == -EBUSY)
			usleep(20000);
	}
	if (ret)
		return 45;
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(backlog, a_timed_out_job_is_cancelled_at_the_firmware, 60)
{
	struct user_arg a = { self->d.dev.accel_minor, self->im.image, self->im.len, self->losses,
			      -1, -1, 0 };
	struct wse_dev_status dev;

	EXPECT_EQ(0, guest_as_user(HOG_UID, self->gid, 30000, timeout_holds_its_place, &a));
	ASSERT_EQ(0, wse_ctl_get(self->d.ctl, self->d.dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
	EXPECT_LE(1, dev.stats.timeouts);
}

/*
 * Kernel buffers are shared out per user: four files of one user, each
 * with io_uring reads of 3 MiB that wait at the firmware, get at most half
 * of what the device's users may hold; another user still gets its own.
 */
static int fill_buffers(void *p)
{
	struct user_arg *a = p;
	const uint32_t len = 3 << 20;
	int fds[4], taken = 0, nobufs = 0;
	struct io_uring rings[4];
	void *buf = malloc(len);

	if (!buf)
		return 50;
	for (int f = 0; f < 4; f++) {
		uint64_t slot = HOG_SLOT + 10 + f;
		uint32_t q0, q;

		fds[f] = guest_open_accel(a->minor);
		if (fds[f] < 0 || guest_queue_create(fds[f], 0, 8, 60000, &q0) ||
		    guest_queue_create(fds[f], 1 + f % 3, 128, 60000, &q) ||
		    io_uring_queue_init(128, &rings[f], IORING_SETUP_SQE128))
			return 51;
		if (guest_load_program(fds[f], q0, slot, a->image, a->len))
			return 52;
		for (int i = 0; i < 48; i++) {
			struct drm_wse_uring_job j = {
				.op = DRM_WSE_OP_STREAM_READ, .queue_id = q,
				.args = { slot, a->losses }, .addr = (uintptr_t)buf, .length = len,
			};

			guest_uring_prep(io_uring_get_sqe(&rings[f]), fds[f], &j, i, -1);
		}
		if (io_uring_submit(&rings[f]) != 48)
			return 53;
		/* Refusals come back at once; the rest wait. */
		usleep(200000);
		for (;;) {
			struct io_uring_cqe *cqe;

			if (io_uring_peek_cqe(&rings[f], &cqe))
				break;
			if (cqe->res == -ENOBUFS)
				nobufs++;
			else if (cqe->res != -EBUSY)
				return 54;
			io_uring_cqe_seen(&rings[f], cqe);
		}
	}
	taken = 4 * 48 - nobufs;
	if (!nobufs || write(a->ready_fd, &taken, sizeof(taken)) != sizeof(taken) ||
	    await(a->go_fd))
		return 55;
	for (int f = 0; f < 4; f++) {
		io_uring_queue_exit(&rings[f]);
		close(fds[f]);
	}
	free(buf);
	return 0;
}

/* The other user: one io_uring read of 3 MiB is not refused for buffers. */
static int one_buffer(void *p)
{
	const struct user_arg *a = p;
	const uint32_t len = 3 << 20;
	struct drm_wse_uring_job j = {
		.op = DRM_WSE_OP_STREAM_READ, .args = { OTHER_SLOT, a->losses }, .length = len,
	};
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int fd = guest_open_accel(a->minor), ret = 0;
	void *buf = malloc(len);
	uint32_t q0, q;

	if (fd < 0 || !buf || guest_queue_create(fd, 0, 8, 60000, &q0) ||
	    guest_queue_create(fd, 3, 8, 1000, &q) ||
	    io_uring_queue_init(8, &ring, IORING_SETUP_SQE128))
		return 60;
	if (guest_load_program(fd, q0, OTHER_SLOT, a->image, a->len))
		return 61;
	j.queue_id = q;
	j.addr = (uintptr_t)buf;
	guest_uring_prep(io_uring_get_sqe(&ring), fd, &j, 1, -1);
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return 62;
	/* It waits for data that never comes, and times out; not ENOBUFS. */
	if (cqe->res != -ETIMEDOUT)
		ret = 63;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return ret;
}

TEST_F_TIMEOUT(backlog, kernel_buffers_are_shared_out_per_user, 120)
{
	struct user_arg a = { self->d.dev.accel_minor, self->im.image, self->im.len, self->losses,
			      -1, -1, 0 };
	struct held filler;
	int taken;

	ASSERT_EQ(0, held_start(&filler, HOG_UID, self->gid, fill_buffers, &a));
	taken = held_ready(&filler);
	ASSERT_LE(0, taken) TH_LOG("the first user did not get its reads in");
	TH_LOG("4 files of one user: %d of 192 reads of 3 MiB taken", taken);
	EXPECT_EQ(0, guest_as_user(OTHER_UID, self->gid, 60000, one_buffer, &a));
	EXPECT_EQ(0, held_finish(&filler)) TH_LOG("the first user failed (its step)");
}

TEST_HARNESS_MAIN
