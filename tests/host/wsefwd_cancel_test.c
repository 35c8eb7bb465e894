// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of wsefwd's read-ahead bound and of CANCEL (issue 25): the
 * real daemon on a unix socket, spoken to in raw frames after
 * libwselink's handshake, so that hundreds of requests can be in flight.
 *
 * Before CANCEL and the E_BUSY refusal, 256 blocked requests made wsefwd
 * stop reading its socket: a keepalive sent after them was never
 * answered and the link died for every user of it. backlog_refused_not_stalled
 * shows that (run it with WSE_FWD=path/to/an/older/wsefwd).
 *
 * The binary is $WSE_FWD, else build/bin/wsefwd (build/san-bin/wsefwd for
 * the sanitizer build of this test), relative to the repository root.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fwd_daemon.h"
#include "kselftest_harness.h"
#include "test_model.h"
#include "wse/compiler.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/link_io.h"

#define IO_MS		20000
#define START_MS	5000
#define ANSWER_MS	10000	/* an answer that must come */
#define PROMPT_MS	2000	/* a keepalive's answer under any backlog */
#define QUIET_MS	300	/* how long "nothing more comes" is watched */
#define PROG		1
#define Q_RUN		0
#define Q_IN		1
#define Q_OUT		2
#define Q_CTL		3
#define QUEUES		4
/* Stream ids as the compiler emits them. */
#define S_SAMPLES	0
#define S_LABELS	1
#define S_LOSSES	2
#define S_PREDS		3
#define S_WEIGHTS(k)	(4 + (k) * 2)	/* weight streaming */
#define TAGS		8192

static const char *self_path;

/* 16 u8 inputs, 4 classes, batch 8: a sample is 16 bytes, a batch 128. */
static const char tiny_model[] =
	"model tiny\n"
	"input 16 u8\n"
	"dense 16 12 relu\n"
	"dense 12 4 none\n"
	"loss softmax_xent\n"
	"optimizer sgd lr=1e-2\n"
	"batch 8\n"
	"seed 3\n";
#define TINY_IN		16
#define TINY_BATCH	8
#define TINY_W0		(16 * 12 + 12)	/* layer 0's floats */
#define TINY_W1		(12 * 4 + 4)

/* @text compiled for this file's 16x16 wsefwd. */
static int compile(const char *text, enum wsecc_mode mode, void **buf, size_t *len)
{
	return test_compile_model(text, "16x16", mode, buf, len);
}

/* What came back for one tag: how many answers (must be one), the last's status and data. */
struct seen {
	uint32_t count;
	uint32_t status;
	uint8_t op;
	uint8_t *data;		/* malloc: what followed the status */
	size_t len;
};

FIXTURE(cancel) {
	char dir[64];
	char spec[160];
	char log[160];
	pid_t pid;
	struct wse_link_client cl;
	int fd;
	uint8_t *buf;
	uint32_t next_tag;
	struct seen seen[TAGS];
};

FIXTURE_SETUP(cancel)
{
	strcpy(self->dir, "/tmp/wsefwd_cancel.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->spec, sizeof(self->spec), "unix:%s/fwd.sock", self->dir);
	snprintf(self->log, sizeof(self->log), "%s/fwd.log", self->dir);
	self->pid = 0;
	self->fd = -1;
	self->buf = NULL;
	self->next_tag = 100;
	memset(self->seen, 0, sizeof(self->seen));
}

FIXTURE_TEARDOWN(cancel)
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
	for (int i = 0; i < TAGS; i++)
		free(self->seen[i].data);
	free(self->buf);
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

/* Starts wsefwd and shakes hands offering @max_payload. */
static int start(FIXTURE_DATA(cancel) *self, uint32_t max_payload)
{
	const struct wse_link_hello_info hello = {
		.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_EXEC,
		.max_payload = max_payload,
	};
	const char *argv[] = { fwd_binary(self_path), "--listen", self->spec, "--wafer", "16x16", NULL };
	struct wse_link_addr addr;
	struct wse_link_err err;
	char text[256];
	uint32_t status;
	int fd = -1;

	self->pid = fork();
	if (self->pid == 0) {
		int lfd = open(self->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

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
	self->buf = malloc(self->cl.rules.max_payload);
	return self->buf ? 0 : -1;
}

/* Sends request @op on @q: @hdr then @data; returns its tag (0 if sending failed). */
static uint32_t send_req(FIXTURE_DATA(cancel) *self, uint8_t op, uint16_t q, const void *hdr,
			 size_t hlen, const void *data, size_t dlen)
{
	struct wse_link_frame f = { .version = self->cl.rules.version, .opcode = op, .queue = q,
				    .tag = self->next_tag++ };
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)data, dlen } };
	struct wse_link_err err;

	if (f.tag >= TAGS)
		return 0;
	if (wse_link_send(self->fd, &f, iov, dlen ? 2 : (hlen ? 1 : 0), IO_MS, &err))
		return 0;
	return f.tag;
}

