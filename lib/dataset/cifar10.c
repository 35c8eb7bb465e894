// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CIFAR-10's binary format: a batch file is records of 3073 bytes, a label
 * (0..9) and a 32x32 colour image as three planes, red, green, blue, each
 * row-major. The training set is data_batch_1.bin .. data_batch_5.bin,
 * the test set test_batch.bin; nothing in a file says what it is, so its
 * length and labels are all that can be checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wse/dataset.h"
#include "idx.h"

#define CIFAR10_SIDE	32U
#define CIFAR10_PIXELS	(3U * CIFAR10_SIDE * CIFAR10_SIDE)
#define CIFAR10_RECORD	(1U + CIFAR10_PIXELS)
#define CIFAR10_CLASSES	10U
#define CIFAR10_FILES	16U

/* Its length in records, from fstat: 0 and a message if it is not whole records. */
static int batch_records(FILE *f, const char *path, uint64_t *records, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fileno(f), &st) != 0) {
		wsedata_err(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode)) {
		wsedata_err(err, errlen, "%s: is a directory, not a CIFAR-10 batch", path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size % CIFAR10_RECORD) {
		wsedata_err(err, errlen,
			    "%s: %lld bytes is not a whole number of CIFAR-10 records (%u bytes: a label and a 3x32x32 image; CIFAR-100's 3074-byte records are not read)",
			    path, (long long)st.st_size, CIFAR10_RECORD);
		return -EINVAL;
	}
	*records = (uint64_t)st.st_size / CIFAR10_RECORD;
	return 0;
}

/* Appends @path's records to @ds, whose buffers hold @cap samples. */
static int read_batch(FILE *f, const char *path, uint64_t records, struct wse_dataset *ds,
		      char *err, size_t errlen)
{
	uint8_t rec[CIFAR10_RECORD];

	for (uint64_t r = 0; r < records; r++) {
		if (fread(rec, 1, sizeof(rec), f) != sizeof(rec)) {
			wsedata_err(err, errlen, "%s: %s at record %llu", path,
				    ferror(f) ? "read error" : "shorter than it was", (unsigned long long)r);
			return -EIO;
		}
		if (rec[0] >= CIFAR10_CLASSES) {
			wsedata_err(err, errlen,
				    "%s: record %llu has label %u; CIFAR-10's are 0 to 9 (is this CIFAR-100?)",
				    path, (unsigned long long)r, rec[0]);
			return -EINVAL;
		}
		ds->labels[ds->count] = rec[0];
		memcpy(ds->images + (size_t)ds->count * CIFAR10_PIXELS, rec + 1, CIFAR10_PIXELS);
		if (rec[0] + 1U > ds->classes)
			ds->classes = rec[0] + 1U;
		ds->count++;
	}
	return 0;
}

int wse_dataset_load_cifar10(const char *const *paths, unsigned int n, struct wse_dataset *ds,
			     char *err, size_t errlen)
{
	uint64_t records[CIFAR10_FILES], total = 0;
	FILE *f[CIFAR10_FILES] = { 0 };
	int ret = 0;

	memset(ds, 0, sizeof(*ds));
	if (n == 0 || n > CIFAR10_FILES) {
		wsedata_err(err, errlen, "%u CIFAR-10 batch files; 1 to %u are read", n, CIFAR10_FILES);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < n && !ret; i++) {
		f[i] = fopen(paths[i], "rb");
		if (!f[i]) {
			ret = -errno;
			wsedata_err(err, errlen, "%s: cannot open: %s", paths[i], strerror(errno));
			break;
		}
		ret = batch_records(f[i], paths[i], &records[i], err, errlen);
		total += ret ? 0 : records[i];
		if (!ret && total * CIFAR10_PIXELS > WSE_DATASET_MAX_BYTES) {
			wsedata_err(err, errlen, "%s: the batches hold %llu images, over the limit of %llu bytes",
				    paths[i], (unsigned long long)total, WSE_DATASET_MAX_BYTES);
			ret = -EFBIG;
		}
	}
	if (!ret) {
		ds->images = malloc(total * CIFAR10_PIXELS);
		ds->labels = malloc(total);
		if (!ds->images || !ds->labels) {
			wsedata_err(err, errlen, "%s: out of memory for %llu images", paths[0],
				    (unsigned long long)total);
			ret = -ENOMEM;
		}
	}
	for (unsigned int i = 0; i < n && !ret; i++)
		ret = read_batch(f[i], paths[i], records[i], ds, err, errlen);
	for (unsigned int i = 0; i < n; i++)
		if (f[i])
			fclose(f[i]);
	if (ret) {
		wse_dataset_free(ds);
		return ret;
	}
	ds->rank = 3;
	ds->shape[0] = 3;
	ds->shape[1] = CIFAR10_SIDE;
	ds->shape[2] = CIFAR10_SIDE;
	ds->rows = CIFAR10_SIDE;
	ds->cols = CIFAR10_SIDE;
	ds->elem = WSE_DATASET_U8;
	ds->values = CIFAR10_PIXELS;
	ds->item = CIFAR10_PIXELS;
	return 0;
}
