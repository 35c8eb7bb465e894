// SPDX-License-Identifier: GPL-2.0-only
/*
 * Graph programs through wsetrain and the driver, the smoke versions of
 * the trainings (Documentation/onnx-import.rst): the small CNN
 * export compiled by wsecc in the guest and trained layer-pipelined on
 * Fashion-MNIST, its accuracy far above chance; the one-block GPT export
 * trained by weight streaming on a fortunes file, its validation loss
 * falling, checkpointed, and characters sampled from the checkpoint; the
 * BERT-style encoder fed tokens and a padding mask, trained by masked LM
 * to the host executor's validation loss; the GPT with a tied head in
 * both modes, to the host executor's validation loss too; and
 * an ONNX model given to wsetrain directly refused with what to do.
 *
 * The device: the appliance wsevm started on the host (/wse/appliance-addr),
 * whose MemoryX holds a weight-streaming program's weights; a pipelined
 * program runs on one of its systems.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse_guest.h"

#define FMNIST		"/usr/share/datasets/fashion-mnist"
#define FORTUNES	"/usr/share/games/fortunes/fortunes"
#define OUT_MAX		(64 << 10)

FIXTURE(graph) {
	struct wse_ctl *ctl;
	struct wse_dev_status dev;
	bool attached;
	char devices[32];
	char *out;
};

FIXTURE_SETUP(graph)
{
	char addr[160];

	self->attached = false;
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	if (!guest_host_appliance(addr))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 1)");
	ASSERT_EQ(0, guest_attach(self->ctl, addr, 0, &self->dev));
	self->attached = true;
	snprintf(self->devices, sizeof(self->devices), "--devices %u", self->dev.index);
}

FIXTURE_TEARDOWN(graph)
{
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	wse_ctl_close(self->ctl);
	free(self->out);
}

/* The number after the last @key in @out, -1 if none. */
static double last_after(const char *out, const char *key)
{
	const char *p = out, *hit = NULL;

	while ((p = strstr(p, key))) {
		hit = p;
		p++;
	}
	return hit ? atof(hit + strlen(key)) : -1.0;
}

/* The loss of the last evaluation ("| Eval ..., Loss=X, ..."), -1 if none. */
static double eval_loss(const char *out)
{
	const char *p = out, *hit = NULL;

	while ((p = strstr(p, "| Eval "))) {
		hit = p;
		p++;
	}
	return hit ? last_after(hit, "Loss=") : -1.0;
}

TEST_F_TIMEOUT(graph, cnn_trains_layer_pipelined, 600)
{
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/cnn-tiny.onnx --batch 64 --lr 0.01 --mode pipelined -q -o /tmp/cnn.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain /tmp/cnn.wsep %s --steps 150 --test-limit 1000 --report 50 --expect-accuracy 0.45",
		 self->devices);
	TH_LOG("%s", self->out);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(self->out, "cnn-tiny, pipelined on 1 system"));
	EXPECT_GT(eval_loss(self->out), 0);
}

/*
 * A graph program's input shape is its input value's: cnn-tiny takes
 * 1x28x28 (Fashion-MNIST's 28x28 fits it, above), and CIFAR-10's 3x32x32
 * samples are refused with both shapes.
 */
TEST_F_TIMEOUT(graph, cnn_refuses_samples_of_another_shape, 300)
{
	static uint8_t rec[4 * 3073];
	FILE *f;
	int st;

	mkdir("/tmp/cifar-shape", 0755);
	f = fopen("/tmp/cifar-shape/data_batch_1.bin", "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fwrite(rec, sizeof(rec), 1, f));
	ASSERT_EQ(0, fclose(f));
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/cnn-tiny.onnx --batch 64 --lr 0.01 --mode pipelined -q -o /tmp/cnn-shape.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	mkdir("/tmp/shape-runs", 0755);
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/cnn-shape.wsep %s --data /tmp/cifar-shape --no-eval --runs /tmp/shape-runs",
		       self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "the data's samples are 3x32x32, the program's input is 1x28x28"))
		TH_LOG("%s", self->out);
	/* Refused before it started: it leaves no run directory behind. */
	st = guest_run(self->out, OUT_MAX, "rmdir /tmp/shape-runs");
	EXPECT_EQ(0, st) TH_LOG("a run directory was left: %s", self->out);
}

/*
 * A CIFAR-10 batch of @n records at @path: label i % 10, and an image of
 * dim noise with a bright stripe whose place (across the three planes)
 * tells the class.
 */
static int write_cifar10(const char *path, uint32_t n, uint32_t seed)
{
	uint8_t *buf = malloc((size_t)n * 3073);
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!buf || !f)
		ret = -1;
	for (uint32_t i = 0; !ret && i < n; i++) {
		uint8_t *r = buf + (size_t)i * 3073;

		r[0] = (uint8_t)(i % 10);
		for (uint32_t j = 0; j < 3072; j++) {
			seed = seed * 1103515245U + 12345U;
			r[1 + j] = j / 307 == r[0] ? (uint8_t)(200 + (seed >> 28)) : (uint8_t)(seed >> 27);
		}
	}
	if (!ret && fwrite(buf, 3073, n, f) != n)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	free(buf);
	return ret;
}

