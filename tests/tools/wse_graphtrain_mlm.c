// SPDX-License-Identifier: GPL-2.0-only
/*
 * Masked-LM corruption of a text window, as models/bert_mlm.py's
 * mlm_sample() draws it: first the padding at the end (0 .. ctx / 4
 * positions), then per real position one draw: predicted when its value
 * mod 100 is below 15, and then replaced as BERT does by [MASK] (80%), a
 * random character (10%) or kept (10%), from the draw's upper bits.
 */
#include "wse/engine_ops.h"
#include "wse/splitmix64.h"
#include "wse_graphtrain_mlm.h"

void mlm_sample(const struct wse_text *t, uint64_t offset, size_t ctx, uint64_t *state,
		int64_t *x, float *mask, int64_t *y)
{
	size_t pad = (size_t)(wse_splitmix64(state) % (ctx / 4 + 1));

	for (size_t i = 0; i < ctx; i++) {
		int64_t c;
		uint64_t u, kind;

		if (i >= ctx - pad) {
			x[i] = MLM_PAD_ID;
			mask[i] = 0.0f;
			y[i] = ENGINE_XENT_IGNORE;
			continue;
		}
		c = t->ids[offset + i];
		u = wse_splitmix64(state);
		mask[i] = 1.0f;
		if (u % 100 >= 15) {
			x[i] = c;
			y[i] = ENGINE_XENT_IGNORE;
			continue;
		}
		y[i] = c;
		kind = (u >> 32) % 10;
		x[i] = kind < 8 ? MLM_MASK_ID : kind == 8 ? (int64_t)((u >> 40) % WSE_TEXT_VOCAB) : c;
	}
}
