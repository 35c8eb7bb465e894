/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/onnx_write.h: trained weights written back into the ONNX model a
 * program was compiled from (wsetrain --export; Documentation/onnx-import.rst,
 * "Weights back to the model").
 *
 * The model's bytes are kept as they are but for the weights: an
 * initializer's raw_data (or packed float_data) is overwritten in place,
 * so the file keeps its size and every other byte. A parameter that is an
 * Identity copy of an initializer (PyTorch's exporter merges equal
 * initializers that way; the copies train apart) becomes an initializer of
 * its own under the copy's name: the Identity node is dropped and the
 * initializer appended to the graph, whose length prefix is all else that
 * changes.
 */
#ifndef WSE_ONNX_WRITE_H
#define WSE_ONNX_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "wse/compiler.h"
#include "wse/wsep.h"

/* One parameter's trained values: @elems floats shaped @rank x @dims. */
struct wsecc_onnx_weight {
	const char *name;		/* an initializer, or the output of an Identity copying one */
	const float *data;
	uint64_t elems;
	uint32_t rank;
	uint64_t dims[WSEP_GRAPH_MAX_RANK];
};

/* What the rewrite did, for the tool's message. */
struct wsecc_onnx_write_summary {
	size_t in_place;		/* initializers overwritten where they lie */
	size_t copies;			/* Identity copies made initializers */
	size_t tied;			/* copies or transposes of a parameter given its values */
};

/**
 * wsecc_onnx_write_weights() - @onnx (@len bytes, named @file in
 * messages) with @n parameters' values replaced by name
 *
 * Every parameter must name a float initializer of its shape, or the
 * output of an Identity of one; anything else (a name the model does not
 * have, another shape or type, data outside the file) is refused naming
 * the parameter, as is a model that does not parse. An initializer no
 * parameter names that is bit for bit a copy or the transpose of one that
 * a parameter names (a tied weight, which wsecc trained as that one) gets
 * that parameter's values, transposed where it was the transpose.
 * Return: 0 with *@out (free()) and *@out_len, or -1 with @err.
 */
int wsecc_onnx_write_weights(const void *onnx, size_t len, const char *file,
			     const struct wsecc_onnx_weight *w, size_t n, void **out,
			     size_t *out_len, struct wsecc_onnx_write_summary *summary,
			     struct wsecc_error *err);

#endif /* WSE_ONNX_WRITE_H */
