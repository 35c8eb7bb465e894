// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsecc, the program: exit statuses, messages on stderr, the report and
 * SVG, and the programs it writes. Runs build/bin/wsecc from the
 * repository root (as make check does).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "wse/wsep.h"
#include "test_files.h"

#define WSECC "build/bin/wsecc"

FIXTURE(cli) {
	char dir[64];
	char out[65536];
	char cmd[1024];
};

FIXTURE_SETUP(cli)
{
	ASSERT_EQ(0, access(WSECC, X_OK)) TH_LOG("%s missing: run make, from the repository root",
						 WSECC);
	strcpy(self->dir, "/tmp/wsecc_cli_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(cli)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

TEST_F(cli, help_and_usage_errors)
{
	EXPECT_EQ(0, run_cmd_all(WSECC " --help", self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "usage: wsecc MODEL"));
	EXPECT_NE(NULL, strstr(self->out, "--validate-only"));
	EXPECT_EQ(2, run_cmd_all(WSECC, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "expected a MODEL file"));
	EXPECT_NE(NULL, strstr(self->out, "Try 'wsecc --help'"));
	EXPECT_EQ(2, run_cmd_all(WSECC " models/fc-mnist --mode fast", self->out, sizeof(self->out)));
	/* --mode is --execution-mode's older spelling, and says the same. */
	EXPECT_NE(NULL, strstr(self->out, "--execution-mode 'fast': expected auto, pipelined or weight_streaming"));
	EXPECT_EQ(2, run_cmd_all(WSECC " models/fc-mnist --wafer 12", self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "--wafer: wafer '12'"));
	EXPECT_EQ(2, run_cmd_all(WSECC " models/fc-mnist --batch 0", self->out, sizeof(self->out)));
	EXPECT_EQ(2, run_cmd_all(WSECC " models/fc-mnist --micro-batch 0", self->out,
				 sizeof(self->out)));
	EXPECT_EQ(1, run_cmd_all(WSECC " /nonexistent", self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "/nonexistent: error: cannot open the model file"));
}

TEST_F(cli, report_prints_placement_and_writes_svg)
{
	char svg[128];
	FILE *f;
	char head[8] = "";

	snprintf(svg, sizeof(svg), "%s/fc.svg", self->dir);
	snprintf(self->cmd, sizeof(self->cmd), WSECC " models/fc-mnist --report --svg %s", svg);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "mode:   layer-pipelined"));
	EXPECT_NE(NULL, strstr(self->out, "estimate:"));
	EXPECT_NE(NULL, strstr(self->out, "even split:"));
	EXPECT_NE(NULL, strstr(self->out, "svg:"));
	f = fopen(svg, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(5, fread(head, 1, 5, f));
	fclose(f);
	EXPECT_STREQ("<?xml", head);
}

/* A batch whose activations never fit whole streams in micro-batches; too large a one is refused. */
TEST_F(cli, micro_batches_chosen_shown_and_refused_too_large)
{
	/* Its own directory, never the machine's /dev/null, should the refusal be lost. */
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-large --batch 65536 --micro-batch 2000 -o %s/l.wsep", self->dir);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "a micro-batch of 2000 samples do not fit"))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "the largest micro-batch that fits is 1113"));
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-large --batch 65536 --report --svg %s/l.svg", self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "micro-batch: 1113 samples, 59 per batch of 65536 (the wafer fits 1113)"))
		TH_LOG("%s", self->out);
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-mnist --wafer wse2 --report --svg %s/m.svg", self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "pipeline:    depth 5 micro-batches of 1 at stage 0"))
		TH_LOG("%s", self->out);
}

TEST_F(cli, large_model_streams_and_refuses_pipelined)
{
	char path[128], err[256];
	struct wsep_program *p;

	EXPECT_EQ(1, run_cmd_all(WSECC " models/fc-large --wafer 64x64:48K --mode pipelined", self->out,
			 sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "models/fc-large: error: --execution-mode pipelined refused"));
	EXPECT_NE(NULL, strstr(self->out, "needs 589.76 MB"));
	EXPECT_NE(NULL, strstr(self->out, "176.16 MB usable"));

	snprintf(path, sizeof(path), "%s/large.wsep", self->dir);
	snprintf(self->cmd, sizeof(self->cmd), WSECC " models/fc-large --compile-only -o %s", path);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "weight_streaming on 64x64:48K"));
	ASSERT_EQ(0, wsep_read_file(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p->mode);
	EXPECT_EQ(4, p->num_layers);
	EXPECT_EQ(NULL, p->weights);
	wsep_program_free(p);
}

