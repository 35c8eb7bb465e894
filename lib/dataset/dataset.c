// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A dataset: an images file and a labels file that must agree on the
 * number of samples. Documentation/dataset.rst.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wse/dataset.h"
#include "idx.h"

static const struct idx_want images_want = {
	.what = "images", .min_dims = 2, .max_dims = IDX_MAX_DIMS, .f32 = true, .magic = 0x803,
};
static const struct idx_want labels_want = {
	.what = "labels", .min_dims = 1, .max_dims = 1, .magic = 0x801,
};

/* The sample shape of an images array (its dimensions after the count). */
static void take_images(struct wse_dataset *ds, const struct idx_array *img)
{
	ds->count = img->dims[0];
	ds->rank = img->ndims - 1;
	ds->values = 1;
	for (uint32_t i = 0; i < ds->rank; i++) {
		ds->shape[i] = img->dims[i + 1];
		/* check_dims() bounded the product by WSE_DATASET_MAX_BYTES. */
		ds->values *= ds->shape[i];
	}
	ds->rows = ds->rank > 1 ? ds->shape[ds->rank - 2] : 1;
	ds->cols = ds->shape[ds->rank - 1];
	ds->elem = img->type == IDX_TYPE_F32 ? WSE_DATASET_F32 : WSE_DATASET_U8;
	ds->item = ds->values * (uint32_t)ds->elem;
	ds->images = img->data;
}

static bool is_cifar10_name(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && !strcmp(path + n - 4, ".bin");
}

int wse_dataset_load(const char *images, const char *labels, struct wse_dataset *ds,
		     char *err, size_t errlen)
{
	struct idx_array img, lab;
	uint8_t largest = 0;
	int ret;

	memset(ds, 0, sizeof(*ds));
	if (is_cifar10_name(images)) {
		if (labels) {
			wsedata_err(err, errlen, "%s: a CIFAR-10 batch holds its labels; %s is one too many",
				    images, labels);
			return -EINVAL;
		}
		return wse_dataset_load_cifar10(&images, 1, ds, err, errlen);
	}
	ret = wsedata_idx_read(images, &images_want, &img, err, errlen);
	if (ret)
		return ret;
	if (!labels) {
		/* Images alone (to predict for): no labels, no classes. */
		take_images(ds, &img);
		return 0;
	}
	ret = wsedata_idx_read(labels, &labels_want, &lab, err, errlen);
	if (ret) {
		free(img.data);
		return ret;
	}
	if (lab.dims[0] != img.dims[0]) {
		wsedata_err(err, errlen, "%s: %u labels but %s holds %u images",
			    labels, lab.dims[0], images, img.dims[0]);
		free(img.data);
		free(lab.data);
		return -EINVAL;
	}
	for (size_t i = 0; i < lab.len; i++)
		if (lab.data[i] > largest)
			largest = lab.data[i];

	take_images(ds, &img);
	ds->classes = (uint32_t)largest + 1;
	ds->labels = lab.data;
	return 0;
}

/* Leading 1s say nothing about a shape: 1x28x28 is 28x28. */
static uint32_t squeeze(const uint32_t **shape, uint32_t rank)
{
	while (rank > 1 && (*shape)[0] == 1) {
		(*shape)++;
		rank--;
	}
	return rank;
}

int wse_dataset_check_input(const struct wse_dataset *ds, const uint32_t *shape, uint32_t rank,
			    bool f32, char *err, size_t errlen)
{
	const uint32_t *a = ds->shape, *b = shape;
	uint32_t ra = ds->rank, rb = rank;
	unsigned long long values = 1;
	char mine[80], theirs[80];
	bool fits;

	for (uint32_t i = 0; i < rank; i++)
		values *= shape[i];
	if (rank == 1) {
		fits = ds->values == values;
	} else {
		ra = squeeze(&a, ra);
		rb = squeeze(&b, rb);
		fits = ra == rb && !memcmp(a, b, ra * sizeof(*a));
	}
	wse_dataset_shape_name(ds, mine, sizeof(mine));
	wsedata_shape_name(theirs, sizeof(theirs), shape, rank);
	if (!fits) {
		wsedata_err(err, errlen, "the data's samples are %s, the program's input is %s%s",
			    mine, theirs,
			    rank == 1 ? "" : " (give data of that shape, or compile the model for this one)");
		return -EINVAL;
	}
	if (f32 != (ds->elem == WSE_DATASET_F32)) {
		wsedata_err(err, errlen,
			    "the data's samples are %s %s, the program's input is %s %s (compile it for %s inputs: wsecc --input %s, or 'input N %s' in a model file)",
			    mine, ds->elem == WSE_DATASET_F32 ? "floats" : "bytes", theirs,
			    f32 ? "floats" : "bytes", ds->elem == WSE_DATASET_F32 ? "f32" : "u8",
			    ds->elem == WSE_DATASET_F32 ? "f32" : "u8",
			    ds->elem == WSE_DATASET_F32 ? "f32" : "u8");
		return -EINVAL;
	}
	return 0;
}

void wse_dataset_shape_name(const struct wse_dataset *ds, char *buf, size_t len)
{
	wsedata_shape_name(buf, len, ds->shape, ds->rank);
}

