// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where (ONNX Where, torch.where): y = cond ? a : b element by element,
 * the three broadcast numpy's way. The condition is data (a constant
 * mask, 1 or 0 as floats) and gets no gradient; a's gradient is dy where
 * the condition holds and b's where it does not, each summed over the
 * dimensions its operand was broadcast along.
 */
#include <errno.h>
#include <string.h>

#include "wse/engine.h"
#include "wse/engine_ops.h"

/* Operand @k's shape right-aligned to y's: its stride per y dimension, 0 where broadcast. */
static int strides(const struct engine_where *p, size_t k, size_t *st)
{
	size_t rank = p->rank[k], s = 1;

	if (rank > p->y_rank)
		return -EINVAL;
	for (size_t i = p->y_rank; i-- > 0;) {
		size_t d = i < p->y_rank - rank ? 1 : p->dims[k][i - (p->y_rank - rank)];

		if (d != p->y_dims[i] && d != 1)
			return -EINVAL;
		st[i] = d == 1 ? 0 : s;
		s *= d;
	}
	return 0;
}

int engine_where_setup(struct engine_where *p)
{
	size_t st[ENGINE_MAX_RANK];

	if (!p || !p->y_rank || p->y_rank > ENGINE_MAX_RANK || !engine_numel(p->y_dims, p->y_rank))
		return -EINVAL;
	for (size_t k = 0; k < 3; k++)
		if (strides(p, k, st))
			return -EINVAL;
	return 0;
}

/* Calls @fn for each element of y with its offsets in cond, a and b. */
#define FOR_EACH_Y(p, body)								\
	do {										\
		size_t cs[ENGINE_MAX_RANK], as[ENGINE_MAX_RANK], bs[ENGINE_MAX_RANK];	\
		size_t idx[ENGINE_MAX_RANK] = { 0 }, oc = 0, oa = 0, ob = 0;		\
		size_t n = engine_numel((p)->y_dims, (p)->y_rank);			\
											\
		if (strides(p, 0, cs) || strides(p, 1, as) || strides(p, 2, bs))	\
			return -EINVAL;							\
		for (size_t o = 0; o < n; o++) {					\
			body;								\
			for (size_t d = (p)->y_rank; d-- > 0;) {			\
				if (++idx[d] < (p)->y_dims[d]) {			\
					oc += cs[d];					\
					oa += as[d];					\
					ob += bs[d];					\
					break;						\
				}							\
				oc -= (idx[d] - 1) * cs[d];				\
				oa -= (idx[d] - 1) * as[d];				\
				ob -= (idx[d] - 1) * bs[d];				\
				idx[d] = 0;						\
			}								\
		}									\
	} while (0)

int engine_where_forward(const struct engine_where *p, const float *cond, const float *a,
			 const float *b, float *y)
{
	if (!p || !cond || !a || !b || !y)
		return -EINVAL;
	FOR_EACH_Y(p, y[o] = cond[oc] != 0.0f ? a[oa] : b[ob]);
	return 0;
}

int engine_where_backward(const struct engine_where *p, const float *cond, const float *dy,
			  float *da, float *db)
{
	if (!p || !cond || !dy)
		return -EINVAL;
	if (da)
		memset(da, 0, engine_numel(p->dims[1], p->rank[1]) * sizeof(float));
	if (db)
		memset(db, 0, engine_numel(p->dims[2], p->rank[2]) * sizeof(float));
	FOR_EACH_Y(p, {
		if (cond[oc] != 0.0f) {
			if (da)
				da[oa] += dy[o];
		} else if (db) {
			db[ob] += dy[o];
		}
	});
	return 0;
}
