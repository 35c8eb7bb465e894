// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: who owns the device's program slots. A program, its streams, its
 * parameters and the SRAM it holds live in a slot of the firmware, which
 * every opener of the device shares; the driver gives each slot to the
 * file that claims it with a load, and only that file may use it - once
 * the firmware has confirmed that what it loaded is a whole program.
 *
 * When the file closes, its slots are freed in two steps, so that nobody
 * can find what it left: first every request the file sent for a slot
 * must have been answered (whatever hardware queue it went on, the
 * firmware can no longer put a program there), then the driver unloads
 * the slot, and it is free once the firmware says it is empty.
 */

#include <linux/slab.h>

#include "wse_call.h"
#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_slots.h"
#include "wse_users.h"

/* How soon to ask again to unload a program the firmware could not unload yet. */
#define WSE_SLOT_RETRY		HZ

/* An unload the driver sends for a file that closed; nobody waits for it. */
struct wse_slot_unload {
	struct wse_call call;
	struct wse_link_program_ref ref;
	struct wse_device *wdev;
	u32 slot;
};

static void wse_slots_retry(struct work_struct *work);

void wse_slots_init(struct wse_slots *slots)
{
	spin_lock_init(&slots->lock);
	INIT_DELAYED_WORK(&slots->retry_work, wse_slots_retry);
}

/**
 * wse_slots_begin() - check that a file may send a job for a slot
 * @slots: the device's slots
 * @wfile: the file
 * @slot: the slot its job names
 * @use: what the job does with it
 *
 * On success the job counts as the file's request for the slot until
 * wse_slots_end(); a claim that never reaches the link is undone there.
 *
 * Return: 0; -EINVAL for a slot outside 1..255; -ENOENT for a free slot
 * (load into it first), or one of the file's whose program the firmware
 * has not confirmed; -EBUSY to claim a slot another file holds (or that
 * is still being freed); -EACCES for any other use of one; -ENOSPC when
 * the file, or its user, holds as many slots as it may.
 */
int wse_slots_begin(struct wse_slots *slots, struct wse_file *wfile, u64 slot,
		    enum wse_slot_use use)
{
	struct wse_user *user = wfile->user;
	struct wse_slot *s;
	int ret = 0;

	if (!slot || slot >= WSE_SLOTS)
		return -EINVAL;
	s = &slots->slot[slot];
	spin_lock(&slots->lock);
	if (s->owner == wfile) {
		if (use == WSE_SLOT_USE && s->state != WSE_SLOT_LOADED)
			ret = -ENOENT;
	} else if (s->owner) {
		ret = use == WSE_SLOT_CLAIM ? -EBUSY : -EACCES;
	} else if (use != WSE_SLOT_CLAIM) {
		ret = -ENOENT;
	} else if (wfile->slots >= WSE_FILE_SLOTS_MAX ||
		   (!user->unlimited && user->slots >= WSE_USER_SLOTS_MAX)) {
		ret = -ENOSPC;
	} else {
		kref_get(&wfile->ref);
		s->owner = wfile;
		s->state = WSE_SLOT_LOADING;
		s->sent = false;
		wfile->slots++;
		user->slots++;
	}
	if (!ret)
		s->inflight++;
	spin_unlock(&slots->lock);
	return ret;
}

/* A job wse_slots_begin() let through reached the link. */
void wse_slots_sent(struct wse_slots *slots, u32 slot)
{
	struct wse_slot *s = &slots->slot[slot];

	/* Once set it stays so until the slot is free: each job need not lock. */
	if (READ_ONCE(s->sent))
		return;
	spin_lock(&slots->lock);
	WRITE_ONCE(s->sent, true);
	spin_unlock(&slots->lock);
}

/*
 * The firmware answered a last piece of the owner's with a whole program:
 * the owner may use the slot. Called before the load's job finishes, so
 * that a caller who has its answer finds the slot usable.
 */
