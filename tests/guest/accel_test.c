// SPDX-License-Identifier: GPL-2.0-only
/*
 * The accel device: open/close, the GET_INFO query, and buffer objects,
 * with every negative case the UAPI documents.
 *
 * Runs in the guest against /dev/accel/accel0 (or $WSE_ACCEL_DEV).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "drm/wse_accel.h"

static const char *accel_path(void)
{
	const char *p = getenv("WSE_ACCEL_DEV");

	return p ? p : "/dev/accel/accel0";
}

static int open_accel(void)
{
	return open(accel_path(), O_RDWR | O_CLOEXEC);
}

/* ioctl() that returns -errno, so assertions name the error. */
static int wse_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static int bo_create(int fd, uint64_t size, uint32_t *handle)
{
	struct drm_wse_bo_create args = { .size = size };
	int ret = wse_ioctl(fd, DRM_IOCTL_WSE_BO_CREATE, &args);

	if (!ret)
		*handle = args.handle;
	return ret;
}

static int bo_info(int fd, uint32_t handle, struct drm_wse_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return wse_ioctl(fd, DRM_IOCTL_WSE_BO_INFO, info);
}

static int bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	return wse_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args);
}

static int get_info(int fd, uint32_t param, void *ptr, uint32_t *size)
{
	struct drm_wse_get_info args = {
		.param = param, .size = *size, .ptr = (uintptr_t)ptr,
	};
	int ret = wse_ioctl(fd, DRM_IOCTL_WSE_GET_INFO, &args);

	*size = args.size;
	return ret;
}

FIXTURE(accel) {
	int fd;
};

FIXTURE_SETUP(accel)
{
	self->fd = open_accel();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", accel_path(), strerror(errno));
}

FIXTURE_TEARDOWN(accel)
{
	close(self->fd);
}

TEST(open_close_repeatedly)
{
	int fds[16];
	int i;

	for (i = 0; i < 16; i++) {
		fds[i] = open_accel();
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, close(fds[i]));
	for (i = 0; i < 200; i++) {
		int fd = open_accel();

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, close(fd));
	}
}

TEST(driver_version_names_wse)
{
	char name[32] = { 0 };
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
	int fd = open_accel();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wse_ioctl(fd, DRM_IOCTL_VERSION, &v));
	EXPECT_STREQ("wse", name);
	close(fd);
}

TEST_F(accel, query_capabilities)
{
	uint64_t caps = 0;
	uint32_t size = sizeof(caps);

	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_CAPABILITIES, &caps, &size));
	EXPECT_EQ(sizeof(caps), size);
	EXPECT_TRUE(caps & DRM_WSE_CAP_BO);
	/* accel0 is a test device: no firmware behind it. */
	EXPECT_FALSE(caps & DRM_WSE_CAP_LINK);
	EXPECT_FALSE(caps & DRM_WSE_CAP_MEM_XFER);
}

/* Without a firmware link there are no queues. */
TEST_F(accel, queue_without_link)
{
	struct drm_wse_queue_create q = { .hw_queue = 0, .depth = 4 };
	uint64_t max = 1;
	uint32_t size = sizeof(max);

	EXPECT_EQ(-ENOTCONN, wse_ioctl(self->fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q));
	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_MAX_JOB_BYTES, &max, &size));
	EXPECT_EQ(0, max);
}

/* Without a firmware link there is no device memory to reach. */
TEST_F(accel, mem_xfer_without_link)
{
	struct drm_wse_mem_xfer x = {
		.flags = DRM_WSE_XFER_TO_DEVICE, .length = 64,
	};
	uint32_t handle;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &handle));
	x.handle = handle;
	EXPECT_EQ(-ENOTCONN, wse_ioctl(self->fd, DRM_IOCTL_WSE_MEM_XFER, &x));
	/* Arguments are checked first, link or not. */
	x.flags = 0;
	EXPECT_EQ(-EINVAL, wse_ioctl(self->fd, DRM_IOCTL_WSE_MEM_XFER, &x));
	EXPECT_EQ(0, bo_close(self->fd, handle));
}

