// SPDX-License-Identifier: GPL-2.0-only
/*
 * The driver holds against its own users: a request one opener gets
 * wrong fails that request only, never the link every opener shares.
 * Runs in the guest with wsefwd started inside it on unix sockets.
 */
#include "kselftest_harness.h"
#include "wse_guest.h"

FIXTURE(harden) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status dev;
	bool attached;
	int fd;
};

FIXTURE_SETUP(harden)
{
	self->attached = false;
	self->fd = -1;
	self->fw.pid = 0;
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
}

FIXTURE_TEARDOWN(harden)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
}

/* Starts a wsefwd with up to two extra arguments (or NULLs) and opens
 * its device.
 */
static void bring_up(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self,
		     const char *a0, const char *a1)
{
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64", a0, a1, NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &self->dev));
	self->attached = true;
	self->fd = guest_open_accel(self->dev.accel_minor);
	ASSERT_LE(0, self->fd);
}

/* The link is up, and a job on it still goes through. */
static void expect_link_works(struct __test_metadata *_metadata, FIXTURE_DATA(harden) *self)
{
	struct wse_dev_status dev;
	uint32_t q, h;
	uint64_t job;
	int status;

	ASSERT_EQ(0, wse_ctl_get(self->ctl, self->dev.index, false, &dev));
	ASSERT_EQ(WSE_LINK_STATE_UP, dev.link_state) TH_LOG("link down: %s", dev.reason);
	ASSERT_EQ(0, guest_queue_create(self->fd, 1, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->fd, 4096, &h, NULL));
	ASSERT_EQ(0, guest_submit(self->fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 64, NULL, &job));
	ASSERT_EQ(0, guest_wait_job(self->fd, q, job, 10000, &status, NULL));
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
	ASSERT_EQ(0, guest_queue_create(self->fd, 3, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->fd, 4096, &h, NULL));
	ret = guest_submit(self->fd, q, DRM_WSE_OP_DEVICE_STATS, h, 0, 1, NULL, &job);
	if (!ret) {
		ASSERT_EQ(0, guest_wait_job(self->fd, q, job, 10000, &status, NULL));
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
	ASSERT_EQ(0, guest_queue_create(self->fd, 0, 4, 0, &q));
	ASSERT_EQ(0, guest_bo(self->fd, 4096, &h, NULL));
	EXPECT_EQ(-EINVAL, guest_submit(self->fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096,
					 load_bad_flags, &job));
	/* The last piece's answer is the placement, 40 bytes. */
	EXPECT_EQ(-EINVAL, guest_submit(self->fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 16,
					 load_last, &job));
	EXPECT_EQ(-EINVAL, guest_submit(self->fd, q, DRM_WSE_OP_RUN, h, 0, 31, run, &job));
	EXPECT_EQ(-EINVAL, guest_submit(self->fd, q, DRM_WSE_OP_DEVICE_STATS, h, 0, 63, NULL,
					 &job));
	expect_link_works(_metadata, self);
}

TEST_HARNESS_MAIN
