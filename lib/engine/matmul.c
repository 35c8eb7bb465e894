// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Matrix products: ONNX Gemm (2-D, optional transposes, scaled bias that
 * broadcasts) and MatMul (numpy's matmul: batches of matrices whose batch
 * dimensions broadcast). Every product is one cblas_sgemm per matrix; a
 * batch of activations times one weight matrix, the common case of a
 * Linear layer on [batch, seq, features], is one sgemm for the whole batch.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "gemm.h"

#include "wse/engine_ops.h"

size_t engine_numel(const size_t *dims, size_t rank)
{
	size_t n = 1;

	for (size_t i = 0; i < rank; i++) {
		if (!dims[i] || n > SIZE_MAX / dims[i])
			return 0;
		n *= dims[i];
	}
	return n;
}

static bool too_big(size_t x)
{
	return x > INT_MAX;
}

static int gemm_check(const struct engine_gemm *p)
{
	if (!p || !p->m || !p->n || !p->k)
		return -EINVAL;
	if (too_big(p->m) || too_big(p->n) || too_big(p->k))
		return -EOVERFLOW;
	if ((p->c_rows != 1 && p->c_rows != p->m) || (p->c_cols != 1 && p->c_cols != p->n))
		return -EINVAL;
	return 0;
}

int engine_gemm_forward(const struct engine_gemm *p, const float *a, const float *b,
			const float *c, float *y)
{
	int err = gemm_check(p);

	if (err)
		return err;
	if (!a || !b || !y)
		return -EINVAL;
	const int m = (int)p->m, n = (int)p->n, k = (int)p->k;

	for (size_t i = 0; i < p->m; i++)
		for (size_t j = 0; j < p->n; j++)
			y[i * p->n + j] = c ? p->beta * c[(p->c_rows == 1 ? 0 : i) * p->c_cols +
							  (p->c_cols == 1 ? 0 : j)]
					    : 0.0f;
	SGEMM_OR_RETURN(engine_sgemm(p->trans_a ? true : false,
		    p->trans_b ? true : false, m, n, k, p->alpha, a,
		    p->trans_a ? m : k, b, p->trans_b ? k : n, 1.0f, y, n));
	return 0;
}

int engine_gemm_backward(const struct engine_gemm *p, const float *a, const float *b,
			 const float *dy, float *da, float *db, float *dc)
{
	int err = gemm_check(p);

	if (err)
		return err;
	if (!a || !b || !dy)
		return -EINVAL;
	const int m = (int)p->m, n = (int)p->n, k = (int)p->k;
	const int lda = p->trans_a ? m : k, ldb = p->trans_b ? k : n;

	if (da) {
		if (!p->trans_a)	/* dA[m][k] = alpha dY B'^T */
			SGEMM_OR_RETURN(engine_sgemm(false, p->trans_b ? false : true,
				    m, k, n, p->alpha, dy, n, b, ldb, 0.0f, da, k));
		else			/* dA[k][m] = alpha B' dY^T */
			SGEMM_OR_RETURN(engine_sgemm(p->trans_b ? true : false, true,
				    k, m, n, p->alpha, b, ldb, dy, n, 0.0f, da, m));
	}
	if (db) {
		if (!p->trans_b)	/* dB[k][n] = alpha A'^T dY */
			SGEMM_OR_RETURN(engine_sgemm(p->trans_a ? false : true, false,
				    k, n, m, p->alpha, a, lda, dy, n, 0.0f, db, n));
		else			/* dB[n][k] = alpha dY^T A' */
			SGEMM_OR_RETURN(engine_sgemm(true, p->trans_a ? true : false,
				    n, k, m, p->alpha, dy, n, a, lda, 0.0f, db, k));
	}
	if (dc) {
		memset(dc, 0, p->c_rows * p->c_cols * sizeof(*dc));
		for (size_t i = 0; i < p->m; i++)
			for (size_t j = 0; j < p->n; j++)
				dc[(p->c_rows == 1 ? 0 : i) * p->c_cols + (p->c_cols == 1 ? 0 : j)] +=
					p->beta * dy[i * p->n + j];
	}
	return 0;
}

/* --- MatMul ------------------------------------------------------------------ */

/* The batch dimensions of both operands, right-aligned to y's. */
struct batch_map {
	size_t rank, count;
	size_t dims[ENGINE_MAX_RANK];
	size_t a_stride[ENGINE_MAX_RANK], b_stride[ENGINE_MAX_RANK];	/* in matrices; 0 = broadcast */
	size_t a_count, b_count;	/* matrices in each operand */
};

int engine_matmul_setup(struct engine_matmul *p)
{
	size_t ab, bb, rank;

	if (!p || p->a_rank < 2 || p->b_rank < 2 || p->a_rank > ENGINE_MAX_RANK ||
	    p->b_rank > ENGINE_MAX_RANK)
		return -EINVAL;
	if (!engine_numel(p->a_dims, p->a_rank) || !engine_numel(p->b_dims, p->b_rank))
		return -EINVAL;
	if (p->a_dims[p->a_rank - 1] != p->b_dims[p->b_rank - 2])
		return -EINVAL;
	ab = p->a_rank - 2;
	bb = p->b_rank - 2;
	rank = ab > bb ? ab : bb;
	for (size_t i = 0; i < rank; i++) {
		size_t da = i < rank - ab ? 1 : p->a_dims[i - (rank - ab)];
		size_t db = i < rank - bb ? 1 : p->b_dims[i - (rank - bb)];

		if (da != db && da != 1 && db != 1)
			return -EINVAL;
		p->y_dims[i] = da > db ? da : db;
	}
	p->y_dims[rank] = p->a_dims[p->a_rank - 2];
	p->y_dims[rank + 1] = p->b_dims[p->b_rank - 1];
	p->y_rank = rank + 2;
	if (too_big(p->y_dims[rank]) || too_big(p->y_dims[rank + 1]) ||
	    too_big(p->a_dims[p->a_rank - 1]))
		return -EOVERFLOW;
	return 0;
}

