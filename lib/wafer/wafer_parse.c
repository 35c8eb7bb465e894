// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parsing a wafer spec: a preset name, or "WxH[:SRAM][@CLOCK]" for a custom
 * mesh with the wse2 per-PE figures (a small mesh makes weight streaming
 * cheap to demonstrate).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wse/numparse.h"
#include "wse/wafer.h"

int wse_wafer_parse(const char *spec, struct wse_wafer *w, char *err, size_t errlen)
{
	const char *p = spec;
	uint64_t width, height, sram = 48ULL * 1024, clock;
	struct wse_wafer base;
	char why[160];

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty wafer spec: give wse1, wse2, wse3 or WxH[:SRAM][@CLOCK]");
		return -EINVAL;
	}
	if (wse_wafer_preset(spec, w) == 0)
		return 0;
	wse_wafer_preset("wse2", &base);
	clock = base.clock_hz;

	if (wse_parse_u64_at(&p, 0, UINT64_MAX, WSE_NUM_PLAIN, &width, why, sizeof(why)) ||
	    (*p != 'x' && *p != 'X')) {
		snprintf(err, errlen,
			 "wafer '%s': expected a preset (wse1, wse2, wse3) or WxH[:SRAM][@CLOCK], e.g. 64x48:48K",
			 spec);
		return -EINVAL;
	}
	p++;
	if (wse_parse_u64_at(&p, 0, UINT64_MAX, WSE_NUM_PLAIN, &height, why, sizeof(why))) {
		snprintf(err, errlen, "wafer '%s': expected a height after 'x', e.g. 64x48", spec);
		return -EINVAL;
	}
	if (width < 1 || width > WSE_WAFER_MAX_DIM || height < 1 || height > WSE_WAFER_MAX_DIM) {
		snprintf(err, errlen, "wafer '%s': width and height must be 1..%u PEs", spec,
			 WSE_WAFER_MAX_DIM);
		return -EINVAL;
	}
	if (*p == ':') {
		p++;
		if (wse_parse_u64_at(&p, 0, UINT64_MAX, WSE_NUM_BINARY, &sram, why, sizeof(why))) {
			snprintf(err, errlen,
				 "wafer '%s': expected SRAM bytes per PE after ':', e.g. 48K", spec);
			return -EINVAL;
		}
		if (sram < WSE_WAFER_MIN_SRAM || sram > WSE_WAFER_MAX_SRAM) {
			snprintf(err, errlen, "wafer '%s': SRAM per PE must be %lluK..%lluM", spec,
				 WSE_WAFER_MIN_SRAM / 1024, WSE_WAFER_MAX_SRAM >> 20);
			return -EINVAL;
		}
	}
	if (*p == '@') {
		p++;
		if (wse_parse_u64_at(&p, 0, UINT64_MAX, WSE_NUM_DECIMAL, &clock, why, sizeof(why))) {
			snprintf(err, errlen, "wafer '%s': expected a clock after '@', e.g. 850M", spec);
			return -EINVAL;
		}
		if (clock < 1000000ULL || clock > 10000000000ULL) {
			snprintf(err, errlen, "wafer '%s': clock must be 1M..10G Hz", spec);
			return -EINVAL;
		}
	}
	if (*p) {
		snprintf(err, errlen, "wafer '%s': unexpected '%s' (format: WxH[:SRAM][@CLOCK])",
			 spec, p);
		return -EINVAL;
	}

	*w = base;
	w->width = (uint32_t)width;
	w->height = (uint32_t)height;
	w->sram_per_pe = sram;
	w->clock_hz = clock;
	w->published_pes = 0;
	w->published_sram_bytes = 0;
	w->published_mem_bytes_per_s = 0;
	w->published_fabric_bits_per_s = 0;
	memset(w->name, 0, sizeof(w->name));
	if (strlen(spec) < sizeof(w->name))
		memcpy(w->name, spec, strlen(spec));
	else
		snprintf(w->name, sizeof(w->name), "%llux%llu", (unsigned long long)width,
			 (unsigned long long)height);
	return 0;
}
