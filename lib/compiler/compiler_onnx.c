// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ONNX import: protobuf-c parses the file (onnx.proto from Debian's
 * libonnx-dev, compiled at build time); this file turns the model into the
 * graph IR. It reads initializers and inputs, binds a symbolic batch
 * dimension, then walks the nodes in order: a node whose inputs are all
 * constant is folded (the shape arithmetic exporters write), any other is
 * given its output shapes and mapped to a kernel or refused
 * (compiler_onnx_ops.c). Patterns are fused last (compiler_fuse.c).
 *
 * The file is untrusted: every name, shape, size and type is checked
 * before use, and a problem is reported naming the node or tensor.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler_onnx_internal.h"

#define MAX_DIM		(1LL << 31)	/* largest single dimension accepted */
#define MAX_ELEMS	(1ULL << 32)	/* largest tensor accepted, in elements */

/* --- attributes ------------------------------------------------------------------ */

const Onnx__AttributeProto *onnx_attr(const struct octx *c, size_t i, const char *name)
{
	const Onnx__NodeProto *p = c->proto[i];

	for (size_t k = 0; k < p->n_attribute; k++)
		if (p->attribute[k]->name && strcmp(p->attribute[k]->name, name) == 0)
			return p->attribute[k];
	return NULL;
}

int onnx_attrs_known(struct octx *c, size_t i, const char *const *known)
{
	const Onnx__NodeProto *p = c->proto[i];

	for (size_t k = 0; k < p->n_attribute; k++) {
		const char *name = p->attribute[k]->name ? p->attribute[k]->name : "";
		bool ok = false;

		for (size_t j = 0; known && known[j]; j++)
			ok |= strcmp(known[j], name) == 0;
		if (!ok) {
			wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "attribute '%s' is not supported", name);
			return 1;
		}
	}
	return 0;
}

static int wrong_type(struct octx *c, size_t i, const char *name, const char *want)
{
	wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "attribute '%s' must be %s", name, want);
	return 1;
}

int onnx_attr_int(struct octx *c, size_t i, const char *name, int64_t def, int64_t *v)
{
	const Onnx__AttributeProto *a = onnx_attr(c, i, name);

	*v = def;
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
		return wrong_type(c, i, name, "an int");
	*v = a->i;
	return 0;
}

int onnx_attr_float(struct octx *c, size_t i, const char *name, float def, float *v)
{
	const Onnx__AttributeProto *a = onnx_attr(c, i, name);

	*v = def;
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
		return wrong_type(c, i, name, "a float");
	*v = a->f;
	return 0;
}

int onnx_attr_ints(struct octx *c, size_t i, const char *name, int64_t *v, size_t max, size_t *n)
{
	const Onnx__AttributeProto *a = onnx_attr(c, i, name);

	*n = 0;
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
		return wrong_type(c, i, name, "a list of ints");
	if (a->n_ints > max) {
		wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "attribute '%s' has %zu values, at most %zu are supported",
			     name, a->n_ints, max);
		return 1;
	}
	memcpy(v, a->ints, a->n_ints * sizeof(*v));
	*n = a->n_ints;
	return 0;
}

int onnx_attr_string(struct octx *c, size_t i, const char *name, char *buf, size_t len)
{
	const Onnx__AttributeProto *a = onnx_attr(c, i, name);

	buf[0] = '\0';
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
		return wrong_type(c, i, name, "a string");
	if (a->s.len >= len || memchr(a->s.data, '\0', a->s.len))
		return wrong_type(c, i, name, "a short string");
	memcpy(buf, a->s.data, a->s.len);
	buf[a->s.len] = '\0';
	return 0;
}

/* --- tensors ---------------------------------------------------------------------- */

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			return false;
	return true;
}

/* A TensorProto's type and shape into @t; its values are another step. */
static int tensor_shape(struct wsecc_error *err, const char *file, const Onnx__TensorProto *tp,
			struct wsecc_tensor *t, const char *what)
{
	uint64_t n = 1;
	int dt = tp->has_data_type ? tp->data_type : 0;

