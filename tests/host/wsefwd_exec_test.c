// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of wsefwd's execution opcodes: the real daemon on a unix
 * socket, programs compiled by the real compiler library, driven with
 * libwselink's client (several requests in flight on several queues, as
 * the kernel driver will). The test plays MemoryX for weight streaming,
 * with the engine's own update function.
 *
 * The binary is $WSE_FWD, else build/bin/wsefwd (build/san-bin/wsefwd for
 * the sanitizer build of this test), relative to the repository root.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fwd_daemon.h"
#include "kselftest_harness.h"
#include "test_model.h"
#include "wse/compiler.h"
#include "wse/crc32c.h"
#include "wse/link_io.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/link_region.h"
#include "wse/splitmix64.h"
#include "wse/engine.h"

#define IO_MS		20000
#define START_MS	5000
#define RUN_MS		60000
#define PROG		1
/* Queues: RUN on 0, inputs on 1, outputs on 2, control on 3. */
#define Q_RUN		0
#define Q_IN		1
#define Q_OUT		2
#define Q_CTL		3

/* Stream ids as the compiler emits them. */
#define S_SAMPLES	0
#define S_LABELS	1
#define S_LOSSES	2
#define S_PREDS		3
#define S_WEIGHTS(k, ws) (4 + (k) * ((ws) ? 2 : 1))
#define S_GRADS(k)	(5 + (k) * 2)

static const char *self_path;

/* A small MLP the tests train: 16 u8 inputs, 4 classes, batch 8. */
static const char tiny_model[] =
	"model tiny\n"
	"input 16 u8\n"
	"dense 16 12 relu\n"
	"dense 12 4 none\n"
	"loss softmax_xent\n"
	"optimizer adam lr=1e-2\n"
	"batch 8\n"
	"seed 3\n";
#define TINY_IN		16
#define TINY_CLASSES	4
#define TINY_BATCH	8

FIXTURE(exec) {
	char dir[64];
	char spec[160];
	char log[160];
	pid_t pid;
	struct wse_link_client cl;
	int fd;
};

FIXTURE_SETUP(exec)
{
	strcpy(self->dir, "/tmp/wsefwd_exec.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->spec, sizeof(self->spec), "unix:%s/fwd.sock", self->dir);
	snprintf(self->log, sizeof(self->log), "%s/fwd.log", self->dir);
	self->pid = 0;
	self->fd = -1;
}

FIXTURE_TEARDOWN(exec)
{
	char line[512], cmd[128];
	FILE *f;
	int n = 0;

	if (self->fd >= 0) {
		wse_link_client_free(&self->cl);
		close(self->fd);
	}
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	f = __test_passed(_metadata) ? NULL : fopen(self->log, "r");
	while (f && n++ < 200 && fgets(line, sizeof(line), f))
		fprintf(stderr, "#   fwd: %s", line);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd)) {
		/* A leftover temp dir is not worth failing a test for. */
	}
}

/* Starts wsefwd with the given NULL-terminated extra arguments and connects. */
static int start_argv(FIXTURE_DATA(exec) *self, const char *const *extra)
{
	static const struct wse_link_hello_info hello = {
		.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_MEM | WSE_LINK_CAP_EXEC,
		.max_payload = 1 << 20,
	};
	struct wse_link_addr addr;
	struct wse_link_err err;
	const char *argv[40];
	char text[256];
	uint32_t status;
	int n = 0, fd = -1;

	argv[n++] = fwd_binary(self_path);
	argv[n++] = "--listen";
	argv[n++] = self->spec;
	while (*extra && n < 38)
		argv[n++] = *extra++;
	argv[n] = NULL;
	self->pid = fork();
	if (self->pid == 0) {
		int lfd = open(self->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		/*
		 * Dies with the test: after a failed ASSERT the harness (6.12)
		 * can skip the teardown that would kill it.
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);

		if (lfd >= 0) {
			dup2(lfd, STDERR_FILENO);
			close(lfd);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (wse_link_addr_parse(self->spec, &addr, text, sizeof(text)))
		return -1;
	for (int i = 0; i < START_MS / 20 && fd < 0; i++) {
		fd = wse_link_connect(&addr, IO_MS, text, sizeof(text));
		if (fd < 0)
			usleep(20000);
	}
	if (fd < 0)
		return -1;
	if (wse_link_client_hello(&self->cl, fd, &hello, IO_MS, &status, text, sizeof(text),
				  &err) || status) {
		close(fd);
		return -1;
	}
	self->fd = fd;
	return 0;
}

#define start(self, ...) start_argv(self, (const char *const[]){ __VA_ARGS__, NULL })

/* One request and its response; the failure text (if any) in @text. */
static uint32_t call(FIXTURE_DATA(exec) *self, uint8_t op, uint16_t q, const void *hdr,
		     size_t hlen, const void *data, size_t dlen, void *out, size_t *outlen,
		     char *text, size_t textlen)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)data, dlen } };
	struct wse_link_err err;
	uint32_t status;
	size_t rest;

	if (wse_link_client_call(&self->cl, op, q, iov, dlen ? 2 : (hlen ? 1 : 0), &status,
				 &rest, &err))
		return 0xdead;
	if (status && text)
		wse_link_client_text(&self->cl, rest, text, textlen);
	if (!status && out) {
		memcpy(out, self->cl.buf + sizeof(struct wse_link_status), rest);
		if (outlen)
			*outlen = rest;
	}
	return status;
}

/* Loads @image into @slot in pieces of @piece bytes; info on success. */
static uint32_t load(FIXTURE_DATA(exec) *self, uint32_t slot, const void *image, size_t len,
		     size_t piece, struct wse_link_prog_info *info, char *text, size_t textlen)
{
	uint32_t status = 0;

	for (size_t off = 0; off < len; off += piece) {
		struct wse_link_prog_load_info in = {
			.program = slot, .total = len, .offset = off,
			.flags = off + piece >= len ? WSE_LINK_PROG_LAST : 0,
		};
		struct wse_link_program_load raw;
		uint8_t reply[64];
		size_t n = len - off < piece ? len - off : piece, rlen = 0;
		struct wse_link_err err;

		wse_link_prog_load_encode(&raw, &in);
		status = call(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw, sizeof(raw),
			      (const uint8_t *)image + off, n, reply, &rlen, text, textlen);
		if (status)
			return status;
		if (in.flags && info && wse_link_prog_info_decode(reply, rlen, info, &err))
			return 0xbad;
	}
	return status;
}

static uint32_t stream_write(FIXTURE_DATA(exec) *self, uint16_t q, uint32_t stream,
			     const void *data, uint32_t len, char *text, size_t textlen)
{
	struct wse_link_stream_info in = { PROG, stream, len, 0 };
	struct wse_link_stream raw;

	wse_link_stream_encode(&raw, &in);
	return call(self, WSE_LINK_OP_STREAM_WRITE, q, &raw, sizeof(raw), data, len, NULL, NULL,
		    text, textlen);
}

/* Reads exactly @len bytes of an output stream, in as many reads as it takes. */
static uint32_t stream_read_all(FIXTURE_DATA(exec) *self, uint32_t stream, void *out,
				uint32_t len, char *text, size_t textlen)
{
	for (uint32_t got = 0, tries = 0; got < len && tries < 10000; tries++) {
		struct wse_link_stream_info in = { PROG, stream, len - got, 0 };
		struct wse_link_stream raw;
		size_t n = 0;
		uint32_t st;

		wse_link_stream_encode(&raw, &in);
		st = call(self, WSE_LINK_OP_STREAM_READ, Q_OUT, &raw, sizeof(raw), NULL, 0,
			  (uint8_t *)out + got, &n, text, textlen);
		if (st)
			return st;
		got += (uint32_t)n;
		if (got == len)
			return 0;
	}
	return 0;
}

static int submit_run(FIXTURE_DATA(exec) *self, uint32_t kind, uint32_t steps, uint32_t batch,
		      uint32_t *tag)
{
	struct wse_link_run_info in = { .program = PROG, .kind = kind, .steps = steps,
					 .batch = batch };
	struct wse_link_run raw;
	struct iovec iov = { &raw, sizeof(raw) };
	struct wse_link_err err;

	wse_link_run_encode(&raw, &in);
	return wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, tag, &err);
}

static uint32_t wait_run(FIXTURE_DATA(exec) *self, uint32_t tag,
			 struct wse_link_run_result_info *res, char *text, size_t textlen)
{
	struct wse_link_err err;
	uint32_t status;
	size_t rest;

	/* Bounded: a hung RUN fails the test instead of stalling it. */
	if (wse_link_client_wait(&self->cl, tag, RUN_MS, &status, &rest, &err))
		return 0xdead;
	if (status) {
		wse_link_client_text(&self->cl, rest, text, textlen);
		return status;
	}
	if (res && wse_link_run_result_decode(self->cl.buf + sizeof(struct wse_link_status), rest,
					      res, &err))
		return 0xbad;
	return 0;
}

/*
 * A seeded, learnable problem: 16 random bytes per sample, the label the
 * argmax of a fixed random linear teacher.
 */
static void make_batch(struct engine_rng *rng, uint8_t *px, int32_t *labels, uint32_t batch)
{
	static float teacher[TINY_CLASSES][TINY_IN];
	static bool init;

	if (!init) {
		struct engine_rng t;

		engine_rng_seed(&t, 99);
		for (int c = 0; c < TINY_CLASSES; c++)
			for (int i = 0; i < TINY_IN; i++)
				teacher[c][i] = engine_rng_uniform(&t) - 0.5f;
		init = true;
	}
	for (uint32_t s = 0; s < batch; s++) {
		float best = -1e30f;

		for (int i = 0; i < TINY_IN; i++)
			px[s * TINY_IN + i] = (uint8_t)(engine_rng_next(rng) >> 56);
		for (int c = 0; c < TINY_CLASSES; c++) {
			float v = 0;

			for (int i = 0; i < TINY_IN; i++)
				v += teacher[c][i] * (px[s * TINY_IN + i] / 255.0f - 0.5f);
			if (v > best) {
				best = v;
				labels[s] = c;
			}
		}
	}
}

/*
 * One pipelined training step of @batch samples: the batch in, RUN, the
 * losses and predictions out.
 */
static uint32_t train_step_of(FIXTURE_DATA(exec) *self, struct engine_rng *rng, uint32_t batch,
			      float *loss, struct wse_link_run_result_info *res, char *text,
			      size_t textlen)
{
	uint8_t px[TINY_BATCH * TINY_IN];
	int32_t labels[TINY_BATCH], preds[TINY_BATCH];
	float losses[TINY_BATCH] = { 0 };
	uint32_t tag, st;

	make_batch(rng, px, labels, batch);
	if (submit_run(self, WSE_LINK_RUN_TRAIN, 1, batch, &tag))
		return 0xdead;
	st = stream_write(self, Q_IN, S_SAMPLES, px, batch * TINY_IN, text, textlen);
	if (!st)
		st = stream_write(self, Q_IN, S_LABELS, labels, batch * 4, text, textlen);
	if (!st)
		st = stream_read_all(self, S_LOSSES, losses, batch * 4, text, textlen);
	if (!st)
		st = stream_read_all(self, S_PREDS, preds, batch * 4, text, textlen);
	if (!st)
		st = wait_run(self, tag, res, text, textlen);
	*loss = 0;
	for (uint32_t i = 0; i < batch; i++)
		*loss += losses[i] / (float)batch;
	return st;
}

