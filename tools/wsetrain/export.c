// SPDX-License-Identifier: GPL-2.0-only
/*
 * --export: a checkpoint's weights written into the ONNX model its program
 * was compiled from, by the parameters' names (the checkpoint carries
 * them, from the program's param_names). The model is an argument rather
 * than a part of the program or the checkpoint: it holds a copy of every
 * weight, and the user has it anyway (they compiled it). That it is the
 * same model is checked by name, type and shape of every parameter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "train.h"
#include "wse/compiler_graph.h"
#include "wse/onnx_write.h"
#include "wse/outfile.h"

static void *read_model(const char *path, size_t *len)
{
	struct stat st;
	void *buf = NULL;
	FILE *f = fopen(path, "rb");

	if (!f) {
		train_fail("--export: cannot open the model %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size > WSECC_ONNX_MAX_BYTES) {
		train_fail("--export: the model %s is not a regular file of at most 2 GiB", path);
	} else if (!(buf = malloc(st.st_size ? (size_t)st.st_size : 1)) ||
		   fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		train_fail("--export: cannot read the model %s", path);
		free(buf);
		buf = NULL;
	} else {
		*len = (size_t)st.st_size;
	}
	fclose(f);
	return buf;
}

int train_export(const struct train_opts *o)
{
	struct wsecc_onnx_write_summary sum;
	struct wsecc_onnx_weight *w = NULL;
	struct train_checkpoint c;
	struct wsecc_error err;
	char msg[512];
	void *model = NULL, *out = NULL;
	size_t len = 0, out_len = 0;
	int ret = -1;

	if (train_checkpoint_load(o->export_ckpt, &c, msg, sizeof(msg)))
		return train_fail("--export: %s", msg);
	if (!c.num_names) {
		train_fail("--export: %s names no parameters: it was written from a program compiled before programs carried names (.wsep format 1.1); compile the model with this wsecc, train, and export that checkpoint",
			   o->export_ckpt);
		goto done;
	}
	model = read_model(o->model, &len);
	w = calloc(c.num_names, sizeof(*w));
	if (!model || !w) {
		if (model)
			train_fail("out of memory");
		goto done;
	}
	for (uint32_t i = 0; i < c.num_names; i++) {
		const struct wsep_param_name *e = &c.names[i];

		w[i] = (struct wsecc_onnx_weight){ .name = e->name, .data = c.weights + e->offset,
						   .elems = e->elems, .rank = e->rank };
		memcpy(w[i].dims, e->dims, sizeof(w[i].dims));
	}
	if (wsecc_onnx_write_weights(model, len, o->model, w, c.num_names, &out, &out_len, &sum,
				     &err)) {
		wsecc_error_format(&err, msg, sizeof(msg));
		train_fail("--export: %s", msg);
		goto done;
	}
	/* Replaced whole if a regular file, written through if a device or FIFO. */
	if (wse_out_write_file(o->output, 0, out, out_len, msg, sizeof(msg))) {
		train_fail("--export: %s", msg);
		goto done;
	}
	printf("wrote %s: the %u parameters (%llu floats) of %s at step %llu into %s; %zu initializers rewritten in place%s",
	       o->output, c.num_names, (unsigned long long)c.floats, o->export_ckpt,
	       (unsigned long long)c.step, o->model, sum.in_place,
	       sum.copies ? ", " : "\n");
	if (sum.copies)
		printf("%zu Identity copies made initializers of their own (they trained apart)\n",
		       sum.copies);
	if (sum.tied)
		printf("%zu tied copies of a parameter (written twice by the exporter) given its trained values\n",
		       sum.tied);
	ret = 0;
done:
	free(out);
	free(w);
	free(model);
	train_checkpoint_free(&c);
	return ret;
}
