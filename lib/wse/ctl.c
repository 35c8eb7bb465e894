// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse control plane: requests to the "wse" generic netlink family with
 * libnl, and the kernel's extended-ack messages, which libnl 3.7 does not
 * parse, read from the error message itself.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "wse/ctl.h"
#include "wse/link_addr.h"
#include "wse_genl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct wse_ctl {
	struct nl_sock *sk;
	int family;
	int events_group;
	char error[256];
	/* Results of the request under way. */
	struct wse_dev_status *list;
	size_t count, cap;
	struct wse_event *event;
	int err;
};

static const struct nla_policy stats_policy[WSE_STAT_MAX + 1] = {
	[WSE_STAT_FRAMES_TX] = { .type = NLA_U64 },
	[WSE_STAT_FRAMES_RX] = { .type = NLA_U64 },
	[WSE_STAT_BYTES_TX] = { .type = NLA_U64 },
	[WSE_STAT_BYTES_RX] = { .type = NLA_U64 },
	[WSE_STAT_CRC_ERRORS] = { .type = NLA_U64 },
	[WSE_STAT_PROTO_ERRORS] = { .type = NLA_U64 },
	[WSE_STAT_TIMEOUTS] = { .type = NLA_U64 },
	[WSE_STAT_KEEPALIVES] = { .type = NLA_U64 },
	[WSE_STAT_STALE_RESPONSES] = { .type = NLA_U64 },
	[WSE_STAT_INFLIGHT] = { .type = NLA_U64 },
	[WSE_STAT_LINK_DOWNS] = { .type = NLA_U64 },
	[WSE_STAT_DEV_CYCLES] = { .type = NLA_U64 },
	[WSE_STAT_DEV_EST_CYCLES] = { .type = NLA_U64 },
	[WSE_STAT_DEV_STEPS] = { .type = NLA_U64 },
	[WSE_STAT_DEV_SAMPLES] = { .type = NLA_U64 },
	[WSE_STAT_DEV_SRAM_USED] = { .type = NLA_U64 },
	[WSE_STAT_DEV_STREAM_BYTES_IN] = { .type = NLA_U64 },
	[WSE_STAT_DEV_STREAM_BYTES_OUT] = { .type = NLA_U64 },
	[WSE_STAT_DEV_PROGRAMS] = { .type = NLA_U64 },
};

const char *wse_link_state_name(uint32_t state)
{
	switch (state) {
	case WSE_LINK_STATE_NONE:
		return "none";
	case WSE_LINK_STATE_UP:
		return "up";
	case WSE_LINK_STATE_DEAD:
		return "dead";
	default:
		return "unknown";
	}
}

const char *wse_event_name(uint32_t event)
{
	switch (event) {
	case WSE_EVENT_LINK_UP:
		return "link-up";
	case WSE_EVENT_LINK_DOWN:
		return "link-down";
	case WSE_EVENT_FW_ERROR:
		return "firmware-error";
	case WSE_EVENT_TIMEOUT:
		return "timeout";
	case WSE_EVENT_RESET:
		return "reset";
	default:
		return "unknown";
	}
}

const char *wse_ctl_error(const struct wse_ctl *ctl)
{
	return ctl->error[0] ? ctl->error : NULL;
}

/* The kernel's NLMSGERR_ATTR_MSG, if the error message carries one. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct wse_ctl *ctl = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	size_t skip = sizeof(*e);
	struct nlattr *attr;
	int len, rem;

	(void)nla;
	ctl->err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	/* Without NLM_F_CAPPED the request is echoed after the header. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		skip += e->msg.nlmsg_len - sizeof(e->msg);
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)skip;
	if (len <= 0)
		return NL_STOP;
	attr = (struct nlattr *)((char *)e + NLMSG_ALIGN(skip));
	nla_for_each_attr(attr, attr, len, rem) {
		if (nla_type(attr) == NLMSGERR_ATTR_MSG && nla_len(attr) > 0) {
			snprintf(ctl->error, sizeof(ctl->error), "%.*s",
				 nla_len(attr), (const char *)nla_data(attr));
			/* The kernel's messages end in NUL or newline. */
			ctl->error[strcspn(ctl->error, "\n")] = 0;
		}
	}
	return NL_STOP;
}

