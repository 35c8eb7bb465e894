// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsereport, the program: a run directory in, curves and a page out, bad
 * input refused with messages naming the file and line; and the page
 * opened in a real browser (headless Chromium), whose screenshot must show
 * both plots' series, and must not once the plots are gone. Runs
 * build/bin/wsereport and build/bin/wsecc from the repository root.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "page_shot.h"
#include "test_files.h"

#define WSEREPORT	"build/bin/wsereport"
#define WSECC		"build/bin/wsecc"

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static char *read_file(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return test_read_file(path, NULL);
}

/*
 * A run of 4 epochs: a training report every 50 steps, an evaluation per
 * epoch; @pace stretches its curves, @rate is its samples/s. With @lr, the
 * lr column wsetrain writes now (a learning rate halving every 500 steps);
 * without, the columns of run directories from before it.
 */
static int write_run_metrics(const char *dir, double pace, double rate, bool lr)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics.csv", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "kind,step,epoch,loss,accuracy,samples_per_s,wall_s%s\n", lr ? ",lr" : "");
	for (int s = 50; s <= 1876; s += 50) {
		fprintf(f, "train,%d,%d,%.6f,%.6f,%.1f,%.3f", s, s / 469,
			1.2 * exp(-s / (400.0 * pace)) + 0.3, 0.9 - 0.4 * exp(-s / (300.0 * pace)),
			rate, s / 100.0);
		fprintf(f, lr ? ",%.9g\n" : "\n", 0.01 / (1 << (s / 500)));
		if (s % 450 == 0)
			fprintf(f, "test,%d,%d,%.6f,%.6f,,%.3f%s\n", s, s / 469,
				1.2 * exp(-s / (400.0 * pace)) + 0.35,
				0.88 - 0.4 * exp(-s / (300.0 * pace)), s / 100.0, lr ? "," : "");
	}
	return fclose(f);
}

static int write_metrics(const char *dir)
{
	return write_run_metrics(dir, 1.0, 17000.5, true);
}

/*
 * The timing model wsetrain keeps (tools/wsetrain/placement.c): a step of
 * 128 in 5.12 ms, its three layers' stages; the measured 17000.5
 * samples/s are 7.53 ms a step.
 */
static const char timing_json[] =
	"{\"wafer\": \"64x64:48K\", \"clock_hz\": 1100000000, \"mode\": \"pipelined\",\n"
	" \"program\": \"layers\", \"batch\": 128, \"samples_per_s\": 25000.000000000004,\n"
	" \"step_s\": 0.00512, \"bottleneck_layer\": 1, \"layers\": [\n"
	" {\"label\": \"dense 784x256\", \"limit\": \"compute\", \"step_s\": 0.0031999999999999999},\n"
	" {\"label\": \"dense 256x128\", \"limit\": \"memory\", \"step_s\": 0.0048},\n"
	" {\"label\": \"dense 128x10\", \"limit\": \"io\", \"step_s\": 0.0000625}]}\n";

/*
 * Two runs to compare, in @dir/a and @dir/b: the same model, pipelined and
 * weight streaming, at other batch sizes and paces; b with a warmup-cosine
 * schedule. run.json's doubles as json-c writes them, 17 digits.
 */
static int write_two_runs(const char *dir)
{
	char a[256], b[256];

	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	/* a has the lr column, b only its schedule in run.json (an older run). */
	if (mkdir(a, 0700) || mkdir(b, 0700) || write_run_metrics(a, 1.0, 17000.5, true) ||
	    write_run_metrics(b, 2.5, 9000.25, false) || write_file(a, "timing.json", timing_json))
		return -1;
	if (write_file(a, "run.json",
		       "{\"model\": \"fc-mnist\", \"mode\": \"pipelined\", \"systems\": 1,\n"
		       " \"batch\": 128, \"optimizer\": \"adam\", \"lr\": 0.001, \"steps\": 1876,\n"
		       " \"precision\": \"fp32\", \"schedule\": \"constant\",\n"
		       " \"final\": {\"step\": 1876, \"test_accuracy\": 0.88819999999999999,\n"
		       "           \"samples_per_s\": 17000.499999999999, \"seconds\": 1876.0200000000001}}\n"))
		return -1;
	return write_file(b, "run.json",
			  "{\"model\": \"fc-mnist\", \"mode\": \"weight_streaming\", \"systems\": 2,\n"
			  " \"batch\": 256, \"optimizer\": \"adam\", \"lr\": 0.001, \"steps\": 1876,\n"
			  " \"warmup\": 200, \"schedule_steps\": 1876, \"min_lr\": 0.0001,\n"
			  " \"precision\": \"bf16\", \"schedule\": \"warmup_cosine\",\n"
			  " \"final\": {\"step\": 1876, \"test_accuracy\": 0.85109999999999997,\n"
			  "           \"samples_per_s\": 9000.25}}\n");
}

