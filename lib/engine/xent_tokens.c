// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Token-level softmax cross-entropy: one class index per row of logits
 * (an image, or a token of a sequence), any number of classes. The loss is
 * log sum exp(z - max) - (z_label - max) per row, its mean summed in
 * double, as engine_xent_forward, but with int64 labels (PyTorch's and
 * ONNX's) instead of bytes and each row's exponentials also summed in
 * double, for vocabularies of any size. A label of ENGINE_XENT_IGNORE
 * (-100, PyTorch's ignore_index) leaves its row out of the mean and the
 * gradient.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "wse/engine_ops.h"

static int check(const float *logits, const int64_t *labels, size_t n, size_t classes)
{
	if (!logits || !labels || !n || !classes)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((labels[i] < 0 && labels[i] != ENGINE_XENT_IGNORE) ||
		    (labels[i] >= 0 && (uint64_t)labels[i] >= classes))
			return -EDOM;
	return 0;
}

size_t engine_xent_tokens_counted(const int64_t *labels, size_t n)
{
	size_t counted = 0;

	for (size_t i = 0; labels && i < n; i++)
		counted += labels[i] != ENGINE_XENT_IGNORE;
	return counted;
}

int engine_xent_tokens_forward(const float *logits, const int64_t *labels, size_t n,
			       size_t classes, float *loss, size_t *correct)
{
	int err = check(logits, labels, n, classes);
	double total = 0.0;
	size_t hits = 0, counted = 0;

	if (err)
		return err;
	if (!loss)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const float *z = logits + i * classes;

		if (labels[i] == ENGINE_XENT_IGNORE)
			continue;
		counted++;
		size_t arg = 0;
		float m = z[0];
		double sum = 0.0;

		for (size_t j = 1; j < classes; j++)
			if (z[j] > m) {
				m = z[j];
				arg = j;
			}
		for (size_t j = 0; j < classes; j++)
			sum += expf(z[j] - m);
		total += log(sum) - (double)(z[labels[i]] - m);
		hits += arg == (size_t)labels[i];
	}
	*loss = counted ? (float)(total / (double)counted) : 0.0f;
	if (correct)
		*correct = hits;
	return 0;
}

int engine_xent_tokens_backward(const float *logits, const int64_t *labels, size_t n,
				size_t classes, size_t norm, float *dlogits)
{
	int err = check(logits, labels, n, classes);

	if (err)
		return err;
	if (!dlogits || !norm)
		return -EINVAL;
	const float inv = (float)(1.0 / (double)norm);

	for (size_t i = 0; i < n; i++) {
		const float *z = logits + i * classes;
		float *d = dlogits + i * classes;
		float m = z[0];
		double sum = 0.0;

		if (labels[i] == ENGINE_XENT_IGNORE) {
			memset(d, 0, classes * sizeof(float));
			continue;
		}
		for (size_t j = 1; j < classes; j++)
			m = z[j] > m ? z[j] : m;
		for (size_t j = 0; j < classes; j++) {
			d[j] = expf(z[j] - m);
			sum += d[j];
		}
		float s = (float)(1.0 / sum);

		for (size_t j = 0; j < classes; j++)
			d[j] = d[j] * s * inv;
		d[labels[i]] -= inv;
	}
	return 0;
}
