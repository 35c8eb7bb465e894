// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: DRM_IOCTL_WSE_GET_INFO, the device query.
 */

#include <linux/minmax.h>
#include <linux/uaccess.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_link.h"

int wse_ioctl_get_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct wse_device *wdev = wse_drm_device(drm);
	struct drm_wse_get_info *args = data;
	const void *value;
	u32 value_size;
	u64 u64_value;

	if (args->flags || args->pad)
		return -EINVAL;
	switch (args->param) {
	case DRM_WSE_PARAM_CAPABILITIES:
		u64_value = DRM_WSE_CAP_BO;
		if (!wdev->is_test)
			u64_value |= DRM_WSE_CAP_LINK | DRM_WSE_CAP_MEM_XFER | DRM_WSE_CAP_JOBS;
		value = &u64_value;
		value_size = sizeof(u64_value);
		break;
	case DRM_WSE_PARAM_DEVICE_INFO:
		value = &wdev->info;
		value_size = sizeof(wdev->info);
		break;
	case DRM_WSE_PARAM_MAX_BO_SIZE:
		u64_value = WSE_MAX_BO_SIZE;
		value = &u64_value;
		value_size = sizeof(u64_value);
		break;
	case DRM_WSE_PARAM_MAX_JOB_BYTES:
		u64_value = wse_job_max_bytes(wdev->link.max_payload);
		value = &u64_value;
		value_size = sizeof(u64_value);
		break;
	default:
		return -EINVAL;
	}

	if (args->size &&
	    copy_to_user(u64_to_user_ptr(args->ptr), value, min(args->size, value_size)))
		return -EFAULT;

	args->size = value_size;
	return 0;
}
