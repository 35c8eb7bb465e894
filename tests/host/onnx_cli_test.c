// SPDX-License-Identifier: GPL-2.0-only
/*
 * The programs on ONNX models, from the repository root (as make check
 * runs them): wsecc --validate-only on PyTorch exports, its exit statuses
 * and messages; --no-weights on a shapes-only export; and short
 * wse-graphtrain runs on real data (Fashion-MNIST, a fortunes file) whose
 * loss must fall: the smoke versions of the CNN, GPT and BERT trainings of
 * Documentation/onnx-import.rst.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

#define WSECC "build/bin/wsecc"
#define TRAIN "build/bin/wse-graphtrain"
#define FASHION "/usr/share/datasets/fashion-mnist"
#define FORTUNES "/usr/share/games/fortunes/fortunes"

static char out[1 << 16];

/* Runs a shell command; its exit status, and both streams in out. */
static int run(const char *cmd)
{
	return run_cmd_all(cmd, out, sizeof(out));
}

TEST(wsecc_validates_pytorch_exports)
{
	ASSERT_EQ(0, access(WSECC, X_OK)) TH_LOG("run make, from the repository root");
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --validate-only --batch 4"));
	EXPECT_NE(NULL, strstr(out, "gpt-tiny.onnx: ok: pytorch 1.13"));
	EXPECT_NE(NULL, strstr(out, "-> attention_f32"));
	EXPECT_NE(NULL, strstr(out, "-> gelu_f32"));
	EXPECT_NE(NULL, strstr(out, "(in /blocks/blocks.0/attn/Reshape_3: attention_f32)"));
	EXPECT_NE(NULL, strstr(out, "[4,8,96]"));	/* the batch bound to 4 */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/cnn-tiny.onnx --validate-only"));
	EXPECT_NE(NULL, strstr(out, "Conv                     -> conv2d_f32"));
	EXPECT_NE(NULL, strstr(out, "MaxPool                  -> maxpool2d_f32"));
}

