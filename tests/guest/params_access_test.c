// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which parameters a user may read and write, and where (issue 25, item
 * 4): the `which` of PARAMS_READ and PARAMS_WRITE is checked by the driver
 * against the kind of device and the slot before it reaches the firmware.
 *
 * - On a system (wsefwd): weights, optimizer state and snapshots of the
 *   caller's own program; a snapshot stored only into the caller's own
 *   area of the shared storage ("u<uid>/..."); no appliance kind, and
 *   nothing unknown.
 * - On an appliance: the parts' state (slot 0) for anyone; the default
 *   job of every user (slot 0) only for an administrator; a slot's own
 *   job and input only on the caller's own slot.
 *
 * Both paths are tried, SUBMIT and io_uring. Runs as root in the guest,
 * forking user 1000 (in the accel group) for the unprivileged calls.
 */
#include "kselftest_harness.h"
#include "wse_guest.h"
#include "wse_guest_uring.h"

#define IMAGE		"/tmp/params-fc-mnist.wsep"
#define USER_UID	1000
#define SLOT		9

FIXTURE(params) {
	struct guest_fw_device d;
	struct guest_image im;
	gid_t gid;
};

FIXTURE_SETUP(params)
{
	char err[256];

	ASSERT_EQ(0, guest_fw_device_init(&self->d));
	ASSERT_EQ(0, guest_image_init(&self->im, IMAGE, "pipelined", err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(params)
{
	guest_fw_device_fini(&self->d);
	guest_image_fini(&self->im);
}

struct user_arg {
	int minor;
	const void *image;
	size_t len;
	bool appliance;
};

/* A PARAMS job of @which on @slot by SUBMIT; the refusal, or its status. */
static int params_submit(int fd, uint32_t q, uint32_t h, bool write, uint64_t slot,
			 uint64_t which, uint64_t length)
{
	uint64_t args[4] = { slot, which, 0 };
	uint64_t job;
	int ret, status;

	ret = guest_submit(fd, q, write ? DRM_WSE_OP_PARAMS_WRITE : DRM_WSE_OP_PARAMS_READ, h, 0,
			   length, args, &job);
	if (ret)
		return ret;
	ret = guest_wait_job(fd, q, job, 10000, &status, NULL);
	return ret ?: status;
}

/* The same by io_uring, from @buf; the completion's result. */
static int params_uring(struct io_uring *ring, int fd, uint32_t q, void *buf, bool write,
			uint64_t slot, uint64_t which, uint32_t length)
{
	struct drm_wse_uring_job j = {
		.op = write ? DRM_WSE_OP_PARAMS_WRITE : DRM_WSE_OP_PARAMS_READ,
		.queue_id = q, .args = { slot, which, 0 }, .addr = (uintptr_t)buf,
		.length = length,
	};
	struct io_uring_cqe *cqe;
	int res;

	guest_uring_prep(io_uring_get_sqe(ring), fd, &j, 1, -1);
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/* A snapshot store request naming @name, in @buf. */
static void store_request(void *buf, const char *name)
{
	struct wse_link_snapshot_store *st = buf;

	memset(st, 0, sizeof(*st));
	st->step = 0;
	snprintf(st->name, sizeof(st->name), "%s", name);
}

/*
 * User 1000 on a system: what it may ask of its own program. Returns 0,
 * or the number of the first check that failed.
 */
static int on_a_system(void *p)
{
	const struct user_arg *a = p;
	static const uint64_t never[] = { 0, 3, 4, 5, 8, 1000 };
	struct io_uring ring;
	int fd = guest_open_accel(a->minor), n = 0, ret;
	uint32_t q, h;
	void *map;

	if (fd < 0 || guest_queue_create(fd, 1, 8, 30000, &q) ||
	    guest_bo(fd, 4096, &h, &map) || io_uring_queue_init(8, &ring, IORING_SETUP_SQE128))
		return 1;
	if (guest_load_program(fd, q, SLOT, a->image, a->len))
		return 2;
	/* Its own weights: yes. */
	if (params_submit(fd, q, h, false, SLOT, WSE_LINK_PARAMS_WEIGHTS, 4096))
		return 3;
	/* Kinds a system does not have, or none at all: refused before the firmware. */
	for (unsigned int i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		n = 10 + 2 * i;
		if (params_submit(fd, q, h, false, SLOT, never[i], 4096) != -EINVAL)
			return n;
		if (params_submit(fd, q, h, true, SLOT, never[i], 256) != -EINVAL)
			return n + 1;
	}
	/* A snapshot is stored, never read through this kind. */
	if (params_submit(fd, q, h, false, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE, 4096) != -EINVAL)
		return 30;
	/* A store request of the wrong size, or whose name never ends, is malformed. */
	store_request(map, "u1000/checkpoint");
	if (params_submit(fd, q, h, true, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE,
			  sizeof(struct wse_link_snapshot_store) - 8) != -EINVAL)
		return 35;
	memset(((struct wse_link_snapshot_store *)map)->name, 'u',
	       sizeof(((struct wse_link_snapshot_store *)map)->name));
	if (params_uring(&ring, fd, q, map, true, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE,
			 sizeof(struct wse_link_snapshot_store)) != -EINVAL)
		return 36;
	/* Only into the user's own area of the shared storage, by either path. */
	store_request(map, "u1001/checkpoint");
	if (params_submit(fd, q, h, true, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE,
			  sizeof(struct wse_link_snapshot_store)) != -EACCES)
		return 31;
	store_request(map, "checkpoint");
	if (params_uring(&ring, fd, q, map, true, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE,
			 sizeof(struct wse_link_snapshot_store)) != -EACCES)
		return 32;
	store_request(map, "u10000/checkpoint");
	if (params_uring(&ring, fd, q, map, true, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE,
			 sizeof(struct wse_link_snapshot_store)) != -EACCES)
		return 33;
	/* Its own area passes the driver (this firmware has no storage: EINVAL). */
	store_request(map, "u1000/checkpoint");
	ret = params_submit(fd, q, h, true, SLOT, WSE_LINK_PARAMS_SNAPSHOT_STORE,
			    sizeof(struct wse_link_snapshot_store));
	if (ret == -EACCES || params_uring(&ring, fd, q, map, true, SLOT,
					   WSE_LINK_PARAMS_SNAPSHOT_STORE,
					   sizeof(struct wse_link_snapshot_store)) == -EACCES)
		return 34;
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(params, which_on_a_system, 120)
{
	struct user_arg a = { 0, self->im.image, self->im.len, false };

	ASSERT_EQ(0, guest_fw_device_up(&self->d, NULL, NULL));
	ASSERT_EQ(0, guest_share_node(self->d.dev.accel_minor, &self->gid));
	a.minor = self->d.dev.accel_minor;
	EXPECT_EQ(0, guest_as_user(USER_UID, self->gid, 60000, on_a_system, &a));
}

/*
 * User 1000 on an appliance: the parts' state yes, the default job no,
 * its own slot's job and input yes, anything of a slot not its own no.
 */
static int on_an_appliance(void *p)
{
	const struct user_arg *a = p;
	struct wse_link_job job = { .systems = 1 };
	struct wse_link_input input = { .source = WSE_LINK_INPUT_STREAM };
	int fd = guest_open_accel(a->minor), ret;
	uint32_t q, h;
	void *map;

	if (fd < 0 || guest_queue_create(fd, 1, 8, 30000, &q) || guest_bo(fd, 65536, &h, &map))
		return 1;
	ret = params_submit(fd, q, h, false, 0, WSE_LINK_PARAMS_APPLIANCE, 65536);
	if (ret)
		return 2;
	/* The parts' state is slot 0's, and is only read. */
	if (params_submit(fd, q, h, false, SLOT, WSE_LINK_PARAMS_APPLIANCE, 65536) != -EINVAL ||
	    params_submit(fd, q, h, true, 0, WSE_LINK_PARAMS_APPLIANCE, 256) != -EINVAL)
		return 3;
	memcpy(map, &job, sizeof(job));
	/* Every user's default job is the administrator's. */
	if (params_submit(fd, q, h, true, 0, WSE_LINK_PARAMS_JOB, sizeof(job)) != -EPERM)
		return 4;
	/* Input of a slot that holds no program of the user's. */
	memcpy(map, &input, sizeof(input));
	if (params_submit(fd, q, h, true, 0, WSE_LINK_PARAMS_INPUT, sizeof(input)) != -EINVAL)
		return 5;
	if (params_submit(fd, q, h, true, SLOT + 1, WSE_LINK_PARAMS_INPUT, sizeof(input)) !=
	    -ENOENT)
		return 6;
	/* Its own slot's job claims the slot, and the appliance takes it. */
	memcpy(map, &job, sizeof(job));
	ret = params_submit(fd, q, h, true, SLOT, WSE_LINK_PARAMS_JOB, sizeof(job));
	if (ret)
		return 7;
	munmap(map, 65536);
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(params, which_on_an_appliance, 120)
{
	struct user_arg a = { 0, self->im.image, self->im.len, true };
	struct guest_peer appliance = { 0 };
	char addr[160];
	struct io_uring ring;
	uint32_t q, h;
	void *map;

	/* The appliance wsevm started on the host, or one of our own. */
	if (!guest_host_appliance(addr)) {
		ASSERT_EQ(0, guest_peer_start(&appliance, "wse-appliance", "--systems", "1",
					      "--fw-arg=--wafer=64x64", "--log-level", "warn",
					      NULL));
		snprintf(addr, sizeof(addr), "%s", appliance.addr);
	}
	ASSERT_EQ(0, guest_attach(self->d.ctl, addr, 0, &self->d.dev));
	self->d.attached = true;
	ASSERT_EQ(0, guest_share_node(self->d.dev.accel_minor, &self->gid));
	a.minor = self->d.dev.accel_minor;
	EXPECT_EQ(0, guest_as_user(USER_UID, self->gid, 60000, on_an_appliance, &a));

	/* An administrator sets the default job, by either path. */
	self->d.fd = guest_open_accel(self->d.dev.accel_minor);
	ASSERT_LE(0, self->d.fd);
	ASSERT_EQ(0, guest_queue_create(self->d.fd, 1, 8, 30000, &q));
	ASSERT_EQ(0, guest_bo(self->d.fd, 4096, &h, &map));
	((struct wse_link_job *)map)->systems = 1;
	EXPECT_EQ(0, params_submit(self->d.fd, q, h, true, 0, WSE_LINK_PARAMS_JOB,
				   sizeof(struct wse_link_job)));
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128));
	EXPECT_EQ(0, params_uring(&ring, self->d.fd, q, map, true, 0, WSE_LINK_PARAMS_JOB,
				  sizeof(struct wse_link_job)));
	io_uring_queue_exit(&ring);
	if (appliance.pid > 0) {
		close(self->d.fd);
		self->d.fd = -1;
		wse_ctl_detach(self->d.ctl, self->d.dev.index);
		self->d.attached = false;
		guest_peer_stop(&appliance, SIGTERM);
	}
}

TEST_HARNESS_MAIN
