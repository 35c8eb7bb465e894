// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mixed precision: the calling thread's compute precision, the matrix
 * products that honour it, and dynamic loss scaling.
 *
 * In fp16 or bf16 a product's inputs (weights, activations, gradients) are
 * rounded to 16 bits and multiplied with fp32 accumulation, as the wafer's
 * FMAC and PyTorch's autocast do; every other kernel (softmax, norms, the
 * loss, the optimizer) stays fp32, again as autocast keeps them. The
 * precision is per thread, like autocast's state, so threads running
 * programs of different precisions do not disturb each other.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include <cblas.h>

#include "gemm.h"
#include "wse/engine.h"

static _Thread_local enum engine_precision precision = ENGINE_FP32;

/* Each thread's rounded copies of the two operands, grown as needed. */
struct operand {
	float *buf;
	size_t cap;
};
static _Thread_local struct operand operand[2];
static pthread_key_t operand_key;
static pthread_once_t operand_once = PTHREAD_ONCE_INIT;

static void free_operands(void *unused)
{
	(void)unused;
	for (int i = 0; i < 2; i++) {
		free(operand[i].buf);
		operand[i] = (struct operand){ 0 };
	}
}

static void make_key(void)
{
	/* Frees a thread's copies when it exits. */
	if (pthread_key_create(&operand_key, free_operands))
		abort();
}

enum engine_precision engine_set_precision(enum engine_precision p)
{
	enum engine_precision old = precision;

	if (p == ENGINE_FP32 || p == ENGINE_FP16 || p == ENGINE_BF16)
		precision = p;
	return old;
}

enum engine_precision engine_precision(void)
{
	return precision;
}

const char *engine_precision_name(enum engine_precision p)
{
	switch (p) {
	case ENGINE_FP32: return "fp32";
	case ENGINE_FP16: return "fp16";
	case ENGINE_BF16: return "bf16";
	}
	return "unknown";
}

/* A rounded copy of a rows x cols matrix with leading dimension ld. */
static const float *rounded(int which, const float *m, int rows, int cols, int ld)
{
	size_t n = (size_t)(rows - 1) * (size_t)ld + (size_t)cols;
	struct operand *o = &operand[which];

	if (o->cap < n) {
		float *b = realloc(o->buf, n * sizeof(float));

		if (!b)
			return NULL;
		pthread_once(&operand_once, make_key);
		pthread_setspecific(operand_key, o);
		o->buf = b;
		o->cap = n;
	}
	engine_round_f32(precision, m, n, o->buf);
	return o->buf;
}

int engine_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a,
		int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
	CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
	CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;

	if (precision != ENGINE_FP32 && m > 0 && n > 0 && k > 0) {
		a = rounded(0, a, trans_a ? k : m, trans_a ? m : k, lda);
		b = rounded(1, b, trans_b ? n : k, trans_b ? k : n, ldb);
		if (!a || !b)
			return -ENOMEM;
	}
	cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
	return 0;
}

/* --- dynamic loss scaling, torch.cuda.amp.GradScaler's rules ---------- */

void engine_loss_scaler_init(struct engine_loss_scaler *s)
{
	*s = (struct engine_loss_scaler){
		.scale = 65536.0f, .growth = 2.0f, .backoff = 0.5f, .interval = 2000,
	};
}

bool engine_unscale(float *g, size_t n, float scale)
{
	/* GradScaler multiplies by the fp32 reciprocal of the scale. */
	float inv = (float)(1.0 / (double)scale);
	bool finite = true;

	for (size_t i = 0; i < n; i++) {
		g[i] *= inv;
		finite &= isfinite(g[i]) != 0;
	}
	return finite;
}

bool engine_loss_scaler_update(struct engine_loss_scaler *s, bool found_inf)
{
	if (found_inf) {
		s->scale *= s->backoff;
		s->good_steps = 0;
		s->skipped++;
		return false;
	}
	if (++s->good_steps == s->interval) {
		s->scale *= s->growth;
		s->good_steps = 0;
	}
	return true;
}
