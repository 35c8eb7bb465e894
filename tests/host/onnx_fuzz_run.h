/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One fuzz input through the ONNX importer and, when it is accepted and
 * small, through the engine's graph executor and the compiler: its graph
 * program must be valid (written and read back by libwsep, its graph built
 * by the engine) or refused with a message. What must hold is no crash, no
 * sanitizer report, and an error message for whatever is refused.
 * Shared by the seeded loop (onnx_fuzz_test.c) and libFuzzer
 * (onnx_libfuzzer.c).
 */
#ifndef ONNX_FUZZ_RUN_H
#define ONNX_FUZZ_RUN_H

#include <stdlib.h>

#include "wse/compiler_graph.h"
#include "wse/engine_graph.h"
#include "wse/engine_wsep.h"

/* Largest tensor the executor is run on, in elements. */
#define FUZZ_MAX_ELEMS 200000

enum fuzz_outcome { FUZZ_REFUSED_FILE, FUZZ_REFUSED_NODE, FUZZ_RAN, FUZZ_NOT_RUN, FUZZ_BAD };

/* The compiler on an accepted model: a valid program, or a refusal with a message. */
static inline enum fuzz_outcome onnx_fuzz_program(const void *data, size_t size)
{
	struct wsecc_graph_options o = { .batch = 2, .seed = 1,
					 .opt = { .kind = WSEP_OPT_SGD, .lr = 0.1 } };
	struct wsecc_graph_program *gp;
	struct wsecc_error err = { 0 };
	struct wsep_program *q;
	struct engine_graph *eg;
	struct wse_wafer w;
	char msg[256];
	void *bytes;
	size_t len;
	int bad;

	if (wse_wafer_parse("64x64", &w, msg, sizeof(msg)))
		return FUZZ_BAD;
	if (wsecc_graph_compile_buffer(data, size, "fuzz.onnx", &o, &w, &gp, &err))
		return err.msg[0] ? FUZZ_RAN : FUZZ_BAD;
	bad = wsep_write(gp->prog, &bytes, &len, msg, sizeof(msg)) ||
	      wsep_read(bytes, len, &q, msg, sizeof(msg));
	if (!bad) {
		bad = engine_graph_from_wsep(q, q->batch, &eg, msg, sizeof(msg));
		if (!bad)
			engine_graph_destroy(eg);
		wsep_program_free(q);
		free(bytes);
	}
	wsecc_graph_program_free(gp);
	return bad ? FUZZ_BAD : FUZZ_RAN;
}

static inline enum fuzz_outcome onnx_fuzz_run(const void *data, size_t size)
{
	struct wsecc_onnx_options opt = { .batch = 2 };
	struct wsecc_graph *g;
	struct engine_graph *eg = NULL;
	struct wsecc_error err = { 0 };
	enum fuzz_outcome out = FUZZ_NOT_RUN;
	int *ids, labels;

	if (wsecc_onnx_import_buffer(data, size, "fuzz.onnx", &opt, &g, &err))
		return err.msg[0] ? FUZZ_REFUSED_FILE : FUZZ_BAD;
	if (wsecc_graph_check(g, &err)) {
		wsecc_graph_free(g);
		return err.msg[0] ? FUZZ_REFUSED_NODE : FUZZ_BAD;
	}
	for (size_t t = 0; t < g->n_tensors; t++)
		if (wsecc_tensor_numel(&g->tensors[t]) > FUZZ_MAX_ELEMS) {
			wsecc_graph_free(g);
			return FUZZ_NOT_RUN;
		}
	ids = malloc(g->n_tensors * sizeof(int));
	if (ids && !engine_graph_create(&eg) &&
	    !wsecc_graph_to_engine(g, eg, ids, false, &labels, &err) &&
	    !engine_graph_prepare(eg, ENGINE_ADAM)) {
		/* Inputs as allocated (zero): token 0 is valid everywhere. */
		engine_graph_forward(eg, true, 1);
		out = FUZZ_RAN;
	}
	engine_graph_destroy(eg);
	free(ids);
	wsecc_graph_free(g);
	if (out == FUZZ_RAN)
		out = onnx_fuzz_program(data, size);
	return out;
}

#endif
