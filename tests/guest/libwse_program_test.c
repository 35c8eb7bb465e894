// SPDX-License-Identifier: GPL-2.0-only
/*
 * libwse programs and streams against wsefwd in the guest: a .wsep made by
 * wsecc is loaded in many pieces (the firmware runs with small frames),
 * samples go in through a stream, a RUN predicts, predictions come out
 * through a stream, and the program is unloaded. Refusals too.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse/wsep.h"
#include "wse_guest.h"

#define IMAGE "/tmp/libwse-fc-mnist.wsep"

/* The id of stream @name in @p, or -1. */
static int stream_id(const struct wsep_program *p, const char *name)
{
	uint32_t i;

	for (i = 0; i < p->num_streams; i++)
		if (!strcmp(p->streams[i].name, name))
			return (int)p->streams[i].id;
	return -1;
}

FIXTURE(prog) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status st;
	struct wse_dev *dev;
	struct wsep_program *wsep;
	void *image;
	size_t len;
	bool attached;
};

FIXTURE_SETUP(prog)
{
	char spec[16], err[256];

	self->attached = false;
	self->dev = NULL;
	self->image = NULL;
	self->wsep = NULL;
	self->fw.pid = 0;
	ASSERT_EQ(0, guest_compile_fc_mnist(IMAGE, NULL, &self->image, &self->len, &self->wsep,
					    err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	/* 64 KiB frames: the 1 MiB image goes in about 17 pieces. */
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64",
				      "--max-payload", "65536", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &self->st));
	self->attached = true;
	snprintf(spec, sizeof(spec), "%u", self->st.index);
	ASSERT_EQ(0, wse_open(spec, &self->dev));
}

FIXTURE_TEARDOWN(prog)
{
	wse_close(self->dev);
	if (self->attached)
		wse_ctl_detach(self->ctl, self->st.index);
	guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
	wsep_program_free(self->wsep);
	free(self->image);
	unlink(IMAGE);
}

TEST_F(prog, load_stream_run_unload)
{
	const struct wsep_program *w = self->wsep;
	struct wse_ring_params rp = { .hw_queue = 1, .depth = 8 };
	struct wse_program_info info;
	struct wse_ring *ring;
	struct wse_info di;
	struct wse_job run = { .op = DRM_WSE_OP_RUN, .length = 4096 };
	struct wse_bo result;
	uint32_t q, rlen, i, batch = w->batch;
	int samples = stream_id(w, "samples"), preds = stream_id(w, "predictions");
	int32_t *p;
	uint8_t *in;
	size_t got = 0;
	uint64_t job;
	int status;

	ASSERT_LE(0, samples);
	ASSERT_LE(0, preds);
	ASSERT_EQ(0, wse_info(self->dev, &di));
	ASSERT_GT(self->len, 4 * di.max_job_bytes);	/* really in pieces */
	ASSERT_EQ(0, wse_queue_create(self->dev, 0, 8, 60000, &q));
	ASSERT_EQ(0, wse_program_load(self->dev, q, 3, self->image, self->len, &info));
	EXPECT_EQ(3, info.slot);
	EXPECT_EQ(w->num_layers, info.num_layers);
	EXPECT_EQ(w->num_streams, info.num_streams);
	EXPECT_EQ(batch, info.batch);
	EXPECT_LT(0, info.sram_bytes);

	/* One batch of samples in, through io_uring, in several commands. */
	in = malloc((size_t)batch * w->input_dim);
	ASSERT_NE(NULL, in);
	for (i = 0; i < batch * w->input_dim; i++)
		in[i] = (uint8_t)(i * 31);
	ASSERT_EQ(0, wse_ring_open(self->dev, &rp, &ring));
	ASSERT_EQ(0, wse_stream_write(ring, 3, (uint32_t)samples, w->input_dim, in, (size_t)batch * w->input_dim));

	/* RUN: predict one step. */
	ASSERT_EQ(0, wse_bo_alloc(self->dev, 4096, &result));
	run.handle = result.handle;
	run.args[0] = 3;
	run.args[1] = 3;	/* predict */
	run.args[2] = 1;
	run.args[3] = batch;
	ASSERT_EQ(0, wse_submit(self->dev, q, &run, &job));
	ASSERT_EQ(0, wse_wait(self->dev, q, job, wse_deadline_ns(60000), &status, &rlen));
	EXPECT_EQ(0, status) {
		TH_LOG("RUN: %s", wse_strerror(status));
	}

	/* Predictions out: one class per sample. */
	p = calloc(batch, sizeof(*p));
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, wse_stream_read(ring, 3, (uint32_t)preds, sizeof(*p), p, batch * sizeof(*p), &got));
	EXPECT_EQ(batch * sizeof(*p), got);
	for (i = 0; i < got / sizeof(*p); i++)
		EXPECT_GT(10, (uint32_t)p[i]);

	/* A stream the program does not have is refused by the firmware. */
	EXPECT_EQ(-EINVAL, wse_stream_write(ring, 3, 999, 784, in, 784));
	wse_ring_close(ring);

	EXPECT_EQ(0, wse_program_unload(self->dev, q, 3));
	EXPECT_NE(0, wse_program_unload(self->dev, q, 3));
	wse_bo_free(self->dev, &result);
	free(in);
	free(p);
}

