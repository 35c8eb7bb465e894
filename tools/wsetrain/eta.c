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
 *   falls, never rises, when the first evaluation is measured);
 * - no estimate from an average of too few chunks, which would be their
 *   noise: ETA_FEW_UPDATES updates at least, and ETA_MANY_UPDATES or
 *   ETA_SHARE of the training;
 * - what is shown rises by at most ETA_RISE from one showing to the next,
 *   and falls at once. Early in a run the average is still light, and a
 *   machine that turns twice as busy moves it by half in a few chunks
 *   (make demo beside other work: 35 s, then 46 s); shown, that rise is
 *   spread over a few updates (ETA_RISE^5 is 2) instead of one jump.
 */
#include "train.h"

#define ETA_FEW_UPDATES		2
#define ETA_MANY_UPDATES	5
#define ETA_SHARE		0.1
#define ETA_RISE		1.15

void train_eta_train(struct train_eta *e, uint64_t samples, double seconds)
{
	e->train_samples += samples;
	e->train_s += seconds > 0 ? seconds : 0;
	e->updates++;
}

void train_eta_eval(struct train_eta *e, uint64_t samples, double seconds)
{
	e->eval_samples += samples;
	e->eval_s += seconds > 0 ? seconds : 0;
}

double train_eta_left(const struct train_eta *e, uint64_t train_left, uint32_t evals_left,
		      uint64_t eval_samples)
{
	double per_train, per_eval;

	if (!e->train_samples || e->train_s <= 0 || e->updates < ETA_FEW_UPDATES ||
	    (e->updates < ETA_MANY_UPDATES &&
	     e->train_samples < ETA_SHARE * (e->train_samples + train_left)))
		return -1;	/* too little measured yet */
	per_train = e->train_s / e->train_samples;
	per_eval = e->eval_samples ? e->eval_s / e->eval_samples : per_train;
	return train_left * per_train + (double)evals_left * eval_samples * per_eval;
}

double train_eta_show(struct train_eta_shown *s, double estimate)
{
	if (estimate < 0)
		return s->last > 0 ? s->last : -1;
	if (s->last > 0 && estimate > s->last * ETA_RISE)
		estimate = s->last * ETA_RISE;
	s->last = estimate;
	return estimate;
}
