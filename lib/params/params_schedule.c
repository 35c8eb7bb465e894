// SPDX-License-Identifier: GPL-2.0-only
/*
 * ModelZoo's learning_rate schedule list, narrowed to what the device
 * runs (engine_lr_at()): a constant rate, or a linear warm-up from 0
 * followed by a cosine decay to a floor. Anything else is refused with
 * what would be accepted, not approximated.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "wse/hparams.h"

static int fail(char *err, size_t errlen, const char *msg, const char *scheduler)
{
	snprintf(err, errlen, msg, scheduler);
	return -EINVAL;
}

static int linear(struct wse_hparams *h, const struct wse_hp_sched_entry *e, size_t index,
		  char *err, size_t errlen)
{
	if (index)
		return fail(err, errlen, "%s: a warm-up comes first in the list", e->scheduler);
	if (!isnan(e->initial_lr) && e->initial_lr != 0)
		return fail(err, errlen, "%s: the device's warm-up starts at 0: set initial_learning_rate: 0",
			    e->scheduler);
	if (isnan(e->end_lr) || !(e->end_lr > 0) || e->total_iters == UINT64_MAX)
		return fail(err, errlen, "%s: a warm-up needs end_learning_rate (the peak, > 0) and total_iters (its steps)",
			    e->scheduler);
	if (!isnan(e->lr))
		return fail(err, errlen, "%s: takes initial_learning_rate, end_learning_rate and total_iters, not learning_rate",
			    e->scheduler);
	h->learning_rate = e->end_lr;
	h->warmup_steps = e->total_iters;
	h->set |= WSE_HP_BIT(WSE_HP_WARMUP_STEPS);
	h->line[WSE_HP_WARMUP_STEPS] = e->line;
	return 0;
}

static int cosine(struct wse_hparams *h, const struct wse_hp_sched_entry *e, size_t index,
		  char *err, size_t errlen)
{
	bool warm = wse_hp_has(h, WSE_HP_WARMUP_STEPS);
	double peak = warm ? h->learning_rate : e->initial_lr;

	if (index > 1 || (index == 1 && !warm))
		return fail(err, errlen, "%s: the device decays once, after an optional Linear warm-up",
			    e->scheduler);
	if (!isnan(e->lr))
		return fail(err, errlen, "%s: takes initial_learning_rate, end_learning_rate and total_iters, not learning_rate",
			    e->scheduler);
	if (isnan(peak) || !(peak > 0))
		return fail(err, errlen, "%s: needs initial_learning_rate, the rate it decays from (> 0)",
			    e->scheduler);
	if (warm && !isnan(e->initial_lr) && e->initial_lr != peak) {
		snprintf(err, errlen, "%s: initial_learning_rate %g differs from the warm-up's end %g: the decay starts where the warm-up ends",
			 e->scheduler, e->initial_lr, peak);
		return -EINVAL;
	}
	h->min_lr = isnan(e->end_lr) ? 0 : e->end_lr;
	if (h->min_lr >= peak) {
		snprintf(err, errlen, "%s: end_learning_rate %g is not below the peak %g",
			 e->scheduler, h->min_lr, peak);
		return -EINVAL;
	}
	h->learning_rate = peak;
	h->set |= WSE_HP_BIT(WSE_HP_MIN_LR);
	h->line[WSE_HP_MIN_LR] = e->line;
	/* Without total_iters the decay ends where the run does. */
	if (e->total_iters != UINT64_MAX) {
		h->schedule_steps = h->warmup_steps + e->total_iters;
		h->set |= WSE_HP_BIT(WSE_HP_SCHEDULE_STEPS);
		h->line[WSE_HP_SCHEDULE_STEPS] = e->line;
	}
	return 0;
}

static int constant(struct wse_hparams *h, const struct wse_hp_sched_entry *e, size_t index,
		    char *err, size_t errlen)
{
	double lr = !isnan(e->lr) ? e->lr : e->initial_lr;

	if (index)
		return fail(err, errlen, "%s: a constant rate is the only entry of its list",
			    e->scheduler);
	if (isnan(lr) || !(lr > 0))
		return fail(err, errlen, "%s: needs learning_rate (> 0)", e->scheduler);
	h->learning_rate = lr;
	return 0;
}

int wse_hparams_add_schedule(struct wse_hparams *h, const struct wse_hp_sched_entry *e,
			     size_t index, char *err, size_t errlen)
{
	/* A list that ended in a decay or a constant has no more entries. */
	if (index && (wse_hp_has(h, WSE_HP_MIN_LR) || !wse_hp_has(h, WSE_HP_WARMUP_STEPS)))
		return fail(err, errlen, "%s: nothing follows the decay (or a constant rate) on the device",
			    e->scheduler);
	if (!strcasecmp(e->scheduler, "Linear") || !strcasecmp(e->scheduler, "LinearLR"))
		return linear(h, e, index, err, errlen);
	if (!strcasecmp(e->scheduler, "CosineDecay") || !strcasecmp(e->scheduler, "CosineDecayLR"))
		return cosine(h, e, index, err, errlen);
	if (!strcasecmp(e->scheduler, "Constant") || !strcasecmp(e->scheduler, "ConstantLR"))
		return constant(h, e, index, err, errlen);
	return fail(err, errlen, "scheduler '%s': the device runs Linear (a warm-up from 0), CosineDecay and Constant",
		    e->scheduler);
}
