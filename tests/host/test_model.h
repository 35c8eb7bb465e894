/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the host tests that load programs: a model in the compiler's text
 * format compiled into a .wsep image, as wsecc would.
 */
#ifndef TEST_MODEL_H
#define TEST_MODEL_H

#include <stddef.h>

#include "wse/compiler.h"

/* Compiles @text for wafer @wafer (WxH) in @mode into a .wsep image (free()); 0 or -1. */
static inline int test_compile_model(const char *text, const char *wafer, enum wsecc_mode mode,
				     void **buf, size_t *len)
{
	static struct wsecc_model m;
	static struct wsecc_plan plan;
	struct wsecc_error err;
	struct wse_wafer w;
	char msg[256];

	if (wsecc_parse_string(text, "test.model", &m, &err) ||
	    wse_wafer_parse(wafer, &w, msg, sizeof(msg)) ||
	    wsecc_compile(&m, &w, mode, &plan, &err))
		return -1;
	return wsecc_emit(&m, &plan, plan.mode == WSEP_MODE_PIPELINED, buf, len, &err);
}

#endif
