// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One IDX file of unsigned bytes or floats, plain or gzip-compressed.
 *
 * Layout (all integers big-endian):
 *   u8  0, 0		the magic's two zero bytes
 *   u8  type		0x08: unsigned byte; 0x0D: 32-bit float (images only)
 *   u8  ndims		number of dimensions
 *   u32 dims[ndims]	sizes, outermost first
 *   data[]		dims[0] * ... * dims[ndims - 1] elements, big-endian,
 *			nothing after
 *
 * zlib's gz* interface reads plain files unchanged ("transparent" mode), so
 * one path serves both. The header is untrusted: memory is grown as data
 * actually arrives, so a short file claiming a huge size costs nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "wse/dataset.h"
#include "idx.h"

#define READ_CHUNK	(1U << 20)	/* bytes per gzread and first allocation */

void wsedata_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads up to @len bytes; fewer only at end of file. -EIO on error. */
static long long read_some(gzFile gz, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		size_t want = len - got < READ_CHUNK ? len - got : READ_CHUNK;
		int n = gzread(gz, (uint8_t *)buf + got, (unsigned int)want);

		if (n < 0)
			return -EIO;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (long long)got;
}

/*
 * A short read is either the end of the data or a gzip stream that stopped
 * early or is damaged; zlib reports the latter only through gzerror().
 */
static int gz_failed(gzFile gz, const char *path, char *err, size_t errlen)
{
	int zerr;
	const char *msg = gzerror(gz, &zerr);

	if (zerr == Z_OK)
		return 0;
	if (zerr == Z_ERRNO) {
		wsedata_err(err, errlen, "%s: read error: %s", path, strerror(errno));
		return -EIO;
	}
	if (zerr == Z_MEM_ERROR) {
		wsedata_err(err, errlen, "%s: out of memory decompressing", path);
		return -ENOMEM;
	}
	/* zlib names the stream "<fd:N>: ..."; the caller's path is better. */
	if (strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ": "))
		msg = strstr(msg, ": ") + 2;
	wsedata_err(err, errlen, "%s: corrupt gzip data: %s", path, msg);
	return -EIO;
}

void wsedata_shape_name(char *buf, size_t len, const uint32_t *dims, uint32_t rank)
{
	size_t at = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < rank && at < len; i++) {
		int n = snprintf(buf + at, len - at, i ? "x%u" : "%u", dims[i]);

		if (n < 0)
			break;
		at += (size_t)n;
	}
}

/* What the header promises, for messages: "60000 images of 28x28". */
static void describe(char *buf, size_t len, const char *what, const struct idx_array *a)
{
	char shape[80];

	if (a->ndims == 1) {
		snprintf(buf, len, "%u %s", a->dims[0], what);
		return;
	}
	wsedata_shape_name(shape, sizeof(shape), a->dims + 1, a->ndims - 1);
	snprintf(buf, len, "%u %s of %s%s", a->dims[0], what, shape,
		 a->type == IDX_TYPE_F32 ? " floats" : "");
}

static uint32_t elem_size(uint32_t type)
{
	return type == IDX_TYPE_F32 ? 4 : 1;
}

static void dims_wanted(char *buf, size_t len, const struct idx_want *w)
{
	if (w->min_dims == w->max_dims)
		snprintf(buf, len, "%u (0x%08x)", w->min_dims, w->magic);
	else
		snprintf(buf, len, "%u to %u (the count, then a sample's shape)", w->min_dims,
			 w->max_dims);
}

static int read_header(gzFile gz, const char *path, const struct idx_want *w,
		       struct idx_array *a, char *err, size_t errlen)
{
	uint8_t h[4 + 4 * IDX_MAX_DIMS];
	size_t header_len = 4;
	uint32_t magic, ndims = 0;
	char wanted[80];
	long long got;
	int ret;

	got = read_some(gz, h, 4);
	if (got == 4) {
		magic = be32(h);
		if (magic >> 16) {
			wsedata_err(err, errlen,
				    "%s: not an IDX file (magic 0x%08x); expected 0x%08x",
				    path, magic, w->magic);
			return -EINVAL;
		}
		if (h[2] != IDX_TYPE_U8 && !(w->f32 && h[2] == IDX_TYPE_F32)) {
			wsedata_err(err, errlen,
				    "%s: IDX element type 0x%02x is not supported; expected 0x%02x (unsigned byte, magic 0x%08x)%s",
				    path, h[2], IDX_TYPE_U8, w->magic,
				    w->f32 ? " or 0x0d (32-bit float)" : "");
			return -EINVAL;
		}
		ndims = h[3];
		if (ndims < w->min_dims || ndims > w->max_dims) {
			dims_wanted(wanted, sizeof(wanted), w);
			wsedata_err(err, errlen,
				    "%s: IDX file with %u dimensions (magic 0x%08x); %s files have %s",
				    path, ndims, magic, w->what, wanted);
			return -EINVAL;
		}
		a->type = h[2];
		header_len = 4 + 4 * (size_t)ndims;
		got = read_some(gz, h + 4, header_len - 4);
		if (got >= 0)
			got += 4;
	}
	if (got < 0 || (size_t)got < header_len) {
		ret = gz_failed(gz, path, err, errlen);
		if (ret)
			return ret;
		if (got == 0) {
			wsedata_err(err, errlen, "%s: empty file; expected an IDX file (magic 0x%08x)",
				    path, w->magic);
			return -EINVAL;
		}
		if (got < 4)
			wsedata_err(err, errlen, "%s: truncated header: %lld bytes; an IDX header is at least 4",
				    path, got);
		else
			wsedata_err(err, errlen,
				    "%s: truncated header: %lld bytes; an IDX header with %u dimensions is %zu",
				    path, got, ndims, header_len);
		return -EINVAL;
	}
	a->ndims = ndims;
	for (uint32_t i = 0; i < ndims; i++)
		a->dims[i] = be32(h + 4 + 4 * i);
	return 0;
}

