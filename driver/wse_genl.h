/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the generic netlink control plane.
 */
#ifndef __WSE_GENL_H__
#define __WSE_GENL_H__

#include "../uapi/wse_genl.h"

struct wse_link;

int wse_genl_register(void);
void wse_genl_unregister(void);
void wse_genl_notify(struct wse_link *link, enum wse_genl_event event, int err,
		     const char *reason);

#endif /* __WSE_GENL_H__ */
