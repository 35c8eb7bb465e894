// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of wse-appliance: the real launcher, coordinator, MemoryX,
 * SwarmX, input worker and wsefwd systems, driven over the link with
 * libwselink's client as the kernel driver drives it, on programs from the
 * real compiler library. Weight streaming gives the same losses and
 * weights bit for bit on 1, 2, 4 and 8 systems, through regions or frames,
 * from the host's samples or the input workers', slowed or not; a
 * pipelined program runs on one system; a part killed mid-run fails the
 * job naming it, the appliance restarts it and serves again; a resumed run
 * ends with the weights and optimizer state of an uninterrupted one; bad
 * requests are refused with texts.
 *
 * The binary is build/bin/wse-appliance (build/san-bin/ for the sanitizer
 * build of this test), relative to the repository root.
 */
#include <endian.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fwd_daemon.h"
#include "kselftest_harness.h"
#include "test_model.h"
#include "wse/compiler.h"
#include "wse/dataset.h"
#include "wse/engine.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/link_io.h"

#define IO_MS		30000
#define SLOT		1
#define Q_RUN		0
#define Q_IN		1
#define Q_OUT		2
#define Q_CTL		3

/* A small MLP: 64 u8 inputs, 10 classes, batch 64 (8 leaves of 8). */
static const char small_model[] =
	"model small\n"
	"input 64 u8\n"
	"dense 64 32 relu\n"
	"dense 32 10 none\n"
	"loss softmax_xent\n"
	"optimizer adam lr=1e-2\n"
	"batch 64\n"
	"seed 3\n";
#define IN		64
#define CLASSES		10
#define BATCH		64
#define FLOATS		(64 * 32 + 32 + 32 * 10 + 10)
/* Stream ids as the compiler emits them. */
#define S_SAMPLES	0
#define S_LABELS	1
#define S_LOSSES	2
#define S_PREDS		3

static const char *self_path;


/* @text compiled for the appliance's 64x64 systems. */
static int compile(const char *text, enum wsecc_mode mode, void **buf, size_t *len)
{
	return test_compile_model(text, "64x64", mode, buf, len);
}

FIXTURE(appl) {
	char dir[64];
	char sock[128];
	pid_t pid;
	struct wse_link_client cl;
	int fd;
	void *ws, *pipe;
	size_t ws_len, pipe_len;
};

FIXTURE_SETUP(appl)
{
	strcpy(self->dir, "/tmp/appliance_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->sock, sizeof(self->sock), "%s/co.sock", self->dir);
	self->pid = 0;
	self->fd = -1;
	ASSERT_EQ(0, compile(small_model, WSECC_MODE_WEIGHT_STREAMING, &self->ws, &self->ws_len));
	ASSERT_EQ(0, compile(small_model, WSECC_MODE_PIPELINED, &self->pipe, &self->pipe_len));
}

static void disconnect(FIXTURE_DATA(appl) *self)
{
	if (self->fd >= 0) {
		wse_link_client_free(&self->cl);
		close(self->fd);
	}
	self->fd = -1;
}

static void stop(FIXTURE_DATA(appl) *self)
{
	disconnect(self);
	if (self->pid > 0) {
		kill(self->pid, SIGTERM);
		for (int i = 0; i < 500 && waitpid(self->pid, NULL, WNOHANG) != self->pid; i++)
			usleep(10000);
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	self->pid = 0;
}

FIXTURE_TEARDOWN(appl)
{
	char line[512], cmd[160], log[128];
	FILE *f;
	int n = 0;

	stop(self);
	snprintf(log, sizeof(log), "%s/appliance.log", self->dir);
	f = __test_passed(_metadata) ? NULL : fopen(log, "r");
	while (f && n++ < 300 && fgets(line, sizeof(line), f))
		fprintf(stderr, "#   %s", line);
	if (f)
		fclose(f);
	free(self->ws);
	free(self->pipe);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd)) {
		/* A leftover temp dir is not worth failing a test for. */
	}
}

/* Connects to the coordinator (retrying while it comes up) and shakes hands. */
static int connect_appliance(FIXTURE_DATA(appl) *self, uint32_t caps)
{
	struct wse_link_hello_info hello = {
		.version_min = 1, .version_max = 1, .caps = caps, .max_payload = 4 << 20,
	};
	struct wse_link_addr addr;
	struct wse_link_err err;
	char text[256], spec[160];
	uint32_t status;
	int fd = -1;

	snprintf(spec, sizeof(spec), "unix:%s", self->sock);
	if (wse_link_addr_parse(spec, &addr, text, sizeof(text)))
		return -1;
	for (int i = 0; i < 1000 && fd < 0; i++) {
		fd = wse_link_connect(&addr, IO_MS, text, sizeof(text));
		if (fd >= 0 && (wse_link_client_hello(&self->cl, fd, &hello, IO_MS, &status, text,
						      sizeof(text), &err) || status)) {
			wse_link_client_free(&self->cl);
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(20000);
	}
	self->fd = fd;
	return fd < 0 ? -1 : 0;
}

/* Starts an appliance of @systems with the NULL-terminated extra arguments and connects. */
static int start_argv(FIXTURE_DATA(appl) *self, unsigned int systems, const char *const *extra)
{
	char n[16], listen[160], run[128], log[128];
	const char *argv[40];
	int argc = 0;

	snprintf(n, sizeof(n), "%u", systems);
	snprintf(listen, sizeof(listen), "unix:%s", self->sock);
	snprintf(run, sizeof(run), "%s/run", self->dir);
	snprintf(log, sizeof(log), "%s/appliance.log", self->dir);
	argv[argc++] = appliance_binary(self_path);
	argv[argc++] = "--systems";
	argv[argc++] = n;
	argv[argc++] = "--listen";
	argv[argc++] = listen;
	argv[argc++] = "--run-dir";
	argv[argc++] = run;
	while (*extra && argc < 38)
		argv[argc++] = *extra++;
	argv[argc] = NULL;
	self->pid = fork();
	if (self->pid == 0) {
		int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (lfd >= 0) {
			dup2(lfd, STDERR_FILENO);
			close(lfd);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return connect_appliance(self, WSE_LINK_CAP_EXEC | WSE_LINK_CAP_APPLIANCE);
}

#define start(self, n, ...) start_argv(self, n, (const char *const[]){ __VA_ARGS__, NULL })

/* The pid of a part ("system-1", "memoryx", "coordinator") from the run directory. */
static pid_t part_pid(FIXTURE_DATA(appl) *self, const char *what)
{
	char path[128], name[32];
	int pid = 0, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/run/parts", self->dir);
	f = fopen(path, "r");
	while (f && !found && fscanf(f, "%31s %d", name, &pid) == 2)
		found = !strcmp(name, what);
	if (f)
		fclose(f);
	return found ? pid : 0;
}

/* One request and its answer; the refusal's text in @text. */
static uint32_t call(FIXTURE_DATA(appl) *self, uint8_t op, uint16_t q, const void *hdr,
		     size_t hlen, const void *data, size_t dlen, void *out, size_t *outlen,
		     char *text, size_t textlen)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)data, dlen } };
	struct wse_link_err err;
	uint32_t status;
	size_t rest;

	if (wse_link_client_call(&self->cl, op, q, iov, dlen ? 2 : (hlen ? 1 : 0), &status,
				 &rest, &err)) {
		snprintf(text, textlen, "%s", err.text);
		return 0xdead;
	}
	if (status)
		wse_link_client_text(&self->cl, rest, text, textlen);
	if (!status && out) {
		memcpy(out, self->cl.buf + sizeof(struct wse_link_status), rest);
		if (outlen)
			*outlen = rest;
	}
	return status;
}

static uint32_t load(FIXTURE_DATA(appl) *self, const void *image, size_t len, char *text,
		     size_t textlen)
{
	struct wse_link_prog_load_info in = { .program = SLOT, .flags = WSE_LINK_PROG_LAST,
					      .total = len };
	struct wse_link_program_load raw;
	uint8_t reply[64];

	wse_link_prog_load_encode(&raw, &in);
	return call(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw, sizeof(raw), image, len, reply,
		    NULL, text, textlen);
}

static uint32_t set_job(FIXTURE_DATA(appl) *self, uint32_t systems, char *text, size_t textlen)
{
	struct wse_link_params_info in = { 0, WSE_LINK_PARAMS_JOB, 0, sizeof(struct wse_link_job) };
	struct wse_link_job_info job = { systems };
	struct wse_link_params raw;
	struct wse_link_job body;

	wse_link_params_encode(&raw, &in);
	wse_link_job_encode(&body, &job);
	return call(self, WSE_LINK_OP_PARAMS_WRITE, Q_CTL, &raw, sizeof(raw), &body, sizeof(body),
		    NULL, NULL, text, textlen);
}

static uint32_t params(FIXTURE_DATA(appl) *self, bool write, uint32_t which, uint64_t off,
		       void *buf, uint32_t len, char *text, size_t textlen)
{
	struct wse_link_params_info in = { SLOT, which, off, len };
	struct wse_link_params raw;

	wse_link_params_encode(&raw, &in);
	return call(self, write ? WSE_LINK_OP_PARAMS_WRITE : WSE_LINK_OP_PARAMS_READ, Q_CTL, &raw,
		    sizeof(raw), write ? buf : NULL, write ? len : 0, write ? NULL : buf, NULL,
		    text, textlen);
}

/* The seeded batches: random pixels labelled by a fixed random teacher. */
static void make_batch(uint64_t seed, uint32_t step, uint8_t *px, int32_t *labels)
{
	static float teacher[CLASSES][IN];
	static bool init;
	struct engine_rng rng;

	if (!init) {
		engine_rng_seed(&rng, 99);
		for (int c = 0; c < CLASSES; c++)
			for (int i = 0; i < IN; i++)
				teacher[c][i] = engine_rng_uniform(&rng) - 0.5f;
		init = true;
	}
	engine_rng_seed(&rng, seed * 1000003 + step);
	for (int s = 0; s < BATCH; s++) {
		float best = -1e30f;

		for (int i = 0; i < IN; i++)
			px[s * IN + i] = (uint8_t)(engine_rng_next(&rng) >> 56);
		for (int c = 0; c < CLASSES; c++) {
			float v = 0;

			for (int i = 0; i < IN; i++)
				v += teacher[c][i] * (px[s * IN + i] / 255.0f - 0.5f);
			if (v > best) {
				best = v;
				labels[s] = c;
			}
		}
	}
}

static uint32_t read_all(FIXTURE_DATA(appl) *self, uint32_t stream, void *out, uint32_t len,
			 char *text, size_t textlen)
{
	for (uint32_t got = 0, tries = 0; got < len && tries < 10000; tries++) {
		struct wse_link_stream_info in = { SLOT, stream, len - got, 0 };
		struct wse_link_stream raw;
		size_t n = 0;
		uint32_t st;

		wse_link_stream_encode(&raw, &in);
		st = call(self, WSE_LINK_OP_STREAM_READ, Q_OUT, &raw, sizeof(raw), NULL, 0,
			  (uint8_t *)out + got, &n, text, textlen);
		if (st)
			return st;
		got += (uint32_t)n;
	}
	return 0;
}

static uint32_t write_stream(FIXTURE_DATA(appl) *self, uint32_t stream, const void *data,
			     uint32_t len, char *text, size_t textlen)
{
	struct wse_link_stream_info in = { SLOT, stream, len, 0 };
	struct wse_link_stream raw;

	wse_link_stream_encode(&raw, &in);
	return call(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, &raw, sizeof(raw), data, len, NULL, NULL,
		    text, textlen);
}

/* Starts a RUN of @kind over @steps batches of the program in SLOT; its tag in @tag. */
static int run_start(FIXTURE_DATA(appl) *self, uint32_t kind, uint32_t steps, uint32_t *tag)
{
	struct wse_link_run_info run = { .program = SLOT, .kind = kind, .steps = steps,
					 .batch = BATCH };
	struct wse_link_run rr;
	struct iovec iov = { &rr, sizeof(rr) };
	struct wse_link_err err;

	wse_link_run_encode(&rr, &run);
	return wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, tag, &err);
}

