// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's timing model: its parameter file (every value sourced),
 * the per-PE figures against the published aggregates at the model's
 * clock, and its cycles for fc-mnist beside the compiler's estimate.
 * Run from the repository root (the parameter file and models/ are read).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/compiler.h"
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
 * The model and the compiler use the same figures, so at the same clock
 * they agree closely. The model adds what the compiler's steady-state rate
 * leaves out: each pipelined step fills and drains the pipeline (the
 * weights change between steps), which costs every stage once more plus a
 * wavelet's trip across the regions (Σ widths + the tallest height, both
 * ways). On a 64x64 mesh that is a few percent; on the whole WSE-2 a
 * batch of 128 fc-mnist samples takes only ~1,400 cycles at the slowest
 * stage's rate while crossing 784 rows and 522 columns twice takes ~2,600,
 * so there the model says 2.85x the compiler's figure.
 */
TEST(fc_mnist_cycles_beside_the_compiler_estimate)
{
	static const struct {
		const char *wafer;
		enum wsecc_mode mode;
		double max_ratio;
	} cases[] = {
		{ "wse2", WSECC_MODE_PIPELINED, 3.00 },
		{ "64x64", WSECC_MODE_PIPELINED, 1.10 },
		{ "64x64", WSECC_MODE_WEIGHT_STREAMING, 1.01 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wsep_program *p = compile_file("models/fc-mnist", cases[i].wafer,
						      cases[i].mode);
		struct fwd_timing t;
		uint64_t cyc, est, fcyc, fest;
		double ratio;

		ASSERT_NE(NULL, p);
		ASSERT_EQ(0, load_model(&t, cases[i].wafer));
		/* Like with like: the clock the compiler assumed (host I/O per cycle). */
		t.wafer.clock_hz = p->wafer.clock_hz;
		cyc = fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 100, p->batch);
		est = fwd_timing_est_cycles(p, FWD_TIMING_TRAIN, 100, p->batch);
		fcyc = fwd_timing_run_cycles(&t, p, FWD_TIMING_FORWARD, 100, p->batch);
		fest = fwd_timing_est_cycles(p, FWD_TIMING_FORWARD, 100, p->batch);
		ratio = (double)cyc / (double)est;
		TH_LOG("fc-mnist %s on %s, 100 steps of %u: model %llu cycles, compiler %llu (x%.4f); forward only %llu vs %llu",
		       wsep_mode_name(p->mode), cases[i].wafer, p->batch,
		       (unsigned long long)cyc, (unsigned long long)est, ratio,
		       (unsigned long long)fcyc, (unsigned long long)fest);
		EXPECT_GE(ratio, 1.0);
		EXPECT_LE(ratio, cases[i].max_ratio);
		EXPECT_LT(fcyc, cyc);
		EXPECT_GT(fest, 0U);
		/* Twice the work, twice the cycles. */
		EXPECT_EQ(2 * cyc, fwd_timing_run_cycles(&t, p, FWD_TIMING_TRAIN, 200, p->batch));
		wsep_program_free(p);
	}
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
