/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Wafer geometry for wsefwd's --wafer option. Kept small and separate so it
 * can be replaced by lib/wafer (wse/wafer.h) without touching the rest.
 */
#ifndef FWD_WAFER_H
#define FWD_WAFER_H

#include <stddef.h>
#include <stdint.h>

struct fwd_wafer {
	uint32_t width;		/* PEs per row */
	uint32_t height;	/* rows */
	uint64_t sram_per_pe;	/* bytes */
};

/* "wse2", "wse3" or "WxH" (sram_per_pe left at the 48 KiB default for WxH).
 * Returns 0 or -1 with a sentence in @err.
 */
int fwd_wafer_parse(const char *spec, struct fwd_wafer *w, char *err, size_t errlen);

#endif /* FWD_WAFER_H */
