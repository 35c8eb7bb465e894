// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fused multi-head self-attention: for each sample and head, the scores
 * scale * Q K^T, the causal mask, the softmax and P V, without the
 * reshapes and transposes of the unfused graph: a head is a column slice
 * of q, k, v ([batch][seq][heads * head_dim]), which sgemm reads with a
 * leading dimension of heads * head_dim. A key padding mask (BERT's, made
 * additive) is added to the scores of each query before the softmax. The
 * probabilities are kept for the backward pass, and with attention dropout the mask, which the
 * backward pass applies again to the probabilities and their gradient.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>

#include "gemm.h"

#include "wse/engine.h"
#include "wse/engine_ops.h"

static int check(const struct engine_attention *p)
{
	if (!p || !p->batch || !p->seq || !p->heads || !p->head_dim || !isfinite(p->scale) ||
	    !(p->ratio >= 0.0f && p->ratio < 1.0f))
		return -EINVAL;
	if (p->seq > INT_MAX || p->heads * p->head_dim > INT_MAX)
		return -EOVERFLOW;
	return 0;
}

size_t engine_attention_scratch(const struct engine_attention *p)
{
	return (p->ratio > 0.0f ? 2 : 1) * p->seq * p->seq;
}

/* P * keep / (1 - ratio): the probabilities that multiply V. */
static void dropped(const float *pr, const uint8_t *keep, size_t n, float ratio, float *out)
{
	const float scale = 1.0f / (1.0f - ratio);

	for (size_t i = 0; i < n; i++)
		out[i] = keep[i] ? pr[i] * scale : 0.0f;
}

/* Each query's scores (a T x T block's rows) plus the sample's key mask. */
static void add_key_mask(float *s, const float *mask, size_t t)
{
	for (size_t i = 0; i < t; i++)
		for (size_t j = 0; j < t; j++)
			s[i * t + j] += mask[j];
}

/* Row-wise softmax of the T x T scores in place; masked entries become 0. */
static void masked_softmax(float *s, size_t t, bool causal)
{
	for (size_t i = 0; i < t; i++) {
		float *row = s + i * t;
		size_t n = causal ? i + 1 : t;
		float m = row[0];
		double sum = 0.0;

		for (size_t j = 1; j < n; j++)
			m = row[j] > m ? row[j] : m;
		for (size_t j = 0; j < n; j++) {
			row[j] = expf(row[j] - m);
			sum += row[j];
		}
		float inv = (float)(1.0 / sum);

		for (size_t j = 0; j < n; j++)
			row[j] *= inv;
		for (size_t j = n; j < t; j++)
			row[j] = 0.0f;
	}
}

/* Forward; with @keep (and @scratch) the probabilities are dropped out. */
static int forward(const struct engine_attention *p, const float *q, const float *k,
		   const float *v, uint64_t seed, float *y, float *probs, uint8_t *keep,
		   float *scratch)
{
	int err = check(p);
	struct engine_rng rng;

	if (err)
		return err;
	if (!q || !k || !v || !y || !probs || (keep && !scratch))
		return -EINVAL;
	const int t = (int)p->seq, d = (int)p->head_dim, c = (int)(p->heads * p->head_dim);
	const size_t tt = p->seq * p->seq;

	engine_rng_seed(&rng, seed);
	for (size_t b = 0; b < p->batch; b++)
		for (size_t h = 0; h < p->heads; h++) {
			size_t off = b * p->seq * (size_t)c + h * p->head_dim;
			float *pr = probs + (b * p->heads + h) * tt;
			const float *pv = pr;

			SGEMM_OR_RETURN(engine_sgemm(false, true, t, t, d, p->scale, q + off,
				    c, k + off, c, 0.0f, pr, t));
			if (p->key_mask)
				add_key_mask(pr, p->key_mask + b * p->seq, p->seq);
			masked_softmax(pr, p->seq, p->causal);
			if (keep) {
				uint8_t *kp = keep + (b * p->heads + h) * tt;

				for (size_t i = 0; i < tt; i++)
					kp[i] = engine_rng_uniform(&rng) >= p->ratio;
				dropped(pr, kp, tt, p->ratio, scratch);
				pv = scratch;
			}
			SGEMM_OR_RETURN(engine_sgemm(false, false, t, d, t, 1.0f, pv, t,
				    v + off, c, 0.0f, y + off, c));
		}
	return 0;
}

