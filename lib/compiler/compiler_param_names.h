/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parameters' names a program carries (compiler_param_names.c); not public. */
#ifndef WSECC_PARAM_NAMES_H
#define WSECC_PARAM_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "wse/compiler.h"
#include "wse/compiler_graph.h"
#include "wse/wsep.h"

/* @e's place and shape: @elems follows from @dims. */
void wsecc_param_set_shape(struct wsep_param_name *e, uint64_t offset, uint32_t rank,
			   const uint64_t *dims);

/* A layer program's W and b, named as torch_mlp.py's nn.Sequential names them. */
int wsecc_layer_param_names(struct wsep_program *p);

/*
 * A graph program's PARAM values named from the imported graph @ir
 * (@ids: per IR tensor its engine value; @order: per program value its
 * engine value), their state_dict names from the ONNX model's metadata
 * (@onnx, @onnx_len: the file's bytes; NULL: read @file). 0, or -1 with @err.
 */
int wsecc_graph_param_names(struct wsep_program *p, const struct wsecc_graph *ir, const int *ids,
			    const int32_t *order, const void *onnx, size_t onnx_len,
			    const char *file, struct wsecc_error *err);

#endif
