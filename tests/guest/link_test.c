// SPDX-License-Identifier: GPL-2.0-only
/*
 * The network link and its control plane: attach and detach, many times
 * and several devices at once; refusals (version, privileges, bad sockets);
 * data moved to device memory and back; the firmware killed mid-transfer;
 * each of wsefwd's fault knobs; events. Runs in the guest as root, with
 * wsefwd started inside the guest on unix sockets so it can be killed.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "wse/link_io.h"
#include "wse_guest.h"

FIXTURE(link) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	int attached[8];
	int nattached;
};

FIXTURE_SETUP(link)
{
	self->nattached = 0;
	self->fw.pid = 0;
	ASSERT_EQ(0, wse_ctl_open(&self->ctl)) TH_LOG("is wse.ko loaded?");
}

FIXTURE_TEARDOWN(link)
{
	int i;

	for (i = 0; i < self->nattached; i++)
		wse_ctl_detach(self->ctl, self->attached[i]);
	guest_peer_stop(&self->fw, SIGTERM);
	wse_ctl_close(self->ctl);
}

static int attach_tracked(struct __test_metadata *_metadata, FIXTURE_DATA(link) *self,
			  const char *addr, uint32_t keepalive_ms, struct wse_dev_status *dev)
{
	int ret = guest_attach(self->ctl, addr, keepalive_ms, dev);

	(void)_metadata;
	if (!ret && self->nattached < 8)
		self->attached[self->nattached++] = (int)dev->index;
	return ret;
}

static void forget(FIXTURE_DATA(link) *self, uint32_t index)
{
	int i;

	for (i = 0; i < self->nattached; i++) {
		if (self->attached[i] == (int)index) {
			self->attached[i] = self->attached[--self->nattached];
			return;
		}
	}
}

TEST_F(link, attach_reports_firmware_and_detach_removes)
{
	struct wse_dev_status dev, again;
	struct stat st;
	char path[64];

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "96x64",
				      "--sram-per-pe", "32K", "--device-id", "77", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev))
		TH_LOG("%s", wse_ctl_error(self->ctl) ?: "");
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
	EXPECT_EQ(96, dev.wafer_width);
	EXPECT_EQ(64, dev.wafer_height);
	EXPECT_EQ(32768, dev.sram_per_pe);
	EXPECT_EQ(96ULL * 64 * 32768, dev.sram_total);
	EXPECT_EQ(77, dev.device_id);
	EXPECT_EQ(1, dev.proto_version);
	EXPECT_LE(0, dev.accel_minor);

	snprintf(path, sizeof(path), "/dev/accel/accel%d", dev.accel_minor);
	EXPECT_EQ(0, stat(path, &st));
	ASSERT_EQ(0, wse_ctl_get(self->ctl, dev.index, false, &again));
	EXPECT_STREQ(dev.peer, again.peer);

	ASSERT_EQ(0, wse_ctl_detach(self->ctl, dev.index));
	forget(self, dev.index);
	EXPECT_EQ(-ENODEV, wse_ctl_get(self->ctl, dev.index, false, &again));
	EXPECT_NE(0, stat(path, &st));
	EXPECT_EQ(-ENODEV, wse_ctl_detach(self->ctl, dev.index));
}

/* The accel device reports what the firmware said, through the UAPI too. */
TEST_F(link, device_info_ioctl_matches_firmware)
{
	struct drm_wse_device_info info;
	struct drm_wse_get_info q = { .param = DRM_WSE_PARAM_DEVICE_INFO,
				      .size = sizeof(info), .ptr = (uintptr_t)&info };
	struct wse_dev_status dev;
	uint64_t caps = 0;
	int fd;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "wse3", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_ioctl(fd, DRM_IOCTL_WSE_GET_INFO, &q));
	EXPECT_EQ(dev.wafer_width, info.wafer_width);
	EXPECT_EQ(dev.wafer_height, info.wafer_height);
	EXPECT_EQ(dev.sram_total, info.sram_total);
	EXPECT_STREQ(dev.fw_version, info.fw_version);
	q.param = DRM_WSE_PARAM_CAPABILITIES;
	q.size = sizeof(caps);
	q.ptr = (uintptr_t)&caps;
	ASSERT_EQ(0, guest_ioctl(fd, DRM_IOCTL_WSE_GET_INFO, &q));
	EXPECT_TRUE(caps & DRM_WSE_CAP_LINK);
	EXPECT_TRUE(caps & DRM_WSE_CAP_MEM_XFER);
	close(fd);
}

