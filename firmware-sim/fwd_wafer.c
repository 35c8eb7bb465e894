// SPDX-License-Identifier: GPL-2.0-only
/*
 * --wafer wse2|wse3|WxH. The figures are those of lib/wafer's presets:
 * WSE-2's usable CS-2 fabric is 750 x 994 PEs (Cerebras SDK), 48 KiB of
 * SRAM per PE (Hot Chips 34); WSE-3 has 900,000 PEs and 44 GB (CS-3 brief),
 * modelled as 772 x 1023 (WSE-2's rectangle scaled by sqrt(900k/850k)).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_wafer.h"
#include "wse/numparse.h"

#define PE_SRAM_DEFAULT		(48ULL * 1024)
#define WAFER_SIDE_MAX		100000UL

int fwd_wafer_parse(const char *spec, struct fwd_wafer *w, char *err, size_t errlen)
{
	const char *p = spec;
	uint64_t width, height;
	char why[160];

	w->sram_per_pe = PE_SRAM_DEFAULT;
	if (!strcmp(spec, "wse2")) {
		w->width = 750;
		w->height = 994;
		return 0;
	}
	if (!strcmp(spec, "wse3")) {
		w->width = 772;
		w->height = 1023;
		return 0;
	}
	if (wse_parse_u64_at(&p, 0, UINT64_MAX, WSE_NUM_PLAIN, &width, why, sizeof(why)) ||
	    (*p != 'x' && *p != 'X'))
		goto bad;
	p++;
	if (wse_parse_u64_at(&p, 0, UINT64_MAX, WSE_NUM_PLAIN, &height, why, sizeof(why)) || *p)
		goto bad;
	if (!width || !height || width > WAFER_SIDE_MAX || height > WAFER_SIDE_MAX) {
		snprintf(err, errlen, "wafer %llux%llu: each side must be 1..%lu PEs",
			 (unsigned long long)width, (unsigned long long)height, WAFER_SIDE_MAX);
		return -1;
	}
	w->width = (uint32_t)width;
	w->height = (uint32_t)height;
	return 0;
bad:
	snprintf(err, errlen, "wafer '%s': expected wse2, wse3 or WxH (e.g. 64x48)", spec);
	return -1;
}
