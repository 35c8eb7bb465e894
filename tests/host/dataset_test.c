// SPDX-License-Identifier: GPL-2.0-only
/*
 * libwsedata: IDX files written here, plain and gzipped, loaded back; every
 * refusal with the message it must carry; and the real Fashion-MNIST
 * splits when Debian's dataset-fashion-mnist is installed.
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
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
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
	EXPECT_NE(NULL, strstr(self->err, "/labels: IDX file with 1 dimensions (magic 0x00000801); images files have 3 (0x00000803)"))
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
