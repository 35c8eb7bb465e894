/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the tests that look at wsereport's page in a real browser: a
 * screenshot by headless Chromium, and how many of its pixels are near a
 * colour (the plots' series are drawn in colours of their own, plot.c).
 */
#ifndef WSE_TEST_PAGE_SHOT_H
#define WSE_TEST_PAGE_SHOT_H

#include <png.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "run_cmd.h"

#define CHROMIUM	"/usr/bin/chromium"

/* The series' colours plot.c draws with. */
static const unsigned char page_train_rgb[3] = { 0x1f, 0x77, 0xb4 };
static const unsigned char page_test_rgb[3] = { 0xd6, 0x27, 0x28 };
/* The per-layer timing bars' colour (html.c). */
static const unsigned char page_bar_rgb[3] = { 0x6b, 0x6e, 0xcf };


/*
 * @dir/index.html in headless Chromium, @width x @height, as a PNG at
 * @png (the browser's profile in @dir/chromium); its output in @out.
 * Exit status.
 */
static inline int page_screenshot_sized(const char *dir, const char *png, char *out, size_t len,
					unsigned int width, unsigned int height)
{
	char cmd[8000];

	snprintf(cmd, sizeof(cmd),
		 "timeout 120 " CHROMIUM " --headless --no-sandbox --disable-gpu --disable-quic"
		 " --no-first-run --disable-background-networking --disable-component-update"
		 " --disable-sync --user-data-dir=%s/chromium --hide-scrollbars"
		 " --window-size=%u,%u --screenshot=%s file://%s/index.html",
		 dir, width, height, png, dir);
	return run_cmd_all(cmd, out, len);
}

/* The page at 1400x900, a desktop's first screen. */
static inline int page_screenshot(const char *dir, const char *png, char *out, size_t len)
{
	return page_screenshot_sized(dir, png, out, len, 1400, 900);
}

/* Pixels of the PNG within 24 of @rgb in every channel; -1 if it does not read. */
static inline long page_count_colour(const char *png_path, const unsigned char *rgb)
{
	png_image img = { .version = PNG_IMAGE_VERSION };
	png_bytep px;
	long n = 0;

	if (!png_image_begin_read_from_file(&img, png_path))
		return -1;
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
		free(px);
		png_image_free(&img);
		return -1;
	}
	for (size_t i = 0; i < (size_t)img.width * img.height; i++) {
		bool near = true;

		for (int c = 0; c < 3; c++)
			near &= abs(px[3 * i + c] - rgb[c]) <= 24;
		n += near;
	}
	free(px);
	return n;
}

#endif /* WSE_TEST_PAGE_SHOT_H */
