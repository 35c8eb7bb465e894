/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/wafer.h: the wafer a program runs on, as plain figures.
 *
 * Geometry (the usable PE mesh), per-PE figures (SRAM, compute, SRAM
 * bandwidth, fabric links) and the host I/O bandwidth. The compiler uses
 * them to place and estimate; the firmware's timing model uses the same
 * numbers. This library depends on nothing else in the tree.
 *
 * Sources for every preset figure are cited in lib/wafer/wafer_presets.c
 * and Documentation/compiler.rst.
 */
#ifndef WSE_WAFER_H
#define WSE_WAFER_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define WSE_WAFER_NAME_MAX 16

/* Mesh limits a spec may ask for: larger than any real wafer, small enough
 * that width * height * sram_per_pe fits in 64 bits with room to spare.
 */
#define WSE_WAFER_MAX_DIM	4096U
#define WSE_WAFER_MIN_SRAM	1024ULL
#define WSE_WAFER_MAX_SRAM	(16ULL << 20)

/**
 * struct wse_wafer - one wafer's figures
 * @name: "wse2", or the spec it was parsed from ("64x48:48K")
 * @width: usable PE columns (the mesh programs are placed on)
 * @height: usable PE rows
 * @sram_per_pe: SRAM bytes in each PE
 * @clock_hz: PE and fabric clock
 * @fp32_flops_per_cycle: fp32 FLOPs one PE retires per cycle (an FMAC is 2)
 * @fp16_flops_per_cycle: the same for 16-bit (fp16, bf16) matrix products
 * @sram_bytes_per_cycle: bytes one PE can move to and from its SRAM per cycle
 * @link_bytes_per_cycle: bytes per fabric link per direction per cycle
 *	(one 32-bit wavelet)
 * @links_per_pe: fabric links from a PE's router to its neighbours
 * @io_bytes_per_s: host I/O bandwidth into (and out of) the wafer
 * @published_pes: the PE count the vendor publishes (0 for a custom mesh);
 *	the aggregates below are per this count, not width * height
 * @published_sram_bytes: published total SRAM (0 if none)
 * @published_mem_bytes_per_s: published total SRAM bandwidth (0 if none)
 * @published_fabric_bits_per_s: published total fabric bandwidth (0 if none)
 */
struct wse_wafer {
	char name[WSE_WAFER_NAME_MAX];
	uint32_t width;
	uint32_t height;
	uint64_t sram_per_pe;
	uint64_t clock_hz;
	double fp32_flops_per_cycle;
	double fp16_flops_per_cycle;
	double sram_bytes_per_cycle;
	double link_bytes_per_cycle;
	uint32_t links_per_pe;
	double io_bytes_per_s;
	uint64_t published_pes;
	double published_sram_bytes;
	double published_mem_bytes_per_s;
	double published_fabric_bits_per_s;
};

/* The wafer a tool uses when not told otherwise. */
#define WSE_WAFER_DEFAULT "wse2"

/**
 * wse_wafer_preset() - fill @w with a named preset: "wse1", "wse2", "wse3"
 * Return: 0, or -ENOENT if @name is not a preset.
 */
int wse_wafer_preset(const char *name, struct wse_wafer *w);

/**
 * wse_wafer_parse() - a preset name, or "WxH[:SRAM][@CLOCK]"
 *
 * W and H are PE counts (1..WSE_WAFER_MAX_DIM). SRAM is bytes per PE with
 * an optional K or M suffix (binary: 48K = 49152); default 48K. CLOCK is
 * Hz with an optional K, M or G suffix (decimal: 850M); default that of
 * the wse2 preset. Per-PE figures not given come from the wse2 preset;
 * a custom mesh has no published aggregates.
 * Return: 0, or -EINVAL with a message in @err saying what was wrong.
 */
int wse_wafer_parse(const char *spec, struct wse_wafer *w, char *err, size_t errlen);

/* Number of PEs in the usable mesh. */
uint64_t wse_wafer_pes(const struct wse_wafer *w);

/* Usable mesh SRAM in bytes (width * height * sram_per_pe). */
uint64_t wse_wafer_sram_bytes(const struct wse_wafer *w);

/* Peak fp32 FLOP/s of the usable mesh. */
double wse_wafer_peak_fp32_flops(const struct wse_wafer *w);
/*
 * FLOPs a PE retires per cycle in matrix products: fp16_flops_per_cycle
 * when @half (fp16 or bf16 compute: both 16-bit formats run on the 16-bit
 * SIMD FMAC) and the wafer gives one, else fp32_flops_per_cycle.
 */
double wse_wafer_product_flops_per_cycle(const struct wse_wafer *w, bool half);

/* Host I/O bytes per clock cycle. */
double wse_wafer_io_bytes_per_cycle(const struct wse_wafer *w);

/**
 * struct wse_wafer_aggregates - per-PE figures scaled to the published count
 * @pes: the PE count used (published_pes)
 * @sram_bytes: pes * sram_per_pe
 * @mem_bytes_per_s: pes * sram_bytes_per_cycle * clock
 * @fabric_bits_per_s: pes * links_per_pe * 2 directions * link bits * clock
 * @sram_ratio, @mem_ratio, @fabric_ratio: computed / published
 */
struct wse_wafer_aggregates {
	uint64_t pes;
	double sram_bytes;
	double mem_bytes_per_s;
	double fabric_bits_per_s;
	double sram_ratio;
	double mem_ratio;
	double fabric_ratio;
};

/* The tolerance within which the presets reproduce their published
 * aggregates; see Documentation/compiler.rst for why it is this wide.
 */
#define WSE_WAFER_AGGREGATE_TOLERANCE 0.20

/**
 * wse_wafer_check_aggregates() - do per-PE figures reproduce the aggregates?
 * @tolerance: allowed relative error, e.g. WSE_WAFER_AGGREGATE_TOLERANCE
 * @agg: if not NULL, receives the computed figures
 *
 * Return: 0 if every published aggregate is matched within @tolerance,
 * 1 if the wafer publishes none (a custom mesh), -ERANGE with a message in
 * @err naming the first figure that is off and by how much.
 */
int wse_wafer_check_aggregates(const struct wse_wafer *w, double tolerance,
			       struct wse_wafer_aggregates *agg,
			       char *err, size_t errlen);

/* One line describing @w, e.g. "wse2: 750x994 PEs, 48 KiB SRAM/PE, ...". */
void wse_wafer_describe(const struct wse_wafer *w, char *buf, size_t len);

#endif /* WSE_WAFER_H */