void wse_slots_confirm(struct wse_slots *slots, u32 slot)
{
	spin_lock(&slots->lock);
	if (slots->slot[slot].state == WSE_SLOT_LOADING)
		slots->slot[slot].state = WSE_SLOT_LOADED;
	spin_unlock(&slots->lock);
}

/* Takes the slot from its owner; the caller holds the lock, and puts the owner. */
static struct wse_file *wse_slots_clear(struct wse_slots *slots, u32 slot)
{
	struct wse_slot *s = &slots->slot[slot];
	struct wse_file *owner = s->owner;

	if (owner) {
		owner->slots--;
		owner->user->slots--;
	}
	s->owner = NULL;
	s->state = WSE_SLOT_FREE;
	WRITE_ONCE(s->sent, false);
	return owner;
}

/* The firmware has let go of the slot: nobody owns it. */
static void wse_slots_free(struct wse_slots *slots, u32 slot)
{
	struct wse_file *owner;

	spin_lock(&slots->lock);
	owner = wse_slots_clear(slots, slot);
	spin_unlock(&slots->lock);
	if (owner)
		wse_file_put(owner);
}

static void wse_slots_unload(struct wse_device *wdev, u32 slot);

/**
 * wse_slots_end() - a job for a slot is over, for the firmware too
 * @slots: the device's slots
 * @slot: the slot wse_slots_begin() let it use
 * @loaded: the firmware answered it with a whole program (a last
 *	PROGRAM_LOAD piece that succeeded)
 *
 * Called once the firmware has answered the job or never will, whether
 * or not its owner still waited for it; or when the job never reached
 * the link. Process context.
 */
void wse_slots_end(struct wse_slots *slots, u32 slot, bool loaded)
{
	struct wse_device *wdev = container_of(slots, struct wse_device, slots);
	struct wse_slot *s = &slots->slot[slot];
	struct wse_file *unclaimed = NULL;
	bool unload;

	spin_lock(&slots->lock);
	s->inflight--;
	/* An answer its owner gave up waiting for confirms the program too. */
	if (loaded && s->state == WSE_SLOT_LOADING)
		s->state = WSE_SLOT_LOADED;
	/* A claim none of whose requests got anywhere claims nothing. */
	if (s->state == WSE_SLOT_LOADING && !s->sent && !s->inflight)
		unclaimed = wse_slots_clear(slots, slot);
	unload = s->state == WSE_SLOT_CLOSING && !s->inflight;
	spin_unlock(&slots->lock);
	if (unclaimed)
		wse_file_put(unclaimed);
	if (unload)
		wse_slots_unload(wdev, slot);
}

/* The retry work holds a reference to the device while it is queued. */
static void wse_slots_ask_again(struct wse_slots *slots, u32 slot)
{
	struct wse_device *wdev = container_of(slots, struct wse_device, slots);

	set_bit(slot, slots->retry);
	wse_device_get(wdev);
	if (!queue_delayed_work(wse_wq, &slots->retry_work, WSE_SLOT_RETRY))
		wse_device_put(wdev);
}

/*
 * The firmware answered the unload, or never will, and the frame is done
 * with. A program still running (EBUSY), or an unload that was cancelled
 * or never sent, is asked again a second later. Anything else - unloaded,
 * nothing there, the link gone - frees the slot.
 */
static void wse_slot_unload_release(struct wse_call *call)
{
	struct wse_slot_unload *u = container_of(call, struct wse_slot_unload, call);
	struct wse_device *wdev = u->wdev;
	int status = call->req.status;

	wse_fw_uncharge(wdev, NULL, sizeof(u->ref));
	if ((status == -EBUSY || status == -ECANCELED) &&
	    wse_link_state(&wdev->link, NULL) == WSE_LINK_STATE_UP)
		wse_slots_ask_again(&wdev->slots, u->slot);
	else
		wse_slots_free(&wdev->slots, u->slot);
	wse_device_put(wdev);
	kfree(u);
}

