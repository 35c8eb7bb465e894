/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the firmware's counters, fetched and kept.
 */
#ifndef __WSE_FW_STATS_H__
#define __WSE_FW_STATS_H__

#include <linux/types.h>

struct wse_device;
struct wse_link_dev_stats;

void wse_fw_stats_init(struct wse_device *wdev);
int wse_fw_stats_fetch(struct wse_device *wdev);
bool wse_fw_stats_get(struct wse_device *wdev, struct wse_link_dev_stats *st);

#endif /* __WSE_FW_STATS_H__ */