FIXTURE(report) {
	char dir[64];
	char out[65536];
	char cmd[2048];
};

FIXTURE_SETUP(report)
{
	ASSERT_EQ(0, access(WSEREPORT, X_OK)) TH_LOG("%s missing: run make, from the repository root",
						     WSEREPORT);
	strcpy(self->dir, "/tmp/wsereport_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, write_metrics(self->dir));
	ASSERT_EQ(0, write_file(self->dir, "run.json",
				"{\"model\": \"fc-mnist\", \"mode\": \"pipelined\", \"systems\": 1,\n"
				" \"precision\": \"bf16\", \"lr\": 0.01, \"schedule\": \"constant\",\n"
				" \"command\": [\"wsetrain\", \"models/fc-mnist\", \"<&>\"],\n"
				" \"devices\": [{\"index\": 0, \"device_id\": \"18446744073709551557\"}],\n"
				" \"final\": {\"step\": 1876, \"test_accuracy\": 0.8812}}\n"));
	ASSERT_EQ(0, write_file(self->dir, "timing.json", timing_json));
	snprintf(self->cmd, sizeof(self->cmd), WSECC " models/fc-mnist --report --svg %s/wafer.svg",
		 self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
}

FIXTURE_TEARDOWN(report)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

TEST_F(report, writes_curves_and_page)
{
	char *html, *loss;

	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " %s", self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "/index.html"));
	html = read_file(self->dir, "index.html");
	loss = read_file(self->dir, "loss.svg");
	ASSERT_NE(NULL, html);
	ASSERT_NE(NULL, loss);
	EXPECT_NE(NULL, strstr(loss, "<svg"));
	/* Both series, in their colours. */
	EXPECT_NE(NULL, strstr(loss, "rgb( 31, 119, 180)")) TH_LOG("no train series in loss.svg");
	EXPECT_NE(NULL, strstr(loss, "rgb(214,  39,  40)")) TH_LOG("no test series in loss.svg");
	EXPECT_NE(NULL, strstr(html, "<img src=\"loss.svg\""));
	EXPECT_NE(NULL, strstr(html, "<img src=\"accuracy.svg\""));
	EXPECT_NE(NULL, strstr(html, "<img src=\"wafer.svg\""));
	EXPECT_NE(NULL, strstr(html, "fc-mnist, pipelined on 1 system"));
	/* The last evaluation, and run.json's values, escaped. */
	EXPECT_NE(NULL, strstr(html, "test accuracy <b>0.879</b>")) TH_LOG("%.400s", html);
	EXPECT_NE(NULL, strstr(html, "18446744073709551557"));
	EXPECT_NE(NULL, strstr(html, "&lt;&amp;&gt;"));
	EXPECT_EQ(NULL, strstr(html, "<&>"));
	EXPECT_NE(NULL, strstr(html, "href=\"metrics.csv\""));
	/* samples/s and the learning rate (metrics.csv's lr column), each plotted. */
	EXPECT_NE(NULL, strstr(html, "<img src=\"rate.svg\""));
	EXPECT_NE(NULL, strstr(html, "<img src=\"lr.svg\""));
	EXPECT_EQ(0, access(strcat(strcpy(self->cmd, self->dir), "/lr.svg"), R_OK));
	EXPECT_NE(NULL, strstr(html, "learning rate 0.00125</p>")) TH_LOG("%.600s", html);
	/* The timing model beside the clock: 128 / 17000.5 samples/s is 7.53 ms. */
	EXPECT_NE(NULL, strstr(html, "<td>timing model</td><td>5.12 ms per step of 128 (25000 samples/s, one system, 64x64:48K)</td>"))
		TH_LOG("%s", strstr(html, "<h2>Time") ? strstr(html, "<h2>Time") : html);
	EXPECT_NE(NULL, strstr(html, "<td>measured</td><td>7.53 ms per step (the median of 36 training reports)</td>"));
	EXPECT_NE(NULL, strstr(html, "<td>measured / model</td><td>1.47</td>"));
	/* A bar per layer, the slowest full width and marked. */
	EXPECT_NE(NULL, strstr(html, "<tr><td>0</td><td>dense 784x256</td><td>compute</td><td>3.2 ms</td><td class=\"bar\"><span style=\"width:66.7%\"></span></td></tr>"));
	EXPECT_NE(NULL, strstr(html, "<tr class=\"slowest\"><td>1</td><td>dense 256x128</td><td>memory</td><td>4.8 ms</td><td class=\"bar\"><span style=\"width:100.0%\"></span></td></tr>"));
	EXPECT_NE(NULL, strstr(html, "<td>62.5 \u00b5s</td>"));
	/* run.json's precision; sizes and numbers for people; no temporary file. */
	EXPECT_NE(NULL, strstr(html, "<tr><td>precision</td><td>bf16</td></tr>"));
	EXPECT_NE(NULL, strstr(html, " kB</td>"));
	EXPECT_EQ(NULL, strstr(html, "0.0031999"));
	EXPECT_EQ(NULL, strstr(html, ".tmp"));
	snprintf(self->cmd, sizeof(self->cmd), "ls -A %s | grep -c -e tmp -e '^\\.'", self->dir);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	free(html);
	free(loss);
}