static uint32_t train_step(FIXTURE_DATA(exec) *self, struct engine_rng *rng, float *loss,
			   struct wse_link_run_result_info *res, char *text, size_t textlen)
{
	return train_step_of(self, rng, TINY_BATCH, loss, res, text, textlen);
}

static uint32_t params_read(FIXTURE_DATA(exec) *self, uint32_t which, uint64_t off, void *out,
			    uint32_t len, char *text, size_t textlen)
{
	struct wse_link_params_info in = { PROG, which, off, len };
	struct wse_link_params raw;

	wse_link_params_encode(&raw, &in);
	return call(self, WSE_LINK_OP_PARAMS_READ, Q_CTL, &raw, sizeof(raw), NULL, 0, out, NULL,
		    text, textlen);
}

static uint32_t params_write(FIXTURE_DATA(exec) *self, uint32_t which, uint64_t off,
			     const void *data, uint32_t len, char *text, size_t textlen)
{
	struct wse_link_params_info in = { PROG, which, off, len };
	struct wse_link_params raw;

	wse_link_params_encode(&raw, &in);
	return call(self, WSE_LINK_OP_PARAMS_WRITE, Q_CTL, &raw, sizeof(raw), data, len, NULL,
		    NULL, text, textlen);
}

TEST_F(exec, hello_offers_exec_and_load_unload)
{
	struct wse_link_prog_info info;
	struct wse_link_program_ref ref;
	char text[256] = "";
	size_t len;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_EXEC);
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	/* In small pieces: the device assembles them in order. */
	ASSERT_EQ(0, load(self, PROG, img, len, 100, &info, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(PROG, info.program);
	EXPECT_EQ(WSEP_MODE_PIPELINED, info.mode);
	EXPECT_EQ(2U, info.num_layers);
	EXPECT_EQ(6U, info.num_streams);
	EXPECT_EQ(TINY_BATCH, info.batch);
	EXPECT_GT(info.sram_bytes, 0U);
	EXPECT_GT(info.est_cycles_per_step, 0U);
	/* Replacing the slot keeps one program. */
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	wse_link_prog_ref_encode(&ref, PROG);
	EXPECT_EQ(0, call(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref, sizeof(ref), NULL, 0,
			  NULL, NULL, text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref,
					 sizeof(ref), NULL, 0, NULL, NULL, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "no program is loaded in slot 1")) TH_LOG("%s", text);
	free(img);
}

TEST_F(exec, malformed_programs_refused_daemon_still_serving)
{
	struct wse_link_prog_info info;
	char text[256] = "";
	uint8_t *bad;
	size_t len, len64;
	void *img, *img64;

	ASSERT_EQ(0, start(self, "--wafer", "16x16", "--max-program", "64K"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	bad = malloc(len);
	ASSERT_NE(NULL, bad);

	/* Truncated: the header's file size is not what arrived. */
	EXPECT_EQ(WSE_LINK_E_INVAL, load(self, PROG, img, len - 8, 4096, NULL, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "invalid program")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "truncated")) TH_LOG("%s", text);
	/* A flipped byte inside a section: its CRC catches it. */
	memcpy(bad, img, len);
	bad[len - 5] ^= 0x40;
	EXPECT_EQ(WSE_LINK_E_INVAL, load(self, PROG, bad, len, 4096, NULL, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "checksum mismatch")) TH_LOG("%s", text);
	/* Garbage. */
	memset(bad, 0x5a, len);
	EXPECT_EQ(WSE_LINK_E_INVAL, load(self, PROG, bad, len, 4096, NULL, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "magic")) TH_LOG("%s", text);
	/* Compiled for a larger wafer whose regions lie outside this one. */
	ASSERT_EQ(0, test_compile_model(tiny_model, "64x64", WSECC_MODE_WEIGHT_STREAMING, &img64, &len64));
	EXPECT_EQ(WSE_LINK_E_INVAL, load(self, PROG, img64, len64, 4096, NULL, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "compiled for wafer 64x64")) TH_LOG("%s", text);
	/* Larger than --max-program. */
	{
		struct wse_link_prog_load_info in = { .program = PROG, .total = 1 << 20 };
		struct wse_link_program_load raw;

		wse_link_prog_load_encode(&raw, &in);
		EXPECT_EQ(WSE_LINK_E_NOSPC, call(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw,
						 sizeof(raw), img, 64, NULL, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "--max-program")) TH_LOG("%s", text);
		/* A piece out of order. */
		in = (struct wse_link_prog_load_info){ .program = PROG, .total = len, .offset = 64 };
		wse_link_prog_load_encode(&raw, &in);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw,
						 sizeof(raw), img, 64, NULL, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "no load is in progress")) TH_LOG("%s", text);
		/* Slot 0 does not exist. */
		in = (struct wse_link_prog_load_info){ .program = 0, .total = len };
		wse_link_prog_load_encode(&raw, &in);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw,
						 sizeof(raw), img, 64, NULL, NULL, text, sizeof(text)));
	}
	/* Still serving: the good image loads. */
	ASSERT_EQ(0, load(self, PROG, img, len, 4096, &info, text, sizeof(text))) TH_LOG("%s", text);
	free(bad);
	free(img);
	free(img64);
}

TEST_F(exec, sram_capacity_enforced_with_numbers)
{
	struct wse_link_prog_info info;
	char text[256] = "";
	uint32_t slot, st = 0;
	size_t len;
	void *img;

	/* The program's regions fit a 16x8 mesh of 1 KiB PEs; a few copies do not. */
	ASSERT_EQ(0, test_compile_model("model m\ninput 64 u8\ndense 64 64 relu\ndense 64 4 none\n"
					"loss softmax_xent\noptimizer sgd lr=0.1\nbatch 4\nseed 1\n",
					"16x8:1K", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, start(self, "--wafer", "16x8", "--sram-per-pe", "1K"));
	for (slot = 1; slot < 64; slot++) {
		st = load(self, slot, img, len, len, &info, text, sizeof(text));
		if (st)
			break;
	}
	EXPECT_EQ(WSE_LINK_E_NOSPC, st) TH_LOG("%s", text);
	EXPECT_GT(slot, 1U);
	EXPECT_NE(NULL, strstr(text, "bytes of SRAM; the device has 131072")) TH_LOG("%s", text);
	free(img);
}

/* A program as deep as the format allows: the device runs it in both modes. */
TEST_F(exec, deepest_program_the_format_allows_runs)
{
	static char model[64 * WSE_MAX_LAYERS];
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct engine_rng rng;
	char text[256] = "";
	size_t len, at;
	float loss;
	void *img;

	at = (size_t)snprintf(model, sizeof(model), "model deep\ninput %d u8\n", TINY_IN);
	for (int k = 0; k + 1 < WSE_MAX_LAYERS; k++)
		at += (size_t)snprintf(model + at, sizeof(model) - at, "dense %d %d relu\n", TINY_IN,
				       TINY_IN);
	snprintf(model + at, sizeof(model) - at,
		 "dense %d %d none\nloss softmax_xent\noptimizer adam lr=1e-2\nbatch %d\nseed 3\n",
		 TINY_IN, TINY_CLASSES, TINY_BATCH);
	ASSERT_EQ(0, start(self, "--wafer", "64x64"));
	ASSERT_EQ(0, test_compile_model(model, "64x64", WSECC_MODE_WEIGHT_STREAMING, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ((uint32_t)WSE_MAX_LAYERS, info.num_layers);
	free(img);
	ASSERT_EQ(0, test_compile_model(model, "64x64", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSEP_MODE_PIPELINED, info.mode);
	EXPECT_EQ((uint32_t)WSE_MAX_LAYERS, info.num_layers);
	engine_rng_seed(&rng, 5);
	ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(1U, res.steps);
	EXPECT_TRUE(isfinite(loss));
	free(img);
}

TEST_F(exec, pipelined_training_loss_falls)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct wse_link_dev_stats_info ds;
	struct wse_link_err err;
	struct engine_rng rng;
	double first = 0, last = 0;
	uint64_t cycles = 0, est = 0;
	char text[256] = "";
	uint8_t raw[64];
	size_t len, n = 0;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 5);
	for (int step = 0; step < 300; step++) {
		float loss;

		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(1U, res.steps);
		ASSERT_EQ(TINY_BATCH, res.samples);
		ASSERT_GT(res.cycles, 0U);
		ASSERT_GT(res.est_cycles, 0U);
		cycles += res.cycles;
		est += res.est_cycles;
		if (step < 20)
			first += loss / 20;
		if (step >= 280)
			last += loss / 20;
	}
	TH_LOG("loss %.4f over the first 20 steps, %.4f over the last 20", first, last);
	EXPECT_LT(last, first * 0.6);
	/* The device's counters add up the runs, model and estimate side by side. */
	ASSERT_EQ(0, call(self, WSE_LINK_OP_DEVICE_STATS, Q_CTL, NULL, 0, NULL, 0, raw, &n, text,
			  sizeof(text)));
	ASSERT_EQ(0, wse_link_dev_stats_decode(raw, n, &ds, &err));
	EXPECT_EQ(cycles, ds.cycles);
	EXPECT_EQ(est, ds.est_cycles);
	EXPECT_EQ(300U, ds.steps);
	EXPECT_EQ(300U * TINY_BATCH, ds.samples);
	EXPECT_EQ(1U, ds.programs);
	EXPECT_EQ(info.sram_bytes, ds.sram_used);
	EXPECT_EQ(300U * TINY_BATCH * (TINY_IN + 4), ds.stream_bytes_in);
	EXPECT_EQ(300U * TINY_BATCH * 8, ds.stream_bytes_out);
	TH_LOG("modelled %llu cycles, compiler's estimate %llu (ratio %.3f)",
	       (unsigned long long)cycles, (unsigned long long)est, (double)cycles / (double)est);
	free(img);
}

/* A STREAM_WRITE flagged WSE_LINK_STREAM_WIRE16 of @len bytes to program @prog's @stream. */
static uint32_t write16(FIXTURE_DATA(exec) *self, uint32_t prog, uint32_t stream, const void *data,
			uint32_t len, char *text, size_t textlen)
{
	struct wse_link_stream_info in = { prog, stream, len, WSE_LINK_STREAM_WIRE16 };
	struct wse_link_stream raw;

	wse_link_stream_encode(&raw, &in);
	return call(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, &raw, sizeof(raw), data, len, NULL, NULL,
		    text, textlen);
}

/*
 * 16-bit weights on the wire: the device offers WSE_LINK_CAP_WIRE16 and
 * takes a bf16 program's layer weights with W in 16 bits and b in f32,
 * counting the bytes that came; it refuses, saying why, a piece that does
 * not end on a whole value, the flag on a stream that is not a layer's
 * weights, on an fp32 program, and on a read.
 */
/* RUN of @program, with flag SCALED and @scale after it when @scaled; its status, @text why. */
static uint32_t run_scaled(FIXTURE_DATA(exec) *self, uint32_t program, uint32_t kind, bool scaled,
			   float scale, char *text, size_t textlen)
{
	struct wse_link_run_info in = { .program = program, .steps = 1, .batch = 1,
					.kind = kind | (scaled ? WSE_LINK_RUN_SCALED : 0) };
	struct wse_link_run raw;
	struct wse_link_run_scale sc;
	struct iovec iov[2] = { { &raw, sizeof(raw) }, { &sc, sizeof(sc) } };
	struct wse_link_err err;
	uint32_t tag;

	wse_link_run_encode(&raw, &in);
	wse_link_run_scale_encode(&sc, scale);
	if (wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, iov, scaled ? 2 : 1, &tag,
				   &err))
		return 0xdead;
	return wait_run(self, tag, NULL, text, textlen);
}

/*
 * The step's loss scale (flag SCALED) comes with, and only with, training
 * an fp16 program by weight streaming, and it is a finite number above 0.
 */
TEST_F(exec, a_run_scaled_only_where_fp16_weight_streaming_trains)
{
	char text[512] = "";
	size_t len, flen;
	void *img, *fimg;

	ASSERT_EQ(0, test_compile_model_at(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, 0,
					   WSEP_PRECISION_FP16, &img, &len));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, &fimg,
					&flen));
	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, load(self, PROG, img, len, len, NULL, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, PROG + 1, fimg, flen, flen, NULL, text, sizeof(text)))
		TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, run_scaled(self, PROG, WSE_LINK_RUN_TRAIN, false, 0, text,
					       sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "its RUN needs the loss scale (flag SCALED)")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, run_scaled(self, PROG, WSE_LINK_RUN_EVAL, true, 1024.0f, text,
					       sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "only for training an fp16 weight-streaming program; this is a RUN of kind 2"))
		TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, run_scaled(self, PROG + 1, WSE_LINK_RUN_TRAIN, true, 1024.0f,
					       text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "fp32 weight streaming")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, run_scaled(self, PROG, WSE_LINK_RUN_TRAIN, true, 0.0f, text,
					       sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "must be finite and above 0")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, run_scaled(self, PROG, WSE_LINK_RUN_TRAIN, true, NAN, text,
					       sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "must be finite and above 0")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, run_scaled(self, PROG, WSE_LINK_RUN_TRAIN, true, INFINITY, text,
					       sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "must be finite and above 0")) TH_LOG("%s", text);
	free(img);
	free(fimg);
}