static void copy_str(char *dst, size_t len, struct nlattr *a)
{
	if (a)
		snprintf(dst, len, "%s", nla_get_string(a));
}

static int parse_device(struct nlattr **tb, struct wse_dev_status *d)
{
	memset(d, 0, sizeof(*d));
	d->accel_minor = -1;
	if (!tb[WSE_A_DEV_INDEX])
		return -EPROTO;
	d->index = nla_get_u32(tb[WSE_A_DEV_INDEX]);
	if (tb[WSE_A_ACCEL_MINOR])
		d->accel_minor = (int32_t)nla_get_u32(tb[WSE_A_ACCEL_MINOR]);
	if (tb[WSE_A_LINK_STATE])
		d->link_state = nla_get_u32(tb[WSE_A_LINK_STATE]);
	copy_str(d->peer, sizeof(d->peer), tb[WSE_A_PEER]);
	copy_str(d->fw_version, sizeof(d->fw_version), tb[WSE_A_FW_VERSION]);
	copy_str(d->reason, sizeof(d->reason), tb[WSE_A_REASON]);
	if (tb[WSE_A_DEVICE_ID])
		d->device_id = nla_get_u64(tb[WSE_A_DEVICE_ID]);
	if (tb[WSE_A_WAFER_WIDTH])
		d->wafer_width = nla_get_u32(tb[WSE_A_WAFER_WIDTH]);
	if (tb[WSE_A_WAFER_HEIGHT])
		d->wafer_height = nla_get_u32(tb[WSE_A_WAFER_HEIGHT]);
	if (tb[WSE_A_SRAM_PER_PE])
		d->sram_per_pe = nla_get_u64(tb[WSE_A_SRAM_PER_PE]);
	if (tb[WSE_A_SRAM_TOTAL])
		d->sram_total = nla_get_u64(tb[WSE_A_SRAM_TOTAL]);
	if (tb[WSE_A_CLOCK_KHZ])
		d->clock_khz = nla_get_u32(tb[WSE_A_CLOCK_KHZ]);
	if (tb[WSE_A_NUM_QUEUES])
		d->num_queues = nla_get_u32(tb[WSE_A_NUM_QUEUES]);
	if (tb[WSE_A_PROTO_VERSION])
		d->proto_version = nla_get_u32(tb[WSE_A_PROTO_VERSION]);
	if (tb[WSE_A_KEEPALIVE_MS])
		d->keepalive_ms = nla_get_u32(tb[WSE_A_KEEPALIVE_MS]);
	if (tb[WSE_A_STATS]) {
		struct nlattr *st[WSE_STAT_MAX + 1];
		struct wse_link_counters *c = &d->stats;

		if (nla_parse_nested(st, WSE_STAT_MAX, tb[WSE_A_STATS], stats_policy))
			return -EPROTO;
#define GET(attr, field) \
	do { if (st[attr]) c->field = nla_get_u64(st[attr]); } while (0)
		GET(WSE_STAT_FRAMES_TX, frames_tx);
		GET(WSE_STAT_FRAMES_RX, frames_rx);
		GET(WSE_STAT_BYTES_TX, bytes_tx);
		GET(WSE_STAT_BYTES_RX, bytes_rx);
		GET(WSE_STAT_CRC_ERRORS, crc_errors);
		GET(WSE_STAT_PROTO_ERRORS, proto_errors);
		GET(WSE_STAT_TIMEOUTS, timeouts);
		GET(WSE_STAT_KEEPALIVES, keepalives);
		GET(WSE_STAT_STALE_RESPONSES, stale_responses);
		GET(WSE_STAT_INFLIGHT, inflight);
		GET(WSE_STAT_LINK_DOWNS, link_downs);
		GET(WSE_STAT_DEV_CYCLES, dev_cycles);
		GET(WSE_STAT_DEV_EST_CYCLES, dev_est_cycles);
		GET(WSE_STAT_DEV_STEPS, dev_steps);
		GET(WSE_STAT_DEV_SAMPLES, dev_samples);
		GET(WSE_STAT_DEV_SRAM_USED, dev_sram_used);
		GET(WSE_STAT_DEV_STREAM_BYTES_IN, dev_stream_in);
		GET(WSE_STAT_DEV_STREAM_BYTES_OUT, dev_stream_out);
		GET(WSE_STAT_DEV_PROGRAMS, dev_programs);
#undef GET
		c->has_device = st[WSE_STAT_DEV_CYCLES] != NULL;
		d->has_stats = true;
	}
	return 0;
}

