// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may use a device, and what is whose (Documentation/uapi.rst,
 * "Ownership"): the accel node is root:accel 0660, as the udev rule of
 * packaging/60-wse.rules makes it; a user in that group trains without
 * root; another user, in the group too, can neither unload, overwrite,
 * read nor run the first one's program, nor reach device memory; a
 * user outside the group cannot open the node. Runs in the guest as
 * root, which sets the node up and forks the users.
 */
#include <grp.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse/wsep.h"
#include "wse_guest.h"

#define IMAGE "/tmp/owner-fc-mnist.wsep"
/* The users of this test: two in the rule's group, one outside it. */
#define OWNER_UID	1000
#define OTHER_UID	1001
#define OUTSIDER_UID	1002
#define SLOT		5

FIXTURE(owner) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status st;
	struct wsep_program *wsep;
	void *image;
	size_t len;
	bool attached;
	char node[64];
	gid_t gid;
};

FIXTURE_SETUP(owner)
{
	const struct group *gr = getgrnam(WSE_ACCESS_GROUP);
	char err[256];

	self->attached = false;
	self->image = NULL;
	self->wsep = NULL;
	self->fw.pid = 0;
	ASSERT_NE(NULL, gr) TH_LOG("no group '%s' in the guest's /etc/group", WSE_ACCESS_GROUP);
	self->gid = gr->gr_gid;
	ASSERT_EQ(0, guest_compile_fc_mnist(IMAGE, NULL, &self->image, &self->len, &self->wsep,
					    err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, chmod(IMAGE, 0644));
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &self->st));
	self->attached = true;
	/* What the udev rule does (mdev in the guest, which may not be done yet). */
	snprintf(self->node, sizeof(self->node), "/dev/accel/accel%d", self->st.accel_minor);
	ASSERT_EQ(0, chown(self->node, 0, self->gid));
	ASSERT_EQ(0, chmod(self->node, 0660));
}

FIXTURE_TEARDOWN(owner)
{
	if (self->attached)
		wse_ctl_detach(self->ctl, self->st.index);
	guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
	wsep_program_free(self->wsep);
	free(self->image);
	unlink(IMAGE);
}

/* Becomes user @uid, in group @gid if @member; 0 or -1. */
static int become(uid_t uid, gid_t gid, bool member)
{
	gid_t groups[1] = { gid };

	if (setgroups(member ? 1 : 0, groups) || setgid(uid) || setuid(uid))
		return -1;
	return 0;
}

/* One training step of the program in SLOT, through libwse. 0 or -errno. */
static int train_one_step(struct wse_dev *dev, uint32_t q, const struct wsep_program *w)
{
	struct wse_ring_params in_p = { .hw_queue = 1, .depth = 8 };
	struct wse_ring_params out_p = { .hw_queue = 2, .depth = 8 };
	uint32_t batch = w->batch;
	struct wsep_train_streams ts;
	struct wse_ring *in = NULL, *out = NULL;
	struct wse_run_result res;
	struct wse_bo result;
	uint8_t *x = calloc((size_t)batch, w->input_dim);
	int32_t *y = calloc(batch, 4), *pred = calloc(batch, 4);
	float *loss = calloc(batch, 4);
	uint64_t job;
	char err[256];
	int ret;

	ret = x && y && pred && loss ? 0 : -ENOMEM;
	if (!ret)
		ret = wsep_train_streams(w, &ts, err, sizeof(err));
	if (!ret)
		ret = wse_ring_open(dev, &in_p, &in);
	if (!ret)
		ret = wse_ring_open(dev, &out_p, &out);
	if (!ret)
		ret = wse_bo_alloc(dev, WSE_RUN_RESULT_BYTES, &result);
	if (!ret)
		ret = wse_bo_map(dev, &result);
	if (!ret)
		ret = wse_run_submit(dev, q, &result,
				     &(struct wse_run){ SLOT, WSE_RUN_TRAIN, 1, batch }, &job);
	if (!ret) {
		struct wse_stream_io io[] = {
			{ DRM_WSE_OP_STREAM_WRITE, w->streams[ts.samples].id, w->input_dim, x,
			  (size_t)batch * w->input_dim },
			{ DRM_WSE_OP_STREAM_WRITE, w->streams[ts.labels].id, 4, y, batch * 4 },
			{ DRM_WSE_OP_STREAM_READ, w->streams[ts.losses].id, 4, loss, batch * 4 },
			{ DRM_WSE_OP_STREAM_READ, w->streams[ts.predictions].id, 4, pred,
			  batch * 4 },
		};

		ret = wse_stream_batch(in, out, SLOT, io, 4);
	}
	if (!ret)
		ret = wse_run_wait(dev, q, job, &result, wse_deadline_ns(60000), &res);
	if (!ret && (res.steps != 1 || !(loss[0] > 0.0f)))
		ret = -EIO;
	wse_ring_close(in);
	wse_ring_close(out);
	free(x);
	free(y);
	free(pred);
	free(loss);
	return ret;
}

