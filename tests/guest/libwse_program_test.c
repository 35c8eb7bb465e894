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
	ASSERT_EQ(0, system("wsecc models/fc-mnist --wafer 64x64 --compile-only -q -o " IMAGE));
	self->image = guest_read_file(IMAGE, &self->len);
	ASSERT_NE(NULL, self->image);
	ASSERT_EQ(0, wsep_read(self->image, self->len, &self->wsep, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
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

TEST_HARNESS_MAIN