static int matmul_check(const struct engine_matmul *p, struct batch_map *bm)
{
	struct engine_matmul q;
	size_t ab, bb, sa = 1, sb = 1;

	if (!p)
		return -EINVAL;
	q = *p;
	if (engine_matmul_setup(&q))
		return -EINVAL;
	if (q.y_rank != p->y_rank || memcmp(q.y_dims, p->y_dims, q.y_rank * sizeof(size_t)))
		return -EINVAL;
	ab = p->a_rank - 2;
	bb = p->b_rank - 2;
	bm->rank = p->y_rank - 2;
	bm->count = 1;
	for (size_t i = bm->rank; i-- > 0;) {
		size_t da = i < bm->rank - ab ? 1 : p->a_dims[i - (bm->rank - ab)];
		size_t db = i < bm->rank - bb ? 1 : p->b_dims[i - (bm->rank - bb)];

		bm->dims[i] = p->y_dims[i];
		bm->a_stride[i] = da == 1 ? 0 : sa;
		bm->b_stride[i] = db == 1 ? 0 : sb;
		sa *= da;
		sb *= db;
		bm->count *= p->y_dims[i];
	}
	bm->a_count = sa;
	bm->b_count = sb;
	return 0;
}

/* Matrix offsets (in matrices) of output batch @i in a and b. */
static void batch_offsets(const struct batch_map *bm, size_t i, size_t *ao, size_t *bo)
{
	*ao = 0;
	*bo = 0;
	for (size_t d = bm->rank; d-- > 0;) {
		size_t idx = i % bm->dims[d];

		i /= bm->dims[d];
		*ao += idx * bm->a_stride[d];
		*bo += idx * bm->b_stride[d];
	}
}

int engine_matmul_forward(const struct engine_matmul *p, const float *a, const float *b, float *y)
{
	struct batch_map bm;
	int err = matmul_check(p, &bm);

	if (err)
		return err;
	if (!a || !b || !y)
		return -EINVAL;
	const size_t m = p->a_dims[p->a_rank - 2], k = p->a_dims[p->a_rank - 1];
	const size_t n = p->b_dims[p->b_rank - 1];

	if (bm.b_count == 1 && bm.a_count == bm.count && bm.count * m <= INT_MAX) {
		/* One weight matrix for every row of every batch. */
		SGEMM_OR_RETURN(engine_sgemm(false, false, (int)(bm.count * m), (int)n,
			    (int)k, 1.0f, a, (int)k, b, (int)n, 0.0f, y, (int)n));
		return 0;
	}
	for (size_t i = 0; i < bm.count; i++) {
		size_t ao, bo;

		batch_offsets(&bm, i, &ao, &bo);
		SGEMM_OR_RETURN(engine_sgemm(false, false, (int)m, (int)n, (int)k, 1.0f,
			    a + ao * m * k, (int)k, b + bo * k * n, (int)n, 0.0f, y + i * m * n,
			    (int)n));
	}
	return 0;
}

int engine_matmul_backward(const struct engine_matmul *p, const float *a, const float *b,
			   const float *dy, float *da, float *db)
{
	struct batch_map bm;
	int err = matmul_check(p, &bm);

	if (err)
		return err;
	if (!a || !b || !dy)
		return -EINVAL;
	const size_t m = p->a_dims[p->a_rank - 2], k = p->a_dims[p->a_rank - 1];
	const size_t n = p->b_dims[p->b_rank - 1];

	if (bm.b_count == 1 && bm.a_count == bm.count && bm.count * m <= INT_MAX) {
		const int rows = (int)(bm.count * m);

		if (da)		/* dA = dY B^T */
			SGEMM_OR_RETURN(engine_sgemm(false, true, rows, (int)k, (int)n,
				    1.0f, dy, (int)n, b, (int)n, 0.0f, da, (int)k));
		if (db)		/* dB = A^T dY, summed over every row */
			SGEMM_OR_RETURN(engine_sgemm(true, false, (int)k, (int)n, rows,
				    1.0f, a, (int)k, dy, (int)n, 0.0f, db, (int)n));
		return 0;
	}
	/* An operand broadcast over some batch dimensions sums its gradient
	 * over them: start from zero and accumulate.
	 */
	if (da && bm.a_count != bm.count)
		memset(da, 0, bm.a_count * m * k * sizeof(*da));
	if (db && bm.b_count != bm.count)
		memset(db, 0, bm.b_count * k * n * sizeof(*db));
	for (size_t i = 0; i < bm.count; i++) {
		size_t ao, bo;
		const float *g = dy + i * m * n;

		batch_offsets(&bm, i, &ao, &bo);
		if (da)
			SGEMM_OR_RETURN(engine_sgemm(false, true, (int)m, (int)k, (int)n,
				    1.0f, g, (int)n, b + bo * k * n, (int)n,
				    bm.a_count != bm.count ? 1.0f : 0.0f, da + ao * m * k, (int)k));
		if (db)
			SGEMM_OR_RETURN(engine_sgemm(true, false, (int)k, (int)n, (int)m,
				    1.0f, a + ao * m * k, (int)k, g, (int)n,
				    bm.b_count != bm.count ? 1.0f : 0.0f, db + bo * k * n, (int)n));
	}
	return 0;
}
