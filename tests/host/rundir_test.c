// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run directories wsetrain made in the guest, looked at on the host
 * where the user finds them: tools/check boots the guest with wsevm
 * --runs and points WSE_RUN_DIRS here, after wsetrain_test's
 * run_directories has trained one run in each execution mode (and
 * wsetrain_graph_test its graph programs). Each run that is done holds
 * a finished run.json (the others say "failed" or "interrupted"), its
 * checkpoint, metrics.csv, TensorBoard events with the
 * CSV's very numbers (tb_vs_csv.py, the real event.proto), and, for a
 * model wsetrain compiled, the compile report; for every program, the
 * wafer map and the timing model (timing.json), run.json's precision and
 * schedule and metrics.csv's lr column; wsereport draws its curves and
 * page (learning rate and per-layer timing included), and headless
 * Chromium shows both plots and the timing bars.
 * Then one run of each mode, as make demo trains them, compared on one
 * page by wsereport -o, which Chromium must show with both runs' curves.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "page_shot.h"
#include "test_files.h"

#define WSEREPORT	"build/bin/wsereport"
#define TB_VS_CSV	"/usr/bin/python3 tests/host/tb_vs_csv.py"

static bool has(const char *dir, const char *name)
{
	char path[2048];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, R_OK) == 0;
}

static int sh(const char *fmt, const char *dir)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), fmt, dir);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* metrics.csv's columns, the learning rate last. */
static const char csv_header[] =
	"kind,step,epoch,loss,accuracy,samples_per_s,global_samples_per_s,eta_s,wall_s,lr\n";

/* Was the run trained on text (--text in its command): 96 classes, not 10? */
static bool text_run(struct json_object *root)
{
	struct json_object *cmd;

	if (!json_object_object_get_ex(root, "command", &cmd))
		return false;
	for (size_t i = 0; i < json_object_array_length(cmd); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(cmd, i)), "--text"))
			return true;
	return false;
}

