// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the set of devices. Each is a &struct wse_link, indexed by the
 * number userspace names it by, with a platform device "wse.N" whose probe
 * creates the accel device. Attach negotiates a link and only then creates
 * the device; detach takes both down.
 */

#include <linux/module.h>
#include <linux/net.h>
#include <linux/platform_device.h>
#include <linux/xarray.h>
#include <net/netlink.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_genl.h"
#include "wse_link.h"

/*
 * wse_devices_lock serialises attach, detach, reset and removal, and
 * protects each link's @pdev. The xarray has its own lock for lookups;
 * a link found there is referenced before that lock is dropped, and one
 * not yet published (attach in progress) is not found.
 */
static DEFINE_MUTEX(wse_devices_lock);
static DEFINE_XARRAY_ALLOC(wse_devices);

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
static int wse_devices_publish(struct wse_link *link)
{
	struct platform_device *pdev;

	pdev = platform_device_register_data(NULL, WSE_DRIVER_NAME, link->index,
					     &link, sizeof(link));
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	/* Registration succeeds even when probe fails. */
	if (link->accel_minor < 0) {
		platform_device_unregister(pdev);
		return -ENODEV;
	}
	link->pdev = pdev;
	return 0;
}

static int wse_devices_reserve(struct wse_link **out)
{
	struct wse_link *link;
	u32 index;
	int ret;

	link = wse_link_alloc();
	if (!link)
		return -ENOMEM;
	/* Lookups skip the link until wse_devices_show() publishes it. */
	ret = xa_alloc(&wse_devices, &index, link, XA_LIMIT(0, WSE_MAX_DEVICES - 1),
		       GFP_KERNEL);
	if (ret) {
		wse_link_put(link);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	link->index = index;
	*out = link;
	return 0;
}

static void wse_devices_unreserve(struct wse_link *link)
{
	xa_erase(&wse_devices, link->index);
	wse_link_put(link);
}

static void wse_devices_show(struct wse_link *link)
{
	/* Pairs with the acquires in lookups: they see a finished link. */
	smp_store_release(&link->published, true);
}

int wse_devices_add_test(void)
{
	struct wse_link *link;
	int ret;

	mutex_lock(&wse_devices_lock);
	ret = wse_devices_reserve(&link);
	if (ret)
		goto out;
	link->is_test = true;
	wse_fill_test_info(&link->info, link->index);
	strscpy(link->peer, "none", sizeof(link->peer));
	ret = wse_devices_publish(link);
	if (ret) {
		wse_devices_unreserve(link);
		goto out;
	}
	wse_devices_show(link);
out:
	mutex_unlock(&wse_devices_lock);
	return ret;
}

int wse_devices_attach(int fd, u32 keepalive_ms, struct netlink_ext_ack *extack,
		       struct wse_link **out)
{
	struct wse_link *link;
	struct socket *sock;
	int ret;

	sock = sockfd_lookup(fd, &ret);
	if (!sock) {
		NL_SET_ERR_MSG(extack, "the file descriptor is not a socket");
		return ret;
	}

	mutex_lock(&wse_devices_lock);
	ret = wse_devices_reserve(&link);
	if (ret) {
		NL_SET_ERR_MSG(extack, "too many devices");
		goto err_sock;
	}
	ret = wse_link_handshake(link, sock, keepalive_ms, extack);
	if (ret)
		goto err_link;
	/* From here on the link owns the socket. */
	ret = wse_link_start(link);
	if (!ret)
		ret = wse_devices_publish(link);
	if (ret) {
		NL_SET_ERR_MSG(extack, "creating the accel device failed");
		wse_link_stop(link);
		wse_devices_unreserve(link);
		goto out;
	}
	wse_devices_show(link);
	wse_link_get(link);
	*out = link;
	dev_info(&link->pdev->dev, "attached %s: %ux%u PEs, firmware %s\n", link->peer,
		 link->info.wafer_width, link->info.wafer_height, link->info.fw_version);
	mutex_unlock(&wse_devices_lock);

	wse_genl_notify(link, WSE_EVENT_LINK_UP, 0, "attached");
	return 0;

err_link:
	wse_devices_unreserve(link);
err_sock:
	sockfd_put(sock);
out:
	mutex_unlock(&wse_devices_lock);
	return ret;
}

/* Takes one device down; the caller holds wse_devices_lock. */
static void wse_devices_remove_locked(struct wse_link *link)
{
	xa_erase(&wse_devices, link->index);
	wse_link_stop(link);
	/* Open files keep the accel device; its ioctls then fail. */
	platform_device_unregister(link->pdev);
	link->pdev = NULL;
	wse_link_put(link);
}

int wse_devices_detach(u32 index, struct netlink_ext_ack *extack)
{
	struct wse_link *link;
	int ret = 0;

	mutex_lock(&wse_devices_lock);
	link = xa_load(&wse_devices, index);
	if (!link) {
		NL_SET_ERR_MSG_FMT(extack, "no device %u", index);
		ret = -ENODEV;
		goto out;
	}
	if (link->is_test) {
		NL_SET_ERR_MSG_FMT(extack, "device %u is a test device; unload the module instead",
				   index);
		ret = -EOPNOTSUPP;
		goto out;
	}
	wse_link_get(link);
	wse_devices_remove_locked(link);
	wse_genl_notify(link, WSE_EVENT_LINK_DOWN, 0, "detached");
	wse_link_put(link);
out:
	mutex_unlock(&wse_devices_lock);
	return ret;
}

int wse_devices_reset(u32 index, struct netlink_ext_ack *extack)
{
	struct wse_link *link;
	int ret = 0;

	mutex_lock(&wse_devices_lock);
	link = xa_load(&wse_devices, index);
	if (link) {
		wse_link_reset(link);
		wse_genl_notify(link, WSE_EVENT_RESET, 0, "reset");
	} else {
		NL_SET_ERR_MSG_FMT(extack, "no device %u", index);
		ret = -ENODEV;
	}
	mutex_unlock(&wse_devices_lock);
	return ret;
}

void wse_devices_remove_all(void)
{
	struct wse_link *link;
	unsigned long index;

	mutex_lock(&wse_devices_lock);
	xa_for_each(&wse_devices, index, link)
		wse_devices_remove_locked(link);
	mutex_unlock(&wse_devices_lock);
}

/* A referenced device, or NULL. */
struct wse_link *wse_devices_get(u32 index)
{
	struct wse_link *link;

	xa_lock(&wse_devices);
	link = xa_load(&wse_devices, index);
	/* Pairs with wse_devices_show(). */
	if (link && smp_load_acquire(&link->published))
		wse_link_get(link);
	else
		link = NULL;
	xa_unlock(&wse_devices);
	return link;
}

/* The referenced device at *index or after it, for dumps; NULL at the end. */
struct wse_link *wse_devices_next(unsigned long *index)
{
	struct wse_link *link;

	xa_lock(&wse_devices);
	for (link = xa_find(&wse_devices, index, WSE_MAX_DEVICES - 1, XA_PRESENT); link;
	     link = xa_find_after(&wse_devices, index, WSE_MAX_DEVICES - 1, XA_PRESENT)) {
		/* Pairs with wse_devices_show(). */
		if (smp_load_acquire(&link->published)) {
			wse_link_get(link);
			break;
		}
	}
	xa_unlock(&wse_devices);
	return link;
}
