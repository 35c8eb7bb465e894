// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's timing model: its parameter file (every value sourced),
 * the per-PE figures against the published aggregates at the model's
 * clock, and its cycles beside the compiler's estimate for every model.
 * Run from the repository root (the parameter file and models/ are read).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "wse/compiler.h"
#include "wse/compiler_graph.h"
#include "../../firmware-sim/timing/timing.h"

#define PARAMS_FILE	"firmware-sim/timing/wse2.params"

static int load_model(struct fwd_timing *t, const char *wafer)
{
	char err[256];

	if (fwd_timing_params_load(PARAMS_FILE, &t->p, err, sizeof(err)))
		return -1;
	if (wse_wafer_parse(wafer, &t->wafer, err, sizeof(err)))
		return -1;
	t->wafer.clock_hz = (uint64_t)t->p.clock_hz;
	return 0;
}

static struct wsep_program *compile_file(const char *path, const char *wafer,
					 enum wsecc_mode mode)
{
	static struct wsecc_model m;
	static struct wsecc_plan plan;
	struct wsecc_error err;
	struct wsep_program *p = NULL;
	struct wse_wafer w;
	char msg[256];

	if (wsecc_parse_file(path, &m, &err) || wse_wafer_parse(wafer, &w, msg, sizeof(msg)) ||
	    wsecc_compile(&m, &w, mode, &plan, &err) ||
	    wsecc_build_program(&m, &plan, 0, &p, &err))
		return NULL;
	return p;
}

