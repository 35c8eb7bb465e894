// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Masked-LM corruption of a text window (wse/textmlm.h), draw for draw as
 * models/bert_mlm.py's mlm_sample().
 */
#include "wse/engine_ops.h"
#include "wse/splitmix64.h"
#include "wse/textmlm.h"

/* The labels it writes are the ones the engine's loss leaves out. */
_Static_assert(WSE_MLM_IGNORE == ENGINE_XENT_IGNORE, "MLM's ignored label is the engine's");

void wse_text_mlm_window(const struct wse_text *t, uint64_t offset, uint32_t context,
			 uint64_t *state, int32_t *x, float *mask, int32_t *y)
{
	uint32_t pad = (uint32_t)(wse_splitmix64(state) % (context / 4 + 1));

	for (uint32_t i = 0; i < context; i++) {
		int32_t c;
		uint64_t u, kind;

		if (i >= context - pad) {
			x[i] = WSE_MLM_PAD_ID;
			mask[i] = 0.0f;
			y[i] = WSE_MLM_IGNORE;
			continue;
		}
		c = t->ids[offset + i];
		u = wse_splitmix64(state);
		mask[i] = 1.0f;
		if (u % 100 >= 15) {
			x[i] = c;
			y[i] = WSE_MLM_IGNORE;
			continue;
		}
		y[i] = c;
		kind = (u >> 32) % 10;
		x[i] = kind < 8 ? WSE_MLM_MASK_ID :
		       kind == 8 ? (int32_t)((u >> 40) % WSE_TEXT_VOCAB) : c;
	}
}
