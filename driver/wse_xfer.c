// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: DRM_IOCTL_WSE_MEM_XFER, a synchronous copy between a buffer object
 * and device memory, cut into link frames of at most the negotiated size.
 */

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <linux/iosys-map.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "wse_call.h"
#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_link.h"

#define WSE_XFER_TIMEOUT_MS_DEFAULT	10000
#define WSE_XFER_TIMEOUT_MS_MAX		600000

/*
 * One piece of a copy. It holds the buffer object, its mapping and the
 * DRM device for as long as the link may still send from or write into
 * it, which can be after a caller that gave up has returned.
 */
struct wse_xfer_call {
	struct wse_call call;
	struct wse_link_mem mem;
	struct drm_gem_object *obj;
	struct iosys_map map;
};

static void wse_xfer_release(struct wse_call *call)
{
	struct wse_xfer_call *x = container_of(call, struct wse_xfer_call, call);
	struct drm_device *drm = x->obj->dev;

	if (x->map.vaddr)
		drm_gem_vunmap_unlocked(x->obj, &x->map);
	drm_gem_object_put(x->obj);
	drm_dev_put(drm);
	kfree(x);
}

static int wse_xfer_chunk(struct wse_link *link, struct drm_gem_object *obj, bool to_device,
			  u64 bo_offset, u64 dev_addr, u32 len, long timeout)
{
	struct wse_xfer_call *x;
	struct kvec vec[2];
	void *data;
	int ret;

	x = kzalloc(sizeof(*x), GFP_KERNEL_ACCOUNT);
	if (!x)
		return -ENOMEM;
	drm_dev_get(obj->dev);
	drm_gem_object_get(obj);
	x->obj = obj;
	x->call.release = wse_xfer_release;
	ret = drm_gem_vmap_unlocked(obj, &x->map);
	if (ret) {
		iosys_map_clear(&x->map);
		wse_xfer_release(&x->call);
		return ret;
	}
	data = x->map.vaddr + bo_offset;
	x->mem.addr = cpu_to_le64(dev_addr);
	x->mem.length = cpu_to_le32(len);
	vec[0].iov_base = &x->mem;
	vec[0].iov_len = sizeof(x->mem);
	vec[1].iov_base = data;
	vec[1].iov_len = len;

	if (to_device) {
		x->call.req.opcode = WSE_LINK_OP_MEM_WRITE;
		ret = wse_call(link, &x->call, vec, 2, timeout);
	} else {
		x->call.req.opcode = WSE_LINK_OP_MEM_READ;
		x->call.req.resp = data;
		x->call.req.resp_cap = len;
		ret = wse_call(link, &x->call, vec, 1, timeout);
		if (!ret && x->call.req.resp_len != len)
			ret = -EPROTO;	/* the firmware answered a read short */
	}
	wse_call_finish(&x->call);
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
	/* Device memory is every opener's: see wse_job_admit(). */
	if (!((struct wse_file *)file->driver_priv)->admin)
		return -EPERM;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (check_add_overflow(args->bo_offset, args->length, &end) || end > obj->size) {
		ret = -EINVAL;
		goto put;
	}
	/* Mapped once for the whole copy: each piece's own mapping, which may
	 * outlive this call, then only counts one more use of it.
	 */
	ret = drm_gem_vmap_unlocked(obj, &map);
	if (ret)
		goto put;

	timeout = msecs_to_jiffies(args->timeout_ms ?: WSE_XFER_TIMEOUT_MS_DEFAULT);
	chunk_max = link->max_payload - sizeof(struct wse_link_mem) -
		    sizeof(struct wse_link_status);
	while (done < args->length) {
		u32 len = min_t(u64, args->length - done, chunk_max);

		ret = wse_xfer_chunk(link, obj, to_device, args->bo_offset + done,
				     args->dev_addr + done, len, timeout);
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