/* Checks the dimensions and returns the data size they promise in *len. */
static int check_dims(const char *path, const char *what, const struct idx_array *a,
		      size_t *len, char *err, size_t errlen)
{
	unsigned long long total;
	char promise[128];

	describe(promise, sizeof(promise), what, a);
	for (uint32_t i = 0; i < a->ndims; i++) {
		if (!a->dims[i]) {
			wsedata_err(err, errlen, "%s: the header promises %s: dimension %u is zero",
				    path, promise, i);
			return -EINVAL;
		}
		if (i > 0 && a->dims[i] > WSE_DATASET_MAX_SIDE) {
			wsedata_err(err, errlen, "%s: the header promises %s: dimension %u is over the limit of %u",
				    path, promise, i, WSE_DATASET_MAX_SIDE);
			return -EFBIG;
		}
	}
	total = elem_size(a->type);
	for (uint32_t i = 0; i < a->ndims; i++) {
		/* Each factor is below 2^32 and the running total at most 2^30: no overflow. */
		total *= a->dims[i];
		if (total > WSE_DATASET_MAX_BYTES) {
			wsedata_err(err, errlen, "%s: the header promises %s, over the limit of %llu bytes",
				    path, promise, WSE_DATASET_MAX_BYTES);
			return -EFBIG;
		}
	}
	*len = (size_t)total;
	return 0;
}

/* Reads exactly @need bytes of data, growing the buffer as they arrive. */
static int read_data(gzFile gz, const char *path, const char *what, struct idx_array *a,
		     size_t need, char *err, size_t errlen)
{
	size_t cap = need < READ_CHUNK ? need : READ_CHUNK;
	char promise[128];
	uint8_t extra;
	long long got;
	int ret;

	a->data = malloc(cap);
	if (!a->data)
		goto nomem;
	a->len = 0;
	while (a->len < need) {
		if (a->len == cap) {
			size_t grown = cap > need / 2 ? need : cap * 2;
			uint8_t *p = realloc(a->data, grown);

			if (!p)
				goto nomem;
			a->data = p;
			cap = grown;
		}
		got = read_some(gz, a->data + a->len, cap - a->len);
		if (got < 0)
			break;
		a->len += (size_t)got;
		if (a->len < cap)
			break;	/* end of file */
	}
	describe(promise, sizeof(promise), what, a);
	ret = gz_failed(gz, path, err, errlen);
	if (ret)
		return ret;
	if (a->len < need) {
		wsedata_err(err, errlen,
			    "%s: the header promises %s (%zu bytes) but the file holds %zu bytes of data",
			    path, promise, need, a->len);
		return -EINVAL;
	}
	got = read_some(gz, &extra, 1);
	ret = gz_failed(gz, path, err, errlen);
	if (ret)
		return ret;
	if (got != 0) {
		wsedata_err(err, errlen,
			    "%s: the header promises %s (%zu bytes) but the file holds more data",
			    path, promise, need);
		return -EINVAL;
	}
	return 0;

nomem:
	wsedata_err(err, errlen, "%s: out of memory for %zu bytes", path, need);
	return -ENOMEM;
}

/* The floats from big-endian into host order; each must be finite. */
static int floats_to_host(const char *path, struct idx_array *a, char *err, size_t errlen)
{
	for (size_t i = 0; i < a->len / 4; i++) {
		uint32_t bits = be32(a->data + 4 * i);
		float f;

		memcpy(&f, &bits, 4);
		if (!isfinite(f)) {
			wsedata_err(err, errlen, "%s: element %zu is %s; a float dataset must be finite",
				    path, i, isnan(f) ? "NaN" : "infinite");
			return -EINVAL;
		}
		memcpy(a->data + 4 * i, &f, 4);
	}
	return 0;
}

int wsedata_idx_read(const char *path, const struct idx_want *want,
		     struct idx_array *out, char *err, size_t errlen)
{
	struct idx_array a = { 0 };
	struct stat st;
	size_t need;
	gzFile gz;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		wsedata_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		wsedata_err(err, errlen, "%s: is a directory, not an IDX file", path);
		return -EISDIR;
	}
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		wsedata_err(err, errlen, "%s: out of memory opening", path);
		return -ENOMEM;
	}
	ret = read_header(gz, path, want, &a, err, errlen);
	if (!ret)
		ret = check_dims(path, want->what, &a, &need, err, errlen);
	if (!ret)
		ret = read_data(gz, path, want->what, &a, need, err, errlen);
	gzclose(gz);
	if (!ret && a.type == IDX_TYPE_F32)
		ret = floats_to_host(path, &a, err, errlen);
	if (ret) {
		free(a.data);
		return ret;
	}
	*out = a;
	return 0;
}
