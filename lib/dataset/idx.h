/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/dataset internals: one IDX file of unsigned bytes. */
#ifndef WSE_DATASET_IDX_H
#define WSE_DATASET_IDX_H

#include <stddef.h>
#include <stdint.h>

#define IDX_MAX_DIMS	3U

struct idx_array {
	uint32_t ndims;
	uint32_t dims[IDX_MAX_DIMS];
	uint8_t *data;		/* dims[0] * ... * dims[ndims - 1] bytes */
	size_t len;
};

/*
 * Reads @path, plain or gzip-compressed, which must be an IDX file of
 * unsigned bytes with exactly @ndims dimensions (1..IDX_MAX_DIMS). @what
 * names the file's role in messages ("images", "labels"). Returns 0 or a
 * negative errno with a message in @err (see wse/dataset.h).
 */
int wsedata_idx_read(const char *path, uint32_t ndims, const char *what,
		     struct idx_array *out, char *err, size_t errlen);

/* snprintf into @err, which may be NULL. */
void wsedata_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* WSE_DATASET_IDX_H */