/* Receives one answer within @ms and notes it; 0, -ETIMEDOUT or another error. */
static int receive_one(FIXTURE_DATA(cancel) *self, int ms)
{
	struct wse_link_frame f;
	struct wse_link_err err;
	const uint8_t *rest;
	size_t rest_len;
	uint32_t status;
	struct seen *s;
	int ret;

	ret = wse_link_recv(self->fd, &self->cl.rules, &f, self->buf, self->cl.rules.max_payload,
			    ms, &err);
	if (ret)
		return ret;
	if (!(f.flags & WSE_LINK_F_RESPONSE) || f.tag >= TAGS ||
	    wse_link_status_decode(self->buf, f.length, &status, &rest, &rest_len, &err))
		return -EPROTO;
	s = &self->seen[f.tag];
	s->count++;
	s->status = status;
	s->op = f.opcode;
	free(s->data);
	s->data = malloc(rest_len + 1);
	if (!s->data)
		return -ENOMEM;
	memcpy(s->data, rest, rest_len);
	s->data[rest_len] = 0;
	s->len = rest_len;
	return 0;
}

/* Waits up to @ms for @tag's answer (noting all that come meanwhile); its status or 0xdead. */
static uint32_t wait_for(FIXTURE_DATA(cancel) *self, uint32_t tag, int ms)
{
	int64_t end = wse_link_now_ms() + ms;

	while (tag && !self->seen[tag].count) {
		int64_t left = end - wse_link_now_ms();

		if (left <= 0 || receive_one(self, (int)left))
			return 0xdead;
	}
	return tag ? self->seen[tag].status : 0xdead;
}

/* Notes whatever comes within @ms of quiet; the number of answers. */
static int drain(FIXTURE_DATA(cancel) *self, int ms)
{
	int n = 0;

	while (n < 10000 && !receive_one(self, ms))
		n++;
	return n;
}

static const char *text_of(FIXTURE_DATA(cancel) *self, uint32_t tag)
{
	return self->seen[tag].data ? (const char *)self->seen[tag].data : "";
}

static uint32_t send_cancel(FIXTURE_DATA(cancel) *self, uint32_t tag)
{
	struct wse_link_cancel raw;

	wse_link_cancel_encode(&raw, tag);
	return send_req(self, WSE_LINK_OP_CANCEL, 0, &raw, sizeof(raw), NULL, 0);
}

static uint32_t send_stream(FIXTURE_DATA(cancel) *self, uint8_t op, uint16_t q, uint32_t stream,
			    const void *data, uint32_t len)
{
	struct wse_link_stream_info in = { PROG, stream, len, 0 };
	struct wse_link_stream raw;

	wse_link_stream_encode(&raw, &in);
	return send_req(self, op, q, &raw, sizeof(raw), op == WSE_LINK_OP_STREAM_WRITE ? data : NULL,
			op == WSE_LINK_OP_STREAM_WRITE ? len : 0);
}

static uint32_t send_run(FIXTURE_DATA(cancel) *self, uint32_t kind, uint32_t steps)
{
	struct wse_link_run_info in = { .program = PROG, .kind = kind, .steps = steps,
					 .batch = TINY_BATCH };
	struct wse_link_run raw;

	wse_link_run_encode(&raw, &in);
	return send_req(self, WSE_LINK_OP_RUN, Q_RUN, &raw, sizeof(raw), NULL, 0);
}