/* The other user's attempts on SLOT; each names the errno expected. */
static int intrude(const char *node, uint64_t image_len)
{
	uint64_t load[4] = { SLOT, 1, image_len, 0 };
	uint64_t ref[4] = { SLOT }, stream[4] = { SLOT, 0 }, params[4] = { SLOT, 1, 0 };
	uint64_t run[4] = { SLOT, 1, 1, 1 };
	int fd = open(node, O_RDWR | O_CLOEXEC);
	uint32_t q, h;
	uint64_t job;

	if (fd < 0)
		return 20;
	if (guest_queue_create(fd, 0, 8, 0, &q) || guest_bo(fd, 1 << 20, &h, NULL))
		return 21;
	if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_UNLOAD, 0, 0, 0, ref, &job) != -EACCES)
		return 22;
	if (guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, load, &job) != -EBUSY)
		return 23;
	if (guest_submit(fd, q, DRM_WSE_OP_PARAMS_READ, h, 0, 4096, params, &job) != -EACCES)
		return 24;
	if (guest_submit(fd, q, DRM_WSE_OP_STREAM_READ, h, 0, 4096, stream, &job) != -EACCES)
		return 25;
	if (guest_submit(fd, q, DRM_WSE_OP_STREAM_WRITE, h, 0, 4096, stream, &job) != -EACCES)
		return 26;
	if (guest_submit(fd, q, DRM_WSE_OP_RUN, h, 0, 4096, run, &job) != -EACCES)
		return 27;
	/* Device memory is every opener's: not for an unprivileged one. */
	if (guest_submit(fd, q, DRM_WSE_OP_MEM_READ, h, 0, 4096, NULL, &job) != -EPERM)
		return 28;
	if (guest_xfer(fd, h, DRM_WSE_XFER_FROM_DEVICE, 0, 0, 4096) != -EPERM)
		return 29;
	close(fd);
	return 0;
}

/* Reads one byte from @fd (the other side's go-ahead); 0 or -1. */
static int await(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

TEST_F_TIMEOUT(owner, group_member_trains_and_others_cannot_touch_it, 180)
{
	int loaded[2], done[2], status;
	char spec[16];
	pid_t owner, other, outsider;

	ASSERT_EQ(0, pipe(loaded));
	ASSERT_EQ(0, pipe(done));
	snprintf(spec, sizeof(spec), "%u", self->st.index);

	owner = fork();
	ASSERT_LE(0, owner);
	if (owner == 0) {
		struct wse_dev *dev;
		uint32_t q;
		int ret;

		if (become(OWNER_UID, self->gid, true))
			_exit(10);
		if (wse_open(spec, &dev))
			_exit(11);
		if (wse_queue_create(dev, 0, 8, 60000, &q) ||
		    wse_program_load(dev, q, SLOT, self->image, self->len, NULL))
			_exit(12);
		ret = train_one_step(dev, q, self->wsep);
		if (ret)
			_exit(13);
		if (write(loaded[1], "l", 1) != 1 || await(done[0]))
			_exit(14);
		/* Untouched by the other user: it trains on. */
		if (train_one_step(dev, q, self->wsep))
			_exit(15);
		wse_close(dev);
		_exit(0);
	}
	ASSERT_EQ(0, await(loaded[0]));

	other = fork();
	ASSERT_LE(0, other);
	if (other == 0)
		_exit(become(OTHER_UID, self->gid, true) ? 10 : intrude(self->node, self->len));
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the other user: step %d", WEXITSTATUS(status));

	outsider = fork();
	ASSERT_LE(0, outsider);
	if (outsider == 0)
		_exit(become(OUTSIDER_UID, self->gid, false) ? 10 :
		      open(self->node, O_RDWR) < 0 && errno == EACCES ? 0 : 11);
	ASSERT_EQ(outsider, waitpid(outsider, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("a user outside the group opened the node");

	ASSERT_EQ(1, write(done[1], "d", 1));
	ASSERT_EQ(owner, waitpid(owner, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the owner: step %d", WEXITSTATUS(status));
}

/*
 * A closed file's program is unloaded for it, and only then is its slot
 * free for another file: the next owner finds it empty.
 */
TEST_F(owner, slot_is_freed_once_its_program_is_unloaded)
{
	uint64_t ref[4] = { SLOT };
	struct wse_dev *dev;
	uint32_t q;
	char spec[16];
	int fd, ret = -1, i;
	uint64_t job;

	snprintf(spec, sizeof(spec), "%u", self->st.index);
	ASSERT_EQ(0, wse_open(spec, &dev));
	ASSERT_EQ(0, wse_queue_create(dev, 0, 8, 60000, &q));
	ASSERT_EQ(0, wse_program_load(dev, q, SLOT, self->image, self->len, NULL));
	fd = guest_open_accel(self->st.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_queue_create(fd, 0, 8, 0, &q));
	EXPECT_EQ(-EACCES, guest_submit(fd, q, DRM_WSE_OP_PROGRAM_UNLOAD, 0, 0, 0, ref, &job));
	wse_close(dev);
	/*
	 * Free once the firmware answered the unload: claim it then, with a
	 * first piece of an image too large for the device, which refuses it
	 * and keeps nothing of it (an unload drops a half-loaded image).
	 */
	for (i = 0; i < 100 && ret; i++) {
		uint32_t h;
		int status;
		uint64_t load[4] = { SLOT, 0, 1ULL << 40, 0 };

		if (guest_bo(fd, 4096, &h, NULL))
			break;
		ret = guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, 4096, load, &job);
		if (!ret)
			guest_wait_job(fd, q, job, 10000, &status, NULL);
		else
			usleep(20000);
	}
	EXPECT_EQ(0, ret) TH_LOG("the slot stayed taken");
	/* Now this file's: what was there is gone, and nothing of its own is. */
	EXPECT_EQ(-EINVAL, guest_submit(fd, q, DRM_WSE_OP_PROGRAM_UNLOAD, 0, 0, 0, ref, &job) ?:
		  (guest_wait_job(fd, q, job, 10000, &ret, NULL) ?: ret));
	close(fd);
}

TEST_HARNESS_MAIN
