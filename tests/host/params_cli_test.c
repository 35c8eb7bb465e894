// SPDX-License-Identifier: GPL-2.0-only
/*
 * One params.yaml for wsecc and wsetrain (Documentation/wsetrain.rst,
 * "params.yaml"): the example files compile fc-mnist, the CNN and the GPT
 * into programs that hold what the files say; the command line overrides
 * the file; wsetrain hands the file to the compiler; bad files are refused
 * naming file, line and key. Run from the repository root (build/bin/ holds the tools).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "test_files.h"
#include "wse/wsep.h"

#define OUT_MAX 16384

FIXTURE(cli) {
	char dir[64];
	char out[OUT_MAX];
};

FIXTURE_SETUP(cli)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/params_cli.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(cli)
{
	test_remove_dir(self->dir);
}

/* Runs a command made from @fmt in the test's directory; stdout and stderr in self->out. */
static int run(struct __test_metadata *_metadata, char *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int run(struct __test_metadata *_metadata, char *out, const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = run_cmd_all(cmd, out, OUT_MAX);
	TH_LOG("$ %s -> %d\n%s", cmd, st, out);
	return st;
}

static struct wsep_program *program(struct __test_metadata *_metadata, const char *dir,
				    const char *name)
{
	struct wsep_program *p = NULL;
	char path[128], err[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	EXPECT_EQ(0, wsep_read_file(path, &p, err, sizeof(err))) TH_LOG("%s: %s", path, err);
	return p;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* fc-mnist's file over the model text's own optimizer: batch, rate, schedule. */
TEST_F(cli, fc_mnist_from_the_example)
{
	struct wsep_program *p;

	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc models/fc-mnist --params models/params/fc-mnist.yaml -o %s/fc.wsep",
			 self->dir));
	/* Two epochs are wsetrain's to count: the decay's length is the run's. */
	EXPECT_NE(NULL, strstr(self->out, "the schedule has no length yet"));
	p = program(_metadata, self->dir, "fc.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(128U, p->batch);
	EXPECT_EQ(WSEP_MODE_PIPELINED, p->mode);
	EXPECT_EQ(WSEP_OPT_ADAM, p->opt.kind);
	EXPECT_EQ(0.002, p->opt.lr);
	EXPECT_EQ(WSEP_LR_CONSTANT, p->opt.schedule);
	wsep_program_free(p);

	/* The command line wins over the file, and a length makes the schedule whole. */
	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc models/fc-mnist --batch 32 --params models/params/fc-mnist.yaml --lr 0.004 --steps 400 --execution-mode weight_streaming -o %s/fc2.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "fc2.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(32U, p->batch);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p->mode);
	EXPECT_EQ(0.004, p->opt.lr);
	EXPECT_EQ(WSEP_LR_WARMUP_COSINE, p->opt.schedule);
	EXPECT_EQ(50U, p->opt.warmup);
	EXPECT_EQ(400U, p->opt.total_steps);
	EXPECT_EQ(0.0001, p->opt.min_lr);
	wsep_program_free(p);
}

/* The CNN: Adam, max_steps the decay's length. */
TEST_F(cli, cnn_from_the_example)
{
	struct wsep_program *p;

	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc tests/corpus/onnx/cnn-tiny.onnx --params models/params/cnn-tiny.yaml -q -o %s/cnn.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "cnn.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(64U, p->batch);
	EXPECT_EQ(WSEP_MODE_PIPELINED, p->mode);
	EXPECT_EQ(WSEP_OPT_ADAM, p->opt.kind);
	EXPECT_EQ(0.01, p->opt.lr);
	EXPECT_EQ(WSEP_LR_WARMUP_COSINE, p->opt.schedule);
	EXPECT_EQ(20U, p->opt.warmup);
	EXPECT_EQ(300U, p->opt.total_steps);
	EXPECT_EQ(0.001, p->opt.min_lr);
	wsep_program_free(p);
}

/* The GPT: AdamW by weight streaming, the decay's own length over max_steps. */
TEST_F(cli, gpt_from_the_example)
{
	struct wsep_program *p;

	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc tests/corpus/onnx/gpt-tiny.onnx --params models/params/gpt-tiny.yaml -q -o %s/gpt.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "gpt.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(8U, p->batch);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p->mode);
	EXPECT_EQ(WSEP_OPT_ADAMW, p->opt.kind);
	EXPECT_EQ(0.01, p->opt.weight_decay);
	EXPECT_EQ(10U, p->opt.warmup);
	EXPECT_EQ(200U, p->opt.total_steps);
	EXPECT_EQ(1U, p->seed);
	wsep_program_free(p);
}

/* wsetrain hands the file to the compiler, its own options after it. */
TEST_F(cli, wsetrain_compiles_with_the_file)
{
	struct wsep_program *p;

	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsetrain tests/corpus/onnx/cnn-tiny.onnx --params models/params/cnn-tiny.yaml --execution-mode weight_streaming --compile-only -o %s/cnn.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "cnn.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(64U, p->batch);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p->mode);
	EXPECT_EQ(WSEP_OPT_ADAM, p->opt.kind);
	wsep_program_free(p);
}

/*
 * A program compiled for another batch than the file's is refused naming
 * the key, before a device is looked for or a run directory made.
 */
TEST_F(cli, wsetrain_refuses_a_program_of_another_batch)
{
	char path[128];

	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc tests/corpus/onnx/cnn-tiny.onnx --params models/params/cnn-tiny.yaml --batch 32 -q -o %s/cnn32.wsep",
			 self->dir));
	EXPECT_EQ(1, run(_metadata, self->out,
			 "build/bin/wsetrain %s/cnn32.wsep --params models/params/cnn-tiny.yaml --model_dir %s/run",
			 self->dir, self->dir));
	EXPECT_NE(NULL, strstr(self->out, "models/params/cnn-tiny.yaml:8: train_input.batch_size 64: "));
	EXPECT_NE(NULL, strstr(self->out, "cnn32.wsep was compiled for batches of 32"));
	snprintf(path, sizeof(path), "%s/run", self->dir);
	EXPECT_NE(0, access(path, F_OK));
}

