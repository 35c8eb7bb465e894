/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/dataset internals: one IDX file of unsigned bytes or floats. */
#ifndef WSE_DATASET_IDX_H
#define WSE_DATASET_IDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wse/dataset.h"

/* The count and a sample's dimensions. */
#define IDX_MAX_DIMS	(1U + WSE_DATASET_MAX_RANK)

#define IDX_TYPE_U8	0x08U
#define IDX_TYPE_F32	0x0DU

/* What a file must be: its role in messages, its ranks, whether f32 will do. */
struct idx_want {
	const char *what;	/* "images", "labels" */
	uint32_t min_dims, max_dims;
	bool f32;		/* element type 0x0D accepted beside 0x08 */
	uint32_t magic;		/* the usual magic, for messages: 0x00000803 */
};

struct idx_array {
	uint32_t ndims;
	uint32_t dims[IDX_MAX_DIMS];
	uint32_t type;		/* IDX_TYPE_U8 or IDX_TYPE_F32 */
	uint8_t *data;		/* the elements; floats in host order */
	size_t len;		/* bytes */
};

/*
 * Reads @path, plain or gzip-compressed, which must be an IDX file as
 * @want says. Floats are turned from the file's big-endian order into the
 * host's, and must be finite. Returns 0 or a negative errno with a message
 * in @err (see wse/dataset.h).
 */
int wsedata_idx_read(const char *path, const struct idx_want *want,
		     struct idx_array *out, char *err, size_t errlen);

/* "3x32x32": @rank dimensions @dims into @buf. */
void wsedata_shape_name(char *buf, size_t len, const uint32_t *dims, uint32_t rank);

/* snprintf into @err, which may be NULL. */
void wsedata_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* WSE_DATASET_IDX_H */