TEST_F(cli, compile_only_writes_a_valid_program)
{
	char path[128], err[256];
	struct wsep_program *p;

	snprintf(path, sizeof(path), "%s/fc.wsep", self->dir);
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-mnist --wafer 32x32:48K --batch 64 --compile-only -o %s", path);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, wsep_read_file(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_MODE_PIPELINED, p->mode);
	EXPECT_EQ(64, p->batch);
	EXPECT_EQ(32, p->wafer.width);
	EXPECT_EQ(269322, p->num_weights);
	wsep_program_free(p);
}

/* --precision: recorded in the program (feature 0x10) in both modes, shown, refused when unknown. */
TEST_F(cli, precision_recorded_shown_and_refused)
{
	char path[128], err[256];
	struct wsep_program *p;

	snprintf(path, sizeof(path), "%s/fc.wsep", self->dir);
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-mnist --wafer 32x32:48K --precision bf16 -o %s", path);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "pipelined on 32x32:48K in bf16,")) TH_LOG("%s", self->out);
	ASSERT_EQ(0, wsep_read_file(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_PRECISION_BF16, p->precision);
	EXPECT_EQ(WSEP_FEATURE_PRECISION, p->features & WSEP_FEATURE_PRECISION);
	EXPECT_LE(5, p->version_minor);	/* precision arrived in 1.5 */
	wsep_program_free(p);
	/* A reader without the feature refuses it rather than train in fp32. */
	{
		size_t len;
		void *buf = test_read_file(path, &len);

		ASSERT_NE(NULL, buf);
		EXPECT_EQ(-EINVAL, wsep_read_features(buf, len, WSEP_FEATURES_KNOWN &
						      ~WSEP_FEATURE_PRECISION, &p, err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, "needs 16-bit compute (fp16 or bf16) (feature 0x10)"))
			TH_LOG("%s", err);
		free(buf);
	}
	/* An fp32 program announces no precision feature: older readers take it. */
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-mnist --wafer 32x32:48K -q -o %s", path);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, wsep_read_file(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_PRECISION_FP32, p->precision);
	EXPECT_EQ(0, p->features & WSEP_FEATURE_PRECISION);
	wsep_program_free(p);
	/* The report measures utilization against the precision's own peak. */
	{
		double fp32_peak = 0, half_peak = 0;
		const char *u;

		snprintf(self->cmd, sizeof(self->cmd),
			 WSECC " models/fc-mnist --wafer wse2 --report --svg %s/fc.svg", self->dir);
		ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
		u = strstr(self->out, "utilization:");
		ASSERT_NE(NULL, u) TH_LOG("%s", self->out);
		EXPECT_EQ(1, sscanf(u, "utilization: %*f%% of the %lf PFLOP/s fp32 peak", &fp32_peak))
			TH_LOG("%s", u);
		snprintf(self->cmd, sizeof(self->cmd),
			 WSECC " models/fc-mnist --wafer wse2 --precision bf16 --report --svg %s/fc.svg",
			 self->dir);
		ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
		u = strstr(self->out, "utilization:");
		ASSERT_NE(NULL, u) TH_LOG("%s", self->out);
		EXPECT_EQ(1, sscanf(u, "utilization: %*f%% of the %lf PFLOP/s 16-bit peak", &half_peak))
			TH_LOG("%s", u);
		/* WSE-2: 8 FLOPs per PE per cycle in 16 bits, 2 in fp32. */
		EXPECT_TRUE(fabs(half_peak / fp32_peak - 4.0) < 0.01)
			TH_LOG("16-bit %g, fp32 %g PFLOP/s", half_peak, fp32_peak);
	}
	snprintf(self->cmd, sizeof(self->cmd), WSECC " models/fc-mnist --precision fp8");
	EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "unknown --precision 'fp8': expected fp32, fp16 or bf16"))
		TH_LOG("%s", self->out);
	/* fp16 streams too: MemoryX holds a step's updates until it is known to be finite. */
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-mnist --mode weight_streaming --precision fp16 -o %s", path);
	EXPECT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, wsep_read_file(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_PRECISION_FP16, p->precision);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p->mode);
	wsep_program_free(p);
}

