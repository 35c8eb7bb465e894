/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: who owns the device's program slots.
 */
#ifndef __WSE_SLOTS_H__
#define __WSE_SLOTS_H__

#include <linux/bitmap.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

struct wse_device;
struct wse_file;

/* Program slots are 1..255 (struct wse_link_program_load). */
#define WSE_SLOTS		256

/**
 * struct wse_slots - the owners of a device's program slots
 * @owner: slot -> the file that loaded into it (referenced), or NULL; a
 *	closed file stays the owner until the firmware has unloaded it
 * @retry: slots whose unload found the program running, to ask again
 * @retry_work: asks again
 */
struct wse_slots {
	/** @lock: protects @owner. */
	spinlock_t lock;
	struct wse_file *owner[WSE_SLOTS];
	DECLARE_BITMAP(retry, WSE_SLOTS);
	struct delayed_work retry_work;
};

void wse_slots_init(struct wse_slots *slots);
int wse_slots_use(struct wse_slots *slots, struct wse_file *wfile, u64 slot, bool load);
void wse_slots_release(struct wse_device *wdev, struct wse_file *wfile);
void wse_slots_stop(struct wse_slots *slots);

#endif /* __WSE_SLOTS_H__ */
