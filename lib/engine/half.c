// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 16-bit float storage: bfloat16 and IEEE 754 binary16 as bit patterns.
 * Weights, activations or gradients kept or sent this way take half the
 * bytes; arithmetic stays fp32. Narrowing rounds to nearest, ties to even;
 * widening is exact.
 */
#include <errno.h>
#include <string.h>

#include "wse/engine.h"

static uint32_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static float f32_from_bits(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* q = v >> shift, rounded to nearest with ties to even (shift 1..31). */
static uint32_t shift_round_even(uint32_t v, unsigned int shift)
{
	uint32_t q = v >> shift, rest = v & ((1u << shift) - 1);
	uint32_t half = 1u << (shift - 1);

	if (rest > half || (rest == half && (q & 1)))
		q++;
	return q;
}

static uint16_t bf16_from_f32(float x)
{
	uint32_t u = f32_bits(x);

	/* A NaN whose payload sits in the low half would round to infinity:
	 * keep it a (quiet) NaN.
	 */
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x0040u);
	/* Rounding may carry into the exponent: the largest floats become
	 * infinity, as they should.
	 */
	return (uint16_t)shift_round_even(u, 16);
}

static uint16_t f16_from_f32(float x)
{
	uint32_t u = f32_bits(x);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t mant = u & 0x7fffffu;
	int exp = (int)((u >> 23) & 0xffu) - 127 + 15;	/* binary16 bias */

	if (((u >> 23) & 0xffu) == 0xffu)	/* infinity or NaN */
		return sign | 0x7c00u | (mant ? 0x0200u | (uint16_t)(mant >> 13) : 0);
	if (exp >= 31)
		return sign | 0x7c00u;	/* too large: infinity */
	if (exp >= 1) {
		/* Normal. A carry out of the mantissa bumps the exponent,
		 * up to infinity (0x7c00) from 65520 on.
		 */
		return sign | (uint16_t)shift_round_even(((uint32_t)exp << 23) | mant, 13);
	}
	/* Subnormal or zero: the value is m * 2^(exp - 25) with the implicit
	 * bit, in units of 2^-24.
	 */
	if (exp < -10)
		return sign;	/* below half the smallest subnormal */
	return sign | (uint16_t)shift_round_even(mant | 0x800000u,
						 (unsigned int)(14 - exp));
}

static float f32_from_f16(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;

	if (exp == 0) {
		/* Zero or subnormal: m * 2^-24, exact in fp32. */
		float v = (float)mant * 0x1p-24f;

		return f32_from_bits(f32_bits(v) | sign);
	}
	if (exp == 31)	/* infinity, or a NaN with its payload kept */
		return f32_from_bits(sign | 0x7f800000u | (mant << 13));
	return f32_from_bits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

int engine_f32_to_bf16(const float *x, size_t n, uint16_t *out)
{
	if (!x || !out || !n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = bf16_from_f32(x[i]);
	return 0;
}

int engine_bf16_to_f32(const uint16_t *x, size_t n, float *out)
{
	if (!x || !out || !n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = f32_from_bits((uint32_t)x[i] << 16);
	return 0;
}

int engine_f32_to_f16(const float *x, size_t n, uint16_t *out)
{
	if (!x || !out || !n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = f16_from_f32(x[i]);
	return 0;
}

int engine_f16_to_f32(const uint16_t *x, size_t n, float *out)
{
	if (!x || !out || !n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = f32_from_f16(x[i]);
	return 0;
}

int engine_round_f32(enum engine_precision p, const float *x, size_t n, float *out)
{
	if (!x || !out || !n)
		return -EINVAL;
	switch (p) {
	case ENGINE_FP32:
		if (out != x)
			memmove(out, x, n * sizeof(*x));
		return 0;
	case ENGINE_BF16:
		for (size_t i = 0; i < n; i++)
			out[i] = f32_from_bits((uint32_t)bf16_from_f32(x[i]) << 16);
		return 0;
	case ENGINE_FP16:
		for (size_t i = 0; i < n; i++)
			out[i] = f32_from_f16(f16_from_f32(x[i]));
		return 0;
	}
	return -EINVAL;
}