TEST_F(cli, model_errors_carry_positions)
{
	char model[128];
	FILE *f;

	snprintf(model, sizeof(model), "%s/bad", self->dir);
	f = fopen(model, "w");
	ASSERT_NE(NULL, f);
	fputs("input 784 u8\ndense 784 256 tanh\ndense 256 10 none\nloss softmax_xent\n"
	      "optimizer sgd lr=0.1\nbatch 8\nseed 1\n", f);
	fclose(f);
	snprintf(self->cmd, sizeof(self->cmd), WSECC " %s --validate-only", model);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "/bad:2:15: error: no kernel for op tanh_fwd"))
		TH_LOG("%s", self->out);

	f = fopen(model, "w");
	ASSERT_NE(NULL, f);
	fputs("input 784 u8\ndense 784 256 relu extra\n", f);
	fclose(f);
	snprintf(self->cmd, sizeof(self->cmd), WSECC " %s", model);
	EXPECT_EQ(1, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "/bad:2:20: error: unexpected 'extra'")) TH_LOG("%s", self->out);

	EXPECT_EQ(0, run_cmd_all(WSECC " models/fc-mnist --validate-only", self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "dense_bwd_weights  -> gemm_nt_bias_grad_f32"));
}

/*
 * --recompute: its usage errors; forced on, the program records it and the
 * report says it, with the micro-batch it fits; with --mode auto a model
 * that fits layer-pipelined is compiled so, and a note says why.
 */
TEST_F(cli, recompute_option)
{
	char prog[128], err[256];
	struct wsep_program *p;

	EXPECT_EQ(2, run_cmd_all(WSECC " tests/corpus/onnx/gpt-tiny.onnx --recompute maybe",
				 self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "unknown --recompute 'maybe': expected auto, on or off"));
	EXPECT_EQ(2, run_cmd_all(WSECC " models/fc-mnist --recompute on", self->out,
				 sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "--recompute is for ONNX models")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, run_cmd_all(WSECC " tests/corpus/onnx/gpt-tiny.onnx --recompute on --mode pipelined",
				 self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "--recompute on is for weight streaming"));

	snprintf(prog, sizeof(prog), "%s/gpt.wsep", self->dir);
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --recompute on --mode weight_streaming --report --svg /dev/null -o %s",
		 prog);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "recompute:   on: each stage but the last keeps only its input"))
		TH_LOG("%s", self->out);
	ASSERT_EQ(0, wsep_read_file(prog, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_EXEC_RECOMPUTE, p->exec_flags);
	EXPECT_EQ(WSEP_FEATURE_RECOMPUTE, p->features & WSEP_FEATURE_RECOMPUTE);
	wsep_program_free(p);

	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --mode weight_streaming --report --svg /dev/null");
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "recompute:   off: every stage's activations kept"))
		TH_LOG("%s", self->out);

	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --recompute on -o %s",
		 prog);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "note: --recompute on is for weight streaming; the model fits layer-pipelined"))
		TH_LOG("%s", self->out);
}

/*
 * Recompute (format 1.4, feature 0x8, bytes 172..175) and bf16 (format 1.5,
 * feature 0x10, bytes 176..179) in one program: each keeps its own field
 * and bit, and a reader that lacks either refuses the program naming it.
 */
TEST_F(cli, recompute_and_precision_together)
{
	char prog[128], err[256];
	struct wsep_program *p = NULL;
	size_t len;
	void *buf;

	snprintf(prog, sizeof(prog), "%s/gpt-bf16.wsep", self->dir);
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --recompute on --mode weight_streaming --precision bf16 -q -o %s",
		 prog);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, wsep_read_file(prog, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_LE(5, p->version_minor);	/* precision arrived in 1.5 */
	EXPECT_EQ(WSEP_EXEC_RECOMPUTE, p->exec_flags);
	EXPECT_EQ(WSEP_PRECISION_BF16, p->precision);
	EXPECT_EQ(WSEP_FEATURE_RECOMPUTE | WSEP_FEATURE_PRECISION,
		  p->features & (WSEP_FEATURE_RECOMPUTE | WSEP_FEATURE_PRECISION));
	wsep_program_free(p);
	p = NULL;

	buf = test_read_file(prog, &len);
	ASSERT_NE(NULL, buf);
	/* A 1.4 reader knows recompute, not the precision. */
	EXPECT_EQ(-EINVAL, wsep_read_features(buf, len, WSEP_FEATURES_KNOWN & ~WSEP_FEATURE_PRECISION,
					      &p, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "(feature 0x10)")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, wsep_read_features(buf, len, WSEP_FEATURES_KNOWN & ~WSEP_FEATURE_RECOMPUTE,
					      &p, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "needs recompute (activation checkpointing) (feature 0x8)"))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, p);
	free(buf);
}

TEST_HARNESS_MAIN