/* Waits for the RUN of @tag to end: its status, or -1 if no answer came. */
static int64_t run_end(FIXTURE_DATA(appl) *self, uint32_t tag)
{
	struct wse_link_err err;
	uint32_t st;
	size_t rest;

	if (wse_link_client_wait(&self->cl, tag, IO_MS, &st, &rest, &err))
		return -1;
	return st;
}

/*
 * @steps training steps of the seeded batches from step @from in one RUN
 * (@send: the host writes the samples; else the input workers read them),
 * the per-sample losses into @losses (steps * BATCH).
 */
static uint32_t train_kill(FIXTURE_DATA(appl) *self, uint64_t seed, uint32_t from,
			   uint32_t steps, bool send, float *losses, uint32_t kill_at, pid_t victim,
			   char *text, size_t textlen)
{
	struct wse_link_run_info run = { .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
					 .steps = steps, .batch = BATCH };
	struct wse_link_run raw;
	struct iovec iov = { &raw, sizeof(raw) };
	struct wse_link_run_result_info res;
	struct wse_link_err err;
	uint8_t px[BATCH * IN];
	int32_t labels[BATCH], preds[BATCH];
	uint32_t tag, status = 0, run_status;
	size_t rest;

	wse_link_run_encode(&raw, &run);
	if (wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, &tag, &err))
		return 0xdead;
	for (uint32_t s = 0; s < steps && !status; s++) {
		if (victim > 0 && s == kill_at)
			kill(victim, SIGKILL);
		make_batch(seed, from + s, px, labels);
		if (send) {
			status = write_stream(self, S_SAMPLES, px, sizeof(px), text, textlen);
			if (!status)
				status = write_stream(self, S_LABELS, labels, sizeof(labels), text,
						      textlen);
		}
		if (!status)
			status = read_all(self, S_LOSSES, losses + s * BATCH, BATCH * 4, text, textlen);
		if (!status)
			status = read_all(self, S_PREDS, preds, sizeof(preds), text, textlen);
	}
	if (status) {
		/* The RUN's answer says the same; the text is the first's. It ends the RUN. */
		wse_link_client_wait(&self->cl, tag, IO_MS, &run_status, &rest, &err);
		return status;
	}
	if (wse_link_client_wait(&self->cl, tag, IO_MS, &run_status, &rest, &err)) {
		snprintf(text, textlen, "%s", err.text);
		return 0xdead;
	}
	if (run_status) {
		wse_link_client_text(&self->cl, rest, text, textlen);
		return run_status;
	}
	return wse_link_run_result_decode(self->cl.buf + 8, rest, &res, &err) ? 0xbad : 0;
}

static uint32_t train(FIXTURE_DATA(appl) *self, uint64_t seed, uint32_t from, uint32_t steps,
		      bool send, float *losses, char *text, size_t textlen)
{
	return train_kill(self, seed, from, steps, send, losses, 0, 0, text, textlen);
}

/* The weights, and the optimizer state with its step count. */
struct snapshot {
	float w[FLOATS];
	float state[2 * FLOATS + 2];
};

static uint32_t snap(FIXTURE_DATA(appl) *self, struct snapshot *sn, bool write, char *text,
		     size_t textlen)
{
	uint32_t st = params(self, write, WSE_LINK_PARAMS_WEIGHTS, 0, sn->w, sizeof(sn->w), text,
			     textlen);

	return st ? st : params(self, write, WSE_LINK_PARAMS_OPT_STATE, 0, sn->state,
				2 * FLOATS * 4 + 8, text, textlen);
}

static uint32_t appliance_state(FIXTURE_DATA(appl) *self, struct wse_link_appliance_state *st,
				char *text, size_t textlen)
{
	struct wse_link_params_info in = { 0, WSE_LINK_PARAMS_APPLIANCE, 0, 65536 };
	struct wse_link_params raw;
	static uint8_t buf[65536];
	struct wse_link_err err;
	size_t n = 0;
	uint32_t status;

	wse_link_params_encode(&raw, &in);
	status = call(self, WSE_LINK_OP_PARAMS_READ, Q_CTL, &raw, sizeof(raw), NULL, 0, buf, &n,
		      text, textlen);
	if (!status && wse_link_appliance_state_decode(buf, n, st, &err)) {
		snprintf(text, textlen, "%s", err.text);
		return 0xbad;
	}
	return status;
}

/* Waits (bounded) until the launcher has started @what again: a pid other than @old. */
static pid_t restarted(FIXTURE_DATA(appl) *self, const char *what, pid_t old)
{
	for (int i = 0; i < 500; i++) {
		pid_t pid = part_pid(self, what);

		if (pid > 0 && pid != old)
			return pid;
		usleep(10000);
	}
	return 0;
}

TEST_F(appl, hello_and_state_describe_the_appliance)
{
	struct wse_link_appliance_state st;
	char text[256] = "";

	ASSERT_EQ(0, start(self, 2, "--memoryx-capacity=64M"));
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_APPLIANCE);
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_EXEC);
	ASSERT_EQ(2, self->cl.appliance.systems);
	EXPECT_EQ(64ULL << 20, self->cl.appliance.memoryx_capacity);
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(750, self->cl.appliance.system[i].wafer_width);
		EXPECT_EQ(994, self->cl.appliance.system[i].wafer_height);
		EXPECT_EQ((uint64_t)(i + 1), self->cl.appliance.system[i].device_id);
	}
	EXPECT_EQ(750, self->cl.dev.wafer_width);
	EXPECT_NE(NULL, strstr(self->cl.dev.fw_version, "2 systems"));
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(2, st.systems);
	EXPECT_EQ(0, st.job_systems);
	EXPECT_EQ(WSE_LINK_PART_UP, st.part[0].state);
	EXPECT_EQ(WSE_LINK_PART_UP, st.part[1].state);
	EXPECT_EQ(64ULL << 20, st.memoryx_capacity);
	/* A host that does not ask for the appendix gets a system's HELLO reply. */
	disconnect(self);
	ASSERT_EQ(0, connect_appliance(self, WSE_LINK_CAP_EXEC));
	EXPECT_EQ(0, self->cl.appliance.systems);
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_APPLIANCE);
	/* An appliance has no one device memory. */
	{
		struct wse_link_mem mem;

		wse_link_mem_encode(&mem, 0, 16);
		EXPECT_EQ(WSE_LINK_E_UNSUPPORTED, call(self, WSE_LINK_OP_MEM_READ, Q_CTL, &mem,
						       sizeof(mem), NULL, 0, NULL, NULL, text,
						       sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "no one device memory")) TH_LOG("%s", text);
	}
}

/*
 * The heart of it: 6 Adam steps of the same batches on 1, 2, 4 and 8
 * systems give the same losses, weights and optimizer state, bit for bit;
 * 3 systems (unaligned shards) train too, to other last bits.
 */
TEST_F_TIMEOUT(appl, weight_streaming_is_the_same_on_1_2_4_8_systems, 240)
{
	static struct snapshot ref, got;
	static float ref_loss[6 * BATCH], loss[6 * BATCH];
	struct wse_link_appliance_state st;
	char text[512] = "";

	ASSERT_EQ(0, start(self, 8, "--fw-arg=--workers=1"));
	for (uint32_t n = 1; n <= 8; n *= 2) {
		ASSERT_EQ(0, set_job(self, n, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, train(self, 1, 0, 6, true, n == 1 ? ref_loss : loss, text, sizeof(text)))
			TH_LOG("%u systems: %s", n, text);
		ASSERT_EQ(0, snap(self, n == 1 ? &ref : &got, false, text, sizeof(text)))
			TH_LOG("%s", text);
		ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text)));
		EXPECT_EQ(n, st.job_systems);
		if (n == 1)
			continue;
		for (int m = 0; m < 6 * BATCH; m++) {
			if (memcmp(&ref_loss[m], &loss[m], 4)) {
				TH_LOG("%u systems: loss of sample %d (step %d) differs: %.9g %.9g", n, m, m / BATCH, ref_loss[m], loss[m]);
				break;
			}
		}
		EXPECT_EQ(0, memcmp(ref_loss, loss, sizeof(loss))) TH_LOG("%u systems: losses", n);
		EXPECT_EQ(0, memcmp(ref.w, got.w, sizeof(ref.w))) TH_LOG("%u systems: weights", n);
		EXPECT_EQ(0, memcmp(ref.state, got.state, sizeof(ref.state)))
			TH_LOG("%u systems: optimizer state", n);
	}
	{
		uint64_t step;

		memcpy(&step, &ref.state[2 * FLOATS], 8);
		EXPECT_EQ(6, le64toh(step));
	}
	EXPECT_LT(0, st.swarmx_reduced);
	EXPECT_LT(0, st.swarmx_broadcast);
	EXPECT_LT(0, st.memoryx_updates);
	/* Every system worked on the 8-system job. */
	for (int m = 0; m < 8; m++) {
		EXPECT_LT(0, st.part[m].steps) TH_LOG("system %d", m);
	}
	ASSERT_EQ(0, set_job(self, 3, text, sizeof(text)));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 6, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	for (int m = 0; m < 6 * BATCH; m++) {
		ASSERT_LT(fabsf(loss[m] - ref_loss[m]), 1e-3f) TH_LOG("sample %d", m);
	}
}

/* Each step's mean loss of @steps steps of per-sample losses. */
static void step_means(const float *losses, int steps, float *mean)
{
	for (int s = 0; s < steps; s++) {
		double sum = 0;

		for (int i = 0; i < BATCH; i++)
			sum += losses[s * BATCH + i];
		mean[s] = (float)(sum / BATCH);
	}
}

/*
 * Micro-batches: the program compiled for micro-batches of the whole
 * batch and of 8 samples, trained from the same initial weights on the
 * same batches with --leaves 1 (the program's micro-batch sets the
 * leaves): the same loss curve to fp32 rounding, 1e-5, though not the same
 * bits (the gradient sums over 8 micro-batches in a tree). In 8, 2 systems
 * give the bits of 1: the leaves are the program's micro-batches there too.
 */