/* Every device or event message the kernel sends lands here. */
static int on_message(struct nl_msg *msg, void *arg)
{
	struct wse_ctl *ctl = arg;
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[WSE_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, WSE_A_MAX, NULL)) {
		ctl->err = -EPROTO;
		return NL_SKIP;
	}
	if (gh->cmd == WSE_CMD_EVENT) {
		struct wse_event *ev = ctl->event;

		if (!ev)
			return NL_SKIP;
		memset(ev, 0, sizeof(*ev));
		if (tb[WSE_A_DEV_INDEX])
			ev->index = nla_get_u32(tb[WSE_A_DEV_INDEX]);
		if (tb[WSE_A_EVENT])
			ev->event = nla_get_u32(tb[WSE_A_EVENT]);
		if (tb[WSE_A_ERRNO])
			ev->err = nla_get_u32(tb[WSE_A_ERRNO]);
		copy_str(ev->reason, sizeof(ev->reason), tb[WSE_A_REASON]);
		copy_str(ev->peer, sizeof(ev->peer), tb[WSE_A_PEER]);
		ctl->event = NULL;	/* one per call */
		return NL_SKIP;
	}
	if (ctl->count == ctl->cap) {
		size_t cap = ctl->cap ? ctl->cap * 2 : 8;
		struct wse_dev_status *l = realloc(ctl->list, cap * sizeof(*l));

		if (!l) {
			ctl->err = -ENOMEM;
			return NL_STOP;
		}
		ctl->list = l;
		ctl->cap = cap;
	}
	if (parse_device(tb, &ctl->list[ctl->count]) == 0)
		ctl->count++;
	return NL_SKIP;
}

