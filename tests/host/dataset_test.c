// SPDX-License-Identifier: GPL-2.0-only
/*
 * libwsedata: IDX files of any rank, bytes and floats, and CIFAR-10
 * batches, written here, plain and gzipped, loaded back; every refusal
 * with the message it must carry; the shape check against a program's
 * input; and the real Fashion-MNIST splits when Debian's
 * dataset-fashion-mnist is installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "kselftest_harness.h"
#include "wse/dataset.h"
#include "wse/splitmix64.h"
#include "wse/textdata.h"
#include "test_files.h"

#define FASHION_MNIST "/usr/share/datasets/fashion-mnist"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* An IDX header: magic then dims; returns its length. */
static size_t idx_header(uint8_t *p, uint32_t magic, uint32_t ndims, const uint32_t *dims)
{
	put32(p, magic);
	for (uint32_t i = 0; i < ndims; i++)
		put32(p + 4 + 4 * i, dims[i]);
	return 4 + 4 * (size_t)ndims;
}

/* The pixel every image test expects at sample i, byte j. */
static uint8_t pixel(uint32_t i, uint32_t j)
{
	return (uint8_t)(i * 31 + j * 7 + 1);
}

static int write_plain(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int write_gz(const char *path, const void *buf, size_t len)
{
	gzFile gz = gzopen(path, "wb");
	int ok;

	if (!gz)
		return -1;
	ok = len == 0 || gzwrite(gz, buf, (unsigned int)len) == (int)len;
	return gzclose(gz) == Z_OK && ok ? 0 : -1;
}

FIXTURE(data) {
	char dir[64];
	char images[128], labels[128];
	char err[512];
	struct wse_dataset ds;
};

FIXTURE_SETUP(data)
{
	strcpy(self->dir, "/tmp/wse_dataset_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->images, sizeof(self->images), "%s/images", self->dir);
	snprintf(self->labels, sizeof(self->labels), "%s/labels", self->dir);
	memset(&self->ds, 0xa5, sizeof(self->ds));	/* load must not need it zeroed */
	self->err[0] = 0;
}

FIXTURE_TEARDOWN(data)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* @count images of @rows x @cols, with pixel() values. */
static int make_images(const char *path, uint32_t count, uint32_t rows, uint32_t cols, int gz)
{
	uint32_t dims[3] = { count, rows, cols };
	size_t item = (size_t)rows * cols;
	uint8_t *buf = malloc(16 + count * item);
	size_t at;
	int ret;

	if (!buf)
		return -1;
	at = idx_header(buf, 0x803, 3, dims);
	for (uint32_t i = 0; i < count; i++)
		for (size_t j = 0; j < item; j++)
			buf[at++] = pixel(i, (uint32_t)j);
	ret = gz ? write_gz(path, buf, at) : write_plain(path, buf, at);
	free(buf);
	return ret;
}

/* @count labels, i % @classes each. */
static int make_labels(const char *path, uint32_t count, uint32_t classes, int gz)
{
	uint8_t *buf = malloc(8 + count);
	size_t at;
	int ret;

	if (!buf)
		return -1;
	at = idx_header(buf, 0x801, 1, &count);
	for (uint32_t i = 0; i < count; i++)
		buf[at++] = (uint8_t)(i % classes);
	ret = gz ? write_gz(path, buf, at) : write_plain(path, buf, at);
	free(buf);
	return ret;
}

/* Writes an images file made of a header and @data_len bytes of data. */
static int make_header_only(const char *path, uint32_t magic, uint32_t ndims,
			    const uint32_t *dims, size_t data_len)
{
	uint8_t *buf = calloc(1, 16 + data_len);
	size_t at;
	int ret;

	if (!buf)
		return -1;
	at = idx_header(buf, magic, ndims, dims);
	ret = write_plain(path, buf, at + data_len);
	free(buf);
	return ret;
}

static void check_contents(struct __test_metadata *_metadata, const struct wse_dataset *ds,
			   uint32_t count, uint32_t rows, uint32_t cols, uint32_t classes)
{
	ASSERT_EQ(count, ds->count);
	ASSERT_EQ(rows, ds->rows);
	ASSERT_EQ(cols, ds->cols);
	ASSERT_EQ(rows * cols, ds->item);
	ASSERT_EQ(classes, ds->classes);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *img = wse_dataset_image(ds, i);

		ASSERT_EQ(i % classes, ds->labels[i]);
		for (uint32_t j = 0; j < ds->item; j++) {
			ASSERT_EQ(pixel(i, j), img[j]) TH_LOG("sample %u byte %u", i, j);
		}
	}
}

TEST_F(data, plain_files_load)
{
	ASSERT_EQ(0, make_images(self->images, 7, 3, 5, 0));
	ASSERT_EQ(0, make_labels(self->labels, 7, 4, 0));
	ASSERT_EQ(0, wse_dataset_load(self->images, self->labels, &self->ds,
				      self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	check_contents(_metadata, &self->ds, 7, 3, 5, 4);
	wse_dataset_free(&self->ds);
	EXPECT_EQ(NULL, self->ds.images);
	EXPECT_EQ(0, self->ds.count);
	wse_dataset_free(&self->ds);	/* twice is harmless */
	wse_dataset_free(NULL);
}

TEST_F(data, gzipped_files_load)
{
	ASSERT_EQ(0, make_images(self->images, 9, 2, 6, 1));
	ASSERT_EQ(0, make_labels(self->labels, 9, 9, 1));
	ASSERT_EQ(0, wse_dataset_load(self->images, self->labels, &self->ds,
				      self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	check_contents(_metadata, &self->ds, 9, 2, 6, 9);
	wse_dataset_free(&self->ds);
}

/* Images alone, to predict for: no labels, no classes; a bad file still refused. */
TEST_F(data, images_without_labels)
{
	ASSERT_EQ(0, make_images(self->images, 5, 4, 3, 1));
	ASSERT_EQ(0, wse_dataset_load(self->images, NULL, &self->ds, self->err,
				      sizeof(self->err))) TH_LOG("%s", self->err);
	ASSERT_EQ(5, self->ds.count);
	ASSERT_EQ(12, self->ds.item);
	EXPECT_EQ(NULL, self->ds.labels);
	EXPECT_EQ(0, self->ds.classes);
	for (uint32_t i = 0; i < 5; i++)
		for (uint32_t j = 0; j < 12; j++)
			ASSERT_EQ(pixel(i, j), wse_dataset_image(&self->ds, i)[j]);
	wse_dataset_free(&self->ds);
	/* A labels file is not an images file. */
	ASSERT_EQ(0, make_labels(self->labels, 5, 4, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->labels, NULL, &self->ds, self->err,
					    sizeof(self->err)));
	EXPECT_EQ(NULL, self->ds.images);
}

/* More data than one read chunk, to cover the growing buffer. */
TEST_F(data, large_file_loads_in_pieces)
{
	ASSERT_EQ(0, make_images(self->images, 3000, 28, 28, 1));
	ASSERT_EQ(0, make_labels(self->labels, 3000, 10, 0));
	ASSERT_EQ(0, wse_dataset_load(self->images, self->labels, &self->ds,
				      self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	check_contents(_metadata, &self->ds, 3000, 28, 28, 10);
	wse_dataset_free(&self->ds);
}

TEST_F(data, directory_with_standard_names)
{
	char path[256];

	/* t10k: plain images and gzipped labels. */
	snprintf(path, sizeof(path), "%s/t10k-images-idx3-ubyte", self->dir);
	ASSERT_EQ(0, make_images(path, 4, 2, 2, 0));
	snprintf(path, sizeof(path), "%s/t10k-labels-idx1-ubyte.gz", self->dir);
	ASSERT_EQ(0, make_labels(path, 4, 3, 1));
	ASSERT_EQ(0, wse_dataset_load_dir(self->dir, "t10k", &self->ds,
					  self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	check_contents(_metadata, &self->ds, 4, 2, 2, 3);
	wse_dataset_free(&self->ds);

	/* Both present: the plain file wins (the .gz one here is broken). */
	snprintf(path, sizeof(path), "%s/t10k-images-idx3-ubyte.gz", self->dir);
	ASSERT_EQ(0, write_plain(path, "junk", 4));
	ASSERT_EQ(0, wse_dataset_load_dir(self->dir, "t10k", &self->ds,
					  self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	wse_dataset_free(&self->ds);

	/* train has images only. */
	snprintf(path, sizeof(path), "%s/train-images-idx3-ubyte.gz", self->dir);
	ASSERT_EQ(0, make_images(path, 4, 2, 2, 1));
	EXPECT_EQ(-ENOENT, wse_dataset_load_dir(self->dir, "train", &self->ds,
						self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "no train-labels-idx1-ubyte or train-labels-idx1-ubyte.gz"))
		TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, self->ds.images);

	EXPECT_EQ(-EINVAL, wse_dataset_load_dir(self->dir, "../x", &self->ds,
						self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "not a split name")) TH_LOG("%s", self->err);
	EXPECT_EQ(-EINVAL, wse_dataset_load_dir(self->dir, "", &self->ds,
						self->err, sizeof(self->err)));

	EXPECT_EQ(-ENOENT, wse_dataset_load_dir("/nonexistent/wse", "train", &self->ds,
						self->err, sizeof(self->err)));
	EXPECT_STREQ("/nonexistent/wse: cannot open: No such file or directory", self->err);
}

TEST_F(data, missing_file)
{
	ASSERT_EQ(0, make_labels(self->labels, 3, 3, 0));
	EXPECT_EQ(-ENOENT, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/images: cannot open: No such file or directory"))
		TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, self->ds.images);
	EXPECT_EQ(NULL, self->ds.labels);
	EXPECT_EQ(0, self->ds.count);

	ASSERT_EQ(0, make_images(self->images, 3, 2, 2, 0));
	ASSERT_EQ(0, unlink(self->labels));
	EXPECT_EQ(-ENOENT, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/labels: cannot open: No such file or directory"))
		TH_LOG("%s", self->err);

	/* A directory is not a file. */
	EXPECT_EQ(-EISDIR, wse_dataset_load(self->dir, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "is a directory")) TH_LOG("%s", self->err);
}

TEST_F(data, wrong_magic)
{
	uint32_t dims[3] = { 1, 1, 1 };
	uint8_t *buf;
	size_t len;

	ASSERT_EQ(0, make_header_only(self->images, 0x12345678, 3, dims, 1));
	ASSERT_EQ(0, make_labels(self->labels, 1, 1, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/images: not an IDX file (magic 0x12345678); expected 0x00000803"))
		TH_LOG("%s", self->err);

	/* Gzipped twice: one layer comes off and the gzip magic shows. */
	ASSERT_EQ(0, make_images(self->images, 2, 2, 2, 1));
	buf = test_read_file(self->images, &len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_gz(self->images, buf, len));
	free(buf);
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "not an IDX file (magic 0x1f8b08")) TH_LOG("%s", self->err);

	/* Signed bytes (0x09) are IDX but not something we read. */
	ASSERT_EQ(0, make_header_only(self->images, 0x903, 3, dims, 1));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "element type 0x09 is not supported")) TH_LOG("%s", self->err);
}

TEST_F(data, wrong_number_of_dimensions)
{
	ASSERT_EQ(0, make_images(self->images, 2, 2, 2, 0));
	ASSERT_EQ(0, make_labels(self->labels, 2, 2, 0));
	/* The two files swapped. */
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->labels, self->images, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/labels: IDX file with 1 dimensions (magic 0x00000801); images files have 2 to 5 (the count, then a sample's shape)"))
		TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, self->ds.images);
}

TEST_F(data, truncated_header)
{
	uint32_t dims[3] = { 1, 28, 28 };

	ASSERT_EQ(0, make_header_only(self->images, 0x803, 2, dims, 0));
	ASSERT_EQ(0, make_labels(self->labels, 1, 1, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "truncated header: 12 bytes; an IDX header with 3 dimensions is 16"))
		TH_LOG("%s", self->err);

	ASSERT_EQ(0, write_plain(self->images, "\0\0", 2));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "truncated header: 2 bytes")) TH_LOG("%s", self->err);

	ASSERT_EQ(0, write_plain(self->images, "", 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "empty file")) TH_LOG("%s", self->err);
}

TEST_F(data, truncated_or_overlong_data)
{
	uint32_t dims[3] = { 60000, 28, 28 };

	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 1234));
	ASSERT_EQ(0, make_labels(self->labels, 60000, 10, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/images: the header promises 60000 images of 28x28 (47040000 bytes) but the file holds 1234 bytes of data"))
		TH_LOG("%s", self->err);

	dims[0] = 2;
	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 2 * 28 * 28 + 1));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "promises 2 images of 28x28 (1568 bytes) but the file holds more data"))
		TH_LOG("%s", self->err);

	/* Labels too. */
	ASSERT_EQ(0, make_header_only(self->labels, 0x801, 1, dims, 1));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
}

TEST_F(data, counts_disagree)
{
	ASSERT_EQ(0, make_images(self->images, 6, 2, 2, 0));
	ASSERT_EQ(0, make_labels(self->labels, 5, 2, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/labels: 5 labels but ")) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, "/images holds 6 images")) TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, self->ds.images);
	EXPECT_EQ(NULL, self->ds.labels);
}

TEST_F(data, zero_dimension)
{
	uint32_t dims[3] = { 0, 28, 28 };

	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 0));
	ASSERT_EQ(0, make_labels(self->labels, 1, 1, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "promises 0 images of 28x28: dimension 0 is zero"))
		TH_LOG("%s", self->err);
}

TEST_F(data, corrupt_gzip)
{
	uint8_t *buf;
	size_t len;

	ASSERT_EQ(0, make_images(self->images, 50, 28, 28, 1));
	ASSERT_EQ(0, make_labels(self->labels, 50, 10, 0));
	buf = test_read_file(self->images, &len);
	ASSERT_NE(NULL, buf);
	ASSERT_GT(len, 40);

	/* A flipped byte in the deflate stream. */
	buf[len / 2] ^= 0x55;
	ASSERT_EQ(0, write_plain(self->images, buf, len));
	EXPECT_EQ(-EIO, wse_dataset_load(self->images, self->labels, &self->ds,
					 self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/images: corrupt gzip data: ")) TH_LOG("%s", self->err);
	buf[len / 2] ^= 0x55;

	/* A flipped byte in the trailer's CRC32: only the check catches it. */
	buf[len - 6] ^= 0x01;
	ASSERT_EQ(0, write_plain(self->images, buf, len));
	EXPECT_EQ(-EIO, wse_dataset_load(self->images, self->labels, &self->ds,
					 self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "corrupt gzip data: incorrect data check"))
		TH_LOG("%s", self->err);
	buf[len - 6] ^= 0x01;

	/* Cut short: the stream ends before its end marker. */
	ASSERT_EQ(0, write_plain(self->images, buf, len - 20));
	EXPECT_EQ(-EIO, wse_dataset_load(self->images, self->labels, &self->ds,
					 self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "corrupt gzip data: unexpected end of file"))
		TH_LOG("%s", self->err);
	free(buf);
	EXPECT_EQ(NULL, self->ds.images);
}

TEST_F(data, huge_dimensions)
{
	uint32_t dims[3] = { 0xffffffffU, 0xffffffffU, 0xffffffffU };

	ASSERT_EQ(0, make_labels(self->labels, 1, 1, 0));
	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 16));
	EXPECT_EQ(-EFBIG, wse_dataset_load(self->images, self->labels, &self->ds,
					   self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "dimension 1 is over the limit of 65536"))
		TH_LOG("%s", self->err);

	/* Sides allowed, total over 1 GiB (and over 2^32, to catch overflow). */
	dims[1] = 65536;
	dims[2] = 65536;
	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 16));
	EXPECT_EQ(-EFBIG, wse_dataset_load(self->images, self->labels, &self->ds,
					   self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "promises 4294967295 images of 65536x65536, over the limit of 1073741824 bytes"))
		TH_LOG("%s", self->err);

	dims[0] = 1025;
	dims[1] = 1024;
	dims[2] = 1024;
	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 16));
	EXPECT_EQ(-EFBIG, wse_dataset_load(self->images, self->labels, &self->ds,
					   self->err, sizeof(self->err)));

	/*
	 * Exactly the limit, claimed by a 32-byte file: refused as truncated,
	 * having allocated no more than the first read chunk.
	 */
	dims[0] = 1024;
	ASSERT_EQ(0, make_header_only(self->images, 0x803, 3, dims, 16));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds,
					    self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "(1073741824 bytes) but the file holds 16 bytes of data"))
		TH_LOG("%s", self->err);

	/* A labels file as long as the cap allows is a size, not an error. */
	dims[0] = 0x40000001U;
	ASSERT_EQ(0, make_header_only(self->labels, 0x801, 1, dims, 0));
	ASSERT_EQ(0, make_images(self->images, 1, 1, 1, 0));
	EXPECT_EQ(-EFBIG, wse_dataset_load(self->images, self->labels, &self->ds,
					   self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/labels: the header promises 1073741825 labels, over the limit"))
		TH_LOG("%s", self->err);
}

/* The same labels file the idx3 tests use, under a split's standard name. */
static void split_path(char *path, size_t len, const char *dir, const char *split,
		       const char *rest)
{
	snprintf(path, len, "%s/%s-%s", dir, split, rest);
}

/* N x C x H x W bytes: pixel() over each sample's flat index. */
TEST_F(data, rank_four_bytes)
{
	uint32_t dims[4] = { 5, 3, 4, 2 };
	uint8_t buf[20 + 5 * 24];
	char path[256];
	size_t at = idx_header(buf, 0x804, 4, dims);

	for (uint32_t i = 0; i < 5; i++)
		for (uint32_t j = 0; j < 24; j++)
			buf[at++] = pixel(i, j);
	split_path(path, sizeof(path), self->dir, "train", "images-idx4-ubyte.gz");
	ASSERT_EQ(0, write_gz(path, buf, at));
	split_path(path, sizeof(path), self->dir, "train", "labels-idx1-ubyte");
	ASSERT_EQ(0, make_labels(path, 5, 3, 0));
	ASSERT_EQ(0, wse_dataset_load_dir(self->dir, "train", &self->ds, self->err,
					  sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(3, self->ds.rank);
	EXPECT_EQ(3, self->ds.shape[0]);
	EXPECT_EQ(4, self->ds.shape[1]);
	EXPECT_EQ(2, self->ds.shape[2]);
	EXPECT_EQ(WSE_DATASET_U8, self->ds.elem);
	EXPECT_EQ(24, self->ds.values);
	EXPECT_EQ(24, self->ds.item);
	EXPECT_EQ(4, self->ds.rows);
	EXPECT_EQ(2, self->ds.cols);
	EXPECT_EQ(3, self->ds.classes);
	for (uint32_t i = 0; i < 5; i++) {
		ASSERT_EQ(i % 3, self->ds.labels[i]);
		for (uint32_t j = 0; j < 24; j++)
			ASSERT_EQ(pixel(i, j), wse_dataset_image(&self->ds, i)[j]);
	}
	wse_dataset_free(&self->ds);

	/* Rank 2: flat samples. */
	dims[1] = 6;
	at = idx_header(buf, 0x802, 2, dims);
	memset(buf + at, 7, 30);
	ASSERT_EQ(0, write_plain(self->images, buf, at + 30));
	ASSERT_EQ(0, make_labels(self->labels, 5, 2, 0));
	ASSERT_EQ(0, wse_dataset_load(self->images, self->labels, &self->ds, self->err,
				      sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(1, self->ds.rank);
	EXPECT_EQ(6, self->ds.item);
	wse_dataset_free(&self->ds);

	/* Rank 6 is one more than a sample's 4 dimensions allow. */
	{
		const uint32_t six[6] = { 1, 1, 1, 1, 1, 1 };

		at = idx_header(buf, 0x806, 6, six);
		buf[at++] = 0;
		ASSERT_EQ(0, write_plain(self->images, buf, at));
	}
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds, self->err,
					    sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "IDX file with 6 dimensions (magic 0x00000806); images files have 2 to 5"))
		TH_LOG("%s", self->err);
}

/* Big-endian floats, as IDX type 0x0D writes them. */
static size_t put_float(uint8_t *p, float f)
{
	uint32_t bits;

	memcpy(&bits, &f, 4);
	put32(p, bits);
	return 4;
}

TEST_F(data, rank_four_floats)
{
	uint32_t dims[4] = { 3, 2, 2, 2 };
	uint8_t buf[20 + 3 * 8 * 4];
	char path[256];
	size_t at = idx_header(buf, 0xd04, 4, dims);
	const float *x;

	for (uint32_t i = 0; i < 24; i++)
		at += put_float(buf + at, (float)i * -0.25f + 1e-3f);
	split_path(path, sizeof(path), self->dir, "t10k", "images-idx4-float");
	ASSERT_EQ(0, write_plain(path, buf, at));
	split_path(path, sizeof(path), self->dir, "t10k", "labels-idx1-ubyte.gz");
	ASSERT_EQ(0, make_labels(path, 3, 2, 1));
	ASSERT_EQ(0, wse_dataset_load_dir(self->dir, "t10k", &self->ds, self->err,
					  sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(WSE_DATASET_F32, self->ds.elem);
	EXPECT_EQ(3, self->ds.count);
	EXPECT_EQ(8, self->ds.values);
	EXPECT_EQ(32, self->ds.item);
	x = (const float *)wse_dataset_image(&self->ds, 2);
	EXPECT_EQ((float)16 * -0.25f + 1e-3f, x[0]);
	EXPECT_EQ((float)23 * -0.25f + 1e-3f, x[7]);
	wse_dataset_free(&self->ds);

	/* A NaN is named by its place. */
	put_float(buf + 20 + 4 * 9, __builtin_nanf(""));
	ASSERT_EQ(0, write_plain(self->images, buf, at));
	ASSERT_EQ(0, make_labels(self->labels, 3, 2, 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds, self->err,
					    sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/images: element 9 is NaN; a float dataset must be finite"))
		TH_LOG("%s", self->err);

	/* Floats promised, too few given: the size counts 4 bytes each. */
	ASSERT_EQ(0, write_plain(self->images, buf, at - 1));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds, self->err,
					    sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "promises 3 images of 2x2x2 floats (96 bytes) but the file holds 95"))
		TH_LOG("%s", self->err);

	/* Labels are bytes. */
	put_float(buf + 20 + 4 * 9, 0.5f);
	ASSERT_EQ(0, write_plain(self->images, buf, at));
	dims[0] = 3;
	ASSERT_EQ(0, make_header_only(self->labels, 0xd01, 1, dims, 12));
	EXPECT_EQ(-EINVAL, wse_dataset_load(self->images, self->labels, &self->ds, self->err,
					    sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/labels: IDX element type 0x0d is not supported; expected 0x08"))
		TH_LOG("%s", self->err);
}

#define CIFAR_RECORD	3073U

/* A CIFAR-10 batch of @n records: label (first + i) % 10, pixel() bytes. */
static int make_cifar(const char *path, uint32_t first, uint32_t n, size_t extra)
{
	uint8_t *buf = calloc(1, (size_t)n * CIFAR_RECORD + extra);
	int ret;

	if (!buf)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		buf[(size_t)i * CIFAR_RECORD] = (uint8_t)((first + i) % 10);
		for (uint32_t j = 0; j < 3072; j++)
			buf[(size_t)i * CIFAR_RECORD + 1 + j] = pixel(first + i, j);
	}
	ret = write_plain(path, buf, (size_t)n * CIFAR_RECORD + extra);
	free(buf);
	return ret;
}

TEST_F(data, cifar10_batches)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/data_batch_1.bin", self->dir);
	ASSERT_EQ(0, make_cifar(path, 0, 7, 0));
	snprintf(path, sizeof(path), "%s/data_batch_2.bin", self->dir);
	ASSERT_EQ(0, make_cifar(path, 7, 5, 0));
	/* 4 is not 3's successor: not read. */
	snprintf(path, sizeof(path), "%s/data_batch_4.bin", self->dir);
	ASSERT_EQ(0, make_cifar(path, 0, 1, 1));
	ASSERT_EQ(0, wse_dataset_load_dir(self->dir, "train", &self->ds, self->err,
					  sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(12, self->ds.count);
	EXPECT_EQ(3, self->ds.rank);
	EXPECT_EQ(3, self->ds.shape[0]);
	EXPECT_EQ(32, self->ds.shape[1]);
	EXPECT_EQ(32, self->ds.shape[2]);
	EXPECT_EQ(3072, self->ds.item);
	EXPECT_EQ(WSE_DATASET_U8, self->ds.elem);
	EXPECT_EQ(10, self->ds.classes);
	for (uint32_t i = 0; i < 12; i++) {
		const uint8_t *img = wse_dataset_image(&self->ds, i);

		ASSERT_EQ(i % 10, self->ds.labels[i]);
		/* Channel-major: red plane, green (byte 1024), blue (2048). */
		ASSERT_EQ(pixel(i, 0), img[0]);
		ASSERT_EQ(pixel(i, 1024 + 33), img[1024 + 33]);
		ASSERT_EQ(pixel(i, 3071), img[3071]);
	}
	wse_dataset_free(&self->ds);

	/* No test batch yet: both formats named. */
	EXPECT_EQ(-ENOENT, wse_dataset_load_dir(self->dir, "t10k", &self->ds, self->err,
						sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "no t10k-images-idx3-ubyte or t10k-images-idx3-ubyte.gz (nor another rank or -float), and no CIFAR-10 batches (test_batch.bin)"))
		TH_LOG("%s", self->err);

	/* The test batch, from the directory or as a file (labels and all). */
	snprintf(path, sizeof(path), "%s/test_batch.bin", self->dir);
	ASSERT_EQ(0, make_cifar(path, 3, 4, 0));
	ASSERT_EQ(0, wse_dataset_load_dir(self->dir, "t10k", &self->ds, self->err,
					  sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(4, self->ds.count);
	wse_dataset_free(&self->ds);
	ASSERT_EQ(0, wse_dataset_load(path, NULL, &self->ds, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_EQ(4, self->ds.count);
	EXPECT_EQ(3, self->ds.labels[0]);
	EXPECT_EQ(pixel(6, 100), wse_dataset_image(&self->ds, 3)[100]);
	wse_dataset_free(&self->ds);
	EXPECT_EQ(-EINVAL, wse_dataset_load(path, self->labels, &self->ds, self->err,
					    sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "test_batch.bin: a CIFAR-10 batch holds its labels"))
		TH_LOG("%s", self->err);
}

TEST_F(data, cifar10_refusals)
{
	char path[256];
	uint8_t bad[CIFAR_RECORD] = { 10 };

	snprintf(path, sizeof(path), "%s/x.bin", self->dir);
	/* A record and a byte: not whole records. */
	ASSERT_EQ(0, make_cifar(path, 0, 1, 1));
	EXPECT_EQ(-EINVAL, wse_dataset_load(path, NULL, &self->ds, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "x.bin: 3074 bytes is not a whole number of CIFAR-10 records (3073 bytes"))
		TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, self->ds.images);

	ASSERT_EQ(0, write_plain(path, "", 0));
	EXPECT_EQ(-EINVAL, wse_dataset_load(path, NULL, &self->ds, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "x.bin: 0 bytes is not a whole number")) TH_LOG("%s", self->err);

	/* Label 10 is not CIFAR-10's. */
	ASSERT_EQ(0, make_cifar(path, 0, 2, 0));
	{
		FILE *f = fopen(path, "ab");

		ASSERT_NE(NULL, f);
		ASSERT_EQ(1, fwrite(bad, sizeof(bad), 1, f));
		ASSERT_EQ(0, fclose(f));
	}
	EXPECT_EQ(-EINVAL, wse_dataset_load(path, NULL, &self->ds, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "x.bin: record 2 has label 10; CIFAR-10's are 0 to 9"))
		TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, self->ds.labels);

	snprintf(path, sizeof(path), "%s/none.bin", self->dir);
	EXPECT_EQ(-ENOENT, wse_dataset_load(path, NULL, &self->ds, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "none.bin: cannot open: No such file")) TH_LOG("%s", self->err);
}

TEST_F(data, shape_against_the_program)
{
	const uint32_t mnist[3] = { 1, 28, 28 }, cifar[3] = { 3, 32, 32 }, flat[1] = { 3072 };
	char path[256];

	snprintf(path, sizeof(path), "%s/b.bin", self->dir);
	ASSERT_EQ(0, make_cifar(path, 0, 2, 0));
	ASSERT_EQ(0, wse_dataset_load(path, NULL, &self->ds, self->err, sizeof(self->err)));
	EXPECT_EQ(0, wse_dataset_check_input(&self->ds, cifar, 3, false, self->err,
					     sizeof(self->err))) TH_LOG("%s", self->err);
	/* A flat input takes any sample of as many values. */
	EXPECT_EQ(0, wse_dataset_check_input(&self->ds, flat, 1, false, self->err,
					     sizeof(self->err)));
	EXPECT_EQ(-EINVAL, wse_dataset_check_input(&self->ds, mnist, 3, false, self->err,
						   sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "the data's samples are 3x32x32, the program's input is 1x28x28"))
		TH_LOG("%s", self->err);
	/* As many values, another shape: still refused. */
	{
		const uint32_t other[3] = { 32, 32, 3 };

		EXPECT_EQ(-EINVAL, wse_dataset_check_input(&self->ds, other, 3, false, self->err,
							   sizeof(self->err)));
		EXPECT_NE(NULL, strstr(self->err, "are 3x32x32, the program's input is 32x32x3"))
			TH_LOG("%s", self->err);
	}
	EXPECT_EQ(-EINVAL, wse_dataset_check_input(&self->ds, cifar, 3, true, self->err,
						   sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "the data's samples are 3x32x32 bytes, the program's input is 3x32x32 floats (compile it for u8 inputs"))
		TH_LOG("%s", self->err);
	wse_dataset_free(&self->ds);

	/* MNIST's 28x28 is a 1x28x28 input; 784 values too. */
	ASSERT_EQ(0, make_images(self->images, 2, 28, 28, 0));
	ASSERT_EQ(0, wse_dataset_load(self->images, NULL, &self->ds, self->err, sizeof(self->err)));
	EXPECT_EQ(0, wse_dataset_check_input(&self->ds, mnist, 3, false, self->err,
					     sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(-EINVAL, wse_dataset_check_input(&self->ds, flat, 1, false, self->err,
						   sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "the data's samples are 28x28, the program's input is 3072"))
		TH_LOG("%s", self->err);
}

TEST_F(data, short_or_missing_error_buffer)
{
	char small[8];

	EXPECT_EQ(-ENOENT, wse_dataset_load(self->images, self->labels, &self->ds, small,
					    sizeof(small)));
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	EXPECT_EQ(-ENOENT, wse_dataset_load(self->images, self->labels, &self->ds, NULL, 0));
}

static void check_fashion_split(struct __test_metadata *_metadata, const char *split,
				uint32_t count)
{
	struct wse_dataset ds;
	uint32_t per_class[256] = { 0 };
	char err[512];

	ASSERT_EQ(0, wse_dataset_load_dir(FASHION_MNIST, split, &ds, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(count, ds.count);
	EXPECT_EQ(28, ds.rows);
	EXPECT_EQ(28, ds.cols);
	EXPECT_EQ(784, ds.item);
	EXPECT_EQ(10, ds.classes);
	/* Fashion-MNIST is balanced: a tenth of each split per class. */
	for (uint32_t i = 0; i < ds.count; i++)
		per_class[ds.labels[i]]++;
	for (uint32_t c = 0; c < 10; c++) {
		EXPECT_EQ(count / 10, per_class[c]) TH_LOG("%s class %u", split, c);
	}
	wse_dataset_free(&ds);
}

TEST(fashion_mnist_from_debian)
{
	struct stat st;

	if (stat(FASHION_MNIST, &st) != 0)
		SKIP(return, "%s is not there (Debian package dataset-fashion-mnist)",
		     FASHION_MNIST);
	check_fashion_split(_metadata, "train", 60000);
	check_fashion_split(_metadata, "t10k", 10000);
}

/*
 * The text corpus (wse/textdata.h) as models/gpt_data.py takes it: ids,
 * the split, training draws, every validation window once.
 */
TEST(text_corpus_and_its_windows)
{
	char path[2][64] = { "/tmp/text-a-XXXXXX", "/tmp/text-b-XXXXXX" };
	const char *paths[2] = { path[0], path[1] };
	struct wse_text t;
	char err[256];
	int32_t x[4], y[4];
	uint64_t state = 7;
	FILE *f;

	for (int i = 0; i < 2; i++) {
		int fd = mkstemp(path[i]);

		ASSERT_LE(0, fd);
		f = fdopen(fd, "w");
		/* 60 characters each: a newline, printable ASCII, a byte outside it. */
		for (int c = 0; c < 60; c++)
			fputc(c == 0 ? '\n' : c == 1 ? 0xe9 : 'A' + (c + i) % 26, f);
		fclose(f);
	}
	ASSERT_EQ(0, wse_text_load(paths, 2, &t, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(120, t.n);
	EXPECT_EQ(108, t.split);	/* the last tenth validates */
	EXPECT_EQ(0, t.ids[0]);
	EXPECT_EQ(' ' - 31, t.ids[1]);	/* not ASCII: a space */
	EXPECT_EQ('A' + 2 - 31, t.ids[2]);
	EXPECT_EQ('\n', wse_text_char(0));
	EXPECT_EQ('Z', wse_text_char('Z' - 31));
	EXPECT_EQ(0, wse_text_check(&t, 4, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, wse_text_check(&t, 12, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "too short for windows of 12"));
	/* Training window k: draw k of splitmix64 seeded 7, modulo split - context - 1. */
	for (uint64_t k = 0; k < 5; k++)
		EXPECT_EQ(wse_splitmix64(&state) % (108 - 4 - 1), wse_text_train_offset(&t, 7, k, 4));
	/* Validation: (12 - 1) / 4 = 2 windows, one after the other, wrapping. */
	EXPECT_EQ(2, wse_text_val_windows(&t, 4));
	EXPECT_EQ(108, wse_text_val_offset(&t, 0, 4));
	EXPECT_EQ(112, wse_text_val_offset(&t, 1, 4));
	EXPECT_EQ(108, wse_text_val_offset(&t, 2, 4));
	wse_text_window(&t, 2, 4, x, y);
	EXPECT_EQ(0, memcmp(x, t.ids + 2, sizeof(x)));
	EXPECT_EQ(0, memcmp(y, t.ids + 3, sizeof(y)));
	wse_text_free(&t);
	path[1][0] = 'X';
	EXPECT_EQ(-ENOENT, wse_text_load(paths, 2, &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "Xtmp/text-b")) TH_LOG("%s", err);
	unlink(path[0]);
	path[1][0] = '/';
	unlink(path[1]);
}

TEST_HARNESS_MAIN
