// SPDX-License-Identifier: GPL-2.0-only
/*
 * libwse against the real kernel and a real wsefwd started in the guest:
 * opening by index, path and "any" and the refusals, info, buffer objects,
 * queues and submit/wait, io_uring transfers of many sizes and
 * misalignments (checksummed), large transfers split into many commands
 * with several in flight and batched submission, fixed buffers, events,
 * and errors turned into messages.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse_guest.h"

/* FNV-1a: a checksum that notices moved, lost and changed bytes. */
static uint64_t checksum(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = (uint8_t)s;
	}
}

FIXTURE(lib) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status st;
	struct wse_dev *dev;
	bool attached;
};

FIXTURE_SETUP(lib)
{
	char spec[16];

	self->attached = false;
	self->dev = NULL;
	self->fw.pid = 0;
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &self->st));
	self->attached = true;
	snprintf(spec, sizeof(spec), "%u", self->st.index);
	ASSERT_EQ(0, wse_open(spec, &self->dev));
}

FIXTURE_TEARDOWN(lib)
{
	wse_close(self->dev);
	if (self->attached)
		wse_ctl_detach(self->ctl, self->st.index);
	guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
}

TEST_F(lib, open_by_index_path_and_any)
{
	struct wse_dev *d;
	char path[64];

	EXPECT_EQ((int)self->st.index, wse_dev_index(self->dev));
	EXPECT_LE(0, wse_dev_fd(self->dev));

	snprintf(path, sizeof(path), "/dev/accel/accel%d", self->st.accel_minor);
	ASSERT_EQ(0, wse_open(path, &d));
	EXPECT_EQ((int)self->st.index, wse_dev_index(d));
	wse_close(d);

	/* "any" is a device with a live link: ours is the only one here. */
	ASSERT_EQ(0, wse_open("any", &d));
	EXPECT_EQ((int)self->st.index, wse_dev_index(d));
	wse_close(d);
}

TEST_F(lib, open_refusals)
{
	struct wse_dev_status *list = NULL;
	struct wse_dev *d = (struct wse_dev *)1;
	size_t n, i;
	char spec[16];

	EXPECT_EQ(-EINVAL, wse_open(NULL, &d));
	EXPECT_EQ(NULL, d);
	EXPECT_EQ(-EINVAL, wse_open("", &d));
	EXPECT_EQ(-EINVAL, wse_open("bogus", &d));
	EXPECT_EQ(-EINVAL, wse_open("-1", &d));
	EXPECT_EQ(-EINVAL, wse_open("1x", &d));
	EXPECT_EQ(-EINVAL, wse_open("99999999999", &d));
	EXPECT_EQ(-EINVAL, wse_open("Any", &d));
	EXPECT_EQ(-ENODEV, wse_open("63", &d));
	EXPECT_EQ(-ENOENT, wse_open("/dev/accel/no-such-node", &d));
	EXPECT_EQ(-ENOTTY, wse_open("/dev/null", &d));
	EXPECT_EQ(NULL, d);

	/* Without a live link "any" finds nothing (a test device has none). */
	ASSERT_EQ(0, wse_ctl_detach(self->ctl, self->st.index));
	self->attached = false;
	EXPECT_EQ(-ENODEV, wse_open("any", &d));
	/* A link-less test device opens by index but takes no transfers. */
	ASSERT_EQ(0, wse_ctl_list(self->ctl, &list, &n));
	for (i = 0; i < n; i++) {
		struct wse_ring *r;
		struct wse_info info;

		if (list[i].link_state != WSE_LINK_STATE_NONE)
			continue;
		snprintf(spec, sizeof(spec), "%u", list[i].index);
		ASSERT_EQ(0, wse_open(spec, &d));
		ASSERT_EQ(0, wse_info(d, &info));
		EXPECT_EQ(0, info.caps & DRM_WSE_CAP_LINK);
		EXPECT_EQ(0, info.max_job_bytes);
		EXPECT_EQ(-ENOTCONN, wse_ring_open(d, NULL, &r));
		wse_close(d);
	}
	free(list);
}