/* One piece of an image into PROG; its tag. */
static uint32_t send_piece(FIXTURE_DATA(cancel) *self, const uint8_t *img, uint64_t total,
			   uint64_t off, uint64_t n, bool last)
{
	struct wse_link_prog_load_info in = { .program = PROG, .total = total, .offset = off,
					       .flags = last ? WSE_LINK_PROG_LAST : 0 };
	struct wse_link_program_load raw;

	wse_link_prog_load_encode(&raw, &in);
	return send_req(self, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw, sizeof(raw), img + off, n);
}

static uint32_t load(FIXTURE_DATA(cancel) *self, enum wsecc_mode mode)
{
	uint32_t st;
	size_t len;
	void *img;

	if (compile(tiny_model, mode, &img, &len))
		return 0xbad;
	st = wait_for(self, send_piece(self, img, len, 0, len, true), ANSWER_MS);
	free(img);
	return st;
}

static uint32_t send_unload(FIXTURE_DATA(cancel) *self)
{
	struct wse_link_program_ref ref;

	wse_link_prog_ref_encode(&ref, PROG);
	return send_req(self, WSE_LINK_OP_PROGRAM_UNLOAD, Q_CTL, &ref, sizeof(ref), NULL, 0);
}

/* A keepalive sent now is answered within PROMPT_MS: its answer's delay in ms, or -1. */
static int64_t keepalive_delay(FIXTURE_DATA(cancel) *self)
{
	int64_t t0 = wse_link_now_ms();
	uint32_t tag = send_req(self, WSE_LINK_OP_KEEPALIVE, 0, NULL, 0, NULL, 0);

	if (wait_for(self, tag, PROMPT_MS) != WSE_LINK_OK)
		return -1;
	return wse_link_now_ms() - t0;
}

TEST_F(cancel, hello_offers_cancel_and_an_unknown_tag_is_answered_ok)
{
	uint32_t tag;

	ASSERT_EQ(0, start(self, 1 << 20));
	EXPECT_TRUE(self->cl.dev.caps & WSE_LINK_CAP_CANCEL);
	tag = send_cancel(self, 7777);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, tag, ANSWER_MS));
	EXPECT_EQ(0U, self->seen[tag].len);
	EXPECT_EQ(WSE_LINK_OP_CANCEL, self->seen[tag].op);
	/* The link goes on, and nothing else was answered. */
	EXPECT_LE(0, keepalive_delay(self));
	EXPECT_EQ(0, drain(self, QUIET_MS));
}

/*
 * 300 STREAM_READs that wait for data (no RUN will ever fill the losses)
 * over the four queues: the first 256 are held, the 44 after them are
 * refused (E_BUSY) as they arrive, and keepalives sent meanwhile and
 * after are answered at once. CANCEL then takes each held one back: the
 * four executing and the 252 queued are answered E_CANCELED, once, and
 * the queues carry the next requests.
 */
