// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Batch normalization per channel of x[batch][channels][spatial] (ONNX
 * BatchNormalization, PyTorch's nn.BatchNorm1d/2d). Training normalizes
 * with the batch's statistics (biased variance, as PyTorch) and moves the
 * running ones towards them; inference normalizes with the running ones.
 * Sums are in double.
 */
#include <errno.h>
#include <math.h>

#include "wse/engine_ops.h"

static bool valid(const struct engine_batchnorm *p)
{
	return p && p->batch && p->channels && p->spatial && p->eps > 0.0f &&
	       p->momentum >= 0.0f && p->momentum <= 1.0f;
}

int engine_batchnorm_forward(const struct engine_batchnorm *p, bool batch_stats, const float *x,
			     const float *scale, const float *bias, float *run_mean, float *run_var,
			     float *y, float *mean, float *rstd)
{
	size_t m = p ? p->batch * p->spatial : 0;

	if (!valid(p) || !x || !scale || !bias || !run_mean || !run_var || !y || !mean || !rstd)
		return -EINVAL;
	for (size_t c = 0; c < p->channels; c++) {
		double mu, var;

		if (batch_stats) {
			double sum = 0.0, sq = 0.0;

			for (size_t n = 0; n < p->batch; n++) {
				const float *in = x + (n * p->channels + c) * p->spatial;

				for (size_t s = 0; s < p->spatial; s++)
					sum += in[s];
			}
			mu = sum / (double)m;
			for (size_t n = 0; n < p->batch; n++) {
				const float *in = x + (n * p->channels + c) * p->spatial;

				for (size_t s = 0; s < p->spatial; s++)
					sq += (in[s] - mu) * (in[s] - mu);
			}
			var = sq / (double)m;
		} else {
			mu = run_mean[c];
			var = run_var[c];
		}
		mean[c] = (float)mu;
		rstd[c] = (float)(1.0 / sqrt(var + p->eps));
		for (size_t n = 0; n < p->batch; n++) {
			const float *in = x + (n * p->channels + c) * p->spatial;
			float *out = y + (n * p->channels + c) * p->spatial;

			for (size_t s = 0; s < p->spatial; s++)
				out[s] = (in[s] - mean[c]) * rstd[c] * scale[c] + bias[c];
		}
		if (!batch_stats)
			continue;
		/* ONNX's momentum is the running statistics' weight (PyTorch's
		 * momentum is 1 - it); PyTorch's running variance is unbiased.
		 */
		double run_v = p->unbiased && m > 1 ? var * (double)m / (double)(m - 1) : var;

		run_mean[c] = p->momentum * run_mean[c] + (1.0f - p->momentum) * (float)mu;
		run_var[c] = p->momentum * run_var[c] + (1.0f - p->momentum) * (float)run_v;
	}
	return 0;
}

int engine_batchnorm_backward(const struct engine_batchnorm *p, bool batch_stats, const float *x,
			      const float *scale, const float *mean, const float *rstd,
			      const float *dy, float *dx, float *dscale, float *dbias)
{
	size_t m = p ? p->batch * p->spatial : 0;

	if (!valid(p) || !x || !scale || !mean || !rstd || !dy)
		return -EINVAL;
	for (size_t c = 0; c < p->channels; c++) {
		double sum_g = 0.0, sum_gx = 0.0;

		for (size_t n = 0; n < p->batch; n++) {
			size_t at = (n * p->channels + c) * p->spatial;

			for (size_t s = 0; s < p->spatial; s++) {
				float xhat = (x[at + s] - mean[c]) * rstd[c];

				sum_g += dy[at + s];
				sum_gx += (double)dy[at + s] * xhat;
			}
		}
		if (dscale)
			dscale[c] = (float)sum_gx;
		if (dbias)
			dbias[c] = (float)sum_g;
		if (!dx)
			continue;
		/* With batch statistics the mean and variance depend on x:
		 * dx = scale * rstd * (dy - mean(dy) - xhat * mean(dy * xhat)).
		 * With running statistics they are constants: dx = scale * rstd * dy.
		 */
		float k = scale[c] * rstd[c];
		float mg = batch_stats ? (float)(sum_g / (double)m) : 0.0f;
		float mgx = batch_stats ? (float)(sum_gx / (double)m) : 0.0f;

		for (size_t n = 0; n < p->batch; n++) {
			size_t at = (n * p->channels + c) * p->spatial;

			for (size_t s = 0; s < p->spatial; s++) {
				float xhat = (x[at + s] - mean[c]) * rstd[c];

				dx[at + s] = k * (dy[at + s] - mg - xhat * mgx);
			}
		}
	}
	return 0;
}