TEST_F(report, refuses_bad_input_with_a_reason)
{
	char other[96];

	/* A row that is not a number names its line. */
	ASSERT_EQ(0, write_file(self->dir, "metrics.csv",
				"kind,step,epoch,loss,accuracy,samples_per_s,wall_s\n"
				"train,50,0,0.7,0.6,100,1\n"
				"train,100,0,zero,0.6,100,1\n"));
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " %s", self->dir);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "metrics.csv:3: loss 'zero'")) TH_LOG("%s", self->out);
	/* An accuracy above 1, a kind nobody writes, a missing column. */
	ASSERT_EQ(0, write_file(self->dir, "metrics.csv",
				"kind,step,epoch,loss,accuracy,samples_per_s,wall_s\n"
				"train,50,0,0.7,1.5,100,1\n"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "metrics.csv:2: accuracy 1.5 is above 1"))
		TH_LOG("%s", self->out);
	ASSERT_EQ(0, write_file(self->dir, "metrics.csv",
				"kind,step,epoch,loss,accuracy,samples_per_s,wall_s\n"
				"valid,50,0,0.7,0.5,100,1\n"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "kind 'valid' is neither train nor test"));
	ASSERT_EQ(0, write_file(self->dir, "metrics.csv", "kind,step,epoch,loss\n"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "metrics.csv:1: no 'accuracy' column"))
		TH_LOG("%s", self->out);
	/* A broken run.json is named, not shown half. */
	ASSERT_EQ(0, write_metrics(self->dir));
	ASSERT_EQ(0, write_file(self->dir, "run.json", "{\"model\": \"fc-mnist\", "));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "run.json")) TH_LOG("%s", self->out);
	/* A timing.json that is not the timing model is named. */
	ASSERT_EQ(0, write_file(self->dir, "run.json", "{\"model\": \"fc-mnist\"}"));
	ASSERT_EQ(0, write_file(self->dir, "timing.json", "{\"batch\": 128}"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "timing.json: not the timing model wsetrain writes"))
		TH_LOG("%s", self->out);
	ASSERT_EQ(0, write_file(self->dir, "timing.json", timing_json));
	/* Not a run directory; no directory; a gnuplot that is not there. */
	snprintf(other, sizeof(other), "%s/none", self->dir);
	snprintf(self->cmd, sizeof(self->cmd), "mkdir %s && " WSEREPORT " %s", other, other);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "is this one?")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, run_cmd_all(WSEREPORT, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "give a run directory"));
	unlink(strcat(strcpy(other, self->dir), "/run.json"));
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " --gnuplot /nonexistent/gnuplot %s",
		 self->dir);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "gnuplot-nox")) TH_LOG("%s", self->out);
}

