// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: who owns the device's program slots. A program, its streams, its
 * parameters and the SRAM it holds live in a slot of the firmware, which
 * every opener of the device shares; the driver gives each slot to the
 * file that loads into it, and only that file may use it. When the file
 * closes, the driver unloads its programs, and a slot becomes free again
 * only once the firmware has let go of it: nobody can read what another
 * user left in a slot.
 */

#include <linux/refcount.h>
#include <linux/slab.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_slots.h"

/* How soon to ask again to unload a program that is running. */
#define WSE_SLOT_RETRY		HZ

/* An unload the driver sends for a file that closed. */
struct wse_slot_unload {
	struct wse_link_req req;
	struct wse_link_program_ref ref;
	/* The link until it finishes the request, the sender until the frame is done. */
	refcount_t users;
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
 * wse_slots_use() - check that a file may use a slot, claiming it to load
 * @slots: the device's slots
 * @wfile: the file
 * @slot: the slot its job names
 * @load: the job loads a program, which claims a free slot
 *
 * Return: 0; -EINVAL for a slot outside 1..255; -ENOENT for a free slot
 * (load into it first); -EBUSY to load into a slot another file holds (or
 * that is still being freed); -EACCES for any other use of one.
 */
int wse_slots_use(struct wse_slots *slots, struct wse_file *wfile, u64 slot, bool load)
{
	struct wse_file *owner;
	int ret = 0;

	if (!slot || slot >= WSE_SLOTS)
		return -EINVAL;
	spin_lock(&slots->lock);
	owner = slots->owner[slot];
	if (owner == wfile) {
		ret = 0;
	} else if (owner) {
		ret = load ? -EBUSY : -EACCES;
	} else if (load) {
		kref_get(&wfile->ref);
		slots->owner[slot] = wfile;
	} else {
		ret = -ENOENT;
	}
	spin_unlock(&slots->lock);
	return ret;
}

/* The firmware has let go of the slot: nobody owns it. */
static void wse_slots_free(struct wse_slots *slots, u32 slot)
{
	struct wse_file *owner;

	spin_lock(&slots->lock);
	owner = slots->owner[slot];
	slots->owner[slot] = NULL;
	spin_unlock(&slots->lock);
	if (owner)
		wse_file_put(owner);
}

static void wse_slot_unload_put(struct wse_slot_unload *u)
{
	if (refcount_dec_and_test(&u->users)) {
		wse_device_put(u->wdev);
		kfree(u);
	}
}

static void wse_slot_unload_sent(struct wse_link_req *req)
{
	wse_slot_unload_put(container_of(req, struct wse_slot_unload, req));
}

/*
 * The firmware answered. A program still running (EBUSY) is asked again
 * a second later. Anything else - unloaded, nothing there, the link gone -
 * frees the slot.
 */
static void wse_slot_unload_done(struct wse_link_req *req)
{
	struct wse_slot_unload *u = container_of(req, struct wse_slot_unload, req);
	struct wse_slots *slots = &u->wdev->slots;

	if (req->status == -EBUSY &&
	    wse_link_state(&u->wdev->link, NULL) == WSE_LINK_STATE_UP) {
		set_bit(u->slot, slots->retry);
		queue_delayed_work(wse_wq, &slots->retry_work, WSE_SLOT_RETRY);
	} else {
		wse_slots_free(slots, u->slot);
	}
	wse_slot_unload_put(u);
}

/* Sends PROGRAM_UNLOAD for @slot; 0, or the error it could not be sent with. */
static int wse_slot_unload_send(struct wse_device *wdev, u32 slot)
{
	struct wse_slot_unload *u;
	struct kvec vec;
	int ret;

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	wse_device_get(wdev);
	u->wdev = wdev;
	u->slot = slot;
	u->ref.program = cpu_to_le32(slot);
	u->req.opcode = WSE_LINK_OP_PROGRAM_UNLOAD;
	u->req.done = wse_slot_unload_done;
	u->req.tx_done = wse_slot_unload_sent;
	refcount_set(&u->users, 2);
	vec.iov_base = &u->ref;
	vec.iov_len = sizeof(u->ref);
	ret = wse_link_submit(&wdev->link, &u->req, &vec, 1);
	if (ret) {
		wse_device_put(wdev);
		kfree(u);
		return ret;
	}
	wse_link_push(&wdev->link, true);
	return 0;
}

/* Unloads @slot, or frees it if that cannot even be asked. */
static void wse_slots_unload(struct wse_device *wdev, u32 slot)
{
	if (wse_slot_unload_send(wdev, slot))
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
}

/**
 * wse_slots_release() - unload a closing file's programs
 * @wdev: the device
 * @wfile: the file, whose queues are closed
 *
 * Each slot the file holds stays taken until the firmware has unloaded
 * its program; a slot of a dead link is free at once (the firmware drops
 * every program with its host).
 */
void wse_slots_release(struct wse_device *wdev, struct wse_file *wfile)
{
	u32 slot;

	for (slot = 1; slot < WSE_SLOTS; slot++)
		if (READ_ONCE(wdev->slots.owner[slot]) == wfile)
			wse_slots_unload(wdev, slot);
}

/**
 * wse_slots_stop() - stop asking again, and free what was to be asked
 * @slots: the device's slots, whose link is dead
 */
void wse_slots_stop(struct wse_slots *slots)
{
	u32 slot;

	cancel_delayed_work_sync(&slots->retry_work);
	/* Nothing will be asked again: with the link, the programs are gone. */
	for_each_set_bit(slot, slots->retry, WSE_SLOTS)
		if (test_and_clear_bit(slot, slots->retry))
			wse_slots_free(slots, slot);
}