/* Sends PROGRAM_UNLOAD for @slot; 0, or the error it could not be sent with. */
static int wse_slot_unload_send(struct wse_device *wdev, u32 slot)
{
	struct wse_slot_unload *u;
	struct kvec vec;
	int ret;

	ret = wse_fw_charge(wdev, NULL, sizeof(u->ref));
	if (ret)
		return ret;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u) {
		wse_fw_uncharge(wdev, NULL, sizeof(u->ref));
		return -ENOMEM;
	}
	u->wdev = wdev;
	u->slot = slot;
	u->ref.program = cpu_to_le32(slot);
	u->call.req.opcode = WSE_LINK_OP_PROGRAM_UNLOAD;
	u->call.release = wse_slot_unload_release;
	vec.iov_base = &u->ref;
	vec.iov_len = sizeof(u->ref);
	wse_device_get(wdev);
	ret = wse_call_post(&wdev->link, &u->call, &vec, 1);
	if (ret) {
		wse_device_put(wdev);
		wse_fw_uncharge(wdev, NULL, sizeof(u->ref));
		kfree(u);
	}
	return ret;
}

/*
 * Unloads @slot; frees it if the link is gone (the firmware dropped every
 * program with it), or asks again later if the request cannot go now.
 */
static void wse_slots_unload(struct wse_device *wdev, u32 slot)
{
	int ret = wse_slot_unload_send(wdev, slot);

	if (!ret)
		return;
	if (ret != -ENOTCONN && wse_link_state(&wdev->link, NULL) == WSE_LINK_STATE_UP)
		wse_slots_ask_again(&wdev->slots, slot);
	else
		wse_slots_free(&wdev->slots, slot);
}

static void wse_slots_retry(struct work_struct *work)
{
	struct wse_slots *slots = container_of(to_delayed_work(work), struct wse_slots,
					       retry_work);
	struct wse_device *wdev = container_of(slots, struct wse_device, slots);
	u32 slot;

	for_each_set_bit(slot, slots->retry, WSE_SLOTS)
		if (test_and_clear_bit(slot, slots->retry))
			wse_slots_unload(wdev, slot);
	wse_device_put(wdev);
}

/**
 * wse_slots_release() - free a closing file's slots once the firmware is
 * done with them
 * @wdev: the device
 * @wfile: the file, whose queues are closed (their jobs taken back)
 *
 * Each slot the file holds stays taken until the firmware has answered
 * every request the file sent for it, and then the unload the driver sends.
 */
void wse_slots_release(struct wse_device *wdev, struct wse_file *wfile)
{
	struct wse_slots *slots = &wdev->slots;
	DECLARE_BITMAP(now, WSE_SLOTS);
	u32 slot;

	bitmap_zero(now, WSE_SLOTS);
	spin_lock(&slots->lock);
	for (slot = 1; slot < WSE_SLOTS; slot++) {
		struct wse_slot *s = &slots->slot[slot];

		if (s->owner != wfile)
			continue;
		s->state = WSE_SLOT_CLOSING;
		if (!s->inflight)
			__set_bit(slot, now);
	}
	spin_unlock(&slots->lock);
	for_each_set_bit(slot, now, WSE_SLOTS)
		wse_slots_unload(wdev, slot);
}

/**
 * wse_slots_stop() - stop asking again, and free what was to be asked
 * @slots: the device's slots, whose link is dead
 */
void wse_slots_stop(struct wse_slots *slots)
{
	u32 slot;

	if (cancel_delayed_work_sync(&slots->retry_work))
		wse_device_put(container_of(slots, struct wse_device, slots));
	/* Nothing will be asked again: with the link, the programs are gone. */
	for_each_set_bit(slot, slots->retry, WSE_SLOTS)
		if (test_and_clear_bit(slot, slots->retry))
			wse_slots_free(slots, slot);
}
