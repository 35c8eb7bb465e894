// SPDX-License-Identifier: LGPL-2.1-or-later
/* Data movement: transposes of any rank, split, concatenation and slices. */
#include <errno.h>
#include <string.h>

#include "wse/engine_ops.h"

int engine_transpose(const float *x, const size_t *dims, size_t rank, const size_t *perm,
		     float *y)
{
	size_t xs[ENGINE_MAX_RANK], ys_dims[ENGINE_MAX_RANK], src_stride[ENGINE_MAX_RANK];
	size_t idx[ENGINE_MAX_RANK] = { 0 }, n, seen = 0;

	if (!x || !dims || !perm || !y || !rank || rank > ENGINE_MAX_RANK)
		return -EINVAL;
	for (size_t i = 0; i < rank; i++) {
		if (perm[i] >= rank || (seen & (1u << perm[i])))
			return -EINVAL;
		seen |= 1u << perm[i];
	}
	n = engine_numel(dims, rank);
	if (!n)
		return -EINVAL;
	xs[rank - 1] = 1;
	for (size_t i = rank - 1; i-- > 0;)
		xs[i] = xs[i + 1] * dims[i + 1];
	for (size_t i = 0; i < rank; i++) {
		ys_dims[i] = dims[perm[i]];
		src_stride[i] = xs[perm[i]];
	}
	/* Walk y in order with a counter over its dimensions. */
	size_t src = 0;

	for (size_t o = 0; o < n; o++) {
		y[o] = x[src];
		for (size_t d = rank; d-- > 0;) {
			if (++idx[d] < ys_dims[d]) {
				src += src_stride[d];
				break;
			}
			src -= (ys_dims[d] - 1) * src_stride[d];
			idx[d] = 0;
		}
	}
	return 0;
}

int engine_split(const float *x, size_t outer, size_t inner, const size_t *sizes, size_t parts,
		 float *const *ys)
{
	size_t total = 0;

	if (!x || !sizes || !ys || !outer || !inner || !parts)
		return -EINVAL;
	for (size_t p = 0; p < parts; p++) {
		if (!sizes[p])
			return -EINVAL;
		total += sizes[p];
	}
	for (size_t o = 0; o < outer; o++) {
		size_t at = 0;

		for (size_t p = 0; p < parts; p++) {
			if (ys[p])
				memcpy(ys[p] + o * sizes[p] * inner, x + (o * total + at) * inner,
				       sizes[p] * inner * sizeof(float));
			at += sizes[p];
		}
	}
	return 0;
}

int engine_concat(const float *const *xs, size_t outer, size_t inner, const size_t *sizes,
		  size_t parts, float *y)
{
	size_t total = 0;

	if (!xs || !sizes || !y || !outer || !inner || !parts)
		return -EINVAL;
	for (size_t p = 0; p < parts; p++) {
		if (!sizes[p] || !xs[p])
			return -EINVAL;
		total += sizes[p];
	}
	for (size_t o = 0; o < outer; o++) {
		size_t at = 0;

		for (size_t p = 0; p < parts; p++) {
			memcpy(y + (o * total + at) * inner, xs[p] + o * sizes[p] * inner,
			       sizes[p] * inner * sizeof(float));
			at += sizes[p];
		}
	}
	return 0;
}

static int slice_args(size_t outer, size_t len, size_t inner, size_t start, size_t count)
{
	return outer && len && inner && count && start <= len && count <= len - start ? 0 : -EINVAL;
}

int engine_slice_forward(const float *x, size_t outer, size_t len, size_t inner, size_t start,
			 size_t count, float *y)
{
	if (!x || !y || slice_args(outer, len, inner, start, count))
		return -EINVAL;
	for (size_t o = 0; o < outer; o++)
		memcpy(y + o * count * inner, x + (o * len + start) * inner,
		       count * inner * sizeof(float));
	return 0;
}

int engine_slice_backward(const float *dy, size_t outer, size_t len, size_t inner, size_t start,
			  size_t count, float *dx)
{
	if (!dy || !dx || slice_args(outer, len, inner, start, count))
		return -EINVAL;
	for (size_t o = 0; o < outer; o++) {
		float *row = dx + o * len * inner;

		memset(row, 0, start * inner * sizeof(float));
		memcpy(row + start * inner, dy + o * count * inner, count * inner * sizeof(float));
		memset(row + (start + count) * inner, 0,
		       (len - start - count) * inner * sizeof(float));
	}
	return 0;
}