TEST_F(exec, sixteen_bit_weights_taken_and_refused)
{
	const uint32_t wire = 16 * 12 * 2 + 12 * 4;
	struct wse_link_dev_stats_info before, after;
	uint8_t data[1024] = { 0 }, raw[256];
	char text[512] = "";
	struct wse_link_err err;
	size_t len, flen, n = 0;
	void *img, *fimg;

	ASSERT_EQ(0, test_compile_model_at(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, 0,
					   WSEP_PRECISION_BF16, &img, &len));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, &fimg,
					&flen));
	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_WIRE16);
	ASSERT_EQ(0, load(self, PROG, img, len, len, NULL, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, PROG + 1, fimg, flen, flen, NULL, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, call(self, WSE_LINK_OP_DEVICE_STATS, Q_CTL, NULL, 0, NULL, 0, raw, &n, text,
			  sizeof(text)));
	ASSERT_EQ(0, wse_link_dev_stats_decode(raw, n, &before, &err));
	EXPECT_EQ(0, write16(self, PROG, S_WEIGHTS(0, 1), data, wire, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, call(self, WSE_LINK_OP_DEVICE_STATS, Q_CTL, NULL, 0, NULL, 0, raw, &n, text,
			  sizeof(text)));
	ASSERT_EQ(0, wse_link_dev_stats_decode(raw, n, &after, &err));
	EXPECT_EQ(wire, after.stream_bytes_in - before.stream_bytes_in);

	EXPECT_EQ(WSE_LINK_E_INVAL, write16(self, PROG, S_WEIGHTS(0, 1), data, 3, text,
					    sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "do not end on a whole value inside the layer's 204 floats"))
		TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, write16(self, PROG, S_WEIGHTS(0, 1), data, wire + 4, text,
					    sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "do not end on a whole value")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, write16(self, PROG, S_SAMPLES, data, 16, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "does not take 16-bit weights")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, write16(self, PROG + 1, S_WEIGHTS(0, 1), data, wire, text,
					    sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "fp16 or bf16 weight-streaming program")) TH_LOG("%s", text);
	{
		struct wse_link_stream_info in = { PROG, S_LOSSES, 16, WSE_LINK_STREAM_WIRE16 };
		struct wse_link_stream req;

		wse_link_stream_encode(&req, &in);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_STREAM_READ, Q_OUT, &req,
						 sizeof(req), NULL, 0, NULL, NULL, text,
						 sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "a stream read takes no flags")) TH_LOG("%s", text);
	}
	free(img);
	free(fimg);
}

/*
 * The test as MemoryX: it holds the weights, streams them, applies the
 * update. Weight streaming runs each step's micro-batches one after another
 * in one thread; pipelined runs them through concurrent stages: after 6
 * Adam steps of @batch samples, with the daemon cutting batches into
 * @micro micro-batches (NULL: its default), the weights and losses must
 * be the same bits.
 */
static void modes_agree(struct __test_metadata *_metadata, FIXTURE_DATA(exec) *self,
			const char *micro, uint32_t batch)
{
	const size_t widths[] = { TINY_IN, 12, TINY_CLASSES };
	struct engine_params *mx;
	struct engine_shape shape;
	struct engine_optim opt;
	struct wse_link_prog_info info;
	struct wse_link_run_result_info res;
	struct wsep_program *prog;
	char text[256] = "", msg[256];
	float *pipe_w, pipe_loss[6];
	size_t len, wlen, total;
	void *img, *wimg;
	uint64_t off[2] = { 0, 0 };

	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, &wimg, &wlen));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, wsep_read(wimg, wlen, &prog, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, engine_shape_mlp(&shape, widths, 2));
	ASSERT_EQ(0, engine_params_create(&shape, ENGINE_ADAM, &mx));
	engine_optim_defaults(&opt, ENGINE_ADAM, prog->opt.lr);
	opt.beta1 = prog->opt.beta1;
	opt.beta2 = prog->opt.beta2;
	opt.eps = prog->opt.eps;
	opt.weight_decay = prog->opt.weight_decay;
	for (int k = 0; k < 2; k++) {
		off[k] = prog->layers[k].weight_offset;
		wsep_init_layer(prog->seed, off[k], prog->layers[k].in, prog->layers[k].out,
				mx->layer[k].w, mx->layer[k].b);
	}
	total = wsep_total_params(prog->layers, 2);

	/* Pipelined: 6 steps on the device, weights read back. */
	ASSERT_EQ(0, micro ? start(self, "--wafer", "16x16", "--micro-batches", micro)
			   : start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	{
		struct engine_rng rng;

		engine_rng_seed(&rng, 11);
		for (int s = 0; s < 6; s++)
			ASSERT_EQ(0, train_step_of(self, &rng, batch, &pipe_loss[s], &res, text,
						   sizeof(text))) TH_LOG("%s", text);
	}
	pipe_w = malloc(total * 4);
	ASSERT_NE(NULL, pipe_w);
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, pipe_w, (uint32_t)total * 4, text,
				 sizeof(text))) TH_LOG("%s", text);

	/* Weight streaming, same data, in the same daemon's other slot... the
	 * same slot after reloading, so the stream ids stay.
	 */
	ASSERT_EQ(0, load(self, PROG, wimg, wlen, wlen, &info, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, info.mode);
	{
		struct engine_rng rng;

		engine_rng_seed(&rng, 11);
		for (uint64_t t = 1; t <= 6; t++) {
			uint8_t px[TINY_BATCH * TINY_IN];
			int32_t labels[TINY_BATCH], preds[TINY_BATCH];
			float losses[TINY_BATCH], wbuf[16 * 12 + 12], gbuf[2][16 * 12 + 12];
			uint32_t tag;

			make_batch(&rng, px, labels, batch);
			ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, batch, &tag));
			ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, batch * TINY_IN, text,
						  sizeof(text))) TH_LOG("%s", text);
			ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, batch * 4, text,
						  sizeof(text)));
			/* Forward 0..L-1, then backward L-1..0. */
			for (int pass = 0; pass < 2; pass++) {
				for (int i = 0; i < 2; i++) {
					int k = pass ? 1 - i : i;
					size_t in = widths[k], out = widths[k + 1];

					memcpy(wbuf, mx->layer[k].w, in * out * 4);
					memcpy(wbuf + in * out, mx->layer[k].b, out * 4);
					ASSERT_EQ(0, stream_write(self, Q_IN, S_WEIGHTS(k, 1), wbuf,
								  (uint32_t)((in * out + out) * 4),
								  text, sizeof(text))) TH_LOG("%s", text);
				}
			}
			for (int k = 1; k >= 0; k--) {
				size_t in = widths[k], out = widths[k + 1];

				ASSERT_EQ(0, stream_read_all(self, S_GRADS(k), gbuf[k],
							     (uint32_t)((in * out + out) * 4), text,
							     sizeof(text))) TH_LOG("%s", text);
			}
			ASSERT_EQ(0, stream_read_all(self, S_LOSSES, losses, batch * 4, text,
						     sizeof(text)));
			ASSERT_EQ(0, stream_read_all(self, S_PREDS, preds, batch * 4, text,
						     sizeof(text)));
			ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
			EXPECT_GT(res.cycles, 0U);
			{
				/* The losses too, summed in sample order as train_step_of does. */
				float loss = 0;

				for (uint32_t i = 0; i < batch; i++)
					loss += losses[i] / (float)batch;
				EXPECT_EQ(0, memcmp(&loss, &pipe_loss[t - 1], 4)) TH_LOG("step %d", (int)t);
			}
			/* MemoryX applies the optimizer to its own copy. */
			for (int k = 1; k >= 0; k--) {
				size_t in = widths[k], out = widths[k + 1];

				memcpy(mx->layer[k].dw, gbuf[k], in * out * 4);
				memcpy(mx->layer[k].db, gbuf[k] + in * out, out * 4);
				ASSERT_EQ(0, engine_params_update_layer(mx, &opt, t, (size_t)k));
			}
		}
	}
	for (int k = 0; k < 2; k++) {
		size_t in = widths[k], out = widths[k + 1];

		EXPECT_EQ(0, memcmp(pipe_w + off[k], mx->layer[k].w, in * out * 4)) TH_LOG("W%d", k);
		EXPECT_EQ(0, memcmp(pipe_w + off[k] + in * out, mx->layer[k].b, out * 4))
			TH_LOG("b%d", k);
	}
	/* The weights were not left on the device: its params are refused. */
	EXPECT_EQ(WSE_LINK_E_INVAL, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, pipe_w, 4, text,
						sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "weight streaming")) TH_LOG("%s", text);
	free(pipe_w);
	engine_params_destroy(mx);
	wsep_program_free(prog);
	free(img);
	free(wimg);
}

