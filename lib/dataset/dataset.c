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

int wse_dataset_load(const char *images, const char *labels, struct wse_dataset *ds,
		     char *err, size_t errlen)
{
	struct idx_array img, lab;
	uint8_t largest = 0;
	int ret;

	memset(ds, 0, sizeof(*ds));
	ret = wsedata_idx_read(images, 3, "images", &img, err, errlen);
	if (ret)
		return ret;
	if (!labels) {
		/* Images alone (to predict for): no labels, no classes. */
		ds->count = img.dims[0];
		ds->rows = img.dims[1];
		ds->cols = img.dims[2];
		ds->item = img.dims[1] * img.dims[2];
		ds->images = img.data;
		return 0;
	}
	ret = wsedata_idx_read(labels, 1, "labels", &lab, err, errlen);
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

	ds->count = img.dims[0];
	ds->rows = img.dims[1];
	ds->cols = img.dims[2];
	/* check_dims() bounded rows * cols by WSE_DATASET_MAX_BYTES. */
	ds->item = img.dims[1] * img.dims[2];
	ds->classes = (uint32_t)largest + 1;
	ds->images = img.data;
	ds->labels = lab.data;
	return 0;
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

int wse_dataset_load_dir(const char *dir, const char *split, struct wse_dataset *ds,
			 char *err, size_t errlen)
{
	char name[256], images[4096], labels[4096];
	int ret;

	memset(ds, 0, sizeof(*ds));
	if (!*split || strchr(split, '/') || strlen(split) > 128) {
		wsedata_err(err, errlen, "'%s': not a split name (the standard ones are train and t10k)",
			    split);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%s-images-idx3-ubyte", split);
	ret = find_file(dir, name, images, sizeof(images), err, errlen);
	if (ret)
		return ret;
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
