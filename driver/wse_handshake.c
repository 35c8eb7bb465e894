// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the HELLO handshake. ATTACH hands a connected socket to a new
 * device; the driver offers its protocol versions and capabilities, and
 * believes what the firmware answers (the version chosen, the payload
 * size, the wafer it says it is) only after checking it: the peer is not
 * trusted. Only then is the link started and the accel device created.
 */

#include <linux/in.h>
#include <linux/net.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "wse_devices.h"
#include "wse_fdinfo.h"
#include "wse_frame.h"
#include "wse_handshake.h"
#include "wse_link.h"

static int wse_handshake_check_socket(struct socket *sock, struct netlink_ext_ack *extack)
{
	struct sock *sk = sock->sk;

	if (sk->sk_type != SOCK_STREAM) {
		NL_SET_ERR_MSG(extack, "socket is not a stream socket");
		return -EINVAL;
	}
	switch (sk->sk_family) {
	case AF_UNIX:
		break;
	case AF_INET:
	case AF_INET6:
		if (sk->sk_protocol == IPPROTO_TCP)
			break;
		fallthrough;
	default:
		NL_SET_ERR_MSG(extack, "socket is neither TCP nor AF_UNIX");
		return -EINVAL;
	}
	if (READ_ONCE(sk->sk_state) != TCP_ESTABLISHED) {
		NL_SET_ERR_MSG(extack, "socket is not connected");
		return -ENOTCONN;
	}
	return 0;
}

/* Untrusted text goes to sysfs and netlink: keep it printable ASCII. */
static void wse_handshake_sanitize(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

/* Checks what the firmware says it is before the driver believes it. */
static int wse_handshake_check_reply(struct wse_device *wdev,
				     const struct wse_link_hello_reply *r,
				     struct netlink_ext_ack *extack)
{
	struct drm_wse_device_info *info = &wdev->info;
	struct wse_link *link = &wdev->link;
	u16 version = le16_to_cpu(r->version);
	u32 max_payload = le32_to_cpu(r->max_payload);
	u64 pes;

	if (version < WSE_LINK_VERSION_MIN || version > WSE_LINK_VERSION_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "firmware chose protocol version %u, outside %u..%u",
				   version, WSE_LINK_VERSION_MIN, WSE_LINK_VERSION_MAX);
		return -EPROTO;
	}
	if (r->reserved0 || max_payload < WSE_LINK_PAYLOAD_MIN) {
		NL_SET_ERR_MSG(extack, "firmware HELLO reply is malformed");
		return -EPROTO;
	}

	info->wafer_width = le32_to_cpu(r->wafer_width);
	info->wafer_height = le32_to_cpu(r->wafer_height);
	info->sram_per_pe = le64_to_cpu(r->sram_per_pe);
	info->sram_total = le64_to_cpu(r->sram_total);
	info->clock_khz = le32_to_cpu(r->clock_khz);
	info->num_queues = le32_to_cpu(r->num_queues);
	info->device_id = le64_to_cpu(r->device_id);
	pes = (u64)info->wafer_width * info->wafer_height;
	if (!pes || !info->sram_per_pe || !info->clock_khz ||
	    info->wafer_width > 65536 || info->wafer_height > 65536 ||
	    info->sram_per_pe > SZ_1G || pes * info->sram_per_pe != info->sram_total) {
		NL_SET_ERR_MSG(extack, "firmware reports an impossible wafer geometry");
		return -EPROTO;
	}
	if (!info->num_queues || info->num_queues > WSE_MAX_HW_QUEUES) {
		NL_SET_ERR_MSG(extack, "firmware reports an impossible number of queues");
		return -EPROTO;
	}
	/* Up to the firmware's NUL, and NULs after it: what followed is not
	 * text and must not reach userspace.
	 */
	memset(info->fw_version, 0, sizeof(info->fw_version));
	memcpy(info->fw_version, r->fw_version,
	       min(strnlen(r->fw_version, sizeof(r->fw_version)), sizeof(info->fw_version) - 1));
	wse_handshake_sanitize(info->fw_version);

	link->version = version;
	link->max_payload = min_t(u32, max_payload, WSE_LINK_PAYLOAD_LIMIT);
	link->fw_caps = le32_to_cpu(r->caps);
	return 0;
}

