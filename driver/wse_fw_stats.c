// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the firmware's own counters (DEVICE_STATS). Only a caller with
 * CAP_NET_ADMIN reads them (WSE_CMD_STATS), asking the firmware each
 * time: they move with every user's jobs.
 */

#include <linux/jiffies.h>
#include <linux/slab.h>

#include "wse_call.h"
#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_fw_stats.h"

/* How long the firmware has to answer. */
#define WSE_FW_STATS_TIMEOUT	(2 * HZ)

struct wse_fw_stats_call {
	struct wse_call call;
	struct wse_link_dev_stats st;
};

static void wse_fw_stats_release(struct wse_call *call)
{
	kfree(container_of(call, struct wse_fw_stats_call, call));
}

/**
 * wse_fw_stats_fetch() - ask the firmware for its counters
 * @wdev: the device
 * @st: where they go, as they came
 *
 * Waits up to two seconds (a signal ends the wait sooner).
 *
 * Return: 0, -EOPNOTSUPP if the firmware does not run programs, -EPROTO
 * for an answer of the wrong size, or what wse_call() returns.
 */
int wse_fw_stats_fetch(struct wse_device *wdev, struct wse_link_dev_stats *st)
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
	if (!ret)
		*st = c->st;
	wse_call_finish(&c->call);
	return ret;
}
