/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/dataset.h: image classification datasets in the IDX format of MNIST
 * and Fashion-MNIST, plain or gzip-compressed (library libwsedata, link
 * with -lz). Documentation/dataset.rst describes the format and errors.
 *
 * The files are untrusted: every header field is checked, the data is read
 * incrementally (memory grows with what the file really holds, never with
 * what its header promises) and nothing larger than WSE_DATASET_MAX_BYTES
 * is accepted.
 */
#ifndef WSE_DATASET_H
#define WSE_DATASET_H

#include <stddef.h>
#include <stdint.h>

/* Largest images file accepted, in bytes of pixel data (1 GiB). */
#define WSE_DATASET_MAX_BYTES	(1ULL << 30)
/* Largest image side accepted, in pixels. */
#define WSE_DATASET_MAX_SIDE	65536U

struct wse_dataset {
	uint32_t count;		/* samples */
	uint32_t rows, cols;	/* image shape */
	uint32_t item;		/* bytes per sample: rows * cols */
	uint32_t classes;	/* largest label + 1; 0 without labels */
	uint8_t *images;	/* count * item bytes, row-major, sample after sample */
	uint8_t *labels;	/* count bytes, or NULL for images alone */
};

/*
 * Loads an images file (IDX, unsigned bytes, 3 dimensions: count, rows,
 * cols) and a labels file (IDX, unsigned bytes, 1 dimension: count), each
 * plain or gzip-compressed; @labels may be NULL for images alone (to
 * predict for: @ds->labels is then NULL and @ds->classes 0). @ds need not
 * be initialised; on success it owns the buffers, which wse_dataset_free()
 * releases.
 *
 * Returns 0, or a negative errno with @ds zeroed and a message naming the
 * file and what is wrong written into @err (may be NULL):
 *   -errno from open(2)	the file cannot be opened
 *   -EISDIR	the path is a directory
 *   -EINVAL	not an IDX file, wrong element type or number of dimensions,
 *		a zero dimension, a header or data shorter or longer than the
 *		header promises, labels and images that do not match
 *   -EFBIG	dimensions beyond WSE_DATASET_MAX_SIDE / WSE_DATASET_MAX_BYTES
 *   -EIO	a read error or corrupt gzip data
 *   -ENOMEM	out of memory
 */
int wse_dataset_load(const char *images, const char *labels, struct wse_dataset *ds,
		     char *err, size_t errlen);

/*
 * Loads split @split ("train" or "t10k" in the standard layout) from
 * directory @dir, which holds SPLIT-images-idx3-ubyte and
 * SPLIT-labels-idx1-ubyte, each possibly with a ".gz" suffix (the plain
 * file is preferred when both are present). Errors as wse_dataset_load(),
 * plus -ENOENT naming the file that is missing and -EINVAL for a split
 * name that is empty or holds a '/'.
 */
int wse_dataset_load_dir(const char *dir, const char *split, struct wse_dataset *ds,
			 char *err, size_t errlen);

/* Releases what a successful load allocated and zeroes @ds. Safe on a
 * zeroed dataset and on NULL.
 */
void wse_dataset_free(struct wse_dataset *ds);

/*
 * The order of epoch @epoch (0-based) over samples 0 .. @n - 1: a shuffle
 * that depends on @seed and @epoch alone (order.c), shared by wsetrain and
 * an appliance's input workers.
 */
void wse_dataset_order(uint32_t *perm, uint32_t n, uint64_t seed, uint32_t epoch);

/* Sample @i's pixels (item bytes). */
static inline const uint8_t *wse_dataset_image(const struct wse_dataset *ds, uint32_t i)
{
	return ds->images + (size_t)i * ds->item;
}

#endif /* WSE_DATASET_H */