/**
 * wse_handshake() - negotiate the protocol on a new device's socket
 * @wdev: a new device, not yet published, whose link wse_link_bind() gave
 *	the socket and the keepalive interval; the link gets what was
 *	negotiated, the device what the firmware says it is
 * @extack: where to say what went wrong
 *
 * Runs in the ATTACH caller's context, before the receive thread exists,
 * with one deadline for the whole answer, so a silent or trickling peer
 * cannot hold the caller.
 *
 * Return: 0, or a negative errno with @extack saying why.
 */
int wse_handshake(struct wse_device *wdev, struct netlink_ext_ack *extack)
{
	struct wse_link *link = &wdev->link;
	struct wse_link_hello hello = {
		.version_min = cpu_to_le16(WSE_LINK_VERSION_MIN),
		.version_max = cpu_to_le16(WSE_LINK_VERSION_MAX),
		.caps = cpu_to_le32(WSE_LINK_CAP_MEM | WSE_LINK_CAP_EXEC | WSE_LINK_CAP_CANCEL),
		.max_payload = cpu_to_le32(WSE_LINK_PAYLOAD_LIMIT),
		.keepalive_ms = cpu_to_le32(link->keepalive_ms),
	};
	struct kvec vec = { .iov_base = &hello, .iov_len = sizeof(hello) };
	const struct wse_link_status *st;
	struct wse_link_hdr hdr;
	const char *why;
	u32 len, status;
	int ret;

	ret = wse_handshake_check_socket(link->sock, extack);
	if (ret)
		return ret;

	ret = wse_link_send_frame(link, WSE_LINK_VERSION_MIN, WSE_LINK_OP_HELLO, &vec, 1);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack, "sending HELLO to %s failed (%d)", link->peer, ret);
		return ret;
	}

	/* One deadline for the whole answer, however it trickles in. */
	ret = wse_link_recv_frame(link, &hdr, WSE_LINK_VERSION_MIN, WSE_LINK_PAYLOAD_MIN,
				  jiffies + WSE_HANDSHAKE_TIMEOUT, &why);
	if (ret == -ETIMEDOUT) {
		NL_SET_ERR_MSG_FMT(extack, "firmware at %s did not answer HELLO", link->peer);
		return ret;
	}
	if (ret == -ECONNRESET) {
		NL_SET_ERR_MSG_FMT(extack, "firmware at %s closed the connection", link->peer);
		return ret;
	}
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack, "bad frame from %s: %s", link->peer, why);
		return ret;
	}

	len = le32_to_cpu(hdr.length);
	if (hdr.opcode == WSE_LINK_OP_ERROR && len >= sizeof(struct wse_link_error)) {
		const struct wse_link_error *e = link->rxbuf;
		int tlen = len - sizeof(*e);

		ret = wse_frame_status_errno(le32_to_cpu(e->code));
		NL_SET_ERR_MSG_FMT(extack, "firmware refused: %.*s",
				   min(tlen, 120), (const char *)(e + 1));
		return ret;
	}
	if (hdr.opcode != WSE_LINK_OP_HELLO ||
	    !(le16_to_cpu(hdr.flags) & WSE_LINK_F_RESPONSE) ||
	    len < sizeof(*st)) {
		NL_SET_ERR_MSG_FMT(extack, "firmware at %s did not answer HELLO with HELLO",
				   link->peer);
		return -EPROTO;
	}
	st = link->rxbuf;
	status = le32_to_cpu(st->status);
	if (status != WSE_LINK_OK) {
		int tlen = len - sizeof(*st);

		ret = wse_frame_status_errno(status);
		if (ret == -EPROTONOSUPPORT)
			/* extack keeps 80 characters: say the essential first. */
			NL_SET_ERR_MSG_FMT(extack,
					   "version mismatch: driver %u..%u, firmware: %.*s",
					   WSE_LINK_VERSION_MIN, WSE_LINK_VERSION_MAX,
					   min(tlen, 40), (const char *)(st + 1));
		else
			NL_SET_ERR_MSG_FMT(extack, "firmware refused HELLO: %.*s",
					   min(tlen, 120), (const char *)(st + 1));
		return ret;
	}
	if (len != sizeof(*st) + sizeof(struct wse_link_hello_reply) || st->reserved) {
		NL_SET_ERR_MSG(extack, "firmware HELLO reply has the wrong size");
		return -EPROTO;
	}
	return wse_handshake_check_reply(wdev, (const void *)(st + 1), extack);
}
