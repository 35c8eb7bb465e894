// SPDX-License-Identifier: GPL-2.0-only
/* 16-bit weights on the wire (fwd_wire16.h). */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_wire16.h"
#include "wse/engine_wsep.h"

#define CHUNK	1024	/* values converted at a time, through an aligned buffer */

/* Does the graph use value @v only as an input the engine rounds to 16 bits? */
static bool product_only(const struct wsep_graph *g, uint32_t v)
{
	bool used = false;

	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct wsep_graph_node *nd = &g->nodes[i];

		for (uint32_t j = 0; j < nd->n_in; j++) {
			if (nd->in[j] != (int32_t)v)
				continue;
			if (!((nd->op == WSEP_OP_CONV2D && j == 1) ||
			      ((nd->op == WSEP_OP_GEMM || nd->op == WSEP_OP_MATMUL) && j < 2)))
				return false;
			used = true;
		}
	}
	return used;
}

static int by_at(const void *a, const void *b)
{
	const struct fwd_wire16_run *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

static int add_run(struct fwd_wire16 *w, uint32_t *cap, uint64_t at, uint64_t n)
{
	if (w->nruns == *cap) {
		uint32_t more = *cap ? 2 * *cap : 8;
		struct fwd_wire16_run *r = realloc(w->runs, more * sizeof(*r));

		if (!r)
			return -ENOMEM;
		w->runs = r;
		*cap = more;
	}
	w->runs[w->nruns++] = (struct fwd_wire16_run){ at, n };
	return 0;
}

int fwd_wire16_layout(const struct wsep_program *p, uint32_t k, struct fwd_wire16 *w)
{
	const struct wsep_layer *l = &p->layers[k];
	uint32_t cap = 0, merged = 0;

	memset(w, 0, sizeof(*w));
	w->precision = engine_precision_from_wsep(p->precision);
	w->elems = wsep_layer_params(l);
	if (p->mode != WSEP_MODE_WEIGHT_STREAMING || w->precision == ENGINE_FP32)
		return 0;
	if (l->kind == WSEP_LAYER_DENSE)
		return add_run(w, &cap, 0, (uint64_t)l->in * l->out);
	if (l->kind != WSEP_LAYER_UNIT || !p->graph)
		return 0;
	for (uint32_t v = 0; v < p->graph->num_values; v++) {
		const struct wsep_graph_value *val = &p->graph->values[v];
		uint64_t n = 1;

		if (val->kind != WSEP_VAL_PARAM || val->offset < l->weight_offset ||
		    val->offset >= l->weight_offset + w->elems)
			continue;
		for (uint32_t d = 0; d < val->rank; d++)
			n *= val->dims[d];
		if (n && val->offset + n <= l->weight_offset + w->elems &&
		    product_only(p->graph, v) && add_run(w, &cap, val->offset - l->weight_offset, n)) {
			fwd_wire16_free(w);
			return -ENOMEM;
		}
	}
	if (!w->nruns)
		return 0;
	qsort(w->runs, w->nruns, sizeof(w->runs[0]), by_at);
	for (uint32_t i = 1; i < w->nruns; i++) {
		struct fwd_wire16_run *last = &w->runs[merged];

		if (w->runs[i].at <= last->at + last->n) {
			uint64_t end = w->runs[i].at + w->runs[i].n;

			if (end > last->at + last->n)
				last->n = end - last->at;
		} else {
			w->runs[++merged] = w->runs[i];
		}
	}
	w->nruns = merged + 1;
	return 0;
}

void fwd_wire16_free(struct fwd_wire16 *w)
{
	free(w->runs);
	memset(w, 0, sizeof(*w));
}

/*
 * Walks floats [e0, e1) in pieces of one kind: calls @fn for each with
 * whether it travels as 16 bits. Stops at the first nonzero return.
 */
static int walk(const struct fwd_wire16 *w, uint64_t e0, uint64_t e1,
		int (*fn)(void *ctx, uint64_t at, uint64_t n, bool half), void *ctx)
{
	uint64_t at = e0;
	int ret;

	for (uint32_t i = 0; i < w->nruns && at < e1; i++) {
		uint64_t rs = w->runs[i].at, re = rs + w->runs[i].n;

		if (re <= at)
			continue;
		if (rs > at) {
			ret = fn(ctx, at, (rs < e1 ? rs : e1) - at, false);
			if (ret)
				return ret;
			at = rs < e1 ? rs : e1;
		}
		if (at < e1) {
			ret = fn(ctx, at, (re < e1 ? re : e1) - at, true);
			if (ret)
				return ret;
			at = re < e1 ? re : e1;
		}
	}
	return at < e1 ? fn(ctx, at, e1 - at, false) : 0;
}

static int count(void *ctx, uint64_t at, uint64_t n, bool half)
{
	(void)at;
	*(uint64_t *)ctx += n * (half ? 2 : 4);
	return 0;
}

uint64_t fwd_wire16_bytes(const struct fwd_wire16 *w, uint64_t e0, uint64_t e1)
{
	uint64_t bytes = 0;

	walk(w, e0, e1, count, &bytes);
	return bytes;
}

struct pack_ctx {
	const struct fwd_wire16 *w;
	const float *src;
	uint8_t *dst;
};

static int pack(void *ctx, uint64_t at, uint64_t n, bool half)
{
	struct pack_ctx *c = ctx;
	uint16_t h[CHUNK];

	if (!half) {
		for (uint64_t i = 0; i < n; i++) {
			uint32_t u;

			memcpy(&u, &c->src[at + i], 4);
			u = htole32(u);
			memcpy(c->dst + 4 * i, &u, 4);
		}
		c->dst += 4 * n;
		return 0;
	}
	for (uint64_t i = 0; i < n; i += CHUNK) {
		size_t m = n - i < CHUNK ? n - i : CHUNK;

		if (c->w->precision == ENGINE_BF16)
			engine_f32_to_bf16(c->src + at + i, m, h);
		else
			engine_f32_to_f16(c->src + at + i, m, h);
		for (size_t j = 0; j < m; j++)
			h[j] = htole16(h[j]);
		memcpy(c->dst, h, 2 * m);
		c->dst += 2 * m;
	}
	return 0;
}

uint64_t fwd_wire16_pack(const struct fwd_wire16 *w, uint64_t e0, uint64_t e1, const float *src,
			 uint8_t *dst)
{
	struct pack_ctx c = { w, src, dst };

	walk(w, e0, e1, pack, &c);
	return (uint64_t)(c.dst - dst);
}

struct widen_ctx {
	const struct fwd_wire16 *w;
	const uint8_t *src;
	uint64_t left;		/* wire bytes not yet read */
	float *dst;
	uint64_t floats;
};

static int widen(void *ctx, uint64_t at, uint64_t n, bool half)
{
	struct widen_ctx *c = ctx;
	uint64_t size = half ? 2 : 4;
	uint16_t h[CHUNK];

	(void)at;
	if (!c->left)
		return 1;	/* the data ended here, on a whole value */
	if (c->left / size < n) {
		if (c->left % size)
			return -1;
		n = c->left / size;
	}
	if (!half) {
		for (uint64_t i = 0; i < n; i++) {
			uint32_t u;

			memcpy(&u, c->src + 4 * i, 4);
			u = le32toh(u);
			memcpy(&c->dst[c->floats + i], &u, 4);
		}
	} else {
		for (uint64_t i = 0; i < n; i += CHUNK) {
			size_t m = n - i < CHUNK ? n - i : CHUNK;

			memcpy(h, c->src + 2 * i, 2 * m);
			for (size_t j = 0; j < m; j++)
				h[j] = le16toh(h[j]);
			if (c->w->precision == ENGINE_BF16)
				engine_bf16_to_f32(h, m, c->dst + c->floats + i);
			else
				engine_f16_to_f32(h, m, c->dst + c->floats + i);
		}
	}
	c->src += n * size;
	c->left -= n * size;
	c->floats += n;
	return 0;
}

uint64_t fwd_wire16_widen(const struct fwd_wire16 *w, uint64_t e0, const uint8_t *src,
			  uint64_t len, float *dst)
{
	struct widen_ctx c = { w, src, len, dst, 0 };

	if (e0 >= w->elems || walk(w, e0, w->elems, widen, &c) < 0 || c.left)
		return 0;
	return c.floats;
}