/* DIR/NAME if it exists, else DIR/NAME.gz; 0 or -ENOENT (-ENAMETOOLONG). */
static int find_file(const char *dir, const char *name, char *path, size_t len,
		     char *err, size_t errlen)
{
	int n;

	n = snprintf(path, len, "%s/%s", dir, name);
	if (n < 0 || (size_t)n + 3 >= len) {
		wsedata_err(err, errlen, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	/* Anything but absence (a permission, say) is for open() to report. */
	if (access(path, F_OK) == 0 || errno != ENOENT)
		return 0;
	strcat(path, ".gz");
	if (access(path, F_OK) == 0 || errno != ENOENT)
		return 0;
	if (access(dir, F_OK) != 0) {
		wsedata_err(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
		return -ENOENT;
	}
	wsedata_err(err, errlen, "%s: no %s or %s.gz", dir, name, name);
	return -ENOENT;
}

/* DIR/NAME or DIR/NAME.gz exists (or is there but unreadable: open() will say). */
static bool present(const char *dir, const char *name, char *path, size_t len)
{
	if (snprintf(path, len, "%s/%s", dir, name) >= (int)len - 3)
		return false;
	if (access(path, F_OK) == 0 || errno != ENOENT)
		return true;
	strcat(path, ".gz");
	return access(path, F_OK) == 0 || errno != ENOENT;
}

/*
 * SPLIT's images file of any rank and type: SPLIT-images-idx3-ubyte is
 * MNIST's name; R from 2 to 5 and "float" for floats extend it.
 */
static bool find_images(const char *dir, const char *split, char *path, size_t len)
{
	static const char *const types[] = { "ubyte", "float" };
	char name[256];

	for (unsigned int t = 0; t < 2; t++)
		for (unsigned int r = 3; r < 3 + IDX_MAX_DIMS - 1; r++) {
			/* 3 first, then 4, 5, and 2 last. */
			unsigned int rank = r > IDX_MAX_DIMS ? r - IDX_MAX_DIMS + 1 : r;

			snprintf(name, sizeof(name), "%s-images-idx%u-%s", split, rank, types[t]);
			if (present(dir, name, path, len))
				return true;
		}
	return false;
}

#define CIFAR10_MAX_BATCHES	16U

/* CIFAR-10's batches for @split in @dir: how many were found (0: none). */
static unsigned int find_cifar10(const char *dir, const char *split,
				 char paths[][4096], unsigned int max)
{
	unsigned int n = 0;

	if (!strcmp(split, "t10k") || !strcmp(split, "test")) {
		snprintf(paths[0], sizeof(paths[0]), "%s/test_batch.bin", dir);
		return access(paths[0], F_OK) == 0 || errno != ENOENT;
	}
	if (strcmp(split, "train"))
		return 0;
	while (n < max) {
		snprintf(paths[n], sizeof(paths[n]), "%s/data_batch_%u.bin", dir, n + 1);
		if (access(paths[n], F_OK) != 0 && errno == ENOENT)
			break;
		n++;
	}
	return n;
}

int wse_dataset_load_dir(const char *dir, const char *split, struct wse_dataset *ds,
			 char *err, size_t errlen)
{
	char (*cifar)[4096];
	const char *batches[CIFAR10_MAX_BATCHES];
	char name[256], images[4096], labels[4096];
	unsigned int n;
	int ret;

	memset(ds, 0, sizeof(*ds));
	if (!*split || strchr(split, '/') || strlen(split) > 128) {
		wsedata_err(err, errlen, "'%s': not a split name (the standard ones are train and t10k)",
			    split);
		return -EINVAL;
	}
	if (strlen(dir) > 4000) {
		wsedata_err(err, errlen, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	if (!find_images(dir, split, images, sizeof(images))) {
		cifar = malloc(CIFAR10_MAX_BATCHES * sizeof(*cifar));
		if (!cifar) {
			wsedata_err(err, errlen, "%s: out of memory", dir);
			return -ENOMEM;
		}
		n = find_cifar10(dir, split, cifar, CIFAR10_MAX_BATCHES);
		for (unsigned int i = 0; i < n; i++)
			batches[i] = cifar[i];
		ret = n ? wse_dataset_load_cifar10(batches, n, ds, err, errlen) : 0;
		free(cifar);
		if (n)
			return ret;
		snprintf(name, sizeof(name), "%s-images-idx3-ubyte", split);
		ret = find_file(dir, name, images, sizeof(images), err, errlen);
		if (ret) {
			if (ret == -ENOENT && access(dir, F_OK) == 0)
				wsedata_err(err, errlen,
					    "%s: no %s or %s.gz (nor another rank or -float), and no CIFAR-10 batches (%s)",
					    dir, name, name,
					    !strcmp(split, "train") ? "data_batch_1.bin" : "test_batch.bin");
			return ret;
		}
	}
	snprintf(name, sizeof(name), "%s-labels-idx1-ubyte", split);
	ret = find_file(dir, name, labels, sizeof(labels), err, errlen);
	if (ret)
		return ret;
	return wse_dataset_load(images, labels, ds, err, errlen);
}

void wse_dataset_free(struct wse_dataset *ds)
{
	if (!ds)
		return;
	free(ds->images);
	free(ds->labels);
	memset(ds, 0, sizeof(*ds));
}
