// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The wafer presets. Every figure names its source; where a figure is not
 * published it says how it was derived. Sources:
 *   [HC31]  Sean Lie, "Wafer Scale Deep Learning", Hot Chips 31 (2019): WSE-1.
 *   [HC34]  Sean Lie, "Cerebras Architecture Deep Dive", Hot Chips 34
 *           (2022): the core (48 kB SRAM in 8 banks, two 64-bit reads and
 *           one 64-bit write per cycle, 1.1 GHz), 32-bit wavelets, 5-port
 *           router.
 *   [CS2]   Cerebras CS-2 product brief: 850,000 cores, 40 GB SRAM,
 *           20 PB/s memory bandwidth, 220 Pb/s fabric, 1.2 Tb/s I/O.
 *   [CS3]   Cerebras CS-3 / WSE-3 product brief (2024): 900,000 cores,
 *           44 GB SRAM, 21 PB/s, 214 Pb/s.
 *   [SDK]   Cerebras SDK documentation: the usable CS-2 fabric is 750 x 994
 *           PEs; simulator scripts clock it at 850 MHz.
 * DESIGN.md carries the same table.
 */
#include <errno.h>
#include <string.h>

#include "wse/wafer.h"

/* Per-PE figures shared by every generation ([HC34]). */
#define PE_SRAM_BYTES		(48ULL * 1024)	/* [HC34] 48 kB per core */
#define PE_CLOCK_HZ		1100000000ULL	/* [HC34] 1.1 GHz; [SDK] uses 850 MHz */
#define PE_SRAM_BYTES_PER_CYCLE	24.0	/* [HC34] 2 x 64-bit read + 1 x 64-bit write */
#define PE_FP32_FLOPS_PER_CYCLE	2.0	/* one fp32 FMAC per cycle: [HC34] datapath,
					 * fp32 is not SIMD; our reading, see compiler.rst */
#define PE_FP16_FLOPS_PER_CYCLE	8.0	/* [HC34] 4-way fp16 SIMD FMAC */
#define PE_LINK_BYTES_PER_CYCLE	4.0	/* [HC34] one 32-bit wavelet per link per cycle */
#define PE_LINKS		4U	/* [HC34] router ports: the PE and 4 neighbours */
#define HOST_IO_BYTES_PER_S	150e9	/* [CS2] 1.2 Tb/s (12 x 100 GbE) */

static const struct wse_wafer presets[] = {
	{
		.name = "wse1",
		/* Not published for WSE-1: WSE-2's usable rectangle scaled
		 * by sqrt(400,000 / 850,000), keeping its aspect ratio.
		 */
		.width = 515, .height = 682,
		.sram_per_pe = PE_SRAM_BYTES,
		.clock_hz = PE_CLOCK_HZ,	/* not published for WSE-1 */
		.fp32_flops_per_cycle = PE_FP32_FLOPS_PER_CYCLE,
		.fp16_flops_per_cycle = PE_FP16_FLOPS_PER_CYCLE,
		.sram_bytes_per_cycle = PE_SRAM_BYTES_PER_CYCLE,
		.link_bytes_per_cycle = PE_LINK_BYTES_PER_CYCLE,
		.links_per_pe = PE_LINKS,
		.io_bytes_per_s = HOST_IO_BYTES_PER_S,	/* [HC31] 1.2 Tb/s */
		.published_pes = 400000,		/* [HC31] */
		.published_sram_bytes = 18e9,		/* [HC31] 18 GB */
		.published_mem_bytes_per_s = 9e15,	/* [HC31] 9 PB/s */
		.published_fabric_bits_per_s = 100e15,	/* [HC31] 100 Pb/s */
	},
	{
		.name = "wse2",
		.width = 750, .height = 994,		/* [SDK] usable fabric */
		.sram_per_pe = PE_SRAM_BYTES,
		.clock_hz = PE_CLOCK_HZ,
		.fp32_flops_per_cycle = PE_FP32_FLOPS_PER_CYCLE,
		.fp16_flops_per_cycle = PE_FP16_FLOPS_PER_CYCLE,
		.sram_bytes_per_cycle = PE_SRAM_BYTES_PER_CYCLE,
		.link_bytes_per_cycle = PE_LINK_BYTES_PER_CYCLE,
		.links_per_pe = PE_LINKS,
		.io_bytes_per_s = HOST_IO_BYTES_PER_S,	/* [CS2] */
		.published_pes = 850000,		/* [CS2] */
		.published_sram_bytes = 40e9,		/* [CS2] 40 GB */
		.published_mem_bytes_per_s = 20e15,	/* [CS2] 20 PB/s */
		.published_fabric_bits_per_s = 220e15,	/* [CS2] 220 Pb/s */
	},
	{
		.name = "wse3",
		/* Not published: WSE-2's usable rectangle scaled by
		 * sqrt(900,000 / 850,000).
		 */
		.width = 772, .height = 1023,
		.sram_per_pe = PE_SRAM_BYTES,		/* [CS3] 44 GB / 900k cores */
		.clock_hz = PE_CLOCK_HZ,		/* not published for WSE-3 */
		.fp32_flops_per_cycle = PE_FP32_FLOPS_PER_CYCLE,
		.fp16_flops_per_cycle = 2 * PE_FP16_FLOPS_PER_CYCLE, /* [CS3] 8-way fp16 SIMD */
		.sram_bytes_per_cycle = PE_SRAM_BYTES_PER_CYCLE,
		.link_bytes_per_cycle = PE_LINK_BYTES_PER_CYCLE,
		.links_per_pe = PE_LINKS,
		.io_bytes_per_s = HOST_IO_BYTES_PER_S,	/* [CS3] 1.2 Tb/s per system */
		.published_pes = 900000,		/* [CS3] */
		.published_sram_bytes = 44e9,		/* [CS3] 44 GB */
		.published_mem_bytes_per_s = 21e15,	/* [CS3] 21 PB/s */
		.published_fabric_bits_per_s = 214e15,	/* [CS3] 214 Pb/s */
	},
};

int wse_wafer_preset(const char *name, struct wse_wafer *w)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		if (strcmp(name, presets[i].name) == 0) {
			*w = presets[i];
			return 0;
		}
	}
	return -ENOENT;
}
