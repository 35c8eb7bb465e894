/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * 4-wide float vectors with GCC's vector extensions: SSE2, which every
 * x86-64 has, without intrinsics. The element-wise kernels are vectorized by
 * hand because at -O2 GCC 12 vectorizes only loops whose trip count is a
 * known multiple of the vector width; scalar code with data-dependent
 * branches (ReLU) costs a mispredict per element. Each lane does exactly the
 * scalar operation (no FMA contraction in ISO C mode), so a vector body and
 * its scalar tail give identical bits.
 */
#ifndef WSE_FIRMWARE_ENGINE_VEC_H
#define WSE_FIRMWARE_ENGINE_VEC_H

#include <stdint.h>
#include <string.h>

#define VLEN 4

/*
 * For loops GCC vectorizes itself (a sqrt or a divide per element, which
 * the 4-wide types cannot express without intrinsics): one copy of the
 * function per ISA level, the widest the CPU has chosen when the program
 * loads. Each lane still does exactly the scalar operations, so every copy
 * gives the same bits. The file must be compiled with -ftree-vectorize
 * and -fno-math-errno (sqrtf may not set errno in a vector loop); see
 * lib/engine/module.mk.
 */
#if defined(__x86_64__)
#define ENGINE_VECTOR_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define ENGINE_VECTOR_CLONES
#endif

typedef float vfloat __attribute__((vector_size(16)));
typedef int32_t vint __attribute__((vector_size(16)));

/* memcpy: the arrays need not be 16-byte aligned; it compiles to movups. */
static inline vfloat vload(const float *p)
{
	vfloat v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void vstore(float *p, vfloat v)
{
	memcpy(p, &v, sizeof(v));
}

static inline vfloat vsplat(float x)
{
	return (vfloat){ x, x, x, x };
}

/* v where the lane's mask (from a vector comparison) is set, else +0. */
static inline vfloat vkeep(vint mask, vfloat v)
{
	return (vfloat)(mask & (vint)v);
}

#endif
