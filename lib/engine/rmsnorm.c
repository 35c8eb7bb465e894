// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * RMS normalization over the last @cols elements of each row (LLaMA's
 * RMSNorm: no mean subtracted, no bias). The mean square is summed in
 * double, as layer normalization's moments are.
 */
#include <errno.h>
#include <math.h>

#include "wse/engine_ops.h"

int engine_rmsnorm_forward(const float *x, const float *scale, size_t rows, size_t cols,
			   float eps, float *y, float *rstd)
{
	if (!x || !scale || !y || !rstd || !rows || !cols || !(eps > 0.0f))
		return -EINVAL;
	for (size_t r = 0; r < rows; r++) {
		const float *in = x + r * cols;
		float *out = y + r * cols;
		double sq = 0.0;
		float rs;

		for (size_t j = 0; j < cols; j++)
			sq += (double)in[j] * in[j];
		rs = (float)(1.0 / sqrt(sq / (double)cols + eps));
		rstd[r] = rs;
		for (size_t j = 0; j < cols; j++)
			out[j] = in[j] * rs * scale[j];
	}
	return 0;
}

int engine_rmsnorm_backward(const float *x, const float *scale, const float *rstd,
			    const float *dy, size_t rows, size_t cols, float *dx, float *dscale)
{
	if (!x || !scale || !rstd || !dy || !rows || !cols)
		return -EINVAL;
	if (dscale)
		for (size_t j = 0; j < cols; j++)
			dscale[j] = 0.0f;
	for (size_t r = 0; r < rows; r++) {
		const float *in = x + r * cols, *g = dy + r * cols;
		double sum_gx = 0.0;

		/* With xhat = x * rstd and gs = dy * scale:
		 * dx = rstd * (gs - xhat * mean(gs * xhat)).
		 */
		for (size_t j = 0; j < cols; j++) {
			float xhat = in[j] * rstd[r];

			sum_gx += (double)g[j] * scale[j] * xhat;
			if (dscale)
				dscale[j] += g[j] * xhat;
		}
		if (!dx)
			continue;
		float mgx = (float)(sum_gx / (double)cols);

		for (size_t j = 0; j < cols; j++) {
			float xhat = in[j] * rstd[r];

			dx[r * cols + j] = rstd[r] * (g[j] * scale[j] - xhat * mgx);
		}
	}
	return 0;
}
