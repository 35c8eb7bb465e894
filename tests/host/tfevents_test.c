// SPDX-License-Identifier: GPL-2.0-only
/*
 * libwsemetrics: event files written, then read back here (the framing
 * and both CRCs by code of the test's own, the Event by protobuf-c's
 * unpacker), and by tests/host/tfevents_check.py through Debian's
 * python3-protobuf, which shares no code with the library.
 * Also: every flipped byte is caught, names and directories, tag checks,
 * and a write error that sticks.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/crc32c.h"
#include "wse/tfevents.h"
#include "../../lib/metrics/metrics.h"
#include "tfevent.pb-c.h"
#include "test_files.h"

#define PYTHON		"/usr/bin/python3"
#define CHECK_SCRIPT	"tests/host/tfevents_check.py"

/* --- an independent reader ------------------------------------------------ */

/* CRC32C bit by bit, unlike the library's nibble table. */
static uint32_t slow_crc32c(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffU;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x82f63b78U : 0);
	}
	return ~crc;
}

static uint32_t slow_masked(const uint8_t *p, size_t len)
{
	uint32_t crc = slow_crc32c(p, len);

	return ((crc >> 15) | (crc << 17)) + 0xa282ead8U;
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct event {
	double wall_time;
	int64_t step;
	int is_version;		/* file_version, else one scalar */
	char text[WSE_TFEVENTS_TAG_MAX + 1];	/* file_version or tag */
	uint32_t value_bits;
};

/*
 * One record's data as a tensorflow.Event, by protobuf-c's unpacker of
 * the schema (build/gen/tfevent.pb-c.c): either the file_version or one
 * summary with one simple_value. Returns 0 or -1 with the reason.
 */
static int parse_event(const uint8_t *data, size_t len, struct event *ev, const char **why)
{
	Tensorflow__Event *e = tensorflow__event__unpack(NULL, len, data);
	const char *text = NULL;
	int ret = -1;

	memset(ev, 0, sizeof(*ev));
	if (!e) {
		*why = "not a tensorflow.Event";
		return -1;
	}
	ev->wall_time = e->wall_time;
	ev->step = e->step;
	if (e->what_case == TENSORFLOW__EVENT__WHAT_FILE_VERSION) {
		ev->is_version = 1;
		text = e->file_version;
	} else if (e->what_case != TENSORFLOW__EVENT__WHAT_SUMMARY) {
		*why = "Event without file_version or summary";
	} else if (e->summary->n_value != 1) {
		*why = "not one value in Summary";
	} else if (e->summary->value[0]->value_case !=
		   TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE) {
		*why = "Summary.Value without simple_value";
	} else {
		text = e->summary->value[0]->tag;
		memcpy(&ev->value_bits, &e->summary->value[0]->simple_value, 4);
	}
	if (text && strlen(text) > WSE_TFEVENTS_TAG_MAX) {
		*why = "string too long";
	} else if (text) {
		strcpy(ev->text, text);
		ret = 0;
	}
	tensorflow__event__free_unpacked(e, NULL);
	return ret;
}

/*
 * Reads every record of @buf into @evs; returns the count, or -1 with the
 * reason in *why. A file cut exactly between records is valid.
 */
static int parse_file(const uint8_t *buf, size_t len, struct event *evs, int max,
		      const char **why)
{
	size_t at = 0;
	int n = 0;

	while (at < len) {
		uint64_t data_len;

		if (len - at < 12) {
			*why = "truncated record header";
			return -1;
		}
		if (get_le(buf + at + 8, 4) != slow_masked(buf + at, 8)) {
			*why = "length CRC mismatch";
			return -1;
		}
		data_len = get_le(buf + at, 8);
		if (len - at - 12 < 4 || data_len > len - at - 16) {
			*why = "record runs past the end";
			return -1;
		}
		if (get_le(buf + at + 12 + data_len, 4) != slow_masked(buf + at + 12, data_len)) {
			*why = "data CRC mismatch";
			return -1;
		}
		if (n == max) {
			*why = "too many records";
			return -1;
		}
		if (parse_event(buf + at + 12, data_len, &evs[n], why))
			return -1;
		if ((n == 0) != evs[n].is_version) {
			*why = "file_version is not (only) the first event";
			return -1;
		}
		n++;
		at += 16 + data_len;
	}
	return n;
}

/* --- what the tests write ------------------------------------------------- */

static const struct sample {
	const char *tag;
	int64_t step;
	double wall_time;
	float value;
} samples[] = {
	{ "loss", 0, 1700000000.25, 2.302585f },
	{ "loss", 1, 1700000001.5, 1.5f },
	{ "accuracy", 1, 1700000001.5, 0.0f },
	{ "eval/top-1 accuracy", 100, 1700000002.125, 0.8765f },
	{ "train/loss", INT64_C(1) << 40, 1700000003.0, -3.5e-20f },
	{ "negative step", -5, 1e-3, 3.4e38f },
	{ "no time", 0, 0.0, 42.0f },
	{ "denormal", INT64_MAX, 1700000004.0, 1e-45f },
	{ "min step", INT64_MIN, 1700000004.0, -0.0f },
	{ "nan", 7, 1700000005.0, NAN },
	{ "inf", 8, 1700000006.0, -INFINITY },
	{ "unicode/\xce\xbb-\xc3\x9f-\xf0\x9f\x93\x88", 9, 1700000007.0, 1.0f },
};
#define NSAMPLES ((int)(sizeof(samples) / sizeof(samples[0])))

static uint32_t float_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

FIXTURE(events) {
	char dir[64];
	char err[512];
	struct wse_tfevents *w;
	struct event evs[64];
};

FIXTURE_SETUP(events)
{
	strcpy(self->dir, "/tmp/wse_tfevents_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->w = NULL;
}

FIXTURE_TEARDOWN(events)
{
	wse_tfevents_close(self->w);
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* Opens a writer in DIR/run, writes the samples, and keeps it open. */
static void write_samples(struct __test_metadata *_metadata, FIXTURE_DATA(events) *self)
{
	char dir[96];

	snprintf(dir, sizeof(dir), "%s/run", self->dir);
	ASSERT_EQ(0, wse_tfevents_open(dir, &self->w, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	for (int i = 0; i < NSAMPLES; i++) {
		const struct sample *s = &samples[i];

		ASSERT_EQ(0, wse_tfevents_scalar(self->w, s->tag, s->step, s->wall_time, s->value));
	}
	ASSERT_EQ(0, wse_tfevents_flush(self->w));
}

TEST(crc32c_matches_the_bitwise_one)
{
	uint8_t buf[300];

	EXPECT_EQ(0xe3069283U, wse_crc32c(0, "123456789", 9));
	EXPECT_EQ(0xe3069283U, slow_crc32c((const uint8_t *)"123456789", 9));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 167 + 13);
	for (size_t len = 0; len <= sizeof(buf); len += 7) {
		EXPECT_EQ(slow_crc32c(buf, len), wse_crc32c(0, buf, len));
		EXPECT_EQ(slow_masked(buf, len), tfrecord_mask(wse_crc32c(0, buf, len)));
	}
	/* Continuing a CRC over a second piece is the CRC of the whole. */
	EXPECT_EQ(wse_crc32c(0, buf, 300), wse_crc32c(wse_crc32c(0, buf, 100),
								buf + 100, 200));
}

TEST_F(events, scalars_read_back)
{
	const char *why = NULL;
	uint8_t *buf;
	size_t len;
	double before = wse_tfevents_now();
	int n;

	write_samples(_metadata, self);
	buf = test_read_file(wse_tfevents_path(self->w), &len);
	ASSERT_NE(NULL, buf);
	n = parse_file(buf, len, self->evs, 64, &why);
	free(buf);
	ASSERT_EQ(NSAMPLES + 1, n) TH_LOG("%s", why ? why : "");

	EXPECT_STREQ("brain.Event:2", self->evs[0].text);
	EXPECT_EQ(0, self->evs[0].step);
	EXPECT_LE(before - 1, self->evs[0].wall_time);
	EXPECT_GE(wse_tfevents_now() + 1, self->evs[0].wall_time);
	for (int i = 0; i < NSAMPLES; i++) {
		const struct event *ev = &self->evs[i + 1];

		EXPECT_STREQ(samples[i].tag, ev->text);
		EXPECT_EQ(samples[i].step, ev->step) TH_LOG("sample %d", i);
		EXPECT_EQ(samples[i].wall_time, ev->wall_time) TH_LOG("sample %d", i);
		EXPECT_EQ(float_bits(samples[i].value), ev->value_bits) TH_LOG("sample %d", i);
	}
	EXPECT_EQ(0, wse_tfevents_close(self->w));
	self->w = NULL;
}

/* @exe's directory @up levels above it (build/host-tests/X: 1 is build/). */
static int exe_dir(char *dir, size_t len, int up)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);

	if (n <= 0)
		return -1;
	dir[n] = 0;
	for (int i = 0; i <= up; i++) {
		char *slash = strrchr(dir, '/');

		if (!slash)
			return -1;
		*slash = 0;
	}
	return 0;
}

/*
 * tests/host/tfevents_check.py (from the environment, the cwd or the top
 * of the tree) and the schema's descriptor set, build/gen/tfevent.desc,
 * beside the test binary's build directory.
 */
static int find_checker(char *script, char *desc, size_t len)
{
	const char *env = getenv("WSE_TFEVENTS_CHECK");
	char dir[2048];

	if (exe_dir(dir, sizeof(dir), 1) ||
	    (size_t)snprintf(desc, len, "%s/gen/tfevent.desc", dir) >= len ||
	    access(desc, R_OK))
		return -1;
	if (env) {
		snprintf(script, len, "%s", env);
		return access(script, R_OK);
	}
	snprintf(script, len, "%s", CHECK_SCRIPT);
	if (access(script, R_OK) == 0)
		return 0;
	if (exe_dir(dir, sizeof(dir), 2) ||
	    (size_t)snprintf(script, len, "%s/%s", dir, CHECK_SCRIPT) >= len)
		return -1;
	return access(script, R_OK);
}

/* Runs PYTHON SCRIPT --schema DESC FILE; its stdout into @out. Exit status, or -1. */
static int run_checker(const char *script, const char *desc, const char *file, char *out,
		       size_t len)
{
	int pipefd[2], status;
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execl(PYTHON, PYTHON, script, "--schema", desc, file, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while ((got = read(pipefd[0], out + n, len - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = 0;
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(events, python_protobuf_reader_agrees)
{
	char script[4096], desc[4096], version[64], tag[WSE_TFEVENTS_TAG_MAX + 1];
	static char out[65536];
	char *line, *save = NULL;
	int status, i = 0;

	if (access(PYTHON, X_OK) != 0)
		SKIP(return, "%s is missing: install python3 and python3-protobuf", PYTHON);
	ASSERT_EQ(0, find_checker(script, desc, sizeof(script)))
		TH_LOG("%s or build/gen/tfevent.desc not found: run from the top of the tree or set WSE_TFEVENTS_CHECK",
		       CHECK_SCRIPT);
	write_samples(_metadata, self);

	status = run_checker(script, desc, wse_tfevents_path(self->w), out, sizeof(out));
	if (status == 77)
		SKIP(return, "google.protobuf is missing from %s: install python3-protobuf", PYTHON);
	ASSERT_EQ(0, status) TH_LOG("%s %s %s failed; it printed:\n%s", PYTHON, script, desc, out);

	line = strtok_r(out, "\n", &save);
	ASSERT_NE(NULL, line);
	ASSERT_EQ(1, sscanf(line, "file_version\t%63[^\t]", version)) TH_LOG("%s", line);
	EXPECT_STREQ("brain.Event:2", version);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char value_text[64], time_text[64];
		long long step;
		float value;

		ASSERT_GT(NSAMPLES, i) TH_LOG("extra line: %s", line);
		ASSERT_EQ(4, sscanf(line, "scalar\t%1024[^\t]\t%lld\t%63[^\t]\t%63s", tag, &step,
				    value_text, time_text)) TH_LOG("%s", line);
		EXPECT_STREQ(samples[i].tag, tag);
		EXPECT_EQ(samples[i].step, step);
		EXPECT_EQ(samples[i].wall_time, strtod(time_text, NULL)) TH_LOG("%s", line);
		/* Python's repr() of the float32 widened to double reads back exactly. */
		value = (float)strtod(value_text, NULL);
		if (isnan(samples[i].value)) {
			EXPECT_TRUE(isnan(value)) TH_LOG("%s", line);
		} else {
			EXPECT_EQ(float_bits(samples[i].value), float_bits(value)) TH_LOG("%s", line);
		}
		i++;
	}
	EXPECT_EQ(NSAMPLES, i);
}

TEST_F(events, every_flipped_byte_and_cut_is_detected)
{
	const char *why;
	uint8_t *buf;
	size_t len, boundary;
	int n;

	write_samples(_metadata, self);
	buf = test_read_file(wse_tfevents_path(self->w), &len);
	ASSERT_NE(NULL, buf);
	for (size_t at = 0; at < len; at++) {
		for (int bit = 0; bit < 8; bit += 3) {
			buf[at] ^= (uint8_t)(1 << bit);
			why = NULL;
			n = parse_file(buf, len, self->evs, 64, &why);
			buf[at] ^= (uint8_t)(1 << bit);
			EXPECT_EQ(-1, n) TH_LOG("byte %zu bit %d flipped went unnoticed", at, bit);
		}
	}
	/* A cut is an error except between records, where it drops the rest. */
	boundary = 0;
	for (size_t cut = 0; cut < len; cut++) {
		why = NULL;
		n = parse_file(buf, cut, self->evs, 64, &why);
		if (cut == boundary) {
			EXPECT_LE(0, n) TH_LOG("cut at record boundary %zu: %s", cut, why);
			boundary += 16 + get_le(buf + boundary, 8);
		} else {
			EXPECT_EQ(-1, n) TH_LOG("cut at %zu went unnoticed", cut);
		}
	}
	EXPECT_EQ(len, boundary);
	free(buf);
}

TEST_F(events, file_name_and_directory)
{
	struct wse_tfevents *other;
	char dir[96], prefix[160], host[256];
	const char *path;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/run", self->dir);
	ASSERT_EQ(0, wse_tfevents_open(dir, &self->w, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	path = wse_tfevents_path(self->w);
	snprintf(prefix, sizeof(prefix), "%s/events.out.tfevents.", dir);
	EXPECT_EQ(0, strncmp(path, prefix, strlen(prefix))) TH_LOG("%s", path);
	ASSERT_EQ(0, gethostname(host, sizeof(host)));
	host[sizeof(host) - 1] = 0;
	if (!strchr(host, '/'))
		EXPECT_NE(NULL, strstr(path, host)) TH_LOG("%s", path);

	/* A second writer in the same second: the name gets a suffix. */
	ASSERT_EQ(0, wse_tfevents_open(dir, &other, self->err, sizeof(self->err)));
	EXPECT_STRNE(path, wse_tfevents_path(other));
	EXPECT_EQ(0, wse_tfevents_close(other));

	/* Only one level is created. */
	snprintf(dir, sizeof(dir), "%s/a/b", self->dir);
	EXPECT_EQ(-ENOENT, wse_tfevents_open(dir, &other, self->err, sizeof(self->err)));
	EXPECT_EQ(NULL, other);
	EXPECT_NE(NULL, strstr(self->err, "/a/b: cannot create directory: No such file or directory"))
		TH_LOG("%s", self->err);

	/* A file where the directory should be. */
	EXPECT_EQ(-ENOTDIR, wse_tfevents_open(path, &other, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, ": exists and is not a directory")) TH_LOG("%s", self->err);
	EXPECT_EQ(-EINVAL, wse_tfevents_open("", &other, NULL, 0));
}

TEST_F(events, bad_tags_are_refused_and_write_nothing)
{
	char long_tag[WSE_TFEVENTS_TAG_MAX + 2], dir[96];
	static const char *const bad[] = {
		"",
		"tab\there",
		"new\nline",
		"\x7f",
		"\xff",			/* not UTF-8 */
		"\xc3",			/* cut short */
		"\xc0\xaf",		/* overlong '/' */
		"\xed\xa0\x80",		/* a surrogate */
		"\xf4\x90\x80\x80",	/* past U+10FFFF */
	};
	const char *why = NULL;
	uint8_t *buf;
	size_t len;
	int n;

	snprintf(dir, sizeof(dir), "%s/run", self->dir);
	ASSERT_EQ(0, wse_tfevents_open(dir, &self->w, self->err, sizeof(self->err)));
	EXPECT_EQ(-EINVAL, wse_tfevents_scalar(self->w, NULL, 1, 1.0, 1.0f));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, wse_tfevents_scalar(self->w, bad[i], 1, 1.0, 1.0f))
			TH_LOG("tag %zu", i);
	}
	memset(long_tag, 'x', sizeof(long_tag) - 1);
	long_tag[sizeof(long_tag) - 1] = 0;
	EXPECT_EQ(-EINVAL, wse_tfevents_scalar(self->w, long_tag, 1, 1.0, 1.0f));

	/* The longest tag, with the longest step, fits the event buffer exactly. */
	long_tag[WSE_TFEVENTS_TAG_MAX] = 0;
	EXPECT_EQ(0, wse_tfevents_scalar(self->w, long_tag, INT64_MIN, 1e9, 1.0f));
	EXPECT_EQ(0, wse_tfevents_flush(self->w));

	buf = test_read_file(wse_tfevents_path(self->w), &len);
	ASSERT_NE(NULL, buf);
	n = parse_file(buf, len, self->evs, 64, &why);
	free(buf);
	ASSERT_EQ(2, n) TH_LOG("%s", why ? why : "");
	EXPECT_EQ(WSE_TFEVENTS_TAG_MAX, strlen(self->evs[1].text));
	EXPECT_EQ(INT64_MIN, self->evs[1].step);
}

/* With the file size limited, writes fail; the first error sticks. */
TEST_F(events, write_error_sticks)
{
	struct rlimit lim = { .rlim_cur = 4096, .rlim_max = RLIM_INFINITY };
	char dir[96];
	int ret = 0, i;

	signal(SIGXFSZ, SIG_IGN);	/* a write past the limit then fails with EFBIG */
	snprintf(dir, sizeof(dir), "%s/run", self->dir);
	ASSERT_EQ(0, wse_tfevents_open(dir, &self->w, self->err, sizeof(self->err)));
	ASSERT_EQ(0, getrlimit(RLIMIT_FSIZE, &lim));
	lim.rlim_cur = 4096;
	ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &lim));
	for (i = 0; i < 10000 && !ret; i++) {
		ret = wse_tfevents_scalar(self->w, "loss", i, 1.0, 1.0f);
		if (!ret)
			ret = wse_tfevents_flush(self->w);
	}
	EXPECT_EQ(-EFBIG, ret);
	EXPECT_EQ(-EFBIG, wse_tfevents_scalar(self->w, "loss", i, 1.0, 1.0f));
	EXPECT_EQ(-EFBIG, wse_tfevents_flush(self->w));
	EXPECT_EQ(-EFBIG, wse_tfevents_close(self->w));
	self->w = NULL;
}

TEST_HARNESS_MAIN