/* Checks one run directory; its execution mode into @mode. */
static void check_run(struct __test_metadata *_metadata, const char *dir, char *mode,
		      size_t len)
{
	struct json_object *root, *v, *fin;
	char path[1024], png[1024], out[4096];
	bool compiled = true;
	long train, test, bars;
	char *html;
	size_t n;
	int st;

	if (strlen(dir) > 512)
		return;

	snprintf(path, sizeof(path), "%s/run.json", dir);
	root = json_object_from_file(path);
	ASSERT_NE(NULL, root) TH_LOG("%s does not read as JSON", path);
	/* A .wsep is taken as it is: no compile report (its map wsetrain draws). */
	if (json_object_object_get_ex(root, "model_file", &v)) {
		n = strlen(json_object_get_string(v));
		compiled = n < 5 || strcmp(json_object_get_string(v) + n - 5, ".wsep");
		/* Named where it is (the guest's path), not copied. */
		ASSERT_EQ('/', json_object_get_string(v)[0]) TH_LOG("%s", dir);
		snprintf(path, sizeof(path), "%s/%s", dir, strrchr(json_object_get_string(v), '/') + 1);
		EXPECT_NE(0, access(path, F_OK)) TH_LOG("%s: a copy of the model", path);
	}
	ASSERT_TRUE(json_object_object_get_ex(root, "status", &v));
	/* A run refused or stopped says so, and has nothing more to show. */
	if (strcmp(json_object_get_string(v), "done")) {
		EXPECT_TRUE(!strcmp(json_object_get_string(v), "failed") ||
			    !strcmp(json_object_get_string(v), "interrupted"))
			TH_LOG("%s: status '%s'", dir, json_object_get_string(v));
		json_object_put(root);
		return;
	}
	/* Its size and CRC32C, for whatever takes the model from here. */
	ASSERT_TRUE(json_object_object_get_ex(root, "model_size", &v)) TH_LOG("%s", dir);
	EXPECT_LT(0, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(root, "model_crc32c", &v)) TH_LOG("%s", dir);
	EXPECT_EQ(8, strspn(json_object_get_string(v), "0123456789abcdef"));
	ASSERT_TRUE(json_object_object_get_ex(root, "mode", &v));
	snprintf(mode, len, "%s", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(root, "final", &fin));
	/*
	 * Far above chance: 0.1 for ten classes; about 0.01 for 96
	 * characters, where 30 steps of masked LM reach 0.13.
	 */
	ASSERT_TRUE(json_object_object_get_ex(fin, "test_accuracy", &v));
	EXPECT_LT(text_run(root) ? 0.05 : 0.2, json_object_get_double(v)) TH_LOG("%s", dir);
	/* In the directory it is named relative to it (--checkpoint elsewhere: the guest's path). */
	ASSERT_TRUE(json_object_object_get_ex(fin, "checkpoint", &v));
	if (json_object_get_string(v)[0] != '/')
		EXPECT_TRUE(has(dir, json_object_get_string(v))) TH_LOG("%s: no %s", dir,
									  json_object_get_string(v));
	/* The precision and the resolved schedule. */
	EXPECT_TRUE(json_object_object_get_ex(root, "precision", &v)) TH_LOG("%s: no precision", dir);
	EXPECT_TRUE(json_object_object_get_ex(root, "schedule", &v)) TH_LOG("%s: no schedule", dir);
	EXPECT_TRUE(json_object_object_get_ex(root, "lr", &v)) TH_LOG("%s: no lr", dir);
	json_object_put(root);
	EXPECT_TRUE(has(dir, "metrics.csv"));
	if (compiled)
		EXPECT_TRUE(has(dir, "compile-report.txt")) TH_LOG("%s", dir);
	EXPECT_TRUE(has(dir, "wafer.svg") && has(dir, "timing.json")) TH_LOG("%s", dir);
	snprintf(path, sizeof(path), "%s/metrics.csv", dir);
	html = test_read_file(path, NULL);
	ASSERT_NE(NULL, html);
	EXPECT_EQ(0, strncmp(html, csv_header, strlen(csv_header)))
		TH_LOG("%s: header %.100s", dir, html);
	free(html);

	/* TensorBoard holds the CSV's numbers. */
	st = sh(TB_VS_CSV " %s", dir);
	if (st == 77)
		SKIP(return, "python3-protobuf is missing (tools/install-deps)");
	EXPECT_EQ(0, st);

	/* The curves and the page, and a browser that shows them. */
	ASSERT_EQ(0, sh(WSEREPORT " -q %s", dir));
	EXPECT_TRUE(has(dir, "loss.svg") && has(dir, "accuracy.svg") && has(dir, "index.html"));
	EXPECT_TRUE(has(dir, "rate.svg") && has(dir, "lr.svg")) TH_LOG("%s", dir);
	snprintf(path, sizeof(path), "%s/index.html", dir);
	html = test_read_file(path, NULL);
	ASSERT_NE(NULL, html);
	EXPECT_NE(NULL, strstr(html, "<td>timing model</td>")) TH_LOG("%s", dir);
	EXPECT_NE(NULL, strstr(html, "<td>measured</td>")) TH_LOG("%s", dir);
	EXPECT_NE(NULL, strstr(html, "<table id=\"layers\">")) TH_LOG("%s", dir);
	free(html);
	snprintf(png, sizeof(png), "%s/screenshot.png", dir);
	ASSERT_EQ(0, page_screenshot(dir, png, out, sizeof(out))) TH_LOG("%s", out);
	train = page_count_colour(png, page_train_rgb);
	test = page_count_colour(png, page_test_rgb);
	TH_LOG("%s (%s): %ld train-coloured and %ld test-coloured pixels", dir, mode, train, test);
	EXPECT_GT(train, 300);
	EXPECT_GT(test, 50);
	/* The page's whole height: a timing bar per layer. */
	ASSERT_EQ(0, page_screenshot_sized(dir, png, out, sizeof(out), 1400, 2400)) TH_LOG("%s", out);
	bars = page_count_colour(png, page_bar_rgb);
	TH_LOG("%s: %ld pixels of the timing bars", dir, bars);
	EXPECT_GT(bars, 500);
}