TEST_F(lib, info)
{
	struct wse_info info;

	ASSERT_EQ(0, wse_info(self->dev, &info));
	EXPECT_EQ(DRM_WSE_CAP_BO | DRM_WSE_CAP_LINK | DRM_WSE_CAP_MEM_XFER | DRM_WSE_CAP_JOBS,
		  info.caps);
	EXPECT_EQ(64, info.dev.wafer_width);
	EXPECT_EQ(64, info.dev.wafer_height);
	EXPECT_EQ(self->st.sram_total, info.dev.sram_total);
	EXPECT_EQ(self->st.num_queues, info.dev.num_queues);
	EXPECT_EQ(self->st.device_id, info.dev.device_id);
	EXPECT_LT(4096, info.max_job_bytes);
	EXPECT_LE(info.max_job_bytes, info.max_bo_size);
}

TEST_F(lib, buffer_objects)
{
	struct wse_info info;
	struct wse_bo bo, other;

	ASSERT_EQ(0, wse_info(self->dev, &info));
	ASSERT_EQ(0, wse_bo_alloc(self->dev, 5000, &bo));
	EXPECT_NE(0, bo.handle);
	EXPECT_EQ(8192, bo.size);
	EXPECT_EQ(NULL, bo.map);
	ASSERT_EQ(0, wse_bo_map(self->dev, &bo));
	ASSERT_NE(NULL, bo.map);
	EXPECT_EQ(0, ((uint8_t *)bo.map)[8191]);	/* zero-filled */
	memset(bo.map, 0xa5, bo.size);
	ASSERT_EQ(0, wse_bo_alloc(self->dev, 1, &other));
	EXPECT_NE(bo.handle, other.handle);
	EXPECT_EQ(0, wse_bo_free(self->dev, &other));
	EXPECT_EQ(0, wse_bo_free(self->dev, &bo));
	EXPECT_EQ(NULL, bo.map);

	EXPECT_EQ(-EINVAL, wse_bo_alloc(self->dev, 0, &bo));
	EXPECT_EQ(-E2BIG, wse_bo_alloc(self->dev, info.max_bo_size + 1, &bo));
	bo.handle = 4242;
	EXPECT_EQ(-EINVAL, wse_bo_free(self->dev, &bo));	/* GEM_CLOSE of no handle */
	bo.handle = 4242;
	EXPECT_EQ(-ENOENT, wse_bo_map(self->dev, &bo));
}

