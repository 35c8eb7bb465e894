/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: what each user holds of a device, so that no user can take all of
 * what the device's users share.
 */
#ifndef __WSE_USERS_H__
#define __WSE_USERS_H__

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

struct wse_device;
struct wse_file;

/*
 * Kernel buffers of io_uring jobs (the data they send, the room for their
 * answers) a file and a device may hold at once: at most a quarter and a
 * half of the memory on a small machine. A user may hold half of the
 * device's.
 */
#define WSE_FILE_KBUF_MAX	(256 * SZ_1M)
#define WSE_DEVICE_KBUF_MAX	SZ_1G

/*
 * Requests the firmware holds (sent, not yet answered): the users of a
 * device together keep a little below what the protocol says a device
 * takes without refusing (WSE_LINK_QUEUED_REQS, _BYTES), so that the
 * driver's own requests (unloads, counters) still fit; one user may hold
 * half of that.
 */
#define WSE_FW_RESERVED_REQS	16
#define WSE_FW_RESERVED_BYTES	SZ_1M

/**
 * struct wse_user - one user of a device and what its files hold
 * @ref: the user's open files, and the requests of theirs the firmware
 *	still holds, hold references
 * @wdev: the device (not referenced: the device's table holds the user
 *	while anyone does)
 * @uid: the user, as the initial user namespace sees it
 * @unlimited: root, not held to a user's share (the device's caps still hold)
 * @fw_reqs: requests of the user's files the firmware holds
 * @fw_bytes: their payload bytes, of the requests a device queues
 * @kbuf_bytes: kernel buffers of the user's io_uring jobs
 * @slots: program slots the user's files hold; &struct wse_slots.lock
 */
struct wse_user {
	struct kref ref;
	struct wse_device *wdev;
	u32 uid;
	bool unlimited;
	atomic64_t fw_reqs;
	atomic64_t fw_bytes;
	atomic64_t kbuf_bytes;
	u32 slots;
};

struct wse_user *wse_user_get(struct wse_device *wdev, kuid_t uid);
void wse_user_hold(struct wse_user *user);
void wse_user_put(struct wse_user *user);

int wse_fw_charge(struct wse_device *wdev, struct wse_file *wfile, u32 bytes);
void wse_fw_uncharge(struct wse_device *wdev, struct wse_file *wfile, u32 bytes);

int wse_kbuf_charge(struct wse_file *wfile, u32 len);
void wse_kbuf_uncharge(struct wse_file *wfile, u32 len);

#endif /* __WSE_USERS_H__ */
