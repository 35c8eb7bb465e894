// SPDX-License-Identifier: GPL-2.0-only
/*
 * DRM client usage stats: /proc/self/fdinfo of an accel file carries the
 * standard keys (Documentation/gpu/drm-usage-stats.rst in the kernel):
 * drm-driver, drm-client-id, drm-engine-hwqN (busy time per hardware
 * queue), drm-total-memory; and drm-jobs-hwqN. Runs in the guest with
 * wsefwd started inside it.
 */
#include "kselftest_harness.h"
#include "wse_guest.h"
#include "wse_guest_uring.h"

/* The value of @key in the fdinfo of @fd, scaled by its unit, or -1. */
static int64_t fdinfo_value(int fd, const char *key)
{
	char path[64], line[256], unit[16];
	size_t n = strlen(key);
	long long v;
	int64_t ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, n) || line[n] != ':')
			continue;
		unit[0] = 0;
		if (sscanf(line + n + 1, "%lld %15s", &v, unit) >= 1)
			ret = v * (!strcmp(unit, "KiB") ? 1024 : !strcmp(unit, "MiB") ? 1 << 20 : 1);
	}
	if (f)
		fclose(f);
	return ret;
}

/* Whether the fdinfo of @fd has @key with the text @value. */
static bool fdinfo_is(int fd, const char *key, const char *value)
{
	char path[64], line[256], want[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(want, sizeof(want), "%s:\t%s\n", key, value);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		found |= !strcmp(line, want);
	if (f)
		fclose(f);
	return found;
}

TEST(usage_stats_per_hardware_queue)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct drm_wse_uring_job j = { .op = DRM_WSE_OP_MEM_WRITE, .length = 64 };
	struct guest_peer fw = { 0 };
	struct wse_dev_status dev;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct wse_ctl *ctl;
	char buf[64] = { 0 };
	uint64_t jobs[4];
	uint32_t q, h;
	int fd, other, i, status;

	ASSERT_EQ(0, wse_ctl_open(&ctl));
	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", "--fault-delay-ms", "100",
				      NULL));
	ASSERT_EQ(0, guest_attach(ctl, fw.addr, 0, &dev));
	fd = guest_open_accel(dev.accel_minor);
	other = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	EXPECT_TRUE(fdinfo_is(fd, "drm-driver", "wse"));
	EXPECT_LE(0, fdinfo_value(fd, "drm-client-id"));
	EXPECT_NE(fdinfo_value(fd, "drm-client-id"), fdinfo_value(other, "drm-client-id"));
	EXPECT_EQ(0, fdinfo_value(fd, "drm-engine-hwq1"));
	EXPECT_EQ(0, fdinfo_value(fd, "drm-total-memory"));

	ASSERT_EQ(0, guest_bo(fd, 1 << 20, &h, NULL));
	ASSERT_EQ(0, guest_queue_create(fd, 1, 8, 0, &q));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, guest_submit(fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, 4096, NULL, &jobs[i]));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, guest_wait_job(fd, q, jobs[i], 10000, &status, NULL));
		EXPECT_EQ(0, status);
	}
	/* And one through io_uring, counted the same. */
	ASSERT_EQ(0, io_uring_queue_init_params(4, &ring, &p));
	j.queue_id = q;
	j.addr = (uintptr_t)buf;
	guest_uring_prep(io_uring_get_sqe(&ring), fd, &j, 1, -1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);

	EXPECT_EQ(5, fdinfo_value(fd, "drm-jobs-hwq1"));
	/* Each answer came after 100 ms; they overlap on one queue. */
	EXPECT_LE(400000000LL, fdinfo_value(fd, "drm-engine-hwq1"))
		TH_LOG("busy %lld ns", (long long)fdinfo_value(fd, "drm-engine-hwq1"));
	EXPECT_EQ(0, fdinfo_value(fd, "drm-engine-hwq0"));
	EXPECT_EQ(0, fdinfo_value(fd, "drm-jobs-hwq0"));
	EXPECT_EQ(1 << 20, fdinfo_value(fd, "drm-total-memory"));
	/* The other file used nothing. */
	EXPECT_EQ(0, fdinfo_value(other, "drm-jobs-hwq1"));
	EXPECT_EQ(0, fdinfo_value(other, "drm-total-memory"));

	close(other);
	close(fd);
	wse_ctl_detach(ctl, dev.index);
	guest_peer_stop(&fw, SIGKILL);
	wse_ctl_close(ctl);
}

TEST_HARNESS_MAIN
