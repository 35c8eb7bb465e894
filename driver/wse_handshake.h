/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the HELLO handshake that opens a device's link.
 */
#ifndef __WSE_HANDSHAKE_H__
#define __WSE_HANDSHAKE_H__

#include <linux/types.h>

struct netlink_ext_ack;
struct socket;
struct wse_device;

int wse_handshake(struct wse_device *wdev, struct socket *sock, u32 keepalive_ms,
		  struct netlink_ext_ack *extack);

#endif /* __WSE_HANDSHAKE_H__ */
