// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program slot passes from one user to another only empty (issue 25,
 * items 3 and 5): the driver frees a closed file's slot once the firmware
 * has answered every request the file sent for it and then the unload;
 * a reset does not cut that short; and a slot is the loader's to use only
 * once the firmware has confirmed a whole program in it, so another user's
 * bogus first piece gets nothing. Claims that never reach the firmware
 * claim nothing, and a file or user may hold only so many slots.
 *
 * The firmware is started with every reply delayed (--fault-delay-ms), so
 * that a load on one hardware queue is still being carried out when its
 * file closes, as a busy queue would hold it. Runs in the guest as root,
 * which forks the users (1000 and 1001, both in the accel group).
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "wse_guest.h"

#define IMAGE		"/tmp/slots-fc-mnist.wsep"
#define OWNER_UID	1000
#define OTHER_UID	1001
#define SLOT		7
/* Every reply of the firmware comes this late. */
#define DELAY_MS	"1500"

FIXTURE(slots) {
	struct guest_fw_device d;
	struct guest_image im;
	gid_t gid;
};

FIXTURE_SETUP(slots)
{
	char err[256];

	ASSERT_EQ(0, guest_fw_device_init(&self->d));
	ASSERT_EQ(0, guest_image_init(&self->im, IMAGE, "pipelined", err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, guest_fw_device_up(&self->d, "--fault-delay-ms=" DELAY_MS, NULL));
	ASSERT_EQ(0, guest_share_node(self->d.dev.accel_minor, &self->gid));
}

FIXTURE_TEARDOWN(slots)
{
	guest_fw_device_fini(&self->d);
	guest_image_fini(&self->im);
}

/* What a user's process is given. */
struct user_arg {
	int minor;
	const void *image;
	size_t len;
	int pipe_fd;		/* written to once a step is done, or -1 */
};

/*
 * The owner: loads the image into SLOT in two pieces on hardware queue 1,
 * both sent before either is answered, and closes the device at once,
 * while the firmware still carries the load out.
 */
static int load_and_leave(void *p)
{
	const struct user_arg *a = p;
	size_t half = a->len / 2;
	uint64_t first[4] = { SLOT, 0, a->len, 0 }, last[4] = { SLOT, 1, a->len, half };
	int fd = guest_open_accel(a->minor);
	uint32_t q, h;
	uint64_t job;
	void *map;

	if (fd < 0)
		return 10;
	if (guest_queue_create(fd, 1, 8, 60000, &q) || guest_bo(fd, a->len, &h, &map))
		return 11;
	memcpy(map, a->image, a->len);
	if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, half, first, &job) ||
	    guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, half, a->len - half, last, &job))
		return 12;
	munmap(map, a->len);
	close(fd);
	return 0;
}

/*
 * The other user: claims SLOT with a bogus first piece as soon as the
 * driver lets it, then tries to read what is in it and to unload it. The
 * piece announces an image too large for the device, which refuses it and
 * keeps no part of it: an unload then finds a program only if one was
 * left there. Exit 0 if it found nothing of anyone's; 20.. says what
 * went wrong.
 */
static int claim_and_look(void *p)
{
	const struct user_arg *a = p;
	uint64_t first[4] = { SLOT, 0, 1ULL << 40, 0 }, params[4] = { SLOT, 1, 0 };
	uint64_t ref[4] = { SLOT };
	int64_t end = guest_now_ms() + 30000;
	int fd = guest_open_accel(a->minor), ret = -EBUSY, status;
	uint32_t q, h;
	uint64_t job;

	if (fd < 0)
		return 20;
	if (guest_queue_create(fd, 2, 8, 60000, &q) || guest_bo(fd, 1 << 20, &h, NULL))
		return 21;
	/* Taken until the firmware is done with it for its owner. */
	while (ret == -EBUSY && guest_now_ms() < end) {
		ret = guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, first, &job);
		if (ret == -EBUSY)
			usleep(50000);
	}
	if (ret)
		return 22;
	if (guest_wait_job(fd, q, job, 10000, &status, NULL) || status != -ENOSPC)
		return 23;
	/* A refused piece is no program: nothing of the slot's is this user's yet. */
	ret = guest_submit(fd, q, DRM_WSE_OP_PARAMS_READ, h, 0, 4096, params, &job);
	if (ret != -ENOENT) {
		if (!ret)
			guest_wait_job(fd, q, job, 10000, &status, NULL);
		return !ret && !status ? 24 : 25;
	}
	/* And the firmware's slot holds no program: the owner's was unloaded. */
	if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_UNLOAD, 0, 0, 0, ref, &job) ||
	    guest_wait_job(fd, q, job, 10000, &status, NULL))
		return 26;
	if (status != -EINVAL)
		return status ? 27 : 28;
	close(fd);
	return 0;
}

/*
 * Issue 25's reproduction: the owner's last piece was still to be carried
 * out on hardware queue 1 when it closed, and the unload the driver sent
 * on queue 0 found nothing; the slot was freed, the firmware then put the
 * program in it, and the other user claimed it and read the weights.
 */
