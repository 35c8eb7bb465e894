// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parameters' names a program carries (Documentation/wsep-format.rst,
 * "param_names"), so that trained weights can go back to the model (an
 * ONNX model's are named by compiler_onnx_param_names.c):
 *
 * - a graph program names each parameter by its ONNX name (an initializer,
 *   or the output of the Identity that copies one: PyTorch's exporter
 *   merges equal initializers that way, and the copy is a parameter of its
 *   own); its PyTorch state_dict name comes from the model's metadata when
 *   the project's export helper (models/wse_export.py) wrote it:
 *   metadata_props "wse.parameters", one line per parameter,
 *   "ONNX_NAME<TAB>STATE_DICT_NAME[<TAB>transposed]";
 * - a layer program (the text format) names layer K's W and b as the
 *   torch.nn.Sequential of Linear and ReLU modules that the project's
 *   PyTorch runs build from a model file (tools/bench-train/torch_mlp.py)
 *   does: "I.weight" and "I.bias", I the module's index.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_param_names.h"

void wsecc_param_set_shape(struct wsep_param_name *e, uint64_t offset, uint32_t rank,
			   const uint64_t *dims)
{
	e->offset = offset;
	e->rank = rank;
	e->elems = 1;
	for (uint32_t d = 0; d < rank; d++) {
		e->dims[d] = dims[d];
		e->elems *= dims[d];
	}
}

int wsecc_layer_param_names(struct wsep_program *p)
{
	uint32_t module = 0;

	p->param_names = calloc(2 * (size_t)p->num_layers, sizeof(*p->param_names));
	if (!p->param_names)
		return -ENOMEM;
	p->num_param_names = 2 * p->num_layers;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		const struct wsep_layer *l = &p->layers[k];
		struct wsep_param_name *w = &p->param_names[2 * k], *b = w + 1;
		uint64_t wd[2] = { l->out, l->in }, bd[1] = { l->out };

		wsecc_param_set_shape(w, l->weight_offset, 2, wd);
		wsecc_param_set_shape(b, l->weight_offset + w->elems, 1, bd);
		snprintf(w->name, sizeof(w->name), "%u.weight", module);
		snprintf(b->name, sizeof(b->name), "%u.bias", module);
		memcpy(w->torch_name, w->name, sizeof(w->name));
		memcpy(b->torch_name, b->name, sizeof(b->name));
		module += l->act == WSEP_ACT_RELU ? 2 : 1;
	}
	return 0;
}

