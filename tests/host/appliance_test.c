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

#include "kselftest_harness.h"
#include "wse/compiler.h"
#include "wse/engine.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"

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

static const char *appliance_binary(void)
{
	if (self_path && strstr(self_path, "host-tests-san"))
		return "build/san-bin/wse-appliance";
	return "build/bin/wse-appliance";
}

static int compile(const char *text, enum wsecc_mode mode, void **buf, size_t *len)
{
	static struct wsecc_model m;
	static struct wsecc_plan plan;
	struct wsecc_error err;
	struct wse_wafer w;
	char msg[256];

	if (wsecc_parse_string(text, "test.model", &m, &err) ||
	    wse_wafer_parse("64x64", &w, msg, sizeof(msg)) ||
	    wsecc_compile(&m, &w, mode, &plan, &err))
		return -1;
	return wsecc_emit(&m, &plan, plan.mode == WSEP_MODE_PIPELINED, buf, len, &err);
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
	argv[argc++] = appliance_binary();
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
		struct wse_link_stream_info in = { SLOT, stream, len - got };
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
	struct wse_link_stream_info in = { SLOT, stream, len };
	struct wse_link_stream raw;

	wse_link_stream_encode(&raw, &in);
	return call(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, &raw, sizeof(raw), data, len, NULL, NULL,
		    text, textlen);
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
	if (status)
		return status;	/* the RUN's answer says the same; the text is the first's */
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
static pid_t __attribute__((unused)) restarted(FIXTURE_DATA(appl) *self, const char *what, pid_t old)
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

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