TEST_F(exec, weight_streaming_matches_pipelined_bit_for_bit)
{
	modes_agree(_metadata, self, NULL, TINY_BATCH);
}

/* One micro-batch (also the default for a batch of 8): the stages still hand it on. */
TEST_F(exec, modes_agree_with_one_micro_batch)
{
	modes_agree(_metadata, self, "1", TINY_BATCH);
}

TEST_F(exec, modes_agree_with_two_micro_batches)
{
	modes_agree(_metadata, self, "2", TINY_BATCH);
}

/* 8 in 3: micro-batches of 3, 3 and 2. */
TEST_F(exec, modes_agree_with_three_uneven_micro_batches)
{
	modes_agree(_metadata, self, "3", TINY_BATCH);
}

/* A short batch of 5 where a full one has 4 micro-batches of 2: 2, 2, 1. */
TEST_F(exec, modes_agree_on_a_short_batch)
{
	modes_agree(_metadata, self, "4", 5);
}

/*
 * Micro-batches on the daemon alone: the tiny model compiled pipelined for
 * micro-batches of its whole batch and of 1 sample (8 of them), trained
 * 40 steps from the same weights on the same batches: the same loss curve
 * to fp32 rounding (1e-5), though other bits (the gradients sum over 8
 * micro-batches in a tree).
 */
TEST_F(exec, one_micro_batch_and_eight_give_the_same_loss_curve)
{
	enum { STEPS = 40 };
	const uint32_t micro[2] = { TINY_BATCH, TINY_BATCH / 8 };
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	float loss[2][STEPS];
	char text[256] = "";
	int at;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	for (int v = 0; v < 2; v++) {
		struct engine_rng rng;
		size_t len;
		void *img;

		ASSERT_EQ(0, test_compile_model_micro(tiny_model, "16x16", WSECC_MODE_PIPELINED,
						      micro[v], &img, &len));
		ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text)))
			TH_LOG("%s", text);
		engine_rng_seed(&rng, 21);
		for (int s = 0; s < STEPS; s++)
			ASSERT_EQ(0, train_step(self, &rng, &loss[v][s], &res, text, sizeof(text)))
				TH_LOG("micro-batch %u: %s", micro[v], text);
		free(img);
	}
	at = test_loss_curves_differ(loss[0], loss[1], STEPS);
	EXPECT_EQ(-1, at) TH_LOG("step %d: %.9g in 1 micro-batch, %.9g in 8", at, loss[0][at],
				 loss[1][at]);
	TH_LOG("loss %.6f -> %.6f in 1 micro-batch, %.6f -> %.6f in 8", loss[0][0],
	       loss[0][STEPS - 1], loss[1][0], loss[1][STEPS - 1]);
	EXPECT_LT(loss[0][STEPS - 1], loss[0][0]);
	EXPECT_NE(0, memcmp(loss[0], loss[1], sizeof(loss[0])));
}

/*
 * Pipelined, the daemon holds the activations the compiler sized: a layer
 * of 4 holds at most its pipeline depth, 2 (4 - k) - 1 micro-batches, at
 * once. 8 micro-batches of 1 sample, 3 workers, 6 steps; the daemon logs
 * (debug) each step's layer that held the most for its depth. Every step
 * holds no more than the depth, and some layer fills it.
 */
TEST_F(exec, pipelined_layers_hold_no_more_than_their_depth)
{
	static const char deep[] = "model deep\ninput 16 u8\ndense 16 12 relu\ndense 12 12 relu\n"
				   "dense 12 12 relu\ndense 12 4 none\nloss softmax_xent\n"
				   "optimizer sgd lr=0.1\nbatch 8\nseed 2\n";
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct engine_rng rng;
	char text[256] = "", line[512];
	int steps = 0, full = 0;
	size_t len;
	void *img;
	FILE *f;

	ASSERT_EQ(0, start(self, "--wafer", "16x16", "--workers", "3", "--log-level", "debug"));
	ASSERT_EQ(0, test_compile_model_micro(deep, "16x16", WSECC_MODE_PIPELINED, 1, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 8);
	for (int s = 0; s < 6; s++) {
		float loss;

		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
	}
	f = fopen(self->log, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "micro-batches; layer");
		unsigned int micro, layer, most, depth;

		if (!at || sscanf(at - 3, "%u micro-batches; layer %u held at most %u at once, its pipeline depth %u",
				  &micro, &layer, &most, &depth) != 4)
			continue;
		steps++;
		EXPECT_EQ(8U, micro);
		EXPECT_EQ(2 * (4 - layer) - 1, depth);
		EXPECT_LE(most, depth) TH_LOG("%s", line);
		full += most == depth;
	}
	fclose(f);
	EXPECT_EQ(6, steps);
	EXPECT_LT(0, full);
	free(img);
}

/*
 * A program whose micro-batches cut its batch into more than the daemon
 * runs in a step is refused at load, saying what to do.
 */
TEST_F(exec, too_many_micro_batches_refused_at_load)
{
	static const char many[] = "model many\ninput 16 u8\ndense 16 4 none\n"
				   "loss softmax_xent\noptimizer sgd lr=0.1\nbatch 64\nseed 1\n";
	struct wse_link_prog_info info;
	char text[256] = "";
	size_t len;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model_micro(many, "16x16", WSECC_MODE_PIPELINED, 1, &img, &len));
	EXPECT_EQ(WSE_LINK_E_INVAL, load(self, PROG, img, len, len, &info, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "larger --micro-batch")) TH_LOG("%s", text);
	free(img);
}

/*
 * The step graph's worker count changes only who runs each engine call:
 * 6 pipelined steps in 4 micro-batches with 1 worker and with 3 give the
 * same weights and losses.
 */
TEST_F(exec, results_do_not_depend_on_the_worker_count)
{
	static const char *const workers[] = { "1", "3" };
	uint32_t total = 16 * 12 + 12 + 12 * 4 + 4;
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	float w[2][16 * 12 + 12 + 12 * 4 + 4], loss[2][6];
	char text[256] = "";
	size_t len;
	void *img;

	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	for (int r = 0; r < 2; r++) {
		struct engine_rng rng;

		ASSERT_EQ(0, start(self, "--wafer", "16x16", "--micro-batches", "4", "--workers",
				   workers[r]));
		ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text)))
			TH_LOG("%s", text);
		engine_rng_seed(&rng, 11);
		for (int s = 0; s < 6; s++)
			ASSERT_EQ(0, train_step(self, &rng, &loss[r][s], &res, text, sizeof(text)))
				TH_LOG("%s", text);
		ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, w[r], total * 4, text,
					 sizeof(text))) TH_LOG("%s", text);
		wse_link_client_free(&self->cl);
		close(self->fd);
		self->fd = -1;
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
		self->pid = 0;
	}
	EXPECT_EQ(0, memcmp(w[0], w[1], sizeof(w[0])));
	EXPECT_EQ(0, memcmp(loss[0], loss[1], sizeof(loss[0])));
	free(img);
}

/* The tiny model's layers, W then b: 16x12 + 12 and 12x4 + 4 floats. */
#define TINY_L0		(16 * 12 + 12)
#define TINY_L1		(12 * 4 + 4)
static const uint32_t tiny_floats[2] = { TINY_L0, TINY_L1 };

/*
 * One weight-streaming training step of @batch samples (a RUN of @leaf
 * and @norm): weights @w[k] for both passes, gradients into @g[k], the
 * per-sample losses into @losses. With @reg the data go through region 1
 * instead of frames: weights from offset 4096, gradients to 16384.
 */
static uint32_t ws_step(FIXTURE_DATA(exec) *self, const uint8_t *px, const int32_t *labels,
			uint32_t batch, uint32_t leaf, uint32_t norm, float *const w[2],
			float *g[2], float *losses, struct wse_link_region *reg, char *text,
			size_t textlen)
{
	struct wse_link_run_info run = { .program = PROG, .kind = WSE_LINK_RUN_TRAIN, .steps = 1,
					 .batch = batch, .leaf = leaf, .norm = norm };
	struct wse_link_run raw_run;
	struct iovec iov = { &raw_run, sizeof(raw_run) };
	struct wse_link_err err;
	int32_t preds[TINY_BATCH];
	uint64_t woff[2] = { 4096, 4096 + TINY_L0 * 4 }, goff[2] = { 16384, 16384 + TINY_L0 * 4 };
	uint32_t tag, st;

	wse_link_run_encode(&raw_run, &run);
	if (wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, &tag, &err))
		return 0xdead;
	st = stream_write(self, Q_IN, S_SAMPLES, px, batch * TINY_IN, text, textlen);
	if (!st)
		st = stream_write(self, Q_IN, S_LABELS, labels, batch * 4, text, textlen);
	for (int i = 0; !st && i < 4; i++) {
		int k = i < 2 ? i : 3 - i;
		struct wse_link_stream_info in = { PROG, (uint32_t)S_WEIGHTS(k, 1), tiny_floats[k] * 4, 0 };
		struct wse_link_region_ref_info ref = { 1, woff[k] };
		struct {
			struct wse_link_stream s;
			struct wse_link_region_ref r;
		} req;

		if (!reg) {
			st = stream_write(self, Q_IN, in.stream, w[k], in.length, text, textlen);
			continue;
		}
		memcpy(reg->base + woff[k], w[k], in.length);
		wse_link_stream_encode(&req.s, &in);
		wse_link_region_ref_encode(&req.r, &ref);
		st = call(self, WSE_LINK_OP_STREAM_WRITE_REGION, Q_IN, &req, sizeof(req), NULL, 0,
			  NULL, NULL, text, textlen);
	}
	for (int k = 1; !st && k >= 0; k--) {
		struct wse_link_stream_info in = { PROG, (uint32_t)S_GRADS(k), tiny_floats[k] * 4, 0 };
		struct wse_link_region_ref_info ref = { 1, goff[k] };
		struct {
			struct wse_link_stream s;
			struct wse_link_region_ref r;
		} req;
		uint8_t reply[16];
		size_t n = 0;
		uint32_t got;

		if (!reg) {
			st = stream_read_all(self, in.stream, g[k], in.length, text, textlen);
			continue;
		}
		wse_link_stream_encode(&req.s, &in);
		wse_link_region_ref_encode(&req.r, &ref);
		st = call(self, WSE_LINK_OP_STREAM_READ_REGION, Q_OUT, &req, sizeof(req), NULL, 0,
			  reply, &n, text, textlen);
		if (!st && (wse_link_region_done_decode(reply, n, &got, &err) || got != in.length))
			st = 0xbad;
		if (!st)
			memcpy(g[k], reg->base + goff[k], in.length);
	}
	if (!st)
		st = stream_read_all(self, S_LOSSES, losses, batch * 4, text, textlen);
	if (!st)
		st = stream_read_all(self, S_PREDS, preds, batch * 4, text, textlen);
	return st ? st : wait_run(self, tag, NULL, text, textlen);
}