TEST_F_TIMEOUT(link, attach_detach_cycles, 180)
{
	struct wse_dev_status dev;
	int i;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &dev))
			TH_LOG("cycle %d: %s", i, wse_ctl_error(self->ctl) ?: "");
		ASSERT_EQ(0, wse_ctl_detach(self->ctl, dev.index)) TH_LOG("cycle %d", i);
	}
}

TEST_F(link, two_devices_at_once)
{
	struct wse_dev_status a, b, *list;
	struct guest_peer fw2 = { 0 };
	size_t n, i, seen = 0;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--device-id", "11", NULL));
	ASSERT_EQ(0, guest_peer_start(&fw2, "wsefwd", "--device-id", "22", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &a));
	ASSERT_EQ(0, attach_tracked(_metadata, self, fw2.addr, 0, &b));
	EXPECT_NE(a.index, b.index);
	EXPECT_NE(a.accel_minor, b.accel_minor);
	ASSERT_EQ(0, wse_ctl_list(self->ctl, &list, &n));
	for (i = 0; i < n; i++) {
		if (list[i].index == a.index)
			seen += list[i].device_id == 11;
		if (list[i].index == b.index)
			seen += list[i].device_id == 22;
	}
	free(list);
	EXPECT_EQ(2, seen);
	/* Killing one leaves the other up. */
	guest_peer_stop(&fw2, SIGKILL);
	EXPECT_EQ(0, guest_wait_state(self->ctl, b.index, WSE_LINK_STATE_DEAD, 5000, &b));
	EXPECT_EQ(0, wse_ctl_get(self->ctl, a.index, false, &a));
	EXPECT_EQ(WSE_LINK_STATE_UP, a.link_state);
}

/* A device serves one host: a second attach to it is refused with EBUSY. */
TEST_F(link, firmware_serves_one_host)
{
	struct wse_dev_status a, b;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &a));
	EXPECT_EQ(-EBUSY, guest_attach(self->ctl, self->fw.addr, 0, &b));
	EXPECT_NE(NULL, wse_ctl_error(self->ctl));
	EXPECT_EQ(0, wse_ctl_get(self->ctl, a.index, false, &a));
	EXPECT_EQ(WSE_LINK_STATE_UP, a.link_state);
}

/* The peer in this test answers HELLO from a thread, as a device that
 * speaks only protocol version 7 would.
 */
static void *version7_device(void *arg)
{
	int fd = *(int *)arg;
	struct wse_link_frame f;
	struct wse_link_err err;
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = 4096 };
	char buf[4096];
	struct wse_link_status st = { .status = WSE_LINK_E_VERSION };
	const char text[] = "device speaks 7..7";
	struct iovec iov[2] = {
		{ .iov_base = &st, .iov_len = sizeof(st) },
		{ .iov_base = (void *)text, .iov_len = sizeof(text) - 1 },
	};

	if (wse_link_recv(fd, &rules, &f, buf, sizeof(buf), 5000, &err) == 0) {
		f.flags = WSE_LINK_F_RESPONSE;
		wse_link_send(fd, &f, iov, 2, 5000, &err);
	}
	return NULL;
}

TEST_F(link, version_mismatch_refused_with_message)
{
	struct wse_dev_status dev;
	pthread_t t;
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pthread_create(&t, NULL, version7_device, &sv[1]));
	EXPECT_EQ(-EPROTONOSUPPORT, wse_ctl_attach_fd(self->ctl, sv[0], 0, &dev));
	ASSERT_NE(NULL, wse_ctl_error(self->ctl));
	EXPECT_NE(NULL, strstr(wse_ctl_error(self->ctl), "version"))
		TH_LOG("%s", wse_ctl_error(self->ctl));
	EXPECT_NE(NULL, strstr(wse_ctl_error(self->ctl), "7..7"))
		TH_LOG("%s", wse_ctl_error(self->ctl));
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* A peer that never answers HELLO cannot hang the caller. */
TEST_F(link, silent_peer_times_out_hello)
{
	struct wse_dev_status dev;
	int64_t start;
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	start = guest_now_ms();
	EXPECT_EQ(-ETIMEDOUT, wse_ctl_attach_fd(self->ctl, sv[0], 0, &dev));
	EXPECT_GT(15000, guest_now_ms() - start);
	close(sv[0]);
	close(sv[1]);
}

