// SPDX-License-Identifier: GPL-2.0-only
/*
 * Weight streaming across systems (Documentation/timing-model.rst,
 * "Across systems"): the sweep over 1..192 systems has the shape it must
 * (time per step never falls, throughput always rises, efficiency never
 * rises), efficiency and speedup follow the documented formulas, the
 * tree's latency grows with log N and only it depends on N, MemoryX's
 * update is hidden within the documented bounds, and wsecc --report
 * prints the table. Runs from the repository root (models/, build/bin).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "test_files.h"
#include "wse/compiler.h"

#define WSECC "build/bin/wsecc"

/* |a - b| <= tol; TH_LOG may follow, as after any EXPECT. */
#define EXPECT_NEAR(a, b, tol) EXPECT_LE(fabs((double)(a) - (double)(b)), (double)(tol))

static struct wsecc_model model;
static struct wsecc_plan plan;

/* fc-large by weight streaming on the whole WSE-2, or @spec. */
static void compile_streaming(struct __test_metadata *_metadata, const char *path,
			      const char *spec, enum wsecc_mode mode)
{
	struct wsecc_error e;
	struct wse_wafer w;
	char err[256];

	ASSERT_EQ(0, wsecc_parse_file(path, &model, &e)) TH_LOG("%s: %s", path, e.msg);
	ASSERT_EQ(0, wse_wafer_parse(spec, &w, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, wsecc_compile(&model, &w, mode, &plan, &e)) TH_LOG("%s", e.msg);
}

static void point(struct __test_metadata *_metadata, const struct wsecc_scale_params *p,
		  uint32_t n, struct wsecc_scale_point *pt)
{
	ASSERT_EQ(0, wsecc_scale_estimate(&plan, &model.opt, p, n, pt)) TH_LOG("%u systems", n);
}

/* ceil(log4 n), from the logarithm rather than the code's loop. */
static uint32_t log4_ceil(uint32_t n)
{
	return (uint32_t)ceil(log((double)n) / log(4.0) - 1e-9);
}

TEST(sweep_shape)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point prev, pt;

	compile_streaming(_metadata, "models/fc-large", "wse2", WSECC_MODE_WEIGHT_STREAMING);
	wsecc_scale_default_params(&plan, &p);
	point(_metadata, &p, 1, &prev);
	EXPECT_NEAR(1.0, prev.speedup, 1e-12);
	for (uint32_t n = 2; n <= WSECC_SCALE_MAX_SYSTEMS; n++) {
		point(_metadata, &p, n, &pt);
		EXPECT_GE(pt.step_s, prev.step_s) TH_LOG("%u systems", n);
		EXPECT_GT(pt.samples_per_s, prev.samples_per_s) TH_LOG("%u systems", n);
		EXPECT_GE(pt.speedup, prev.speedup) TH_LOG("%u systems", n);
		/* equal within a tree level, but for rounding */
		EXPECT_LE(pt.efficiency, prev.efficiency + 1e-12) TH_LOG("%u systems", n);
		EXPECT_LE(pt.speedup, (double)n + 1e-9);
		EXPECT_GT(pt.efficiency, 0);
		prev = pt;
	}
}

/*
 * T(N) = T + boundary(N), T the one-system plan's step; speedup(N) =
 * N T(1) / T(N); efficiency = speedup / N; samples/s = N B / T(N).
 */
TEST(documented_formulas)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point one, pt;
	double t;

	compile_streaming(_metadata, "models/fc-large", "wse2", WSECC_MODE_WEIGHT_STREAMING);
	t = plan.batch / plan.summary.samples_per_s;
	wsecc_scale_default_params(&plan, &p);
	point(_metadata, &p, 1, &one);
	for (uint32_t i = 0; i < wsecc_scale_default_count; i++) {
		uint32_t n = wsecc_scale_default_systems[i];

		point(_metadata, &p, n, &pt);
		EXPECT_EQ(n, pt.systems);
		EXPECT_NEAR(t + pt.boundary_s, pt.step_s, 1e-12 * pt.step_s);
		EXPECT_NEAR((double)n * plan.batch / pt.step_s, pt.samples_per_s,
			    1e-9 * pt.samples_per_s);
		EXPECT_NEAR(n * one.step_s / pt.step_s, pt.speedup, 1e-9 * n);
		EXPECT_NEAR(pt.speedup / n, pt.efficiency, 1e-12);
		EXPECT_EQ(log4_ceil(n), pt.tree_levels) TH_LOG("%u systems", n);
		EXPECT_NEAR((1 + log4_ceil(n)) * p.hop_latency_s, pt.latency_s, 1e-15);
	}
	/* MemoryX moves the gradient, and the weight and Adam's two moments both ways. */
	EXPECT_EQ(WSEP_OPT_ADAM, model.opt.kind);
	{
		double params = 0;

		for (uint32_t i = 0; i < plan.num_layers; i++)
			params += (double)plan.layers[i].params;
		EXPECT_NEAR(params * 4 * (1 + 2 * 3) / p.memoryx_bytes_per_s, one.update_s,
			    1e-9 * one.update_s);
	}
}

