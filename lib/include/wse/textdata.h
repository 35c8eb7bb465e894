/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/textdata.h: a character corpus for language models, in the order
 * models/gpt_data.py takes it (library libwsedata; Documentation/
 * dataset.rst, "Text"). wsetrain, wse-trainhost and wse-graphtrain all
 * take their text windows here, so all three and the PyTorch scripts see
 * the same batches.
 *
 *  - vocabulary of WSE_TEXT_VOCAB: '\n' is 0, printable ASCII 32..126 is
 *    1..95, any other byte a space;
 *  - the corpus is the files' bytes one after another; the last tenth is
 *    the validation split;
 *  - training window k (0-based, of a run seeded s) starts at draw k of
 *    splitmix64 seeded s, modulo (split - context - 1);
 *  - validation windows follow each other from the start of the split,
 *    every one that fits once.
 *
 * A window of context c at offset o is the ids o .. o + c - 1; its labels
 * are the next characters, o + 1 .. o + c.
 */
#ifndef WSE_TEXTDATA_H
#define WSE_TEXTDATA_H

#include <stddef.h>
#include <stdint.h>

#define WSE_TEXT_VOCAB		96
#define WSE_TEXT_MAX_FILES	16
/* Largest corpus read, in bytes. */
#define WSE_TEXT_MAX_BYTES	(1ULL << 30)

struct wse_text {
	int32_t *ids;		/* the corpus as character ids */
	uint64_t n;		/* characters */
	uint64_t split;		/* ids [0, split) train, [split, n) validate */
};

/*
 * Reads @count files (at most WSE_TEXT_MAX_FILES) into @t. Returns 0, or a
 * negative errno with a message naming the file in @err: -errno of
 * opening or reading it, -EFBIG past WSE_TEXT_MAX_BYTES, -ENOMEM.
 */
int wse_text_load(const char *const *paths, size_t count, struct wse_text *t, char *err,
		  size_t errlen);
void wse_text_free(struct wse_text *t);

/* -EINVAL unless both splits hold a window of @context (and its labels). */
int wse_text_check(const struct wse_text *t, uint32_t context, char *err, size_t errlen);

/* The id of byte @c, and the character of id @id (a space for none). */
int32_t wse_text_id(unsigned char c);
char wse_text_char(int32_t id);

/* Training window @k of the run seeded @seed: its offset. */
uint64_t wse_text_train_offset(const struct wse_text *t, uint64_t seed, uint64_t k,
			       uint32_t context);
/* Validation windows, and the offset of window @i of them. */
uint64_t wse_text_val_windows(const struct wse_text *t, uint32_t context);
uint64_t wse_text_val_offset(const struct wse_text *t, uint64_t i, uint32_t context);

/* The window at @offset: @context ids into @x and their next characters into @y. */
void wse_text_window(const struct wse_text *t, uint64_t offset, uint32_t context, int32_t *x,
		     int32_t *y);

#endif /* WSE_TEXTDATA_H */
