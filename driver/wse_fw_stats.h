/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the firmware's counters, fetched for STATS.
 */
#ifndef __WSE_FW_STATS_H__
#define __WSE_FW_STATS_H__

struct wse_device;
struct wse_link_dev_stats;

int wse_fw_stats_fetch(struct wse_device *wdev, struct wse_link_dev_stats *st);

#endif /* __WSE_FW_STATS_H__ */