/*
 * Data parallelism without a trace in the bits: a batch of 8 in 8 leaves
 * of one sample (the RUN's leaf), split into 1, 2, 4 or 8 shards of
 * aligned leaves, each a RUN averaging over the whole batch (norm 8); the
 * shards' gradients summed in the engine's sum tree (SwarmX's reduction)
 * are the whole batch's, bit for bit, and so are the losses. Each device
 * computes its shard in micro-batches of one leaf, as the whole batch is
 * (sgemm gives a row other bits in a call of another number of rows).
 */
TEST_F(exec, aligned_shards_sum_to_the_whole_batch_bit_for_bit)
{
	struct wse_link_prog_info info;
	float wl[2][TINY_L0], grad[8][2][TINY_L0], whole[2][TINY_L0], losses[8], whole_loss[8];
	uint8_t px[TINY_BATCH * TINY_IN];
	int32_t labels[TINY_BATCH];
	struct engine_rng rng;
	char text[256] = "";
	size_t len;
	void *img;

	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, &img, &len));
	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 5);
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < tiny_floats[k]; i++)
			wl[k][i] = engine_rng_uniform(&rng) - 0.5f;
	make_batch(&rng, px, labels, TINY_BATCH);
	for (uint32_t n = 1; n <= 8; n *= 2) {
		uint32_t share = TINY_BATCH / n;

		for (uint32_t m = 0; m < n; m++) {
			float *const w[2] = { wl[0], wl[1] };
			float *g[2] = { grad[m][0], grad[m][1] };

			ASSERT_EQ(0, ws_step(self, px + m * share * TINY_IN, labels + m * share, share,
					     1, TINY_BATCH, w, g, losses + m * share, NULL, text,
					     sizeof(text))) TH_LOG("%u shards: %s", n, text);
		}
		for (int k = 0; k < 2; k++) {
			float *part[8];

			for (uint32_t m = 0; m < n; m++)
				part[m] = grad[m][k];
			engine_sum_tree(part, n, tiny_floats[k]);
			if (n == 1)
				memcpy(whole[k], grad[0][k], tiny_floats[k] * 4);
			EXPECT_EQ(0, memcmp(whole[k], grad[0][k], tiny_floats[k] * 4))
				TH_LOG("layer %d, %u shards", k, n);
		}
		if (n == 1)
			memcpy(whole_loss, losses, sizeof(losses));
		EXPECT_EQ(0, memcmp(whole_loss, losses, sizeof(losses))) TH_LOG("%u shards", n);
	}
	/* Unaligned micro-batches are refused with the numbers, not cut otherwise. */
	{
		struct wse_link_run_info run = { .program = PROG, .kind = WSE_LINK_RUN_TRAIN,
						 .steps = 1, .batch = 4, .leaf = 5, .norm = 8 };
		struct wse_link_run raw;
		uint32_t tag;
		struct iovec iov = { &raw, sizeof(raw) };
		struct wse_link_err err;

		wse_link_run_encode(&raw, &run);
		ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, &tag,
						    &err));
		EXPECT_EQ(WSE_LINK_E_INVAL, wait_run(self, tag, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "leaf of 5 samples")) TH_LOG("%s", text);
		run.leaf = 0;
		run.norm = 3;
		wse_link_run_encode(&raw, &run);
		ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, &tag,
						    &err));
		EXPECT_EQ(WSE_LINK_E_INVAL, wait_run(self, tag, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "norm 3")) TH_LOG("%s", text);
	}
	free(img);
}

/*
 * A host on the same machine moves a step's weights and gradients through
 * a shared-memory region: the same bits as through frames. A region the
 * device cannot find (another machine's) is refused with E_UNSUPPORTED,
 * a reference outside a region or to one not mapped with E_INVAL, and the
 * link stays.
 */
TEST_F(exec, regions_carry_stream_data)
{
	struct wse_link_region reg, stranger;
	struct wse_link_region_map_info map;
	struct wse_link_region_map raw;
	struct wse_link_prog_info info;
	float wl[2][TINY_L0], g_frames[2][TINY_L0], g_region[2][TINY_L0], losses[2][8];
	uint8_t px[TINY_BATCH * TINY_IN];
	int32_t labels[TINY_BATCH];
	struct engine_rng rng;
	char text[256] = "";
	size_t len;
	void *img;

	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, &img, &len));
	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_REGION);
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, wse_link_region_create(&reg, "test", 32768, text, sizeof(text))) TH_LOG("%s", text);
	wse_link_region_describe(&reg, 1, &map);
	wse_link_region_map_encode(&raw, &map);
	ASSERT_EQ(0, call(self, WSE_LINK_OP_REGION_MAP, Q_CTL, &raw, sizeof(raw), NULL, 0, NULL, NULL,
			  text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 6);
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < tiny_floats[k]; i++)
			wl[k][i] = engine_rng_uniform(&rng) - 0.5f;
	make_batch(&rng, px, labels, TINY_BATCH);
	for (int r = 0; r < 2; r++) {
		float *const w[2] = { wl[0], wl[1] };
		float *g[2] = { r ? g_region[0] : g_frames[0], r ? g_region[1] : g_frames[1] };

		ASSERT_EQ(0, ws_step(self, px, labels, TINY_BATCH, 0, 0, w, g, losses[r],
				     r ? &reg : NULL, text, sizeof(text))) TH_LOG("%s", text);
	}
	EXPECT_EQ(0, memcmp(g_frames[0], g_region[0], TINY_L0 * 4));
	EXPECT_EQ(0, memcmp(g_frames[1], g_region[1], TINY_L1 * 4));
	EXPECT_EQ(0, memcmp(losses[0], losses[1], sizeof(losses[0])));

	/* Another region's name with the wrong nonce: not this machine's. */
	ASSERT_EQ(0, wse_link_region_create(&stranger, "test", 4096, text, sizeof(text)));
	wse_link_region_describe(&stranger, 2, &map);
	map.nonce ^= 1ULL << 40;
	wse_link_region_map_encode(&raw, &map);
	EXPECT_EQ(WSE_LINK_E_UNSUPPORTED, call(self, WSE_LINK_OP_REGION_MAP, Q_CTL, &raw,
					       sizeof(raw), NULL, 0, NULL, NULL, text,
					       sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "not the region announced")) TH_LOG("%s", text);
	snprintf(map.name, sizeof(map.name), "/wse-no-such-region");
	wse_link_region_map_encode(&raw, &map);
	EXPECT_EQ(WSE_LINK_E_UNSUPPORTED, call(self, WSE_LINK_OP_REGION_MAP, Q_CTL, &raw,
					       sizeof(raw), NULL, 0, NULL, NULL, text,
					       sizeof(text)));
	/* References outside region 1, into the header, and to region 3, which is not mapped. */
	{
		static const struct wse_link_region_ref_info refs[] = {
			{ 1, 32768 + 4096 - 16 }, { 1, 0 }, { 3, 4096 },
		};

		for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
			struct wse_link_stream_info in = { PROG, (uint32_t)S_WEIGHTS(1, 1),
							   TINY_L1 * 4, 0 };
			struct {
				struct wse_link_stream s;
				struct wse_link_region_ref r;
			} req;

			wse_link_stream_encode(&req.s, &in);
			wse_link_region_ref_encode(&req.r, &refs[i]);
			EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_STREAM_WRITE_REGION, Q_IN,
							 &req, sizeof(req), NULL, 0, NULL, NULL,
							 text, sizeof(text))) TH_LOG("ref %zu", i);
			EXPECT_NE(NULL, strstr(text, "no such region, or outside it")) TH_LOG("%s", text);
		}
	}
	/* The link is still up. */
	EXPECT_EQ(0, call(self, WSE_LINK_OP_KEEPALIVE, 0, NULL, 0, NULL, 0, NULL, NULL, text,
			  sizeof(text)));
	wse_link_region_destroy(&stranger);
	wse_link_region_destroy(&reg);
	free(img);
}

TEST_F(exec, eval_and_predict)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct engine_rng rng;
	uint8_t px[TINY_BATCH * TINY_IN];
	int32_t labels[TINY_BATCH], p_eval[TINY_BATCH], p_pred[TINY_BATCH];
	float losses[TINY_BATCH], loss;
	char text[256] = "";
	uint32_t tag;
	size_t len;
	void *img;
	int correct = 0;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 7);
	for (int s = 0; s < 150; s++)
		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
	make_batch(&rng, px, labels, TINY_BATCH);
	/* Eval: labels in, losses and predictions out; a short batch of 5. */
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_EVAL, 1, 5, &tag));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, 5 * TINY_IN, text, sizeof(text)));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, 5 * 4, text, sizeof(text)));
	ASSERT_EQ(0, stream_read_all(self, S_LOSSES, losses, 5 * 4, text, sizeof(text)));
	ASSERT_EQ(0, stream_read_all(self, S_PREDS, p_eval, 5 * 4, text, sizeof(text)));
	ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(5U, res.samples);
	/* Predict: samples only, predictions out; the same answers. */
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_PREDICT, 1, 5, &tag));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, 5 * TINY_IN, text, sizeof(text)));
	ASSERT_EQ(0, stream_read_all(self, S_PREDS, p_pred, 5 * 4, text, sizeof(text)));
	ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, memcmp(p_eval, p_pred, 5 * 4));
	for (int i = 0; i < 5; i++) {
		EXPECT_GE(losses[i], 0.0f);
		EXPECT_TRUE(p_pred[i] >= 0 && p_pred[i] < TINY_CLASSES);
		correct += p_pred[i] == labels[i];
	}
	TH_LOG("%d of 5 held-out samples right after 150 steps", correct);
	free(img);
}

