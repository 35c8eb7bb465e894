/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine's one matrix product (precision.c): a row-major sgemm,
 * C = alpha op(A) op(B) + beta C, whose A and B are first rounded to the
 * calling thread's precision (engine_set_precision()); accumulation and C
 * stay fp32. Return: 0, or -ENOMEM when the rounded copies could not be
 * allocated (C is then untouched).
 */
#ifndef WSE_ENGINE_GEMM_H
#define WSE_ENGINE_GEMM_H

#include <stdbool.h>

int engine_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a,
		int lda, const float *b, int ldb, float beta, float *c, int ldc);

/* Returns from the calling function when the product fails. */
#define SGEMM_OR_RETURN(call)		\
	do {				\
		int sgemm_err_ = (call);	\
		if (sgemm_err_)			\
			return sgemm_err_;	\
	} while (0)

#endif
