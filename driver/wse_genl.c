// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the generic netlink family "wse" (uapi/wse_genl.h) - attach, detach,
 * list, get, stats, reset - and its "events" multicast group.
 *
 * Any local user may list the devices and see what each is and whether its
 * link is up. What says more about the users' work - the peer's address,
 * why a link went down, the link's and the firmware's counters, and the
 * events - goes only to a caller with CAP_NET_ADMIN: counters that move
 * with every job would let one user watch another's.
 *
 * resv_start_op is left at 0, so every command gets strict validation:
 * unknown attributes and non-zero reserved header fields are refused.
 */

#include <linux/capability.h>
#include <net/genetlink.h>

#include "wse_devices.h"
#include "wse_fw_stats.h"
#include "wse_genl.h"
#include "wse_link.h"

static struct genl_family wse_genl_family;
/* Cleared before the family goes, so late events are dropped. */
static bool wse_genl_registered;

/* The short-form range in nla_policy is s16: too small for milliseconds. */
static const struct netlink_range_validation wse_genl_keepalive_range = {
	.min = WSE_KEEPALIVE_MS_MIN,
	.max = WSE_KEEPALIVE_MS_MAX,
};

static const struct nla_policy wse_genl_policy[WSE_A_MAX + 1] = {
	[WSE_A_SOCK_FD] = { .type = NLA_U32 },
	[WSE_A_DEV_INDEX] = NLA_POLICY_MAX(NLA_U32, WSE_MAX_DEVICES - 1),
	[WSE_A_KEEPALIVE_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &wse_genl_keepalive_range),
};

enum wse_genl_mcgrp {
	WSE_MCGRP_EVENTS,
};

