// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module lifetime: wse.ko cannot be removed while a device file is open,
 * unloads cleanly once it is closed, and loads again with its parameters.
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

TEST_HARNESS_MAIN