TEST_F_TIMEOUT(appl, one_micro_batch_and_eight_give_the_same_loss_curve, 180)
{
	enum { STEPS = 20 };
	static float loss[3][STEPS * BATCH], mean[2][STEPS];
	static struct snapshot one, two;
	const uint32_t micro[2] = { BATCH, BATCH / 8 };
	char text[512] = "";
	void *img[2];
	size_t len[2];
	int at;

	for (int v = 0; v < 2; v++)
		ASSERT_EQ(0, test_compile_model_micro(small_model, "64x64",
						      WSECC_MODE_WEIGHT_STREAMING, micro[v], &img[v],
						      &len[v]));
	ASSERT_EQ(0, start(self, 2, "--leaves=1"));
	for (int v = 0; v < 3; v++) {
		ASSERT_EQ(0, set_job(self, v == 2 ? 2 : 1, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, load(self, img[v ? 1 : 0], len[v ? 1 : 0], text, sizeof(text)))
			TH_LOG("%s", text);
		ASSERT_EQ(0, train(self, 4, 0, STEPS, true, loss[v], text, sizeof(text)))
			TH_LOG("micro-batch %u: %s", micro[v ? 1 : 0], text);
		if (v)
			ASSERT_EQ(0, snap(self, v == 1 ? &one : &two, false, text, sizeof(text)))
				TH_LOG("%s", text);
	}
	step_means(loss[0], STEPS, mean[0]);
	step_means(loss[1], STEPS, mean[1]);
	at = test_loss_curves_differ(mean[0], mean[1], STEPS);
	EXPECT_EQ(-1, at) TH_LOG("step %d: %.9g in 1 micro-batch, %.9g in 8", at, mean[0][at],
				 mean[1][at]);
	TH_LOG("loss %.6f -> %.6f in 1 micro-batch, %.6f -> %.6f in 8", mean[0][0],
	       mean[0][STEPS - 1], mean[1][0], mean[1][STEPS - 1]);
	EXPECT_LT(mean[0][STEPS - 1], mean[0][0]);
	/* Cut otherwise: the sums went another way, so some last bit moved. */
	EXPECT_NE(0, memcmp(loss[0], loss[1], sizeof(loss[0])));
	EXPECT_EQ(0, memcmp(loss[1], loss[2], sizeof(loss[1])));
	EXPECT_EQ(0, memcmp(one.w, two.w, sizeof(one.w)));
	free(img[0]);
	free(img[1]);
}

/*
 * --leaves 2 (micro-batches of half a batch, bigger sgemms): 1 and 2
 * systems still give the same bits; a count not a power of two is refused.
 */
TEST_F_TIMEOUT(appl, fewer_leaves_agree_on_1_and_2_systems, 120)
{
	static struct snapshot ref, got;
	static float ref_loss[4 * BATCH], loss[4 * BATCH];
	char text[512] = "";

	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s --listen unix:%s --leaves 3 2>/dev/null", appliance_binary(self_path),
		 self->sock);
	EXPECT_NE(0, system(cmd));
	ASSERT_EQ(0, start(self, 2, "--leaves=2"));
	for (uint32_t n = 1; n <= 2; n++) {
		ASSERT_EQ(0, set_job(self, n, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, train(self, 1, 0, 4, true, n == 1 ? ref_loss : loss, text, sizeof(text)))
			TH_LOG("%u systems: %s", n, text);
		ASSERT_EQ(0, snap(self, n == 1 ? &ref : &got, false, text, sizeof(text)))
			TH_LOG("%s", text);
	}
	EXPECT_EQ(0, memcmp(ref_loss, loss, sizeof(loss)));
	EXPECT_EQ(0, memcmp(ref.w, got.w, sizeof(ref.w)));
	EXPECT_EQ(0, memcmp(ref.state, got.state, sizeof(ref.state)));
	/* The default's 8 leaves sum in another tree: other last bits. */
	stop(self);
	ASSERT_EQ(0, start(self, 1, "--log-level=warn"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 4, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &got, false, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_NE(0, memcmp(ref.w, got.w, sizeof(ref.w)));
}

/* Entries of @dir other than . and .. (-1 if it cannot be read). */
static int entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/*
 * --memoryx-store with a 16 KiB RAM budget: the small model's weights
 * (9640 bytes) stay in RAM, its Adam state (19280 bytes) spills to the
 * file but for one page. Training gives the losses, weights and state of
 * an all-RAM MemoryX bit for bit, and the store directory stays empty.
 * A model beyond the capacity, or weights beyond the RAM budget, are
 * refused at load naming the figures.
 */
TEST_F_TIMEOUT(appl, memoryx_spills_to_a_file_store_with_the_same_bits, 120)
{
	static struct snapshot ref, got;
	static float ref_loss[4 * BATCH], loss[4 * BATCH];
	char text[512] = "", store[96], store_arg[128], line[512], log[128];
	bool logged = false;
	FILE *f;

	ASSERT_EQ(0, start(self, 1, "--log-level=info"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 4, true, ref_loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &ref, false, text, sizeof(text))) TH_LOG("%s", text);
	stop(self);

	snprintf(store, sizeof(store), "%s/store", self->dir);
	ASSERT_EQ(0, mkdir(store, 0700));
	snprintf(store_arg, sizeof(store_arg), "--memoryx-store=%s", store);
	ASSERT_EQ(0, start(self, 1, store_arg, "--memoryx-ram=16K", "--memoryx-capacity=64K"));
	EXPECT_EQ(64 << 10, self->cl.appliance.memoryx_capacity);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, entries(store));
	ASSERT_EQ(0, train(self, 1, 0, 4, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &got, false, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, memcmp(ref_loss, loss, sizeof(loss)));
	EXPECT_EQ(0, memcmp(ref.w, got.w, sizeof(ref.w)));
	EXPECT_EQ(0, memcmp(ref.state, got.state, sizeof(ref.state)));
	EXPECT_EQ(0, entries(store));
	/* MemoryX's log says how much of the state went to the file. */
	snprintf(log, sizeof(log), "%s/appliance.log", self->dir);
	f = fopen(log, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		logged |= strstr(line, "16384 of them in the file store") != NULL;
	fclose(f);
	EXPECT_TRUE(logged);
	stop(self);
	EXPECT_EQ(0, entries(store));

	/* 28920 bytes in a capacity of 16 KiB; then weights beyond 8 KiB of RAM. */
	ASSERT_EQ(0, start(self, 1, store_arg, "--memoryx-ram=8K", "--memoryx-capacity=16K"));
	EXPECT_NE(0, load(self, self->ws, self->ws_len, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "take 28920 bytes; MemoryX holds at most 16384")) TH_LOG("%s", text);
	stop(self);
	ASSERT_EQ(0, start(self, 1, store_arg, "--memoryx-ram=8K", "--memoryx-capacity=64K"));
	EXPECT_NE(0, load(self, self->ws, self->ws_len, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "weights take 9640 bytes")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "RAM budget is 8192")) TH_LOG("%s", text);
	stop(self);
	EXPECT_EQ(0, entries(store));
}

/* A tiny IDX dataset: @n samples of 8x8 pixels, labelled by the teacher, under @dir/tiny. */
static int write_dataset(const char *dir, uint32_t n, uint8_t *px, int32_t *labels)
{
	uint8_t head[16], *lab = malloc(n);
	char path[256];
	uint32_t be;
	FILE *f;
	int ret = 0;

	if (!lab)
		return -1;
	for (uint32_t b = 0; b < n / BATCH; b++)
		make_batch(7, b, px + (size_t)b * BATCH * IN, labels + b * BATCH);
	for (uint32_t i = 0; i < n; i++)
		lab[i] = (uint8_t)labels[i];
	snprintf(path, sizeof(path), "%s/tiny", dir);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tiny/train-images-idx3-ubyte", dir);
	f = fopen(path, "w");
	be = htobe32(0x803);
	memcpy(head, &be, 4);
	be = htobe32(n);
	memcpy(head + 4, &be, 4);
	be = htobe32(8);
	memcpy(head + 8, &be, 4);
	memcpy(head + 12, &be, 4);
	if (!f || fwrite(head, 16, 1, f) != 1 || fwrite(px, IN, n, f) != n)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	snprintf(path, sizeof(path), "%s/tiny/train-labels-idx1-ubyte", dir);
	f = fopen(path, "w");
	be = htobe32(0x801);
	memcpy(head, &be, 4);
	be = htobe32(n);
	memcpy(head + 4, &be, 4);
	if (!f || fwrite(head, 8, 1, f) != 1 || fwrite(lab, 1, n, f) != n)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	free(lab);
	return ret;
}

static uint32_t name_input(FIXTURE_DATA(appl) *self, bool dataset, uint32_t first, char *text,
			   size_t textlen)
{
	struct wse_link_params_info in = { SLOT, WSE_LINK_PARAMS_INPUT, 0,
					   sizeof(struct wse_link_input) };
	struct wse_link_input_info info = {
		.source = dataset ? WSE_LINK_INPUT_DATASET : WSE_LINK_INPUT_STREAM,
		.flags = WSE_LINK_INPUT_SHUFFLE, .seed = 5, .epoch = 0, .first = first,
		.dataset = "tiny", .split = "train",
	};
	struct wse_link_params raw;
	struct wse_link_input body;

	wse_link_params_encode(&raw, &in);
	wse_link_input_encode(&body, &info);
	return call(self, WSE_LINK_OP_PARAMS_WRITE, Q_CTL, &raw, sizeof(raw), &body, sizeof(body),
		    NULL, NULL, text, textlen);
}

/* Names dataset @name's train split as the input: the answer's status. */
static uint32_t name_dataset(FIXTURE_DATA(appl) *self, const char *name, char *text,
			     size_t textlen)
{
	struct wse_link_params_info in = { SLOT, WSE_LINK_PARAMS_INPUT, 0,
					   sizeof(struct wse_link_input) };
	struct wse_link_input_info info = { .source = WSE_LINK_INPUT_DATASET, .split = "train" };
	struct wse_link_params raw;
	struct wse_link_input body;

	snprintf(info.dataset, sizeof(info.dataset), "%s", name);
	wse_link_params_encode(&raw, &in);
	wse_link_input_encode(&body, &info);
	return call(self, WSE_LINK_OP_PARAMS_WRITE, Q_CTL, &raw, sizeof(raw), &body, sizeof(body),
		    NULL, NULL, text, textlen);
}

/* Two CIFAR-10 records (label, 3x32x32 bytes) as @dir/data/cifar/data_batch_1.bin. */
static int write_cifar10(const char *dir)
{
	static uint8_t rec[2][3073];
	char path[256];
	FILE *f;
	int ret = 0;

	for (int i = 0; i < 2; i++) {
		rec[i][0] = (uint8_t)(i + 3);
		memset(rec[i] + 1, 40 * i, 3072);
	}
	snprintf(path, sizeof(path), "%s/data/cifar", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/data/cifar/data_batch_1.bin", dir);
	f = fopen(path, "w");
	if (!f || fwrite(rec, sizeof(rec), 1, f) != 1)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	return ret;
}

/*
 * Program @prog trained twice from a fresh load over the first 16 batches
 * of the tiny dataset, in RUNs of 6, 3, 6 and 1 steps, each input named
 * from its position: with the host's samples (in the order it would take
 * them: wse_dataset_order(), seed 5, epoch 0), then with the input
 * workers'. Both give the same losses, weights and optimizer state.
 */
static void host_and_workers_agree(struct __test_metadata *_metadata, FIXTURE_DATA(appl) *self,
				   const void *prog, size_t prog_len)
{
	enum { N = 16 * BATCH, CHUNKS = 4 };
	static uint8_t px[N * IN], batch_px[BATCH * IN];
	static int32_t labels[N], batch_y[BATCH], preds[BATCH];
	static struct snapshot a, b;
	static float loss[2][16 * BATCH];
	static uint32_t order[N];
	/* RUNs longer than the rings (4 batches), and of odd lengths. */
	uint32_t chunks[CHUNKS][2] = { { 0, 6 }, { 6, 3 }, { 9, 6 }, { 15, 1 } };
	char root[128], arg[160], text[512] = "";

	snprintf(root, sizeof(root), "%s/data", self->dir);
	ASSERT_EQ(0, write_dataset(root, N, px, labels));
	wse_dataset_order(order, N, 5, 0);
	snprintf(arg, sizeof(arg), "--data-root=%s", root);
	ASSERT_EQ(0, start(self, 2, arg));
	for (int r = 0; r < 2; r++) {
		ASSERT_EQ(0, load(self, prog, prog_len, text, sizeof(text))) TH_LOG("%s", text);
		for (int c = 0; c < CHUNKS; c++) {
			struct wse_link_run_info run = { .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
							 .steps = chunks[c][1], .batch = BATCH };
			struct wse_link_run rr;
			struct iovec iov = { &rr, sizeof(rr) };
			struct wse_link_err err;
			uint32_t tag, st;
			size_t rest;

			ASSERT_EQ(0, name_input(self, r, chunks[c][0] * BATCH, text, sizeof(text)))
				TH_LOG("%s", text);
			wse_link_run_encode(&rr, &run);
			ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, &tag,
							    &err));
			for (uint32_t s = 0; s < chunks[c][1]; s++) {
				uint32_t step = chunks[c][0] + s;

				for (int i = 0; i < BATCH; i++) {
					uint32_t at = order[step * BATCH + i];

					memcpy(batch_px + i * IN, px + (size_t)at * IN, IN);
					batch_y[i] = labels[at];
				}
				if (!r) {
					ASSERT_EQ(0, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px),
								  text, sizeof(text))) TH_LOG("%s", text);
					ASSERT_EQ(0, write_stream(self, S_LABELS, batch_y, sizeof(batch_y),
								  text, sizeof(text)));
				}
				ASSERT_EQ(0, read_all(self, S_LOSSES, loss[r] + step * BATCH, BATCH * 4,
						      text, sizeof(text))) TH_LOG("%s", text);
				ASSERT_EQ(0, read_all(self, S_PREDS, preds, sizeof(preds), text,
						      sizeof(text)));
			}
			ASSERT_EQ(0, wse_link_client_wait(&self->cl, tag, IO_MS, &st, &rest, &err));
			ASSERT_EQ(0, st);
		}
		ASSERT_EQ(0, snap(self, r ? &b : &a, false, text, sizeof(text))) TH_LOG("%s", text);
	}
	EXPECT_EQ(0, memcmp(loss[0], loss[1], sizeof(loss[0])));
	EXPECT_EQ(0, memcmp(a.w, b.w, sizeof(a.w)));
	EXPECT_EQ(0, memcmp(a.state, b.state, sizeof(a.state)));
}

