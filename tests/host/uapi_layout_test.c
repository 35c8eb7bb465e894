// SPDX-License-Identifier: GPL-2.0-only
/*
 * The UAPI structures have one layout for 32- and 64-bit userspace. This
 * file is built both ways; the static_asserts are the test, and the harness
 * run reports the sizes so a failure says what changed.
 */
#include <assert.h>
#include <stddef.h>

#include "kselftest_harness.h"
#include "drm/wse_accel.h"

#define LAYOUT(type, member, off) \
	static_assert(offsetof(struct type, member) == (off), #type "." #member)

static_assert(sizeof(struct drm_wse_get_info) == 24, "drm_wse_get_info size");
LAYOUT(drm_wse_get_info, param, 0);
LAYOUT(drm_wse_get_info, size, 4);
LAYOUT(drm_wse_get_info, ptr, 8);
LAYOUT(drm_wse_get_info, flags, 16);
LAYOUT(drm_wse_get_info, pad, 20);

static_assert(sizeof(struct drm_wse_device_info) == 72, "drm_wse_device_info size");
LAYOUT(drm_wse_device_info, wafer_width, 0);
LAYOUT(drm_wse_device_info, wafer_height, 4);
LAYOUT(drm_wse_device_info, sram_per_pe, 8);
LAYOUT(drm_wse_device_info, sram_total, 16);
LAYOUT(drm_wse_device_info, clock_khz, 24);
LAYOUT(drm_wse_device_info, num_queues, 28);
LAYOUT(drm_wse_device_info, device_id, 32);
LAYOUT(drm_wse_device_info, fw_version, 40);

static_assert(sizeof(struct drm_wse_bo_create) == 16, "drm_wse_bo_create size");
LAYOUT(drm_wse_bo_create, size, 0);
LAYOUT(drm_wse_bo_create, flags, 8);
LAYOUT(drm_wse_bo_create, handle, 12);

static_assert(sizeof(struct drm_wse_bo_info) == 32, "drm_wse_bo_info size");
LAYOUT(drm_wse_bo_info, handle, 0);
LAYOUT(drm_wse_bo_info, pad, 4);
LAYOUT(drm_wse_bo_info, mmap_offset, 8);
LAYOUT(drm_wse_bo_info, size, 16);
LAYOUT(drm_wse_bo_info, flags, 24);
LAYOUT(drm_wse_bo_info, reserved, 28);

static_assert(sizeof(struct drm_wse_mem_xfer) == 40, "drm_wse_mem_xfer size");
LAYOUT(drm_wse_mem_xfer, handle, 0);
LAYOUT(drm_wse_mem_xfer, flags, 4);
LAYOUT(drm_wse_mem_xfer, bo_offset, 8);
LAYOUT(drm_wse_mem_xfer, dev_addr, 16);
LAYOUT(drm_wse_mem_xfer, length, 24);
LAYOUT(drm_wse_mem_xfer, timeout_ms, 32);
LAYOUT(drm_wse_mem_xfer, pad, 36);

static_assert(sizeof(struct drm_wse_queue_create) == 24, "drm_wse_queue_create size");
LAYOUT(drm_wse_queue_create, hw_queue, 0);
LAYOUT(drm_wse_queue_create, depth, 4);
LAYOUT(drm_wse_queue_create, timeout_ms, 8);
LAYOUT(drm_wse_queue_create, queue_id, 12);
LAYOUT(drm_wse_queue_create, flags, 16);
LAYOUT(drm_wse_queue_create, pad, 20);

static_assert(sizeof(struct drm_wse_queue_destroy) == 8, "drm_wse_queue_destroy size");

static_assert(sizeof(struct drm_wse_submit) == 80, "drm_wse_submit size");
LAYOUT(drm_wse_submit, queue_id, 0);
LAYOUT(drm_wse_submit, op, 4);
LAYOUT(drm_wse_submit, handle, 8);
LAYOUT(drm_wse_submit, timeout_ms, 12);
LAYOUT(drm_wse_submit, bo_offset, 16);
LAYOUT(drm_wse_submit, length, 24);
LAYOUT(drm_wse_submit, args, 32);
LAYOUT(drm_wse_submit, job_id, 64);
LAYOUT(drm_wse_submit, flags, 72);
LAYOUT(drm_wse_submit, pad, 76);

static_assert(sizeof(struct drm_wse_wait) == 32, "drm_wse_wait size");
LAYOUT(drm_wse_wait, queue_id, 0);
LAYOUT(drm_wse_wait, flags, 4);
LAYOUT(drm_wse_wait, job_id, 8);
LAYOUT(drm_wse_wait, timeout_ns, 16);
LAYOUT(drm_wse_wait, status, 24);
LAYOUT(drm_wse_wait, result_len, 28);

/* Every structure is a multiple of 8 bytes, so arrays of them and
 * structures that embed them need no hidden padding.
 */
TEST(sizes_are_multiples_of_eight)
{
	EXPECT_EQ(0, sizeof(struct drm_wse_get_info) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_device_info) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_bo_create) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_bo_info) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_mem_xfer) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_queue_create) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_queue_destroy) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_submit) % 8);
	EXPECT_EQ(0, sizeof(struct drm_wse_wait) % 8);
}

/* The ioctl numbers encode the structure size, so they too must agree. */
TEST(ioctl_numbers_encode_sizes)
{
	EXPECT_EQ(sizeof(struct drm_wse_get_info), _IOC_SIZE(DRM_IOCTL_WSE_GET_INFO));
	EXPECT_EQ(sizeof(struct drm_wse_bo_create), _IOC_SIZE(DRM_IOCTL_WSE_BO_CREATE));
	EXPECT_EQ(sizeof(struct drm_wse_bo_info), _IOC_SIZE(DRM_IOCTL_WSE_BO_INFO));
	EXPECT_EQ(sizeof(struct drm_wse_mem_xfer), _IOC_SIZE(DRM_IOCTL_WSE_MEM_XFER));
	EXPECT_EQ(sizeof(struct drm_wse_submit), _IOC_SIZE(DRM_IOCTL_WSE_SUBMIT));
	EXPECT_EQ(sizeof(struct drm_wse_wait), _IOC_SIZE(DRM_IOCTL_WSE_WAIT));
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(DRM_IOCTL_WSE_BO_CREATE));
}

TEST_HARNESS_MAIN
