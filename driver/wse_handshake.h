/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the HELLO handshake that opens a device's link.
 */
#ifndef __WSE_HANDSHAKE_H__
#define __WSE_HANDSHAKE_H__

#include <linux/jiffies.h>

struct netlink_ext_ack;
struct wse_device;

/* How long the firmware has to answer HELLO, all of it. */
#define WSE_HANDSHAKE_TIMEOUT	(5 * HZ)

int wse_handshake(struct wse_device *wdev, struct netlink_ext_ack *extack);

#endif /* __WSE_HANDSHAKE_H__ */