/* ModelZoo's SGD with a momentum (and nesterov) is wsecc's nesterov. */
TEST_F(cli, modelzoo_sgd_with_momentum)
{
	struct wsep_program *p;
	char path[128];

	snprintf(path, sizeof(path), "%s/sgd.yaml", self->dir);
	write_file(path, "train_input:\n  batch_size: 16\noptimizer:\n  optimizer_type: SGD\n"
			 "  momentum: 0.8\n  nesterov: true\n  weight_decay: 0.0001\n"
			 "  learning_rate: 0.05\n");
	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc tests/corpus/onnx/cnn-tiny.onnx --params %s -q -o %s/sgd.wsep",
			 path, self->dir));
	p = program(_metadata, self->dir, "sgd.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(16U, p->batch);
	EXPECT_EQ(WSEP_OPT_MOMENTUM, p->opt.kind);
	EXPECT_EQ(1U, p->opt.nesterov);
	EXPECT_EQ(0.8, p->opt.momentum);
	EXPECT_EQ(0.0001, p->opt.weight_decay);
	EXPECT_EQ(0.05, p->opt.lr);
	EXPECT_EQ(WSEP_LR_CONSTANT, p->opt.schedule);
	wsep_program_free(p);
}

TEST_F(cli, bad_files_are_refused_with_file_line_and_key)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/p.yaml", self->dir);
	write_file(path, "runconfig:\n  max_steps: 10\n  max_step: 5\n");
	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsecc models/fc-mnist --params %s -o %s/x.wsep",
			 path, self->dir));
	EXPECT_NE(NULL, strstr(self->out, "p.yaml:3: runconfig.max_step: unknown key"));
	snprintf(path, sizeof(path), "%s/x.wsep", self->dir);
	EXPECT_NE(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/p.yaml", self->dir);
	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsetrain models/fc-mnist --params %s", path));
	EXPECT_NE(NULL, strstr(self->out, "p.yaml:3: runconfig.max_step: unknown key"));

	write_file(path, "train_input:\n  batch_size: big\n");
	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsecc models/fc-mnist --params %s -o %s/x.wsep",
			 path, self->dir));
	EXPECT_NE(NULL, strstr(self->out, "p.yaml:2: train_input.batch_size: 'big': expected a whole number"));

	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsecc models/fc-mnist --params %s/none.yaml",
			 self->dir));
	EXPECT_NE(NULL, strstr(self->out, "cannot read the params file"));
	EXPECT_EQ(2, run(_metadata, self->out,
			 "build/bin/wsecc models/fc-mnist --params %s --params %s", path, path));
	EXPECT_NE(NULL, strstr(self->out, "--params given twice"));
}

/* One name per concept: --execution-mode in wsecc too, --mode its older spelling. */
TEST_F(cli, one_name_per_concept)
{
	struct wsep_program *p;

	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc models/fc-mnist --mode weight_streaming -q -o %s/a.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "a.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p->mode);
	wsep_program_free(p);
	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsecc models/fc-mnist --execution-mode fast"));
	EXPECT_NE(NULL, strstr(self->out, "--execution-mode 'fast': expected auto, pipelined or weight_streaming"));
	/* --max-steps is --steps; the schedule needs a warm-up below it. */
	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc models/fc-mnist --warmup 5 --max-steps 20 -q -o %s/b.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "b.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(5U, p->opt.warmup);
	EXPECT_EQ(20U, p->opt.total_steps);
	wsep_program_free(p);
	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsecc models/fc-mnist --warmup 20 --max_steps 20"));
	EXPECT_NE(NULL, strstr(self->out, "--steps '20': outside 21.."));
	/* A schedule's length apart from the run's. */
	ASSERT_EQ(0, run(_metadata, self->out,
			 "build/bin/wsecc models/fc-mnist --min-lr 1e-5 --steps 20 --schedule-steps 50 -q -o %s/c.wsep",
			 self->dir));
	p = program(_metadata, self->dir, "c.wsep");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0U, p->opt.warmup);
	EXPECT_EQ(50U, p->opt.total_steps);
	EXPECT_EQ(1e-5, p->opt.min_lr);
	wsep_program_free(p);
	/* A model text keeps its own optimizer unless told otherwise. */
	EXPECT_EQ(2, run(_metadata, self->out, "build/bin/wsecc models/fc-mnist --momentum 0.5"));
	EXPECT_NE(NULL, strstr(self->out, "--momentum needs --optimizer momentum or nesterov"));
}

TEST_HARNESS_MAIN