TEST_F(link, attach_refuses_what_is_not_a_stream_socket)
{
	struct wse_dev_status dev;
	int sv[2], fd;

	fd = open("/dev/null", O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTSOCK, wse_ctl_attach_fd(self->ctl, fd, 0, &dev));
	close(fd);
	EXPECT_EQ(-EBADF, wse_ctl_attach_fd(self->ctl, 9999, 0, &dev));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	EXPECT_EQ(-EINVAL, wse_ctl_attach_fd(self->ctl, sv[0], 0, &dev));
	close(sv[0]);
	close(sv[1]);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, wse_ctl_attach_fd(self->ctl, fd, 0, &dev));
	close(fd);
	/* A stream socket that is not connected. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTCONN, wse_ctl_attach_fd(self->ctl, fd, 0, &dev));
	close(fd);
}

TEST_F(link, keepalive_out_of_range_refused)
{
	struct wse_dev_status dev;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	EXPECT_EQ(-ERANGE, guest_attach(self->ctl, self->fw.addr, 10, &dev));
	EXPECT_EQ(-ERANGE, guest_attach(self->ctl, self->fw.addr, 3600000, &dev));
}

TEST_F(link, unprivileged_attach_detach_reset_refused)
{
	struct wse_dev_status dev;
	pid_t pid;
	int status;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct wse_dev_status d;
		struct wse_ctl *ctl;
		char err[256];
		int bad = 0, fd;

		/* Connected while privileged: only the netlink check is tested. */
		if (wse_ctl_connect(self->fw.addr, &fd, err, sizeof(err)))
			_exit(12);
		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (wse_ctl_open(&ctl))
			_exit(11);
		bad |= (wse_ctl_attach_fd(ctl, fd, 0, &d) != -EPERM) << 0;
		bad |= (wse_ctl_detach(ctl, dev.index) != -EPERM) << 1;
		bad |= (wse_ctl_reset(ctl, dev.index) != -EPERM) << 2;
		/* Looking is allowed. */
		bad |= (wse_ctl_get(ctl, dev.index, true, &d) != 0) << 3;
		wse_ctl_close(ctl);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("bit mask of wrong answers");
	EXPECT_EQ(0, wse_ctl_get(self->ctl, dev.index, false, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
}

static uint32_t pattern(uint64_t i, uint32_t seed)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;

	x ^= x >> 29;
	return (uint32_t)(x * 0xbf58476d1ce4e5b9ULL >> 32);
}

/* Data written to device memory comes back intact, for many sizes and
 * misaligned offsets, through frames of the negotiated size.
 */
TEST_F(link, device_memory_round_trip)
{
	static const uint64_t sizes[] = { 1, 3, 4096, 65537, (5 << 20) + 7 };
	struct wse_dev_status dev;
	uint32_t hw, hr;
	unsigned char *w, *r;
	unsigned int i;
	uint64_t j;
	int fd;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--max-payload", "64K", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_bo(fd, 6 << 20, &hw, (void **)&w));
	ASSERT_EQ(0, guest_bo(fd, 6 << 20, &hr, (void **)&r));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t off = i * 3 + 1, addr = 1000003ULL * i + 5;

		for (j = 0; j < sizes[i]; j++)
			w[off + j] = (unsigned char)pattern(j, i);
		memset(r, 0, 6 << 20);
		ASSERT_EQ(0, guest_xfer(fd, hw, DRM_WSE_XFER_TO_DEVICE, off, addr, sizes[i]))
			TH_LOG("size %llu", (unsigned long long)sizes[i]);
		ASSERT_EQ(0, guest_xfer(fd, hr, DRM_WSE_XFER_FROM_DEVICE, off + 1, addr, sizes[i]));
		ASSERT_EQ(0, memcmp(w + off, r + off + 1, sizes[i]))
			TH_LOG("size %llu differs", (unsigned long long)sizes[i]);
	}
	close(fd);
}

