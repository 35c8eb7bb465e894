// SPDX-License-Identifier: GPL-2.0-only
/*
 * A text corpus as the job's data (--text, wse/textdata.h), for a program
 * over tokens: a training "sample" is a window of the program's context,
 * taken in the order of models/gpt_data.py (draw k of the shuffle seed's
 * splitmix64 stream); the test set is the validation split's windows, each
 * once. Labels are the next characters, a row per token.
 *
 * A program fed tokens and a padding mask (two inputs) over WSE_MLM_VOCAB
 * classes trains by masked LM on the same windows, corrupted as
 * models/bert_mlm.py does (wse/textmlm.h): a sample's record is its ids
 * then its mask's floats, its labels the characters to predict and -100
 * elsewhere. The training windows draw their corruption one after
 * another; every evaluation draws the validation windows' afresh.
 */
#include <string.h>

#include "train.h"
#include "wse/textmlm.h"

int train_text_open(struct train_job *j)
{
	const struct wsep_program *p = j->p;
	uint32_t context = wsep_label_rows(p);
	char err[512];

	/* Tokens and a padding mask, a row each, over the masked-LM vocabulary. */
	j->mlm = p->graph && wsep_graph_n_inputs(p->graph) == 2 &&
		 p->input_type == WSEP_ELEM_I32 && wsep_classes(p) == WSE_MLM_VOCAB &&
		 p->input_dim == 2 * context;
	/* Seeded as the windows' order is (schedule.c). */
	j->mlm_train = WSE_MLM_TRAIN_STREAM(j->o->seed_set ? j->o->seed : p->seed);
	if (!j->mlm && (p->input_type != WSEP_ELEM_I32 || wsep_classes(p) != WSE_TEXT_VOCAB ||
			p->input_dim != context))
		return train_fail("--text: %s is not a program over characters: it takes %u %s per sample and predicts %u classes for %u rows; a character model takes token ids (i32) and predicts %u classes for each, a masked-LM one tokens and a padding mask and %u classes",
				  p->model_name, p->input_dim, wsep_elem_name(p->input_type),
				  wsep_classes(p), wsep_label_rows(p), WSE_TEXT_VOCAB, WSE_MLM_VOCAB);
	if (wse_text_load(j->o->text, j->o->n_text, &j->text, err, sizeof(err)) ||
	    wse_text_check(&j->text, context, err, sizeof(err)))
		return train_fail("--text: %s", err);
	j->tokens = true;
	/* The splits as counts of windows: every training offset, every validation window. */
	j->train.count = (uint32_t)(j->text.split - context - 1);
	j->test.count = (uint32_t)wse_text_val_windows(&j->text, context);
	return 0;
}

void train_text_gather(struct train_job *j, bool validation, const uint32_t *perm,
		       uint32_t first, uint32_t count, uint8_t *x, int32_t *y)
{
	uint32_t context = j->rows, dim = j->p->input_dim;
	uint64_t *state = validation || !perm ? &j->mlm_val : &j->mlm_train;

	/* An evaluation takes the validation windows from the first, in order. */
	if ((validation || !perm) && first == 0)
		j->mlm_val = WSE_MLM_VAL_STREAM;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t at = validation || !perm ? wse_text_val_offset(&j->text, first + i, context)
						  : perm[first + i];
		int32_t *rec = (int32_t *)x + (size_t)i * dim;

		if (j->mlm)
			wse_text_mlm_window(&j->text, at, context, state, rec,
					    (float *)(rec + context), y + (size_t)i * context);
		else
			wse_text_window(&j->text, at, context, rec, y + (size_t)i * context);
	}
}

uint32_t train_text_counted(const struct train_job *j, const int32_t *y)
{
	uint32_t k = 0;

	for (uint32_t r = 0; r < j->rows; r++)
		k += y[r] != WSE_MLM_IGNORE;
	return k;
}
