// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trained weights written back into an ONNX model (wse/onnx_write.h).
 *
 * protobuf-c parses the model, as for the import: that says what each
 * initializer and node is. Repacking the parsed model would re-encode
 * every byte of it, so the file is edited instead: a walk over the
 * protobuf wire format (tags and lengths only, no decoding) finds where
 * the graph, its nodes and each initializer's data lie, in the order
 * protobuf-c lists them, and the new values go exactly there. Only an
 * Identity copy made an initializer changes the file's layout (the node
 * dropped, the initializer appended to the graph, the graph's length).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_onnx_internal.h"
#include "wse/onnx_write.h"

/* Field numbers of onnx.proto. */
#define MODEL_GRAPH		7
#define GRAPH_NODE		1
#define GRAPH_INITIALIZER	5
#define TENSOR_DIMS		1
#define TENSOR_DATA_TYPE	2
#define TENSOR_FLOAT_DATA	4
#define TENSOR_NAME		8
#define TENSOR_RAW_DATA		9

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct pb_field {
	uint32_t num, wire;
	size_t start, data, end;	/* where its tag, its payload and the next field start */
	uint64_t v;			/* a varint's value */
};

static int pb_varint(const uint8_t *b, size_t *pos, size_t end, uint64_t *v)
{
	*v = 0;
	for (unsigned int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (*pos >= end)
			return -EINVAL;
		c = b[(*pos)++];
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -EINVAL;
}

/* The field at @pos of a message ending at @end: 1, 0 at the end, -EINVAL malformed. */
static int pb_next(const uint8_t *b, size_t pos, size_t end, struct pb_field *f)
{
	uint64_t key, n;

	if (pos >= end)
		return 0;
	f->start = pos;
	if (pb_varint(b, &pos, end, &key) || key >> 32 || !(key >> 3))
		return -EINVAL;
	f->num = (uint32_t)(key >> 3);
	f->wire = (uint32_t)(key & 7);
	f->data = pos;
	switch (f->wire) {
	case WT_VARINT:
		if (pb_varint(b, &pos, end, &f->v))
			return -EINVAL;
		break;
	case WT_I64:
	case WT_I32:
		n = f->wire == WT_I64 ? 8 : 4;
		if (end - pos < n)
			return -EINVAL;
		pos += n;
		break;
	case WT_LEN:
		if (pb_varint(b, &pos, end, &n) || n > end - pos)
			return -EINVAL;
		f->data = pos;
		pos += n;
		break;
	default:
		return -EINVAL;	/* groups: not in onnx.proto */
	}
	f->end = pos;
	return 1;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static void put_floats(uint8_t *p, const float *x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint32_t u;

		memcpy(&u, &x[i], 4);
		for (int k = 0; k < 4; k++)
			*p++ = (uint8_t)(u >> (8 * k));
	}
}

/* Where the wire walk found things: the graph, and its nodes and initializers in order. */
struct span {
	size_t start, end;
};

struct init_data {
	size_t data, len;		/* its float bytes: raw_data or packed float_data */
	bool unusable;			/* float_data unpacked or in pieces, or both kinds */
};

struct layout {
	struct pb_field graph;
	size_t n_nodes, n_inits;
	struct span *nodes;
	struct init_data *inits;
};

static int locate_init(const uint8_t *b, const struct pb_field *init, struct init_data *d)
{
	struct pb_field f;
	size_t pos = init->data;
	int parts = 0, r;

	memset(d, 0, sizeof(*d));
	while ((r = pb_next(b, pos, init->end, &f)) > 0) {
		pos = f.end;
		if ((f.num == TENSOR_RAW_DATA && f.wire == WT_LEN) ||
		    (f.num == TENSOR_FLOAT_DATA && f.wire == WT_LEN)) {
			d->data = f.data;
			d->len = f.end - f.data;
			parts++;
		} else if (f.num == TENSOR_FLOAT_DATA || f.num == TENSOR_RAW_DATA) {
			d->unusable = true;
		}
	}
	if (parts > 1)
		d->unusable = true;
	return r;
}

static int locate(const uint8_t *b, size_t len, struct layout *l)
{
	struct pb_field f;
	size_t pos = 0, graphs = 0;
	int r;

	while ((r = pb_next(b, pos, len, &f)) > 0) {
		pos = f.end;
		if (f.num == MODEL_GRAPH && f.wire == WT_LEN) {
			l->graph = f;
			graphs++;
		}
	}
	if (r < 0 || graphs != 1)
		return -EINVAL;
	for (int pass = 0; pass < 2; pass++) {
		l->n_nodes = l->n_inits = 0;
		for (pos = l->graph.data; (r = pb_next(b, pos, l->graph.end, &f)) > 0; pos = f.end) {
			if (f.wire != WT_LEN)
				continue;
			if (f.num == GRAPH_NODE) {
				if (pass)
					l->nodes[l->n_nodes] = (struct span){ f.start, f.end };
				l->n_nodes++;
			} else if (f.num == GRAPH_INITIALIZER) {
				if (pass && locate_init(b, &f, &l->inits[l->n_inits]) < 0)
					return -EINVAL;
				l->n_inits++;
			}
		}
		if (r < 0)
			return -EINVAL;
		if (!pass) {
			l->nodes = calloc(l->n_nodes + 1, sizeof(*l->nodes));
			l->inits = calloc(l->n_inits + 1, sizeof(*l->inits));
			if (!l->nodes || !l->inits)
				return -EINVAL;
		}
	}
	return 0;
}

static bool same_shape(const Onnx__TensorProto *tp, const struct wsecc_onnx_weight *w)
{
	if (tp->n_dims != w->rank)
		return false;
	for (size_t d = 0; d < tp->n_dims; d++)
		if (tp->dims[d] < 0 || (uint64_t)tp->dims[d] != w->dims[d])
			return false;
	return true;
}

static int find_init(const Onnx__GraphProto *gp, const char *name)
{
	for (size_t k = 0; k < gp->n_initializer; k++)
		if (gp->initializer[k]->name && !strcmp(gp->initializer[k]->name, name))
			return (int)k;
	return -1;
}

/* The Identity node whose output is @name and whose input an initializer, or -1. */
static int find_copy(const Onnx__GraphProto *gp, const char *name, int *source)
{
	for (size_t k = 0; k < gp->n_node; k++) {
		const Onnx__NodeProto *n = gp->node[k];

		if (n->op_type && !strcmp(n->op_type, "Identity") && n->n_output == 1 &&
		    n->output[0] && !strcmp(n->output[0], name) && n->n_input == 1 &&
		    n->input[0] && (*source = find_init(gp, n->input[0])) >= 0)
			return (int)k;
	}
	return -1;
}

/* Float @k of an initializer's data at @d in @b (little-endian), as bits. */
static uint32_t bits_at(const uint8_t *b, const struct init_data *d, uint64_t k)
{
	const uint8_t *p = b + d->data + 4 * k;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Is initializer @c of the model as read (@b) bit for bit a copy (1) or
 * the transpose (2) of initializer @k, and not all one value? The
 * importer's rule for tied weights (compiler_onnx_tie.c).
 */
static int tied_copy(const Onnx__GraphProto *gp, const struct layout *l, const uint8_t *b,
		     size_t k, size_t c)
{
	const Onnx__TensorProto *tk = gp->initializer[k], *tc = gp->initializer[c];
	const struct init_data *dk = &l->inits[k], *dc = &l->inits[c];
	uint64_t n = dk->len / 4, rows, cols;
	bool varies = false, copy, transpose;

	if (tc->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || dc->unusable ||
	    dc->len != dk->len || n < 2 || tc->n_external_data ||
	    tc->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return 0;
	for (uint64_t i = 1; i < n && !varies; i++)
		varies = bits_at(b, dk, i) != bits_at(b, dk, 0);
	if (!varies)
		return 0;
	copy = tk->n_dims == tc->n_dims &&
	       !memcmp(tk->dims, tc->dims, tk->n_dims * sizeof(tk->dims[0])) &&
	       !memcmp(b + dk->data, b + dc->data, dk->len);
	if (copy)
		return 1;
	if (tk->n_dims != 2 || tc->n_dims != 2 || tk->dims[0] != tc->dims[1] ||
	    tk->dims[1] != tc->dims[0])
		return 0;
	rows = (uint64_t)tk->dims[0];
	cols = (uint64_t)tk->dims[1];
	transpose = true;
	for (uint64_t i = 0; i < rows && transpose; i++)
		for (uint64_t j = 0; j < cols && transpose; j++)
			transpose = bits_at(b, dk, i * cols + j) == bits_at(b, dc, j * rows + i);
	return transpose ? 2 : 0;
}

/*
 * The copies wsecc tied to parameter @w (initializer @k) get its trained
 * values too, transposed where they were the transpose, so that the model
 * computes with the one weight it trained. @given: the initializers
 * named by a parameter.
 */
static size_t write_tied(const Onnx__GraphProto *gp, const struct layout *l, const uint8_t *orig,
			 uint8_t *b, size_t k, const struct wsecc_onnx_weight *w, const bool *given)
{
	size_t tied = 0;

	for (size_t c = 0; c < gp->n_initializer; c++) {
		int how = c == k || given[c] ? 0 : tied_copy(gp, l, orig, k, c);

		if (how == 1) {
			put_floats(b + l->inits[c].data, w->data, w->elems);
		} else if (how == 2) {
			uint64_t rows = w->dims[0], cols = w->dims[1];

			for (uint64_t i = 0; i < rows; i++)
				for (uint64_t j = 0; j < cols; j++)
					put_floats(b + l->inits[c].data + 4 * (j * rows + i),
						   w->data + i * cols + j, 1);
		}
		tied += how != 0;
	}
	return tied;
}

static void shape_text(const struct wsecc_onnx_weight *w, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (uint32_t d = 0; d < w->rank && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%s%llu", d ? "x" : "",
				       (unsigned long long)w->dims[d]);
}

/* A float initializer of @w's shape whose data lies where it can be overwritten. */
static int check_init(const Onnx__TensorProto *tp, const struct init_data *d,
		      const struct wsecc_onnx_weight *w, const char *file, struct wsecc_error *err)
{
	char shape[96];

	shape_text(w, shape, sizeof(shape));
	if (tp->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || !same_shape(tp, w))
		return wsecc_fail(err, file, 0, 0,
				  "parameter '%.100s' is %s floats in the checkpoint, not so in the model: is this the model the program was compiled from?",
				  w->name, shape);
	if (tp->n_external_data || tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return wsecc_fail(err, file, 0, 0,
				  "initializer '%.100s' keeps its data in an external file, which --export does not rewrite",
				  w->name);
	if (d->unusable || d->len != w->elems * 4)
		return wsecc_fail(err, file, 0, 0,
				  "initializer '%.100s' holds its data in a form --export does not rewrite (only raw_data or packed float_data)",
				  w->name);
	return 0;
}

/* A TensorProto initializer: dims, FLOAT, name, raw_data. */
static size_t tensor_size(const struct wsecc_onnx_weight *w)
{
	size_t n = strlen(w->name), bytes = w->elems * 4, size = 0;

	for (uint32_t d = 0; d < w->rank; d++)
		size += 1 + varint_len(w->dims[d]);
	return size + 2 + 1 + varint_len(n) + n + 1 + varint_len(bytes) + bytes;
}

static uint8_t *put_tensor(uint8_t *p, const struct wsecc_onnx_weight *w)
{
	size_t n = strlen(w->name);

	*p++ = GRAPH_INITIALIZER << 3 | WT_LEN;
	p = put_varint(p, tensor_size(w));
	for (uint32_t d = 0; d < w->rank; d++) {
		*p++ = TENSOR_DIMS << 3 | WT_VARINT;
		p = put_varint(p, w->dims[d]);
	}
	*p++ = TENSOR_DATA_TYPE << 3 | WT_VARINT;
	*p++ = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	*p++ = TENSOR_NAME << 3 | WT_LEN;
	p = put_varint(p, n);
	memcpy(p, w->name, n);
	p += n;
	*p++ = TENSOR_RAW_DATA << 3 | WT_LEN;
	p = put_varint(p, w->elems * 4);
	put_floats(p, w->data, w->elems);
	return p + w->elems * 4;
}

/* The graph again, without the dropped nodes and with the copies appended. */
static int rebuild(const uint8_t *b, size_t len, const struct layout *l, const bool *dropped,
		   const struct wsecc_onnx_weight *w, const int *copy_of, size_t n, uint8_t **out,
		   size_t *out_len)
{
	size_t graph = l->graph.end - l->graph.data, total;
	uint8_t *o, *p;

	for (size_t k = 0; k < l->n_nodes; k++)
		if (dropped[k])
			graph -= l->nodes[k].end - l->nodes[k].start;
	for (size_t i = 0; i < n; i++)
		if (copy_of[i] >= 0)
			graph += 1 + varint_len(tensor_size(&w[i])) + tensor_size(&w[i]);
	total = l->graph.start + 1 + varint_len(graph) + graph + (len - l->graph.end);
	o = p = malloc(total);
	if (!o)
		return -EINVAL;
	memcpy(p, b, l->graph.start);
	p += l->graph.start;
	*p++ = MODEL_GRAPH << 3 | WT_LEN;
	p = put_varint(p, graph);
	for (size_t at = l->graph.data, k = 0; at < l->graph.end;) {
		size_t next = k < l->n_nodes ? l->nodes[k].start : l->graph.end;

		memcpy(p, b + at, next - at);
		p += next - at;
		at = next;
		if (k < l->n_nodes) {
			if (!dropped[k]) {
				memcpy(p, b + l->nodes[k].start, l->nodes[k].end - l->nodes[k].start);
				p += l->nodes[k].end - l->nodes[k].start;
			}
			at = l->nodes[k].end;
			k++;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (copy_of[i] >= 0)
			p = put_tensor(p, &w[i]);
	memcpy(p, b + l->graph.end, len - l->graph.end);
	p += len - l->graph.end;
	*out = o;
	*out_len = (size_t)(p - o);
	return *out_len == total ? 0 : -1;
}

int wsecc_onnx_write_weights(const void *onnx, size_t len, const char *file,
			     const struct wsecc_onnx_weight *w, size_t n, void **out,
			     size_t *out_len, struct wsecc_onnx_write_summary *summary,
			     struct wsecc_error *err)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, onnx);
	const Onnx__GraphProto *gp;
	struct layout l = { 0 };
	uint8_t *b = NULL, *o = NULL;
	bool *dropped = NULL, *given = NULL;
	int *copy_of = NULL, ret = -1;
	size_t olen = 0;

	*out = NULL;
	*out_len = 0;
	memset(summary, 0, sizeof(*summary));
	if (!m)
		return wsecc_fail(err, file, 0, 0,
				  "not an ONNX model: the protobuf does not parse (truncated or corrupted file)");
	gp = m->graph;
	b = malloc(len ? len : 1);
	copy_of = calloc(n + 1, sizeof(*copy_of));
	if (!b || !copy_of || !gp) {
		wsecc_fail(err, file, 0, 0, gp ? "out of memory" : "the model has no graph");
		goto done;
	}
	memcpy(b, onnx, len);
	if (locate(b, len, &l) || l.n_nodes != gp->n_node || l.n_inits != gp->n_initializer) {
		wsecc_fail(err, file, 0, 0,
			   "the model's graph is written in a way --export does not rewrite (in several parts, or not as protobuf-c reads it)");
		goto done;
	}
	dropped = calloc(l.n_nodes + 1, sizeof(*dropped));
	given = calloc(l.n_inits + 1, sizeof(*given));
	if (!dropped || !given) {
		wsecc_fail(err, file, 0, 0, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		int k = find_init(gp, w[i].name), source = -1, node;

		copy_of[i] = -1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(w[j].name, w[i].name)) {
				wsecc_fail(err, file, 0, 0, "parameter '%.100s' is given twice", w[i].name);
				goto done;
			}
		if (k >= 0) {
			if (check_init(gp->initializer[k], &l.inits[k], &w[i], file, err))
				goto done;
			put_floats(b + l.inits[k].data, w[i].data, w[i].elems);
			summary->in_place++;
			continue;
		}
		node = find_copy(gp, w[i].name, &source);
		if (node < 0) {
			wsecc_fail(err, file, 0, 0,
				   "parameter '%.100s' is neither an initializer of the model nor an Identity copy of one: is this the model the program was compiled from?",
				   w[i].name);
			goto done;
		}
		if (check_init(gp->initializer[source], &l.inits[source], &w[i], file, err))
			goto done;
		dropped[node] = true;
		copy_of[i] = source;
		summary->copies++;
	}
	for (size_t i = 0; i < n; i++) {
		int k = find_init(gp, w[i].name);

		if (k >= 0)
			given[k] = true;
	}
	for (size_t i = 0; i < n; i++) {
		int k = find_init(gp, w[i].name);

		if (k >= 0)
			summary->tied += write_tied(gp, &l, onnx, b, (size_t)k, &w[i], given);
	}
	if (!summary->copies) {
		o = b;
		olen = len;
		b = NULL;
	} else if (rebuild(b, len, &l, dropped, w, copy_of, n, &o, &olen)) {
		wsecc_fail(err, file, 0, 0, "out of memory");
		goto done;
	}
	/* What is written must parse as the model did. */
	onnx__model_proto__free_unpacked(m, NULL);
	m = onnx__model_proto__unpack(NULL, olen, o);
	if (!m || !m->graph || m->graph->n_initializer != l.n_inits + summary->copies ||
	    m->graph->n_node != l.n_nodes - summary->copies) {
		wsecc_fail(err, file, 0, 0, "internal error: the rewritten model does not parse");
		goto done;
	}
	*out = o;
	*out_len = olen;
	o = NULL;
	ret = 0;
done:
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	free(o);
	free(b);
	free(dropped);
	free(given);
	free(copy_of);
	free(l.nodes);
	free(l.inits);
	return ret;
}