	if (tp->n_dims > WSECC_MAX_RANK)
		return wsecc_fail(err, file, 0, 0, "%s: rank %zu, at most %d is supported", what,
				  tp->n_dims, WSECC_MAX_RANK);
	for (size_t k = 0; k < tp->n_dims; k++) {
		if (tp->dims[k] < 0 || tp->dims[k] > MAX_DIM)
			return wsecc_fail(err, file, 0, 0, "%s: dimension %zu is %lld", what, k,
					  (long long)tp->dims[k]);
		n *= (uint64_t)tp->dims[k];
		if (n > MAX_ELEMS)
			return wsecc_fail(err, file, 0, 0, "%s: more than %llu elements", what,
					  (unsigned long long)MAX_ELEMS);
	}
	t->dtype = (enum wsecc_dtype)dt;
	t->rank = (unsigned)tp->n_dims;
	for (size_t k = 0; k < tp->n_dims; k++)
		t->dims[k] = tp->dims[k];
	t->shape_known = true;
	/* int32 constants are kept widened to int64. */
	if (dt == WSECC_DT_I32)
		t->dtype = WSECC_DT_I64;
	return 0;
}

static bool is_external(const Onnx__TensorProto *tp)
{
	return tp->has_data_location &&
	       tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* Whether @tp holds values at all (a shapes-only export's weights hold none). */
static bool has_values(const Onnx__TensorProto *tp)
{
	return is_external(tp) || tp->has_raw_data || tp->n_float_data || tp->n_int64_data ||
	       tp->n_int32_data || tp->n_double_data || tp->n_uint64_data || tp->n_string_data;
}

/* Whether @tp's embedded values are @n elements (checked without reading them). */
static bool embedded_count_ok(const Onnx__TensorProto *tp, uint64_t n, size_t esz)
{
	int dt = tp->has_data_type ? tp->data_type : 0;

	if (tp->has_raw_data)
		return tp->raw_data.len == n * (dt == WSECC_DT_I32 ? 4 : esz);
	switch (dt) {
	case WSECC_DT_F32:
		return tp->n_float_data == n;
	case WSECC_DT_I64:
		return tp->n_int64_data == n;
	case WSECC_DT_I32:
	case WSECC_DT_BOOL:
	case WSECC_DT_U8:
		return tp->n_int32_data == n;
	}
	return true;
}

/* The values of @tp held in the model file itself into @t (shape set). */
static int tensor_embedded(struct wsecc_error *err, const char *file,
			   const Onnx__TensorProto *tp, struct wsecc_tensor *t, const char *what)
{
	uint64_t n = wsecc_tensor_numel(t);
	size_t esz = wsecc_dtype_size(t->dtype);
	int dt = tp->has_data_type ? tp->data_type : 0;

	if (!esz)
		return 0;	/* a type whose data is not kept: nodes using it are refused */
	/* Empty tensors are read (nodes that get them are refused). */
	t->data = malloc(n ? n * esz : 1);
	if (!t->data)
		return wsecc_fail(err, file, 0, 0, "%s: out of memory", what);
	if (tp->has_raw_data) {
		size_t raw_esz = dt == WSECC_DT_I32 ? 4 : esz;

		if (tp->raw_data.len != n * raw_esz)
			return wsecc_fail(err, file, 0, 0,
					  "%s: raw data of %zu bytes for %llu elements of %s",
					  what, tp->raw_data.len, (unsigned long long)n,
					  wsecc_dtype_name((enum wsecc_dtype)dt));
		if (dt == WSECC_DT_I32) {
			for (uint64_t k = 0; k < n; k++) {
				int32_t v;

				memcpy(&v, tp->raw_data.data + 4 * k, 4);
				((int64_t *)t->data)[k] = v;
			}
		} else if (n) {
			/* Little-endian on the wire, as on x86-64. */
			memcpy(t->data, tp->raw_data.data, n * esz);
		}
		return 0;
	}
	switch (dt) {
	case WSECC_DT_F32:
		if (tp->n_float_data != n)
			break;
		if (n)
			memcpy(t->data, tp->float_data, n * sizeof(float));
		return 0;
	case WSECC_DT_I64:
		if (tp->n_int64_data != n)
			break;
		if (n)
			memcpy(t->data, tp->int64_data, n * sizeof(int64_t));
		return 0;
	case WSECC_DT_I32:
	case WSECC_DT_BOOL:
	case WSECC_DT_U8:
		if (tp->n_int32_data != n)
			break;
		for (uint64_t k = 0; k < n; k++) {
			if (dt == WSECC_DT_I32)
				((int64_t *)t->data)[k] = tp->int32_data[k];
			else
				((uint8_t *)t->data)[k] = (uint8_t)tp->int32_data[k];
		}
		return 0;
	}
	return wsecc_fail(err, file, 0, 0, "%s: its data does not hold %llu elements of %s", what,
			  (unsigned long long)n, wsecc_dtype_name((enum wsecc_dtype)dt));
}

int onnx_tensor_into(struct wsecc_error *err, const char *file, const Onnx__TensorProto *tp,
		     struct wsecc_tensor *t, const char *what)
{
	if (tensor_shape(err, file, tp, t, what))
		return -EINVAL;
	if (is_external(tp))
		return wsecc_fail(err, file, 0, 0,
				  "%s: its data is in an external file, which only initializers may use",
				  what);
	return tensor_embedded(err, file, tp, t, what);
}

int onnx_tensor_load(struct octx *c, int i, const char *why)
{
	struct wsecc_tensor *t = &c->g->tensors[i];
	const Onnx__TensorProto *tp = t->source;
	char what[WSECC_MSG_MAX / 2];
	int rc;

	if (!tp)
		return 0;
	t->source = NULL;
	snprintf(what, sizeof(what), "initializer '%.200s'", t->name);
	if (!wsecc_dtype_size(t->dtype))
		return 0;
	if (!has_values(tp) && wsecc_tensor_numel(t))
		return wsecc_fail(c->err, c->g->file, 0, 0,
				  "%s has no values (a shapes-only export?), and %s needs them: compile it with --no-weights, for an estimate",
				  what, why);
	rc = is_external(tp) ? onnx_external_values(c, tp, t, what) :
			       tensor_embedded(c->err, c->g->file, tp, t, what);
	return rc ? -1 : 0;
}

int wsecc_onnx_read_tensor(const char *path, struct wsecc_tensor *t, struct wsecc_error *err)
{
	FILE *f = fopen(path, "rb");
	Onnx__TensorProto *tp;
	uint8_t *buf;
	long len;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!f)
		return wsecc_fail(err, path, 0, 0, "cannot open: %s", strerror(errno));
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    (unsigned long)len > WSECC_ONNX_MAX_BYTES) {
		fclose(f);
		return wsecc_fail(err, path, 0, 0, "cannot read (or larger than 2 GiB)");
	}
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return wsecc_fail(err, path, 0, 0, "cannot read");
	}
	fclose(f);
	tp = onnx__tensor_proto__unpack(NULL, (size_t)len, buf);
	free(buf);
	if (!tp)
		return wsecc_fail(err, path, 0, 0, "not a TensorProto (truncated or corrupted)");
	t->name = strdup(tp->name ? tp->name : "");
	t->kind = WSECC_T_CONST;
	t->producer = -1;
	rc = t->name ? onnx_tensor_into(err, path, tp, t, "tensor") : -1;
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (rc)
		wsecc_tensor_release(t);
	return rc;
}