TEST(parameter_file_parses_and_every_value_has_a_source)
{
	struct fwd_timing_params p;
	char err[256] = "";

	ASSERT_EQ(0, fwd_timing_params_load(PARAMS_FILE, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(850e6, p.clock_hz);
	EXPECT_EQ(1.0, p.elementwise_cycles);
	EXPECT_EQ(12.0, p.adam_flops_per_param);
}

TEST(parameter_file_refusals)
{
	static const struct {
		const char *text, *needle;
	} cases[] = {
		{ "clock_hz = 850e6\n", "without a source" },
		{ "clock_hz = 850e6 #   \n", "without a source" },
		{ "clock_hz 850e6 # [SDK]\n", "expected 'key = value" },
		{ "speed = 3 # [x]\n", "unknown key 'speed'" },
		{ "clock_hz = 0 # [x]\n", "> 0" },
		{ "hop_cycles = -1 # [x]\n", ">= 0" },
		{ "hop_cycles = 1x # [x]\n", "finite number" },
		{ "hop_cycles = 1 # [x]\nhop_cycles = 1 # [x]\n", "given twice" },
		{ "hop_cycles = 1 # [x]\n", "is missing" },
	};
	struct fwd_timing_params p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";

		EXPECT_EQ(-1, fwd_timing_params_parse(cases[i].text, "t.params", &p, err,
						      sizeof(err)));
		EXPECT_NE(NULL, strstr(err, cases[i].needle)) TH_LOG("case %zu: %s", i, err);
	}
}

/*
 * lib/wafer checks its presets at their own clock (1.1 GHz, Hot Chips 34);
 * the model runs at the parameter file's 850 MHz (the SDK's). The per-PE
 * figures times the published PE count must reproduce the aggregates at
 * that clock too, within lib/wafer's tolerance.
 */
TEST(per_pe_figures_reproduce_aggregates_at_the_model_clock)
{
	static const char *const presets[] = { "wse2", "wse3" };

	for (size_t i = 0; i < 2; i++) {
		struct fwd_timing t;
		struct wse_wafer_aggregates a;
		char err[256] = "";

		ASSERT_EQ(0, load_model(&t, presets[i]));
		EXPECT_EQ(0, wse_wafer_check_aggregates(&t.wafer, WSE_WAFER_AGGREGATE_TOLERANCE, &a,
							err, sizeof(err))) TH_LOG("%s", err);
		TH_LOG("%s at %.0f MHz: SRAM x%.3f, memory bandwidth x%.3f, fabric x%.3f",
		       presets[i], t.wafer.clock_hz / 1e6, a.sram_ratio, a.mem_ratio,
		       a.fabric_ratio);
		/* And the peak the model computes with: PEs x FLOPs per cycle x clock. */
		EXPECT_EQ(wse_wafer_peak_fp32_flops(&t.wafer),
			  (double)wse_wafer_pes(&t.wafer) * t.wafer.fp32_flops_per_cycle *
				  (double)t.wafer.clock_hz);
	}
}

/*
 * Compiles @path (a model of models/) in @mode for its own wafer or, if it
 * does not fit there in that mode, for the whole WSE-2; NULL if neither.
 */
static struct wsep_program *compile_model(const char *path, enum wsecc_mode mode,
					  char *wafer, size_t len)
{
	static struct wsecc_model m;
	struct wsecc_error err;
	struct wsep_program *p;

	if (wsecc_parse_file(path, &m, &err))
		return NULL;
	snprintf(wafer, len, "%s", m.wafer[0] ? m.wafer : "wse2");
	p = compile_file(path, wafer, mode);
	if (!p) {
		snprintf(wafer, len, "wse2");
		p = compile_file(path, wafer, mode);
	}
	return p;
}

/* The model's cycles over the compiler's estimate for @p, at the program's clock. */
static void agree(struct __test_metadata *_metadata, const struct wsep_program *p,
		  const char *what, const char *wafer)
{
	struct fwd_timing t;

	ASSERT_EQ(0, load_model(&t, wafer));
	t.wafer.clock_hz = p->wafer.clock_hz;
	for (int kind = FWD_TIMING_TRAIN; kind <= FWD_TIMING_FORWARD; kind++) {
		uint32_t batches[] = { p->batch, (p->batch + 1) / 2 };

		for (int b = 0; b < 2; b++) {
			uint64_t cyc = fwd_timing_run_cycles(&t, p, kind, 100, batches[b]);
			uint64_t est = fwd_timing_est_cycles(p, kind, 100, batches[b]);
			double ratio = (double)cyc / (double)est;

			EXPECT_TRUE(ratio >= 0.9 && ratio <= 1.1)
				TH_LOG("%s %s on %s, %s, batch %u: model %llu cycles, compiler %llu (x%.3f)",
				       what, wsep_mode_name(p->mode), wafer,
				       kind == FWD_TIMING_TRAIN ? "train" : "forward", batches[b],
				       (unsigned long long)cyc, (unsigned long long)est, ratio);
		}
	}
}

/*
 * The compiler's estimate and the timing model agree within 10% for every
 * model in models/, in both modes, training and forward only, for the
 * program's batch and half of it, at the same clock (the program's: a
 * host-link-bound layer takes more cycles at a faster clock). Both count a
 * pipelined step's fill and drain (the other stages once, a wavelet's trip
 * across the regions each way) and weight streaming's per-layer weight
 * transfers, which do not shrink with the batch. (A RUN of a handful of
 * samples is not covered: the compiler spreads a layer's optimizer update
 * over the program's batch, the model over the RUN's.)
 */
TEST(compiler_estimate_and_model_agree_on_every_model)
{
	static const enum wsecc_mode modes[] = { WSECC_MODE_PIPELINED, WSECC_MODE_WEIGHT_STREAMING };
	DIR *d = opendir("models");
	struct dirent *de;
	int checked = 0;

	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		char path[300], wafer[64];
		struct stat st;

		size_t len = strlen(de->d_name);

		/* Model files; not the PyTorch scripts that export ONNX ones. */
		if (de->d_name[0] == '.' || (len > 3 && !strcmp(de->d_name + len - 3, ".py")))
			continue;
		snprintf(path, sizeof(path), "models/%s", de->d_name);
		/* Not the directories beside them (models/params: params.yaml files). */
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		for (int i = 0; i < 2; i++) {
			struct wsep_program *p = compile_model(path, modes[i], wafer, sizeof(wafer));

			ASSERT_NE(NULL, p) TH_LOG("%s does not compile %s", path,
						  i ? "streamed" : "pipelined");
			agree(_metadata, p, path, wafer);
			checked++;
			wsep_program_free(p);
		}
	}
	closedir(d);
	EXPECT_GE(checked, 4);	/* fc-mnist and fc-large at least, two modes each */
}

