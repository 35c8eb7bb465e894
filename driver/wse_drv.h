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

struct wse_link;

#define WSE_DRIVER_NAME		"wse"
#define WSE_DRIVER_DESC		"virtual network-attached Wafer-Scale Engine"

/* The largest buffer object a file may create: 4 GiB keeps every size
 * representable in a u32 page count and a guest from being talked into a
 * single absurd allocation.
 */
#define WSE_MAX_BO_SIZE		(4ULL << 30)

/**
 * struct wse_device - one virtual WSE, presented as /dev/accel/accelN
 * @drm: the DRM device; its lifetime is the structure's lifetime
 * @pdev: the platform device that parents @drm
 * @link: the firmware link (referenced for @drm's lifetime, which can
 *        outlast detach while files stay open)
 * @info: what DRM_WSE_PARAM_DEVICE_INFO reports; written once before the
 *        DRM device is registered and read-only afterwards, so it needs no lock
 */
struct wse_device {
	struct drm_device drm;
	struct platform_device *pdev;
	struct wse_link *link;
	struct drm_wse_device_info info;
};

static inline struct wse_device *to_wse_device(struct drm_device *drm)
{
	return container_of(drm, struct wse_device, drm);
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