TEST_F(lib, queues_submit_and_wait)
{
	struct wse_job job = { .op = DRM_WSE_OP_MEM_WRITE, .length = 100000, .args = { 12345 } };
	struct wse_bo w, r;
	uint64_t j1, j2;
	uint32_t q, q1, len;
	int status;

	ASSERT_EQ(0, wse_queue_create(self->dev, 0, 4, 0, &q));
	ASSERT_EQ(0, wse_bo_alloc(self->dev, 1 << 17, &w));
	ASSERT_EQ(0, wse_bo_alloc(self->dev, 1 << 17, &r));
	ASSERT_EQ(0, wse_bo_map(self->dev, &w));
	ASSERT_EQ(0, wse_bo_map(self->dev, &r));
	fill(w.map, 1 << 17, 1);

	job.handle = w.handle;
	job.bo_offset = 3;
	ASSERT_EQ(0, wse_submit(self->dev, q, &job, &j1));
	job.op = DRM_WSE_OP_MEM_READ;
	job.handle = r.handle;
	job.bo_offset = 11;
	ASSERT_EQ(0, wse_submit(self->dev, q, &job, &j2));
	EXPECT_EQ(j1 + 1, j2);
	ASSERT_EQ(0, wse_wait(self->dev, q, j1, wse_deadline_ns(20000), &status, &len));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, wse_wait(self->dev, q, j2, wse_deadline_ns(20000), &status, &len));
	EXPECT_EQ(0, status);
	EXPECT_EQ(100000, len);
	EXPECT_EQ(checksum((uint8_t *)w.map + 3, 100000), checksum((uint8_t *)r.map + 11, 100000));
	/* Collected: the id is gone. */
	EXPECT_EQ(-ENOENT, wse_wait(self->dev, q, j2, 0, &status, NULL));

	/* A full queue says so, and the message says what to do. */
	ASSERT_EQ(0, wse_queue_create(self->dev, 1, 1, 0, &q1));
	job.op = DRM_WSE_OP_MEM_WRITE;
	job.handle = w.handle;
	ASSERT_EQ(0, wse_submit(self->dev, q1, &job, &j1));
	EXPECT_EQ(-EBUSY, wse_submit(self->dev, q1, &job, &j2));
	EXPECT_NE(NULL, strstr(wse_strerror(-EBUSY), "queue full"));
	ASSERT_EQ(0, wse_wait(self->dev, q1, j1, wse_deadline_ns(20000), &status, NULL));
	EXPECT_EQ(0, status);

	/* The firmware's refusal is the job's status. */
	job.args[0] = self->st.sram_total - 10;
	ASSERT_EQ(0, wse_submit(self->dev, q1, &job, &j1));
	ASSERT_EQ(0, wse_wait(self->dev, q1, j1, wse_deadline_ns(20000), &status, NULL));
	EXPECT_EQ(-ERANGE, status);

	job.length = 0;
	EXPECT_EQ(-EINVAL, wse_submit(self->dev, q1, &job, &j1));
	EXPECT_EQ(-ENOENT, wse_submit(self->dev, q1 + 100, &job, &j1));
	EXPECT_EQ(0, wse_queue_destroy(self->dev, q1));
	EXPECT_EQ(-ENOENT, wse_queue_destroy(self->dev, q1));
	EXPECT_EQ(-EINVAL, wse_queue_create(self->dev, 0, 0, 0, &q1));
	EXPECT_EQ(-EINVAL, wse_queue_create(self->dev, 0, 257, 0, &q1));
	EXPECT_EQ(0, wse_queue_destroy(self->dev, q));
	wse_bo_free(self->dev, &w);
	wse_bo_free(self->dev, &r);
}

/* Every size and misalignment, both directions, checksummed. */
TEST_F(lib, ring_sizes_and_misalignments)
{
	struct wse_info info;
	struct wse_ring *ring;
	size_t sizes[] = { 1, 3, 4095, 4096, 4097, 65549, (1 << 20) + 7, 0 };
	size_t k, cap;
	uint8_t *w, *r;

	ASSERT_EQ(0, wse_info(self->dev, &info));
	sizes[7] = 2 * info.max_job_bytes + 5;	/* three commands */
	cap = sizes[7] + 64;
	w = malloc(cap);
	r = malloc(cap);
	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, wse_ring_open(self->dev, NULL, &ring));
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t woff = k % 8, roff = (k * 5 + 3) % 16;
		uint64_t addr = 1000003ULL * k + k;

		fill(w + woff, sizes[k], (unsigned int)k + 10);
		memset(r, 0, cap);
		ASSERT_EQ(0, wse_mem_write(ring, addr, w + woff, sizes[k]));
		ASSERT_EQ(0, wse_mem_read(ring, addr, r + roff, sizes[k]));
		EXPECT_EQ(checksum(w + woff, sizes[k]), checksum(r + roff, sizes[k])) {
			TH_LOG("size %zu at device address %llu", sizes[k],
			       (unsigned long long)addr);
		}
		EXPECT_EQ(0, r[roff + sizes[k]]);	/* nothing written past the end */
	}
	wse_ring_close(ring);
	free(w);
	free(r);
}

