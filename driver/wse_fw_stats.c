// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the firmware's own counters (DEVICE_STATS), kept in the device
 * record. Anyone may read them through WSE_CMD_STATS, but only a
 * privileged caller waits for the firmware: an unprivileged one gets the
 * last copy and at most starts one refresh in the background, so no user
 * can make the control plane wait on a peer, or flood it with requests.
 */

#include <linux/jiffies.h>
#include <linux/slab.h>

#include "wse_call.h"
#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_fw_stats.h"

/* How long the firmware has to answer. */
#define WSE_FW_STATS_TIMEOUT	(2 * HZ)
/* A copy younger than this is not refreshed in the background. */
#define WSE_FW_STATS_FRESH	HZ

struct wse_fw_stats_call {
	struct wse_call call;
	struct wse_link_dev_stats st;
};

static void wse_fw_stats_release(struct wse_call *call)
{
	kfree(container_of(call, struct wse_fw_stats_call, call));
}

/**
 * wse_fw_stats_fetch() - ask the firmware for its counters, and keep them
 * @wdev: the device
 *
 * Waits up to two seconds (a signal ends the wait sooner).
 *
 * Return: 0, -EOPNOTSUPP if the firmware does not run programs, -EPROTO
 * for an answer of the wrong size, or what wse_call() returns.
 */
int wse_fw_stats_fetch(struct wse_device *wdev)
{
	struct wse_fw_stats_call *c;
	int ret;

	if (!(wdev->link.fw_caps & WSE_LINK_CAP_EXEC))
		return -EOPNOTSUPP;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->call.release = wse_fw_stats_release;
	c->call.req.opcode = WSE_LINK_OP_DEVICE_STATS;
	c->call.req.resp = &c->st;
	c->call.req.resp_cap = sizeof(c->st);
	ret = wse_call(&wdev->link, &c->call, NULL, 0, WSE_FW_STATS_TIMEOUT);
	if (!ret && c->call.req.resp_len != sizeof(c->st))
		ret = -EPROTO;
	if (!ret) {
		spin_lock(&wdev->fw_stats_lock);
		wdev->fw_stats = c->st;
		wdev->fw_stats_at = jiffies;
		wdev->fw_stats_valid = true;
		spin_unlock(&wdev->fw_stats_lock);
	}
	wse_call_finish(&c->call);
	return ret;
}

static void wse_fw_stats_work(struct work_struct *work)
{
	struct wse_device *wdev = container_of(work, struct wse_device, fw_stats_work);

	wse_fw_stats_fetch(wdev);
	wse_device_put(wdev);
}

void wse_fw_stats_init(struct wse_device *wdev)
{
	spin_lock_init(&wdev->fw_stats_lock);
	INIT_WORK(&wdev->fw_stats_work, wse_fw_stats_work);
}

/**
 * wse_fw_stats_get() - the last copy of the firmware's counters
 * @wdev: the device
 * @st: where the copy goes
 * @refresh: if the copy is older than a second, have the firmware asked
 *	again in the background (one request at a time)
 *
 * Return: true if there is a copy.
 */
bool wse_fw_stats_get(struct wse_device *wdev, struct wse_link_dev_stats *st, bool refresh)
{
	bool valid, stale;

	spin_lock(&wdev->fw_stats_lock);
	valid = wdev->fw_stats_valid;
	*st = wdev->fw_stats;
	stale = !valid || time_after(jiffies, wdev->fw_stats_at + WSE_FW_STATS_FRESH);
	spin_unlock(&wdev->fw_stats_lock);

	if (refresh && stale && wdev->link.fw_caps & WSE_LINK_CAP_EXEC) {
		/* The work holds the device; already queued, it asks soon enough. */
		wse_device_get(wdev);
		if (!queue_work(wse_wq, &wdev->fw_stats_work))
			wse_device_put(wdev);
	}
	return valid;
}