/* A CNN of 3x32x32 input trains on a generated CIFAR-10 directory. */
TEST_F_TIMEOUT(graph, cnn_trains_on_cifar10_batches, 600)
{
	double acc;
	int st;

	mkdir("/tmp/cifar-cnn", 0755);
	ASSERT_EQ(0, write_cifar10("/tmp/cifar-cnn/data_batch_1.bin", 640, 1));
	ASSERT_EQ(0, write_cifar10("/tmp/cifar-cnn/test_batch.bin", 160, 3));
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/cifar-cnn-tiny.onnx --batch 32 --lr 0.01 --mode pipelined -q -o /tmp/cifar-cnn.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/cifar-cnn.wsep %s --data /tmp/cifar-cnn --epochs 3",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	acc = last_after(self->out, "test accuracy ");
	/* Ten classes told apart by where the stripe is: far above chance (0.1). */
	EXPECT_LT(0.8, acc);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * Split @split of an IDX dataset in @dir: @n samples of 3x32x32 floats
 * (NxCxHxW, type 0x0D), the stripe images of write_cifar10() scaled to
 * 0..1, and their labels.
 */
static int write_float_idx(const char *dir, const char *split, uint32_t n, uint32_t seed)
{
	size_t len = 20 + (size_t)n * 3072 * 4;
	uint8_t *buf = malloc(len), lab[8 + 1024];
	char path[256];
	FILE *f;
	int ret = 0;

	if (!buf || n > 1024) {
		free(buf);
		return -1;
	}
	put_be32(buf, 0xd04);
	put_be32(buf + 4, n);
	put_be32(buf + 8, 3);
	put_be32(buf + 12, 32);
	put_be32(buf + 16, 32);
	put_be32(lab, 0x801);
	put_be32(lab + 4, n);
	for (uint32_t i = 0; i < n; i++) {
		lab[8 + i] = (uint8_t)(i % 10);
		for (uint32_t j = 0; j < 3072; j++) {
			float x;
			uint32_t bits;

			seed = seed * 1103515245U + 12345U;
			x = j / 307 == i % 10 ? 0.8f + (float)(seed >> 28) / 64 :
						(float)(seed >> 27) / 255;
			memcpy(&bits, &x, 4);
			put_be32(buf + 20 + ((size_t)i * 3072 + j) * 4, bits);
		}
	}
	snprintf(path, sizeof(path), "%s/%s-images-idx4-float", dir, split);
	f = fopen(path, "w");
	if (!f || fwrite(buf, len, 1, f) != 1)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	snprintf(path, sizeof(path), "%s/%s-labels-idx1-ubyte", dir, split);
	f = fopen(path, "w");
	if (!f || fwrite(lab, 8 + n, 1, f) != 1)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	free(buf);
	return ret;
}

/*
 * The same CNN compiled for float inputs (wsecc --input f32) trains on an
 * IDX dataset of NxCxHxW floats; its byte-input build refuses them.
 */
TEST_F_TIMEOUT(graph, cnn_trains_on_float_idx, 600)
{
	int st;

	mkdir("/tmp/float-idx", 0755);
	ASSERT_EQ(0, write_float_idx("/tmp/float-idx", "train", 640, 1));
	ASSERT_EQ(0, write_float_idx("/tmp/float-idx", "t10k", 160, 3));
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/cifar-cnn-tiny.onnx --input f32 --batch 32 --lr 0.01 --mode pipelined -q -o /tmp/cifar-f32.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/cifar-f32.wsep %s --data /tmp/float-idx --epochs 3",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	EXPECT_LT(0.8, last_after(self->out, "test accuracy "));
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/cifar-cnn-tiny.onnx --batch 32 --mode pipelined -q -o /tmp/cifar-u8.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/cifar-u8.wsep %s --data /tmp/float-idx --no-eval",
		       self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "the data's samples are 3x32x32 floats, the program's input is 3x32x32 bytes (compile it for f32 inputs"))
		TH_LOG("%s", self->out);
}

/*
 * BatchNorm2d, layer-pipelined: the running statistics the training moved
 * are in the checkpoint, so evaluating it on a freshly loaded program
 * gives the training's own last evaluation (fresh statistics would not).
 */
TEST_F_TIMEOUT(graph, batchnorm_checkpoint_keeps_running_statistics, 600)
{
	double trained, loaded;
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/bn-tiny.onnx --batch 64 --lr 0.05 --mode pipelined -q -o /tmp/bn.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain /tmp/bn.wsep %s --steps 150 --test-limit 1000 --report 50 --checkpoint /tmp/bn.ckpt",
		 self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	trained = eval_loss(self->out);
	ASSERT_GT(trained, 0);
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/bn.wsep %s --eval /tmp/bn.ckpt --test-limit 1000",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	loaded = last_after(self->out, "test samples: loss ");
	EXPECT_LT(fabs(loaded - trained), 1e-4) TH_LOG("trained %.5f, from the checkpoint %.5f",
						     trained, loaded);
}

