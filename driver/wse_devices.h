/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the device record, the set of devices, and attaching and detaching
 * them.
 */
#ifndef __WSE_DEVICES_H__
#define __WSE_DEVICES_H__

#include <linux/container_of.h>
#include <linux/kref.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/types.h>

#include "../uapi/drm/wse_accel.h"
#include "wse_link.h"
#include "wse_slots.h"

struct netlink_ext_ack;
struct platform_device;

#define WSE_MAX_DEVICES		64

/**
 * struct wse_device - one device: its place in the device set, what it
 * is, its accel device, and its link to the firmware. Test devices have
 * one too, with a link that has no socket.
 *
 * Immutable once the device is published (@published set, with release
 * ordering): @index, @is_test, @info, and the link's negotiated fields.
 */
struct wse_device {
	/**
	 * @ref: the device set, the accel device, queues, the link's
	 * transmit work and callers hold references.
	 */
	struct kref ref;
	/** @index: the device's number in the device set (wse.N). */
	u32 index;
	/** @published: attach finished; lookups may return the device. */
	bool published;
	/** @is_test: a link-less test device (module parameter test_devices). */
	bool is_test;
	/** @info: what the firmware reported in HELLO, as the UAPI shows it. */
	struct drm_wse_device_info info;
	/** @pdev: the platform device of the accel device; device set lock. */
	struct platform_device *pdev;
	/** @accel_minor: N of /dev/accel/accelN, or -1 before probe. */
	int accel_minor;
	/** @link: the link to the firmware. */
	struct wse_link link;

	/** @kbuf_bytes: bytes of kernel buffers its jobs hold (wse_users.c). */
	atomic64_t kbuf_bytes;
	/** @fw_reqs: requests the firmware holds, the driver's own too (wse_users.c). */
	atomic64_t fw_reqs;
	/** @fw_bytes: their payload bytes, of those a device queues. */
	atomic64_t fw_bytes;
	/**
	 * @users: uid -> &struct wse_user of every user with an open file or
	 * a request the firmware holds; its own lock guards membership.
	 */
	struct xarray users;
	/** @slots: which file owns each program slot. */
	struct wse_slots slots;
};

/* The device a link belongs to. */
static inline struct wse_device *wse_link_device(struct wse_link *link)
{
	return container_of(link, struct wse_device, link);
}

void wse_device_get(struct wse_device *wdev);
void wse_device_put(struct wse_device *wdev);

int wse_devices_attach(int fd, u32 keepalive_ms, struct netlink_ext_ack *extack,
		       struct wse_device **out);
int wse_devices_detach(u32 index, struct netlink_ext_ack *extack);
int wse_devices_reset(u32 index, struct netlink_ext_ack *extack);
int wse_devices_add_test(void);
void wse_devices_remove_all(void);
struct wse_device *wse_devices_get(u32 index);
struct wse_device *wse_devices_next(unsigned long *index);

#endif /* __WSE_DEVICES_H__ */
