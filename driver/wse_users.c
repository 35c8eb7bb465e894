// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the users of a device, and the caps on what they share. Every
 * opener of a device shares its firmware's read-ahead (the requests it
 * holds, and their bytes) and the kernel memory of io_uring jobs. Each is
 * counted per user and per device (kernel memory per file too), and a
 * user may take at most half of what the device's users may hold
 * together, so one user, however many files it opens, always leaves the
 * others room. Root is held only to the device's caps.
 */

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "wse_devices.h"
#include "wse_job.h"
#include "wse_users.h"

/**
 * wse_user_get() - the device's record of a user, made on first use
 * @wdev: the device
 * @kuid: the user
 *
 * Return: a reference to the record, or NULL without memory.
 */
struct wse_user *wse_user_get(struct wse_device *wdev, kuid_t kuid)
{
	u32 uid = from_kuid(&init_user_ns, kuid);
	struct wse_user *user, *made;

	/* A record on its way out (no references left) is replaced, not revived. */
	xa_lock(&wdev->users);
	user = xa_load(&wdev->users, uid);
	if (user && kref_get_unless_zero(&user->ref))
		goto out;
	xa_unlock(&wdev->users);

	made = kzalloc(sizeof(*made), GFP_KERNEL);
	if (!made)
		return NULL;
	kref_init(&made->ref);
	made->wdev = wdev;
	made->uid = uid;
	made->unlimited = uid_eq(kuid, GLOBAL_ROOT_UID);

	xa_lock(&wdev->users);
	for (;;) {
		struct wse_user *old;

		user = xa_load(&wdev->users, uid);
		if (user && kref_get_unless_zero(&user->ref)) {
			kfree(made);
			break;
		}
		/* May drop the lock to allocate: another opener may come first. */
		old = __xa_cmpxchg(&wdev->users, uid, user, made, GFP_KERNEL);
		if (xa_is_err(old)) {
			kfree(made);
			user = NULL;
			break;
		}
		if (old == user) {
			user = made;
			break;
		}
	}
out:
	xa_unlock(&wdev->users);
	return user;
}

/* Another reference to a record the caller holds. */
void wse_user_hold(struct wse_user *user)
{
	kref_get(&user->ref);
}

static void wse_user_release(struct kref *ref)
{
	struct wse_user *user = container_of(ref, struct wse_user, ref);
	struct xarray *users = &user->wdev->users;

	/* Unless a newer record of the same user replaced it already. */
	xa_lock(users);
	if (xa_load(users, user->uid) == user)
		__xa_erase(users, user->uid);
	xa_unlock(users);
	kfree(user);
}

/* Process context: the last put takes the device's table lock. */
void wse_user_put(struct wse_user *user)
{
	kref_put(&user->ref, wse_user_release);
}

/*
 * Adds @n to @count unless that takes it past @max; whether it did. Only
 * an add that stays within @max is kept, so a refused one never shows.
 */
static bool wse_add_within(atomic64_t *count, s64 n, s64 max)
{
	s64 old = atomic64_read(count);

	do {
		if (old + n > max)
			return false;
	} while (!atomic64_try_cmpxchg(count, &old, old + n));
	return true;
}

/**
 * wse_fw_charge() - count a request the firmware will hold until it answers
 * @wdev: the device
 * @wfile: the file it is for, or NULL for the driver's own
 * @bytes: its payload, if it is one a device queues (else 0)
 *
 * The driver's own requests may use the whole read-ahead a device takes
 * (WSE_LINK_QUEUED_REQS, _BYTES); the users' together a little less, and
 * each user half of that unless it is root.
 *
 * Return: 0, counted until wse_fw_uncharge(); or -EBUSY: wait for answers.
 */
int wse_fw_charge(struct wse_device *wdev, struct wse_file *wfile, u32 bytes)
{
	s64 reqs_max = WSE_LINK_QUEUED_REQS;
	s64 bytes_max = WSE_LINK_QUEUED_BYTES;
	struct wse_user *user = wfile ? wfile->user : NULL;

	if (wfile) {
		reqs_max -= WSE_FW_RESERVED_REQS;
		bytes_max -= WSE_FW_RESERVED_BYTES;
	}
	if (!wse_add_within(&wdev->fw_reqs, 1, reqs_max))
		return -EBUSY;
	if (!wse_add_within(&wdev->fw_bytes, bytes, bytes_max))
		goto undo_dev_reqs;
	if (!user)
		return 0;
	if (!wse_add_within(&user->fw_reqs, 1, user->unlimited ? S64_MAX : reqs_max / 2))
		goto undo_dev_bytes;
	if (!wse_add_within(&user->fw_bytes, bytes, user->unlimited ? S64_MAX : bytes_max / 2))
		goto undo_user_reqs;
	return 0;

undo_user_reqs:
	atomic64_dec(&user->fw_reqs);
undo_dev_bytes:
	atomic64_sub(bytes, &wdev->fw_bytes);
undo_dev_reqs:
	atomic64_dec(&wdev->fw_reqs);
	return -EBUSY;
}

/**
 * wse_fw_uncharge() - the firmware answered a counted request, or never will
 * @wdev: the device
 * @wfile: as given to wse_fw_charge()
 * @bytes: as given to wse_fw_charge()
 */
void wse_fw_uncharge(struct wse_device *wdev, struct wse_file *wfile, u32 bytes)
{
	if (wfile) {
		atomic64_dec(&wfile->user->fw_reqs);
		atomic64_sub(bytes, &wfile->user->fw_bytes);
	}
	atomic64_sub(bytes, &wdev->fw_bytes);
	atomic64_dec(&wdev->fw_reqs);
}

/**
 * wse_kbuf_charge() - count a kernel buffer an io_uring job of @wfile holds
 * @wfile: the file
 * @len: bytes
 *
 * No file may hold more than a quarter of the memory (at most 256 MiB),
 * no device more than half (at most 1 GiB), no user but root more than
 * half of the device's.
 *
 * Return: 0, counted until wse_kbuf_uncharge(); or -ENOBUFS.
 */
int wse_kbuf_charge(struct wse_file *wfile, u32 len)
{
	struct wse_device *wdev = wfile->wdev;
	struct wse_user *user = wfile->user;
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	s64 file_max = min_t(u64, WSE_FILE_KBUF_MAX, ram / 4);
	s64 dev_max = min_t(u64, WSE_DEVICE_KBUF_MAX, ram / 2);

	if (!wse_add_within(&wfile->kbuf_bytes, len, file_max))
		return -ENOBUFS;
	if (!wse_add_within(&user->kbuf_bytes, len, user->unlimited ? S64_MAX : dev_max / 2))
		goto undo_file;
	if (!wse_add_within(&wdev->kbuf_bytes, len, dev_max))
		goto undo_user;
	return 0;

undo_user:
	atomic64_sub(len, &user->kbuf_bytes);
undo_file:
	atomic64_sub(len, &wfile->kbuf_bytes);
	return -ENOBUFS;
}

void wse_kbuf_uncharge(struct wse_file *wfile, u32 len)
{
	atomic64_sub(len, &wfile->kbuf_bytes);
	atomic64_sub(len, &wfile->user->kbuf_bytes);
	atomic64_sub(len, &wfile->wdev->kbuf_bytes);
}