/* A large transfer in many pieces: several in flight, batched submission. */
TEST_F(lib, ring_splits_large_transfers)
{
	struct wse_ring_params p = { .hw_queue = 2, .depth = 16, .batch = 4, .piece = 65536 };
	struct wse_ring_stats st;
	struct wse_ring *ring;
	const size_t len = (2 << 20) + 100;	/* 33 pieces */
	struct wse_xfer x = { .op = DRM_WSE_OP_MEM_READ, .args = { 777 }, .len = len };
	uint8_t *w = malloc(len), *r = calloc(1, len);
	size_t done = 0;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, r);
	fill(w, len, 3);
	ASSERT_EQ(0, wse_ring_open(self->dev, &p, &ring));
	ASSERT_EQ(0, wse_mem_write(ring, 777, w, len));
	wse_ring_get_stats(ring, &st);
	EXPECT_EQ(33, st.commands);
	EXPECT_LT(1, st.max_inflight);
	EXPECT_GE(16, st.max_inflight);
	EXPECT_LT(st.submits, st.commands);	/* batched */
	EXPECT_EQ(0, st.fixed);
	x.buf = r;
	ASSERT_EQ(0, wse_ring_xfer(ring, &x, &done));
	EXPECT_EQ(len, done);
	EXPECT_EQ(checksum(w, len), checksum(r, len));
	wse_ring_get_stats(ring, &st);
	EXPECT_EQ(66, st.commands);
	wse_ring_close(ring);

	/* Out-of-range parameters are refused. */
	p.depth = 257;
	EXPECT_EQ(-EINVAL, wse_ring_open(self->dev, &p, &ring));
	p.depth = 4;
	p.hw_queue = 99;
	EXPECT_EQ(-EINVAL, wse_ring_open(self->dev, &p, &ring));
	free(w);
	free(r);
}

/* Registered buffers: transfers inside them go as fixed-buffer commands. */
TEST_F(lib, ring_fixed_buffers)
{
	const size_t len = 3 << 20;
	struct wse_ring_stats st;
	struct wse_ring *ring;
	struct iovec iov[2];
	uint8_t *bufs = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *plain = malloc(4096);

	ASSERT_NE(MAP_FAILED, bufs);
	ASSERT_NE(NULL, plain);
	iov[0].iov_base = bufs;
	iov[0].iov_len = len;
	iov[1].iov_base = bufs + len;
	iov[1].iov_len = len;
	ASSERT_EQ(0, wse_ring_open(self->dev, NULL, &ring));
	ASSERT_EQ(0, wse_ring_register(ring, iov, 2));
	EXPECT_EQ(-EBUSY, wse_ring_register(ring, iov, 2));
	fill(bufs + 5, len - 5, 77);
	ASSERT_EQ(0, wse_mem_write(ring, 4096, bufs + 5, len - 5));
	ASSERT_EQ(0, wse_mem_read(ring, 4096, bufs + len + 1, len - 5));
	EXPECT_EQ(checksum(bufs + 5, len - 5), checksum(bufs + len + 1, len - 5));
	wse_ring_get_stats(ring, &st);
	EXPECT_EQ(st.commands, st.fixed);
	EXPECT_LT(0, st.fixed);

	/* Memory outside the registered buffers still works, plainly. */
	memcpy(plain, bufs + 5, 4096);
	ASSERT_EQ(0, wse_mem_read(ring, 4096, plain, 4096));
	wse_ring_get_stats(ring, &st);
	EXPECT_EQ(st.commands - 1, st.fixed);
	/* A range straddling two buffers is not fixed either. */
	ASSERT_EQ(0, wse_mem_read(ring, 4096, bufs + len - 100, 200));
	wse_ring_get_stats(ring, &st);
	EXPECT_EQ(st.commands - 2, st.fixed);
	EXPECT_EQ(0, memcmp(bufs + len - 100, bufs + 5, 200));

	EXPECT_EQ(0, wse_ring_unregister(ring));
	EXPECT_EQ(-ENOENT, wse_ring_unregister(ring));
	wse_ring_close(ring);
	munmap(bufs, 2 * len);
	free(plain);
}

