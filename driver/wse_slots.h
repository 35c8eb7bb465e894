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
/* Slots one file, and one user but root, may hold at once. */
#define WSE_FILE_SLOTS_MAX	16
#define WSE_USER_SLOTS_MAX	64

/**
 * enum wse_slot_state - where a slot is in its life
 * @WSE_SLOT_FREE: nobody's
 * @WSE_SLOT_LOADING: a file claimed it with a PROGRAM_LOAD (or a job's
 *	PARAMS_JOB) that the firmware has not yet confirmed as a whole
 *	program: only that file may go on loading, unload it or set its job
 * @WSE_SLOT_LOADED: the firmware answered a last PROGRAM_LOAD piece of the
 *	owner's with a program: the owner may use it in every way
 * @WSE_SLOT_CLOSING: its owner closed; once the firmware has answered
 *	every request the owner sent for it, the driver unloads it, and once
 *	that is answered, it is free
 */
enum wse_slot_state {
	WSE_SLOT_FREE,
	WSE_SLOT_LOADING,
	WSE_SLOT_LOADED,
	WSE_SLOT_CLOSING,
};

/**
 * enum wse_slot_use - what a job does with the slot it names
 * @WSE_SLOT_NONE: it names none (device memory, counters, an appliance's
 *	own slot 0)
 * @WSE_SLOT_USE: streams, RUN, parameters: the owner's loaded program
 * @WSE_SLOT_CLAIM: loads into it (or sets its job): claims a free slot
 * @WSE_SLOT_UNLOAD: unloads it: the owner's, in any state
 */
enum wse_slot_use {
	WSE_SLOT_NONE,
	WSE_SLOT_USE,
	WSE_SLOT_CLAIM,
	WSE_SLOT_UNLOAD,
};

/**
 * struct wse_slot - one program slot
 * @owner: the file that claimed it (referenced), or NULL when free
 * @state: an &enum wse_slot_state
 * @sent: a request of the owner's for it reached the link since the claim
 * @inflight: the owner's requests naming it that the firmware may still
 *	answer, and submissions of them under way
 */
struct wse_slot {
	struct wse_file *owner;
	u8 state;
	bool sent;
	u32 inflight;
};

/**
 * struct wse_slots - the owners of a device's program slots
 * @slot: each slot
 * @retry: slots whose unload the firmware put off (a RUN, a cancel), to
 *	ask again
 * @retry_work: asks again
 */
struct wse_slots {
	/** @lock: protects @slot, and &wse_file.slots and &wse_user.slots. */
	spinlock_t lock;
	struct wse_slot slot[WSE_SLOTS];
	DECLARE_BITMAP(retry, WSE_SLOTS);
	struct delayed_work retry_work;
};

void wse_slots_init(struct wse_slots *slots);
int wse_slots_begin(struct wse_slots *slots, struct wse_file *wfile, u64 slot,
		    enum wse_slot_use use);
void wse_slots_sent(struct wse_slots *slots, u32 slot);
void wse_slots_confirm(struct wse_slots *slots, u32 slot);
void wse_slots_end(struct wse_slots *slots, u32 slot, bool loaded);
void wse_slots_release(struct wse_device *wdev, struct wse_file *wfile);
void wse_slots_stop(struct wse_slots *slots);

#endif /* __WSE_SLOTS_H__ */
