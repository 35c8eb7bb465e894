/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Little-endian field access for the .wsep codec, and the byte offsets of
 * every on-disk field (Documentation/wsep-format.rst has the same table).
 * Fields are copied byte by byte, so the buffer needs no alignment and the
 * host's endianness does not matter.
 */
#ifndef WSEP_LE_H
#define WSEP_LE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static inline double get_f64(const uint8_t *p)
{
	uint64_t v = get_le64(p);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static inline float get_f32(const uint8_t *p)
{
	uint32_t v = get_le32(p);
	float f;

	memcpy(&f, &v, sizeof(f));
	return f;
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline void put_f64(uint8_t *p, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put_le64(p, v);
}

static inline void put_f32(uint8_t *p, float f)
{
	uint32_t v;

	memcpy(&v, &f, sizeof(v));
	put_le32(p, v);
}

/* Header. */
#define HDR_MAGIC		0
#define HDR_VERSION_MAJOR	4
#define HDR_VERSION_MINOR	6
#define HDR_HEADER_SIZE		8
#define HDR_SECTION_COUNT	12
#define HDR_FILE_SIZE		16
#define HDR_FEATURES		24	/* "flags" in format 1.0 */
#define HDR_RESERVED		28	/* 28 bytes of zeros, up to 56 */
#define HDR_TABLE_CRC		56
#define HDR_HEADER_CRC		60	/* CRC32C of bytes 0..59 */

/* Section table entry. */
#define SEC_TYPE		0
#define SEC_RECORD_SIZE		4
#define SEC_COUNT		8
#define SEC_CRC			12
#define SEC_OFFSET		16
#define SEC_LENGTH		24

/* WAFER record. */
#define WAF_NAME		0
#define WAF_WIDTH		16
#define WAF_HEIGHT		20
#define WAF_SRAM_PER_PE		24
#define WAF_CLOCK_HZ		32
#define WAF_FP32_FLOPS		40
#define WAF_SRAM_BW		48
#define WAF_LINK_BW		56
#define WAF_IO_BW		64

/* PROGRAM record. */
#define PRG_MODEL_NAME		0
#define PRG_MODE		32
#define PRG_BATCH		36
#define PRG_SEED		40
#define PRG_INPUT_DIM		48
#define PRG_INPUT_TYPE		52
#define PRG_INPUT_SCALE		56
#define PRG_LOSS		60
#define PRG_OPT_KIND		64
#define PRG_LR			72
#define PRG_MOMENTUM		80
#define PRG_BETA1		88
#define PRG_BETA2		96
#define PRG_EPS			104
#define PRG_WEIGHT_DECAY	112
#define PRG_NUM_LAYERS		120
/* Format 1.1 (feature TRAINING): the optimizer's extensions. */
#define PRG_DAMPENING		128
#define PRG_NESTEROV		136
#define PRG_SCHEDULE		140
#define PRG_WARMUP		144
#define PRG_TOTAL_STEPS		152
#define PRG_MIN_LR		160
/* Format 1.3 (feature MICRO_BATCH when it cuts the batch). */
#define PRG_MICRO_BATCH		168
/* Format 1.4 (feature RECOMPUTE when it says so); 0 before. */
#define PRG_EXEC_FLAGS		172
/* Format 1.5 (feature PRECISION unless fp32); 180..183 reserved, 0. */
#define PRG_PRECISION		176
#define PRG_RESERVED_1_5	180

/* LAYERS record. */
#define LAY_KIND		0
#define LAY_ACT			4
#define LAY_IN			8
#define LAY_OUT			12
#define LAY_SRAM		16
#define LAY_WEIGHT_OFFSET	24
#define LAY_PARAMS		32	/* format 1.1 */

/* REGIONS record. */
#define REG_X			0
#define REG_Y			4
#define REG_W			8
#define REG_H			12

/* STREAMS record. */
#define STR_ID			0
#define STR_DIR			4
#define STR_ELEM		8
#define STR_LAYER		12
#define STR_ELEMS		16
#define STR_UNIT		24
#define STR_NAME		32

/* ESTIMATES record. */
#define EST_FLOPS		0
#define EST_FWD			8
#define EST_BWD			16
#define EST_IO			24
#define EST_STAGE		32
#define EST_LIMIT		40

/* SUMMARY record. */
#define SUM_SAMPLES_PER_S	0
#define SUM_EVEN_SPLIT		8
#define SUM_UTILIZATION		16
#define SUM_ACTIVE_PES		24
#define SUM_SRAM		32
#define SUM_BOTTLENECK		40
#define SUM_LIMIT		44

/* GRAPH record. */
#define GRA_VALUES		0
#define GRA_NODES		4
#define GRA_INPUT		8
#define GRA_LOGITS		12
#define GRA_LABELS		16
#define GRA_ROWS		20
#define GRA_CLASSES		24
#define GRA_CONST_BYTES		32
/* Format 1.6: the fed inputs after the first, their count then their value ids. */
#define GRA_MORE_INPUTS		40
#define GRA_MORE_INPUT_IDS	44	/* WSEP_GRAPH_MAX_INPUTS - 1 of them */
#define GRA_END			56	/* reserved zeros up to the record's end */

/* VALUES record. */
#define VAL_DTYPE		0
#define VAL_KIND		4
#define VAL_RANK		8
#define VAL_BATCH_DIM		12
#define VAL_DIMS		16	/* 6 x u64 */
#define VAL_OFFSET		64
#define VAL_UNIT		72
#define VAL_END			76

/* NODES record. */
#define NOD_OP			0
#define NOD_UNIT		4
#define NOD_N_IN		8
#define NOD_N_OUT		12
#define NOD_IN			16	/* 8 x i32 */
#define NOD_OUT			48	/* 8 x i32 */
#define NOD_KERNEL		80	/* 2 x u32 */
#define NOD_STRIDE		88
#define NOD_DILATION		96
#define NOD_PADS		104	/* 4 x u32 */
#define NOD_FLAGS		120
#define NOD_ALPHA		124
#define NOD_BETA		128
#define NOD_BINARY		132
#define NOD_ACT			136
#define NOD_AXIS		140
#define NOD_EPSILON		144
#define NOD_HEADS		148
#define NOD_SCALE		152
#define NOD_RATIO		156
#define NOD_PERM		160	/* 6 x u8 */
#define NOD_MOMENTUM		168
#define NOD_START		172
#define NOD_END			176

/* PARAM_NAMES record (format 1.2, optional section). */
#define PNM_OFFSET		0
#define PNM_ELEMS		8
#define PNM_RANK		16
#define PNM_FLAGS		20
#define PNM_DIMS		24	/* 6 x u64 */
#define PNM_NAME		72	/* 128 bytes */
#define PNM_TORCH_NAME		200	/* 128 bytes */

#endif /* WSEP_LE_H */
