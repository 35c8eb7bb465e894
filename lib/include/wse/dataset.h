/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/dataset.h: classification datasets in the IDX format of MNIST and
 * Fashion-MNIST (any rank, bytes or floats), plain or gzip-compressed, and
 * in CIFAR-10's binary format (library libwsedata, link with -lz).
 * Documentation/dataset.rst describes the formats and errors.
 *
 * The files are untrusted: every header field is checked, the data is read
 * incrementally (memory grows with what the file really holds, never with
 * what its header promises) and nothing larger than WSE_DATASET_MAX_BYTES
 * is accepted.
 */
#ifndef WSE_DATASET_H
#define WSE_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest images file accepted, in bytes of pixel data (1 GiB). */
#define WSE_DATASET_MAX_BYTES	(1ULL << 30)
/* Largest image side accepted, in pixels. */
#define WSE_DATASET_MAX_SIDE	65536U
/* Most dimensions of one sample (an IDX file has one more: the count). */
#define WSE_DATASET_MAX_RANK	4U

/* A sample's elements. */
enum wse_dataset_elem {
	WSE_DATASET_U8 = 1,	/* bytes (IDX type 0x08, CIFAR-10) */
	WSE_DATASET_F32 = 4,	/* floats in host order (IDX type 0x0D) */
};

struct wse_dataset {
	uint32_t count;		/* samples */
	uint32_t rank;		/* a sample's dimensions, 1..WSE_DATASET_MAX_RANK */
	uint32_t shape[WSE_DATASET_MAX_RANK];	/* outermost first: C, H, W */
	uint32_t rows, cols;	/* the last two of shape (rows 1 at rank 1) */
	enum wse_dataset_elem elem;
	uint32_t values;	/* elements per sample: the product of shape */
	uint32_t item;		/* bytes per sample: values * elem */
	uint32_t classes;	/* largest label + 1; 0 without labels */
	uint8_t *images;	/* count * item bytes, row-major, sample after sample */
	uint8_t *labels;	/* count bytes, or NULL for images alone */
};

/*
 * Loads an images file (IDX of unsigned bytes or 32-bit floats, 2 to
 * 1 + WSE_DATASET_MAX_RANK dimensions: the count, then a sample's shape)
 * and a labels file (IDX, unsigned bytes, 1 dimension: count), each plain
 * or gzip-compressed; @labels may be NULL for images alone (to predict
 * for: @ds->labels is then NULL and @ds->classes 0). An @images path
 * ending in ".bin" is a CIFAR-10 batch instead, which holds its labels:
 * @labels must then be NULL, and the labels are loaded all the same.
 * @ds need not be initialised; on success it owns the buffers, which
 * wse_dataset_free() releases.
 *
 * Returns 0, or a negative errno with @ds zeroed and a message naming the
 * file and what is wrong written into @err (may be NULL):
 *   -errno from open(2)	the file cannot be opened
 *   -EISDIR	the path is a directory
 *   -EINVAL	not an IDX file, wrong element type or number of dimensions,
 *		a float that is not finite, a CIFAR-10 file that is not whole
 *		records or holds a label over 9,
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
 * directory @dir, which holds SPLIT-images-idxR-ubyte (or -float, R from
 * 2 to 5) and SPLIT-labels-idx1-ubyte, each possibly with a ".gz" suffix
 * (the plain file is preferred when both are present). Without an images
 * file, a directory of CIFAR-10 batches will do: data_batch_1.bin,
 * data_batch_2.bin, ... for "train", test_batch.bin for "t10k". Errors as
 * wse_dataset_load(), plus -ENOENT naming the file that is missing and
 * -EINVAL for a split name that is empty or holds a '/'.
 */
int wse_dataset_load_dir(const char *dir, const char *split, struct wse_dataset *ds,
			 char *err, size_t errlen);

/*
 * Loads CIFAR-10 batch files @paths[0 .. @n - 1] (1 <= @n <= 16), one after
 * another: records of a label byte (0..9) and 3072 pixel bytes, a 3x32x32
 * image channel by channel. @ds gets shape 3x32x32 and the labels. Errors
 * as wse_dataset_load().
 */
int wse_dataset_load_cifar10(const char *const *paths, unsigned int n, struct wse_dataset *ds,
			     char *err, size_t errlen);

/*
 * Do @ds's samples fit a program whose input is @rank dimensions @shape of
 * floats (@f32) or bytes? A flat input (@rank 1) takes any sample of as
 * many elements; otherwise the shapes must agree but for leading 1s
 * (28x28 fits 1x28x28). Returns 0, or -EINVAL with both shapes in @err:
 * "the data's samples are 3x32x32, the program's input is 1x28x28".
 */
int wse_dataset_check_input(const struct wse_dataset *ds, const uint32_t *shape, uint32_t rank,
			    bool f32, char *err, size_t errlen);

/* "3x32x32": @ds's sample shape into @buf. */
void wse_dataset_shape_name(const struct wse_dataset *ds, char *buf, size_t len);

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
