/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: shared definitions of the driver for the virtual Wafer-Scale Engine.
 */
#ifndef __WSE_DRV_H__
#define __WSE_DRV_H__

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <linux/platform_device.h>

#include "../uapi/drm/wse_accel.h"

struct wse_device;

#define WSE_DRIVER_NAME		"wse"
#define WSE_DRIVER_DESC		"virtual network-attached Wafer-Scale Engine"

/* The largest buffer object a file may create: 4 GiB keeps every size
 * representable in a u32 page count and a guest from being talked into a
 * single absurd allocation.
 */
#define WSE_MAX_BO_SIZE		(4ULL << 30)

/**
 * struct wse_accel - the DRM accel device of a device, /dev/accel/accelN
 * @drm: the DRM device; its lifetime is the structure's lifetime
 * @wdev: the device (referenced for @drm's lifetime, which can outlast
 *        detach while files stay open)
 */
struct wse_accel {
	struct drm_device drm;
	struct wse_device *wdev;
};

/* The device an accel device presents. */
static inline struct wse_device *wse_drm_device(struct drm_device *drm)
{
	return container_of(drm, struct wse_accel, drm)->wdev;
}

extern const struct attribute_group *wse_attr_groups[];
/* The driver's delayed work (keepalives, job timeouts): drained at unload,
 * so no work item runs module code after the module is gone.
 */
extern struct workqueue_struct *wse_wq;

int wse_ioctl_get_info(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);
int wse_ioctl_mem_xfer(struct drm_device *drm, void *data, struct drm_file *file);

struct io_uring_cmd;
int wse_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);

#endif /* __WSE_DRV_H__ */
