// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Inverted dropout with a seeded mask: element i is kept when the i-th
 * draw of splitmix64 from @seed, as a 24-bit uniform in [0, 1), is at least
 * the ratio. The same seed gives the same mask, so a training step can be
 * replayed; the executor derives a fresh seed per node and step.
 */
#include <errno.h>

#include "wse/engine.h"
#include "wse/engine_ops.h"

int engine_dropout_forward(const float *x, size_t n, float ratio, uint64_t seed, float *y,
			   uint8_t *keep)
{
	struct engine_rng rng;

	if (!x || !y || !keep || !n || !(ratio >= 0.0f && ratio < 1.0f))
		return -EINVAL;
	const float scale = 1.0f / (1.0f - ratio);

	engine_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		keep[i] = engine_rng_uniform(&rng) >= ratio;
		y[i] = keep[i] ? x[i] * scale : 0.0f;
	}
	return 0;
}

int engine_dropout_backward(const float *dy, const uint8_t *keep, size_t n, float ratio,
			    float *dx)
{
	if (!dy || !keep || !dx || !n || !(ratio >= 0.0f && ratio < 1.0f))
		return -EINVAL;
	const float scale = 1.0f / (1.0f - ratio);

	for (size_t i = 0; i < n; i++)
		dx[i] = keep[i] ? dy[i] * scale : 0.0f;
	return 0;
}
