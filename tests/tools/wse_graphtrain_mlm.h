/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse-graphtrain --mlm: masked-LM batches of the text corpus for a
 * BERT-style model with a padding-mask input, in the order and with the
 * corruption of models/bert_mlm.py's mlm_sample().
 */
#ifndef WSE_GRAPHTRAIN_MLM_H
#define WSE_GRAPHTRAIN_MLM_H

#include <stddef.h>
#include <stdint.h>

#include "wse/textdata.h"

#define MLM_MASK_ID	WSE_TEXT_VOCAB		/* [MASK] */
#define MLM_PAD_ID	(WSE_TEXT_VOCAB + 1)	/* [PAD] */
#define MLM_VOCAB	(WSE_TEXT_VOCAB + 2)
/* The corruption's generators: training seeded by the run's seed, validation fixed. */
#define MLM_TRAIN_STREAM(seed)	((seed) ^ 0x4d4c4dULL)
#define MLM_VAL_STREAM		0x56414cULL

/*
 * The window at @offset corrupted for masked-LM from @state: ids into @x,
 * the padding mask (1 token, 0 padding) into @mask, labels into @y (the
 * original character where a position is to be predicted, -100 elsewhere).
 */
void mlm_sample(const struct wse_text *t, uint64_t offset, size_t ctx, uint64_t *state,
		int64_t *x, float *mask, int64_t *y);

#endif /* WSE_GRAPHTRAIN_MLM_H */
