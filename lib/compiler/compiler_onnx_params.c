// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which initializers an ONNX model trains, beyond the export helper's
 * list (compiler_onnx_param_names.c): the user's --freeze patterns, and
 * the warnings that a parameter will not train as it does in PyTorch:
 * parameters of the model that an eval-mode export folded away
 * (BatchNorm into its Conv). Tied weights are compiler_onnx_tie.c's.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_onnx_internal.h"

bool onnx_frozen(const struct octx *c, const char *name)
{
	for (size_t k = 0; c->opt && k < c->opt->n_freeze; k++)
		if (!fnmatch(c->opt->freeze[k], name, 0))
			return true;
	return false;
}

int onnx_freeze_check(struct octx *c)
{
	const struct wsecc_graph *g = c->g;

	for (size_t k = 0; c->opt && k < c->opt->n_freeze; k++) {
		bool hit = false;

		for (size_t t = 0; t < g->n_tensors && !hit; t++)
			hit = g->tensors[t].initializer && !fnmatch(c->opt->freeze[k], g->tensors[t].name, 0);
		if (!hit)
			return wsecc_fail(c->err, g->file, 0, 0,
					  "--freeze '%s' matches no initializer of the model (wsecc --validate-only MODEL lists the parameters)",
					  c->opt->freeze[k]);
	}
	return 0;
}

int onnx_note(struct wsecc_graph *g, const char *fmt, ...)
{
	size_t have = g->notes ? strlen(g->notes) : 0;
	va_list ap;
	char *n;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	n = realloc(g->notes, have + (size_t)len + 2);
	if (!n)
		return -ENOMEM;
	g->notes = n;
	va_start(ap, fmt);
	vsnprintf(n + have, (size_t)len + 1, fmt, ap);
	va_end(ap);
	memcpy(n + have + len, "\n", 2);
	return 0;
}

const char *onnx_shape_text(const struct wsecc_tensor *t, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "[");

	for (unsigned d = 0; d < t->rank && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%s%lld", d ? "x" : "",
				       (long long)t->dims[d]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
	return buf;
}

/* The model's "wse.eval_removed" metadata (models/wse_export.py), or NULL. */
static const char *eval_removed(const Onnx__ModelProto *m)
{
	for (size_t k = 0; k < m->n_metadata_props; k++)
		if (m->metadata_props[k]->key && m->metadata_props[k]->value &&
		    !strcmp(m->metadata_props[k]->key, "wse.eval_removed"))
			return m->metadata_props[k]->value;
	return NULL;
}

/*
 * Eval-mode export: torch.onnx.export's default removes Dropout and folds
 * BatchNorm into the Conv before it, so the Conv reads new initializers
 * that are not the model's parameters. What the graph cannot say, the
 * export helper does: "wse.eval_removed" names the modules whose ops are
 * gone; and a listed parameter the graph lacks shows the folding too.
 */
static int note_eval_export(struct octx *c, const Onnx__ModelProto *m)
{
	struct wsecc_graph *g = c->g;
	const char *removed = eval_removed(m);
	bool missing = false;

	for (const char *line = removed; line && *line;) {
		size_t len = strcspn(line, "\t\n"), end = strcspn(line, "\n");
		const char *kind = line[len] == '\t' ? line + len + 1 : "";
		int klen = (int)(end - (size_t)(kind - line));

		bool bn = klen > 0 && memmem(kind, (size_t)klen, "BatchNorm", 9);

		if (kind[0] && onnx_note(g, "warning: module '%.*s' (%.*s) is not in the graph: an eval-mode export %s",
				    (int)len, line, klen, kind,
				    bn ? "folded it into the Conv before it" : "removed it"))
			return -EINVAL;
		line += end + (line[end] == '\n');
	}
	for (size_t k = 0; k < c->n_trainable; k++) {
		if (wsecc_graph_find(g, c->trainable[k]) >= 0)
			continue;
		missing = true;
		if (onnx_note(g, "warning: parameter '%s' of the PyTorch model is not in the graph", c->trainable[k]))
			return -EINVAL;
	}
	if (!missing && !(removed && removed[0]))
		return 0;
	for (size_t i = 0; onnx_trainable_listed(c) && i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state != WSECC_NODE_KERNEL)
			continue;
		for (size_t k = 0; k < n->n_in; k++) {
			const struct wsecc_tensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;

			if (t && t->initializer && t->kind == WSECC_T_CONST && t->dtype == WSECC_DT_F32 &&
			    !t->frozen && !onnx_trainable(c, t->name) &&
			    onnx_note(g, "warning: node '%s' (%s) reads '%s', which is not a parameter of the PyTorch model: it stays constant",
				 n->name, n->op_type, t->name))
				return -EINVAL;
		}
	}
	return onnx_note(g, "warning: to train this model as PyTorch does, export it in training mode: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)");
}

/* What --freeze kept constant, for the compile's output. */
static int note_frozen(struct wsecc_graph *g)
{
	char s[48];

	for (size_t t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].frozen &&
		    onnx_note(g, "note: '%s' %s is frozen by --freeze: a constant of the program, not trained",
			 g->tensors[t].name, onnx_shape_text(&g->tensors[t], s, sizeof(s))))
			return -EINVAL;
	return 0;
}

int onnx_params_review(struct octx *c, const Onnx__ModelProto *m)
{
	c->g->trainable_listed = onnx_trainable_listed(c);
	if (note_frozen(c->g) || onnx_tie_weights(c) || note_eval_export(c, m))
		return wsecc_fail(c->err, c->g->file, 0, 0, "out of memory");
	return 0;
}

void wsecc_graph_list_params(FILE *f, const struct wsecc_graph *g)
{
	size_t n = 0, frozen = 0;
	uint64_t values = 0;
	char s[48];

	for (size_t t = 0; t < g->n_tensors; t++) {
		n += g->tensors[t].kind == WSECC_T_PARAM;
		values += g->tensors[t].kind == WSECC_T_PARAM ? wsecc_tensor_numel(&g->tensors[t]) : 0;
		frozen += g->tensors[t].frozen;
	}
	fprintf(f, "parameters: %zu trained (%llu values), %zu frozen by --freeze; %s\n", n,
		(unsigned long long)values, frozen,
		g->trainable_listed ? "the model lists its parameters (wse.parameters)" :
		"no wse.parameters list: every fp32 initializer a kernel reads trains");
	for (size_t t = 0; t < g->n_tensors; t++) {
		const struct wsecc_tensor *x = &g->tensors[t];

		if (x->kind == WSECC_T_PARAM || x->frozen)
			fprintf(f, "  %-7s %-40s %s\n", x->kind == WSECC_T_PARAM ? "train" : "frozen",
				x->name, onnx_shape_text(x, s, sizeof(s)));
	}
}