/* --- the model ---------------------------------------------------------------------- */

static int add_initializers(struct octx *c, const Onnx__GraphProto *gp)
{
	struct wsecc_graph *g = c->g;
	char what[WSECC_MSG_MAX / 2];

	for (size_t k = 0; k < gp->n_initializer; k++) {
		const Onnx__TensorProto *tp = gp->initializer[k];
		const char *name = tp->name ? tp->name : "";
		int t;

		if (!name[0] || !printable(name))
			return wsecc_fail(c->err, g->file, 0, 0, "initializer %zu has no usable name", k);
		if (wsecc_graph_find(g, name) >= 0)
			return wsecc_fail(c->err, g->file, 0, 0, "initializer '%s' is defined twice", name);
		t = wsecc_graph_add_tensor(g, name, WSECC_DT_UNDEFINED, WSECC_T_CONST);
		if (t < 0)
			return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
		snprintf(what, sizeof(what), "initializer '%.200s'", name);
		if (tensor_shape(c->err, g->file, tp, &g->tensors[t], what))
			return -EINVAL;
		if (!is_external(tp) && has_values(tp) && wsecc_dtype_size(g->tensors[t].dtype) &&
		    !embedded_count_ok(tp, wsecc_tensor_numel(&g->tensors[t]),
				       wsecc_dtype_size(g->tensors[t].dtype)))
			return wsecc_fail(c->err, g->file, 0, 0,
					  "%s: its data does not hold %llu elements of %s", what,
					  (unsigned long long)wsecc_tensor_numel(&g->tensors[t]),
					  wsecc_dtype_name((enum wsecc_dtype)tp->data_type));
		/* Its values are read when something needs them (onnx_tensor_load()). */
		g->tensors[t].source = tp;
		/* A buffer the export helper did not list as a parameter stays constant. */
		g->tensors[t].initializer = true;
		g->tensors[t].frozen = onnx_frozen(c, name);
		g->tensors[t].from_initializer = onnx_trainable(c, name);
	}
	return 0;
}