int wse_ctl_open(struct wse_ctl **out)
{
	struct wse_ctl *ctl = calloc(1, sizeof(*ctl));
	int one = 1, ret;

	if (!ctl)
		return -ENOMEM;
	ctl->sk = nl_socket_alloc();
	if (!ctl->sk) {
		free(ctl);
		return -ENOMEM;
	}
	ret = genl_connect(ctl->sk);
	if (ret) {
		ret = -ENOTSUP;
		goto fail;
	}
	/* Ask for the kernel's explanations with errors. */
	setsockopt(nl_socket_get_fd(ctl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(ctl->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	ctl->family = genl_ctrl_resolve(ctl->sk, WSE_GENL_NAME);
	if (ctl->family < 0) {
		ret = -ENOENT;
		goto fail;
	}
	ctl->events_group = genl_ctrl_resolve_grp(ctl->sk, WSE_GENL_NAME, WSE_GENL_MCGRP_EVENTS);
	/* Acks are asked for per request: only commands without a reply
	 * need one, and an ack left unread would be taken for the next reply.
	 */
	nl_socket_disable_auto_ack(ctl->sk);
	nl_socket_modify_cb(ctl->sk, NL_CB_VALID, NL_CB_CUSTOM, on_message, ctl);
	nl_socket_modify_err_cb(ctl->sk, NL_CB_CUSTOM, on_error, ctl);
	*out = ctl;
	return 0;
fail:
	nl_socket_free(ctl->sk);
	free(ctl);
	return ret;
}

void wse_ctl_close(struct wse_ctl *ctl)
{
	if (!ctl)
		return;
	nl_socket_free(ctl->sk);
	free(ctl->list);
	free(ctl);
}

/* Sends one request and collects what comes back into ctl->list. */
static int request(struct wse_ctl *ctl, uint8_t cmd, int flags, int64_t index,
		   int fd, uint32_t keepalive_ms)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	ctl->error[0] = 0;
	ctl->err = 0;
	ctl->count = 0;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctl->family, 0, flags, cmd,
			 WSE_GENL_VERSION) ||
	    (index >= 0 && nla_put_u32(msg, WSE_A_DEV_INDEX, (uint32_t)index)) ||
	    (fd >= 0 && nla_put_u32(msg, WSE_A_SOCK_FD, (uint32_t)fd)) ||
	    (keepalive_ms && nla_put_u32(msg, WSE_A_KEEPALIVE_MS, keepalive_ms))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = nl_send_auto(ctl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	/* Reads the reply, the dump up to its end, the ack, or the error. */
	ret = nl_recvmsgs_default(ctl->sk);
	if (ctl->err)
		return ctl->err;
	return ret < 0 ? -EIO : 0;
}

int wse_ctl_connect(const char *addr, int *fd, char *err, size_t errlen)
{
	struct wse_link_addr a;
	int s;

	s = wse_link_addr_parse(addr, &a, err, errlen);
	if (!s)
		s = wse_link_connect(&a, 5000, err, errlen);
	if (s < 0)
		return s;
	*fd = s;
	return 0;
}

int wse_ctl_attach_fd(struct wse_ctl *ctl, int fd, uint32_t keepalive_ms,
		      struct wse_dev_status *out)
{
	int ret = request(ctl, WSE_CMD_ATTACH, 0, -1, fd, keepalive_ms);

	if (ret)
		return ret;
	if (ctl->count != 1)
		return -EPROTO;
	*out = ctl->list[0];
	return 0;
}

int wse_ctl_detach(struct wse_ctl *ctl, uint32_t index)
{
	return request(ctl, WSE_CMD_DETACH, NLM_F_ACK, index, -1, 0);
}

int wse_ctl_reset(struct wse_ctl *ctl, uint32_t index)
{
	return request(ctl, WSE_CMD_RESET, NLM_F_ACK, index, -1, 0);
}

int wse_ctl_get(struct wse_ctl *ctl, uint32_t index, bool stats, struct wse_dev_status *out)
{
	int ret = request(ctl, stats ? WSE_CMD_STATS : WSE_CMD_GET, 0, index, -1, 0);

	if (ret)
		return ret;
	if (ctl->count != 1)
		return -EPROTO;
	*out = ctl->list[0];
	return 0;
}

int wse_ctl_list(struct wse_ctl *ctl, struct wse_dev_status **out, size_t *n)
{
	int ret = request(ctl, WSE_CMD_GET, NLM_F_DUMP, -1, -1, 0);

	if (ret)
		return ret;
	*out = NULL;
	*n = ctl->count;
	if (ctl->count) {
		*out = malloc(ctl->count * sizeof(**out));
		if (!*out)
			return -ENOMEM;
		memcpy(*out, ctl->list, ctl->count * sizeof(**out));
	}
	return 0;
}

int wse_ctl_subscribe(struct wse_ctl *ctl)
{
	if (ctl->events_group < 0)
		return -ENOENT;
	nl_socket_disable_seq_check(ctl->sk);
	/* The events group is the administrator's (CAP_NET_ADMIN). */
	switch (nl_socket_add_membership(ctl->sk, ctl->events_group)) {
	case 0:
		return 0;
	case -NLE_PERM:
		return -EPERM;
	default:
		return -EIO;
	}
}

/* Waits up to @timeout_ms (< 0: for ever) for one event. */
int wse_ctl_next_event(struct wse_ctl *ctl, int timeout_ms, struct wse_event *ev)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(ctl->sk), .events = POLLIN };
	int ret;

	ctl->event = ev;
	while (ctl->event) {
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0)
			return -errno;
		if (ret == 0) {
			ctl->event = NULL;
			return -ETIMEDOUT;
		}
		if (nl_recvmsgs_default(ctl->sk) < 0) {
			ctl->event = NULL;
			return -EIO;
		}
	}
	return 0;
}