static const struct genl_multicast_group wse_genl_mcgrps[] = {
	[WSE_MCGRP_EVENTS] = { .name = WSE_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

/* Which counter each WSE_STAT_* attribute carries. */
static const struct {
	u16 attr;
	u16 offset;
} wse_genl_stat_fields[] = {
	{ WSE_STAT_FRAMES_TX, offsetof(struct wse_link_stats, frames_tx) },
	{ WSE_STAT_FRAMES_RX, offsetof(struct wse_link_stats, frames_rx) },
	{ WSE_STAT_BYTES_TX, offsetof(struct wse_link_stats, bytes_tx) },
	{ WSE_STAT_BYTES_RX, offsetof(struct wse_link_stats, bytes_rx) },
	{ WSE_STAT_CRC_ERRORS, offsetof(struct wse_link_stats, crc_errors) },
	{ WSE_STAT_PROTO_ERRORS, offsetof(struct wse_link_stats, proto_errors) },
	{ WSE_STAT_TIMEOUTS, offsetof(struct wse_link_stats, timeouts) },
	{ WSE_STAT_KEEPALIVES, offsetof(struct wse_link_stats, keepalives) },
	{ WSE_STAT_STALE_RESPONSES, offsetof(struct wse_link_stats, stale_responses) },
	{ WSE_STAT_LINK_DOWNS, offsetof(struct wse_link_stats, link_downs) },
};

/* The firmware's own counters: its modelled cycles beside the estimate. */
static int wse_genl_put_dev_stats(struct sk_buff *skb, const struct wse_link_dev_stats *d)
{
	if (nla_put_u64_64bit(skb, WSE_STAT_DEV_CYCLES, le64_to_cpu(d->cycles), WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_EST_CYCLES, le64_to_cpu(d->est_cycles),
			      WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_STEPS, le64_to_cpu(d->steps), WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_SAMPLES, le64_to_cpu(d->samples), WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_SRAM_USED, le64_to_cpu(d->sram_used),
			      WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_STREAM_BYTES_IN,
			      le64_to_cpu(d->stream_bytes_in), WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_STREAM_BYTES_OUT,
			      le64_to_cpu(d->stream_bytes_out), WSE_STAT_PAD) ||
	    nla_put_u64_64bit(skb, WSE_STAT_DEV_PROGRAMS, le32_to_cpu(d->programs), WSE_STAT_PAD))
		return -EMSGSIZE;
	return 0;
}

static int wse_genl_put_stats(struct sk_buff *skb, struct wse_link *link,
			      const struct wse_link_dev_stats *dev)
{
	const void *stats = &link->stats;
	struct nlattr *nest;
	unsigned int i;
	u64 v;

	nest = nla_nest_start(skb, WSE_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(wse_genl_stat_fields); i++) {
		v = atomic64_read(stats + wse_genl_stat_fields[i].offset);
		if (nla_put_u64_64bit(skb, wse_genl_stat_fields[i].attr, v, WSE_STAT_PAD))
			goto cancel;
	}
	if (nla_put_u64_64bit(skb, WSE_STAT_INFLIGHT, wse_link_inflight(link), WSE_STAT_PAD))
		goto cancel;
	if (dev && wse_genl_put_dev_stats(skb, dev))
		goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/*
 * One device, as GET, LIST, STATS and ATTACH answer it; @admin: the caller
 * may see the peer and the reason; @stats: the counters go too (to an
 * administrator only).
 */
static int wse_genl_fill_device(struct sk_buff *skb, struct wse_device *wdev, u32 portid,
				u32 seq, int flags, u8 cmd, bool admin, bool stats,
				const struct wse_link_dev_stats *dev)
{
	const struct drm_wse_device_info *info = &wdev->info;
	struct wse_link *link = &wdev->link;
	enum wse_link_state state;
	const char *reason;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &wse_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;

	state = wse_link_state(link, &reason);
	if (nla_put_u32(skb, WSE_A_DEV_INDEX, wdev->index) ||
	    (wdev->accel_minor >= 0 && nla_put_u32(skb, WSE_A_ACCEL_MINOR, wdev->accel_minor)) ||
	    nla_put_u32(skb, WSE_A_LINK_STATE, state) ||
	    (admin && state == WSE_LINK_STATE_DEAD && reason &&
	     nla_put_string(skb, WSE_A_REASON, reason)) ||
	    (admin && nla_put_string(skb, WSE_A_PEER, link->peer)) ||
	    nla_put_string(skb, WSE_A_FW_VERSION, info->fw_version) ||
	    nla_put_u64_64bit(skb, WSE_A_DEVICE_ID, info->device_id, WSE_A_PAD) ||
	    nla_put_u32(skb, WSE_A_WAFER_WIDTH, info->wafer_width) ||
	    nla_put_u32(skb, WSE_A_WAFER_HEIGHT, info->wafer_height) ||
	    nla_put_u64_64bit(skb, WSE_A_SRAM_PER_PE, info->sram_per_pe, WSE_A_PAD) ||
	    nla_put_u64_64bit(skb, WSE_A_SRAM_TOTAL, info->sram_total, WSE_A_PAD) ||
	    nla_put_u32(skb, WSE_A_CLOCK_KHZ, info->clock_khz) ||
	    nla_put_u32(skb, WSE_A_NUM_QUEUES, info->num_queues) ||
	    nla_put_u32(skb, WSE_A_PROTO_VERSION, link->version) ||
	    (link->keepalive_ms && nla_put_u32(skb, WSE_A_KEEPALIVE_MS, link->keepalive_ms)))
		goto cancel;
	if (stats && wse_genl_put_stats(skb, link, dev))
		goto cancel;

	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * Answers with one device; with @want_stats (STATS) and to an
 * administrator, with the link's counters and the firmware's, asked now
 * (see wse_fw_stats.c).
 */
static int wse_genl_reply_device(struct sk_buff *skb, struct genl_info *info,
				 struct wse_device *wdev, bool want_stats)
{
	bool admin = netlink_capable(skb, CAP_NET_ADMIN);
	bool stats = admin && want_stats;
	struct wse_link_dev_stats dev;
	bool have_dev = false;
	struct sk_buff *msg;
	int ret;

	/* A firmware that cannot answer leaves its counters out rather than
	 * failing the command.
	 */
	if (stats && wse_link_state(&wdev->link, NULL) == WSE_LINK_STATE_UP)
		have_dev = !wse_fw_stats_fetch(wdev, &dev);

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	ret = wse_genl_fill_device(msg, wdev, info->snd_portid, info->snd_seq, 0,
				   info->genlhdr->cmd, admin, stats, have_dev ? &dev : NULL);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int wse_genl_attach(struct sk_buff *skb, struct genl_info *info)
{
	u32 keepalive_ms = WSE_KEEPALIVE_MS_DEFAULT;
	struct wse_device *wdev;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, WSE_A_SOCK_FD))
		return -EINVAL;
	if (info->attrs[WSE_A_KEEPALIVE_MS])
		keepalive_ms = nla_get_u32(info->attrs[WSE_A_KEEPALIVE_MS]);

	ret = wse_devices_attach(nla_get_u32(info->attrs[WSE_A_SOCK_FD]), keepalive_ms,
				 info->extack, &wdev);
	if (ret)
		return ret;
	ret = wse_genl_reply_device(skb, info, wdev, false);
	wse_device_put(wdev);
	return ret;
}

static int wse_genl_index(struct genl_info *info, u32 *index)
{
	if (GENL_REQ_ATTR_CHECK(info, WSE_A_DEV_INDEX))
		return -EINVAL;
	*index = nla_get_u32(info->attrs[WSE_A_DEV_INDEX]);
	return 0;
}

static int wse_genl_detach(struct sk_buff *skb, struct genl_info *info)
{
	u32 index;
	int ret;

	ret = wse_genl_index(info, &index);
	return ret ?: wse_devices_detach(index, info->extack);
}

static int wse_genl_reset(struct sk_buff *skb, struct genl_info *info)
{
	u32 index;
	int ret;

	ret = wse_genl_index(info, &index);
	return ret ?: wse_devices_reset(index, info->extack);
}

static int wse_genl_get_common(struct sk_buff *skb, struct genl_info *info, bool stats)
{
	struct wse_device *wdev;
	u32 index;
	int ret;

	ret = wse_genl_index(info, &index);
	if (ret)
		return ret;
	wdev = wse_devices_get(index);
	if (!wdev) {
		NL_SET_ERR_MSG_FMT(info->extack, "no device %u", index);
		return -ENODEV;
	}
	ret = wse_genl_reply_device(skb, info, wdev, stats);
	wse_device_put(wdev);
	return ret;
}

static int wse_genl_get(struct sk_buff *skb, struct genl_info *info)
{
	return wse_genl_get_common(skb, info, false);
}

/* Counters go only to a caller that may administer devices, who waits for
 * the firmware's own; anyone else gets what GET gives.
 */
static int wse_genl_stats(struct sk_buff *skb, struct genl_info *info)
{
	return wse_genl_get_common(skb, info, true);
}

/* LIST: cb->args[0] is the next index to look at. */
static int wse_genl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	bool admin = netlink_capable(cb->skb, CAP_NET_ADMIN);
	unsigned long index = cb->args[0];
	struct wse_device *wdev;
	int ret;

	while ((wdev = wse_devices_next(&index))) {
		ret = wse_genl_fill_device(skb, wdev, NETLINK_CB(cb->skb).portid,
					   cb->nlh->nlmsg_seq, NLM_F_MULTI, WSE_CMD_GET,
					   admin, false, NULL);
		wse_device_put(wdev);
		if (ret)
			break;
		index++;
	}
	cb->args[0] = index;
	return skb->len;
}

static const struct genl_small_ops wse_genl_ops[] = {
	{
		.cmd = WSE_CMD_ATTACH,
		.flags = GENL_ADMIN_PERM,
		.doit = wse_genl_attach,
	},
	{
		.cmd = WSE_CMD_DETACH,
		.flags = GENL_ADMIN_PERM,
		.doit = wse_genl_detach,
	},
	{
		.cmd = WSE_CMD_GET,
		.doit = wse_genl_get,
		.dumpit = wse_genl_dump,
	},
	{
		.cmd = WSE_CMD_STATS,
		.doit = wse_genl_stats,
	},
	{
		.cmd = WSE_CMD_RESET,
		.flags = GENL_ADMIN_PERM,
		.doit = wse_genl_reset,
	},
};

static struct genl_family wse_genl_family __ro_after_init = {
	.name = WSE_GENL_NAME,
	.version = WSE_GENL_VERSION,
	.maxattr = WSE_A_MAX,
	.policy = wse_genl_policy,
	.module = THIS_MODULE,
	/* Commands take wse_devices_lock or references, not genl_mutex: a
	 * handshake or a firmware call holds up no one else.
	 */
	.parallel_ops = true,
	.small_ops = wse_genl_ops,
	.n_small_ops = ARRAY_SIZE(wse_genl_ops),
	.mcgrps = wse_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(wse_genl_mcgrps),
};

/**
 * wse_genl_notify() - tell the "events" group what happened to a device
 * @wdev: the device
 * @event: what happened
 * @err: the errno involved, positive or negative, or 0
 * @reason: a short text for people
 *
 * Process context only; nothing is sent when nobody listens.
 */
void wse_genl_notify(struct wse_device *wdev, enum wse_genl_event event, int err,
		     const char *reason)
{
	struct sk_buff *msg;
	void *hdr;

	if (!READ_ONCE(wse_genl_registered) ||
	    !genl_has_listeners(&wse_genl_family, &init_net, WSE_MCGRP_EVENTS))
		return;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &wse_genl_family, 0, WSE_CMD_EVENT);
	if (!hdr)
		goto free;
	if (nla_put_u32(msg, WSE_A_DEV_INDEX, wdev->index) ||
	    nla_put_u32(msg, WSE_A_EVENT, event) ||
	    nla_put_u32(msg, WSE_A_ERRNO, abs(err)) ||
	    nla_put_string(msg, WSE_A_REASON, reason ?: "") ||
	    nla_put_string(msg, WSE_A_PEER, wdev->link.peer))
		goto free;
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&wse_genl_family, msg, 0, WSE_MCGRP_EVENTS, GFP_KERNEL);
	return;
free:
	nlmsg_free(msg);
}

int __init wse_genl_register(void)
{
	int ret = genl_register_family(&wse_genl_family);

	WRITE_ONCE(wse_genl_registered, !ret);
	return ret;
}

void wse_genl_unregister(void)
{
	WRITE_ONCE(wse_genl_registered, false);
	genl_unregister_family(&wse_genl_family);
}