static const struct wsecc_bind *find_bind(const struct octx *c, const char *name)
{
	for (size_t k = 0; c->opt && k < c->opt->n_binds; k++)
		if (strcmp(c->opt->binds[k].name, name) == 0)
			return &c->opt->binds[k];
	return NULL;
}

static int add_input(struct octx *c, const Onnx__ValueInfoProto *vi)
{
	struct wsecc_graph *g = c->g;
	const char *name = vi->name ? vi->name : "";
	const struct wsecc_bind *b;
	const Onnx__TypeProto__Tensor *tt;
	int t;

	if (!name[0] || !printable(name))
		return wsecc_fail(c->err, g->file, 0, 0, "a graph input has no usable name");
	if (wsecc_graph_find(g, name) >= 0)
		return 0;	/* an initializer listed as an input too (IR < 4) */
	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type)
		return wsecc_fail(c->err, g->file, 0, 0, "graph input '%s' is not a tensor", name);
	tt = vi->type->tensor_type;
	b = find_bind(c, name);
	t = wsecc_graph_add_tensor(g, name, (enum wsecc_dtype)tt->elem_type,
				   b ? WSECC_T_CONST : WSECC_T_INPUT);
	if (t < 0)
		return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
	if (b) {
		struct wsecc_tensor *bt = &g->tensors[t];
		size_t bytes;

		bt->dtype = b->dtype;
		wsecc_tensor_set_shape(bt, b->rank, b->dims);
		bytes = wsecc_tensor_numel(bt) * wsecc_dtype_size(b->dtype);
		bt->data = malloc(bytes ? bytes : 1);
		if (!bt->data)
			return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
		if (bytes)
			memcpy(bt->data, b->data, bytes);
		return 0;
	}
	if (g->n_inputs < sizeof(g->inputs) / sizeof(g->inputs[0]))
		g->inputs[g->n_inputs++] = t;
	else
		return wsecc_fail(c->err, g->file, 0, 0, "more than %zu graph inputs",
				  sizeof(g->inputs) / sizeof(g->inputs[0]));
	if (!tt->shape || tt->shape->n_dim > WSECC_MAX_RANK)
		return 0;	/* unknown shape: its consumers are refused */
	int64_t dims[WSECC_MAX_RANK];

	for (size_t k = 0; k < tt->shape->n_dim; k++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];

		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value > 0 && d->dim_value <= MAX_DIM)
			dims[k] = d->dim_value;
		else if (k == 0)
			dims[k] = g->batch;	/* a symbolic (or missing) batch dimension */
		else
			return 0;	/* dynamic: refused where used */
	}
	wsecc_tensor_set_shape(&g->tensors[t], (unsigned)tt->shape->n_dim, dims);
	return 0;
}

