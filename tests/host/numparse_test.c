// SPDX-License-Identifier: GPL-2.0-only
/* The number parser every tool uses (wse/numparse.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/numformat.h"
#include "wse/numparse.h"
#include "wse/usage.h"

struct u64_case {
	const char *s;
	enum wse_num_units units;
	int ret;
	uint64_t value;		/* when ret is 0 */
	const char *msg;	/* part of the message when ret is not */
};

TEST(whole_numbers)
{
	static const struct u64_case cases[] = {
		{ "0", WSE_NUM_PLAIN, 0, 0, NULL },
		{ "150", WSE_NUM_PLAIN, 0, 150, NULL },
		{ "010", WSE_NUM_PLAIN, 0, 10, NULL },		/* decimal, not octal */
		{ "0x10", WSE_NUM_PLAIN, 0, 16, NULL },
		{ "0XfF", WSE_NUM_PLAIN, 0, 255, NULL },
		{ "18446744073709551615", WSE_NUM_PLAIN, 0, UINT64_MAX, NULL },
		{ "150abc", WSE_NUM_PLAIN, -EINVAL, 0, "'abc' follows the digits" },
		{ "", WSE_NUM_PLAIN, -EINVAL, 0, "empty" },
		{ " 5", WSE_NUM_PLAIN, -EINVAL, 0, "not a whole number" },
		{ "5 ", WSE_NUM_PLAIN, -EINVAL, 0, "' ' follows" },
		{ "+5", WSE_NUM_PLAIN, -EINVAL, 0, "not a whole number" },
		{ "-5", WSE_NUM_PLAIN, -EINVAL, 0, "not a whole number" },
		{ "0x", WSE_NUM_PLAIN, -EINVAL, 0, "hex after 0x" },
		{ "1.5", WSE_NUM_PLAIN, -EINVAL, 0, "'.5' follows" },
		{ "18446744073709551616", WSE_NUM_PLAIN, -ERANGE, 0, "too large" },
		{ "4K", WSE_NUM_PLAIN, -EINVAL, 0, "'K' follows" },
		{ "4K", WSE_NUM_BINARY, 0, 4096, NULL },
		{ "4k", WSE_NUM_BINARY, 0, 4096, NULL },
		{ "3M", WSE_NUM_BINARY, 0, 3ULL << 20, NULL },
		{ "2G", WSE_NUM_BINARY, 0, 2ULL << 30, NULL },
		{ "1T", WSE_NUM_BINARY, 0, 1ULL << 40, NULL },
		{ "850M", WSE_NUM_DECIMAL, 0, 850000000, NULL },
		{ "16E", WSE_NUM_BINARY, -EINVAL, 0, "a unit is one of K, M, G, T" },
		{ "4KB", WSE_NUM_BINARY, -EINVAL, 0, "'B' follows" },
		{ "16777216T", WSE_NUM_BINARY, -ERANGE, 0, "too large" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct u64_case *c = &cases[i];
		uint64_t v = 12345;
		int ret = wse_parse_u64(c->s, 0, UINT64_MAX, c->units, &v, err, sizeof(err));

		EXPECT_EQ(c->ret, ret) TH_LOG("'%s': %s", c->s, ret ? err : "accepted");
		if (!c->ret) {
			EXPECT_EQ(c->value, v) TH_LOG("'%s'", c->s);
		} else {
			EXPECT_EQ(12345U, v) TH_LOG("'%s': the output changed on failure", c->s);
			EXPECT_NE(NULL, strstr(err, c->msg)) TH_LOG("'%s': '%s' lacks '%s'", c->s,
								    err, c->msg);
		}
	}
}

TEST(ranges_are_refused_not_clamped)
{
	uint64_t v = 7;
	char err[256];

	EXPECT_EQ(-ERANGE, wse_parse_u64("0", 1, 10, WSE_NUM_PLAIN, &v, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "'0': outside 1..10")) TH_LOG("%s", err);
	EXPECT_EQ(-ERANGE, wse_parse_u64("11", 1, 10, WSE_NUM_PLAIN, &v, err, sizeof(err)));
	EXPECT_EQ(-ERANGE, wse_parse_u64("1K", 1, 1000, WSE_NUM_BINARY, &v, err, sizeof(err)));
	EXPECT_EQ(7U, v);
	EXPECT_EQ(0, wse_parse_u64("10", 1, 10, WSE_NUM_PLAIN, &v, err, sizeof(err)));
	EXPECT_EQ(10U, v);
}

TEST(a_number_inside_a_spec)
{
	const char *spec = "64x48:48K", *p = spec;
	uint64_t w, h, sram;
	char err[256];

	ASSERT_EQ(0, wse_parse_u64_at(&p, 1, 1000, WSE_NUM_PLAIN, &w, err, sizeof(err)));
	EXPECT_EQ(64U, w);
	ASSERT_EQ('x', *p);
	p++;
	ASSERT_EQ(0, wse_parse_u64_at(&p, 1, 1000, WSE_NUM_PLAIN, &h, err, sizeof(err)));
	EXPECT_EQ(48U, h);
	ASSERT_EQ(':', *p);
	p++;
	ASSERT_EQ(0, wse_parse_u64_at(&p, 1, 1 << 30, WSE_NUM_BINARY, &sram, err, sizeof(err)));
	EXPECT_EQ(48U * 1024, sram);
	EXPECT_EQ(0, *p);
	p = "x48";
	EXPECT_EQ(-EINVAL, wse_parse_u64_at(&p, 1, 1000, WSE_NUM_PLAIN, &h, err, sizeof(err)));
	EXPECT_STREQ("x48", p);
	/* Inside a spec there is no hex: "0x10" is a 0 wide mesh, 10 high. */
	p = "0x10";
	ASSERT_EQ(0, wse_parse_u64_at(&p, 0, 1000, WSE_NUM_PLAIN, &w, err, sizeof(err)));
	EXPECT_EQ(0U, w);
	EXPECT_STREQ("x10", p);
}

TEST(decimals)
{
	static const struct {
		const char *s;
		int ret;
		double value;
	} cases[] = {
		{ "0.5", 0, 0.5 }, { "1", 0, 1 }, { ".25", 0, 0.25 }, { "1e-3", 0, 1e-3 },
		{ "-0.5", -ERANGE, 0 }, { "2", -ERANGE, 0 }, { "0.5x", -EINVAL, 0 },
		{ "abc", -EINVAL, 0 }, { "", -EINVAL, 0 }, { " 0.5", -EINVAL, 0 },
		{ "+0.5", -EINVAL, 0 }, { "nan", -EINVAL, 0 }, { "inf", -EINVAL, 0 },
		{ "0x1p-1", -EINVAL, 0 },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double v = -7;
		int ret = wse_parse_double(cases[i].s, 0, 1, &v, err, sizeof(err));

		EXPECT_EQ(cases[i].ret, ret) TH_LOG("'%s': %s", cases[i].s, ret ? err : "accepted");
		if (!cases[i].ret)
			EXPECT_EQ(cases[i].value, v) TH_LOG("'%s'", cases[i].s);
	}
}

/* The command-line form says which option, what was given and what it takes. */
TEST(option_messages)
{
	char path[] = "/tmp/numparse_test.XXXXXX", text[512] = "";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	uint64_t v;
	double d;
	ssize_t n;

	ASSERT_GE(fd, 0);
	ASSERT_GE(saved, 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	EXPECT_EQ(-EINVAL, wse_opt_u64("tool", "--count", "150abc", 1, 1000, WSE_NUM_PLAIN, &v));
	EXPECT_EQ(-ERANGE, wse_opt_u64("tool", "--size", "2G", 1, 1 << 30, WSE_NUM_BINARY, &v));
	EXPECT_EQ(-EINVAL, wse_opt_double("tool", "--rate", "fast", 0, 1, &d));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	unlink(path);
	ASSERT_GT(n, 0);
	text[n] = 0;
	EXPECT_NE(NULL, strstr(text, "tool: --count '150abc': not a whole number: 'abc' follows the digits; give a whole number 1..1000\n"))
		TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "tool: --size '2G': outside 1..1073741824\n")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "tool: --rate 'fast': not a decimal number; give a number 0..1\n"))
		TH_LOG("%s", text);
}