TEST_F(report, compares_runs_on_one_page)
{
	char cmpdir[128], *html, *loss, *lr;
	static const char *const want[] = {
		"<img src=\"loss.svg\"", "<img src=\"accuracy.svg\"", "<img src=\"rate.svg\"",
		"<img src=\"lr.svg\"",
		/* Each run's own page, linked from its column. */
		"<a href=\"../a/index.html\">a</a>", "<a href=\"../b/index.html\">b</a>",
		/* What is the same is plain; what differs is marked. */
		"<tr><td>model</td><td>fc-mnist</td><td>fc-mnist</td></tr>",
		"<tr><td>optimizer</td><td>adam</td><td>adam</td></tr>",
		"<tr class=\"differs\"><td>execution mode</td><td class=\"diff\">pipelined</td><td class=\"diff\">weight_streaming</td></tr>",
		"<tr class=\"differs\"><td>batch</td><td class=\"diff\">128</td><td class=\"diff\">256</td></tr>",
		/* Only b has a schedule: a's cell is a dash. */
		"<tr class=\"differs\"><td>warmup steps</td><td class=\"diff\">\u2014</td><td class=\"diff\">200</td></tr>",
		/* Numbers rounded for people. */
		"<td class=\"diff\">0.8882</td><td class=\"diff\">0.8511</td>",
		"<td class=\"diff\">17000.5</td><td class=\"diff\">9000.2</td>",
		/* The precision and the schedule, from run.json. */
		"<tr class=\"differs\"><td>precision</td><td class=\"diff\">fp32</td><td class=\"diff\">bf16</td></tr>",
		"<tr class=\"differs\"><td>schedule</td><td class=\"diff\">constant</td><td class=\"diff\">warmup_cosine</td></tr>",
		/* a has the timing model, b none. */
		"<tr class=\"differs\"><td>step time, timing model (one system)</td><td class=\"diff\">5.12 ms</td><td class=\"diff\">\u2014</td></tr>",
		"<tr class=\"differs\"><td>step time, measured (median)</td><td class=\"diff\">7.53 ms</td><td class=\"diff\">\u2014</td></tr>",
	};
	char names[256] = "";

	ASSERT_EQ(0, write_two_runs(self->dir));
	snprintf(cmpdir, sizeof(cmpdir), "%s/compare", self->dir);
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " -o %s %s/a %s/b", cmpdir, self->dir,
		 self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	/* Each run's own page, then the comparison. */
	EXPECT_NE(NULL, strstr(self->out, "/a/index.html\n")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "/b/index.html\n")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "/compare/index.html\n")) TH_LOG("%s", self->out);
	html = read_file(cmpdir, "index.html");
	loss = read_file(cmpdir, "loss.svg");
	lr = read_file(cmpdir, "lr.svg");
	ASSERT_NE(NULL, html);
	ASSERT_NE(NULL, loss);
	ASSERT_NE(NULL, lr);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_NE(NULL, strstr(html, want[i])) TH_LOG("no %s in\n%s", want[i], html);
	}
	EXPECT_EQ(NULL, strstr(html, "0.8881999"));
	/* A value that rounds to a whole number shows none of its decimals. */
	EXPECT_NE(NULL, strstr(html, "<td>seconds</td><td class=\"diff\">1876</td>")) TH_LOG("%s", html);
	EXPECT_EQ(NULL, strstr(html, ".0</td>")) TH_LOG("%s", html);
	EXPECT_EQ(NULL, strstr(html, ".tmp"));
	/* Both runs overlaid, a colour each, named in the key. */
	EXPECT_NE(NULL, strstr(loss, "rgb( 31, 119, 180)")) TH_LOG("no run a in loss.svg");
	EXPECT_NE(NULL, strstr(loss, "rgb(214,  39,  40)")) TH_LOG("no run b in loss.svg");
	EXPECT_NE(NULL, strstr(loss, ">b (test)<")) TH_LOG("no key for b's evaluations");
	EXPECT_NE(NULL, strstr(lr, "rgb(214,  39,  40)")) TH_LOG("no schedule of b in lr.svg");
	EXPECT_NE(NULL, strstr(lr, "rgb( 31, 119, 180)")) TH_LOG("no lr column of a in lr.svg");
	/* The page's directory holds the page and its plots, nothing left over. */
	snprintf(self->cmd, sizeof(self->cmd), "ls -A %s | tr '\\n' ' '", cmpdir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, names, sizeof(names)));
	EXPECT_STREQ("accuracy.svg index.html loss.svg lr.svg rate.svg ", names);
	free(html);
	free(loss);
	free(lr);

	/* Several runs need -o; -o is not one of the runs; a bad run writes no comparison. */
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " %s/a %s/b", self->dir, self->dir);
	EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "give -o DIR")) TH_LOG("%s", self->out);
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " -o %s/a/ %s/a %s/b", self->dir,
		 self->dir, self->dir);
	EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "-o is a run directory")) TH_LOG("%s", self->out);
	ASSERT_EQ(0, write_file(self->dir, "b/metrics.csv", "kind,step\n"));
	snprintf(self->cmd, sizeof(self->cmd), "rm %s/index.html && " WSEREPORT " -o %s %s/a %s/b",
		 cmpdir, cmpdir, self->dir, self->dir);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "no comparison page written")) TH_LOG("%s", self->out);
	EXPECT_NE(0, access(strcat(cmpdir, "/index.html"), F_OK));
}

