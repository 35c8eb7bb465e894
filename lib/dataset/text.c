// SPDX-License-Identifier: LGPL-2.1-or-later
/* A character corpus and its windows (wse/textdata.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/splitmix64.h"
#include "wse/textdata.h"

int32_t wse_text_id(unsigned char c)
{
	if (c == '\n')
		return 0;
	return c >= 32 && c <= 126 ? c - 31 : ' ' - 31;
}

char wse_text_char(int32_t id)
{
	if (id == 0)
		return '\n';
	return id > 0 && id < WSE_TEXT_VOCAB ? (char)(id + 31) : ' ';
}

void wse_text_free(struct wse_text *t)
{
	if (!t)
		return;
	free(t->ids);
	memset(t, 0, sizeof(*t));
}

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Appends file @path's characters. */
static int append(const char *path, struct wse_text *t, uint64_t *cap, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[1 << 16];
	size_t got;
	int ret = 0;

	if (!f)
		return fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (t->n + got > WSE_TEXT_MAX_BYTES) {
			ret = fail(err, errlen, -EFBIG, "%s: the corpus is larger than %llu bytes", path,
				   (unsigned long long)WSE_TEXT_MAX_BYTES);
			break;
		}
		if (t->n + got > *cap) {
			uint64_t c = *cap ? 2 * *cap : 1 << 16;
			int32_t *ids;

			while (c < t->n + got)
				c *= 2;
			ids = realloc(t->ids, c * sizeof(*ids));
			if (!ids) {
				ret = fail(err, errlen, -ENOMEM, "out of memory for %s", path);
				break;
			}
			t->ids = ids;
			*cap = c;
		}
		for (size_t i = 0; i < got; i++)
			t->ids[t->n++] = wse_text_id(buf[i]);
	}
	if (!ret && ferror(f))
		ret = fail(err, errlen, -EIO, "%s: read error", path);
	fclose(f);
	return ret;
}

int wse_text_load(const char *const *paths, size_t count, struct wse_text *t, char *err,
		  size_t errlen)
{
	uint64_t cap = 0;
	int ret;

	memset(t, 0, sizeof(*t));
	if (!count || count > WSE_TEXT_MAX_FILES)
		return fail(err, errlen, -EINVAL, "%zu text files: give 1..%u", count,
			    WSE_TEXT_MAX_FILES);
	for (size_t i = 0; i < count; i++) {
		ret = append(paths[i], t, &cap, err, errlen);
		if (ret) {
			wse_text_free(t);
			return ret;
		}
	}
	t->split = t->n - t->n / 10;
	return 0;
}

int wse_text_check(const struct wse_text *t, uint32_t context, char *err, size_t errlen)
{
	if (!context || t->split < (uint64_t)context + 2 || t->n - t->split < (uint64_t)context + 1)
		return fail(err, errlen, -EINVAL,
			    "the text (%llu characters, %llu of them for validation) is too short for windows of %u",
			    (unsigned long long)t->n, (unsigned long long)(t->n - t->split), context);
	return 0;
}

uint64_t wse_text_train_offset(const struct wse_text *t, uint64_t seed, uint64_t k,
			       uint32_t context)
{
	/* Draw k of the stream: the state is a counter. */
	uint64_t state = seed + k * WSE_SPLITMIX64_GAMMA;

	return wse_splitmix64(&state) % (t->split - context - 1);
}

uint64_t wse_text_val_windows(const struct wse_text *t, uint32_t context)
{
	return (t->n - t->split - 1) / context;
}

uint64_t wse_text_val_offset(const struct wse_text *t, uint64_t i, uint32_t context)
{
	return t->split + (i % wse_text_val_windows(t, context)) * context;
}

void wse_text_window(const struct wse_text *t, uint64_t offset, uint32_t context, int32_t *x,
		     int32_t *y)
{
	memcpy(x, t->ids + offset, context * sizeof(*x));
	memcpy(y, t->ids + offset + 1, context * sizeof(*y));
}
