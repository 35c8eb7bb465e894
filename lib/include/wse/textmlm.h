/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/textmlm.h: masked-LM samples of the character corpus (wse/textdata.h)
 * for a BERT-style model whose inputs are the tokens and a padding mask,
 * corrupted as models/bert_mlm.py's mlm_sample() does, so that wsetrain,
 * wse-trainhost, wse-graphtrain and PyTorch train on the same batches
 * (library libwsedata; Documentation/dataset.rst, "Masked LM").
 */
#ifndef WSE_TEXTMLM_H
#define WSE_TEXTMLM_H

#include <stdint.h>

#include "wse/textdata.h"

#define WSE_MLM_MASK_ID		WSE_TEXT_VOCAB		/* [MASK] */
#define WSE_MLM_PAD_ID		(WSE_TEXT_VOCAB + 1)	/* [PAD] */
#define WSE_MLM_VOCAB		(WSE_TEXT_VOCAB + 2)
#define WSE_MLM_IGNORE		(-100)	/* a label not predicted (PyTorch's ignore_index) */
/* The corruption's generators: training seeded by the run's seed, validation fixed. */
#define WSE_MLM_TRAIN_STREAM(seed)	((uint64_t)(seed) ^ 0x4d4c4dULL)
#define WSE_MLM_VAL_STREAM		0x56414cULL

/*
 * The window at @offset corrupted for masked LM, drawing from splitmix64
 * @state: first the padding at the end (0 .. @context / 4 positions), then
 * per real position one draw: predicted when it is below 15 mod 100, and
 * then replaced by [MASK] (80%), a random character (10%) or kept (10%)
 * by the draw's upper bits. Ids into @x, the padding mask (1 a token, 0
 * padding) into @mask, labels into @y (the character where predicted,
 * WSE_MLM_IGNORE elsewhere).
 */
void wse_text_mlm_window(const struct wse_text *t, uint64_t offset, uint32_t context,
			 uint64_t *state, int32_t *x, float *mask, int32_t *y);

#endif /* WSE_TEXTMLM_H */