TEST_F(accel, query_device_info)
{
	struct drm_wse_device_info info;
	uint32_t size = sizeof(info);

	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_DEVICE_INFO, &info, &size));
	EXPECT_EQ(sizeof(info), size);
	EXPECT_LT(0, info.wafer_width);
	EXPECT_LT(0, info.wafer_height);
	EXPECT_LT(0, info.sram_per_pe);
	EXPECT_EQ(info.sram_per_pe * info.wafer_width * info.wafer_height, info.sram_total);
	EXPECT_LT(0, info.clock_khz);
	EXPECT_LT(0, info.num_queues);
	/* NUL-terminated and NUL-padded. */
	EXPECT_EQ(0, info.fw_version[sizeof(info.fw_version) - 1]);
	EXPECT_LT(0, strlen(info.fw_version));
}

TEST_F(accel, query_max_bo_size)
{
	uint64_t max = 0;
	uint32_t size = sizeof(max);

	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_MAX_BO_SIZE, &max, &size));
	EXPECT_EQ(sizeof(max), size);
	EXPECT_LE(1ULL << 20, max);
	EXPECT_EQ(0, max % getpagesize());
}

/* size 0 asks only how large the value is; ptr is not touched. */
TEST_F(accel, query_size_zero_reports_size)
{
	uint32_t size = 0;

	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_DEVICE_INFO, NULL, &size));
	EXPECT_EQ(sizeof(struct drm_wse_device_info), size);
}

/* A short buffer gets a prefix; nothing past it is written. */
TEST_F(accel, query_short_size_writes_prefix)
{
	struct drm_wse_device_info full;
	unsigned char buf[sizeof(full)];
	uint32_t size = sizeof(full);

	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_DEVICE_INFO, &full, &size));
	memset(buf, 0x5a, sizeof(buf));
	size = 4;
	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_DEVICE_INFO, buf, &size));
	EXPECT_EQ(sizeof(full), size);
	EXPECT_EQ(0, memcmp(buf, &full, 4));
	EXPECT_EQ(0x5a, buf[4]);
	EXPECT_EQ(0x5a, buf[sizeof(buf) - 1]);
}

/* A huge size writes only the value's own size. */
TEST_F(accel, query_huge_size_writes_value_only)
{
	unsigned char buf[64];
	uint32_t size = UINT32_MAX;

	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_CAPABILITIES, buf, &size));
	EXPECT_EQ(sizeof(uint64_t), size);
	EXPECT_EQ(0x5a, buf[8]);
	EXPECT_EQ(0x5a, buf[63]);
}

TEST_F(accel, query_unknown_param)
{
	uint64_t v;
	uint32_t size = sizeof(v);

	EXPECT_EQ(-EINVAL, get_info(self->fd, 4, &v, &size));
	size = sizeof(v);
	EXPECT_EQ(-EINVAL, get_info(self->fd, UINT32_MAX, &v, &size));
}

TEST_F(accel, query_null_pointer)
{
	uint32_t size = sizeof(uint64_t);

	EXPECT_EQ(-EFAULT, get_info(self->fd, DRM_WSE_PARAM_CAPABILITIES, NULL, &size));
}

TEST_F(accel, query_kernel_pointer)
{
	uint32_t size = sizeof(uint64_t);
	void *kptr = (void *)(uintptr_t)0xffff888000000000ULL;

	EXPECT_EQ(-EFAULT, get_info(self->fd, DRM_WSE_PARAM_CAPABILITIES, kptr, &size));
}

/* The kernel copies bytes: a misaligned destination works and gets the
 * same value as an aligned one.
 */