TEST(wsecc_compiles_pytorch_exports)
{
	char dir[] = "/tmp/onnx-cli-XXXXXX", cmd[512];

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), WSECC " tests/corpus/onnx/cnn-tiny.onnx --batch 8 --wafer 64x64 -o %s/c.wsep",
		 dir);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "cnn-tiny: graph program, pipelined on 64x64, 4 units"));
	snprintf(cmd, sizeof(cmd), WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 4 --mode weight_streaming"
		 " --optimizer adamw --warmup 2 --steps 10 --report --svg %s/g.svg", dir);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "weight streaming (--execution-mode weight_streaming)"));
	EXPECT_NE(NULL, strstr(out, "   1 blocks.0    layernorm matmul binary split attention"));
	EXPECT_NE(NULL, strstr(out, "adamw lr=0.001 beta1=0.9 beta2=0.999 eps=1e-08 weight_decay=0.01, 2 warm-up steps then cosine to 0 at step 10"));
	snprintf(cmd, sizeof(cmd), "grep -c '<rect id=\"layer' %s/g.svg", dir);
	EXPECT_EQ(0, run(cmd));
	EXPECT_EQ(3, atoi(out));
	/* Training options are refused where they do not apply, saying why. */
	EXPECT_EQ(2, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --optimizer adam --momentum 0.5"));
	EXPECT_NE(NULL, strstr(out, "--momentum needs --optimizer momentum or nesterov"));
	/* The decay needs steps after the warm-up. */
	EXPECT_EQ(2, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --warmup 5 --steps 5"));
	EXPECT_NE(NULL, strstr(out, "--steps '5'"));
	/* A model text's optimizer may be overridden; its input and parameters are its own. */
	EXPECT_EQ(2, run(WSECC " models/fc-mnist --freeze 0.weight"));
	EXPECT_NE(NULL, strstr(out, "are for ONNX models"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

TEST(wsecc_no_weights_reports_from_shapes)
{
	char dir[] = "/tmp/onnx-cli-XXXXXX", cmd[512], with[160];
	const char *at;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 4 --report --svg %s/a.svg", dir);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s", out);
	at = strstr(out, "estimate:");
	ASSERT_NE(NULL, at);
	snprintf(with, sizeof(with), "%.*s", (int)strcspn(at, "\n"), at);
	/* The shapes-only export: the same estimate, from shapes alone. */
	snprintf(cmd, sizeof(cmd), WSECC " tests/corpus/onnx/shapes-tiny.onnx --no-weights --batch 4 --report --svg %s/b.svg", dir);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, with)) TH_LOG("%s\nwanted: %s", out, with);
	EXPECT_NE(NULL, strstr(out, "6608 parameters")) TH_LOG("%s", out);
	/* It has no values to train from: a program is refused, saying so. */
	EXPECT_EQ(1, run(WSECC " tests/corpus/onnx/shapes-tiny.onnx --batch 4 --report"));
	EXPECT_NE(NULL, strstr(out, "has no values (a shapes-only export?)")) TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), WSECC " tests/corpus/onnx/ext-tiny.onnx --no-weights -o %s/x.wsep", dir);
	EXPECT_EQ(2, run(cmd));
	EXPECT_NE(NULL, strstr(out, "it writes no program")) TH_LOG("%s", out);
	EXPECT_EQ(0, run(WSECC " tests/corpus/onnx/shapes-tiny.onnx --no-weights --validate-only -q"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

TEST(wsecc_lists_and_freezes_parameters)
{
	char dir[] = "/tmp/onnx-cli-XXXXXX", cmd[512];

	ASSERT_NE(NULL, mkdtemp(dir));
	/* No wse.parameters: every fp32 initializer a kernel reads trains, listed with its shape. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --validate-only")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "parameters: 18 trained (6608 values), 0 frozen by --freeze; no wse.parameters list")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  train   tok.weight                               [96x16]\n"));
	EXPECT_NE(NULL, strstr(out, "  train   head.bias                                [96]\n"));
	/* The exporter's Identity copies are parameters of their own, frozen by their own names. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --validate-only --freeze 'blocks.0.ln*' --freeze 'head.*'"));
	EXPECT_NE(NULL, strstr(out, "parameters: 13 trained (6448 values), 5 frozen by --freeze")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  frozen  head.bias                                [96]\n"));
	EXPECT_NE(NULL, strstr(out, "  frozen  blocks.0.ln2.weight                      [16]\n"));
	EXPECT_EQ(NULL, strstr(out, "  train   head.bias"));
	EXPECT_NE(NULL, strstr(out, "  train   ln.weight"));
	/* The program holds the rest: 96 values fewer. */
	snprintf(cmd, sizeof(cmd), WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 4 --freeze 'head.b*' --report --svg %s/a.svg -o %s/a.wsep",
		 dir, dir);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "6512 parameters")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "gpt-tiny.onnx: note: 'head.bias' [96] is frozen by --freeze: a constant of the program, not trained"));
	/* With the export helper's list, --freeze applies on top of it. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tied-tiny.onnx --validate-only --freeze pos"));
	EXPECT_NE(NULL, strstr(out, "parameters: 16 trained (4944 values), 1 frozen by --freeze; the model lists its parameters (wse.parameters)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  frozen  pos                                      [1x8x16]\n"));
	/* A pattern that matches nothing is a mistake, said as such. */
	EXPECT_EQ(1, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --validate-only --freeze 'head.weigth'"));
	EXPECT_NE(NULL, strstr(out, "error: --freeze 'head.weigth' matches no initializer of the model")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(WSECC " models/fc-mnist --freeze 'fc*'"));
	EXPECT_NE(NULL, strstr(out, "are for ONNX models"));
	EXPECT_EQ(2, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --validate-only --freeze ''"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

TEST(wsecc_ties_tied_weights)
{
	/* A GPT whose head shares the token embedding: the exporter folded its transpose. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tied-tiny.onnx --validate-only"));
	EXPECT_NE(NULL, strstr(out, "tied/tok.weight/Transpose                Transpose                -> transpose_f32      [16,96]")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "onnx::MatMul_148 ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tied-tiny.onnx --batch 2 --report --svg /dev/null"));
	EXPECT_NE(NULL, strstr(out, "note: 'onnx::MatMul_148' [16x96] is bit for bit the transpose of parameter 'tok.weight' [96x16] (a weight tied in PyTorch, written twice by the exporter): tied, so it trains as 'tok.weight' through a Transpose")) TH_LOG("%s", out);
	/* Equal LayerNorm ones and zero biases are not ties. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 2 --report --svg /dev/null"));
	EXPECT_EQ(NULL, strstr(out, "tied")) TH_LOG("%s", out);
}

TEST(wsecc_warns_of_eval_mode_exports)
{
	/* Conv, BatchNorm2d, ReLU, Dropout, Linear exported in eval mode, annotated by the helper. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/bn-eval-tiny.onnx --validate-only -q")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "warning: module '1' (BatchNorm2d) is not in the graph: an eval-mode export folded it into the Conv before it")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "warning: module '4' (Dropout) is not in the graph: an eval-mode export removed it"));
	EXPECT_NE(NULL, strstr(out, "warning: node '/0/Conv' (Conv) reads 'onnx::Conv_15', which is not a parameter of the PyTorch model: it stays constant"));
	EXPECT_NE(NULL, strstr(out, "training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False"));
	/* A training-mode export with BatchNorm and one without either op are not warned about. */
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/bn-tiny.onnx --validate-only -q"));
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
	ASSERT_EQ(0, run(WSECC " tests/corpus/onnx/cnn-tiny.onnx --validate-only -q"));
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
}

TEST(wsecc_refuses_bad_onnx_files)
{
	char dir[] = "/tmp/onnx-cli-XXXXXX", cmd[512];

	ASSERT_NE(NULL, mkdtemp(dir));
	/* Truncated. */
	snprintf(cmd, sizeof(cmd), "head -c 3000 tests/corpus/onnx/gpt-tiny.onnx > %s/cut.onnx && "
		 WSECC " %s/cut.onnx --validate-only", dir, dir);
	EXPECT_EQ(1, run(cmd));
	EXPECT_NE(NULL, strstr(out, "cut.onnx: error:"));
	/* An op without a kernel: the listing names it, the error too. */
	snprintf(cmd, sizeof(cmd), "sed 's/Softmax/Softmin/g' tests/corpus/onnx/gpt-tiny.onnx > %s/x.onnx && "
		 WSECC " %s/x.onnx --validate-only", dir, dir);
	EXPECT_EQ(1, run(cmd));
	EXPECT_NE(NULL, strstr(out, "NO KERNEL: unsupported op: no kernel for Softmin"));
	EXPECT_NE(NULL, strstr(out, "error: node /blocks/blocks.0/attn/Softmin (Softmin): unsupported op"));
	EXPECT_EQ(1, run(WSECC " /nonexistent.onnx --validate-only"));
	EXPECT_NE(NULL, strstr(out, "cannot open"));
	EXPECT_EQ(2, run(WSECC " tests/corpus/onnx/gpt-tiny.onnx --validate-only --batch 0"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

/* The number after @key on the last line holding it. */
static double last_value(const char *key)
{
	const char *p = out, *hit = NULL;

	while ((p = strstr(p, key))) {
		hit = p;
		p++;
	}
	return hit ? atof(hit + strlen(key)) : -1.0;
}

TEST(cnn_trains_on_fashion_mnist)
{
	if (access(FASHION, R_OK))
		SKIP(return, "no %s (tools/install-deps installs dataset-fashion-mnist)", FASHION);
	ASSERT_EQ(0, run(TRAIN " tests/corpus/onnx/cnn-tiny.onnx --images " FASHION
			 " --steps 300 --batch 64 --lr 0.01 --log-every 0"));
	/* 300 steps of a 2-4-channel CNN: far above chance (0.1). */
	TH_LOG("%s", out);
	EXPECT_GT(last_value("accuracy "), 0.6);
}

TEST(gpt_loss_falls_on_fortunes)
{
	double first, last;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	ASSERT_EQ(0, run(TRAIN " tests/corpus/onnx/gpt-tiny.onnx --text " FORTUNES
			 " --steps 60 --batch 8 --lr 0.01 --eval-every 60 --log-every 0"));
	first = atof(strstr(out, "step 0 val_loss ") + strlen("step 0 val_loss "));
	last = last_value("step 60 val_loss ");
	TH_LOG("validation loss %.4f -> %.4f", first, last);
	EXPECT_LT(last, first - 1.0);
}

/*
 * The BERT-style encoder with its padding-mask input, masked-LM batches
 * (--mlm); the GPT-style model, with one input, is refused for --mlm, and
 * --mlm without text is a usage error.
 */
TEST(bert_masked_lm_loss_falls_on_fortunes)
{
	double first, last;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	ASSERT_EQ(0, run(TRAIN " tests/corpus/onnx/bert-tiny.onnx --mlm --text " FORTUNES
			 " --steps 60 --batch 8 --lr 0.01 --eval-every 60 --log-every 0")) TH_LOG("%s", out);
	first = atof(strstr(out, "step 0 val_loss ") + strlen("step 0 val_loss "));
	last = last_value("step 60 val_loss ");
	TH_LOG("masked-LM validation loss %.4f -> %.4f", first, last);
	EXPECT_LT(last, first - 1.0);
	EXPECT_EQ(1, run(TRAIN " tests/corpus/onnx/gpt-tiny.onnx --mlm --text " FORTUNES " --steps 1"));
	EXPECT_NE(NULL, strstr(out, "two inputs (tokens and the padding mask)")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(TRAIN " tests/corpus/onnx/bert-tiny.onnx --mlm --images /tmp --steps 1"));
	EXPECT_NE(NULL, strstr(out, "--mlm needs --text FILE"));
}

TEST_HARNESS_MAIN
