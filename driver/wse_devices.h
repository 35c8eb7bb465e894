/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the set of devices, and attaching and detaching them.
 */
#ifndef __WSE_DEVICES_H__
#define __WSE_DEVICES_H__

#include <linux/types.h>

struct netlink_ext_ack;
struct wse_link;

#define WSE_MAX_DEVICES		64

int wse_devices_attach(int fd, u32 keepalive_ms, struct netlink_ext_ack *extack,
		       struct wse_link **out);
int wse_devices_detach(u32 index, struct netlink_ext_ack *extack);
int wse_devices_reset(u32 index, struct netlink_ext_ack *extack);
int wse_devices_add_test(void);
void wse_devices_remove_all(void);
struct wse_link *wse_devices_get(u32 index);
struct wse_link *wse_devices_next(unsigned long *index);

#endif /* __WSE_DEVICES_H__ */
