/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the host tests that load programs: a model in the compiler's text
 * format compiled into a .wsep image, as wsecc would.
 */
#ifndef TEST_MODEL_H
#define TEST_MODEL_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "wse/compiler.h"

/*
 * Compiles @text for wafer @wafer (WxH) in @mode, in micro-batches of
 * @micro samples (wsecc --micro-batch; 0: the compiler's choice), at
 * @precision (wsecc --precision), into a .wsep image (free()); 0 or -1.
 */
static inline int test_compile_model_at(const char *text, const char *wafer,
					enum wsecc_mode mode, uint32_t micro,
					enum wsep_precision precision, void **buf, size_t *len)
{
	static struct wsecc_model m;
	static struct wsecc_plan plan;
	struct wsecc_error err;
	struct wse_wafer w;
	char msg[256];

	if (wsecc_parse_string(text, "test.model", &m, &err))
		return -1;
	m.micro_batch = micro;
	m.precision = precision;
	if (wse_wafer_parse(wafer, &w, msg, sizeof(msg)) ||
	    wsecc_compile(&m, &w, mode, &plan, &err))
		return -1;
	return wsecc_emit(&m, &plan, plan.mode == WSEP_MODE_PIPELINED, buf, len, &err);
}

/* As test_compile_model_at() in fp32. */
static inline int test_compile_model_micro(const char *text, const char *wafer,
					   enum wsecc_mode mode, uint32_t micro, void **buf,
					   size_t *len)
{
	return test_compile_model_at(text, wafer, mode, micro, WSEP_PRECISION_FP32, buf, len);
}

/* As test_compile_model_micro(), the compiler choosing the micro-batch. */
static inline int test_compile_model(const char *text, const char *wafer, enum wsecc_mode mode,
				     void **buf, size_t *len)
{
	return test_compile_model_micro(text, wafer, mode, 0, buf, len);
}

/*
 * Two loss curves agree to fp32 rounding: each step's mean within 1e-5
 * of the other's, relative to 1 or the loss. The index of the first step
 * that does not, or -1.
 */
static inline int test_loss_curves_differ(const float *a, const float *b, int steps)
{
	double most = 0;

	for (int s = 0; s < steps; s++)
		if (fabs((double)a[s] - (double)b[s]) > most)
			most = fabs((double)a[s] - (double)b[s]);
	printf("# loss curves: the largest difference of a step's loss is %.3g\n", most);
	for (int s = 0; s < steps; s++) {
		double d = (double)a[s] - (double)b[s], scale = a[s] > 1 ? a[s] : 1;

		if (!(d <= 1e-5 * scale && d >= -1e-5 * scale))
			return s;
	}
	return -1;
}
#endif
