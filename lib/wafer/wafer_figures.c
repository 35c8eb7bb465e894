// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Figures derived from a wafer's per-PE numbers, and the check that they
 * reproduce the vendor's published aggregates.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "wse/wafer.h"

uint64_t wse_wafer_pes(const struct wse_wafer *w)
{
	return (uint64_t)w->width * w->height;
}

uint64_t wse_wafer_sram_bytes(const struct wse_wafer *w)
{
	return wse_wafer_pes(w) * w->sram_per_pe;
}

double wse_wafer_peak_fp32_flops(const struct wse_wafer *w)
{
	return (double)wse_wafer_pes(w) * w->fp32_flops_per_cycle * (double)w->clock_hz;
}

double wse_wafer_product_flops_per_cycle(const struct wse_wafer *w, bool half)
{
	return half && w->fp16_flops_per_cycle > 0 ? w->fp16_flops_per_cycle
						   : w->fp32_flops_per_cycle;
}

double wse_wafer_io_bytes_per_cycle(const struct wse_wafer *w)
{
	return w->io_bytes_per_s / (double)w->clock_hz;
}

static int off_by(double computed, double published, double tolerance, const char *what,
		  const char *unit, const struct wse_wafer *w, char *err, size_t errlen)
{
	double ratio = computed / published;

	if (fabs(ratio - 1.0) <= tolerance)
		return 0;
	snprintf(err, errlen,
		 "%s: %s from per-PE figures is %.3g %s, published %.3g %s (%+.1f%%, tolerance %.0f%%)",
		 w->name, what, computed, unit, published, unit, (ratio - 1.0) * 100.0,
		 tolerance * 100.0);
	return -ERANGE;
}

int wse_wafer_check_aggregates(const struct wse_wafer *w, double tolerance,
			       struct wse_wafer_aggregates *agg, char *err, size_t errlen)
{
	struct wse_wafer_aggregates a = { 0 };
	double pes = (double)w->published_pes;
	double clock = (double)w->clock_hz;

	a.pes = w->published_pes;
	a.sram_bytes = pes * (double)w->sram_per_pe;
	a.mem_bytes_per_s = pes * w->sram_bytes_per_cycle * clock;
	/* Each link carries one wavelet per cycle in each direction. */
	a.fabric_bits_per_s = pes * w->links_per_pe * 2.0 * w->link_bytes_per_cycle * 8.0 * clock;
	if (w->published_sram_bytes > 0)
		a.sram_ratio = a.sram_bytes / w->published_sram_bytes;
	if (w->published_mem_bytes_per_s > 0)
		a.mem_ratio = a.mem_bytes_per_s / w->published_mem_bytes_per_s;
	if (w->published_fabric_bits_per_s > 0)
		a.fabric_ratio = a.fabric_bits_per_s / w->published_fabric_bits_per_s;
	if (agg)
		*agg = a;

	if (!w->published_pes)
		return 1;
	if (w->published_sram_bytes > 0 &&
	    off_by(a.sram_bytes, w->published_sram_bytes, tolerance, "SRAM total", "B", w,
		   err, errlen))
		return -ERANGE;
	if (w->published_mem_bytes_per_s > 0 &&
	    off_by(a.mem_bytes_per_s, w->published_mem_bytes_per_s, tolerance,
		   "memory bandwidth", "B/s", w, err, errlen))
		return -ERANGE;
	if (w->published_fabric_bits_per_s > 0 &&
	    off_by(a.fabric_bits_per_s, w->published_fabric_bits_per_s, tolerance,
		   "fabric bandwidth", "b/s", w, err, errlen))
		return -ERANGE;
	return 0;
}

void wse_wafer_describe(const struct wse_wafer *w, char *buf, size_t len)
{
	snprintf(buf, len,
		 "%s: %ux%u PEs, %llu B SRAM/PE (%.2f GB in the mesh), %.3g GHz, "
		 "%.3g fp32 PFLOP/s peak, host I/O %.3g GB/s",
		 w->name, w->width, w->height, (unsigned long long)w->sram_per_pe,
		 (double)wse_wafer_sram_bytes(w) / 1e9, (double)w->clock_hz / 1e9,
		 wse_wafer_peak_fp32_flops(w) / 1e15, w->io_bytes_per_s / 1e9);
}