/*
 * The input workers read the dataset in the order the host would take it:
 * the same losses and weights as the host's samples. The host may not
 * write samples then; past the epoch's end the RUN fails; an unknown
 * dataset is refused; an eval RUN after it runs too.
 */
TEST_F(appl, input_workers_read_the_dataset_in_the_hosts_order)
{
	static uint8_t batch_px[BATCH * IN];
	static int32_t batch_y[BATCH], preds[BATCH];
	static float loss[2][16 * BATCH];
	char text[512] = "";

	host_and_workers_agree(_metadata, self, self->ws, self->ws_len);
	/* The host may not write samples the workers read; past the epoch's end the RUN fails. */
	EXPECT_EQ(WSE_LINK_E_INVAL, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px), text,
						 sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "input workers")) TH_LOG("%s", text);
	ASSERT_EQ(0, name_input(self, true, 15 * BATCH, text, sizeof(text)));
	EXPECT_NE(0, train(self, 1, 0, 2, false, loss[0], text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "samples left")) TH_LOG("%s", text);
	/* An unknown dataset is refused with the workers' reason. */
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, name_dataset(self, "nothing-here", text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "nothing-here")) TH_LOG("%s", text);
	/* CIFAR-10 batches are read, and their 3x32x32 refused for 64 inputs, both shapes named. */
	ASSERT_EQ(0, write_cifar10(self->dir));
	EXPECT_EQ(WSE_LINK_E_INVAL, name_dataset(self, "cifar", text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "/cifar/train: the data's samples are 3x32x32, the program's input is 64"))
		TH_LOG("%s", text);
	/* Host samples again, and an eval RUN of them. */
	ASSERT_EQ(0, name_input(self, false, 0, text, sizeof(text)));
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss[0], text, sizeof(text))) TH_LOG("%s", text);
	{
		uint32_t tag;

		ASSERT_EQ(0, run_start(self, WSE_LINK_RUN_EVAL, 2, &tag));
		for (int s = 0; s < 2; s++) {
			make_batch(2, s, batch_px, batch_y);
			ASSERT_EQ(0, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px), text,
						  sizeof(text)));
			ASSERT_EQ(0, write_stream(self, S_LABELS, batch_y, sizeof(batch_y), text,
						  sizeof(text)));
			ASSERT_EQ(0, read_all(self, S_LOSSES, loss[1], BATCH * 4, text, sizeof(text)));
			ASSERT_EQ(0, read_all(self, S_PREDS, preds, sizeof(preds), text, sizeof(text)));
		}
		ASSERT_EQ(0, run_end(self, tag));
		EXPECT_TRUE(isfinite(loss[1][0]) && loss[1][0] > 0);
	}
	/* A predict RUN of the last batch: samples only, the eval's predictions. */
	{
		static int32_t again[BATCH];
		uint32_t tag;

		ASSERT_EQ(0, run_start(self, WSE_LINK_RUN_PREDICT, 1, &tag));
		ASSERT_EQ(0, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px), text,
					  sizeof(text)));
		ASSERT_EQ(0, read_all(self, S_PREDS, again, sizeof(again), text, sizeof(text)));
		ASSERT_EQ(0, run_end(self, tag));
		EXPECT_EQ(0, memcmp(again, preds, sizeof(again)));
	}
}

/*
 * The frames a system on another machine gets (--no-regions), and a slow
 * system (every answer 3 ms late), change nothing of the results.
 */
TEST_F_TIMEOUT(appl, frames_and_a_slow_system_change_no_result, 120)
{
	static struct snapshot ref, got;
	static float ref_loss[4 * BATCH], loss[4 * BATCH];
	static const char *const variants[][2] = {
		{ "--log-level=info", "--log-level=info" },
		{ "--no-regions", "--fw-arg=--fault-delay-ms=3" },
	};
	char text[512] = "";

	for (int v = 0; v < 2; v++) {
		ASSERT_EQ(0, start(self, 2, variants[v][0], variants[v][1]));
		ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, train(self, 2, 0, 4, true, v ? loss : ref_loss, text, sizeof(text)))
			TH_LOG("%s", text);
		ASSERT_EQ(0, snap(self, v ? &got : &ref, false, text, sizeof(text)));
		stop(self);
	}
	EXPECT_EQ(0, memcmp(ref_loss, loss, sizeof(loss)));
	EXPECT_EQ(0, memcmp(ref.w, got.w, sizeof(ref.w)));
	EXPECT_EQ(0, memcmp(ref.state, got.state, sizeof(ref.state)));
}

/*
 * 16-bit weights on the wire: a bf16 and an fp16 program, trained on 2
 * systems that read MemoryX's f32 masters in place (regions), that get
 * them in f32 frames (--no-regions, systems without WSE_LINK_CAP_WIRE16)
 * and in 16-bit frames (of 4 MiB, and of 4 KiB, which cut a layer's
 * transfer into pieces), end with the same losses, weights and optimizer
 * state, bit for bit: the systems round the dense layers' W to the same
 * 16 bits either way. The 16-bit frames carry each W in 2 bytes a float
 * (the biases in 4): 4904 bytes a step and system instead of 9640.
 */
TEST_F_TIMEOUT(appl, sixteen_bit_weights_on_the_wire_change_no_bit, 180)
{
	static const char *const variants[][2] = {
		{ "--log-level=info", "--log-level=info" },
		{ "--no-regions", "--fw-arg=--no-wire16" },
		{ "--no-regions", "--log-level=info" },
		/* Frames of 4 KiB: a layer's W in pieces, one ending in its b. */
		{ "--no-regions", "--fw-arg=--max-payload=4096" },
	};
	static const enum wsep_precision precisions[] = { WSEP_PRECISION_BF16,
							  WSEP_PRECISION_FP16 };
	static struct snapshot sn[4];
	static float loss[4][4 * BATCH];
	const uint64_t w16 = 64 * 32 + 32 * 10, b32 = 32 + 10;
	uint64_t broadcast[4], tx[4];
	struct wse_link_appliance_state st;
	char text[512] = "";
	size_t len;
	void *image;

	for (int p = 0; p < 2; p++) {
		ASSERT_EQ(0, test_compile_model_at(small_model, "64x64", WSECC_MODE_WEIGHT_STREAMING, 0,
						   precisions[p], &image, &len));
		for (int v = 0; v < 4; v++) {
			ASSERT_EQ(0, start(self, 2, variants[v][0], variants[v][1]));
			ASSERT_EQ(0, load(self, image, len, text, sizeof(text))) TH_LOG("%s", text);
			ASSERT_EQ(0, train(self, 2, 0, 4, true, loss[v], text, sizeof(text)))
				TH_LOG("%s", text);
			ASSERT_EQ(0, snap(self, &sn[v], false, text, sizeof(text)));
			ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text)));
			broadcast[v] = st.swarmx_broadcast;
			tx[v] = st.part[0].bytes_tx + st.part[1].bytes_tx;
			stop(self);
		}
		free(image);
		for (int v = 1; v < 4; v++) {
			EXPECT_EQ(0, memcmp(loss[0], loss[v], sizeof(loss[0])))
				TH_LOG("precision %d, variant %d: losses", p, v);
			EXPECT_EQ(0, memcmp(sn[0].w, sn[v].w, sizeof(sn[0].w)))
				TH_LOG("precision %d, variant %d: weights", p, v);
			EXPECT_EQ(0, memcmp(sn[0].state, sn[v].state, sizeof(sn[0].state)))
				TH_LOG("precision %d, variant %d: optimizer state", p, v);
		}
		/* 4 steps, 2 systems. */
		EXPECT_EQ(4 * 2 * FLOATS * 4, broadcast[0]);
		EXPECT_EQ(4 * 2 * FLOATS * 4, broadcast[1]);
		EXPECT_EQ(4 * 2 * (w16 * 2 + b32 * 4), broadcast[2]);
		EXPECT_EQ(broadcast[2], broadcast[3]);
		/* ... in more frames: each piece has its headers. */
		EXPECT_LT(tx[2], tx[3]);
		/* The frames to the systems shrink by the W's halves, all else the same. */
		EXPECT_EQ(tx[1] - tx[2], 4 * 2 * w16 * 2)
			TH_LOG("bytes to the systems: %llu in f32 frames, %llu in 16-bit",
			       (unsigned long long)tx[1], (unsigned long long)tx[2]);
	}
}

/*
 * A layer-pipelined program is fed by the input workers too: its system
 * gets the same batches as from the host, so the same bits; the host may
 * not write its samples then, and past the epoch's end the RUN is refused.
 */
TEST_F(appl, input_workers_feed_a_pipelined_program)
{
	static uint8_t batch_px[BATCH * IN];
	static int32_t preds[BATCH];
	static float loss[2 * BATCH];
	char text[512] = "";

	host_and_workers_agree(_metadata, self, self->pipe, self->pipe_len);
	EXPECT_EQ(WSE_LINK_E_INVAL, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px), text,
						 sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "input workers")) TH_LOG("%s", text);
	ASSERT_EQ(0, name_input(self, true, 15 * BATCH, text, sizeof(text))) TH_LOG("%s", text);
	{
		struct wse_link_run_info run = { .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
						 .steps = 2, .batch = BATCH };
		struct wse_link_run rr;

		wse_link_run_encode(&rr, &run);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_RUN, Q_RUN, &rr, sizeof(rr), NULL,
						 0, NULL, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "samples left")) TH_LOG("%s", text);
	}
	/* Predicting, the workers write samples only: the system takes no labels. */
	ASSERT_EQ(0, name_input(self, true, 0, text, sizeof(text))) TH_LOG("%s", text);
	{
		uint32_t tag;

		ASSERT_EQ(0, run_start(self, WSE_LINK_RUN_PREDICT, 6, &tag));
		for (int step = 0; step < 6; step++)
			ASSERT_EQ(0, read_all(self, S_PREDS, preds, sizeof(preds), text, sizeof(text)))
				TH_LOG("%s", text);
		ASSERT_EQ(0, run_end(self, tag));
	}
	/* The host's samples again: the program trains as it did. */
	ASSERT_EQ(0, name_input(self, false, 0, text, sizeof(text)));
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
}

/*
 * A layer-pipelined program runs on one system of the appliance, as on a
 * system of its own: it trains, and its weights are read from that system.
 */