/*
 * Reads the initializers node @i needs now: all of its inputs when it folds
 * (every input constant), else the small ones and every non-float one
 * (shapes, axes, indices, masks, ratios: what mapping it looks at). Large
 * float initializers (weights) wait for the end of the import.
 */
#define LOAD_AT_USE_ELEMS	16384

static int load_inputs(struct octx *c, size_t i)
{
	struct wsecc_graph *g = c->g;
	const struct wsecc_node *n = &g->nodes[i];
	bool folds = strcmp(n->op_type, "Shape") != 0;
	char why[WSECC_MSG_MAX / 2];

	for (size_t k = 0; k < n->n_in; k++)
		if (n->in[k] >= 0 && g->tensors[n->in[k]].kind != WSECC_T_CONST)
			folds = false;
	snprintf(why, sizeof(why), "node %.100s (%.40s)", n->name, n->op_type);
	for (size_t k = 0; k < n->n_in; k++) {
		const struct wsecc_tensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;

		if (!t || !t->source)
			continue;
		/*
		 * Shapes only: a kernel's float input stays unread if it has no
		 * values, or has them in a side file (which is never opened).
		 */
		if (!folds && t->dtype == WSECC_DT_F32 && c->opt && c->opt->no_weights &&
		    (!has_values(t->source) || is_external(t->source)))
			continue;
		if (folds || t->dtype != WSECC_DT_F32 || wsecc_tensor_numel(t) <= LOAD_AT_USE_ELEMS)
			if (onnx_tensor_load(c, n->in[k], why))
				return -EINVAL;
	}
	return 0;
}

/*
 * At the end of the import: the initializers that nodes still use are
 * read, but for the weights under --no-weights, which keep their shape
 * only. Whatever was not needed is never read.
 */
static int load_used(struct octx *c)
{
	struct wsecc_graph *g = c->g;
	bool no_weights = c->opt && c->opt->no_weights;

	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];
		char why[WSECC_MSG_MAX / 2];

		if (n->state == WSECC_NODE_FOLDED)
			continue;
		snprintf(why, sizeof(why), "node %.100s (%.40s)", n->name, n->op_type);
		for (size_t k = 0; k < n->n_in; k++) {
			struct wsecc_tensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;

			if (!t || !t->source)
				continue;
			if (no_weights && t->dtype == WSECC_DT_F32) {
				t->source = NULL;
				t->no_values = true;
			} else if (onnx_tensor_load(c, n->in[k], why)) {
				return -EINVAL;
			}
		}
	}
	for (size_t i = 0; i < g->n_outputs; i++)
		if (onnx_tensor_load(c, g->outputs[i], "a graph output"))
			return -EINVAL;
	/* The protobuf goes away with the import. */
	for (size_t t = 0; t < g->n_tensors; t++)
		g->tensors[t].source = NULL;
	return 0;
}

/*
 * Identity of an initializer not read yet (torch.onnx.export shares equal
 * weights this way) is the same initializer under another name: it stays
 * unread, and is read (once, into each name) only if it is needed.
 */
