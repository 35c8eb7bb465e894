/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: what each open file used, for /proc/PID/fdinfo.
 */
#ifndef __WSE_FDINFO_H__
#define __WSE_FDINFO_H__

#include <linux/spinlock.h>
#include <linux/types.h>

struct drm_file;
struct drm_printer;

/* Hardware queues a device may have (the handshake refuses more). */
#define WSE_MAX_HW_QUEUES	64

/**
 * struct wse_usage - a file's use of the device's hardware queues
 * @hwq: per hardware queue: @jobs submitted, @busy_ns while at least one
 *	was in flight before @since_ns, and @active jobs in flight since
 *	@since_ns
 */
struct wse_usage {
	/** @lock: protects @hwq. */
	spinlock_t lock;
	struct {
		u64 jobs;
		u64 busy_ns;
		u64 since_ns;
		u32 active;
	} hwq[WSE_MAX_HW_QUEUES];
};

void wse_usage_init(struct wse_usage *u);
void wse_usage_begin(struct wse_usage *u, u32 hwq);
void wse_usage_end(struct wse_usage *u, u32 hwq);
void wse_show_fdinfo(struct drm_printer *p, struct drm_file *file);

#endif /* __WSE_FDINFO_H__ */