TEST_F(prog, refusals)
{
	uint8_t *broken;
	uint32_t q;

	ASSERT_EQ(0, wse_queue_create(self->dev, 0, 4, 0, &q));
	EXPECT_EQ(-EINVAL, wse_program_load(self->dev, q, 0, self->image, self->len, NULL));
	EXPECT_EQ(-EINVAL, wse_program_load(self->dev, q, 256, self->image, self->len, NULL));
	EXPECT_EQ(-EINVAL, wse_program_load(self->dev, q, 1, self->image, 10, NULL));
	EXPECT_EQ(-EINVAL, wse_program_unload(self->dev, q, 0));
	/* A damaged image is refused by the firmware, not loaded. */
	broken = malloc(self->len);
	ASSERT_NE(NULL, broken);
	memcpy(broken, self->image, self->len);
	broken[self->len / 2] ^= 0xff;
	EXPECT_GT(0, wse_program_load(self->dev, q, 1, broken, self->len, NULL));
	EXPECT_NE(0, wse_program_unload(self->dev, q, 1));
	free(broken);
}

/*
 * A training program driven through libwse's own calls: two steps of
 * samples and labels in and results out, one stream batch per step (the
 * samples take several commands, the rest one each), a RUN whose result
 * comes back decoded, and the parameters read back, written and read
 * again through PARAMS with the optimizer's step count.
 */