static bool alias_initializer(struct octx *c, size_t i)
{
	struct wsecc_graph *g = c->g;
	struct wsecc_node *n = &g->nodes[i];
	struct wsecc_tensor *x, *o;

	if (strcmp(n->op_type, "Identity") || n->n_in != 1 || n->n_out != 1 || n->in[0] < 0 ||
	    n->out[0] < 0)
		return false;
	x = &g->tensors[n->in[0]];
	if (!x->source && !x->no_values)
		return false;
	o = &g->tensors[n->out[0]];
	o->dtype = x->dtype;
	wsecc_tensor_set_shape(o, x->rank, x->dims);
	o->kind = WSECC_T_CONST;
	/* A parameter of its own (PyTorch's name is the copy's): listed and frozen by it. */
	o->initializer = true;
	o->frozen = onnx_frozen(c, o->name);
	o->from_initializer = x->dtype == WSECC_DT_F32 && onnx_trainable(c, o->name);
	o->source = x->source;
	o->no_values = x->no_values;
	n->state = WSECC_NODE_FOLDED;
	return true;
}

/* Why node @i cannot run because of its inputs, or 0. */
static int inputs_unusable(struct octx *c, size_t i)
{
	struct wsecc_graph *g = c->g;
	const struct wsecc_node *n = &g->nodes[i];

	for (size_t k = 0; k < n->n_in; k++) {
		const struct wsecc_tensor *t;

		if (n->in[k] < 0)
			continue;
		t = &g->tensors[n->in[k]];
		if (t->producer >= 0 && g->nodes[t->producer].state == WSECC_NODE_REFUSED) {
			wsecc_refuse(g, i, WSECC_WHY_INPUT, "input '%s' comes from refused node %s",
				     t->name, g->nodes[t->producer].name);
			return 1;
		}
		if (t->shape_known && !wsecc_tensor_numel(t)) {
			wsecc_refuse(g, i, WSECC_WHY_SHAPE, "input '%s' has no elements", t->name);
			return 1;
		}
		if (!t->shape_known) {
			wsecc_refuse(g, i, WSECC_WHY_SHAPE,
				     "input '%s' has a dynamic shape (only the first dimension of a graph input may be symbolic: it is the batch)",
				     t->name);
			return 1;
		}
	}
	return 0;
}

static int add_node(struct octx *c, const Onnx__NodeProto *p, size_t idx)
{
	struct wsecc_graph *g = c->g;
	char name[160], what[WSECC_MSG_MAX / 2];
	const char *op = p->op_type ? p->op_type : "";
	int n;

	if (!op[0] || !printable(op) || strlen(op) > 64)
		return wsecc_fail(c->err, g->file, 0, 0, "node %zu has no usable op type", idx);
	if (p->name && p->name[0] && printable(p->name))
		snprintf(name, sizeof(name), "%s", p->name);
	else
		snprintf(name, sizeof(name), "%s_%zu", op, idx);
	snprintf(what, sizeof(what), "node %s (%s)", name, op);
	n = wsecc_graph_add_node(g, name, op, p->n_input, p->n_output);
	if (n < 0)
		return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
	c->proto[n] = p;
	for (size_t k = 0; k < p->n_input; k++) {
		const char *in = p->input[k] ? p->input[k] : "";

		if (!in[0])
			continue;	/* an absent optional input */
		g->nodes[n].in[k] = wsecc_graph_find(g, in);
		if (g->nodes[n].in[k] < 0)
			return wsecc_fail(c->err, g->file, 0, 0,
					  "%s: input '%.100s' is not an initializer, a graph input or the output of an earlier node",
					  what, in);
	}
	for (size_t k = 0; k < p->n_output; k++) {
		const char *out = p->output[k] ? p->output[k] : "";
		int t;

		if (!out[0])
			continue;
		if (!printable(out) || wsecc_graph_find(g, out) >= 0)
			return wsecc_fail(c->err, g->file, 0, 0,
					  "%s: output '%.100s' is not a new tensor name", what, out);
		t = wsecc_graph_add_tensor(g, out, WSECC_DT_UNDEFINED, WSECC_T_VALUE);
		if (t < 0)
			return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
		g->tensors[t].producer = n;
		g->nodes[n].out[k] = t;
	}
	if (p->domain && p->domain[0] && strcmp(p->domain, "ai.onnx") != 0)
		return wsecc_refuse(g, (size_t)n, WSECC_WHY_OP, "op of domain '%.60s'", p->domain);
	if (inputs_unusable(c, (size_t)n) || alias_initializer(c, (size_t)n))
		return 0;
	if (load_inputs(c, (size_t)n))
		return -EINVAL;
	int folded = onnx_fold(c, (size_t)n);

	if (folded < 0)
		return -EINVAL;
	if (folded || g->nodes[n].state == WSECC_NODE_REFUSED)
		return 0;
	return onnx_infer(c, (size_t)n);
}