TEST_F(link, mem_xfer_bad_arguments)
{
	struct drm_wse_mem_xfer x;
	struct wse_dev_status dev;
	uint32_t h;
	int fd;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "16x16", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_bo(fd, 8192, &h, NULL));

	EXPECT_EQ(-EINVAL, guest_xfer(fd, h, 0, 0, 0, 16));
	EXPECT_EQ(-EINVAL, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE | DRM_WSE_XFER_FROM_DEVICE,
				      0, 0, 16));
	EXPECT_EQ(-EINVAL, guest_xfer(fd, h, 0x80, 0, 0, 16));
	EXPECT_EQ(-EINVAL, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 0, 0, 0));
	EXPECT_EQ(-EINVAL, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 8000, 0, 1000));
	EXPECT_EQ(-EINVAL, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, UINT64_MAX, 0, 2));
	EXPECT_EQ(-ENOENT, guest_xfer(fd, h + 100, DRM_WSE_XFER_TO_DEVICE, 0, 0, 16));
	/* Past the end of device memory, and wrapping around. */
	EXPECT_EQ(-ERANGE, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 0, dev.sram_total - 8, 16));
	EXPECT_EQ(-ERANGE, guest_xfer(fd, h, DRM_WSE_XFER_FROM_DEVICE, 0, UINT64_MAX - 4, 16));
	EXPECT_EQ(0, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 0, dev.sram_total - 16, 16));

	memset(&x, 0, sizeof(x));
	x.handle = h;
	x.flags = DRM_WSE_XFER_TO_DEVICE;
	x.length = 16;
	x.pad = 1;
	EXPECT_EQ(-EINVAL, guest_ioctl(fd, DRM_IOCTL_WSE_MEM_XFER, &x));
	x.pad = 0;
	x.timeout_ms = 3600000;
	EXPECT_EQ(-EINVAL, guest_ioctl(fd, DRM_IOCTL_WSE_MEM_XFER, &x));
	close(fd);
}

struct killer {
	pid_t pid;
	int delay_ms;
};

static void *kill_later(void *arg)
{
	struct killer *k = arg;

	usleep(k->delay_ms * 1000);
	kill(k->pid, SIGKILL);
	return NULL;
}

/* The firmware dies while data is moving: the transfer fails with
 * ENOTCONN promptly, the device goes dead, nothing hangs, and a new
 * firmware can be attached afterwards.
 */
TEST_F(link, firmware_killed_mid_transfer)
{
	struct wse_dev_status dev;
	struct killer k;
	uint64_t size = 32 << 20;
	int64_t start, killed_at;
	pthread_t t;
	uint32_t h;
	void *p;
	int fd, ret = 0, i;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_bo(fd, size, &h, &p));
	memset(p, 0x3c, size);

	k.pid = self->fw.pid;
	k.delay_ms = 150;
	start = guest_now_ms();
	ASSERT_EQ(0, pthread_create(&t, NULL, kill_later, &k));
	/* Bounded: the firmware is gone long before this many transfers. */
	for (i = 0; i < 200 && !ret; i++)
		ret = guest_xfer(fd, h, i & 1 ? DRM_WSE_XFER_FROM_DEVICE : DRM_WSE_XFER_TO_DEVICE,
				 0, 0, size);
	pthread_join(t, NULL);
	killed_at = start + k.delay_ms;
	EXPECT_EQ(-ENOTCONN, ret) TH_LOG("after %d transfers", i);
	/* EOF is seen at once; the keepalive bound (3 s) is the most. */
	EXPECT_GT(3000, guest_now_ms() - killed_at);
	waitpid(self->fw.pid, NULL, 0);
	self->fw.pid = 0;

	ASSERT_EQ(0, guest_wait_state(self->ctl, dev.index, WSE_LINK_STATE_DEAD, 3000, &dev));
	EXPECT_EQ(1, dev.stats.link_downs);
	EXPECT_EQ(0, dev.stats.inflight);
	/* Later calls fail at once. */
	EXPECT_EQ(-ENOTCONN, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 0, 0, 4096));

	/* Detach while the file is still open, then bring a new one up. */
	ASSERT_EQ(0, wse_ctl_detach(self->ctl, dev.index));
	forget(self, dev.index);
	EXPECT_EQ(-ENODEV, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 0, 0, 4096));
	munmap(p, size);
	close(fd);
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
}