TEST_F(appl, a_pipelined_program_runs_on_one_system)
{
	struct wse_link_appliance_state st;
	static float loss[20 * BATCH];
	static struct snapshot sn;
	char text[512] = "";
	float first = 0, last = 0;

	ASSERT_EQ(0, start(self, 2, "--log-level=info"));
	EXPECT_EQ(WSE_LINK_E_INVAL, set_job(self, 3, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "this appliance has 2")) TH_LOG("%s", text);
	ASSERT_EQ(0, set_job(self, 2, text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, load(self, self->pipe, self->pipe_len, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "runs on one system")) TH_LOG("%s", text);
	ASSERT_EQ(0, set_job(self, 1, text, sizeof(text)));
	ASSERT_EQ(0, load(self, self->pipe, self->pipe_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 3, 0, 20, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	for (int i = 0; i < 5 * BATCH; i++) {
		first += loss[i];
		last += loss[15 * BATCH + i];
	}
	EXPECT_LT(last, first);
	ASSERT_EQ(0, snap(self, &sn, false, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text)));
	EXPECT_EQ(20, st.part[0].steps);
	EXPECT_EQ(0, st.part[1].steps);
	EXPECT_EQ(0, st.job_systems);
}

/*
 * Refusals with texts, and nothing MemoryX holds is lost: a program whose
 * weights and optimizer state exceed MemoryX's capacity (the job before it
 * keeps training), weights out of range or not finite, a weight stream
 * written by the host.
 */
TEST_F(appl, refusals_lose_nothing)
{
	static const char big_model[] =
		"model big\ninput 64 u8\ndense 64 4096 relu\ndense 4096 10 none\n"
		"loss softmax_xent\noptimizer adam lr=1e-2\nbatch 64\nseed 3\n";
	static struct snapshot before, after;
	static float loss[2 * BATCH];
	char text[512] = "";
	size_t big_len;
	void *big;

	ASSERT_EQ(0, compile(big_model, WSECC_MODE_WEIGHT_STREAMING, &big, &big_len));
	ASSERT_EQ(0, start(self, 2, "--memoryx-capacity=1M"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &before, false, text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_NOSPC, load(self, big, big_len, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "MemoryX holds at most 1048576")) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &after, false, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)));
	ASSERT_EQ(0, train(self, 1, 2, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	/* Parameters outside the program's, and values that are not numbers. */
	EXPECT_EQ(WSE_LINK_E_INVAL, params(self, true, WSE_LINK_PARAMS_WEIGHTS, 4, before.w,
					   sizeof(before.w), text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "inside the")) TH_LOG("%s", text);
	before.w[5] = NAN;
	EXPECT_EQ(WSE_LINK_E_INVAL, params(self, true, WSE_LINK_PARAMS_WEIGHTS, 0, before.w,
					   sizeof(before.w), text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "not finite")) TH_LOG("%s", text);
	/* The host writes samples and labels only. */
	EXPECT_EQ(WSE_LINK_E_INVAL, write_stream(self, 4, before.w, 64, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "live in MemoryX")) TH_LOG("%s", text);
	/* A run with the device's own micro-batching is the appliance's to choose. */
	{
		struct wse_link_run_info run = { .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
						 .steps = 1, .batch = BATCH, .leaf = 8 };
		struct wse_link_run rr;

		wse_link_run_encode(&rr, &run);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_RUN, Q_RUN, &rr, sizeof(rr), NULL, 0,
						 NULL, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "appliance chooses")) TH_LOG("%s", text);
	}
	free(big);
}

/* The answer to a request sent by hand, read straight off the socket. */
static uint32_t raw_answer(struct __test_metadata *_metadata, FIXTURE_DATA(appl) *self,
			   uint32_t tag, uint16_t queue)
{
	struct wse_link_frame f;
	struct wse_link_err err;
	const uint8_t *rest;
	size_t rest_len;
	uint32_t status = 0xdead;

	EXPECT_EQ(0, wse_link_recv(self->fd, &self->cl.rules, &f, self->cl.buf, self->cl.cap,
				   IO_MS, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(tag, f.tag);
	EXPECT_EQ(queue, f.queue);
	EXPECT_EQ(0, wse_link_status_decode(self->cl.buf, f.length, &status, &rest, &rest_len,
					    &err));
	return status;
}

/*
 * The coordinator keeps the link protocol as wsefwd does: a request whose
 * data fails its digest after the handshake is refused (E_DATA_CRC) and the
 * link goes on; PROGRAM_UNLOAD of a program in a RUN is E_BUSY (the driver
 * frees a closed file's slot only once the device calls it empty), for the
 * appliance's own job and for a program on one of its systems.
 */
TEST_F(appl, a_changed_request_or_a_busy_unload_keeps_the_link)
{
	static float loss[2 * BATCH];
	uint8_t px[BATCH * IN];
	int32_t labels[BATCH], preds[BATCH];
	char text[512] = "";

	ASSERT_EQ(0, start(self, 2, "--log-level=info"));
	for (int pipelined = 0; pipelined < 2; pipelined++) {
		struct wse_link_run_info run = { .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
						 .steps = 2, .batch = BATCH };
		struct wse_link_stream_info sin = { SLOT, S_SAMPLES, sizeof(px), 0 };
		struct wse_link_program_ref ref;
		struct wse_link_stream sraw;
		struct wse_link_run rraw;
		struct iovec iov = { &rraw, sizeof(rraw) };
		struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_STREAM_WRITE,
					    .queue = Q_IN, .tag = 0x7000 + pipelined };
		struct iovec out[2] = { { &sraw, sizeof(sraw) }, { px, sizeof(px) } };
		struct wse_link_hdr hdr;
		struct iovec wire[3] = { { &hdr, sizeof(hdr) }, out[0], out[1] };
		struct wse_link_err err;
		uint32_t tag, status;
		size_t rest;

		TH_LOG("%s program", pipelined ? "a pipelined" : "the weight-streaming");
		if (pipelined)
			ASSERT_EQ(0, set_job(self, 1, text, sizeof(text))) TH_LOG("%s", text);
		ASSERT_EQ(0, load(self, pipelined ? self->pipe : self->ws,
				  pipelined ? self->pipe_len : self->ws_len, text, sizeof(text)))
			TH_LOG("%s", text);
		wse_link_run_encode(&rraw, &run);
		ASSERT_EQ(0, wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, Q_RUN, &iov, 1, &tag,
						    &err));
		/* Step 0's losses out: the RUN is under way, waiting for step 1. */
		make_batch(5, 0, px, labels);
		ASSERT_EQ(0, write_stream(self, S_SAMPLES, px, sizeof(px), text, sizeof(text)));
		ASSERT_EQ(0, write_stream(self, S_LABELS, labels, sizeof(labels), text,
					  sizeof(text)));
		ASSERT_EQ(0, read_all(self, S_LOSSES, loss, BATCH * 4, text, sizeof(text)));
		ASSERT_EQ(0, read_all(self, S_PREDS, preds, sizeof(preds), text, sizeof(text)));

		wse_link_prog_ref_encode(&ref, SLOT);
		EXPECT_EQ(WSE_LINK_E_BUSY, call(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref,
						sizeof(ref), NULL, 0, NULL, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "running")) TH_LOG("%s", text);

		/* Step 1's samples, changed after their digest was taken. */
		make_batch(5, 1, px, labels);
		wse_link_stream_encode(&sraw, &sin);
		f.length = sizeof(sraw) + sizeof(px);
		f.data_crc = wse_crc32c(wse_crc32c(0, &sraw, sizeof(sraw)), px, sizeof(px)) ^ 1;
		wse_link_hdr_encode(&hdr, &f);
		ASSERT_EQ(0, wse_link_write_all(self->fd, wire, 3, wse_link_now_ms() + IO_MS, &err));
		EXPECT_EQ(WSE_LINK_E_DATA_CRC, raw_answer(_metadata, self, f.tag, Q_IN));

		/* The same samples intact: the RUN ends as if nothing happened. */
		ASSERT_EQ(0, write_stream(self, S_SAMPLES, px, sizeof(px), text, sizeof(text)))
			TH_LOG("%s", text);
		ASSERT_EQ(0, write_stream(self, S_LABELS, labels, sizeof(labels), text,
					  sizeof(text)));
		ASSERT_EQ(0, read_all(self, S_LOSSES, loss + BATCH, BATCH * 4, text, sizeof(text)));
		ASSERT_EQ(0, read_all(self, S_PREDS, preds, sizeof(preds), text, sizeof(text)));
		ASSERT_EQ(0, wse_link_client_wait(&self->cl, tag, IO_MS, &status, &rest, &err))
			TH_LOG("%s", err.text);
		EXPECT_EQ(WSE_LINK_OK, status);
		EXPECT_EQ(WSE_LINK_OK, call(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref,
					    sizeof(ref), NULL, 0, NULL, NULL, text, sizeof(text)))
			TH_LOG("%s", text);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref,
						 sizeof(ref), NULL, 0, NULL, NULL, text,
						 sizeof(text)));
	}
}

/* Expects system @i in @st to be in state @want, with a reason if and only if it is down. */
#define EXPECT_SYSTEM(st, i, want) do {							\
	EXPECT_EQ(want, (st).part[i].state) TH_LOG("system %d: state %u (%s)", i,		\
						   (st).part[i].state, (st).part[i].reason);	\
	if ((want) == WSE_LINK_PART_DOWN) {						\
		EXPECT_NE(0, (st).part[i].reason[0]) TH_LOG("system %d: no reason", i);	\
	} else {									\
		EXPECT_STREQ("", (st).part[i].reason) TH_LOG("system %d", i);		\
	}										\
} while (0)

/*
 * kill -9 of a part mid-run fails the RUN with a text naming the part; the
 * appliance starts the part again and the next job trains. The
 * coordinator's death closes the link: the host attaches again.
 */