TEST_F(exec, malformed_stream_data_refused)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct engine_rng rng;
	uint8_t px[TINY_BATCH * TINY_IN] = { 0 };
	int32_t labels[TINY_BATCH] = { 0 };
	char text[256] = "";
	uint32_t tag;
	size_t len;
	void *img;
	float loss;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	/* Not a whole record. */
	EXPECT_EQ(WSE_LINK_E_INVAL, stream_write(self, Q_IN, S_SAMPLES, px, TINY_IN + 3, text,
						 sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "whole number of 16-byte records")) TH_LOG("%s", text);
	/* A stream the program lacks. */
	EXPECT_EQ(WSE_LINK_E_INVAL, stream_write(self, Q_IN, 42, px, TINY_IN, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "no stream 42")) TH_LOG("%s", text);
	/* The wrong direction, both ways. */
	EXPECT_EQ(WSE_LINK_E_INVAL, stream_write(self, Q_IN, S_LOSSES, px, 4, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "device->host")) TH_LOG("%s", text);
	{
		struct wse_link_stream_info in = { PROG, S_SAMPLES, TINY_IN, 0 };
		struct wse_link_stream raw;

		wse_link_stream_encode(&raw, &in);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_STREAM_READ, Q_OUT, &raw,
						 sizeof(raw), NULL, 0, NULL, NULL, text,
						 sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "host->device")) TH_LOG("%s", text);
	}
	/* More than the stream's buffer holds at once. */
	{
		uint8_t *big = calloc(1, 8 * TINY_BATCH * TINY_IN);

		ASSERT_NE(NULL, big);
		EXPECT_EQ(WSE_LINK_E_INVAL, stream_write(self, Q_IN, S_SAMPLES, big,
							 8 * TINY_BATCH * TINY_IN, text,
							 sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "exceeds its buffer")) TH_LOG("%s", text);
		free(big);
	}
	/* A label outside 0..classes-1 fails the RUN, not the daemon. */
	labels[3] = TINY_CLASSES;
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, TINY_BATCH, &tag));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, sizeof(px), text, sizeof(text)));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, wait_run(self, tag, &res, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "label of sample 3 is 4")) TH_LOG("%s", text);
	labels[3] = -1;
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, TINY_BATCH, &tag));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, sizeof(px), text, sizeof(text)));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, wait_run(self, tag, &res, text, sizeof(text)));
	/* Bad RUN arguments. */
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, TINY_BATCH + 1, &tag));
	EXPECT_EQ(WSE_LINK_E_INVAL, wait_run(self, tag, &res, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "outside 1..8")) TH_LOG("%s", text);
	ASSERT_EQ(0, submit_run(self, 9, 1, TINY_BATCH, &tag));
	EXPECT_EQ(WSE_LINK_E_INVAL, wait_run(self, tag, &res, text, sizeof(text)));
	/* Still training. */
	engine_rng_seed(&rng, 1);
	EXPECT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
	free(img);
}

TEST_F(exec, backpressure_holds_a_write_until_a_run_consumes)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct wse_link_stream_info in = { PROG, S_SAMPLES, sizeof(uint8_t) * TINY_BATCH * TINY_IN, 0 };
	struct wse_link_stream raw;
	struct wse_link_err err;
	uint8_t px[TINY_BATCH * TINY_IN] = { 0 };
	int32_t labels[TINY_BATCH] = { 0 };
	float losses[TINY_BATCH];
	int32_t preds[TINY_BATCH];
	struct iovec iov[2] = { { &raw, sizeof(raw) }, { px, sizeof(px) } };
	char text[256] = "";
	uint32_t tag, wtag, status;
	size_t len, rest;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	/* The samples buffer holds four batches. */
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, sizeof(px), text, sizeof(text)));
	wse_link_stream_encode(&raw, &in);
	ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_STREAM_WRITE, Q_IN, iov, 2,
					    &wtag, &err));
	EXPECT_EQ(-ETIMEDOUT, wse_link_client_wait(&self->cl, wtag, 300, &status, &rest, &err));
	/* A step takes one batch out: the held write completes. */
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, TINY_BATCH, &tag));
	ASSERT_EQ(0, stream_write(self, Q_OUT, S_LABELS, labels, sizeof(labels), text,
				  sizeof(text)));
	ASSERT_EQ(0, stream_read_all(self, S_LOSSES, losses, sizeof(losses), text, sizeof(text)));
	ASSERT_EQ(0, stream_read_all(self, S_PREDS, preds, sizeof(preds), text, sizeof(text)));
	ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, wse_link_client_wait(&self->cl, wtag, IO_MS, &status, &rest, &err))
		TH_LOG("%s", err.text);
	EXPECT_EQ(0U, status);
	free(img);
}

TEST_F(exec, read_waits_on_one_queue_while_another_writes)
{
	struct wse_link_prog_info info;
	struct wse_link_stream_info in = { PROG, S_LOSSES, TINY_BATCH * 4, 0 };
	struct wse_link_stream raw;
	struct iovec iov = { &raw, sizeof(raw) };
	struct wse_link_err err;
	uint8_t px[TINY_BATCH * TINY_IN] = { 0 };
	int32_t labels[TINY_BATCH] = { 0 };
	char text[256] = "";
	uint32_t rtag, tag, status;
	size_t len, rest;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	/* Asking for more than the buffer holds is allowed: a read gets what is there. */
	in.length = 64 * TINY_BATCH * 4;
	wse_link_stream_encode(&raw, &in);
	ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_STREAM_READ, Q_OUT, &iov, 1,
					    &rtag, &err));
	/* Writes on another queue are answered while the read waits. */
	EXPECT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, sizeof(px), text, sizeof(text)));
	EXPECT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text, sizeof(text)));
	EXPECT_EQ(-ETIMEDOUT, wse_link_client_wait(&self->cl, rtag, 200, &status, &rest, &err));
	/* A step produces losses: the read is answered with them. */
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, TINY_BATCH, &tag));
	ASSERT_EQ(0, wse_link_client_wait(&self->cl, rtag, IO_MS, &status, &rest, &err))
		TH_LOG("%s", err.text);
	EXPECT_EQ(0U, status);
	EXPECT_EQ(TINY_BATCH * 4U, rest);
	{
		int32_t preds[TINY_BATCH];

		ASSERT_EQ(0, stream_read_all(self, S_PREDS, preds, sizeof(preds), text,
					     sizeof(text)));
	}
	ASSERT_EQ(0, wait_run(self, tag, NULL, text, sizeof(text))) TH_LOG("%s", text);
	free(img);
}

TEST_F(exec, checkpoint_restore_continues_identically_and_runs_are_deterministic)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct engine_rng rng, saved_rng;
	float a[4], b[4], c[4], loss;
	char text[256] = "";
	uint8_t *wts, *state, *w2;
	uint32_t wbytes = (16 * 12 + 12 + 12 * 4 + 4) * 4, sbytes = 2 * wbytes + 8;
	size_t len;
	void *img;

	wts = malloc(wbytes);
	w2 = malloc(wbytes);
	state = malloc(sbytes);
	ASSERT_TRUE(wts && w2 && state);
	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 21);
	for (int s = 0; s < 3; s++)
		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text)));
	/* Checkpoint: weights and Adam's moments and step count. */
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, wts, wbytes, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_OPT_STATE, 0, state, sbytes, text,
				 sizeof(text))) TH_LOG("%s", text);
	{
		uint64_t t;

		memcpy(&t, state + 2 * wbytes, 8);
		EXPECT_EQ(3U, t);
	}
	saved_rng = rng;
	for (int s = 0; s < 4; s++)
		ASSERT_EQ(0, train_step(self, &rng, &a[s], &res, text, sizeof(text)));
	/* Restore and continue: the same losses, bit for bit. */
	ASSERT_EQ(0, params_write(self, WSE_LINK_PARAMS_WEIGHTS, 0, wts, wbytes, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, params_write(self, WSE_LINK_PARAMS_OPT_STATE, 0, state, sbytes, text,
				  sizeof(text))) TH_LOG("%s", text);
	rng = saved_rng;
	for (int s = 0; s < 4; s++)
		ASSERT_EQ(0, train_step(self, &rng, &b[s], &res, text, sizeof(text)));
	EXPECT_EQ(0, memcmp(a, b, sizeof(a)));
	/* A fresh load of the same image with the same data: the same run again. */
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 21);
	for (int s = 0; s < 3; s++)
		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text)));
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, w2, wbytes, text, sizeof(text)));
	EXPECT_EQ(0, memcmp(wts, w2, wbytes));
	for (int s = 0; s < 4; s++)
		ASSERT_EQ(0, train_step(self, &rng, &c[s], &res, text, sizeof(text)));
	EXPECT_EQ(0, memcmp(a, c, sizeof(a)));
	/* Refusals: out of range, misaligned, not finite. */
	EXPECT_EQ(WSE_LINK_E_INVAL, params_read(self, WSE_LINK_PARAMS_WEIGHTS, wbytes, wts, 4, text,
						sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "inside the")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 2, wts, 4, text,
						sizeof(text)));
	{
		float nan = NAN;

		EXPECT_EQ(WSE_LINK_E_INVAL, params_write(self, WSE_LINK_PARAMS_WEIGHTS, 0, &nan, 4,
							 text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "not finite")) TH_LOG("%s", text);
	}
	free(wts);
	free(w2);
	free(state);
	free(img);
}

/* @n batches into a RUN of @n steps already submitted, and their results out. */
static uint32_t feed_steps(FIXTURE_DATA(exec) *self, struct engine_rng *rng, uint32_t n,
			   char *text, size_t textlen)
{
	uint8_t px[TINY_BATCH * TINY_IN];
	int32_t labels[TINY_BATCH], preds[TINY_BATCH];
	float losses[TINY_BATCH];
	uint32_t st = 0;

	for (uint32_t i = 0; i < n && !st; i++) {
		make_batch(rng, px, labels, TINY_BATCH);
		st = stream_write(self, Q_IN, S_SAMPLES, px, sizeof(px), text, textlen);
		if (!st)
			st = stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text, textlen);
		if (!st)
			st = stream_read_all(self, S_LOSSES, losses, sizeof(losses), text, textlen);
		if (!st)
			st = stream_read_all(self, S_PREDS, preds, sizeof(preds), text, textlen);
	}
	return st;
}

/*
 * Snapshots: asked for at a step, taken at the end of that step inside a
 * longer RUN, read while another RUN waits for its input; the very
 * parameters a run stopped at that step holds, with the CRC32C of them.
 * Refused: before any is taken, at a step gone by, of a weight-streaming
 * program, with a wrong length.
 */
