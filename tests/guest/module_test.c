// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module lifetime: wse.ko cannot be removed while a device file is open,
 * unloads cleanly once it is closed (and at once with a peer that stopped
 * reading), and loads again with its parameters.
 *
 * Runs in the guest as root; the module file is $WSE_MODULE or /wse/wse.ko.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse_guest.h"

static const char *module_path(void)
{
	const char *p = getenv("WSE_MODULE");

	return p ? p : "/wse/wse.ko";
}

static int delete_module(const char *name, unsigned int flags)
{
	return syscall(__NR_delete_module, name, flags) ? -errno : 0;
}

static int load_module(const char *params)
{
	int fd = open(module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(__NR_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/wse", &st) == 0;
}

/* The parameter the module was loaded with, to load it again the same way. */
static void current_params(char *buf, size_t len)
{
	FILE *f = fopen("/sys/module/wse/parameters/test_devices", "r");
	unsigned int n = 0;

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	snprintf(buf, len, "test_devices=%u", n);
}

TEST(rmmod_refused_while_open_then_clean)
{
	char params[64];
	int fd;

	if (!module_loaded())
		SKIP(return, "wse.ko is not loaded");
	current_params(params, sizeof(params));

	fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open /dev/accel/accel0: %s", strerror(errno));

	EXPECT_EQ(-EWOULDBLOCK, delete_module("wse", O_NONBLOCK));
	EXPECT_TRUE(module_loaded());
	/* The device still works after the refused unload. */
	EXPECT_EQ(0, access("/dev/accel/accel0", F_OK));

	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, delete_module("wse", O_NONBLOCK));
	EXPECT_FALSE(module_loaded());
	EXPECT_NE(0, access("/dev/accel/accel0", F_OK));

	/* Put it back for whatever runs next. */
	ASSERT_EQ(0, load_module(params)) TH_LOG("reload %s %s", module_path(), params);
	EXPECT_TRUE(module_loaded());
	EXPECT_EQ(0, access("/dev/accel/accel0", F_OK));
}

TEST(load_refuses_bad_parameter)
{
	char params[64];

	if (!module_loaded())
		SKIP(return, "wse.ko is not loaded");
	current_params(params, sizeof(params));
	ASSERT_EQ(0, delete_module("wse", O_NONBLOCK));
	EXPECT_EQ(-EINVAL, load_module("test_devices=99"));
	EXPECT_FALSE(module_loaded());
	ASSERT_EQ(0, load_module(params));
}

TEST(load_unload_cycles)
{
	char params[64];
	int i;

	if (!module_loaded())
		SKIP(return, "wse.ko is not loaded");
	current_params(params, sizeof(params));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, delete_module("wse", O_NONBLOCK)) TH_LOG("cycle %d", i);
		ASSERT_EQ(0, load_module(params)) TH_LOG("cycle %d", i);
	}
}

/*
 * Unloading the module with a device whose firmware stopped reading, and
 * frames of a closed file still half sent to it, is not held up by the
 * peer: it is done well within the keepalive timeout (3 x 5 s), not after
 * the socket's send timeout.
 */
TEST(rmmod_is_not_held_by_a_peer_that_stopped_reading)
{
	struct guest_peer fw = { 0 };
	struct wse_dev_status dev;
	struct wse_ctl *ctl;
	char params[64];
	int64_t t0, took;
	uint32_t q, h;
	uint64_t job;
	int fd, i;

	if (!module_loaded())
		SKIP(return, "wse.ko is not loaded");
	current_params(params, sizeof(params));
	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, wse_ctl_open(&ctl));
	ASSERT_EQ(0, guest_attach(ctl, fw.addr, 0, &dev));
	wse_ctl_close(ctl);
	fd = guest_open_accel(dev.accel_minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, guest_queue_create(fd, 0, 8, 0, &q));
	ASSERT_EQ(0, guest_bo(fd, 4 << 20, &h, NULL));
	ASSERT_EQ(0, kill(fw.pid, SIGSTOP));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, guest_submit(fd, q, DRM_WSE_OP_MEM_WRITE, h, 0, (4 << 20) - 4096,
					  NULL, &job));
	usleep(200000);
	close(fd);
	t0 = guest_now_ms();
	ASSERT_EQ(0, delete_module("wse", O_NONBLOCK));
	took = guest_now_ms() - t0;
	EXPECT_GT(2000, took) TH_LOG("unloading took %lld ms", (long long)took);
	guest_peer_stop(&fw, SIGKILL);
	ASSERT_EQ(0, load_module(params)) TH_LOG("reload %s %s", module_path(), params);
}

TEST_HARNESS_MAIN
