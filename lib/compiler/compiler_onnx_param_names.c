// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph program's parameter names (compiler_param_names.h): each PARAM
 * value by its ONNX name (an initializer, or the output of the Identity
 * that copies one: PyTorch's exporter merges equal initializers that way,
 * and the copy is a parameter of its own), and by its PyTorch state_dict
 * name when the project's export helper (models/wse_export.py) recorded it
 * in the model's metadata_props "wse.parameters", one line per parameter:
 * "ONNX_NAME<TAB>STATE_DICT_NAME[<TAB>transposed]". The same list says
 * which initializers the importer may train (onnx_trainable()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_onnx_internal.h"
#include "compiler_param_names.h"

#define TORCH_NAMES_KEY "wse.parameters"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int onnx_trainable_read(struct octx *c, const Onnx__ModelProto *m)
{
	const char *meta = NULL;
	size_t n = 0;

	for (size_t k = 0; k < m->n_metadata_props && !meta; k++)
		if (m->metadata_props[k]->key && m->metadata_props[k]->value &&
		    !strcmp(m->metadata_props[k]->key, TORCH_NAMES_KEY))
			meta = m->metadata_props[k]->value;
	if (!meta)
		return 0;
	for (const char *p = meta; *p; p++)
		n += *p == '\n';
	c->trainable = calloc(n + 1, sizeof(*c->trainable));
	if (!c->trainable)
		return -EINVAL;
	for (const char *line = meta; *line;) {
		size_t len = strcspn(line, "\t\n");

		if (len && !(c->trainable[c->n_trainable++] = strndup(line, len)))
			return -EINVAL;
		line += strcspn(line, "\n");
		line += *line == '\n';
	}
	qsort(c->trainable, c->n_trainable, sizeof(*c->trainable), cmp_str);
	return 0;
}

bool onnx_trainable_listed(const struct octx *c)
{
	return c->trainable != NULL;
}

bool onnx_trainable(const struct octx *c, const char *name)
{
	return (!c->trainable ||
		bsearch(&name, c->trainable, c->n_trainable, sizeof(*c->trainable), cmp_str)) &&
	       !onnx_frozen(c, name);
}

void onnx_trainable_free(struct octx *c)
{
	for (size_t k = 0; k < c->n_trainable; k++)
		free(c->trainable[k]);
	free(c->trainable);
	c->trainable = NULL;
	c->n_trainable = 0;
}

/* The metadata's line for @name: its state_dict name and whether it is transposed. */
static void torch_name_of(const char *meta, const char *name, char *torch, size_t len,
			  uint32_t *flags)
{
	size_t n = strlen(name);

	torch[0] = '\0';
	*flags = 0;
	for (const char *line = meta, *end; *line; line = *end ? end + 1 : end) {
		const char *tn, *tab;
		size_t tl;

		end = line + strcspn(line, "\n");
		if ((size_t)(end - line) <= n || strncmp(line, name, n) || line[n] != '\t')
			continue;
		tn = line + n + 1;
		tab = memchr(tn, '\t', (size_t)(end - tn));
		tl = (size_t)((tab ? tab : end) - tn);
		if (!tl || tl >= len)
			return;
		memcpy(torch, tn, tl);
		torch[tl] = '\0';
		if (tab && (size_t)(end - tab - 1) == strlen("transposed") &&
		    !strncmp(tab + 1, "transposed", (size_t)(end - tab - 1)))
			*flags = WSEP_PARAM_TORCH_TRANSPOSED;
		return;
	}
}

/* The whole of @path (malloc()ed), or NULL. */
static void *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (unsigned long long)n <= WSECC_ONNX_MAX_BYTES && (buf = malloc(n ? (size_t)n : 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The model's "wse.parameters" metadata (malloc()ed), or NULL: of @buf, else of @path. */
static char *torch_metadata(const void *buf, size_t len, const char *path)
{
	void *own = buf ? NULL : read_whole(path, &len);
	Onnx__ModelProto *m = buf || own ? onnx__model_proto__unpack(NULL, len, buf ? buf : own) : NULL;
	char *meta = NULL;

	free(own);
	if (!m)
		return NULL;
	for (size_t k = 0; k < m->n_metadata_props && !meta; k++) {
		const Onnx__StringStringEntryProto *e = m->metadata_props[k];

		if (e->key && e->value && !strcmp(e->key, TORCH_NAMES_KEY))
			meta = strdup(e->value);
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return meta;
}

int wsecc_graph_param_names(struct wsep_program *p, const struct wsecc_graph *ir, const int *ids,
			    const int32_t *order, const void *onnx, size_t onnx_len,
			    const char *file, struct wsecc_error *err)
{
	const struct wsep_graph *g = p->graph;
	uint32_t n = 0, at = 0;
	char *meta, msg[256];

	for (uint32_t i = 0; i < g->num_values; i++)
		n += g->values[i].kind == WSEP_VAL_PARAM || g->values[i].kind == WSEP_VAL_STATE;
	if (!n)
		return 0;
	p->param_names = calloc(n, sizeof(*p->param_names));
	if (!p->param_names)
		return wsecc_fail(err, file, 0, 0, "out of memory");
	p->num_param_names = n;
	meta = torch_metadata(onnx, onnx_len, file);
	for (uint32_t i = 0; i < g->num_values; i++) {
		const struct wsep_graph_value *v = &g->values[i];
		struct wsep_param_name *e;
		const char *name = NULL;

		if (v->kind != WSEP_VAL_PARAM && v->kind != WSEP_VAL_STATE)
			continue;
		for (size_t t = 0; t < ir->n_tensors && !name; t++)
			if (ids[t] == order[i])
				name = ir->tensors[t].name;
		e = &p->param_names[at++];
		wsecc_param_set_shape(e, v->offset, v->rank, v->dims);
		if (!name || strlen(name) >= sizeof(e->name)) {
			free(meta);
			return wsecc_fail(err, file, 0, 0,
					  "parameter %u (%s%.60s): a parameter's name must be 1 to %u bytes long to be written into the program",
					  at - 1, name ? "" : "no name", name ? name : "",
					  WSEP_PARAM_NAME_MAX - 1);
		}
		memcpy(e->name, name, strlen(name) + 1);
		if (meta)
			torch_name_of(meta, name, e->torch_name, sizeof(e->torch_name), &e->flags);
		/*
		 * State (BatchNorm's running statistics) is a buffer, which the
		 * metadata does not list; the exporter keeps a buffer's
		 * state_dict name as its initializer's.
		 */
		if (meta && v->kind == WSEP_VAL_STATE && !e->torch_name[0])
			memcpy(e->torch_name, name, strlen(name) + 1);
	}
	free(meta);
	if (wsep_param_names_check(p, p->param_names, p->num_param_names, msg, sizeof(msg)))
		return wsecc_fail(err, file, 0, 0, "the model's \"%s\" metadata: %s",
				  TORCH_NAMES_KEY, msg);
	return 0;
}
