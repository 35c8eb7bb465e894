// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Element-wise activations of the graph ops: ReLU (the layer stack's own
 * kernels), tanh, the logistic sigmoid and GELU, exact (erf) and PyTorch's
 * tanh approximation.
 */
#include <errno.h>
#include <math.h>

#include "wse/engine.h"
#include "wse/engine_ops.h"

#define SQRT_HALF	0.70710678118654752440
#define INV_SQRT_2PI	0.39894228040143267794
#define SQRT_2_OVER_PI	0.79788456080286535588
#define GELU_CUBIC	0.044715

static float gelu(float x)
{
	return (float)(0.5 * x * (1.0 + erf(x * SQRT_HALF)));
}

static float gelu_grad(float x)
{
	double cdf = 0.5 * (1.0 + erf(x * SQRT_HALF));
	double pdf = INV_SQRT_2PI * exp(-0.5 * (double)x * x);

	return (float)(cdf + x * pdf);
}

static float gelu_tanh(float x)
{
	double inner = SQRT_2_OVER_PI * (x + GELU_CUBIC * (double)x * x * x);

	return (float)(0.5 * x * (1.0 + tanh(inner)));
}

static float gelu_tanh_grad(float x)
{
	double xx = (double)x * x;
	double t = tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * xx * x));
	double dinner = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_CUBIC * xx);

	return (float)(0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner);
}

static float sigmoid(float x)
{
	/* exp of a negative argument only: no overflow for large |x|. */
	if (x >= 0.0f)
		return 1.0f / (1.0f + expf(-x));
	float e = expf(x);

	return e / (1.0f + e);
}

int engine_act_forward(enum engine_act_kind kind, const float *x, size_t n, float *y)
{
	if (!x || !y || !n)
		return -EINVAL;
	switch (kind) {
	case ENGINE_ACT_RELU:
		return engine_relu_forward(x, n, y);
	case ENGINE_ACT_TANH:
		for (size_t i = 0; i < n; i++)
			y[i] = tanhf(x[i]);
		return 0;
	case ENGINE_ACT_SIGMOID:
		for (size_t i = 0; i < n; i++)
			y[i] = sigmoid(x[i]);
		return 0;
	case ENGINE_ACT_GELU:
		for (size_t i = 0; i < n; i++)
			y[i] = gelu(x[i]);
		return 0;
	case ENGINE_ACT_GELU_TANH:
		for (size_t i = 0; i < n; i++)
			y[i] = gelu_tanh(x[i]);
		return 0;
	case ENGINE_ACT_SILU:
		for (size_t i = 0; i < n; i++)
			y[i] = x[i] * sigmoid(x[i]);
		return 0;
	}
	return -EINVAL;
}

int engine_act_backward(enum engine_act_kind kind, const float *x, const float *y,
			const float *dy, size_t n, float *dx)
{
	if (!dy || !dx || !n)
		return -EINVAL;
	switch (kind) {
	case ENGINE_ACT_RELU:
		return y ? engine_relu_backward(y, dy, n, dx) : -EINVAL;
	case ENGINE_ACT_TANH:
		if (!y)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			dx[i] = dy[i] * (1.0f - y[i] * y[i]);
		return 0;
	case ENGINE_ACT_SIGMOID:
		if (!y)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			dx[i] = dy[i] * y[i] * (1.0f - y[i]);
		return 0;
	case ENGINE_ACT_GELU:
		if (!x)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			dx[i] = dy[i] * gelu_grad(x[i]);
		return 0;
	case ENGINE_ACT_GELU_TANH:
		if (!x)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			dx[i] = dy[i] * gelu_tanh_grad(x[i]);
		return 0;
	case ENGINE_ACT_SILU:
		if (!x)
			return -EINVAL;
		/* d/dx x s(x) = s(x) (1 + x (1 - s(x))) */
		for (size_t i = 0; i < n; i++) {
			float s = sigmoid(x[i]);

			dx[i] = dy[i] * s * (1.0f + x[i] * (1.0f - s));
		}
		return 0;
	}
	return -EINVAL;
}