TEST_F_TIMEOUT(slots, a_load_still_under_way_is_not_orphaned, 120)
{
	struct user_arg a = { self->d.dev.accel_minor, self->im.image, self->im.len, -1 };

	ASSERT_EQ(0, guest_as_user(OWNER_UID, self->gid, 20000, load_and_leave, &a));
	EXPECT_EQ(0, guest_as_user(OTHER_UID, self->gid, 60000, claim_and_look, &a))
		TH_LOG("22 never free, 24 read what was there, 27/28 a program was there");
}

/* Loads SLOT whole and closes once the load is answered. */
static int load_whole(void *p)
{
	const struct user_arg *a = p;
	uint64_t load[4] = { SLOT, 1, a->len, 0 };
	int fd = guest_open_accel(a->minor), status;
	uint32_t q, h;
	uint64_t job;
	void *map;

	if (fd < 0)
		return 10;
	if (guest_queue_create(fd, 1, 8, 60000, &q) || guest_bo(fd, a->len, &h, &map))
		return 11;
	memcpy(map, a->image, a->len);
	if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, a->len, load, &job) ||
	    guest_wait_job(fd, q, job, 20000, &status, NULL) || status)
		return 12;
	munmap(map, a->len);
	close(fd);
	return 0;
}

/*
 * A RESET while the driver's unload of a closed file's slot waits for its
 * answer: the reset ends the waits of the requests in flight, but the slot
 * stays taken until the firmware has answered the unload.
 */
TEST_F_TIMEOUT(slots, a_reset_does_not_free_a_slot_before_its_unload_is_answered, 120)
{
	struct user_arg a = { self->d.dev.accel_minor, self->im.image, self->im.len, -1 };

	ASSERT_EQ(0, guest_as_user(OWNER_UID, self->gid, 30000, load_whole, &a));
	/* The unload went out at the close; its answer is 1.5 s away. */
	ASSERT_EQ(0, wse_ctl_reset(self->d.ctl, self->d.dev.index));
	EXPECT_EQ(0, guest_as_user(OTHER_UID, self->gid, 60000, claim_and_look, &a))
		TH_LOG("22 never free, 24 read what was there, 27/28 a program was there");
}

/*
 * 255 PROGRAM_LOADs with a handle that does not exist fail and claim
 * nothing; 16 slots are as many as one file may hold; the other user
 * still finds every slot the first did not hold.
 */
static int hoard(void *p)
{
	const struct user_arg *a = p;
	int fd = guest_open_accel(a->minor), ok = 0;
	uint32_t q, h;
	uint64_t job;

	if (fd < 0)
		return 10;
	if (guest_queue_create(fd, 0, 256, 60000, &q) || guest_bo(fd, 4096, &h, NULL))
		return 11;
	for (uint64_t slot = 1; slot < 256; slot++) {
		uint64_t load[4] = { slot, 0, 4096, 0 };

		if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h + 100, 0, 4096, load,
				 &job) != -ENOENT)
			return 12;
	}
	/* Real first pieces: 16 claims, then no more. */
	for (uint64_t slot = 1; slot < 256; slot++) {
		uint64_t load[4] = { slot, 0, 4096, 0 };
		int ret = guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, load, &job);

		if (!ret)
			ok++;
		else if (ret != -ENOSPC)
			return 13;
	}
	if (ok != 16)
		return 14;
	if (write(a->pipe_fd, "h", 1) != 1)
		return 15;
	/* Holds them until the other user has looked. */
	sleep(10);
	close(fd);
	return 0;
}

/* Claims slots 17..255, one each, as the other user. */
static int claim_the_rest(void *p)
{
	const struct user_arg *a = p;
	int fd = guest_open_accel(a->minor);
	uint32_t q, h;
	uint64_t job;

	if (fd < 0)
		return 20;
	if (guest_queue_create(fd, 0, 256, 60000, &q) || guest_bo(fd, 4096, &h, NULL))
		return 21;
	for (uint64_t slot = 1; slot <= 16; slot++) {
		uint64_t load[4] = { slot, 0, 4096, 0 };

		if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, load, &job) !=
		    -EBUSY)
			return 22;
	}
	/* One file holds 16 at most; this one takes the next free ones. */
	for (uint64_t slot = 17; slot < 33; slot++) {
		uint64_t load[4] = { slot, 0, 4096, 0 };

		if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, load, &job))
			return 23;
	}
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(slots, failed_claims_claim_nothing_and_claims_are_bounded, 120)
{
	struct user_arg a = { self->d.dev.accel_minor, self->im.image, self->im.len, -1 };
	int fds[2], status;
	pid_t hoarder;
	char c;

	ASSERT_EQ(0, pipe(fds));
	a.pipe_fd = fds[1];
	hoarder = fork();
	ASSERT_LE(0, hoarder);
	if (hoarder == 0)
		_exit(guest_become(OWNER_UID, self->gid, true) ? 9 : hoard(&a));
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &c, 1)) TH_LOG("the first user did not get its slots");
	EXPECT_EQ(0, guest_as_user(OTHER_UID, self->gid, 30000, claim_the_rest, &a));
	ASSERT_EQ(hoarder, waitpid(hoarder, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the first user: step %d", WEXITSTATUS(status));
	close(fds[0]);
}

TEST_HARNESS_MAIN