TEST_F(prog, stream_batches_run_result_and_params)
{
	const struct wsep_program *w = self->wsep;
	struct wse_ring_params in_p = { .hw_queue = 1, .depth = 8 };
	struct wse_ring_params out_p = { .hw_queue = 2, .depth = 8 };
	uint64_t floats = wsep_total_params(w->layers, w->num_layers);
	uint32_t q, batch = w->batch, steps = 2;
	struct wsep_train_streams ts;
	struct wse_ring *in, *out;
	struct wse_run_result res;
	struct wse_params before, after;
	struct wse_bo result;
	uint8_t *x;
	int32_t *y, *pred;
	float *loss;
	uint64_t job;
	char err[256];

	ASSERT_EQ(0, wsep_train_streams(w, &ts, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(WSEP_OPT_ADAM, w->opt.kind);
	ASSERT_EQ(0, wse_queue_create(self->dev, 0, 4, 60000, &q));
	ASSERT_EQ(0, wse_program_load(self->dev, q, 2, self->image, self->len, NULL));
	ASSERT_EQ(0, wse_ring_open(self->dev, &in_p, &in));
	ASSERT_EQ(0, wse_ring_open(self->dev, &out_p, &out));

	before = (struct wse_params){ .floats = floats, .state_arrays = 2,
				      .weights = calloc(floats, 4), .state = calloc(2 * floats, 4) };
	after = before;
	after.weights = calloc(floats, 4);
	after.state = calloc(2 * floats, 4);
	ASSERT_TRUE(before.weights && before.state && after.weights && after.state);
	before.step = 99;
	ASSERT_EQ(0, wse_params_read(out, 2, &before));
	EXPECT_EQ(0U, before.step);
	if (w->weights)
		EXPECT_EQ(0, memcmp(w->weights, before.weights, floats * 4));

	x = malloc((size_t)batch * w->input_dim);
	y = calloc(batch, 4);
	pred = calloc(batch, 4);
	loss = calloc(batch, 4);
	ASSERT_TRUE(x && y && pred && loss);
	ASSERT_EQ(0, wse_bo_alloc(self->dev, WSE_RUN_RESULT_BYTES, &result));
	ASSERT_EQ(0, wse_bo_map(self->dev, &result));
	ASSERT_EQ(0, wse_run_submit(self->dev, q, &result,
				    &(struct wse_run){ 2, WSE_RUN_TRAIN, steps, batch }, &job));
	for (uint32_t s = 0; s < steps; s++) {
		struct wse_stream_io io[] = {
			{ DRM_WSE_OP_STREAM_WRITE, w->streams[ts.samples].id, w->input_dim, x,
			  (size_t)batch * w->input_dim },
			{ DRM_WSE_OP_STREAM_WRITE, w->streams[ts.labels].id, 4, y, batch * 4 },
			{ DRM_WSE_OP_STREAM_READ, w->streams[ts.losses].id, 4, loss, batch * 4 },
			{ DRM_WSE_OP_STREAM_READ, w->streams[ts.predictions].id, 4, pred,
			  batch * 4 },
		};

		for (uint32_t i = 0; i < batch * w->input_dim; i++)
			x[i] = (uint8_t)(i * 31 + s);
		for (uint32_t i = 0; i < batch; i++)
			y[i] = (int32_t)((i + s) % 10);
		memset(pred, 0xff, batch * 4);
		ASSERT_EQ(0, wse_stream_batch(in, out, 2, io, 4));
		for (uint32_t i = 0; i < batch; i++) {
			EXPECT_GT(10U, (uint32_t)pred[i]);
			EXPECT_LT(0.0f, loss[i]);
		}
	}
	ASSERT_EQ(0, wse_run_wait(self->dev, q, job, &result, wse_deadline_ns(60000), &res));
	EXPECT_EQ(steps, res.steps);
	EXPECT_EQ(steps * batch, res.samples);
	EXPECT_LT(0U, res.cycles);
	EXPECT_LT(0U, res.est_cycles);

	/* Trained: the step count and the weights moved. */
	ASSERT_EQ(0, wse_params_read(out, 2, &after));
	EXPECT_EQ(steps, after.step);
	EXPECT_NE(0, memcmp(before.weights, after.weights, floats * 4));
	/* Back to where it began, and read again: the same bits. */
	ASSERT_EQ(0, wse_params_write(in, 2, &before));
	ASSERT_EQ(0, wse_params_read(out, 2, &after));
	EXPECT_EQ(0U, after.step);
	EXPECT_EQ(0, memcmp(before.weights, after.weights, floats * 4));
	EXPECT_EQ(0, memcmp(before.state, after.state, 2 * floats * 4));

	/* What the library refuses before anything reaches the device. */
	{
		struct wse_stream_io bad = { DRM_WSE_OP_RUN, 0, 4, y, 4 };

		EXPECT_EQ(-EINVAL, wse_stream_batch(in, out, 2, &bad, 1));
		before.state_arrays = 3;
		EXPECT_EQ(-EINVAL, wse_params_read(out, 2, &before));
	}
	wse_ring_close(in);
	wse_ring_close(out);
	EXPECT_EQ(0, wse_program_unload(self->dev, q, 2));
	wse_bo_free(self->dev, &result);
	free(before.weights);
	free(before.state);
	free(after.weights);
	free(after.state);
	free(x);
	free(y);
	free(pred);
	free(loss);
}

TEST_HARNESS_MAIN