/*
 * fp32 data from the initializers that a kernel consumes is trained, but
 * for the rotary embedding's cos and sin tables: the op has no gradient
 * for them (they are register_buffer tables, sliced to the sequence).
 */
static void mark_params(struct wsecc_graph *g)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		if (n->state != WSECC_NODE_KERNEL)
			continue;
		for (size_t k = 0; k < n->n_in; k++) {
			struct wsecc_tensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;

			if (n->op == ENGINE_OP_ROTARY && k > 0)
				continue;
			if (t && t->kind == WSECC_T_CONST && t->from_initializer &&
			    t->dtype == WSECC_DT_F32 && (t->data || t->no_values))
				t->kind = WSECC_T_PARAM;
		}
	}
}

static int import_model(struct octx *c, const Onnx__ModelProto *m)
{
	struct wsecc_graph *g = c->g;
	const Onnx__GraphProto *gp = m->graph;
	bool have_opset = false;

	if (!gp)
		return wsecc_fail(c->err, g->file, 0, 0, "the model has no graph");
	for (size_t k = 0; k < m->n_opset_import; k++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[k];

		if (!o->domain || !o->domain[0] || strcmp(o->domain, "ai.onnx") == 0) {
			have_opset = true;
			g->opset = o->version;
		}
	}
	if (!have_opset)
		return wsecc_fail(c->err, g->file, 0, 0, "the model imports no ONNX opset");
	/* Opsets 11 and 12 import too where an op means what it means in 13
	 * (ONNX's own node tests of Conv and pooling are opset 11 and 12);
	 * the ops whose meaning changed at 13 are refused there.
	 */
	if (g->opset < 11)
		return wsecc_fail(c->err, g->file, 0, 0,
				  "opset %lld: wsecc imports opset 13 and later (torch.onnx.export(..., opset_version=13) or more)",
				  (long long)g->opset);
	snprintf(g->producer, sizeof(g->producer), "%.30s %.30s",
		 m->producer_name && printable(m->producer_name) ? m->producer_name : "?",
		 m->producer_version && printable(m->producer_version) ? m->producer_version : "");
	/* torch.onnx.export names every graph "torch_jit": the file's name says more. */
	if (gp->name && gp->name[0] && printable(gp->name) && strcmp(gp->name, "torch_jit"))
		snprintf(g->name, sizeof(g->name), "%s", gp->name);
	if (onnx_trainable_read(c, m))
		return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
	if (add_initializers(c, gp))
		return -EINVAL;
	for (size_t k = 0; k < gp->n_input; k++)
		if (add_input(c, gp->input[k]))
			return -EINVAL;
	c->proto = calloc(gp->n_node ? gp->n_node : 1, sizeof(*c->proto));
	if (!c->proto)
		return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
	c->n_proto = gp->n_node;
	if (onnx_uses_init(c, gp))
		return wsecc_fail(c->err, g->file, 0, 0, "out of memory");
	for (size_t k = 0; k < gp->n_node; k++) {
		if (add_node(c, gp->node[k], k))
			return -EINVAL;
		onnx_uses_done(c, g->n_nodes - 1);
	}
	for (size_t k = 0; k < gp->n_output; k++) {
		const char *name = gp->output[k]->name ? gp->output[k]->name : "";
		int t = wsecc_graph_find(g, name);

		if (t < 0)
			return wsecc_fail(c->err, g->file, 0, 0, "graph output '%.100s' is not computed",
					  name);
		if (g->n_outputs == sizeof(g->outputs) / sizeof(g->outputs[0]))
			return wsecc_fail(c->err, g->file, 0, 0, "too many graph outputs");
		g->outputs[g->n_outputs++] = t;
	}
	if (!gp->n_node)
		return wsecc_fail(c->err, g->file, 0, 0, "the graph has no nodes");
	if (load_used(c))
		return -EINVAL;
	wsecc_fuse(g);
	mark_params(g);
	if (onnx_freeze_check(c) || onnx_params_review(c, m))
		return -EINVAL;
	onnx_free_unread(c);
	return 0;
}