struct xfer_loop {
	int fd;
	uint32_t handle;
	uint64_t size;
	int result;
	int count;
};

static void *xfer_until_error(void *arg)
{
	struct xfer_loop *x = arg;
	int i;

	x->result = 0;
	for (i = 0; i < 1000 && !x->result; i++) {
		x->result = guest_xfer(x->fd, x->handle, DRM_WSE_XFER_TO_DEVICE, 0, 0, x->size);
		/* A signal (SIGCHLD of a stopped firmware) ends a wait: go on. */
		if (x->result == -EINTR)
			x->result = 0;
	}
	x->count = i;
	return NULL;
}

/* Detach while another thread is moving data: the transfer fails, the
 * open file survives the device, and nothing is left waiting.
 */
TEST_F(link, detach_during_transfer)
{
	struct wse_dev_status dev;
	struct xfer_loop x = { .size = 8 << 20 };
	pthread_t t;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	x.fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, x.fd);
	ASSERT_EQ(0, guest_bo(x.fd, x.size, &x.handle, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, xfer_until_error, &x));
	usleep(100000);
	ASSERT_EQ(0, wse_ctl_detach(self->ctl, dev.index));
	forget(self, dev.index);
	pthread_join(t, NULL);
	EXPECT_TRUE(x.result == -ENOTCONN || x.result == -ENODEV)
		TH_LOG("transfer %d ended with %d", x.count, x.result);
	EXPECT_EQ(-ENODEV, guest_xfer(x.fd, x.handle, DRM_WSE_XFER_TO_DEVICE, 0, 0, 4096));
	close(x.fd);
}

struct stats_loop {
	uint32_t index;
	int asked;
	int result;
};

/* Asks for the firmware's counters until the link is down (bounded). */
static void *stats_until_down(void *arg)
{
	struct stats_loop *l = arg;
	struct wse_dev_status st;
	struct wse_ctl *ctl;
	int64_t end = guest_now_ms() + 10000;

	l->result = wse_ctl_open(&ctl);
	if (l->result)
		return NULL;
	for (l->asked = 0; l->asked < 100 && guest_now_ms() < end; l->asked++) {
		l->result = wse_ctl_get(ctl, l->index, true, &st);
		if (l->result || st.link_state != WSE_LINK_STATE_UP)
			break;
	}
	wse_ctl_close(ctl);
	return NULL;
}

/*
 * The firmware stops reading while a transfer is half sent and requests
 * for its counters queue behind it; then it dies. The failed send kills
 * the link, and the frames still queued must be handed back too: every
 * caller hears ENOTCONN and detach finds the link's queue empty (the
 * kernel warns otherwise).
 */
TEST_F(link, firmware_dies_with_frames_queued)
{
	struct stats_loop l[3];
	struct wse_dev_status dev;
	struct xfer_loop x;
	pthread_t t[4];
	int fd, i;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	x = (struct xfer_loop){ .fd = fd, .size = 4 << 20 };
	ASSERT_EQ(0, guest_bo(fd, x.size, &x.handle, NULL));
	ASSERT_EQ(0, kill(self->fw.pid, SIGSTOP));
	ASSERT_EQ(0, pthread_create(&t[0], NULL, xfer_until_error, &x));
	/* Time for the socket to fill before the counters are asked for. */
	usleep(300000);
	for (i = 0; i < 3; i++) {
		l[i] = (struct stats_loop){ .index = dev.index };
		ASSERT_EQ(0, pthread_create(&t[i + 1], NULL, stats_until_down, &l[i]));
	}
	usleep(300000);
	ASSERT_EQ(0, kill(self->fw.pid, SIGKILL));
	waitpid(self->fw.pid, NULL, 0);
	self->fw.pid = 0;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(-ENOTCONN, x.result) TH_LOG("transfer %d", x.count);
	close(fd);
	ASSERT_EQ(0, guest_wait_state(self->ctl, dev.index, WSE_LINK_STATE_DEAD, 3000, &dev));
	EXPECT_EQ(0, dev.stats.inflight);
	ASSERT_EQ(0, wse_ctl_detach(self->ctl, dev.index));
	forget(self, dev.index);
}

