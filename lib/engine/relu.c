// SPDX-License-Identifier: LGPL-2.1-or-later
/* ReLU and its gradient, elementwise. */
#include <errno.h>

#include "wse/engine.h"
#include "relu.h"
#include "vec.h"

/*
 * "x < 0" rather than "x > 0" selects the zero, so that a NaN passes through
 * and a diverging run shows up in the loss instead of being masked.
 */
void engine_relu_inplace(float *x, size_t n)
{
	size_t i = 0;

	for (; i + VLEN <= n; i += VLEN) {
		vfloat v = vload(x + i);

		vstore(x + i, vkeep(~(v < vsplat(0.0f)), v));
	}
	for (; i < n; i++)
		x[i] = x[i] < 0.0f ? 0.0f : x[i];
}

int engine_relu_forward(const float *x, size_t n, float *y)
{
	if (!x || !y || !n)
		return -EINVAL;
	if (y != x)
		memmove(y, x, n * sizeof(float));
	engine_relu_inplace(y, n);
	return 0;
}

int engine_relu_backward(const float *y, const float *dy, size_t n, float *dx)
{
	size_t i = 0;

	if (!y || !dy || !dx || !n)
		return -EINVAL;
	for (; i + VLEN <= n; i += VLEN)
		vstore(dx + i, vkeep(vload(y + i) > vsplat(0.0f), vload(dy + i)));
	for (; i < n; i++)
		dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
	return 0;
}