int engine_attention_forward(const struct engine_attention *p, const float *q, const float *k,
			     const float *v, float *y, float *probs)
{
	return forward(p, q, k, v, 0, y, probs, NULL, NULL);
}

int engine_attention_forward_dropout(const struct engine_attention *p, const float *q,
				     const float *k, const float *v, uint64_t seed, float *y,
				     float *probs, uint8_t *keep, float *scratch)
{
	if (!keep)
		return -EINVAL;
	return forward(p, q, k, v, seed, y, probs, keep, scratch);
}

/* Backward; with @keep the probabilities were dropped out by it. */
static int backward(const struct engine_attention *p, const float *q, const float *k,
		    const float *v, const float *probs, const uint8_t *keep, const float *dy,
		    float *dq, float *dk, float *dv, float *scratch)
{
	int err = check(p);

	if (err)
		return err;
	if (!q || !k || !v || !probs || !dy || !scratch)
		return -EINVAL;
	const int t = (int)p->seq, d = (int)p->head_dim, c = (int)(p->heads * p->head_dim);
	const size_t tt = p->seq * p->seq;

	for (size_t b = 0; b < p->batch; b++)
		for (size_t h = 0; h < p->heads; h++) {
			size_t off = b * p->seq * (size_t)c + h * p->head_dim;
			const float *pr = probs + (b * p->heads + h) * tt, *pv = pr;
			const uint8_t *kp = keep ? keep + (b * p->heads + h) * tt : NULL;
			float *ds = scratch;

			if (kp) {	/* the probabilities that multiplied V */
				dropped(pr, kp, tt, p->ratio, scratch + tt);
				pv = scratch + tt;
			}
			if (dv)		/* dV = P^T dY */
				SGEMM_OR_RETURN(engine_sgemm(true, false, t, d, t, 1.0f, pv, t,
					    dy + off, c, 0.0f, dv + off, c));
			if (!dq && !dk)
				continue;
			/* dP = dY V^T (through the dropout's mask and scale), then
			 * dS = P * (dP - rowsum(dP * P)).
			 */
			SGEMM_OR_RETURN(engine_sgemm(false, true, t, t, d, 1.0f, dy + off, c,
				    v + off, c, 0.0f, ds, t));
			if (kp)
				dropped(ds, kp, tt, p->ratio, ds);
			for (size_t i = 0; i < p->seq; i++) {
				float *row = ds + i * p->seq;
				const float *pi = pr + i * p->seq;
				double dot = 0.0;

				for (size_t j = 0; j < p->seq; j++)
					dot += (double)row[j] * pi[j];
				for (size_t j = 0; j < p->seq; j++)
					row[j] = pi[j] * (row[j] - (float)dot);
			}
			if (dq)		/* dQ = scale dS K */
				SGEMM_OR_RETURN(engine_sgemm(false, false, t, d, t, p->scale, ds,
					    t, k + off, c, 0.0f, dq + off, c));
			if (dk)		/* dK = scale dS^T Q */
				SGEMM_OR_RETURN(engine_sgemm(true, false, t, d, t, p->scale, ds, t,
					    q + off, c, 0.0f, dk + off, c));
		}
	return 0;
}

int engine_attention_backward(const struct engine_attention *p, const float *q, const float *k,
			      const float *v, const float *probs, const float *dy, float *dq,
			      float *dk, float *dv, float *scratch)
{
	return backward(p, q, k, v, probs, NULL, dy, dq, dk, dv, scratch);
}

int engine_attention_backward_dropout(const struct engine_attention *p, const float *q,
				      const float *k, const float *v, const float *probs,
				      const uint8_t *keep, const float *dy, float *dq, float *dk,
				      float *dv, float *scratch)
{
	if (!keep)
		return -EINVAL;
	return backward(p, q, k, v, probs, keep, dy, dq, dk, dv, scratch);
}