/* Sizes and clocks printed with units (wse/numformat.h). */
TEST(units_for_people)
{
	static const struct {
		uint64_t v;
		const char *bytes, *hz;
	} cases[] = {
		{ 0, "0 B", "0 Hz" },
		{ 512, "512 B", "512 Hz" },
		{ 1000, "1000 B", "1 kHz" },
		{ 1023, "1023 B", "1.02 kHz" },
		{ 1024, "1 KiB", "1.02 kHz" },
		{ 1536, "1.5 KiB", "1.54 kHz" },
		{ 48 * 1024, "48 KiB", "49.2 kHz" },
		{ 850000000, "811 MiB", "850 MHz" },
		{ 1100000000, "1.02 GiB", "1.1 GHz" },
		{ 36615000000ULL, "34.1 GiB", "36.6 GHz" },
		{ 3ULL << 40, "3 TiB", "3.3 THz" },
		{ UINT64_MAX, "16 EiB", "18446744 THz" },
	};
	char buf[WSE_NUMFORMAT_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_STREQ(cases[i].bytes, wse_format_bytes(cases[i].v, buf, sizeof(buf)));
		EXPECT_STREQ(cases[i].hz, wse_format_hz(cases[i].v, buf, sizeof(buf)));
	}
	/* A short buffer is cut, never overrun. */
	EXPECT_STREQ("48 ", wse_format_bytes(48 * 1024, buf, 4));
}

TEST_HARNESS_MAIN