TEST_F_TIMEOUT(graph, gpt_streams_checkpoints_and_samples, 600)
{
	double last;
	int st;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/gpt-tiny.onnx --batch 8 --lr 0.01 --mode weight_streaming -q -o /tmp/gpt.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	unlink("/tmp/gpt.ckpt");
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain /tmp/gpt.wsep %s --text " FORTUNES " --steps 60 --report 20 --checkpoint /tmp/gpt.ckpt",
		 self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	/* --devices alone: as many of the appliance's systems as it has. */
	EXPECT_NE(NULL, strstr(self->out, "gpt-tiny, weight_streaming on "));
	last = eval_loss(self->out);
	/* ln(96) = 4.56 untrained; a character model learns fast. */
	EXPECT_GT(last, 0);
	EXPECT_LT(last, 3.2) TH_LOG("validation loss %.4f", last);
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain /tmp/gpt.wsep %s --text " FORTUNES " --resume /tmp/gpt.ckpt --sample 40 --prompt 'The ' --seed 3",
		 self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	EXPECT_EQ(0, strncmp(self->out, "The ", 4));
	EXPECT_GE(strlen(self->out), 4 + 40);
	/* Sampling needs a checkpoint and the corpus, and a program over characters. */
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsetrain /tmp/gpt.wsep --sample 5"));
	EXPECT_NE(NULL, strstr(self->out, "--sample needs a checkpoint"));
	EXPECT_EQ(1, guest_run(self->out, OUT_MAX, "wsetrain tests/corpus/onnx/gpt-tiny.onnx %s --steps 1",
			 self->devices));
	EXPECT_NE(NULL, strstr(self->out, "compile it first (wsecc"));
}

/*
 * The BERT-style encoder fed its tokens and padding mask (two inputs),
 * trained by masked LM through the driver: its validation loss (over the
 * predicted positions) is the one the graph executor gives on the same
 * batches, which onnx_graph_test ties to PyTorch's masked-LM loss.
 */
TEST_F_TIMEOUT(graph, bert_masked_lm_trains_as_the_host_executor, 600)
{
	double dev, ref;
	int st;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	st = guest_run(self->out, OUT_MAX,
		 "wsecc tests/corpus/onnx/bert-tiny.onnx --batch 8 --mode pipelined --optimizer adam --lr 0.01 --warmup 5 --steps 30 -q -o /tmp/bert.wsep");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/bert.wsep %s --text " FORTUNES " --steps 30 --report 10",
		       self->devices);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	dev = eval_loss(self->out);
	st = guest_run(self->out, OUT_MAX,
		 "wse-graphtrain tests/corpus/onnx/bert-tiny.onnx --mlm --text " FORTUNES " --batch 8 --steps 30 --optimizer adam --lr 0.01 --warmup 5 --eval-every 0 --log-every 0");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ref = last_after(self->out, "step 30 val_loss ");
	TH_LOG("validation loss: device %.4f, host executor %.4f", dev, ref);
	EXPECT_GT(ref, 0);
	/* Both print four decimals: the same computation. */
	EXPECT_LT(fabs(dev - ref), 1.5e-4);
}

/*
 * The GPT whose output head shares the token embedding, which wsecc ties
 * back into one parameter: through the driver, pipelined and weight
 * streamed, its validation loss is the host executor's on the same
 * batches, which onnx_graph_test ties to PyTorch's SGD steps.
 */
TEST_F_TIMEOUT(graph, tied_gpt_trains_as_the_host_executor_in_both_modes, 600)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	double dev[2], ref;
	int st;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	for (int m = 0; m < 2; m++) {
		st = guest_run(self->out, OUT_MAX,
			 "wsecc tests/corpus/onnx/gpt-tied-tiny.onnx --batch 8 --mode %s --optimizer adamw --lr 0.01 --warmup 5 --steps 30 -q -o /tmp/tied.wsep",
			 modes[m]);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/tied.wsep %s --text " FORTUNES " --steps 30 --report 10",
			       self->devices);
		TH_LOG("%s", self->out);
		ASSERT_EQ(0, st);
		dev[m] = eval_loss(self->out);
	}
	st = guest_run(self->out, OUT_MAX,
		 "wse-graphtrain tests/corpus/onnx/gpt-tied-tiny.onnx --text " FORTUNES " --batch 8 --steps 30 --optimizer adamw --lr 0.01 --warmup 5 --eval-every 0 --log-every 0");
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ref = last_after(self->out, "step 30 val_loss ");
	TH_LOG("validation loss: pipelined %.4f, weight streaming %.4f, host executor %.4f", dev[0],
	       dev[1], ref);
	EXPECT_GT(ref, 0);
	/* Printed to four decimals: the same computation. */
	EXPECT_LT(fabs(dev[0] - ref), 1.5e-4);
	EXPECT_LT(fabs(dev[1] - ref), 1.5e-4);
}

TEST_HARNESS_MAIN
