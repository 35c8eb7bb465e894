// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tools' errors as a user meets them: an unknown option is one line
 * and a hint, exit 2, in every tool; a foreign file where a model or
 * program is expected is named for what it is (lib/cli/filekind.c); and
 * wsetrain checks its inputs and device before it makes a run directory.
 * Runs build/bin/ from the repository root; files in its own temp dir.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "test_files.h"

#define BIN "build/bin/"
#define ONNX_MODEL "tests/corpus/onnx/bn-tiny.onnx"

static const char *const tools[] = {
	"wsecc", "wsetrain", "wsectl", "wsereport", "wsefwd", "wse-appliance", "wsebench",
};

FIXTURE(errs) {
	char dir[64];
	char path[PATH_MAX];
	char runs[PATH_MAX];
	char cmd[3 * PATH_MAX + 256];
	char out[8192];
};

static void put(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b, 1, n, f) != n || fclose(f))
		abort();
}

FIXTURE_SETUP(errs)
{
	/* torch.save's zip: a local header naming archive/data.pkl first. */
	static const char pt[] = "PK\3\4\24\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				 "\20\0\0\0archive/data.pkl\x80\x02}q\0.";
	static const char pickle[] = "\x80\x02}q\0(X\1\0\0\0aq\1K\1u.";
	static const char wsep[] = "WSEP\1\0\0\0\0\0\0\0\0\0\0\0";
	static const char ckpt[] = "WSECKPT\0\1\0\0\0\0\0\0\0";
	unsigned char rnd[512];
	char p[128];

	ASSERT_EQ(0, access(BIN "wsetrain", X_OK)) TH_LOG("run make, from the repository root");
	strcpy(self->dir, "/tmp/tool_errors_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(p, sizeof(p), "%s/model.pt", self->dir);
	put(p, pt, sizeof(pt) - 1);
	snprintf(p, sizeof(p), "%s/old.pt", self->dir);
	put(p, pickle, sizeof(pickle) - 1);
	snprintf(p, sizeof(p), "%s/prog.wsep", self->dir);
	put(p, wsep, sizeof(wsep) - 1);
	snprintf(p, sizeof(p), "%s/model-1.ckpt", self->dir);
	put(p, ckpt, sizeof(ckpt) - 1);
	/* Fixed noise: no magic, not text, not a protobuf ModelProto. */
	srand(30);
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (unsigned char)(rand() >> 7);
	rnd[0] = 0xff;
	snprintf(p, sizeof(p), "%s/noise.bin", self->dir);
	put(p, rnd, sizeof(rnd));
	snprintf(self->runs, sizeof(self->runs), "%s/runs", self->dir);
}

FIXTURE_TEARDOWN(errs)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

static const char *at(FIXTURE_DATA(errs) *self, const char *name)
{
	snprintf(self->path, sizeof(self->path), "%s/%s", self->dir, name);
	return self->path;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

TEST_F(errs, unknown_option_is_one_line_and_a_hint)
{
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char first[64], hint[128], *nl;

		snprintf(self->cmd, sizeof(self->cmd), "%s%s --no-such-option </dev/null",
			 BIN, tools[i]);
		EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)))
			TH_LOG("%s: %s", tools[i], self->out);
		snprintf(first, sizeof(first), "%s: ", tools[i]);
		snprintf(hint, sizeof(hint), "Try '%s --help' for more information.\n", tools[i]);
		EXPECT_EQ(0, strncmp(self->out, first, strlen(first))) TH_LOG("%s", self->out);
		nl = strchr(self->out, '\n');
		ASSERT_NE(NULL, nl) TH_LOG("%s", self->out);
		EXPECT_STREQ(hint, nl + 1) TH_LOG("%s: %s", tools[i], self->out);
		EXPECT_NE(NULL, strstr(self->out, "--no-such-option")) TH_LOG("%s", self->out);
	}
}

/* wse-appliance and wsefwd took -V for an unknown option. */
TEST_F(errs, dash_V_is_the_version_everywhere)
{
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char line[64];

		snprintf(self->cmd, sizeof(self->cmd), "%s%s -V", BIN, tools[i]);
		EXPECT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out)))
			TH_LOG("%s: %s", tools[i], self->out);
		snprintf(line, sizeof(line), "%s (wse) ", tools[i]);
		EXPECT_EQ(0, strncmp(self->out, line, strlen(line))) TH_LOG("%s", self->out);
	}
}