TEST_F(report, comparison_renders_in_a_browser)
{
	char png[128], cmpdir[128];
	long a, b;

	ASSERT_EQ(0, access(CHROMIUM, X_OK)) TH_LOG("%s missing: run tools/install-deps", CHROMIUM);
	ASSERT_EQ(0, write_two_runs(self->dir));
	snprintf(cmpdir, sizeof(cmpdir), "%s/compare", self->dir);
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " -q -o %s %s/a %s/b", cmpdir, self->dir,
		 self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	snprintf(png, sizeof(png), "%s/shot.png", self->dir);
	ASSERT_EQ(0, page_screenshot(cmpdir, png, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	/* Run a in the train colour, run b in the test colour (plot.c's first two). */
	a = page_count_colour(png, page_train_rgb);
	b = page_count_colour(png, page_test_rgb);
	TH_LOG("comparison screenshot: %ld pixels of run a's colour, %ld of run b's", a, b);
	/* Four plots, each with both runs' lines. */
	EXPECT_GT(a, 600);
	EXPECT_GT(b, 600);

	/* Without the plots the page still opens, and the runs' lines are gone. */
	snprintf(self->cmd, sizeof(self->cmd), "cd %s && rm loss.svg accuracy.svg rate.svg lr.svg",
		 cmpdir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	ASSERT_EQ(0, page_screenshot(cmpdir, png, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_LT(page_count_colour(png, page_train_rgb), 50);
	EXPECT_LT(page_count_colour(png, page_test_rgb), 50);
}

TEST_F_TIMEOUT(report, renders_in_a_browser, 180)
{
	char png[128];
	long train, test;

	ASSERT_EQ(0, access(CHROMIUM, X_OK)) TH_LOG("%s missing: run tools/install-deps", CHROMIUM);
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " -q %s", self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	snprintf(png, sizeof(png), "%s/shot.png", self->dir);
	ASSERT_EQ(0, page_screenshot(self->dir, png, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	train = page_count_colour(png, page_train_rgb);
	test = page_count_colour(png, page_test_rgb);
	TH_LOG("screenshot: %ld train-coloured and %ld test-coloured pixels", train, test);
	/* Two plots, each with both series drawn as lines of a few pixels. */
	EXPECT_GT(train, 300);
	EXPECT_GT(test, 300);

	/* The page's whole height: the timing model's bars, a layer each. */
	ASSERT_EQ(0, page_screenshot_sized(self->dir, png, self->out, sizeof(self->out), 1400, 2400))
		TH_LOG("%s", self->out);
	train = page_count_colour(png, page_bar_rgb);
	TH_LOG("screenshot 1400x2400: %ld pixels of the timing bars' colour", train);
	EXPECT_GT(train, 2000);
	snprintf(self->cmd, sizeof(self->cmd), "rm %s/timing.json && " WSEREPORT " -q %s",
		 self->dir, self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, page_screenshot_sized(self->dir, png, self->out, sizeof(self->out), 1400, 2400))
		TH_LOG("%s", self->out);
	EXPECT_LT(page_count_colour(png, page_bar_rgb), 50);

	/* Without the plots the page still opens, and the series are gone. */
	snprintf(self->cmd, sizeof(self->cmd), "cd %s && rm loss.svg accuracy.svg rate.svg lr.svg",
		 self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	ASSERT_EQ(0, page_screenshot(self->dir, png, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_LT(page_count_colour(png, page_train_rgb), 50);
	EXPECT_LT(page_count_colour(png, page_test_rgb), 50);
}

TEST_HARNESS_MAIN
