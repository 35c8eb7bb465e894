// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the set of devices. Each is a &struct wse_device, indexed by the
 * number userspace names it by, with a platform device "wse.N" whose probe
 * creates the accel device. Attach negotiates the device's link and only
 * then creates the accel device; detach takes both down.
 */

#include <linux/module.h>
#include <linux/net.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/netlink.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_fw_stats.h"
#include "wse_genl.h"
#include "wse_handshake.h"
#include "wse_link.h"

/*
 * wse_devices_lock serialises changes to the set - reserving an index,
 * publishing, detach, reset and removal - and protects each device's @pdev
 * and, while it is being attached, its link's socket. It is not held
 * across an attach's handshake. The xarray has its own lock for lookups;
 * a device found there is referenced before that lock is dropped, and one
 * not yet published (attach in progress) is not found.
 */
static DEFINE_MUTEX(wse_devices_lock);
static DEFINE_XARRAY_ALLOC(wse_devices);

static void wse_device_release(struct kref *ref)
{
	struct wse_device *wdev = container_of(ref, struct wse_device, ref);

	wse_link_destroy(&wdev->link);
	/* Every file and request held its user, and all are gone. */
	WARN_ON_ONCE(!xa_empty(&wdev->users));
	xa_destroy(&wdev->users);
	kfree(wdev);
}

static struct wse_device *wse_device_alloc(void)
{
	struct wse_device *wdev;

	wdev = kzalloc(sizeof(*wdev), GFP_KERNEL);
	if (!wdev)
		return NULL;
	kref_init(&wdev->ref);
	wdev->accel_minor = -1;
	wse_link_init(&wdev->link);
	wse_slots_init(&wdev->slots);
	xa_init(&wdev->users);
	return wdev;
}

void wse_device_get(struct wse_device *wdev)
{
	kref_get(&wdev->ref);
}

void wse_device_put(struct wse_device *wdev)
{
	kref_put(&wdev->ref, wse_device_release);
}

/* What a device without a firmware link reports: a small mesh, so tests
 * that reason about capacity stay cheap.
 */
static void wse_fill_test_info(struct drm_wse_device_info *info, u32 index)
{
	info->wafer_width = 64;
	info->wafer_height = 64;
	info->sram_per_pe = 48 * 1024;
	info->sram_total = info->sram_per_pe * info->wafer_width * info->wafer_height;
	info->clock_khz = 850000;
	info->num_queues = 4;
	info->device_id = index;
	strscpy_pad(info->fw_version, "none (test device)", sizeof(info->fw_version));
}

/* Creates the platform device, whose probe creates the accel device. */
static int wse_devices_publish(struct wse_device *wdev)
{
	struct platform_device *pdev;

	pdev = platform_device_register_data(NULL, WSE_DRIVER_NAME, wdev->index,
					     &wdev, sizeof(wdev));
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	/* Registration succeeds even when probe fails. */
	if (wdev->accel_minor < 0) {
		platform_device_unregister(pdev);
		return -ENODEV;
	}
	wdev->pdev = pdev;
	return 0;
}