/* No state; a fixture only for its timeout: a browser's screenshot of each run takes seconds. */
FIXTURE(runs) {
	int unused;
};

FIXTURE_SETUP(runs)
{
}

FIXTURE_TEARDOWN(runs)
{
}

/* @a and @b on one page in @where/compare, looked at by a browser. */
static void check_comparison(struct __test_metadata *_metadata, const char *where,
			     const char *a, const char *b)
{
	char cmd[2048], cmp[512], png[600], out[4096], *html;
	long ca, cb;
	int st;

	snprintf(cmp, sizeof(cmp), "%s/compare", where);
	snprintf(cmd, sizeof(cmd), WSEREPORT " -q -o %s %s %s", cmp, a, b);
	st = system(cmd);
	ASSERT_EQ(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1) TH_LOG("%s", cmd);
	snprintf(png, sizeof(png), "%s/index.html", cmp);
	html = test_read_file(png, NULL);
	ASSERT_NE(NULL, html);
	/* The modes differ, and the page marks it. */
	EXPECT_NE(NULL, strstr(html, "<tr class=\"differs\"><td>execution mode</td>"))
		TH_LOG("%s", html);
	EXPECT_NE(NULL, strstr(html, "<td>precision</td>")) TH_LOG("%s", html);
	EXPECT_NE(NULL, strstr(html, "<td>step time, timing model (one system)</td>"))
		TH_LOG("%s", html);
	EXPECT_NE(NULL, strstr(html, "<td>step time, measured (median)</td>")) TH_LOG("%s", html);
	free(html);
	snprintf(png, sizeof(png), "%s/screenshot.png", where);
	ASSERT_EQ(0, page_screenshot(cmp, png, out, sizeof(out))) TH_LOG("%s", out);
	/* plot.c draws the first run in the train colour, the second in the test colour. */
	ca = page_count_colour(png, page_train_rgb);
	cb = page_count_colour(png, page_test_rgb);
	TH_LOG("comparison of %s and %s: %ld and %ld pixels of their colours", a, b, ca, cb);
	EXPECT_GT(ca, 300);
	EXPECT_GT(cb, 300);
}

TEST_F_TIMEOUT(runs, guest_run_directories, 600)
{
	const char *env = getenv("WSE_RUN_DIRS");
	bool pipelined = false, streaming = false;
	char mode[64], where[256], first_pipelined[512] = "", first_streaming[512] = "";
	struct dirent *e;
	DIR *d;

	ASSERT_NE(NULL, env) TH_LOG("tools/check sets WSE_RUN_DIRS to the runs the guest tests left");
	/* Absolute: the browser is given file:// addresses. */
	ASSERT_NE(NULL, realpath(env, where)) TH_LOG("%s: no such directory", env);
	ASSERT_EQ(0, access(CHROMIUM, X_OK)) TH_LOG("%s missing: run tools/install-deps", CHROMIUM);
	d = opendir(where);
	ASSERT_NE(NULL, d) TH_LOG("%s: no such directory", where);
	while ((e = readdir(d))) {
		char dir[512];

		if (snprintf(dir, sizeof(dir), "%s/%s", where, e->d_name) >= (int)sizeof(dir))
			continue;
		if (e->d_name[0] == '.' || !has(dir, "run.json"))
			continue;
		mode[0] = 0;
		check_run(_metadata, dir, mode, sizeof(mode));
		pipelined |= !strcmp(mode, "pipelined");
		streaming |= !strcmp(mode, "weight_streaming");
		if (!strcmp(mode, "pipelined") && !first_pipelined[0])
			snprintf(first_pipelined, sizeof(first_pipelined), "%s", dir);
		if (!strcmp(mode, "weight_streaming") && !first_streaming[0])
			snprintf(first_streaming, sizeof(first_streaming), "%s", dir);
	}
	closedir(d);
	EXPECT_TRUE(pipelined) TH_LOG("no layer-pipelined run in %s", where);
	EXPECT_TRUE(streaming) TH_LOG("no weight streaming run in %s", where);
	if (pipelined && streaming)
		check_comparison(_metadata, where, first_pipelined, first_streaming);
}

TEST_HARNESS_MAIN