/*
 * With MemoryX never the bottleneck the boundary is the round trip alone,
 * 2 (1 + ceil(log4 N)) hops: it grows by two hops each time N is
 * multiplied by 4 and not between.
 */
TEST(reduce_latency_grows_with_log_n)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point a, b;

	compile_streaming(_metadata, "models/fc-large", "wse2", WSECC_MODE_WEIGHT_STREAMING);
	wsecc_scale_default_params(&plan, &p);
	p.memoryx_bytes_per_s = 1e30;
	for (uint32_t n = 1; n <= WSECC_SCALE_MAX_SYSTEMS; n++) {
		point(_metadata, &p, n, &a);
		EXPECT_NEAR(2 * a.latency_s, a.boundary_s, 1e-12) TH_LOG("%u systems", n);
	}
	for (uint32_t n = 1; n * 4 <= WSECC_SCALE_MAX_SYSTEMS; n *= 4) {
		point(_metadata, &p, n, &a);
		point(_metadata, &p, n * 4, &b);
		EXPECT_NEAR(2 * p.hop_latency_s, b.boundary_s - a.boundary_s, 1e-12)
			TH_LOG("%u to %u systems", n, n * 4);
	}
	point(_metadata, &p, 5, &a);
	point(_metadata, &p, 16, &b);
	EXPECT_NEAR(a.boundary_s, b.boundary_s, 0);
	/* The default hop latency: the same growth, on top of MemoryX's part. */
	wsecc_scale_default_params(&plan, &p);
	point(_metadata, &p, 16, &a);
	point(_metadata, &p, 64, &b);
	EXPECT_NEAR(2 * p.hop_latency_s, b.boundary_s - a.boundary_s, 1e-9);
}

/* Only the tree's latency depends on N: without it, scaling is linear. */
TEST(linear_without_latency)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point pt;

	compile_streaming(_metadata, "models/fc-large", "wse2", WSECC_MODE_WEIGHT_STREAMING);
	wsecc_scale_default_params(&plan, &p);
	p.hop_latency_s = 0;
	for (uint32_t n = 1; n <= WSECC_SCALE_MAX_SYSTEMS; n += 17) {
		point(_metadata, &p, n, &pt);
		EXPECT_NEAR(1.0, pt.efficiency, 1e-12) TH_LOG("%u systems", n);
	}
}

/*
 * MemoryX updates within the step: the boundary is at least the round
 * trip and no more than the round trip plus the whole update, and a
 * slower MemoryX never shortens it.
 */
TEST(memoryx_update_bounds)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point pt;
	double prev = 0;

	compile_streaming(_metadata, "models/fc-large", "64x64", WSECC_MODE_WEIGHT_STREAMING);
	wsecc_scale_default_params(&plan, &p);
	for (double bw = 1e15; bw >= 1e6; bw /= 10) {
		p.memoryx_bytes_per_s = bw;
		point(_metadata, &p, 8, &pt);
		EXPECT_GE(pt.boundary_s + 1e-15, 2 * pt.latency_s) TH_LOG("%g B/s", bw);
		EXPECT_LE(pt.boundary_s, 2 * pt.latency_s + pt.update_s + 1e-12) TH_LOG("%g B/s", bw);
		EXPECT_GE(pt.boundary_s + 1e-15, prev) TH_LOG("%g B/s", bw);
		prev = pt.boundary_s;
	}
	/* Slow enough that the backward pass hides nothing: all of it shows. */
	EXPECT_GT(pt.update_s, 100 * plan.batch / plan.summary.samples_per_s);
	EXPECT_GT(pt.boundary_s, 0.9 * pt.update_s);
}

