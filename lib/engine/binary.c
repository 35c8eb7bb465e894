// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Element-wise Add, Sub, Mul and Div with numpy (ONNX multidirectional)
 * broadcasting: both shapes are right-aligned, and a dimension of 1 repeats.
 * The loops run over y's rows (its last dimension innermost), with each
 * operand's stride 0 along a dimension it is broadcast along; the backward
 * pass sums a broadcast operand's gradient over those dimensions.
 */
#include <errno.h>
#include <string.h>

#include "wse/engine_ops.h"

int engine_binary_setup(struct engine_binary *p)
{
	size_t rank;

	if (!p || p->kind > ENGINE_BIN_DIV || p->a_rank > ENGINE_MAX_RANK ||
	    p->b_rank > ENGINE_MAX_RANK)
		return -EINVAL;
	if (!engine_numel(p->a_dims, p->a_rank) || !engine_numel(p->b_dims, p->b_rank))
		return -EINVAL;
	rank = p->a_rank > p->b_rank ? p->a_rank : p->b_rank;
	for (size_t i = 0; i < rank; i++) {
		size_t da = i < rank - p->a_rank ? 1 : p->a_dims[i - (rank - p->a_rank)];
		size_t db = i < rank - p->b_rank ? 1 : p->b_dims[i - (rank - p->b_rank)];

		if (da != db && da != 1 && db != 1)
			return -EINVAL;
		p->y_dims[i] = da > db ? da : db;
	}
	p->y_rank = rank;
	return 0;
}

/* y's shape with each operand's element strides (0 where it broadcasts). */
struct bcast {
	size_t rank, n, last;
	size_t dims[ENGINE_MAX_RANK];
	size_t as[ENGINE_MAX_RANK], bs[ENGINE_MAX_RANK];
};

static int check(const struct engine_binary *p, struct bcast *bc)
{
	struct engine_binary q;
	size_t sa = 1, sb = 1;

	if (!p)
		return -EINVAL;
	q = *p;
	if (engine_binary_setup(&q) || q.y_rank != p->y_rank ||
	    memcmp(q.y_dims, p->y_dims, q.y_rank * sizeof(size_t)))
		return -EINVAL;
	/* A scalar (rank 0) result is one element of rank 1. */
	bc->rank = p->y_rank ? p->y_rank : 1;
	bc->n = 1;
	for (size_t i = bc->rank; i-- > 0;) {
		size_t y = p->y_rank ? p->y_dims[i] : 1;
		size_t da = i < bc->rank - p->a_rank ? 1 : p->a_dims[i - (bc->rank - p->a_rank)];
		size_t db = i < bc->rank - p->b_rank ? 1 : p->b_dims[i - (bc->rank - p->b_rank)];

		bc->dims[i] = y;
		bc->as[i] = da == 1 ? 0 : sa;
		bc->bs[i] = db == 1 ? 0 : sb;
		sa *= da;
		sb *= db;
		bc->n *= y;
	}
	bc->last = bc->dims[bc->rank - 1];
	return 0;
}

/* Offsets of row @r (all dimensions but the last) in a and b. */
static void row_offsets(const struct bcast *bc, size_t r, size_t *ao, size_t *bo)
{
	*ao = 0;
	*bo = 0;
	for (size_t d = bc->rank - 1; d-- > 0;) {
		size_t idx = r % bc->dims[d];

		r /= bc->dims[d];
		*ao += idx * bc->as[d];
		*bo += idx * bc->bs[d];
	}
}

static float apply(enum engine_binary_kind kind, float a, float b)
{
	switch (kind) {
	case ENGINE_BIN_ADD:
		return a + b;
	case ENGINE_BIN_SUB:
		return a - b;
	case ENGINE_BIN_MUL:
		return a * b;
	default:
		return a / b;
	}
}

int engine_binary_forward(const struct engine_binary *p, const float *a, const float *b, float *y)
{
	struct bcast bc;
	int err = check(p, &bc);

	if (err)
		return err;
	if (!a || !b || !y)
		return -EINVAL;
	const size_t sa = bc.as[bc.rank - 1], sb = bc.bs[bc.rank - 1];

	for (size_t r = 0; r < bc.n / bc.last; r++) {
		size_t ao, bo;
		float *out = y + r * bc.last;

		row_offsets(&bc, r, &ao, &bo);
		const float *ra = a + ao, *rb = b + bo;

		switch (p->kind) {	/* hoisted so each loop vectorizes */
		case ENGINE_BIN_ADD:
			for (size_t j = 0; j < bc.last; j++)
				out[j] = ra[j * sa] + rb[j * sb];
			break;
		case ENGINE_BIN_SUB:
			for (size_t j = 0; j < bc.last; j++)
				out[j] = ra[j * sa] - rb[j * sb];
			break;
		case ENGINE_BIN_MUL:
			for (size_t j = 0; j < bc.last; j++)
				out[j] = ra[j * sa] * rb[j * sb];
			break;
		case ENGINE_BIN_DIV:
			for (size_t j = 0; j < bc.last; j++)
				out[j] = apply(ENGINE_BIN_DIV, ra[j * sa], rb[j * sb]);
			break;
		}
	}
	return 0;
}

int engine_binary_backward(const struct engine_binary *p, const float *a, const float *b,
			   const float *dy, float *da, float *db)
{
	struct bcast bc;
	int err = check(p, &bc);

	if (err)
		return err;
	if (!a || !b || !dy)
		return -EINVAL;
	const size_t sa = bc.as[bc.rank - 1], sb = bc.bs[bc.rank - 1];

	if (da)
		memset(da, 0, engine_numel(p->a_dims, p->a_rank) * sizeof(*da));
	if (db)
		memset(db, 0, engine_numel(p->b_dims, p->b_rank) * sizeof(*db));
	for (size_t r = 0; r < bc.n / bc.last; r++) {
		size_t ao, bo;
		const float *g = dy + r * bc.last;

		row_offsets(&bc, r, &ao, &bo);
		for (size_t j = 0; j < bc.last; j++) {
			float x = a[ao + j * sa], w = b[bo + j * sb];
			float ga, gb;

			switch (p->kind) {
			case ENGINE_BIN_ADD:
				ga = g[j];
				gb = g[j];
				break;
			case ENGINE_BIN_SUB:
				ga = g[j];
				gb = -g[j];
				break;
			case ENGINE_BIN_MUL:
				ga = g[j] * w;
				gb = g[j] * x;
				break;
			default:
				ga = g[j] / w;
				gb = -g[j] * x / (w * w);
				break;
			}
			if (da)
				da[ao + j * sa] += ga;
			if (db)
				db[bo + j * sb] += gb;
		}
	}
	return 0;
}
