// SPDX-License-Identifier: GPL-2.0-only
/*
 * The order samples are taken in: a fresh shuffle every epoch, derived
 * from the shuffle seed and the epoch number alone (wse_dataset_order(),
 * which an appliance's input workers use too). A resumed run
 * therefore needs only (seed, epoch, position) to take the very samples
 * the interrupted run would have taken next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

int train_order_init(struct train_order *o, uint32_t n, uint64_t seed)
{
	o->n = n;
	o->seed = seed;
	o->epoch = UINT32_MAX;
	o->perm = malloc((size_t)n * sizeof(*o->perm));
	return o->perm ? 0 : -ENOMEM;
}

void train_order_epoch(struct train_order *o, uint32_t epoch)
{
	if (o->epoch == epoch)
		return;
	if (o->text) {
		for (uint32_t i = 0; i < o->n; i++)
			o->perm[i] = (uint32_t)wse_text_train_offset(o->text, o->seed,
								      (uint64_t)epoch * o->n + i,
								      o->context);
		o->epoch = epoch;
		return;
	}
	wse_dataset_order(o->perm, o->n, o->seed, epoch);
	o->epoch = epoch;
}

void train_order_text(struct train_order *o, const struct wse_text *t, uint32_t context)
{
	o->text = t;
	o->context = context;
	o->epoch = UINT32_MAX;
}

void train_order_free(struct train_order *o)
{
	free(o->perm);
	o->perm = NULL;
}

void train_gather(const struct wse_dataset *ds, const uint32_t *perm, uint32_t first,
		  uint32_t count, uint8_t *x, int32_t *y)
{
	for (uint32_t i = 0; i < count; i++) {
		uint32_t s = perm ? perm[first + i] : first + i;

		memcpy(x + (size_t)i * ds->item, wse_dataset_image(ds, s), ds->item);
		y[i] = ds->labels ? ds->labels[s] : 0;	/* images alone: nothing to learn */
	}
}