TEST_F(exec, snapshot_at_a_step_read_while_training_goes_on)
{
	uint32_t wbytes = (16 * 12 + 12 + 12 * 4 + 4) * 4, size = 3 * wbytes + 16;
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	uint8_t *snap, *live;
	struct engine_rng rng;
	char text[256] = "";
	uint64_t step;
	uint32_t tag, crc;
	float loss;
	size_t len;
	void *img;

	snap = malloc(size);
	live = malloc(size);
	ASSERT_TRUE(snap && live);
	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 5);
	for (int s = 0; s < 3; s++)
		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text)));

	EXPECT_EQ(WSE_LINK_E_INVAL, params_read(self, WSE_LINK_PARAMS_SNAPSHOT, 0, snap, 16, text,
						sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "no snapshot")) TH_LOG("%s", text);
	step = 2;
	EXPECT_EQ(WSE_LINK_E_INVAL, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 8, text,
						 sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "at step 3 already")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 4, text,
						 sizeof(text)));

	/* At step 5, in the middle of a RUN of steps 4 to 7. */
	step = 5;
	ASSERT_EQ(0, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 8, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 4, TINY_BATCH, &tag));
	ASSERT_EQ(0, feed_steps(self, &rng, 4, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_SNAPSHOT, 0, snap, size, text, sizeof(text)))
		TH_LOG("%s", text);
	memcpy(&step, snap + 3 * wbytes, 8);
	memcpy(&crc, snap + 3 * wbytes + 8, 4);
	EXPECT_EQ(5U, step);
	EXPECT_EQ(wse_crc32c(0, snap, 3 * wbytes), crc);
	EXPECT_EQ(WSE_LINK_E_INVAL, params_read(self, WSE_LINK_PARAMS_SNAPSHOT, size, snap, 4, text,
						sizeof(text)));

	/* The same five steps again, one RUN each: what the snapshot holds. */
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 5);
	for (int s = 0; s < 5; s++)
		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text)));
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, live, wbytes, text,
				 sizeof(text)));
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_OPT_STATE, 0, live + wbytes, 2 * wbytes + 8,
				 text, sizeof(text)));
	EXPECT_EQ(0, memcmp(live, snap, 3 * wbytes + 8));

	/* At the step the idle program is at: at once; then read while a RUN runs. */
	step = 5;
	ASSERT_EQ(0, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 8, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 2, TINY_BATCH, &tag));
	usleep(20000);	/* the RUN waits for its first batch */
	memset(snap, 0, size);
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_SNAPSHOT, 0, snap, size, text, sizeof(text)))
		TH_LOG("%s", text);
	EXPECT_EQ(0, memcmp(live, snap, 3 * wbytes + 8));
	step = 5;
	EXPECT_EQ(WSE_LINK_E_INVAL, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 8, text,
						 sizeof(text)));
	ASSERT_EQ(0, feed_steps(self, &rng, 2, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
	/* No storage shared with a host here: nowhere to save it. */
	{
		struct wse_link_snapshot_store req = { .step = htole64(5), .offset = 0,
						       .name = "ck" };

		EXPECT_EQ(WSE_LINK_E_INVAL, params_write(self, WSE_LINK_PARAMS_SNAPSHOT_STORE, 0,
							 &req, sizeof(req), text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "--store")) TH_LOG("%s", text);
	}
	free(img);

	/* Weight streaming keeps no weights to snapshot. */
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_WEIGHT_STREAMING, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	step = 1;
	EXPECT_EQ(WSE_LINK_E_INVAL, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 8, text,
						 sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "weight streaming")) TH_LOG("%s", text);
	free(img);
	free(snap);
	free(live);
}

/* A snapshot saved by the device into a file of the storage it shares with the host. */
static uint32_t store_at(FIXTURE_DATA(exec) *self, uint64_t step, uint64_t off, const char *name,
			 char *text, size_t textlen)
{
	struct wse_link_snapshot_store req = { .step = htole64(step), .offset = htole64(off) };

	snprintf(req.name, sizeof(req.name), "%s", name);
	return params_write(self, WSE_LINK_PARAMS_SNAPSHOT_STORE, 0, &req, sizeof(req), text,
			    textlen);
}

/*
 * WSE_LINK_PARAMS_SNAPSHOT_STORE: the device writes the snapshot into a
 * file the host made in the shared storage, at the offset asked, and
 * nowhere else: not a file that is not there, not out of the storage by
 * "..", an absolute name or a symbolic link, not through a symbolic link
 * at all (one user's link to another's file beneath the storage), not
 * another step's snapshot, not without --store.
 */
TEST_F(exec, snapshot_saved_into_shared_storage_and_nowhere_else)
{
	uint32_t wbytes = (16 * 12 + 12 + 12 * 4 + 4) * 4, body = 3 * wbytes;
	char store[160], path[256], text[256] = "";
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	struct engine_rng rng;
	uint8_t *snap, *file;
	uint64_t step = 2;
	struct stat st;
	float loss;
	size_t len;
	void *img;
	FILE *f;

	snap = malloc(body);
	file = malloc(160 + body);
	ASSERT_TRUE(snap && file);
	snprintf(store, sizeof(store), "%s/store", self->dir);
	ASSERT_EQ(0, mkdir(store, 0755));
	snprintf(path, sizeof(path), "%s/run", store);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/run/ck.tmp", store);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fclose(f);
	/* A file out of the storage, and a link to where it is. */
	snprintf(path, sizeof(path), "%s/outside", self->dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/run/out", store);
	ASSERT_EQ(0, symlink(self->dir, path));
	/*
	 * Another user's file in the same storage, and links to it from this
	 * one's part that stay beneath the storage: no link is followed.
	 */
	snprintf(path, sizeof(path), "%s/other", store);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/other/ck", store);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/run/peek", store);
	ASSERT_EQ(0, symlink("../other/ck", path));
	snprintf(path, sizeof(path), "%s/run/dir", store);
	ASSERT_EQ(0, symlink("../other", path));

	ASSERT_EQ(0, start(self, "--wafer", "16x16", "--store", store));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	engine_rng_seed(&rng, 8);
	for (int s = 0; s < 2; s++)
		ASSERT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text)));
	ASSERT_EQ(0, params_write(self, WSE_LINK_PARAMS_SNAPSHOT, 0, &step, 8, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_SNAPSHOT, 0, snap, body, text, sizeof(text)));

	ASSERT_EQ(0, store_at(self, 2, 160, "run/ck.tmp", text, sizeof(text))) TH_LOG("%s", text);
	snprintf(path, sizeof(path), "%s/run/ck.tmp", store);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(160 + body, (uint32_t)st.st_size);
	f = fopen(path, "rb");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(160 + body, fread(file, 1, 160 + body, f));
	fclose(f);
	EXPECT_EQ(0, memcmp(file + 160, snap, body));

	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "run/none", text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "makes the file first")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "../x", text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "/etc/hostname", text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "run/out/outside", text, sizeof(text)));
	snprintf(path, sizeof(path), "%s/outside", self->dir);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0, st.st_size) TH_LOG("the device wrote out of its storage");
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "run/peek", text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "symbolic link")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "run/dir/ck", text, sizeof(text)));
	snprintf(path, sizeof(path), "%s/other/ck", store);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0, st.st_size) TH_LOG("the device followed a link to another user's file");
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 2, 0, "run", text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, store_at(self, 3, 0, "run/ck.tmp", text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "not 3")) TH_LOG("%s", text);
	free(img);
	free(snap);
	free(file);
}

/* After a close: connects and says HELLO again, up to @tries times 50 ms apart. */
static void reconnect(FIXTURE_DATA(exec) *self, int tries)
{
	static const struct wse_link_hello_info hello = {
		.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_EXEC,
		.max_payload = 1 << 20,
	};
	struct wse_link_addr addr;
	struct wse_link_err err;
	char text[256];
	uint32_t status;

	if (wse_link_addr_parse(self->spec, &addr, text, sizeof(text)))
		return;
	for (int t = 0; t < tries && self->fd < 0; t++) {
		int fd = wse_link_connect(&addr, IO_MS, text, sizeof(text));

		if (fd >= 0 && !wse_link_client_hello(&self->cl, fd, &hello, IO_MS, &status, text,
						      sizeof(text), &err) && !status) {
			self->fd = fd;
			break;
		}
		if (fd >= 0) {
			wse_link_client_free(&self->cl);
			close(fd);
		}
		usleep(50000);
	}
}

/*
 * The device reads at most 256 requests ahead of their execution: 300
 * writes into a full stream leave a later DEVICE_STATS unread (and so
 * unanswered). Closing the link releases everything, and the next host is
 * served.
 */