/* A value refused is one line and the hint too. */
TEST_F(errs, bad_value_is_one_line_and_a_hint)
{
	static const char *const cmds[] = {
		"wsebench --sizes abc", "wsecc --micro-batch 0 x", "wsetrain --epochs 0 x",
		"wsefwd", "wse-appliance --role memoryx --capacity abc",
		"wse-appliance --role swarmx --no-such-option",
		"wse-appliance --role coordinator --no-such-option",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *nl;

		snprintf(self->cmd, sizeof(self->cmd), "%s%s", BIN, cmds[i]);
		EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)))
			TH_LOG("%s: %s", cmds[i], self->out);
		nl = strchr(self->out, '\n');
		ASSERT_NE(NULL, nl) TH_LOG("%s", self->out);
		EXPECT_EQ(0, strncmp(nl + 1, "Try '", 5)) TH_LOG("%s: %s", cmds[i], self->out);
		EXPECT_NE(NULL, strstr(nl + 1, "--help' for more information.\n"))
			TH_LOG("%s", self->out);
	}
}

/* Each foreign file, and the words that must name it. */
static const struct {
	const char *file, *what, *todo;
} foreign[] = {
	{ "model.pt", "PyTorch checkpoint (zip)", "torch.onnx.export" },
	{ "old.pt", "pickle", "torch.onnx.export" },
	{ "prog.wsep", "wse program (.wsep)", "wsetrain PROGRAM.wsep" },
	{ "model-1.ckpt", "wsetrain checkpoint", "--init-from" },
	{ "noise.bin", "of no kind wse knows", "ONNX model" },
};

TEST_F(errs, wsecc_names_what_is_not_a_model)
{
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		snprintf(self->cmd, sizeof(self->cmd), "%swsecc %s -o %s/out.wsep", BIN,
			 at(self, foreign[i].file), self->dir);
		EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)))
			TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, foreign[i].what)) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, foreign[i].todo)) TH_LOG("%s", self->out);
		EXPECT_FALSE(exists(at(self, "out.wsep")));
	}
}

TEST_F(errs, wsecc_knows_onnx_by_its_structure)
{
	snprintf(self->cmd, sizeof(self->cmd), "cp %s %s && %swsecc -q --validate-only %s",
		 ONNX_MODEL, at(self, "model.bin"), BIN, self->path);
	EXPECT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
}

TEST_F(errs, wsetrain_names_what_is_not_a_program_and_makes_no_run_dir)
{
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		if (!strcmp(foreign[i].file, "prog.wsep"))
			continue;	/* a program: wsetrain's own input */
		snprintf(self->cmd, sizeof(self->cmd), "%swsetrain --runs %s %s", BIN,
			 self->runs, at(self, foreign[i].file));
		EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)))
			TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, foreign[i].what)) TH_LOG("%s", self->out);
		EXPECT_FALSE(exists(self->runs)) TH_LOG("%s", self->out);
	}
}

TEST_F(errs, wsetrain_wants_a_checkpoint_for_init_from)
{
	char prog[PATH_MAX];

	snprintf(prog, sizeof(prog), "%s", at(self, "prog.wsep"));
	snprintf(self->cmd, sizeof(self->cmd), "%swsetrain --runs %s --init-from %s %s", BIN,
		 self->runs, prog, prog);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "wse program (.wsep), not a checkpoint"))
		TH_LOG("%s", self->out);
	EXPECT_FALSE(exists(self->runs));
}

TEST_F(errs, inspect_and_wsereport_name_what_they_were_given)
{
	snprintf(self->cmd, sizeof(self->cmd), "%swsetrain --inspect %s", BIN,
		 at(self, "prog.wsep"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "wse program (.wsep), not a checkpoint"))
		TH_LOG("%s", self->out);
	snprintf(self->cmd, sizeof(self->cmd), "%swsereport %s", BIN, at(self, "model.pt"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "PyTorch checkpoint (zip), not a run directory"))
		TH_LOG("%s", self->out);
}

/* On the host there are no devices: the missing file must be said first. */
TEST_F(errs, wsetrain_missing_model_before_devices)
{
	snprintf(self->cmd, sizeof(self->cmd), "%swsetrain --runs %s %s", BIN, self->runs,
		 at(self, "nope.wsep"));
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "nope.wsep: No such file or directory"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strstr(self->out, "devices")) TH_LOG("%s", self->out);
	EXPECT_EQ(strlen(self->out) - 1, (size_t)(strchr(self->out, '\n') - self->out))
		TH_LOG("one line only: %s", self->out);
	EXPECT_FALSE(exists(self->runs));
}

TEST_F(errs, wsetrain_bad_devices_makes_no_run_dir)
{
	snprintf(self->cmd, sizeof(self->cmd), "%swsetrain --runs %s --devices 0,1 %s", BIN,
		 self->runs, ONNX_MODEL);
	EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "--devices '0,1'")) TH_LOG("%s", self->out);
	EXPECT_FALSE(exists(self->runs));
	/* A good model and no device to run it on: refused before the run directory. */
	snprintf(self->cmd, sizeof(self->cmd), "%swsetrain --runs %s %s", BIN, self->runs,
		 ONNX_MODEL);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "device")) TH_LOG("%s", self->out);
	EXPECT_FALSE(exists(self->runs)) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