/*
 * The same for graph programs: the ONNX exports' units, costed by both
 * from their graph's work (wse/wsep_cost.h) at their own figures.
 */
TEST(compiler_estimate_and_model_agree_on_graph_programs)
{
	static const char *const files[] = { "tests/corpus/onnx/cnn-tiny.onnx",
					     "tests/corpus/onnx/gpt-tiny.onnx" };
	static const char *const wafers[] = { "64x64", "wse2" };
	static const enum wsecc_mode modes[] = { WSECC_MODE_PIPELINED, WSECC_MODE_WEIGHT_STREAMING };

	for (int f = 0; f < 2; f++) {
		for (int w = 0; w < 2; w++) {
			for (int m = 0; m < 2; m++) {
				struct wsecc_graph_options o = {
					.batch = 16, .mode = modes[m], .seed = 1,
					.opt = { .kind = WSEP_OPT_ADAM, .lr = 1e-3, .beta1 = 0.9,
						 .beta2 = 0.999, .eps = 1e-8 },
				};
				struct wsecc_graph_program *gp;
				struct wsecc_error err;
				struct wse_wafer wf;
				char msg[256];

				ASSERT_EQ(0, wse_wafer_parse(wafers[w], &wf, msg, sizeof(msg)));
				ASSERT_EQ(0, wsecc_graph_compile(files[f], &o, &wf, &gp, &err))
					TH_LOG("%s: %s", files[f], err.msg);
				agree(_metadata, gp->prog, files[f], wafers[w]);
				wsecc_graph_program_free(gp);
			}
		}
	}
}

/*
 * Recompute (activation checkpointing): each unit but the last runs its
 * forward pass again before its backward. Forced on for the GPT by weight
 * streaming, the timing model and the compiler's estimate still agree,
 * and both count more cycles for a training step than with it off (the
 * extra forward passes), the same for a forward-only RUN (nothing is
 * recomputed there).
 */
TEST(recompute_costs_an_extra_forward_in_model_and_estimate)
{
	static const char *const wafers[] = { "64x64", "wse2" };

	for (int w = 0; w < 2; w++) {
		uint64_t cyc[2][2], est[2][2];
		struct wse_wafer wf;
		struct fwd_timing t;
		char msg[256];

		ASSERT_EQ(0, wse_wafer_parse(wafers[w], &wf, msg, sizeof(msg)));
		ASSERT_EQ(0, load_model(&t, wafers[w]));
		for (int r = 0; r < 2; r++) {
			struct wsecc_graph_options o = {
				/* The same micro-batches: recompute may fit larger ones. */
				.batch = 16, .micro_batch = 4, .mode = WSECC_MODE_WEIGHT_STREAMING,
				.seed = 1, .recompute = r ? WSECC_RECOMPUTE_ON : WSECC_RECOMPUTE_OFF,
				.opt = { .kind = WSEP_OPT_ADAM, .lr = 1e-3, .beta1 = 0.9,
					 .beta2 = 0.999, .eps = 1e-8 },
			};
			struct wsecc_graph_program *gp;
			struct wsecc_error err;

			ASSERT_EQ(0, wsecc_graph_compile("tests/corpus/onnx/gpt-tiny.onnx", &o, &wf,
							 &gp, &err))
				TH_LOG("%s", err.msg);
			EXPECT_EQ(r ? WSEP_EXEC_RECOMPUTE : 0U, gp->prog->exec_flags);
			EXPECT_EQ(r ? true : false, gp->plan.recompute);
			agree(_metadata, gp->prog, "gpt-tiny --recompute on", wafers[w]);
			t.wafer.clock_hz = gp->prog->wafer.clock_hz;
			for (int kind = FWD_TIMING_TRAIN; kind <= FWD_TIMING_FORWARD; kind++) {
				cyc[r][kind] = fwd_timing_run_cycles(&t, gp->prog, kind, 1, 16);
				est[r][kind] = fwd_timing_est_cycles(gp->prog, kind, 1, 16);
			}
			wsecc_graph_program_free(gp);
		}
		TH_LOG("%s: a step %llu cycles modelled, %llu estimated; recomputing %llu, %llu",
		       wafers[w], (unsigned long long)cyc[0][FWD_TIMING_TRAIN],
		       (unsigned long long)est[0][FWD_TIMING_TRAIN],
		       (unsigned long long)cyc[1][FWD_TIMING_TRAIN],
		       (unsigned long long)est[1][FWD_TIMING_TRAIN]);
		EXPECT_GT(cyc[1][FWD_TIMING_TRAIN], cyc[0][FWD_TIMING_TRAIN]);
		EXPECT_GT(est[1][FWD_TIMING_TRAIN], est[0][FWD_TIMING_TRAIN]);
		EXPECT_EQ(cyc[1][FWD_TIMING_FORWARD], cyc[0][FWD_TIMING_FORWARD]);
	}
}