TEST_F(exec, read_ahead_is_bounded_and_released_at_close)
{
	struct wse_link_prog_info info;
	struct wse_link_stream_info in = { PROG, S_SAMPLES, TINY_IN, 0 };
	struct wse_link_stream raw;
	struct wse_link_err err;
	uint8_t frame[sizeof(raw) + TINY_IN] = { 0 };
	char text[256] = "";
	uint32_t tag, status;
	size_t len, rest;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	wse_link_stream_encode(&raw, &in);
	memcpy(frame, &raw, sizeof(raw));
	/* 32 records fit the buffer; the rest wait on queue 1, unanswered. */
	for (uint32_t i = 0; i < 300; i++) {
		struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_STREAM_WRITE,
					    .queue = Q_IN, .tag = 5000 + i };
		struct iovec iov = { frame, sizeof(frame) };

		ASSERT_EQ(0, wse_link_send(self->fd, &f, &iov, 1, IO_MS, &err)) TH_LOG("%s", err.text);
	}
	ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_DEVICE_STATS, Q_CTL, NULL, 0,
					    &tag, &err));
	/* Answers to the 32 writes that fit come first; they answer no pending tag. */
	EXPECT_NE(0, wse_link_client_wait(&self->cl, tag, 1000, &status, &rest, &err));
	wse_link_client_free(&self->cl);
	close(self->fd);
	self->fd = -1;
	/* The daemon lets go of the blocked workers and serves again. */
	reconnect(self, 100);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	{
		struct engine_rng rng;
		struct wse_link_run_result_info res;
		float loss;

		engine_rng_seed(&rng, 3);
		EXPECT_EQ(0, train_step(self, &rng, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
	}
	free(img);
}

/*
 * Four big layers: a step takes long enough (~0.1 s here) to stop it in
 * the middle, several of the stages' 20 ms polls of the link.
 */
static const char big_model[] =
	"model big\n"
	"input 1024 u8\n"
	"dense 1024 2048 relu\n"
	"dense 2048 2048 relu\n"
	"dense 2048 2048 relu\n"
	"dense 2048 10 none\n"
	"loss softmax_xent\n"
	"optimizer adam lr=1e-3\n"
	"batch 256\n"
	"seed 5\n";
#define BIG_IN		1024
#define BIG_BATCH	256

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Does the daemon's log hold @what? */
static bool log_has(FIXTURE_DATA(exec) *self, const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(self->log, "r");

	for (int n = 0; f && !found && n < 100000 && fgets(line, sizeof(line), f); n++)
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * The link goes while a RUN's step is in all four stages: the stages drop
 * their micro-batches, the RUN ends, the program and its stage threads go,
 * and the daemon serves the next host at once. Then SIGTERM with a
 * pipelined program loaded: a clean exit (the sanitizer build would fail
 * it on a leak).
 */
TEST_F(exec, link_stop_ends_busy_stages_promptly)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	uint8_t *px = malloc((size_t)BIG_BATCH * BIG_IN);
	int32_t labels[BIG_BATCH], out[BIG_BATCH];
	char text[256] = "";
	double t0, step_s = 0, stop_s;
	uint32_t tag;
	size_t len;
	int status = -1;
	void *img;

	ASSERT_NE(NULL, px);
	for (size_t i = 0; i < (size_t)BIG_BATCH * BIG_IN; i++)
		px[i] = (uint8_t)(i * 2654435761u >> 24);
	for (int i = 0; i < BIG_BATCH; i++)
		labels[i] = i % 10;
	ASSERT_EQ(0, start(self, "--wafer", "128x128", "--micro-batches", "4", "--log-level",
			   "debug"));
	ASSERT_EQ(0, test_compile_model(big_model, "128x128", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, 512 << 10, &info, text, sizeof(text)))
		TH_LOG("%s", text);
	/* Two whole steps, to know how long a warm one takes here (the first
	 * pays for first touches); their outputs are read, so the output
	 * buffers (four batches) have room for every step below.
	 */
	for (int warm = 0; warm < 2; warm++) {
		t0 = now_s();
		ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, BIG_BATCH, &tag));
		ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, BIG_BATCH * BIG_IN, text,
					  sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text,
					  sizeof(text)));
		ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
		step_s = now_s() - t0;
		ASSERT_EQ(0, stream_read_all(self, S_LOSSES, out, sizeof(out), text, sizeof(text)));
		ASSERT_EQ(0, stream_read_all(self, S_PREDS, out, sizeof(out), text, sizeof(text)));
	}
	/* Three batches queued for a long RUN, steps back to back; the link goes
	 * half a step in.
	 */
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1000, BIG_BATCH, &tag));
	for (int b = 0; b < 3; b++) {
		ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, BIG_BATCH * BIG_IN, text,
					  sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text,
					  sizeof(text)));
	}
	usleep((useconds_t)(0.5 * step_s * 1e6));
	t0 = now_s();
	wse_link_client_free(&self->cl);
	close(self->fd);
	self->fd = -1;
	reconnect(self, 100);
	stop_s = now_s() - t0;
	ASSERT_GE(self->fd, 0);
	TH_LOG("a step takes %.3f s; the next host was served %.3f s after the close", step_s,
	       stop_s);
	/* Within a micro-batch's layer call, not after the rest of the step. */
	EXPECT_LT(stop_s, 0.5 * step_s + 1.0);
	EXPECT_TRUE(log_has(self, "micro-batches through: the link is going"));
	/* The daemon works: a program loads and trains again. */
	ASSERT_EQ(0, load(self, PROG, img, len, 512 << 10, &info, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, submit_run(self, WSE_LINK_RUN_TRAIN, 1, BIG_BATCH, &tag));
	ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, BIG_BATCH * BIG_IN, text,
				  sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text, sizeof(text)));
	ASSERT_EQ(0, wait_run(self, tag, &res, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(1U, res.steps);
	/* SIGTERM with the program and its stages still there: exit 0, in time. */
	kill(self->pid, SIGTERM);
	for (int i = 0; i < 500 && status < 0; i++) {
		int ws;

		if (waitpid(self->pid, &ws, WNOHANG) == self->pid)
			status = ws;
		else
			usleep(20000);
	}
	ASSERT_GE(status, 0) TH_LOG("wsefwd did not exit within 10 s of SIGTERM");
	self->pid = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status 0x%x", status);
	free(px);
	free(img);
}

/*
 * One stage's engine call fails (--fault-stage-error) on the last
 * micro-batch while the others are still in the pipeline: the RUN fails
 * with the stage's text, nothing hangs, and the daemon goes on serving.
 */
TEST_F(exec, a_failing_stage_fails_the_run_and_nothing_hangs)
{
	struct wse_link_run_result_info res;
	struct wse_link_prog_info info;
	uint8_t px[TINY_BATCH * TINY_IN] = { 0 }, w[4];
	int32_t labels[TINY_BATCH] = { 0 };
	char text[256] = "";
	uint32_t tag;
	size_t len;
	void *img;

	ASSERT_EQ(0, start(self, "--wafer", "16x16", "--fault-stage-error", "1"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	for (uint32_t kind = WSE_LINK_RUN_TRAIN; kind <= WSE_LINK_RUN_PREDICT; kind++) {
		ASSERT_EQ(0, submit_run(self, kind, 3, TINY_BATCH, &tag));
		ASSERT_EQ(0, stream_write(self, Q_IN, S_SAMPLES, px, sizeof(px), text,
					  sizeof(text))) TH_LOG("%s", text);
		if (kind != WSE_LINK_RUN_PREDICT)
			ASSERT_EQ(0, stream_write(self, Q_IN, S_LABELS, labels, sizeof(labels), text,
						  sizeof(text)));
		EXPECT_EQ(WSE_LINK_E_INTERNAL, wait_run(self, tag, &res, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "step 1: the forward pass failed: ")) TH_LOG("%s", text);
		EXPECT_NE(NULL, strstr(text, "(0 of 3 steps completed)")) TH_LOG("%s", text);
	}
	/* No layer took the failed step: Adam's step count is still 0. */
	{
		uint32_t wbytes = (16 * 12 + 12 + 12 * 4 + 4) * 4;
		uint8_t state[8];
		uint64_t t;

		ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_OPT_STATE, 2 * wbytes, state, 8, text,
					 sizeof(text))) TH_LOG("%s", text);
		memcpy(&t, state, 8);
		EXPECT_EQ(0U, t);
	}
	ASSERT_EQ(0, params_read(self, WSE_LINK_PARAMS_WEIGHTS, 0, w, 4, text, sizeof(text)))
		TH_LOG("%s", text);
	free(img);
}

/* Reads what the device sent so far; true once it sent ERROR or closed. */
static bool link_closed(FIXTURE_DATA(exec) *self)
{
	for (int i = 0; i < 64; i++) {
		struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
		struct wse_link_frame f;
		struct wse_link_err err;

		if (poll(&pfd, 1, 20) <= 0)
			return false;
		if (wse_link_recv(self->fd, &self->cl.rules, &f, self->cl.buf, self->cl.cap, 2000,
				  &err))
			return true;
		if (f.opcode == WSE_LINK_OP_ERROR)
			return true;
	}
	return false;
}

/*
 * Seeded hostile requests: every execution opcode with random payloads,
 * queues and lengths, partly well-formed, sent without waiting. Whatever
 * the daemon answers (or closes), it must survive and serve the next host.
 */
TEST_F(exec, fuzzed_exec_requests_do_not_hurt_the_daemon)
{
	struct wse_link_prog_info info;
	uint64_t rng = 12345;
	char text[256] = "";
	size_t len;
	void *img;
	int links = 1;

	ASSERT_EQ(0, start(self, "--wafer", "16x16", "--max-program", "1M"));
	ASSERT_EQ(0, test_compile_model(tiny_model, "16x16", WSECC_MODE_PIPELINED, &img, &len));
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	for (int i = 0; i < 400; i++) {
		uint8_t payload[96];
		struct wse_link_frame f = {
			.version = 1,
			.opcode = (uint8_t)(WSE_LINK_OP_PROGRAM_LOAD + wse_splitmix64(&rng) % 8),
			.queue = (uint16_t)(wse_splitmix64(&rng) % 5),
			.tag = 1000 + (uint32_t)i,
		};
		struct iovec iov = { payload, wse_splitmix64(&rng) % sizeof(payload) };
		struct wse_link_err err;

		for (size_t b = 0; b < sizeof(payload); b++)
			payload[b] = (uint8_t)wse_splitmix64(&rng);
		/* Half of them are well-formed: the opcode's fixed part with
		 * reserved words zero, lengths that match, random arguments.
		 */
		if (i % 2) {
			static const uint8_t fixed[8] = { 24, 8, 16, 16, 24, 24, 24, 0 };
			uint32_t data = (uint32_t)(wse_splitmix64(&rng) % 48);
			uint8_t op = f.opcode - WSE_LINK_OP_PROGRAM_LOAD;

			memset(payload, 0, 24);
			payload[0] = (uint8_t)(wse_splitmix64(&rng) % 3);	/* slot 0..2 */
			payload[4] = (uint8_t)(wse_splitmix64(&rng) % 4);
			payload[8] = (uint8_t)(wse_splitmix64(&rng) % 64);
			payload[12] = (uint8_t)(wse_splitmix64(&rng) % 16);
			iov.iov_len = fixed[op];
			if (f.opcode == WSE_LINK_OP_PROGRAM_LOAD) {
				payload[4] &= 1;
				iov.iov_len += data;
			} else if (f.opcode == WSE_LINK_OP_PROGRAM_UNLOAD) {
				payload[4] = 0;
			} else if (f.opcode == WSE_LINK_OP_STREAM_READ) {
				payload[12] = 0;
			} else if (f.opcode == WSE_LINK_OP_STREAM_WRITE) {
				payload[8] = (uint8_t)data;
				payload[12] = 0;
				iov.iov_len += data;
			} else if (f.opcode == WSE_LINK_OP_PARAMS_WRITE) {
				payload[16] = (uint8_t)data;
				iov.iov_len += data;
			}
		}
		if (wse_link_send(self->fd, &f, &iov, iov.iov_len ? 1 : 0, 2000, &err) ||
		    link_closed(self)) {
			/* The device closed the link on a protocol violation: next host. */
			wse_link_client_free(&self->cl);
			close(self->fd);
			self->fd = -1;
			{
				struct wse_link_addr addr;
				static const struct wse_link_hello_info hello = {
					.version_min = 1, .version_max = 1,
					.caps = WSE_LINK_CAP_EXEC, .max_payload = 1 << 20,
				};
				uint32_t status;
				int fd = -1;

				ASSERT_EQ(0, wse_link_addr_parse(self->spec, &addr, text, sizeof(text)));
				for (int t = 0; t < 100 && fd < 0; t++) {
					fd = wse_link_connect(&addr, IO_MS, text, sizeof(text));
					if (fd < 0)
						usleep(20000);
				}
				ASSERT_GE(fd, 0);
				if (wse_link_client_hello(&self->cl, fd, &hello, IO_MS, &status, text,
							  sizeof(text), &err) || status) {
					/* Still busy with the old link: retry later. */
					close(fd);
					usleep(50000);
					i--;
					continue;
				}
				self->fd = fd;
			}
			links++;
			ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text)))
				TH_LOG("%s", text);
		}
	}
	TH_LOG("400 hostile requests over %d links", links);
	/* A fresh host is served normally. */
	wse_link_client_free(&self->cl);
	close(self->fd);
	self->fd = -1;
	{
		struct wse_link_addr addr;
		struct wse_link_err err;
		static const struct wse_link_hello_info hello = {
			.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_EXEC,
			.max_payload = 1 << 20,
		};
		uint32_t status = 1;
		int fd = -1;

		ASSERT_EQ(0, wse_link_addr_parse(self->spec, &addr, text, sizeof(text)));
		for (int t = 0; t < 100 && status; t++) {
			fd = wse_link_connect(&addr, IO_MS, text, sizeof(text));
			if (fd >= 0 && !wse_link_client_hello(&self->cl, fd, &hello, IO_MS, &status,
							      text, sizeof(text), &err) && !status)
				break;
			if (fd >= 0) {
				wse_link_client_free(&self->cl);
				close(fd);
			}
			status = 1;
			usleep(50000);
		}
		ASSERT_EQ(0U, status);
		self->fd = fd;
	}
	ASSERT_EQ(0, load(self, PROG, img, len, len, &info, text, sizeof(text))) TH_LOG("%s", text);
	{
		struct engine_rng rng2;
		struct wse_link_run_result_info res;
		float loss;

		engine_rng_seed(&rng2, 3);
		EXPECT_EQ(0, train_step(self, &rng2, &loss, &res, text, sizeof(text))) TH_LOG("%s", text);
	}
	free(img);
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
