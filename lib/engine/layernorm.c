// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Layer normalization over the last @cols elements of each row (ONNX
 * LayerNormalization with its axis folded into rows x cols, PyTorch's
 * nn.LayerNorm). Means and variances are summed in double.
 */
#include <errno.h>
#include <math.h>

#include "wse/engine_ops.h"

int engine_layernorm_forward(const float *x, const float *scale, const float *bias,
			     size_t rows, size_t cols, float eps, float *y, float *mean,
			     float *rstd)
{
	if (!x || !scale || !y || !mean || !rstd || !rows || !cols || !(eps > 0.0f))
		return -EINVAL;
	for (size_t r = 0; r < rows; r++) {
		const float *in = x + r * cols;
		float *out = y + r * cols;
		double sum = 0.0, sq = 0.0, mu, rs;

		for (size_t j = 0; j < cols; j++)
			sum += in[j];
		mu = sum / (double)cols;
		for (size_t j = 0; j < cols; j++)
			sq += (in[j] - mu) * (in[j] - mu);
		rs = 1.0 / sqrt(sq / (double)cols + eps);
		mean[r] = (float)mu;
		rstd[r] = (float)rs;
		for (size_t j = 0; j < cols; j++) {
			float v = (float)((in[j] - mu) * rs) * scale[j];

			out[j] = bias ? v + bias[j] : v;
		}
	}
	return 0;
}

int engine_layernorm_backward(const float *x, const float *scale, const float *mean,
			      const float *rstd, const float *dy, size_t rows, size_t cols,
			      float *dx, float *dscale, float *dbias)
{
	if (!x || !scale || !mean || !rstd || !dy || !rows || !cols)
		return -EINVAL;
	if (dscale)
		for (size_t j = 0; j < cols; j++)
			dscale[j] = 0.0f;
	if (dbias)
		for (size_t j = 0; j < cols; j++)
			dbias[j] = 0.0f;
	for (size_t r = 0; r < rows; r++) {
		const float *in = x + r * cols, *g = dy + r * cols;
		double sum_g = 0.0, sum_gx = 0.0;

		/* With xhat = (x - mean) * rstd and gs = dy * scale:
		 * dx = rstd * (gs - mean(gs) - xhat * mean(gs * xhat)).
		 */
		for (size_t j = 0; j < cols; j++) {
			float xhat = (in[j] - mean[r]) * rstd[r];
			float gs = g[j] * scale[j];

			sum_g += gs;
			sum_gx += (double)gs * xhat;
			if (dscale)
				dscale[j] += g[j] * xhat;
			if (dbias)
				dbias[j] += g[j];
		}
		if (!dx)
			continue;
		float mg = (float)(sum_g / (double)cols), mgx = (float)(sum_gx / (double)cols);

		for (size_t j = 0; j < cols; j++) {
			float xhat = (in[j] - mean[r]) * rstd[r];

			dx[r * cols + j] = rstd[r] * (g[j] * scale[j] - mg - xhat * mgx);
		}
	}
	return 0;
}
