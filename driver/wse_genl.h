/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the generic netlink control plane.
 */
#ifndef __WSE_GENL_H__
#define __WSE_GENL_H__

#include "../uapi/wse_genl.h"

struct wse_device;

int wse_genl_register(void);
void wse_genl_unregister(void);
void wse_genl_notify(struct wse_device *wdev, enum wse_genl_event event, int err,
		     const char *reason);

#endif /* __WSE_GENL_H__ */
