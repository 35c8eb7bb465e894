// SPDX-License-Identifier: GPL-2.0-only
/* ReLU and its gradient, elementwise. */
#include <errno.h>

#include "engine.h"

int engine_relu_forward(const float *x, size_t n, float *y)
{
	if (!x || !y || !n)
		return -EINVAL;
	/* "x < 0" rather than "x > 0" so that a NaN passes through and a
	 * diverging run shows up in the loss instead of being masked.
	 */
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
	return 0;
}

int engine_relu_backward(const float *y, const float *dy, size_t n, float *dx)
{
	if (!y || !dy || !dx || !n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
	return 0;
}