TEST_F(cancel, backlog_refused_not_stalled_and_cancelled)
{
	uint32_t first = 0, ka_mid = 0, tags[300], cancels[300];
	uint8_t px[TINY_BATCH * TINY_IN] = { 1 };
	int32_t labels[TINY_BATCH] = { 0 };
	int held = 0, busy = 0, executing = 0, queued = 0;
	uint32_t run, st;
	int64_t delay;

	ASSERT_EQ(0, start(self, 1 << 20));
	ASSERT_EQ(WSE_LINK_OK, load(self, WSECC_MODE_PIPELINED));
	for (int i = 0; i < 300; i++) {
		tags[i] = send_stream(self, WSE_LINK_OP_STREAM_READ, (uint16_t)(i % QUEUES), S_LOSSES,
				      NULL, 32);
		ASSERT_NE(0U, tags[i]);
		if (!first)
			first = tags[i];
		if (i == 150)
			ka_mid = send_req(self, WSE_LINK_OP_KEEPALIVE, 0, NULL, 0, NULL, 0);
	}
	/* The first thing an old wsefwd fails: it no longer reads the socket. */
	delay = keepalive_delay(self);
	ASSERT_LE(0, delay) TH_LOG("a keepalive after 300 blocked requests got no answer within %d ms",
				   PROMPT_MS);
	EXPECT_GT(PROMPT_MS, delay);
	EXPECT_EQ(WSE_LINK_OK, self->seen[ka_mid].status);
	EXPECT_EQ(1U, self->seen[ka_mid].count);
	for (int i = 0; i < 300; i++) {
		struct seen *s = &self->seen[tags[i]];

		if (!s->count) {
			held++;
			EXPECT_GT(WSE_LINK_QUEUED_REQS, (uint32_t)i) TH_LOG("request %d held", i);
			continue;
		}
		EXPECT_EQ(WSE_LINK_E_BUSY, s->status) TH_LOG("request %d: %s", i, text_of(self, tags[i]));
		EXPECT_LE(WSE_LINK_QUEUED_REQS, (uint32_t)i) TH_LOG("request %d refused", i);
		busy++;
	}
	EXPECT_EQ((int)WSE_LINK_QUEUED_REQS, held);
	EXPECT_EQ(300 - (int)WSE_LINK_QUEUED_REQS, busy);

	/* Last first: the queued ones, then the four executing (by now surely). */
	usleep(300000);
	for (int i = (int)WSE_LINK_QUEUED_REQS - 1; i >= 0; i--) {
		cancels[i] = send_cancel(self, tags[i]);
		ASSERT_NE(0U, cancels[i]);
	}
	for (int i = 0; i < (int)WSE_LINK_QUEUED_REQS; i++) {
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, cancels[i], ANSWER_MS));
		ASSERT_EQ(WSE_LINK_E_CANCELED, wait_for(self, tags[i], ANSWER_MS))
			TH_LOG("request %d: %s", i, text_of(self, tags[i]));
		if (strstr(text_of(self, tags[i]), "waited for data"))
			executing++;
		else if (strstr(text_of(self, tags[i]), "before it started"))
			queued++;
	}
	EXPECT_EQ(QUEUES, executing);
	EXPECT_EQ((int)WSE_LINK_QUEUED_REQS - QUEUES, queued);
	/* Exactly one answer each: nothing more comes. */
	EXPECT_EQ(0, drain(self, QUIET_MS));
	for (int i = 0; i < 300; i++) {
		EXPECT_EQ(1U, self->seen[tags[i]].count) TH_LOG("request %d", i);
	}

	/* Every queue works again: a step's samples in, its losses out. */
	for (int q = 0; q < QUEUES; q++)
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_req(self, WSE_LINK_OP_DEVICE_STATS,
							       (uint16_t)q, NULL, 0, NULL, 0),
						ANSWER_MS));
	run = send_run(self, WSE_LINK_RUN_TRAIN, 1);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_SAMPLES, px, sizeof(px)), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_LABELS, labels, sizeof(labels)),
					ANSWER_MS));
	st = send_stream(self, WSE_LINK_OP_STREAM_READ, Q_OUT, S_LOSSES, NULL, 32);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, st, ANSWER_MS)) TH_LOG("%s", text_of(self, st));
	EXPECT_EQ(32U, self->seen[st].len);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, run, ANSWER_MS)) TH_LOG("%s", text_of(self, run));
}

/*
 * The payload bound: STREAM_WRITEs behind one waiting for room in a full
 * buffer are held until their payloads would pass WSE_LINK_QUEUED_BYTES;
 * the one that would is refused, a small one after it is still held.
 */
