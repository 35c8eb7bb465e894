// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device's timing model: the wafer's figures from lib/wafer for the
 * --wafer given (a preset's, or WSE-2's per-PE figures on a custom mesh),
 * the mesh and SRAM this device really has, and the parameter file.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fwd_log.h"
#include "fwd_timing_setup.h"

#define DEFAULT_PARAMS	"firmware-sim/timing/wse2.params"
/* Where `make install` puts it, from the installed binary's directory. */
#define INSTALLED_PARAMS	"../share/wse/timing/wse2.params"

/*
 * The default file: beside the build tree the binary is in, else where an
 * installed binary's share directory has it, else from the cwd.
 */
static void default_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		/* build/bin/wsefwd or build/san-bin/wsefwd: the tree is two up. */
		snprintf(buf, len, "%s/../../%s", dirname(exe), DEFAULT_PARAMS);
		if (access(buf, R_OK) == 0)
			return;
		/* PREFIX/bin/wsefwd (dirname() left exe as its directory). */
		snprintf(buf, len, "%s/%s", exe, INSTALLED_PARAMS);
		if (access(buf, R_OK) == 0)
			return;
	}
	snprintf(buf, len, "%s", DEFAULT_PARAMS);
}

int fwd_timing_setup(struct fwd_config *cfg, struct fwd_timing *t)
{
	char path[PATH_MAX + 64], err[512];

	if (cfg->timing_path)
		snprintf(path, sizeof(path), "%s", cfg->timing_path);
	else
		default_path(path, sizeof(path));
	if (fwd_timing_params_load(path, &t->p, err, sizeof(err))) {
		fwd_err("timing model: %s (give the file with --timing)", err);
		return -1;
	}
	if (wse_wafer_preset(cfg->wafer_spec, &t->wafer) &&
	    wse_wafer_preset(WSE_WAFER_DEFAULT, &t->wafer)) {
		fwd_err("timing model: lib/wafer has no %s preset", WSE_WAFER_DEFAULT);
		return -1;
	}
	/* A custom mesh: WSE-2's per-PE figures, no published aggregates. */
	if (strcmp(t->wafer.name, cfg->wafer_spec)) {
		snprintf(t->wafer.name, sizeof(t->wafer.name), "%ux%u", cfg->wafer_width,
			 cfg->wafer_height);
		t->wafer.published_pes = 0;
		t->wafer.published_sram_bytes = 0;
		t->wafer.published_mem_bytes_per_s = 0;
		t->wafer.published_fabric_bits_per_s = 0;
	}
	t->wafer.width = cfg->wafer_width;
	t->wafer.height = cfg->wafer_height;
	t->wafer.sram_per_pe = cfg->sram_per_pe;
	if (!cfg->clock_given)
		cfg->clock_khz = (uint32_t)(t->p.clock_hz / 1000);
	t->wafer.clock_hz = (uint64_t)cfg->clock_khz * 1000;
	fwd_info("timing model: %s, clock %u kHz, parameters from %s", t->wafer.name,
		 cfg->clock_khz, path);
	return 0;
}
