// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/wafer: presets reproduce the published aggregates, specs parse or
 * are refused with a message saying what was wrong.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/wafer.h"

static const char *const preset_names[] = { "wse1", "wse2", "wse3" };

TEST(presets_reproduce_published_aggregates)
{
	for (size_t i = 0; i < 3; i++) {
		struct wse_wafer w;
		struct wse_wafer_aggregates a;
		char err[256] = "";

		ASSERT_EQ(0, wse_wafer_preset(preset_names[i], &w));
		EXPECT_EQ(0, wse_wafer_check_aggregates(&w, WSE_WAFER_AGGREGATE_TOLERANCE, &a,
							err, sizeof(err)))
			TH_LOG("%s", err);
		TH_LOG("%s: SRAM x%.3f, memory bandwidth x%.3f, fabric x%.3f",
		       w.name, a.sram_ratio, a.mem_ratio, a.fabric_ratio);
		/* The usable mesh is smaller than the published count (spares). */
		EXPECT_LT(wse_wafer_pes(&w), w.published_pes);
		EXPECT_GT(wse_wafer_pes(&w), w.published_pes * 8 / 10);
	}
}

TEST(wse2_is_the_sdk_fabric)
{
	struct wse_wafer w;

	ASSERT_EQ(0, wse_wafer_preset("wse2", &w));
	EXPECT_EQ(750, w.width);
	EXPECT_EQ(994, w.height);
	EXPECT_EQ(49152, w.sram_per_pe);
	EXPECT_EQ(745500, wse_wafer_pes(&w));
	EXPECT_EQ(4.0, w.link_bytes_per_cycle);
}

/* The check must be able to fail: a wrong per-PE figure is caught and named. */
TEST(wrong_figure_is_caught)
{
	struct wse_wafer w;
	char err[256] = "";

	ASSERT_EQ(0, wse_wafer_preset("wse2", &w));
	w.sram_per_pe = 24 * 1024;
	EXPECT_EQ(-ERANGE, wse_wafer_check_aggregates(&w, WSE_WAFER_AGGREGATE_TOLERANCE, NULL,
						 err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "SRAM total"));

	ASSERT_EQ(0, wse_wafer_preset("wse2", &w));
	w.links_per_pe = 2;
	EXPECT_EQ(-ERANGE, wse_wafer_check_aggregates(&w, WSE_WAFER_AGGREGATE_TOLERANCE, NULL,
						 err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "fabric bandwidth"));

	ASSERT_EQ(0, wse_wafer_preset("wse2", &w));
	w.clock_hz = 500000000;
	EXPECT_EQ(-ERANGE, wse_wafer_check_aggregates(&w, WSE_WAFER_AGGREGATE_TOLERANCE, NULL,
						 err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "memory bandwidth"));
}

TEST(custom_mesh_has_no_aggregates)
{
	struct wse_wafer w;
	char err[256] = "";

	ASSERT_EQ(0, wse_wafer_parse("64x48", &w, err, sizeof(err)));
	EXPECT_EQ(1, wse_wafer_check_aggregates(&w, 0.2, NULL, err, sizeof(err)));
}

TEST(parse_specs)
{
	struct wse_wafer w;
	char err[256] = "";

	ASSERT_EQ(0, wse_wafer_parse("64x48", &w, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(64, w.width);
	EXPECT_EQ(48, w.height);
	EXPECT_EQ(48 * 1024, w.sram_per_pe);
	EXPECT_STREQ("64x48", w.name);

	ASSERT_EQ(0, wse_wafer_parse("64x64:48K", &w, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(49152, w.sram_per_pe);
	EXPECT_EQ(4096 * 49152ULL, wse_wafer_sram_bytes(&w));

	ASSERT_EQ(0, wse_wafer_parse("8x4:2M@850M", &w, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(2 << 20, w.sram_per_pe);
	EXPECT_EQ(850000000, w.clock_hz);

	ASSERT_EQ(0, wse_wafer_parse("16x16:65536", &w, err, sizeof(err)));
	EXPECT_EQ(65536, w.sram_per_pe);

	ASSERT_EQ(0, wse_wafer_parse("wse3", &w, err, sizeof(err)));
	EXPECT_EQ(900000, w.published_pes);
}

TEST(parse_rejects_bad_specs)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "", "empty" },
		{ "wse4", "expected a preset" },
		{ "64", "expected a preset" },
		{ "64x", "expected a height" },
		{ "0x10", "1..4096" },
		{ "5000x10", "1..4096" },
		{ "64x48:", "expected SRAM" },
		{ "64x48:12", "SRAM per PE must be" },
		{ "64x48:48K@", "expected a clock" },
		{ "64x48:48K@5", "clock must be" },
		{ "64x48:48KQ", "unexpected 'Q'" },
		{ "64x48 ", "unexpected" },
		{ "99999999999999999999x2", "expected a preset" },
	};
	struct wse_wafer w;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";

		EXPECT_EQ(-EINVAL, wse_wafer_parse(bad[i].spec, &w, err, sizeof(err)))
			TH_LOG("'%s' was accepted", bad[i].spec);
		EXPECT_NE(NULL, strstr(err, bad[i].msg))
			TH_LOG("'%s': message '%s' lacks '%s'", bad[i].spec, err, bad[i].msg);
	}
}

TEST(describe_names_the_wafer)
{
	struct wse_wafer w;
	char buf[256];

	ASSERT_EQ(0, wse_wafer_preset("wse2", &w));
	wse_wafer_describe(&w, buf, sizeof(buf));
	EXPECT_NE(NULL, strstr(buf, "wse2: 750x994 PEs"));
}

TEST_HARNESS_MAIN
