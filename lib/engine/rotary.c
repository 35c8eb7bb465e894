// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rotary position embedding (RoPE, as LLaMA writes it): each head's
 * vector of @dim elements at position t becomes x * cos[t] + rot(x) *
 * sin[t], where rot(x) = (-x2, x1) for the halves x1, x2 of x (the pairs
 * (i, i + dim / 2) rotate together). x is [rows][seq][heads][dim] ([batch,
 * seq, width] before the heads are split off); the tables are [seq][dim].
 */
#include <errno.h>

#include "wse/engine_ops.h"

static int check(const struct engine_rotary *p)
{
	return p->rows && p->seq && p->heads && p->dim && p->dim % 2 == 0 ? 0 : -EINVAL;
}

int engine_rotary_forward(const struct engine_rotary *p, const float *x, const float *cos,
			  const float *sin, float *y)
{
	size_t half = p->dim / 2;

	if (!x || !cos || !sin || !y || check(p))
		return -EINVAL;
	for (size_t r = 0; r < p->rows; r++)
		for (size_t t = 0; t < p->seq; t++) {
			const float *c = cos + t * p->dim, *s = sin + t * p->dim;

			for (size_t h = 0; h < p->heads; h++) {
				size_t at = ((r * p->seq + t) * p->heads + h) * p->dim;
				const float *in = x + at;
				float *out = y + at;

				for (size_t d = 0; d < half; d++) {
					out[d] = in[d] * c[d] - in[d + half] * s[d];
					out[d + half] = in[d + half] * c[d + half] + in[d] * s[d + half];
				}
			}
		}
	return 0;
}

/* The rotation's transpose: dx = dy * cos + rot^T(dy * sin), rot^T(g) = (g2, -g1). */
int engine_rotary_backward(const struct engine_rotary *p, const float *cos, const float *sin,
			   const float *dy, float *dx)
{
	size_t half = p->dim / 2;

	if (!cos || !sin || !dy || !dx || check(p))
		return -EINVAL;
	for (size_t r = 0; r < p->rows; r++)
		for (size_t t = 0; t < p->seq; t++) {
			const float *c = cos + t * p->dim, *s = sin + t * p->dim;

			for (size_t h = 0; h < p->heads; h++) {
				size_t at = ((r * p->seq + t) * p->heads + h) * p->dim;
				const float *g = dy + at;
				float *out = dx + at;

				for (size_t d = 0; d < half; d++) {
					float lo = g[d] * c[d] + g[d + half] * s[d + half];
					float hi = g[d + half] * c[d + half] - g[d] * s[d];

					out[d] = lo;
					out[d + half] = hi;
				}
			}
		}
	return 0;
}