TEST_F(accel, query_misaligned_pointer)
{
	uint64_t aligned = 0, misaligned;
	unsigned char buf[sizeof(uint64_t) + 1];
	uint32_t size = sizeof(aligned);

	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_MAX_BO_SIZE, &aligned, &size));
	size = sizeof(aligned);
	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_MAX_BO_SIZE, buf + 1, &size));
	memcpy(&misaligned, buf + 1, sizeof(misaligned));
	EXPECT_EQ(aligned, misaligned);
}

TEST_F(accel, ioctl_null_argument)
{
	EXPECT_EQ(-EFAULT, wse_ioctl(self->fd, DRM_IOCTL_WSE_GET_INFO, NULL));
	EXPECT_EQ(-EFAULT, wse_ioctl(self->fd, DRM_IOCTL_WSE_BO_CREATE, NULL));
	EXPECT_EQ(-EFAULT, wse_ioctl(self->fd, DRM_IOCTL_WSE_BO_INFO, NULL));
}

TEST_F(accel, ioctl_unknown_number)
{
	struct drm_wse_bo_info dummy = { 0 };

	EXPECT_EQ(-EINVAL, wse_ioctl(self->fd,
				     DRM_IOWR(DRM_COMMAND_BASE + 0x3f, struct drm_wse_bo_info),
				     &dummy));
}

/* Create, map, write, unmap, map again, read back, destroy. */
TEST_F(accel, bo_write_read_back)
{
	static const uint64_t sizes[] = { 1, 4096, 4097, (1 << 20) + 13 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct drm_wse_bo_info info;
		uint32_t handle;
		unsigned char *p;
		uint64_t j;

		ASSERT_EQ(0, bo_create(self->fd, sizes[i], &handle));
		ASSERT_EQ(0, bo_info(self->fd, handle, &info));
		EXPECT_LE(sizes[i], info.size);
		EXPECT_EQ(0, info.size % getpagesize());
		EXPECT_EQ(0, info.mmap_offset % getpagesize());

		p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, info.mmap_offset);
		ASSERT_NE(MAP_FAILED, p);
		for (j = 0; j < info.size; j++)
			ASSERT_EQ(0, p[j]) TH_LOG("new BO not zeroed at %llu", (unsigned long long)j);
		for (j = 0; j < info.size; j++)
			p[j] = (unsigned char)(j * 7 + i);
		ASSERT_EQ(0, munmap(p, info.size));

		p = mmap(NULL, info.size, PROT_READ, MAP_SHARED, self->fd, info.mmap_offset);
		ASSERT_NE(MAP_FAILED, p);
		for (j = 0; j < info.size; j++)
			ASSERT_EQ((unsigned char)(j * 7 + i), p[j]);
		ASSERT_EQ(0, munmap(p, info.size));
		ASSERT_EQ(0, bo_close(self->fd, handle));
	}
}

/* A mapping keeps the object alive after its handle is closed. */
TEST_F(accel, bo_mapping_outlives_handle)
{
	struct drm_wse_bo_info info;
	uint32_t handle;
	uint32_t *p;

	ASSERT_EQ(0, bo_create(self->fd, 8192, &handle));
	ASSERT_EQ(0, bo_info(self->fd, handle, &info));
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, info.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, bo_close(self->fd, handle));
	p[0] = 0xdeadbeef;
	p[2047] = 0xcafef00d;
	EXPECT_EQ(0xdeadbeef, p[0]);
	EXPECT_EQ(0xcafef00d, p[2047]);
	EXPECT_EQ(-ENOENT, bo_info(self->fd, handle, &info));
	ASSERT_EQ(0, munmap(p, 8192));
}

TEST_F(accel, bo_many)
{
	uint32_t handles[512];
	int i;

	for (i = 0; i < 512; i++)
		ASSERT_EQ(0, bo_create(self->fd, 4096 * (1 + i % 4), &handles[i]));
	for (i = 0; i < 512; i++)
		ASSERT_EQ(0, bo_close(self->fd, handles[i]));
}

TEST_F(accel, bo_create_size_zero)
{
	uint32_t handle;

	EXPECT_EQ(-EINVAL, bo_create(self->fd, 0, &handle));
}