TEST_F(cancel, queued_payload_bytes_bounded)
{
	uint8_t px[TINY_BATCH * TINY_IN] = { 0 };
	uint32_t waiting, tags[WSE_LINK_QUEUED_BYTES / WSE_LINK_PAYLOAD_MIN], small, big, fit;
	uint8_t *data;

	ASSERT_EQ(0, start(self, WSE_LINK_PAYLOAD_LIMIT));
	ASSERT_EQ(WSE_LINK_OK, load(self, WSECC_MODE_PIPELINED));
	/* Whole frames of the link's largest payload (wsefwd's: 4 MiB). */
	big = self->cl.rules.max_payload - sizeof(struct wse_link_stream);
	fit = WSE_LINK_QUEUED_BYTES / self->cl.rules.max_payload - 1;
	ASSERT_GT(sizeof(tags) / sizeof(tags[0]), fit);
	/* The samples buffer holds four batches: the fifth write waits. */
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
								  S_SAMPLES, px, sizeof(px)),
						ANSWER_MS));
	waiting = send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_SAMPLES, px, sizeof(px));
	data = calloc(1, big);
	ASSERT_NE(NULL, data);
	/* 63 frames of 4 MiB and the waiting one fit in 256 MiB; a 64th does not. */
	for (uint32_t i = 0; i <= fit; i++) {
		tags[i] = send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_SAMPLES, data, big);
		ASSERT_NE(0U, tags[i]);
	}
	free(data);
	small = send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_SAMPLES, px, sizeof(px));
	ASSERT_LE(0, keepalive_delay(self));
	EXPECT_EQ(0U, self->seen[waiting].count);
	for (uint32_t i = 0; i < fit; i++) {
		EXPECT_EQ(0U, self->seen[tags[i]].count) TH_LOG("write %u: %s", i,
								text_of(self, tags[i]));
	}
	EXPECT_EQ(WSE_LINK_E_BUSY, self->seen[tags[fit]].status);
	EXPECT_EQ(1U, self->seen[tags[fit]].count);
	EXPECT_EQ(0U, self->seen[small].count) TH_LOG("%s", text_of(self, small));

	/* All taken back: the queued, then the waiting one, each answered once. */
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, small), ANSWER_MS));
	for (uint32_t i = 0; i < fit; i++)
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, tags[i]), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, waiting), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, small, ANSWER_MS));
	for (uint32_t i = 0; i < fit; i++)
		EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, tags[i], ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, waiting, ANSWER_MS))
		TH_LOG("%s", text_of(self, waiting));
	EXPECT_EQ(0, drain(self, QUIET_MS));
	EXPECT_EQ(1U, self->seen[waiting].count);
}

/*
 * The waits of a RUN and a STREAM_WRITE end at a CANCEL, leaving nothing
 * half done: a RUN waiting for its first batch, one stopped after a step
 * (which stays done, its outputs read), a write waiting for room whose
 * data never go in (a later RUN finds four batches, not five).
 */
TEST_F(cancel, waiting_run_and_write_end_cancelled)
{
	uint8_t px[TINY_BATCH * TINY_IN] = { 7 };
	int32_t labels[TINY_BATCH] = { 1 };
	uint32_t run, wr, c;

	ASSERT_EQ(0, start(self, 1 << 20));
	ASSERT_EQ(WSE_LINK_OK, load(self, WSECC_MODE_PIPELINED));

	run = send_run(self, WSE_LINK_RUN_TRAIN, 3);
	usleep(200000);
	EXPECT_EQ(0U, self->seen[run].count);
	c = send_cancel(self, run);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, c, ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, run, ANSWER_MS));
	EXPECT_NE(NULL, strstr(text_of(self, run), "after 0 of 3 steps")) TH_LOG("%s",
										 text_of(self, run));

	/* One step's batch: the RUN does it, then waits between steps. */
	run = send_run(self, WSE_LINK_RUN_TRAIN, 3);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_SAMPLES, px, sizeof(px)), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_LABELS, labels, sizeof(labels)),
					ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_READ, Q_OUT,
							  S_PREDS, NULL, 32), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, run), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, run, ANSWER_MS));
	EXPECT_NE(NULL, strstr(text_of(self, run), "after 1 of 3 steps")) TH_LOG("%s",
										 text_of(self, run));
	/* The step stayed done, with its losses. */
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_READ, Q_OUT,
							  S_LOSSES, NULL, 32), ANSWER_MS));

	/* Four batches fill the samples buffer; a fifth write waits, and is cancelled. */
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
								  S_SAMPLES, px, sizeof(px)),
						ANSWER_MS));
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
								  S_LABELS, labels, sizeof(labels)),
						ANSWER_MS));
	}
	wr = send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_SAMPLES, px, sizeof(px));
	usleep(200000);
	EXPECT_EQ(0U, self->seen[wr].count);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, wr), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, wr, ANSWER_MS));
	EXPECT_NE(NULL, strstr(text_of(self, wr), "waited for room")) TH_LOG("%s", text_of(self, wr));
	/* A RUN of five steps does four and waits for a fifth batch that is not there. */
	run = send_run(self, WSE_LINK_RUN_EVAL, 5);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_READ, Q_OUT,
								  S_LOSSES, NULL, 32), ANSWER_MS));
		EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_READ, Q_OUT,
								  S_PREDS, NULL, 32), ANSWER_MS));
	}
	usleep(200000);
	EXPECT_EQ(0U, self->seen[run].count) TH_LOG("%s", text_of(self, run));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, run), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, run, ANSWER_MS));
	EXPECT_NE(NULL, strstr(text_of(self, run), "after 4 of 5 steps")) TH_LOG("%s",
										 text_of(self, run));
	EXPECT_EQ(0, drain(self, QUIET_MS));
}