static int wse_devices_reserve(struct wse_device **out)
{
	struct wse_device *wdev;
	u32 index;
	int ret;

	wdev = wse_device_alloc();
	if (!wdev)
		return -ENOMEM;
	/* Lookups skip the device until wse_devices_show() publishes it. */
	ret = xa_alloc(&wse_devices, &index, wdev, XA_LIMIT(0, WSE_MAX_DEVICES - 1),
		       GFP_KERNEL);
	if (ret) {
		wse_device_put(wdev);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	wdev->index = index;
	*out = wdev;
	return 0;
}

static void wse_devices_unreserve(struct wse_device *wdev)
{
	xa_erase(&wse_devices, wdev->index);
	wse_device_put(wdev);
}

static void wse_devices_show(struct wse_device *wdev)
{
	/* Pairs with the acquires in lookups: they see a finished device. */
	smp_store_release(&wdev->published, true);
}

int wse_devices_add_test(void)
{
	struct wse_device *wdev;
	int ret;

	mutex_lock(&wse_devices_lock);
	ret = wse_devices_reserve(&wdev);
	if (ret)
		goto out;
	wdev->is_test = true;
	wse_fill_test_info(&wdev->info, wdev->index);
	strscpy(wdev->link.peer, "none", sizeof(wdev->link.peer));
	ret = wse_devices_publish(wdev);
	if (ret) {
		wse_devices_unreserve(wdev);
		goto out;
	}
	wse_devices_show(wdev);
out:
	mutex_unlock(&wse_devices_lock);
	return ret;
}

/* Whether a device, attached or being attached, has @sock; the caller
 * holds wse_devices_lock.
 */
static bool wse_devices_have_socket(struct socket *sock)
{
	struct wse_device *wdev;
	unsigned long index;

	xa_for_each(&wse_devices, index, wdev)
		if (wdev->link.sock == sock)
			return true;
	return false;
}

int wse_devices_attach(int fd, u32 keepalive_ms, struct netlink_ext_ack *extack,
		       struct wse_device **out)
{
	struct wse_device *wdev;
	struct socket *sock;
	int ret;

	sock = sockfd_lookup(fd, &ret);
	if (!sock) {
		NL_SET_ERR_MSG(extack, "the file descriptor is not a socket");
		return ret;
	}

	mutex_lock(&wse_devices_lock);
	if (wse_devices_have_socket(sock)) {
		NL_SET_ERR_MSG(extack, "the socket is already attached");
		ret = -EBUSY;
		goto err_sock;
	}
	ret = wse_devices_reserve(&wdev);
	if (ret) {
		NL_SET_ERR_MSG(extack, "too many devices");
		goto err_sock;
	}
	/* From here a second ATTACH of the same socket finds it taken. */
	ret = wse_link_bind(&wdev->link, sock, keepalive_ms, WSE_HANDSHAKE_TIMEOUT);
	if (ret)
		goto err_reserved;
	mutex_unlock(&wse_devices_lock);

	/* Without the lock: a slow peer holds up no other command. The
	 * device is not published, so nothing else finds it meanwhile.
	 */
	ret = wse_handshake(wdev, extack);

	mutex_lock(&wse_devices_lock);
	if (ret)
		goto err_bound;
	/* From here on the link owns the socket. */
	ret = wse_link_start(&wdev->link);
	if (!ret)
		ret = wse_devices_publish(wdev);
	if (ret) {
		NL_SET_ERR_MSG(extack, "creating the accel device failed");
		wse_link_stop(&wdev->link);
		wse_devices_unreserve(wdev);
		goto out;
	}
	wse_devices_show(wdev);
	wse_device_get(wdev);
	*out = wdev;
	dev_info(&wdev->pdev->dev, "attached %s: %ux%u PEs, firmware %s\n", wdev->link.peer,
		 wdev->info.wafer_width, wdev->info.wafer_height, wdev->info.fw_version);
	mutex_unlock(&wse_devices_lock);

	wse_genl_notify(wdev, WSE_EVENT_LINK_UP, 0, "attached");
	return 0;

err_bound:
	wse_link_unbind(&wdev->link);
err_reserved:
	wse_devices_unreserve(wdev);
err_sock:
	sockfd_put(sock);
out:
	mutex_unlock(&wse_devices_lock);
	return ret;
}

/* A published device, for commands that name one; the caller holds
 * wse_devices_lock. A device still being attached is not found.
 */
static struct wse_device *wse_devices_find(u32 index, struct netlink_ext_ack *extack)
{
	struct wse_device *wdev = xa_load(&wse_devices, index);

	if (!wdev || !wdev->published) {
		NL_SET_ERR_MSG_FMT(extack, "no device %u", index);
		return NULL;
	}
	return wdev;
}

/* Takes one device down; the caller holds wse_devices_lock. */
static void wse_devices_remove_locked(struct wse_device *wdev)
{
	xa_erase(&wse_devices, wdev->index);
	wse_link_stop(&wdev->link);
	/* The link is dead: no unload is answered or asked again. */
	wse_slots_stop(&wdev->slots);
	/* Open files keep the accel device; its ioctls then fail. */
	platform_device_unregister(wdev->pdev);
	wdev->pdev = NULL;
	wse_device_put(wdev);
}

int wse_devices_detach(u32 index, struct netlink_ext_ack *extack)
{
	struct wse_device *wdev;
	int ret = 0;

	mutex_lock(&wse_devices_lock);
	wdev = wse_devices_find(index, extack);
	if (!wdev) {
		ret = -ENODEV;
		goto out;
	}
	if (wdev->is_test) {
		NL_SET_ERR_MSG_FMT(extack, "device %u is a test device; unload the module instead",
				   index);
		ret = -EOPNOTSUPP;
		goto out;
	}
	wse_device_get(wdev);
	wse_devices_remove_locked(wdev);
	wse_genl_notify(wdev, WSE_EVENT_LINK_DOWN, 0, "detached");
	wse_device_put(wdev);
out:
	mutex_unlock(&wse_devices_lock);
	return ret;
}

int wse_devices_reset(u32 index, struct netlink_ext_ack *extack)
{
	struct wse_device *wdev;
	int ret = 0;

	mutex_lock(&wse_devices_lock);
	wdev = wse_devices_find(index, extack);
	if (wdev) {
		wse_link_reset(&wdev->link);
		wse_genl_notify(wdev, WSE_EVENT_RESET, 0, "reset");
	} else {
		ret = -ENODEV;
	}
	mutex_unlock(&wse_devices_lock);
	return ret;
}

void wse_devices_remove_all(void)
{
	struct wse_device *wdev;
	unsigned long index;

	/* The control plane is gone: no attach is half done. */
	mutex_lock(&wse_devices_lock);
	xa_for_each(&wse_devices, index, wdev)
		wse_devices_remove_locked(wdev);
	mutex_unlock(&wse_devices_lock);
}

/* A referenced device, or NULL. */
struct wse_device *wse_devices_get(u32 index)
{
	struct wse_device *wdev;

	xa_lock(&wse_devices);
	wdev = xa_load(&wse_devices, index);
	/* Pairs with wse_devices_show(). */
	if (wdev && smp_load_acquire(&wdev->published))
		wse_device_get(wdev);
	else
		wdev = NULL;
	xa_unlock(&wse_devices);
	return wdev;
}

/* The referenced device at *index or after it, for dumps; NULL at the end. */
struct wse_device *wse_devices_next(unsigned long *index)
{
	struct wse_device *wdev;

	xa_lock(&wse_devices);
	for (wdev = xa_find(&wse_devices, index, WSE_MAX_DEVICES - 1, XA_PRESENT); wdev;
	     wdev = xa_find_after(&wse_devices, index, WSE_MAX_DEVICES - 1, XA_PRESENT)) {
		/* Pairs with wse_devices_show(). */
		if (smp_load_acquire(&wdev->published)) {
			wse_device_get(wdev);
			break;
		}
	}
	xa_unlock(&wse_devices);
	return wdev;
}