TEST_F(accel, bo_create_too_large)
{
	uint64_t max = 0;
	uint32_t size = sizeof(max), handle;

	ASSERT_EQ(0, get_info(self->fd, DRM_WSE_PARAM_MAX_BO_SIZE, &max, &size));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, max + 1, &handle));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, 1ULL << 62, &handle));
}

/* Sizes whose rounding up to a page would wrap around. */
TEST_F(accel, bo_create_size_overflow)
{
	uint32_t handle;

	EXPECT_EQ(-E2BIG, bo_create(self->fd, UINT64_MAX, &handle));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, UINT64_MAX - 4094, &handle));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, 1ULL << 63, &handle));
}

TEST_F(accel, bo_create_unknown_flags)
{
	struct drm_wse_bo_create args = { .size = 4096 };
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		args.flags = 1U << bit;
		EXPECT_EQ(-EINVAL, wse_ioctl(self->fd, DRM_IOCTL_WSE_BO_CREATE, &args))
			TH_LOG("flag bit %u accepted", bit);
	}
}

TEST_F(accel, bo_info_nonzero_pad)
{
	struct drm_wse_bo_info info = { 0 };
	uint32_t handle;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &handle));
	info.handle = handle;
	info.pad = 1;
	EXPECT_EQ(-EINVAL, wse_ioctl(self->fd, DRM_IOCTL_WSE_BO_INFO, &info));
	info.pad = 0x80000000;
	EXPECT_EQ(-EINVAL, wse_ioctl(self->fd, DRM_IOCTL_WSE_BO_INFO, &info));
	EXPECT_EQ(0, bo_close(self->fd, handle));
}

TEST_F(accel, bo_bad_handle)
{
	struct drm_wse_bo_info info;

	EXPECT_EQ(-ENOENT, bo_info(self->fd, 0, &info));
	EXPECT_EQ(-ENOENT, bo_info(self->fd, 12345, &info));
	EXPECT_EQ(-ENOENT, bo_info(self->fd, UINT32_MAX, &info));
	EXPECT_EQ(-EINVAL, bo_close(self->fd, 12345));
}

TEST_F(accel, bo_close_twice)
{
	uint32_t handle;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &handle));
	EXPECT_EQ(0, bo_close(self->fd, handle));
	EXPECT_EQ(-EINVAL, bo_close(self->fd, handle));
}

/* Handles and mmap offsets belong to the file that made them. */
TEST_F(accel, bo_from_another_file)
{
	struct drm_wse_bo_info info, other;
	uint32_t handle;
	int fd2 = open_accel();
	void *p;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, bo_create(fd2, 4096, &handle));
	ASSERT_EQ(0, bo_info(fd2, handle, &info));
	/* The same number may name nothing, or another object, here. */
	if (bo_info(self->fd, handle, &other) == 0) {
		EXPECT_NE(info.mmap_offset, other.mmap_offset);
	} else {
		EXPECT_EQ(-ENOENT, bo_info(self->fd, handle, &other));
	}
	p = mmap(NULL, info.size, PROT_READ, MAP_SHARED, self->fd, info.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	close(fd2);
}

TEST_F(accel, mmap_private_refused)
{
	struct drm_wse_bo_info info;
	uint32_t handle;
	void *p;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &handle));
	ASSERT_EQ(0, bo_info(self->fd, handle, &info));
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, info.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, bo_close(self->fd, handle));
}

TEST_F(accel, mmap_bad_offset_or_length)
{
	struct drm_wse_bo_info info;
	uint32_t handle;
	void *p;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &handle));
	ASSERT_EQ(0, bo_info(self->fd, handle, &info));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Longer than the object. */
	p = mmap(NULL, info.size * 2, PROT_READ, MAP_SHARED, self->fd, info.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, bo_close(self->fd, handle));
}

TEST_HARNESS_MAIN