/* Single commands and the errors of transfers, with their messages. */
TEST_F(lib, ring_commands_and_errors)
{
	struct wse_completion c[8];
	struct wse_ring_params p = { .depth = 2 };
	struct wse_ring *ring;
	uint8_t buf[256];
	struct wse_cmd cmd = { .op = DRM_WSE_OP_MEM_WRITE, .buf = buf, .len = sizeof(buf) };
	int n, i;

	memset(buf, 7, sizeof(buf));
	ASSERT_EQ(0, wse_ring_open(self->dev, &p, &ring));
	cmd.user_data = 1;
	ASSERT_EQ(0, wse_ring_prep(ring, &cmd));
	cmd.user_data = 2;
	cmd.args[0] = self->st.sram_total;	/* past device memory */
	ASSERT_EQ(0, wse_ring_prep(ring, &cmd));
	EXPECT_EQ(-EBUSY, wse_ring_prep(ring, &cmd));	/* depth 2 */
	EXPECT_EQ(-EBUSY, wse_mem_write(ring, 0, buf, 1));	/* commands pending */
	ASSERT_EQ(2, wse_ring_submit(ring));
	n = 0;
	for (i = 0; i < 10 && n < 2; i++) {
		int got = wse_ring_reap(ring, c + n, 8 - n, 1, wse_deadline_ns(20000));

		ASSERT_LT(0, got);
		n += got;
	}
	ASSERT_EQ(2, n);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(c[i].user_data == 1 ? 0 : -ERANGE, c[i].res);
	EXPECT_EQ(-EINVAL, wse_ring_reap(ring, c, 8, 1, 0));	/* nothing in flight */

	EXPECT_EQ(-ERANGE, wse_mem_write(ring, self->st.sram_total - 1, buf, 2));
	EXPECT_EQ(-ERANGE, wse_mem_read(ring, self->st.sram_total, buf, 1));
	EXPECT_EQ(-EINVAL, wse_mem_write(ring, 0, buf, 0));
	EXPECT_EQ(-EINVAL, wse_mem_write(ring, 0, NULL, 10));
	wse_ring_close(ring);

	/* Messages: specific where the project's meaning is, strerror otherwise. */
	EXPECT_STREQ("success", wse_strerror(0));
	EXPECT_NE(NULL, strstr(wse_strerror(-ENOTCONN), "link is down"));
	EXPECT_NE(NULL, strstr(wse_strerror(-ERANGE), "device memory"));
	EXPECT_STREQ(wse_strerror(-ENODEV), wse_strerror(ENODEV));
	EXPECT_STREQ(strerror(EPERM), wse_strerror(-EPERM));
	EXPECT_NE(NULL, wse_strerror(-123456));
}

/* Events of this device only, through the control plane. */
TEST_F(lib, events)
{
	struct wse_dev_status other;
	struct guest_peer fw2 = { 0 };
	struct wse_event ev;
	struct wse_ctl *sub;

	ASSERT_EQ(0, wse_ctl_open(&sub));
	ASSERT_EQ(0, wse_ctl_subscribe(sub));
	/* Another device's events are not this one's. */
	ASSERT_EQ(0, guest_peer_start(&fw2, "wsefwd", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, fw2.addr, 0, &other));
	ASSERT_EQ(0, wse_ctl_detach(self->ctl, other.index));
	EXPECT_EQ(-ETIMEDOUT, wse_dev_next_event(self->dev, sub, 300, &ev));
	ASSERT_EQ(0, wse_ctl_detach(self->ctl, self->st.index));
	self->attached = false;
	ASSERT_EQ(0, wse_dev_next_event(self->dev, sub, 5000, &ev));
	EXPECT_EQ(self->st.index, ev.index);
	EXPECT_EQ(WSE_EVENT_LINK_DOWN, ev.event);
	wse_ctl_close(sub);
	guest_peer_stop(&fw2, SIGKILL);
}

TEST_HARNESS_MAIN