TEST(refusals)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point pt;
	uint32_t n[WSECC_SCALE_MAX_POINTS];
	char err[256];
	static const char *const bad[] = { "", "0", "193", "1,,2", "2,2", "a", "1,2,", "-1", "4x" };

	compile_streaming(_metadata, "models/fc-large", "wse2", WSECC_MODE_WEIGHT_STREAMING);
	wsecc_scale_default_params(&plan, &p);
	EXPECT_EQ(-EINVAL, wsecc_scale_estimate(&plan, &model.opt, &p, 0, &pt));
	EXPECT_EQ(-EINVAL, wsecc_scale_estimate(&plan, &model.opt, &p, 193, &pt));
	EXPECT_EQ(3, wsecc_scale_parse("1,16,192", n, err, sizeof(err)));
	EXPECT_EQ(16, n[1]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(-EINVAL, wsecc_scale_parse(bad[i], n, err, sizeof(err))) TH_LOG("'%s'", bad[i]);
		EXPECT_NE(0, err[0]);
	}
	/* A pipelined plan runs on one system. */
	compile_streaming(_metadata, "models/fc-mnist", "wse2", WSECC_MODE_PIPELINED);
	EXPECT_EQ(-EINVAL, wsecc_scale_estimate(&plan, &model.opt, &p, 1, &pt));
}

FIXTURE(cli) {
	char dir[64];
	char out[65536];
	char cmd[1024];
};

FIXTURE_SETUP(cli)
{
	ASSERT_EQ(0, access(WSECC, X_OK)) TH_LOG("%s missing: run make, from the repository root",
						 WSECC);
	strcpy(self->dir, "/tmp/wsecc_scale_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(cli)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* The table's rows: systems, batch, samples/s, speedup, efficiency; returns the count. */
static int table_rows(const char *out, uint32_t *sys, double *sps, double *speedup, double *eff,
		      int cap)
{
	const char *s = strstr(out, "efficiency");
	int n = 0;

	if (!s)
		return 0;
	s = strchr(s, '\n');
	while (s && n < cap) {
		unsigned long long batch;
		char step[16], unit[8];

		if (sscanf(s + 1, "%u %llu %15s %7s %lf %lfx %lf%%", &sys[n], &batch, step, unit,
			   &sps[n], &speedup[n], &eff[n]) != 7)
			break;
		n++;
		s = strchr(s + 1, '\n');
	}
	return n;
}

TEST_F(cli, report_prints_the_table)
{
	uint32_t sys[16];
	double sps[16], speedup[16], eff[16];
	int rows;

	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-large --execution-mode weight_streaming --report --svg %s/a.svg", self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "mode:   weight streaming"));
	EXPECT_NE(NULL, strstr(self->out, "estimate:"));	/* the one-system report stays */
	EXPECT_NE(NULL, strstr(self->out, "systems:"));
	rows = table_rows(self->out, sys, sps, speedup, eff, 16);
	ASSERT_EQ((int)wsecc_scale_default_count, rows) TH_LOG("%s", self->out);
	for (int i = 0; i < rows; i++) {
		EXPECT_EQ(wsecc_scale_default_systems[i], sys[i]);
		/* The printed columns agree with each other to their rounding. */
		EXPECT_NEAR(sps[i] / sps[0], speedup[i], 0.006 + 1e-4 * speedup[i]);
		EXPECT_NEAR(100 * speedup[i] / sys[i], eff[i], 0.006 + 0.01 * 100 / sys[i]);
		if (i)
			EXPECT_GT(sps[i], sps[i - 1]);
	}

	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-large --execution-mode weight_streaming --report --svg %s/a.svg --systems 3,48",
		 self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	rows = table_rows(self->out, sys, sps, speedup, eff, 16);
	ASSERT_EQ(2, rows) TH_LOG("%s", self->out);
	EXPECT_EQ(3, sys[0]);
	EXPECT_EQ(48, sys[1]);

	/* Pipelined: one system, no table unless asked, and refused if asked. */
	snprintf(self->cmd, sizeof(self->cmd), WSECC " models/fc-mnist --report --svg %s/b.svg",
		 self->dir);
	ASSERT_EQ(0, run_cmd_all(self->cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strstr(self->out, "systems:"));
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-mnist --report --svg %s/b.svg --systems 4", self->dir);
	EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "--execution-mode weight_streaming")) TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strstr(self->out, "model:")) TH_LOG("refused after the report: %s", self->out);

	EXPECT_EQ(2, run_cmd_all(WSECC " models/fc-large --execution-mode weight_streaming --systems 4",
				 self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "--systems needs --report")) TH_LOG("%s", self->out);
	snprintf(self->cmd, sizeof(self->cmd),
		 WSECC " models/fc-large --execution-mode weight_streaming --report --svg %s/a.svg --systems 1,500",
		 self->dir);
	EXPECT_EQ(2, run_cmd_all(self->cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "1..192")) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
