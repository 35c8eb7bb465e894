// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: DRM client usage stats (Documentation/gpu/drm-usage-stats.rst in
 * the kernel), so that generic tools (nvtop, gputop) see what each open
 * file of an accel node uses. drm_show_fdinfo() prints drm-driver and
 * drm-client-id; this adds, for each hardware queue N of the device:
 *
 *   drm-engine-hwqN: the time at least one of the file's jobs on that
 *	queue was in flight, from submission to its end, in ns
 *   drm-jobs-hwqN: the jobs the file submitted there (driver specific)
 *
 * and the standard drm-total-memory, drm-shared-memory and
 * drm-active-memory of its buffer objects.
 */

#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <linux/ktime.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_fdinfo.h"
#include "wse_job.h"

void wse_usage_init(struct wse_usage *u)
{
	spin_lock_init(&u->lock);
}

/* A job of the file starts on hardware queue @hwq. */
void wse_usage_begin(struct wse_usage *u, u32 hwq)
{
	if (hwq >= WSE_MAX_HW_QUEUES)
		return;
	spin_lock(&u->lock);
	u->hwq[hwq].jobs++;
	if (!u->hwq[hwq].active++)
		u->hwq[hwq].since_ns = ktime_get_ns();
	spin_unlock(&u->lock);
}

/* A job that began on @hwq has ended. */
void wse_usage_end(struct wse_usage *u, u32 hwq)
{
	if (hwq >= WSE_MAX_HW_QUEUES)
		return;
	spin_lock(&u->lock);
	if (!--u->hwq[hwq].active)
		u->hwq[hwq].busy_ns += ktime_get_ns() - u->hwq[hwq].since_ns;
	spin_unlock(&u->lock);
}

void wse_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct wse_file *wfile = file->driver_priv;
	struct wse_usage *u = &wfile->usage;
	u32 hwq, n = min_t(u32, wfile->wdev->info.num_queues, WSE_MAX_HW_QUEUES);
	u64 now = ktime_get_ns();

	for (hwq = 0; hwq < n; hwq++) {
		u64 busy, jobs;

		spin_lock(&u->lock);
		busy = u->hwq[hwq].busy_ns;
		if (u->hwq[hwq].active)
			busy += now - u->hwq[hwq].since_ns;
		jobs = u->hwq[hwq].jobs;
		spin_unlock(&u->lock);
		drm_printf(p, "drm-engine-hwq%u:\t%llu ns\n", hwq, busy);
		drm_printf(p, "drm-jobs-hwq%u:\t%llu\n", hwq, jobs);
	}
	drm_show_memory_stats(p, file);
}
