// SPDX-License-Identifier: GPL-2.0-only
/*
 * The models weight streaming exists for compile by weight streaming on
 * the WSE-2 (Documentation/compiler.rst, "Activation checkpointing"):
 * GPT-J 6B, LLaMA-7B and GPT-3 175B at sequence 2048, from the
 * shapes-only exports of models/reference_models.py committed gzipped in
 * tests/corpus/onnx (the real-size causal mask and rotary tables make
 * them 17 to 20 MB; gzipped, 74 kB to 1.1 MB). One sample's
 * activations, every layer's kept for the backward pass, do not fit a
 * PE's SRAM; build/bin/wsecc turns recompute on by itself, says so in
 * its report, and its peak resident memory (wait4()'s ru_maxrss) stays
 * under 4 GB. With --recompute off it refuses, naming both figures.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "test_files.h"

#define CORPUS "tests/corpus/onnx/"
#define PEAK_LIMIT_KB	(4ULL << 20)	/* 4 GB */

struct reference {
	const char *name;
	const char *batch;	/* sequences of 2048 tokens a step, as their papers' */
};

static const struct reference models[] = {
	{ "gptj-6b", "512" },
	{ "llama-7b", "2048" },
	{ "gpt3-175b", "1536" },
};

FIXTURE(ref)
{
	char dir[64];
	char path[128];
	char *out;
	long peak_kb;
};

FIXTURE_SETUP(ref)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/reference_compile.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->out = NULL;
}

FIXTURE_TEARDOWN(ref)
{
	free(self->out);
	test_remove_dir(self->dir);
}

/* The corpus's @name-shapes.onnx.gz unpacked into the test's directory, as self->path. */
static int unpack(FIXTURE_DATA(ref) *self, const char *name)
{
	char cmd[512], out[256];

	snprintf(self->path, sizeof(self->path), "%s/%s.onnx", self->dir, name);
	snprintf(cmd, sizeof(cmd), "gzip -dc " CORPUS "%s-shapes.onnx.gz > %s", name, self->path);
	return run_cmd_all(cmd, out, sizeof(out));
}

/*
 * build/bin/wsecc on self->path with @args after it; its output (stdout
 * and stderr) in self->out, its peak resident set in self->peak_kb.
 * Returns its exit status, -1 if it did not exit.
 */
static int wsecc(FIXTURE_DATA(ref) *self, const char *const *args, int n)
{
	char log[128];
	const char *argv[24];
	struct rusage ru;
	int st, fd, argc = 0;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/wsecc.out", self->dir);
	argv[argc++] = "build/bin/wsecc";
	argv[argc++] = self->path;
	for (int i = 0; i < n && argc < 23; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid)
		return -1;
	self->peak_kb = ru.ru_maxrss;
	free(self->out);
	self->out = test_read_file(log, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_F_TIMEOUT(ref, large_models_compile_by_weight_streaming_with_recompute, 900)
{
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		const char *args[] = { "--no-weights", "--report", "--wafer", "wse2", "--mode",
				       "weight_streaming", "--batch", models[m].batch, "--svg",
				       "/dev/null" };
		const char *est;

		ASSERT_EQ(0, unpack(self, models[m].name)) TH_LOG("%s", models[m].name);
		ASSERT_EQ(0, wsecc(self, args, 10)) TH_LOG("%s:\n%s", models[m].name, self->out);
		est = strstr(self->out, "estimate:    ");
		ASSERT_NE(NULL, est) TH_LOG("%s", self->out);
		TH_LOG("%s at batch %s: %.60s; peak %ld kB", models[m].name, models[m].batch,
		       est + 13, self->peak_kb);
		EXPECT_NE(NULL, strstr(self->out, "recompute:   on:")) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "micro-batch: ")) TH_LOG("%s", self->out);
		EXPECT_GT(atof(est + 13), 0.0);
		EXPECT_LT((unsigned long long)self->peak_kb, PEAK_LIMIT_KB);
	}
}

TEST_F_TIMEOUT(ref, without_recompute_one_sample_is_refused_naming_both_figures, 300)
{
	const char *args[] = { "--no-weights", "--report", "--wafer", "wse2", "--mode",
			       "weight_streaming", "--recompute", "off", "--svg", "/dev/null" };

	ASSERT_EQ(0, unpack(self, "gptj-6b"));
	ASSERT_EQ(1, wsecc(self, args, 10)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out,
			       "one sample's activations do not fit even with weight streaming without recompute (with it a sample needs "))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "per PE, a PE of the wse2 wafer has")) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