/* SIGTERM makes wsefwd say SHUTDOWN; the driver answers and marks the
 * link down with that reason.
 */
TEST_F(link, firmware_orderly_shutdown)
{
	struct wse_dev_status dev;
	int status;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	status = guest_peer_stop(&self->fw, SIGTERM);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, guest_wait_state(self->ctl, dev.index, WSE_LINK_STATE_DEAD, 3000, &dev));
	EXPECT_NE(NULL, strstr(dev.reason, "shut"));
}

/* Events: attach, death and detach each reach a listener. */
TEST_F(link, events_reach_monitor)
{
	struct wse_dev_status dev;
	struct wse_ctl *mon;
	struct wse_event ev;
	bool up = false, down = false;
	int i;

	ASSERT_EQ(0, wse_ctl_open(&mon));
	ASSERT_EQ(0, wse_ctl_subscribe(mon));
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 0, &dev));
	guest_peer_stop(&self->fw, SIGKILL);
	for (i = 0; i < 10 && !(up && down); i++) {
		if (wse_ctl_next_event(mon, 3000, &ev))
			break;
		if (ev.index != dev.index)
			continue;
		up |= ev.event == WSE_EVENT_LINK_UP;
		down |= ev.event == WSE_EVENT_LINK_DOWN;
	}
	EXPECT_TRUE(up);
	EXPECT_TRUE(down);
	wse_ctl_close(mon);
}

/* Runs a transfer against a firmware started with a fault knob and
 * returns the device's state afterwards.
 */
static int faulty_run(struct __test_metadata *_metadata, FIXTURE_DATA(link) *self,
		      uint32_t keepalive_ms, struct wse_dev_status *dev, const char *knob,
		      const char *value)
{
	uint32_t h;
	int fd, ret = 0, i;

	if (guest_peer_start(&self->fw, "wsefwd", knob, value, NULL))
		return -100;
	if (attach_tracked(_metadata, self, self->fw.addr, keepalive_ms, dev))
		return -101;
	fd = guest_open_accel(dev->accel_minor);
	if (fd < 0)
		return -102;
	if (guest_bo(fd, 1 << 20, &h, NULL))
		return -103;
	for (i = 0; i < 8 && !ret; i++)
		ret = guest_xfer(fd, h, i & 1 ? DRM_WSE_XFER_FROM_DEVICE : DRM_WSE_XFER_TO_DEVICE,
				 0, 4096 * i, 1 << 20);
	close(fd);
	guest_wait_state(self->ctl, dev->index, WSE_LINK_STATE_DEAD, 4000, dev);
	return ret;
}

TEST_F(link, fault_drop_after)
{
	struct wse_dev_status dev;

	EXPECT_EQ(-ENOTCONN, faulty_run(_metadata, self, 0, &dev, "--fault-drop-after", "3"));
	EXPECT_EQ(WSE_LINK_STATE_DEAD, dev.link_state);
	EXPECT_EQ(1, dev.stats.link_downs);
}

TEST_F(link, fault_delay_tolerated)
{
	struct wse_dev_status dev;
	int64_t start = guest_now_ms();
	uint32_t h;
	int fd, i;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--fault-delay-ms", "200", NULL));
	ASSERT_EQ(0, attach_tracked(_metadata, self, self->fw.addr, 1000, &dev));
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_bo(fd, 4096, &h, NULL));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, guest_xfer(fd, h, DRM_WSE_XFER_TO_DEVICE, 0, 0, 4096));
	EXPECT_LE(3 * 200, guest_now_ms() - start);
	close(fd);
	EXPECT_EQ(0, wse_ctl_get(self->ctl, dev.index, true, &dev));
	EXPECT_EQ(WSE_LINK_STATE_UP, dev.link_state);
}