static void default_name(struct wsecc_graph *g, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	if (g->name[0])
		return;
	base = base ? base + 1 : path;
	n = strcspn(base, ".");
	if (n >= sizeof(g->name))
		n = sizeof(g->name) - 1;
	memcpy(g->name, base, n);
	g->name[n] = '\0';
}

int wsecc_onnx_import_buffer(const void *buf, size_t len, const char *name,
			     const struct wsecc_onnx_options *opt, struct wsecc_graph **out,
			     struct wsecc_error *err)
{
	struct octx c = { .opt = opt, .err = err };
	Onnx__ModelProto *m;
	int rc;

	*out = NULL;
	if (opt && opt->batch < 0)
		return wsecc_fail(err, name, 0, 0, "a negative batch");
	m = onnx__model_proto__unpack(NULL, len, buf);
	if (!m)
		return wsecc_fail(err, name, 0, 0,
				  "not an ONNX model: the protobuf does not parse (truncated or corrupted file)");
	c.g = wsecc_graph_new(name);
	if (!c.g) {
		onnx__model_proto__free_unpacked(m, NULL);
		return wsecc_fail(err, name, 0, 0, "out of memory");
	}
	c.g->batch = opt && opt->batch ? opt->batch : 1;
	c.g->opt.kind = WSEP_OPT_ADAM;
	c.g->opt.lr = 1e-3;
	c.g->opt.beta1 = 0.9;
	c.g->opt.beta2 = 0.999;
	c.g->opt.eps = 1e-8;
	c.g->seed = 1;
	rc = import_model(&c, m);
	onnx_uses_free(&c);
	free(c.proto);
	onnx_trainable_free(&c);
	onnx__model_proto__free_unpacked(m, NULL);
	if (rc) {
		wsecc_graph_free(c.g);
		return -EINVAL;
	}
	default_name(c.g, name);
	*out = c.g;
	return 0;
}

int wsecc_onnx_import(const char *path, const struct wsecc_onnx_options *opt,
		      struct wsecc_graph **out, struct wsecc_error *err)
{
	struct stat st;
	FILE *f;
	void *buf;
	int rc;

	*out = NULL;
	f = fopen(path, "rb");
	if (!f)
		return wsecc_fail(err, path, 0, 0, "cannot open: %s", strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return wsecc_fail(err, path, 0, 0, "not a regular file");
	}
	if ((unsigned long long)st.st_size > WSECC_ONNX_MAX_BYTES) {
		fclose(f);
		return wsecc_fail(err, path, 0, 0, "larger than 2 GiB, the protobuf limit");
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		fclose(f);
		return wsecc_fail(err, path, 0, 0, "cannot read");
	}
	fclose(f);
	rc = wsecc_onnx_import_buffer(buf, (size_t)st.st_size, path, opt, out, err);
	free(buf);
	return rc;
}
