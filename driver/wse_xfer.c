// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: DRM_IOCTL_WSE_MEM_XFER, a synchronous copy between a buffer object
 * and device memory, cut into link frames of at most the negotiated size.
 */

#include <drm/drm_gem.h>
#include <linux/iosys-map.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_link.h"

#define WSE_XFER_TIMEOUT_MS_DEFAULT	10000
#define WSE_XFER_TIMEOUT_MS_MAX		600000

static int wse_xfer_chunk(struct wse_link *link, bool to_device, u64 dev_addr,
			  void *buf, u32 len, long timeout)
{
	struct wse_link_mem mem = {
		.addr = cpu_to_le64(dev_addr),
		.length = cpu_to_le32(len),
	};
	struct kvec vec[2] = {
		{ .iov_base = &mem, .iov_len = sizeof(mem) },
		{ .iov_base = buf, .iov_len = len },
	};
	size_t got = 0;
	int ret;

	if (to_device)
		return wse_link_call(link, WSE_LINK_OP_MEM_WRITE, 0, vec, 2, NULL, 0, NULL,
				     timeout);

	ret = wse_link_call(link, WSE_LINK_OP_MEM_READ, 0, vec, 1, buf, len, &got, timeout);
	if (!ret && got != len)
		ret = -EPROTO;	/* the firmware answered a read short */
	return ret;
}

int wse_ioctl_mem_xfer(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct wse_device *wdev = wse_drm_device(drm);
	struct wse_link *link = &wdev->link;
	struct drm_wse_mem_xfer *args = data;
	bool to_device = args->flags == DRM_WSE_XFER_TO_DEVICE;
	struct drm_gem_object *obj;
	struct iosys_map map;
	u64 end, done = 0;
	u32 chunk_max;
	long timeout;
	int ret;

	if (args->pad ||
	    (args->flags != DRM_WSE_XFER_TO_DEVICE && args->flags != DRM_WSE_XFER_FROM_DEVICE) ||
	    !args->length || args->timeout_ms > WSE_XFER_TIMEOUT_MS_MAX)
		return -EINVAL;
	if (check_add_overflow(args->dev_addr, args->length, &end) ||
	    end > wdev->info.sram_total)
		return -ERANGE;
	if (wdev->is_test)
		return -ENOTCONN;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (check_add_overflow(args->bo_offset, args->length, &end) || end > obj->size) {
		ret = -EINVAL;
		goto put;
	}
	ret = drm_gem_vmap_unlocked(obj, &map);
	if (ret)
		goto put;

	timeout = msecs_to_jiffies(args->timeout_ms ?: WSE_XFER_TIMEOUT_MS_DEFAULT);
	chunk_max = link->max_payload - sizeof(struct wse_link_mem) -
		    sizeof(struct wse_link_status);
	while (done < args->length) {
		u32 len = min_t(u64, args->length - done, chunk_max);

		ret = wse_xfer_chunk(link, to_device, args->dev_addr + done,
				     map.vaddr + args->bo_offset + done, len, timeout);
		if (ret)
			break;
		done += len;
		if (done < args->length && fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	/* A wait cut short by a signal cannot be restarted: part is done. */
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	drm_gem_vunmap_unlocked(obj, &map);
put:
	drm_gem_object_put(obj);
	return ret;
}