/*
 * Weight streaming: a step waiting for a layer's weights is abandoned at a
 * CANCEL, and weights.K is left empty: two transfers of layer 0 (its
 * buffer's room) go in at once afterwards.
 */
TEST_F(cancel, weight_streaming_step_abandoned)
{
	uint8_t px[TINY_BATCH * TINY_IN] = { 3 };
	int32_t labels[TINY_BATCH] = { 2 };
	float w0[TINY_W0] = { 0.01f };
	uint32_t run, a, b;

	ASSERT_EQ(0, start(self, 1 << 20));
	ASSERT_EQ(WSE_LINK_OK, load(self, WSECC_MODE_WEIGHT_STREAMING));
	run = send_run(self, WSE_LINK_RUN_TRAIN | WSE_LINK_RUN_RETAIN, 1);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_SAMPLES, px, sizeof(px)), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_LABELS, labels, sizeof(labels)),
					ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN,
							  S_WEIGHTS(0), w0, sizeof(w0)),
					ANSWER_MS));
	usleep(200000);
	EXPECT_EQ(0U, self->seen[run].count) TH_LOG("%s", text_of(self, run));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_cancel(self, run), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_E_CANCELED, wait_for(self, run, ANSWER_MS));
	EXPECT_NE(NULL, strstr(text_of(self, run), "abandoned")) TH_LOG("%s", text_of(self, run));
	a = send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_WEIGHTS(0), w0, sizeof(w0));
	b = send_stream(self, WSE_LINK_OP_STREAM_WRITE, Q_IN, S_WEIGHTS(0), w0, sizeof(w0));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, a, PROMPT_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, b, PROMPT_MS)) TH_LOG("weights.0 was not emptied");
	EXPECT_EQ(0, drain(self, QUIET_MS));
}

/*
 * PROGRAM_UNLOAD drops the image being loaded into its slot: a last piece
 * sent after it finds no load in progress, so a slot's next user cannot
 * complete another's image.
 */
TEST_F(cancel, unload_drops_a_half_loaded_image)
{
	uint32_t st;
	size_t len, half;
	void *img;

	ASSERT_EQ(0, start(self, 1 << 20));
	ASSERT_EQ(0, compile(tiny_model, WSECC_MODE_PIPELINED, &img, &len));
	half = len / 2;
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_piece(self, img, len, 0, half, false), ANSWER_MS));
	st = send_unload(self);
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, st, ANSWER_MS)) TH_LOG("%s", text_of(self, st));
	st = send_piece(self, img, len, half, len - half, true);
	EXPECT_EQ(WSE_LINK_E_INVAL, wait_for(self, st, ANSWER_MS));
	EXPECT_NE(NULL, strstr(text_of(self, st), "no load is in progress")) TH_LOG("%s",
										    text_of(self, st));
	/* Nothing in the slot now: unload refuses as before. */
	st = send_unload(self);
	EXPECT_EQ(WSE_LINK_E_INVAL, wait_for(self, st, ANSWER_MS));
	/* A whole image still loads, and unloads. */
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_piece(self, img, len, 0, len, true), ANSWER_MS));
	EXPECT_EQ(WSE_LINK_OK, wait_for(self, send_unload(self), ANSWER_MS));
	free(img);
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