static void kill_mid_run(struct __test_metadata *_metadata, FIXTURE_DATA(appl) *self,
			 const char *part, const char *named)
{
	static float loss[40 * BATCH];
	char text[512] = "";
	pid_t victim;
	uint32_t st;

	ASSERT_EQ(0, start(self, 2, "--fw-arg=--fault-delay-ms=2"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	victim = part_pid(self, part);
	ASSERT_LT(0, victim);
	st = train_kill(self, 1, 0, 40, true, loss, 10, victim, text, sizeof(text));
	EXPECT_NE(0, st);
	EXPECT_NE(NULL, strstr(text, named)) TH_LOG("%s", text);
	ASSERT_NE(0, restarted(self, part, victim)) TH_LOG("%s was not started again", part);
	if (!strcmp(part, "coordinator")) {
		disconnect(self);
		ASSERT_EQ(0, connect_appliance(self, WSE_LINK_CAP_EXEC | WSE_LINK_CAP_APPLIANCE));
	} else {
		struct wse_link_appliance_state state;

		/* The device is still there: its link answers, its state says what went. */
		ASSERT_EQ(0, appliance_state(self, &state, text, sizeof(text))) TH_LOG("%s", text);
		EXPECT_NE(NULL, strstr(state.reason, named)) TH_LOG("%s", state.reason);
		/*
		 * A system killed is down, though started again, until a job
		 * connects it; the job let go of the systems that answered.
		 * (MemoryX may be up again: the failing job's last calls
		 * connect it once it listens.)
		 */
		EXPECT_SYSTEM(state, 0, WSE_LINK_PART_IDLE);
		EXPECT_SYSTEM(state, 1, strcmp(part, "system-1") ? WSE_LINK_PART_IDLE :
								 WSE_LINK_PART_DOWN);
		if (strcmp(part, "memoryx"))
			EXPECT_EQ(WSE_LINK_PART_UP, state.memoryx_state);
		EXPECT_EQ(WSE_LINK_PART_UP, state.swarmx_state);
	}
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 3, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	if (strcmp(part, "coordinator")) {
		struct wse_link_appliance_state state;

		/* The next job connected every part it needs again. */
		ASSERT_EQ(0, appliance_state(self, &state, text, sizeof(text))) TH_LOG("%s", text);
		EXPECT_SYSTEM(state, 0, WSE_LINK_PART_UP);
		EXPECT_SYSTEM(state, 1, WSE_LINK_PART_UP);
		EXPECT_EQ(WSE_LINK_PART_UP, state.memoryx_state);
		EXPECT_EQ(WSE_LINK_PART_UP, state.swarmx_state);
	}
}

TEST_F_TIMEOUT(appl, kill_a_system_mid_run, 120)
{
	kill_mid_run(_metadata, self, "system-1", "system 1");
}

TEST_F_TIMEOUT(appl, kill_memoryx_mid_run, 120)
{
	kill_mid_run(_metadata, self, "memoryx", "MemoryX");
}

TEST_F_TIMEOUT(appl, kill_the_coordinator_mid_run, 120)
{
	kill_mid_run(_metadata, self, "coordinator", "");
}

/*
 * Each part's own state (issue 25): a system killed mid-run is down with
 * its reason while the other, which the failed job let go, is idle, and
 * MemoryX, SwarmX and the input workers stay up; a job on one system
 * brings its system up and leaves the killed one down until a job
 * connects it again, which brings it up. The last failure is kept.
 * A system and SwarmX killed between jobs are down at once, the rest
 * up, until the next job connects them; a new user node finds every part
 * idle and no failure.
 */
TEST_F_TIMEOUT(appl, each_part_shows_its_own_state, 180)
{
	static float loss[40 * BATCH];
	struct wse_link_appliance_state st;
	char text[512] = "";
	pid_t victim;

	ASSERT_EQ(0, start(self, 2, "--fw-arg=--fault-delay-ms=2"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	victim = part_pid(self, "system-1");
	ASSERT_LT(0, victim);
	EXPECT_NE(0, train_kill(self, 1, 0, 40, true, loss, 10, victim, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "system 1")) TH_LOG("%s", text);
	ASSERT_NE(0, restarted(self, "system-1", victim));

	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_SYSTEM(st, 0, WSE_LINK_PART_IDLE);
	EXPECT_SYSTEM(st, 1, WSE_LINK_PART_DOWN);
	EXPECT_EQ(WSE_LINK_PART_UP, st.memoryx_state);
	EXPECT_EQ(WSE_LINK_PART_UP, st.swarmx_state);
	EXPECT_EQ(WSE_LINK_PART_UP, st.input_state);
	EXPECT_NE(NULL, strstr(st.reason, "system 1")) TH_LOG("%s", st.reason);

	/* A job on one system: the first that answers, system 0. */
	ASSERT_EQ(0, set_job(self, 1, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(1, st.job_systems);
	EXPECT_SYSTEM(st, 0, WSE_LINK_PART_UP);
	EXPECT_SYSTEM(st, 1, WSE_LINK_PART_DOWN);
	EXPECT_EQ(WSE_LINK_PART_UP, st.memoryx_state);
	EXPECT_EQ(WSE_LINK_PART_UP, st.swarmx_state);
	/* The last failure stays, though its job was replaced. */
	EXPECT_NE(NULL, strstr(st.reason, "system 1")) TH_LOG("%s", st.reason);

	/* A job on both connects the restarted system again. */
	ASSERT_EQ(0, set_job(self, 2, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(2, st.job_systems);
	EXPECT_SYSTEM(st, 0, WSE_LINK_PART_UP);
	EXPECT_SYSTEM(st, 1, WSE_LINK_PART_UP);

	/* System 0 and SwarmX killed between RUNs: down, system 1 and MemoryX still up. */
	victim = part_pid(self, "system-0");
	ASSERT_LT(0, victim);
	kill(victim, SIGKILL);
	ASSERT_NE(0, restarted(self, "system-0", victim));
	victim = part_pid(self, "swarmx");
	ASSERT_LT(0, victim);
	kill(victim, SIGKILL);
	ASSERT_NE(0, restarted(self, "swarmx", victim));
	for (int i = 0; i < 500; i++) {
		ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
		if (st.part[0].state != WSE_LINK_PART_UP && st.swarmx_state != WSE_LINK_PART_UP)
			break;
		usleep(10000);
	}
	EXPECT_SYSTEM(st, 0, WSE_LINK_PART_DOWN);
	EXPECT_SYSTEM(st, 1, WSE_LINK_PART_UP);
	EXPECT_EQ(WSE_LINK_PART_UP, st.memoryx_state);
	EXPECT_EQ(WSE_LINK_PART_DOWN, st.swarmx_state);
	EXPECT_NE(NULL, strstr(st.reason, "SwarmX")) TH_LOG("%s", st.reason);

	/* A job on one system takes system 0 again, started anew, and SwarmX. */
	ASSERT_EQ(0, set_job(self, 1, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_SYSTEM(st, 0, WSE_LINK_PART_UP);
	EXPECT_SYSTEM(st, 1, WSE_LINK_PART_UP);
	EXPECT_EQ(WSE_LINK_PART_UP, st.swarmx_state);

	/* A new user node starts clean: nothing connected, nothing down. */
	disconnect(self);
	ASSERT_EQ(0, connect_appliance(self, WSE_LINK_CAP_EXEC | WSE_LINK_CAP_APPLIANCE));
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, st.job_systems);
	EXPECT_SYSTEM(st, 0, WSE_LINK_PART_IDLE);
	EXPECT_SYSTEM(st, 1, WSE_LINK_PART_IDLE);
	EXPECT_EQ(WSE_LINK_PART_IDLE, st.memoryx_state);
	EXPECT_EQ(WSE_LINK_PART_IDLE, st.swarmx_state);
	EXPECT_EQ(WSE_LINK_PART_IDLE, st.input_state);
	EXPECT_STREQ("", st.reason);
}

/*
 * A checkpoint (MemoryX's weights, optimizer state and step count) taken
 * after 3 steps, the appliance stopped, a new one started and the
 * checkpoint written back: 3 more steps end with the bits of 6 steps
 * never interrupted.
 */
TEST_F_TIMEOUT(appl, resume_on_a_new_appliance_is_bit_for_bit, 120)
{
	static struct snapshot whole, ckpt, resumed;
	static float loss[6 * BATCH];
	char text[512] = "";

	ASSERT_EQ(0, start(self, 2, "--log-level=info"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 4, 0, 6, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &whole, false, text, sizeof(text)));
	stop(self);

	ASSERT_EQ(0, start(self, 2, "--log-level=info"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 4, 0, 3, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &ckpt, false, text, sizeof(text)));
	stop(self);

	ASSERT_EQ(0, start(self, 4, "--log-level=info"));
	ASSERT_EQ(0, set_job(self, 4, text, sizeof(text)));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &ckpt, true, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 4, 3, 3, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &resumed, false, text, sizeof(text)));
	EXPECT_EQ(0, memcmp(whole.w, resumed.w, sizeof(whole.w)));
	EXPECT_EQ(0, memcmp(whole.state, resumed.state, sizeof(whole.state)));
}

/* ------------------------------------------------ CANCEL, read-ahead, params by slot */

/* PROGRAM_LOAD of @len bytes of @image at @off (of @total) into @slot; @last: the final piece. */
static uint32_t load_piece(FIXTURE_DATA(appl) *self, uint32_t slot, const uint8_t *image,
			   size_t total, size_t off, size_t len, bool last, char *text,
			   size_t textlen)
{
	struct wse_link_prog_load_info in = { .program = slot, .total = total, .offset = off,
					      .flags = last ? WSE_LINK_PROG_LAST : 0 };
	struct wse_link_program_load raw;
	uint8_t reply[64];

	wse_link_prog_load_encode(&raw, &in);
	return call(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw, sizeof(raw), image + off, len,
		    reply, NULL, text, textlen);
}

static uint32_t unload_slot(FIXTURE_DATA(appl) *self, uint32_t slot, char *text, size_t textlen)
{
	struct wse_link_program_ref ref;

	wse_link_prog_ref_encode(&ref, slot);
	return call(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref, sizeof(ref), NULL, 0, NULL, NULL,
		    text, textlen);
}

/* PARAMS of @which on @slot: a write of @len bytes of @buf, or a read into it. */
static uint32_t params_on(FIXTURE_DATA(appl) *self, uint32_t slot, bool write, uint32_t which,
			  void *buf, uint32_t len, char *text, size_t textlen)
{
	struct wse_link_params_info in = { slot, which, 0, len };
	struct wse_link_params raw;

	wse_link_params_encode(&raw, &in);
	return call(self, write ? WSE_LINK_OP_PARAMS_WRITE : WSE_LINK_OP_PARAMS_READ, Q_CTL, &raw,
		    sizeof(raw), write ? buf : NULL, write ? len : 0, write ? NULL : buf, NULL,
		    text, textlen);
}

static uint32_t job_on(FIXTURE_DATA(appl) *self, uint32_t slot, uint32_t systems, char *text,
		       size_t textlen)
{
	struct wse_link_job_info job = { systems };
	struct wse_link_job body;

	wse_link_job_encode(&body, &job);
	return params_on(self, slot, true, WSE_LINK_PARAMS_JOB, &body, sizeof(body), text, textlen);
}

static uint32_t dataset_input_on(FIXTURE_DATA(appl) *self, uint32_t slot, char *text,
				 size_t textlen)
{
	struct wse_link_input_info info = { .source = WSE_LINK_INPUT_DATASET, .dataset = "tiny",
					    .split = "train" };
	struct wse_link_input body;

	wse_link_input_encode(&body, &info);
	return params_on(self, slot, true, WSE_LINK_PARAMS_INPUT, &body, sizeof(body), text,
			 textlen);
}

/* A request submitted now, answered only once it has waited @ms: its tag (0 if it was answered). */
static uint32_t submit_waiting(FIXTURE_DATA(appl) *self, uint8_t op, uint16_t q, uint32_t stream,
			       const void *data, uint32_t len, int ms)
{
	struct wse_link_stream_info in = { SLOT, stream, len, 0 };
	struct wse_link_stream raw;
	struct iovec iov[2] = { { &raw, sizeof(raw) }, { (void *)data, len } };
	struct wse_link_err err;
	uint32_t tag, st;
	size_t rest;

	wse_link_stream_encode(&raw, &in);
	if (wse_link_client_submit(&self->cl, op, q, iov, data ? 2 : 1, &tag, &err))
		return 0;
	if (wse_link_client_wait(&self->cl, tag, ms, &st, &rest, &err) != -ETIMEDOUT)
		return 0;
	return tag;
}

/* CANCELs @tag and waits for its answer: its status, its text in @text. */
static uint32_t cancel_and_wait(FIXTURE_DATA(appl) *self, uint32_t tag, char *text,
				size_t textlen)
{
	struct wse_link_err err;
	uint32_t st;
	size_t rest;

	if (wse_link_client_cancel(&self->cl, tag, IO_MS, &st, &err) || st)
		return 0xdead;
	if (wse_link_client_wait(&self->cl, tag, IO_MS, &st, &rest, &err))
		return 0xdead;
	if (st)
		wse_link_client_text(&self->cl, rest, text, textlen);
	return st;
}

/*
 * A pipelined program's STREAM_READ waiting on its system is cancelled
 * there too: the coordinator sends CANCEL for its own request on the
 * system's link and relays the system's E_CANCELED, and the system's
 * queue carries the next read (which would otherwise wait behind the
 * first, and the step's losses go to it).
 */
TEST_F(appl, cancel_of_a_forwarded_read_reaches_the_system)
{
	static float loss[BATCH];
	char text[512] = "";
	uint32_t tag;

	ASSERT_EQ(0, start(self, 1, "--log-level=info"));
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_CANCEL);
	ASSERT_EQ(0, load(self, self->pipe, self->pipe_len, text, sizeof(text))) TH_LOG("%s", text);
	tag = submit_waiting(self, WSE_LINK_OP_STREAM_READ, Q_OUT, S_LOSSES, NULL, BATCH * 4, 300);
	ASSERT_NE(0U, tag);
	EXPECT_EQ(WSE_LINK_E_CANCELED, cancel_and_wait(self, tag, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "waited for data")) TH_LOG("not the system's answer: %s", text);
	ASSERT_EQ(0, train(self, 1, 0, 1, true, loss, text, sizeof(text))) TH_LOG("%s", text);
}

/*
 * The weight-streaming job's waits end at a CANCEL too: a read of losses
 * not there, a write into a full input ring (whose samples never go in),
 * a RUN waiting for a batch (the job stops as after a failure and must be
 * loaded again).
 */
TEST_F_TIMEOUT(appl, cancel_ends_the_jobs_waits, 120)
{
	static uint8_t px[BATCH * IN];
	static int32_t labels[BATCH], preds[BATCH];
	static float loss[BATCH];
	char text[512] = "";
	uint32_t tag, run;

	ASSERT_EQ(0, start(self, 1, "--log-level=info"));
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	tag = submit_waiting(self, WSE_LINK_OP_STREAM_READ, Q_OUT, S_LOSSES, NULL, BATCH * 4, 300);
	ASSERT_NE(0U, tag);
	EXPECT_EQ(WSE_LINK_E_CANCELED, cancel_and_wait(self, tag, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "output")) TH_LOG("%s", text);

	/* The input ring holds four batches: a fifth write waits, and is cancelled. */
	for (uint32_t s = 0; s < 4; s++) {
		make_batch(2, s, px, labels);
		ASSERT_EQ(0, write_stream(self, S_SAMPLES, px, sizeof(px), text, sizeof(text)));
		ASSERT_EQ(0, write_stream(self, S_LABELS, labels, sizeof(labels), text, sizeof(text)));
	}
	tag = submit_waiting(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_SAMPLES, px, sizeof(px), 300);
	ASSERT_NE(0U, tag);
	EXPECT_EQ(WSE_LINK_E_CANCELED, cancel_and_wait(self, tag, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "room")) TH_LOG("%s", text);

	/* A RUN of five steps does the four batches there and waits for a fifth. */
	ASSERT_EQ(0, run_start(self, WSE_LINK_RUN_TRAIN, 5, &run));
	for (uint32_t s = 0; s < 4; s++) {
		ASSERT_EQ(0, read_all(self, S_LOSSES, loss, sizeof(loss), text, sizeof(text)))
			TH_LOG("%s", text);
		ASSERT_EQ(0, read_all(self, S_PREDS, preds, sizeof(preds), text, sizeof(text)));
	}
	usleep(300000);
	EXPECT_EQ(WSE_LINK_E_CANCELED, cancel_and_wait(self, run, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "after 4 of 5 steps")) TH_LOG("%s", text);
	{
		struct wse_link_run_info in = { .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
						.steps = 1, .batch = BATCH };
		struct wse_link_run rr;

		wse_link_run_encode(&rr, &in);
		EXPECT_EQ(WSE_LINK_E_INVAL, call(self, WSE_LINK_OP_RUN, Q_RUN, &rr, sizeof(rr), NULL,
						 0, NULL, NULL, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "cancelled")) TH_LOG("%s", text);
	}
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 1, true, loss, text, sizeof(text))) TH_LOG("%s", text);
}

/* Answers noted by tag, for requests sent by hand past the client's 32. */
struct noted {
	uint32_t count, status;
	char text[160];
};

static uint32_t raw_send(FIXTURE_DATA(appl) *self, uint8_t op, uint16_t q, uint32_t tag,
			 const void *payload, size_t len)
{
	struct wse_link_frame f = { .version = self->cl.rules.version, .opcode = op, .queue = q,
				    .tag = tag };
	struct iovec iov = { (void *)payload, len };
	struct wse_link_err err;

	return wse_link_send(self->fd, &f, &iov, len ? 1 : 0, IO_MS, &err) ? 0 : tag;
}

/* Notes answers (tags @base ..) until @tag's has come, or @ms passed: 0 or -1. */
static int raw_until(FIXTURE_DATA(appl) *self, struct noted *seen, uint32_t base, uint32_t n,
		     uint32_t tag, int ms)
{
	int64_t end = wse_link_now_ms() + ms;

	while (tag == 0 || !seen[tag - base].count) {
		struct wse_link_frame f;
		struct wse_link_err err;
		const uint8_t *rest;
		size_t rest_len;
		uint32_t status;
		int64_t left = end - wse_link_now_ms();
		struct noted *a;

		if (left <= 0 || wse_link_recv(self->fd, &self->cl.rules, &f, self->cl.buf,
					       self->cl.cap, (int)left, &err))
			return -1;
		if (f.tag < base || f.tag >= base + n ||
		    wse_link_status_decode(self->cl.buf, f.length, &status, &rest, &rest_len, &err))
			return -2;
		a = &seen[f.tag - base];
		a->count++;
		a->status = status;
		snprintf(a->text, sizeof(a->text), "%.*s", (int)(rest_len < 159 ? rest_len : 159),
			 (const char *)rest);
	}
	return 0;
}

/*
 * The coordinator refuses what it cannot queue rather than stop reading:
 * 300 reads of a pipelined program's losses, which wait, over the four
 * queues: 256 held (four forwarded to the system, the rest queued here),
 * 44 refused at once; a keepalive after them answered at once. Cancelled,
 * each held one is answered E_CANCELED once, and the program trains.
 */
TEST_F_TIMEOUT(appl, backlog_refused_not_stalled_and_cancelled, 120)
{
	enum { N = 300, BASE = 10000, KA = BASE + 2 * N, TAGS = 2 * N + 2 };
	static struct noted seen[TAGS];
	static float loss[BATCH];
	struct wse_link_stream_info in = { SLOT, S_LOSSES, BATCH * 4, 0 };
	struct wse_link_stream raw;
	int held = 0, busy = 0, relayed = 0;
	char text[512] = "";
	int64_t t0;

	ASSERT_EQ(0, start(self, 1, "--log-level=info"));
	ASSERT_EQ(0, load(self, self->pipe, self->pipe_len, text, sizeof(text))) TH_LOG("%s", text);
	wse_link_stream_encode(&raw, &in);
	for (uint32_t i = 0; i < N; i++)
		ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_STREAM_READ, (uint16_t)(i % 4), BASE + i,
				       &raw, sizeof(raw)));
	t0 = wse_link_now_ms();
	ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_KEEPALIVE, 0, KA, NULL, 0));
	ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, KA, 2000))
		TH_LOG("a keepalive after %d waiting requests got no answer", N);
	EXPECT_GT(2000, wse_link_now_ms() - t0);
	for (uint32_t i = 0; i < N; i++) {
		if (!seen[i].count) {
			held++;
			continue;
		}
		EXPECT_EQ(WSE_LINK_E_BUSY, seen[i].status) TH_LOG("%u: %s", i, seen[i].text);
		busy++;
	}
	EXPECT_EQ((int)WSE_LINK_QUEUED_REQS, held);
	EXPECT_EQ(N - (int)WSE_LINK_QUEUED_REQS, busy);
	/* Time for each queue's worker to have forwarded its first read to the system. */
	usleep(500000);
	for (int i = (int)WSE_LINK_QUEUED_REQS - 1; i >= 0; i--) {
		struct wse_link_cancel c;

		wse_link_cancel_encode(&c, BASE + (uint32_t)i);
		ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_CANCEL, 0, BASE + N + (uint32_t)i, &c,
				       sizeof(c)));
	}
	for (uint32_t i = 0; i < WSE_LINK_QUEUED_REQS; i++) {
		ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, BASE + N + i, IO_MS));
		EXPECT_EQ(WSE_LINK_OK, seen[N + i].status);
		ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, BASE + i, IO_MS)) TH_LOG("request %u", i);
		EXPECT_EQ(WSE_LINK_E_CANCELED, seen[i].status) TH_LOG("%u: %s", i, seen[i].text);
		relayed += strstr(seen[i].text, "waited for data") != NULL;
	}
	/* The four on the system came back from it. */
	EXPECT_EQ(4, relayed);
	EXPECT_EQ(-1, raw_until(self, seen, BASE, TAGS, 0, 300));
	/* One answer each: the requests, their CANCELs, the keepalive. */
	for (uint32_t i = 0; i < 2 * N; i++) {
		EXPECT_EQ(i < N + WSE_LINK_QUEUED_REQS ? 1U : 0U, seen[i].count) TH_LOG("tag %u", BASE + i);
	}
	EXPECT_EQ(1U, seen[KA - BASE].count);
	ASSERT_EQ(0, train(self, 1, 0, 1, true, loss, text, sizeof(text))) TH_LOG("%s", text);
}

