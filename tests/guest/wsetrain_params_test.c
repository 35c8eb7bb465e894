// SPDX-License-Identifier: GPL-2.0-only
/*
 * One params.yaml drives wsecc and wsetrain for fc-mnist, the CNN and the
 * GPT (models/params/): each trains on the device with the file's
 * settings and the command line's over them, and its run directory keeps
 * the set it resolved, the schedule's length the run's where the file
 * leaves it out. A program compiled for another batch is refused naming
 * the file's key.
 *
 * The device: the appliance wsevm started on the host (/wse/appliance-addr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse_guest.h"

#define FMNIST		"/usr/share/datasets/fashion-mnist"
#define FORTUNES	"/usr/share/games/fortunes/fortunes"
#define OUT_MAX		(64 << 10)

FIXTURE(params) {
	struct wse_ctl *ctl;
	struct wse_dev_status dev;
	bool attached;
	char devices[32];
	char *out;
	char *file;
};

FIXTURE_SETUP(params)
{
	char addr[160];

	self->attached = false;
	self->out = malloc(OUT_MAX);
	self->file = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_NE(NULL, self->file);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	if (!guest_host_appliance(addr))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 1)");
	ASSERT_EQ(0, guest_attach(self->ctl, addr, 0, &self->dev));
	self->attached = true;
	snprintf(self->devices, sizeof(self->devices), "--devices %u", self->dev.index);
}

FIXTURE_TEARDOWN(params)
{
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	wse_ctl_close(self->ctl);
	free(self->out);
	free(self->file);
}

/* @dir/params.yaml into @buf; its length, or -1. */
static long resolved(const char *dir, char *buf, size_t cap)
{
	char path[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/params.yaml", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (long)n;
}

/*
 * fc-mnist: a model text compiled with the file's batch and rate; two
 * epochs in the file, 100 steps on the command line, so the decay after
 * the warm-up of 50 ends at step 100.
 */
TEST_F_TIMEOUT(params, fc_mnist, 600)
{
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	st = guest_run(self->out, OUT_MAX,
		       "wsecc models/fc-mnist --params models/params/fc-mnist.yaml -q -o /tmp/pfc.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		       "rm -rf /tmp/pfc-run && wsetrain /tmp/pfc.wsep --params models/params/fc-mnist.yaml %s --steps 100 --test-limit 1000 --model_dir /tmp/pfc-run --expect-accuracy 0.5",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	ASSERT_LT(0, resolved("/tmp/pfc-run", self->file, OUT_MAX));
	TH_LOG("params.yaml:\n%s", self->file);
	EXPECT_NE(NULL, strstr(self->file, "  batch_size: 128\n"));
	EXPECT_NE(NULL, strstr(self->file, "  optimizer_type: \"adam\"\n"));
	EXPECT_NE(NULL, strstr(self->file, "    - scheduler: Linear\n      initial_learning_rate: 0\n      end_learning_rate: 0.002\n      total_iters: 50\n"));
	EXPECT_NE(NULL, strstr(self->file, "      end_learning_rate: 0.0001\n      total_iters: 50\n"));
	EXPECT_NE(NULL, strstr(self->file, "  max_steps: 100\n"));
	EXPECT_NE(NULL, strstr(self->file, "  num_epochs: 2\n"));
	EXPECT_NE(NULL, strstr(self->file, "  execution_mode: \"pipelined\"\n"));
	/* The record is a params file the tools read back. */
	st = guest_run(self->out, OUT_MAX,
		       "wsecc models/fc-mnist --params /tmp/pfc-run/params.yaml -q -o /tmp/pfc2.wsep");
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
}

/*
 * The CNN: wsetrain takes the ONNX model with the file (it compiles it
 * with the file's batch and optimizer); the schedule's length is the
 * command line's 150 steps, not the file's 300.
 */
TEST_F_TIMEOUT(params, cnn, 600)
{
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	st = guest_run(self->out, OUT_MAX,
		       "rm -rf /tmp/pcnn-run && wsetrain tests/corpus/onnx/cnn-tiny.onnx --params models/params/cnn-tiny.yaml %s --steps 150 --test-limit 1000 --model_dir /tmp/pcnn-run --expect-accuracy 0.45",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	EXPECT_NE(NULL, strstr(self->out, "cnn-tiny, pipelined on 1 system"));
	ASSERT_LT(0, resolved("/tmp/pcnn-run", self->file, OUT_MAX));
	TH_LOG("params.yaml:\n%s", self->file);
	EXPECT_NE(NULL, strstr(self->file, "  batch_size: 64\n"));
	EXPECT_NE(NULL, strstr(self->file, "  optimizer_type: \"adam\"\n"));
	EXPECT_NE(NULL, strstr(self->file, "      end_learning_rate: 0.001\n      total_iters: 130\n"));
	EXPECT_NE(NULL, strstr(self->file, "  max_steps: 150\n"));
	/* A program of another batch is refused, naming the file's key. */
	st = guest_run(self->out, OUT_MAX,
		       "wsecc tests/corpus/onnx/cnn-tiny.onnx --params models/params/cnn-tiny.yaml --batch 32 -q -o /tmp/pcnn32.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/pcnn32.wsep --params models/params/cnn-tiny.yaml %s --steps 1",
		       self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "cnn-tiny.yaml:8: train_input.batch_size 64: /tmp/pcnn32.wsep was compiled for batches of 32"))
		TH_LOG("%s", self->out);
}

/* The GPT by weight streaming: the decay's own length (10 + 190) stays. */
TEST_F_TIMEOUT(params, gpt, 600)
{
	int st;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no fortunes file (apt install fortunes-min)");
	st = guest_run(self->out, OUT_MAX,
		       "wsecc tests/corpus/onnx/gpt-tiny.onnx --params models/params/gpt-tiny.yaml -q -o /tmp/pgpt.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		       "rm -rf /tmp/pgpt-run && wsetrain /tmp/pgpt.wsep --params models/params/gpt-tiny.yaml %s --text " FORTUNES " --steps 40 --model_dir /tmp/pgpt-run",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	EXPECT_NE(NULL, strstr(self->out, "gpt-tiny, weight_streaming on "));
	ASSERT_LT(0, resolved("/tmp/pgpt-run", self->file, OUT_MAX));
	TH_LOG("params.yaml:\n%s", self->file);
	EXPECT_NE(NULL, strstr(self->file, "  optimizer_type: \"adamw\"\n"));
	EXPECT_NE(NULL, strstr(self->file, "      total_iters: 10\n"));
	EXPECT_NE(NULL, strstr(self->file, "      total_iters: 190\n"));
	EXPECT_NE(NULL, strstr(self->file, "  max_steps: 40\n"));
	EXPECT_NE(NULL, strstr(self->file, "  execution_mode: \"weight_streaming\"\n"));
}

TEST_HARNESS_MAIN