/* Replies slower than the keepalive allows: the link is declared dead. */
TEST_F(link, fault_delay_beyond_keepalive)
{
	struct wse_dev_status dev;

	/* 100 ms keepalives: dead after 300 ms of silence, long before
	 * wsefwd's own one-second watchdog gives up on the host.
	 */
	EXPECT_EQ(-ENOTCONN, faulty_run(_metadata, self, 100, &dev, "--fault-delay-ms", "700"));
	EXPECT_EQ(WSE_LINK_STATE_DEAD, dev.link_state);
	EXPECT_LE(1, dev.stats.timeouts);
}

TEST_F(link, fault_corrupt_frame)
{
	struct wse_dev_status dev;

	EXPECT_EQ(-ENOTCONN, faulty_run(_metadata, self, 0, &dev, "--fault-corrupt-frame", "3"));
	EXPECT_EQ(WSE_LINK_STATE_DEAD, dev.link_state);
	EXPECT_LE(1, dev.stats.crc_errors + dev.stats.proto_errors);
}

TEST_F(link, fault_silent_after)
{
	struct wse_dev_status dev;
	int64_t start = guest_now_ms();

	EXPECT_EQ(-ENOTCONN, faulty_run(_metadata, self, 200, &dev, "--fault-silent-after", "2"));
	EXPECT_EQ(WSE_LINK_STATE_DEAD, dev.link_state);
	EXPECT_LE(1, dev.stats.timeouts);
	/* Three missed 200 ms keepalives, with slack for TCG. */
	EXPECT_GT(5000, guest_now_ms() - start);
}

TEST_F(link, fault_malformed_after)
{
	struct wse_dev_status dev;

	EXPECT_EQ(-ENOTCONN, faulty_run(_metadata, self, 0, &dev, "--fault-malformed-after", "2"));
	EXPECT_EQ(WSE_LINK_STATE_DEAD, dev.link_state);
	EXPECT_LE(1, dev.stats.crc_errors + dev.stats.proto_errors);
}

/* A hostile peer: many connections, each spoiled by malformed or random
 * frames, during the handshake or after it. Every one must be refused or
 * torn down, counted, and leave the kernel unharmed (the runner checks the
 * kernel log).
 */
TEST_F_TIMEOUT(link, hostile_peer, 600)
{
	struct wse_dev_status dev;
	uint64_t errors = 0;
	int attached = 0, refused = 0, closed = 0, i, status;

	ASSERT_EQ(0, guest_peer_start(&self->fw, "wse-hostile-peer", "--mode", "mixed",
				      "--connections", "500", "--frames", "2000",
				      "--per-connection", "4", "--seed", "7",
				      "--time-limit", "240", "--expect-close", NULL));
	for (i = 0; i < 500; i++) {
		/* A short keepalive: a peer that stalls mid-frame dies fast. */
		int ret = guest_attach(self->ctl, self->fw.addr, 200, &dev);

		if (ret) {
			refused++;
			continue;
		}
		attached++;
		if (guest_wait_state(self->ctl, dev.index, WSE_LINK_STATE_DEAD, 4000, &dev) == 0) {
			uint64_t e = dev.stats.crc_errors + dev.stats.proto_errors +
				     dev.stats.timeouts;

			errors += e;
			/*
			 * A frame cut short ends in the peer's EOF, not in an
			 * error; a keepalive or request sent as the peer hangs
			 * up fails with EPIPE instead, which is the same end.
			 */
			if (!e && (strstr(dev.reason, "closed") || strstr(dev.reason, "sending")))
				closed++;
			else if (!e)
				TH_LOG("connection %d: down without an error: %s", i, dev.reason);
		} else {
			TH_LOG("connection %d: link still up after a bad frame", i);
		}
		EXPECT_EQ(WSE_LINK_STATE_DEAD, dev.link_state);
		ASSERT_EQ(0, wse_ctl_detach(self->ctl, dev.index));
	}
	status = guest_peer_wait(&self->fw, 30000);
	TH_LOG("%d refused at handshake, %d torn down after it: %llu errors counted, %d closed by the peer",
	       refused, attached, (unsigned long long)errors, closed);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_LT(0, refused);
	EXPECT_LT(0, attached);
	EXPECT_LE((uint64_t)attached, errors + closed);
}

TEST_HARNESS_MAIN
