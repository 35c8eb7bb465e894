/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 16-bit weights on the wire (WSE_LINK_STREAM_WIRE16): which floats of a
 * layer's weight transfer travel as 16 bits, and their packing (by the
 * appliance's coordinator) and widening (by the system).
 *
 * A float travels as 16 bits when the program computes in fp16 or bf16
 * and uses it only as an input of matrix products (a dense layer's W; a
 * graph's Conv weight and Gemm or MatMul operands), which the engine
 * rounds to the same 16 bits before multiplying (engine_sgemm()): so the
 * system computes on the same values, bit for bit, as from f32. Biases,
 * norm parameters and all else the engine reads in f32 travel as f32.
 * MemoryX's masters stay f32; only the copy in flight is rounded.
 */
#ifndef FWD_WIRE16_H
#define FWD_WIRE16_H

#include <stdint.h>

#include "wse/engine.h"
#include "wse/wsep.h"

/* Floats [at, at + n) of a layer's transfer, counted from its first. */
struct fwd_wire16_run {
	uint64_t at, n;
};

struct fwd_wire16 {
	enum engine_precision precision;	/* of the 16-bit values */
	uint64_t elems;				/* the layer's floats */
	uint32_t nruns;				/* 0: all f32 */
	struct fwd_wire16_run *runs;		/* the 16-bit ones, ascending, apart */
};

/*
 * Layer @k's layout in program @p. A program that is not fp16 or bf16
 * weight streaming gets no runs. 0, or -ENOMEM.
 */
int fwd_wire16_layout(const struct wsep_program *p, uint32_t k, struct fwd_wire16 *w);
void fwd_wire16_free(struct fwd_wire16 *w);
/* Bytes on the wire of floats [@e0, @e1). */
uint64_t fwd_wire16_bytes(const struct fwd_wire16 *w, uint64_t e0, uint64_t e1);
/* Floats [@e0, @e1) of the layer's @src (its float 0 first) packed into @dst: the bytes. */
uint64_t fwd_wire16_pack(const struct fwd_wire16 *w, uint64_t e0, uint64_t e1, const float *src,
			 uint8_t *dst);
/*
 * @len wire bytes @src, whose first value is the layer's float @e0,
 * widened into @dst[0..]: the floats written, or 0 when @len does not end
 * on a whole value inside the layer.
 */
uint64_t fwd_wire16_widen(const struct fwd_wire16 *w, uint64_t e0, const uint8_t *src,
			  uint64_t len, float *dst);

#endif /* FWD_WIRE16_H */
