// SPDX-License-Identifier: GPL-2.0-only
/*
 * A text corpus as the job's data (--text, wse/textdata.h), for a program
 * over tokens: a training "sample" is a window of the program's context,
 * taken in the order of models/gpt_data.py (draw k of the shuffle seed's
 * splitmix64 stream); the test set is the validation split's windows, each
 * once. Labels are the next characters, a row per token.
 */
#include <string.h>

#include "train.h"

int train_text_open(struct train_job *j)
{
	const struct wsep_program *p = j->p;
	uint32_t context = p->input_dim;
	char err[512];

	if (p->input_type != WSEP_ELEM_I32 || wsep_classes(p) != WSE_TEXT_VOCAB ||
	    wsep_label_rows(p) != context)
		return train_fail("--text: %s is not a program over characters: it takes %u %s per sample and predicts %u classes for %u rows; a character model takes token ids (i32) and predicts %u classes for each",
				  p->model_name, context, wsep_elem_name(p->input_type),
				  wsep_classes(p), wsep_label_rows(p), WSE_TEXT_VOCAB);
	if (wse_text_load(j->o->text, j->o->n_text, &j->text, err, sizeof(err)) ||
	    wse_text_check(&j->text, context, err, sizeof(err)))
		return train_fail("--text: %s", err);
	j->tokens = true;
	/* The splits as counts of windows: every training offset, every validation window. */
	j->train.count = (uint32_t)(j->text.split - context - 1);
	j->test.count = (uint32_t)wse_text_val_windows(&j->text, context);
	return 0;
}

void train_text_gather(const struct train_job *j, bool validation, const uint32_t *perm,
		       uint32_t first, uint32_t count, uint8_t *x, int32_t *y)
{
	uint32_t context = j->p->input_dim;

	for (uint32_t i = 0; i < count; i++) {
		uint64_t at = validation || !perm ? wse_text_val_offset(&j->text, first + i, context)
						  : perm[first + i];

		wse_text_window(&j->text, at, context, (int32_t *)x + (size_t)i * context,
				y + (size_t)i * context);
	}
}
