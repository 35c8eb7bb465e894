// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Gather (ONNX Gather; an embedding lookup when data is [vocab][width] and
 * the axis 0): copies whole inner rows; the backward pass scatter-adds the
 * output gradient into the table's, in index order.
 */
#include <errno.h>
#include <string.h>

#include "wse/engine_ops.h"

/* Every index resolved into [0, len), or -EDOM before anything is written. */
static int check_indices(const int64_t *idx, size_t count, size_t len)
{
	for (size_t i = 0; i < count; i++)
		if (idx[i] < -(int64_t)len || idx[i] >= (int64_t)len)
			return -EDOM;
	return 0;
}

static size_t resolve(int64_t i, size_t len)
{
	return i < 0 ? (size_t)(i + (int64_t)len) : (size_t)i;
}

int engine_gather_forward(const float *data, size_t outer, size_t len, size_t inner,
			  const int64_t *idx, size_t count, float *y)
{
	int err;

	if (!data || !idx || !y || !outer || !len || !inner || !count)
		return -EINVAL;
	err = check_indices(idx, count, len);
	if (err)
		return err;
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < count; i++)
			memcpy(y + (o * count + i) * inner,
			       data + (o * len + resolve(idx[i], len)) * inner, inner * sizeof(*y));
	return 0;
}

int engine_gather_backward(const float *dy, size_t outer, size_t len, size_t inner,
			   const int64_t *idx, size_t count, float *ddata)
{
	int err;

	if (!dy || !idx || !ddata || !outer || !len || !inner || !count)
		return -EINVAL;
	err = check_indices(idx, count, len);
	if (err)
		return err;
	memset(ddata, 0, outer * len * inner * sizeof(*ddata));
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < count; i++) {
			float *row = ddata + (o * len + resolve(idx[i], len)) * inner;
			const float *g = dy + (o * count + i) * inner;

			for (size_t j = 0; j < inner; j++)
				row[j] += g[j];
		}
	return 0;
}