/*
 * fc-mnist on the whole WSE-2, pipelined: the batch at the slowest stage's
 * rate (128 x 14.2 = 1,816 cycles) is less than half the step; the rest is
 * the pipeline's fill and drain, mostly the trip across 784 rows and 266
 * columns of regions and back. The compiler's estimate counts it (it used
 * to be the steady state alone, 2.85x too fast against the model).
 */
TEST(fc_mnist_step_counts_fill_and_drain)
{
	struct wsep_program *p = compile_file("models/fc-mnist", "wse2", WSECC_MODE_PIPELINED);
	struct fwd_timing t;
	uint64_t est, cyc;
	double worst = 0;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, load_model(&t, "wse2"));
	t.wafer.clock_hz = p->wafer.clock_hz;
	for (uint32_t k = 0; k < p->num_layers; k++)
		if (p->estimates[k].stage_cycles > worst)
			worst = p->estimates[k].stage_cycles;
	est = fwd_timing_est_cycles(p, FWD_TIMING_TRAIN, 1, p->batch);
	cyc = fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 1, p->batch);
	TH_LOG("a step: %llu cycles modelled, %llu estimated, %.0f of them the stages' rate",
	       (unsigned long long)cyc, (unsigned long long)est, p->batch * worst);
	EXPECT_GT(est, 2 * p->batch * worst);
	EXPECT_LT(fabs((double)cyc - (double)est), 0.005 * (double)est);
	/* Twice the work, twice the cycles. */
	EXPECT_EQ(2 * fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 100, p->batch),
		  fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 200, p->batch));
	EXPECT_LT(fwd_timing_run_cycles(&t, p, FWD_TIMING_FORWARD, 1, p->batch), cyc);
	wsep_program_free(p);
}

/* A slower fabric or compute must show: the model is not a constant. */
TEST(model_follows_the_figures)
{
	struct wsep_program *p = compile_file("models/fc-mnist", "64x64", WSECC_MODE_PIPELINED);
	struct fwd_timing t;
	uint64_t base, slow;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, load_model(&t, "64x64"));
	base = fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 10, p->batch);
	t.wafer.fp32_flops_per_cycle /= 2;
	slow = fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 10, p->batch);
	EXPECT_GT(slow, base * 3 / 2);
	t.wafer.fp32_flops_per_cycle *= 2;
	t.wafer.link_bytes_per_cycle /= 100;
	slow = fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 10, p->batch);
	EXPECT_GT(slow, base * 2);
	wsep_program_free(p);
}

TEST_HARNESS_MAIN
