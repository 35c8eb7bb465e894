// SPDX-License-Identifier: GPL-2.0-only
/*
 * How long a run has left, from what it has done so far. Pure arithmetic,
 * so that it can be tested on made-up timelines (wsetrain_eta_test).
 *
 * Training and evaluation are timed apart, because they alternate in
 * lumps: a rate over the last window would see an evaluation or a
 * checkpoint as a sudden slowdown and the ETA would jump at every epoch
 * end (issue 17's "ETA 35s" at step 468, "ETA 1m05s" at 469). Instead:
 *
 * - training goes at the run's average so far, checkpoints included: its
 *   samples over its seconds. An average over the whole run moves by a
 *   window's share of it at most, so a slow window (load, a checkpoint)
 *   nudges it rather than swinging it;
 * - each evaluation still to come costs what the ones so far cost per
 *   sample, or, before the first, what a training sample costs (a
 *   forward pass is cheaper, so the first guess is high, and the ETA
 *   falls, never rises, when the first evaluation is measured).
 */
#include "train.h"

void train_eta_train(struct train_eta *e, uint64_t samples, double seconds)
{
	e->train_samples += samples;
	e->train_s += seconds > 0 ? seconds : 0;
}

void train_eta_eval(struct train_eta *e, uint64_t samples, double seconds)
{
	e->eval_samples += samples;
	e->eval_s += seconds > 0 ? seconds : 0;
}

double train_eta_rate(const struct train_eta *e)
{
	return e->train_s > 0 ? e->train_samples / e->train_s : 0;
}

double train_eta_left(const struct train_eta *e, uint64_t train_left, uint32_t evals_left,
		      uint64_t eval_samples)
{
	double per_train, per_eval;

	if (!e->train_samples || e->train_s <= 0)
		return -1;	/* nothing measured yet */
	per_train = e->train_s / e->train_samples;
	per_eval = e->eval_samples ? e->eval_s / e->eval_samples : per_train;
	return train_left * per_train + (double)evals_left * eval_samples * per_eval;
}
