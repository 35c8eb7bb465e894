// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Softmax along one axis of x viewed as [outer][len][inner] (ONNX Softmax
 * from opset 13, PyTorch's softmax(dim)). Each slice subtracts its maximum
 * first, so the largest term is exactly 1 and nothing overflows; a slice
 * that is all -inf (a fully masked row) gives NaN, as in PyTorch.
 */
#include <errno.h>
#include <math.h>

#include "wse/engine_ops.h"

int engine_softmax_forward(const float *x, size_t outer, size_t len, size_t inner, float *y)
{
	if (!x || !y || !outer || !len || !inner)
		return -EINVAL;
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < inner; i++) {
			const float *in = x + o * len * inner + i;
			float *out = y + o * len * inner + i;
			float m = in[0];
			double sum = 0.0;

			for (size_t j = 1; j < len; j++)
				m = in[j * inner] > m ? in[j * inner] : m;
			for (size_t j = 0; j < len; j++) {
				out[j * inner] = expf(in[j * inner] - m);
				sum += out[j * inner];
			}
			float inv = (float)(1.0 / sum);

			for (size_t j = 0; j < len; j++)
				out[j * inner] *= inv;
		}
	return 0;
}

int engine_softmax_backward(const float *y, const float *dy, size_t outer, size_t len,
			    size_t inner, float *dx)
{
	if (!y || !dy || !dx || !outer || !len || !inner)
		return -EINVAL;
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < inner; i++) {
			size_t base = o * len * inner + i;
			double dot = 0.0;

			for (size_t j = 0; j < len; j++)
				dot += (double)dy[base + j * inner] * y[base + j * inner];
			for (size_t j = 0; j < len; j++)
				dx[base + j * inner] = y[base + j * inner] * (dy[base + j * inner] - (float)dot);
		}
	return 0;
}
