// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Softmax cross-entropy over class logits, its gradient, and argmax. Each
 * row subtracts its maximum before exponentiating, so no logit can overflow
 * expf and the largest term of the sum is exactly 1.
 */
#include <errno.h>
#include <math.h>

#include "wse/engine.h"

static int check_args(const float *logits, const uint8_t *labels,
		      size_t batch, size_t classes)
{
	if (!logits || !labels || !batch || !classes || classes > 256)
		return -EINVAL;
	for (size_t i = 0; i < batch; i++)
		if (labels[i] >= classes)
			return -EDOM;
	return 0;
}

static size_t row_argmax(const float *row, size_t classes)
{
	size_t best = 0;

	for (size_t j = 1; j < classes; j++)
		if (row[j] > row[best])
			best = j;
	return best;
}

/* Sum over the row of exp(z - max); the row's max is returned in *max. */
static float row_expsum(const float *row, size_t classes, float *max)
{
	float m = row[row_argmax(row, classes)];
	float s = 0.0f;

	for (size_t j = 0; j < classes; j++)
		s += expf(row[j] - m);
	*max = m;
	return s;
}

int engine_xent_forward(const float *logits, const uint8_t *labels,
			size_t batch, size_t classes, float *loss,
			size_t *correct)
{
	int err = check_args(logits, labels, batch, classes);
	double total = 0.0;
	size_t hits = 0;

	if (err)
		return err;
	if (!loss || !correct)
		return -EINVAL;
	for (size_t i = 0; i < batch; i++) {
		const float *row = logits + i * classes;
		float m, s = row_expsum(row, classes, &m);

		/* -log softmax(z)_y = log(sum exp(z - m)) - (z_y - m) */
		total += (double)(logf(s) - (row[labels[i]] - m));
		hits += row_argmax(row, classes) == labels[i];
	}
	/* Summed in double so the mean does not depend on the batch size's
	 * rounding; the order is fixed, so it is deterministic.
	 */
	*loss = (float)(total / (double)batch);
	*correct = hits;
	return 0;
}

int engine_xent_backward(const float *logits, const uint8_t *labels,
			 size_t batch, size_t classes, size_t norm,
			 float *dlogits)
{
	int err = check_args(logits, labels, batch, classes);
	float fnorm = (float)norm;

	if (err)
		return err;
	if (!dlogits || !norm)
		return -EINVAL;
	for (size_t i = 0; i < batch; i++) {
		const float *row = logits + i * classes;
		float *drow = dlogits + i * classes;
		float m, s = row_expsum(row, classes, &m);

		for (size_t j = 0; j < classes; j++) {
			float p = expf(row[j] - m) / s;

			if (j == labels[i])
				p -= 1.0f;
			drow[j] = p / fnorm;
		}
	}
	return 0;
}

int engine_argmax(const float *logits, size_t batch, size_t classes,
		  uint8_t *pred)
{
	if (!logits || !pred || !batch || !classes || classes > 256)
		return -EINVAL;
	for (size_t i = 0; i < batch; i++)
		pred[i] = (uint8_t)row_argmax(logits + i * classes, classes);
	return 0;
}