/*
 * The appliance's own params go by slot: JOB on a slot is that slot's next
 * program's (and goes when it is unloaded), on slot 0 every later one's;
 * APPLIANCE is read on slot 0; INPUT is written on the slot of a loaded
 * program only, so an empty slot or slot 0 cannot turn another user's job
 * over to the input workers.
 */
TEST_F_TIMEOUT(appl, params_go_by_slot, 120)
{
	static uint8_t px[16 * BATCH * IN], batch_px[BATCH * IN];
	static int32_t labels[16 * BATCH];
	struct wse_link_appliance_state st;
	struct wse_link_job body;
	char root[128], arg[160], text[512] = "";
	uint8_t state[64];

	snprintf(root, sizeof(root), "%s/data", self->dir);
	ASSERT_EQ(0, write_dataset(root, 16 * BATCH, px, labels));
	snprintf(arg, sizeof(arg), "--data-root=%s", root);
	ASSERT_EQ(0, start(self, 2, arg));

	EXPECT_EQ(WSE_LINK_E_INVAL, params_on(self, 0, false, WSE_LINK_PARAMS_JOB, &body,
					      sizeof(body), text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, params_on(self, 1, false, WSE_LINK_PARAMS_APPLIANCE, state,
					      sizeof(state), text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "slot 0")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, params_on(self, 0, true, 9, state, 8, text, sizeof(text)));
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);

	/* Slot 2's job asks for two systems: slot 1's pipelined program loads as ever. */
	ASSERT_EQ(0, job_on(self, 2, 2, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load_piece(self, 1, self->pipe, self->pipe_len, 0, self->pipe_len, true, text,
				sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, load_piece(self, 2, self->pipe, self->pipe_len, 0,
					       self->pipe_len, true, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "runs on one system")) TH_LOG("%s", text);
	/* Unloading slot 2 forgets its job (it held nothing else). */
	EXPECT_EQ(WSE_LINK_OK, unload_slot(self, 2, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, unload_slot(self, 2, text, sizeof(text)));
	ASSERT_EQ(0, load_piece(self, 2, self->pipe, self->pipe_len, 0, self->pipe_len, true, text,
				sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_OK, unload_slot(self, 2, text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_OK, unload_slot(self, 1, text, sizeof(text)));

	/* The weight-streaming job of slot 1 on the one system its slot asked for, not all. */
	ASSERT_EQ(0, job_on(self, 1, 1, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(1U, st.job_systems);

	/* INPUT on slot 0 or an empty slot is refused, and the job still takes the host's samples. */
	EXPECT_EQ(WSE_LINK_E_INVAL, dataset_input_on(self, 0, text, sizeof(text)));
	EXPECT_EQ(WSE_LINK_E_INVAL, dataset_input_on(self, 4, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "slot 4")) TH_LOG("%s", text);
	EXPECT_EQ(0, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px), text, sizeof(text)))
		TH_LOG("the job's input changed: %s", text);
	/* On its own slot it takes effect (on a fresh load: the host's samples are gone). */
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, dataset_input_on(self, SLOT, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, write_stream(self, S_SAMPLES, batch_px, sizeof(batch_px), text,
						 sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "input workers")) TH_LOG("%s", text);
}

/* ------------------------------------------- systems of their own: the job, pipelined programs */

/* The steps each system ran, from the appliance's state: 0 with @steps[i] set, or the status. */
static uint32_t system_steps(FIXTURE_DATA(appl) *self, uint64_t steps[2], uint32_t *job_systems)
{
	struct wse_link_appliance_state st;
	char text[256];
	uint32_t status = appliance_state(self, &st, text, sizeof(text));

	steps[0] = st.part[0].steps;
	steps[1] = st.part[1].steps;
	*job_systems = st.job_systems;
	return status;
}

/*
 * A system runs the weight-streaming job or layer-pipelined programs,
 * never both: a job of every system leaves none for a pipelined program
 * (E_BUSY); with a pipelined program loaded, a job of two systems is
 * refused (E_BUSY, saying which slot holds which system), one of one
 * system lands on the other system, and the default is every free one; a
 * second pipelined program goes beside the first, outside the job.
 */
TEST_F_TIMEOUT(appl, the_job_and_pipelined_programs_take_systems_of_their_own, 120)
{
	static float loss[2 * BATCH];
	uint64_t steps[2];
	uint32_t job_systems;
	char text[512] = "";

	ASSERT_EQ(0, start(self, 2, "--log-level=info"));
	/* The job by default on both: no system is left for a pipelined program. */
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, system_steps(self, steps, &job_systems));
	EXPECT_EQ(2U, job_systems);
	EXPECT_EQ(WSE_LINK_E_BUSY, load_piece(self, 2, self->pipe, self->pipe_len, 0,
					      self->pipe_len, true, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "every system")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "slot 1")) TH_LOG("%s", text);
	ASSERT_EQ(WSE_LINK_OK, unload_slot(self, SLOT, text, sizeof(text))) TH_LOG("%s", text);

	/* A pipelined program first: it takes system 0. */
	ASSERT_EQ(0, load_piece(self, 2, self->pipe, self->pipe_len, 0, self->pipe_len, true, text,
				sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, job_on(self, SLOT, 2, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_BUSY, load(self, self->ws, self->ws_len, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "1 of the appliance's 2 is free")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "system 0 holds the layer-pipelined program of slot 2"))
		TH_LOG("%s", text);
	/* No JOB: every free system, that is one. */
	ASSERT_EQ(WSE_LINK_OK, unload_slot(self, SLOT, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, system_steps(self, steps, &job_systems));
	EXPECT_EQ(1U, job_systems);
	ASSERT_EQ(WSE_LINK_OK, unload_slot(self, SLOT, text, sizeof(text))) TH_LOG("%s", text);

	/* A job of one system: on system 1, where it trains. */
	ASSERT_EQ(0, job_on(self, SLOT, 1, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 1, 0, 2, true, loss, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, system_steps(self, steps, &job_systems));
	EXPECT_EQ(1U, job_systems);
	EXPECT_EQ(0U, steps[0]);
	EXPECT_EQ(2U, steps[1]);
	/* A second pipelined program: beside the first, outside the job. */
	ASSERT_EQ(0, load_piece(self, 3, self->pipe, self->pipe_len, 0, self->pipe_len, true, text,
				sizeof(text))) TH_LOG("%s", text);
	/* With the pipelined programs gone, the job may have both systems again. */
	ASSERT_EQ(WSE_LINK_OK, unload_slot(self, 2, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, job_on(self, SLOT, 2, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_BUSY, load(self, self->ws, self->ws_len, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "slot 3")) TH_LOG("%s", text);
	ASSERT_EQ(WSE_LINK_OK, unload_slot(self, 3, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, system_steps(self, steps, &job_systems));
	EXPECT_EQ(2U, job_systems);
	/* A pipelined program loaded into the job's own slot replaces the job. */
	ASSERT_EQ(0, job_on(self, SLOT, 1, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->pipe, self->pipe_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, system_steps(self, steps, &job_systems));
	EXPECT_EQ(0U, job_systems);
}

/* A RUN of one step of the program in @slot on queue @q, which waits for its batch: its tag, or 0. */
static uint32_t run_waiting(FIXTURE_DATA(appl) *self, uint32_t slot, uint16_t q)
{
	struct wse_link_run_info in = { .program = slot, .kind = WSE_LINK_RUN_TRAIN, .steps = 1,
					.batch = BATCH };
	struct wse_link_run raw;
	struct iovec iov = { &raw, sizeof(raw) };
	struct wse_link_err err;
	uint32_t tag, st;
	size_t rest;

	wse_link_run_encode(&raw, &in);
	if (wse_link_client_submit(&self->cl, WSE_LINK_OP_RUN, q, &iov, 1, &tag, &err))
		return 0;
	if (wse_link_client_wait(&self->cl, tag, 300, &st, &rest, &err) != -ETIMEDOUT)
		return 0;
	return tag;
}

/*
 * Another user's pipelined program, on the system outside the job, starts
 * a RUN and never feeds it, on queue 0 (where the job's RUNs go) and then
 * on queue 3 (where the coordinator sends the job's weights, and this
 * test its params): the job's steps go on meanwhile, with the bits of
 * steps never disturbed; the appliance's state and counters answer, and
 * another pipelined program loads beside it and unloads (the coordinator
 * asks the systems for those on a queue of its own). Cancelled, each RUN
 * ends there.
 */
TEST_F_TIMEOUT(appl, a_pipelined_run_never_fed_does_not_stop_the_job, 120)
{
	static float ref[2 * BATCH], loss[2 * BATCH];
	static struct snapshot ref_sn, sn;
	static const uint16_t queues[2] = { Q_RUN, Q_CTL };
	char text[512] = "";

	ASSERT_EQ(0, start(self, 2, "--log-level=info"));
	ASSERT_EQ(0, load_piece(self, 2, self->pipe, self->pipe_len, 0, self->pipe_len, true, text,
				sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, job_on(self, SLOT, 1, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, train(self, 7, 0, 2, true, ref, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, snap(self, &ref_sn, false, text, sizeof(text))) TH_LOG("%s", text);
	/* Loaded again, the job starts afresh: the same two steps beside the unfed RUNs. */
	ASSERT_EQ(0, load(self, self->ws, self->ws_len, text, sizeof(text))) TH_LOG("%s", text);
	for (int i = 0; i < 2; i++) {
		struct wse_link_appliance_state st;
		struct wse_link_dev_stats stats;
		int64_t t0;
		uint32_t tag;

		TH_LOG("the pipelined program's RUN on queue %u", queues[i]);
		tag = run_waiting(self, 2, queues[i]);
		ASSERT_NE(0U, tag);
		ASSERT_EQ(0, train(self, 7, (uint32_t)i, 1, true, loss + i * BATCH, text,
				   sizeof(text))) TH_LOG("%s", text);
		EXPECT_EQ(0, memcmp(ref + i * BATCH, loss + i * BATCH, BATCH * 4)) TH_LOG("step %d", i);
		t0 = wse_link_now_ms();
		ASSERT_EQ(0, appliance_state(self, &st, text, sizeof(text))) TH_LOG("%s", text);
		EXPECT_EQ(0, call(self, WSE_LINK_OP_DEVICE_STATS, Q_RUN, NULL, 0, NULL, 0, &stats,
				  NULL, text, sizeof(text))) TH_LOG("%s", text);
		/* Another program beside it: loaded and unloaded on the coordinator's own queue. */
		EXPECT_EQ(0, load_piece(self, 4, self->pipe, self->pipe_len, 0, self->pipe_len, true,
					text, sizeof(text))) TH_LOG("%s", text);
		EXPECT_EQ(0, unload_slot(self, 4, text, sizeof(text))) TH_LOG("%s", text);
		EXPECT_GT(5000, wse_link_now_ms() - t0);
		EXPECT_EQ(WSE_LINK_E_CANCELED, cancel_and_wait(self, tag, text, sizeof(text)));
		EXPECT_NE(NULL, strstr(text, "0 of 1 steps")) TH_LOG("not the system's answer: %s",
								     text);
	}
	ASSERT_EQ(0, snap(self, &sn, false, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, memcmp(&ref_sn, &sn, sizeof(sn)));
}

/*
 * Many pipelined programs on one system, each with a read waiting on every
 * queue (68 requests, more than a link to a system has places for): the
 * coordinator forwards 48 and holds the rest, so that its own requests
 * find a place: another program loads, and the counters answer. Each
 * read, cancelled, is answered once (E_CANCELED, by the system or, for
 * one still held, by the coordinator), and the programs train.
 */
TEST_F_TIMEOUT(appl, waiting_programs_leave_the_coordinator_room_on_their_system, 120)
{
	enum { PROGS = 17, N = PROGS * 4, BASE = 20000, LOAD = BASE + 2 * N, STATS = LOAD + 1,
	       TAGS = 2 * N + 2 };
	static struct noted seen[TAGS];
	static float loss[BATCH];
	char text[512] = "";
	int64_t t0;

	ASSERT_EQ(0, start(self, 1, "--log-level=info"));
	for (uint32_t slot = 1; slot <= PROGS; slot++) {
		ASSERT_EQ(0, load_piece(self, slot, self->pipe, self->pipe_len, 0, self->pipe_len,
					true, text, sizeof(text))) TH_LOG("slot %u: %s", slot, text);
	}
	for (uint32_t i = 0; i < N; i++) {
		struct wse_link_stream_info in = { 1 + i / 4, S_LOSSES, BATCH * 4, 0 };
		struct wse_link_stream raw;

		wse_link_stream_encode(&raw, &in);
		ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_STREAM_READ, (uint16_t)(i % 4), BASE + i,
				       &raw, sizeof(raw)));
	}
	/* Time for every lane to have forwarded its read, or to wait for a place. */
	usleep(500000);
	t0 = wse_link_now_ms();
	{
		struct wse_link_prog_load_info in = { .program = PROGS + 1, .total = self->pipe_len,
						      .flags = WSE_LINK_PROG_LAST };
		struct wse_link_program_load hdr;
		uint8_t *frame = malloc(sizeof(hdr) + self->pipe_len);

		ASSERT_NE(NULL, frame);
		wse_link_prog_load_encode(&hdr, &in);
		memcpy(frame, &hdr, sizeof(hdr));
		memcpy(frame + sizeof(hdr), self->pipe, self->pipe_len);
		ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, LOAD, frame,
				       sizeof(hdr) + self->pipe_len));
		free(frame);
	}
	ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_DEVICE_STATS, Q_RUN, STATS, NULL, 0));
	ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, LOAD, 10000))
		TH_LOG("the load beside %d waiting reads got no answer", N);
	EXPECT_EQ(WSE_LINK_OK, seen[LOAD - BASE].status) TH_LOG("%s", seen[LOAD - BASE].text);
	ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, STATS, 10000));
	EXPECT_EQ(WSE_LINK_OK, seen[STATS - BASE].status) TH_LOG("%s", seen[STATS - BASE].text);
	EXPECT_GT(10000, wse_link_now_ms() - t0);
	for (uint32_t i = 0; i < N; i++) {
		struct wse_link_cancel c;

		EXPECT_EQ(0U, seen[i].count) TH_LOG("read %u answered before its CANCEL", i);
		wse_link_cancel_encode(&c, BASE + i);
		ASSERT_NE(0U, raw_send(self, WSE_LINK_OP_CANCEL, 0, BASE + N + i, &c, sizeof(c)));
	}
	for (uint32_t i = 0; i < N; i++) {
		ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, BASE + N + i, IO_MS));
		ASSERT_EQ(0, raw_until(self, seen, BASE, TAGS, BASE + i, IO_MS)) TH_LOG("read %u", i);
		EXPECT_EQ(WSE_LINK_E_CANCELED, seen[i].status) TH_LOG("%u: %s", i, seen[i].text);
	}
	EXPECT_EQ(-1, raw_until(self, seen, BASE, TAGS, 0, 300));
	for (uint32_t i = 0; i < N; i++) {
		EXPECT_EQ(1U, seen[i].count) TH_LOG("tag %u", BASE + i);
	}
	ASSERT_EQ(0, train(self, 1, 0, 1, true, loss, text, sizeof(text))) TH_LOG("%s", text);
}

/*
 * PROGRAM_UNLOAD drops an image half loaded into its slot: the last piece
 * after it continues nothing.
 */
TEST_F(appl, unload_drops_a_half_loaded_image)
{
	char text[512] = "";
	size_t half = self->pipe_len / 2;

	ASSERT_EQ(0, start(self, 1, "--log-level=info"));
	ASSERT_EQ(0, load_piece(self, SLOT, self->pipe, self->pipe_len, 0, half, false, text,
				sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_OK, unload_slot(self, SLOT, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, load_piece(self, SLOT, self->pipe, self->pipe_len, half,
					       self->pipe_len - half, true, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "does not continue")) TH_LOG("%s", text);
	EXPECT_EQ(WSE_LINK_E_INVAL, unload_slot(self, SLOT, text, sizeof(text)));
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
