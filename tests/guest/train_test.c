// SPDX-License-Identifier: GPL-2.0-only
/*
 * Training through the driver: models/fc-mnist compiled by wsecc, loaded
 * through queues, trained for a few hundred steps on a learnable synthetic
 * task, in both execution modes, with the loss falling. The RUN goes on
 * one hardware queue, inputs on a second, outputs on a third (a stream
 * write and the RUN that drains it must not share a queue). Weight
 * streaming runs on an appliance, whose MemoryX holds the weights and
 * optimizer state: the test sends what it sends to a system, samples in
 * and losses out, and no weight or gradient crosses the guest. Afterwards
 * `wsectl stats` shows the modelled cycles beside the compiler's estimate.
 *
 * The firmware computes, so it runs at native speed on the host when the
 * guest was started with it (tools/wsevm --fw 1 --appliance 1
 * --fw-no-attach: the addresses are in /wse/fw-addrs and
 * /wse/appliance-addr); otherwise a wsefwd or a wse-appliance inside the
 * guest does, slowly.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse/wsep.h"
#include "wse_guest.h"

#define SLOT	1
#define STEPS	200
#define WINDOW	25

static int stream_id(const struct wsep_program *p, const char *name)
{
	uint32_t i;

	for (i = 0; i < p->num_streams; i++)
		if (!strcmp(p->streams[i].name, name))
			return (int)p->streams[i].id;
	return -1;
}

/* A teacher network decides the labels: the task is learnable. */
struct task {
	uint64_t rng;
	float *teacher;		/* [classes][dim] */
	uint32_t dim, classes;
};

static uint32_t task_rand(struct task *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (uint32_t)(t->rng >> 32);
}

static void task_batch(struct task *t, uint32_t batch, uint8_t *x, int32_t *y)
{
	uint32_t s, c, i;

	for (s = 0; s < batch; s++) {
		float best = -1e30f;

		for (i = 0; i < t->dim; i++)
			x[(size_t)s * t->dim + i] = (uint8_t)task_rand(t);
		for (c = 0; c < t->classes; c++) {
			float v = 0;

			for (i = 0; i < t->dim; i++)
				v += t->teacher[(size_t)c * t->dim + i] *
				     (x[(size_t)s * t->dim + i] / 255.0f - 0.5f);
			if (v > best) {
				best = v;
				y[s] = (int32_t)c;
			}
		}
	}
}

FIXTURE(train) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status st;
	struct wse_dev *dev;
	bool attached;
};

/* The first address wsevm left in @file for the guest, if any. */
static bool host_address(const char *file, char *addr, size_t len)
{
	FILE *f = fopen(file, "r");
	bool ok = f && fgets(addr, (int)len, f) && addr[0];

	if (f)
		fclose(f);
	if (ok)
		addr[strcspn(addr, "\n")] = 0;
	return ok;
}

FIXTURE_SETUP(train)
{
	self->attached = false;
	self->dev = NULL;
	self->fw.pid = 0;
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
}

FIXTURE_TEARDOWN(train)
{
	wse_close(self->dev);
	if (self->attached)
		wse_ctl_detach(self->ctl, self->st.index);
	guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
}

/* A system for a pipelined program, an appliance for weight streaming; attached and opened. */
static int attach_device(FIXTURE_DATA(train) *self, bool appliance)
{
	char spec[16], addr[sizeof(self->fw.addr)];

	if (!host_address(appliance ? "/wse/appliance-addr" : "/wse/fw-addrs", addr,
			  sizeof(addr))) {
		if (appliance ? guest_peer_start(&self->fw, "wse-appliance", "--systems", "1", NULL) :
				guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64", NULL))
			return -1;
		snprintf(addr, sizeof(addr), "%s", self->fw.addr);
	}
	if (guest_attach(self->ctl, addr, 0, &self->st))
		return -1;
	self->attached = true;
	snprintf(spec, sizeof(spec), "%u", self->st.index);
	return wse_open(spec, &self->dev);
}

/* Reads exactly @len bytes from an output stream. */
static int read_exact(struct wse_ring *out, int stream, uint32_t record, void *buf, size_t len)
{
	size_t have, got;
	int ret;

	for (have = 0; have < len; have += got) {
		ret = wse_stream_read(out, SLOT, stream, record, (uint8_t *)buf + have, len - have,
				      &got);
		if (ret)
			return ret;
		if (!got)
			return -EIO;
	}
	return 0;
}

static void train_mode(struct __test_metadata *_metadata, FIXTURE_DATA(train) *self,
		       const char *mode)
{
	struct wse_ring_params rin = { .hw_queue = 1, .depth = 16 };
	struct wse_ring_params rout = { .hw_queue = 2, .depth = 16 };
	struct wse_job run = { .op = DRM_WSE_OP_RUN, .length = 4096 };
	struct wse_ring *in, *out;
	struct wsep_program *p;
	struct wse_program_info info;
	struct wse_dev_status st;
	struct task task = { .rng = 0x9e3779b97f4a7c15ULL };
	struct wse_bo result;
	char err[256], path[64];
	void *image = NULL;
	size_t len = 0;
	float *loss, first = 0, window = 0, last = 0;
	int32_t *y, *pred;
	uint8_t *x;
	uint32_t q, i, b, step, right = 0, first_right = 0;
	uint64_t job;
	int ret, status, samples, labels, losses, preds;

	snprintf(path, sizeof(path), "/tmp/train-%s.wsep", mode);
	ret = guest_compile_fc_mnist(path, mode, &image, &len, &p, err, sizeof(err));
	unlink(path);
	ASSERT_EQ(0, ret) TH_LOG("%s", err);
	b = p->batch;
	samples = stream_id(p, "samples");
	labels = stream_id(p, "labels");
	losses = stream_id(p, "losses");
	preds = stream_id(p, "predictions");
	ASSERT_LE(0, samples);
	ASSERT_LE(0, labels);
	ASSERT_LE(0, losses);
	ASSERT_LE(0, preds);
	ASSERT_EQ(WSEP_ELEM_U8, p->input_type);

	task.dim = p->input_dim;
	task.classes = p->layers[p->num_layers - 1].out;
	task.teacher = malloc(sizeof(float) * task.dim * task.classes);
	x = malloc((size_t)b * task.dim);
	y = malloc(4 * b);
	pred = malloc(4 * b);
	loss = malloc(4 * b);
	ASSERT_TRUE(task.teacher && x && y && pred && loss);
	/* The teacher looks at the first 64 pixels only: quick to learn. */
	for (i = 0; i < task.dim * task.classes; i++)
		task.teacher[i] = i % task.dim < 64 ?
				  (float)task_rand(&task) / 4294967296.0f - 0.5f : 0.0f;

	ASSERT_EQ(0, attach_device(self, p->mode == WSEP_MODE_WEIGHT_STREAMING));
	ASSERT_EQ(0, wse_queue_create(self->dev, 0, 8, 60000, &q));
	ASSERT_EQ(0, wse_ring_open(self->dev, &rin, &in));
	ASSERT_EQ(0, wse_ring_open(self->dev, &rout, &out));
	/* On an appliance, one of its systems: the counters below are its. */
	if (p->mode == WSEP_MODE_WEIGHT_STREAMING)
		ASSERT_EQ(0, wse_appliance_job(out, 1));
	ASSERT_EQ(0, wse_program_load(self->dev, q, SLOT, image, len, &info));
	EXPECT_EQ(p->mode, info.mode);
	ASSERT_EQ(0, wse_bo_alloc(self->dev, 4096, &result));

	run.handle = result.handle;
	run.args[0] = SLOT;
	run.args[1] = WSE_LINK_RUN_TRAIN;
	run.args[2] = 1;
	run.args[3] = b;
	for (step = 1; step <= STEPS; step++) {
		task_batch(&task, b, x, y);
		ASSERT_EQ(0, wse_submit(self->dev, q, &run, &job));
		ASSERT_EQ(0, wse_stream_write(in, SLOT, samples, task.dim, x, (size_t)b * task.dim));
		ASSERT_EQ(0, wse_stream_write(in, SLOT, labels, 4, y, 4 * b));
		ASSERT_EQ(0, read_exact(out, losses, 4, loss, 4 * b));
		ASSERT_EQ(0, read_exact(out, preds, 4, pred, 4 * b));
		ASSERT_EQ(0, wse_wait(self->dev, q, job, wse_deadline_ns(60000), &status, NULL));
		ASSERT_EQ(0, status) TH_LOG("step %u: %s", step, wse_strerror(status));
		for (i = 0; i < b; i++) {
			window += loss[i] / b;
			right += pred[i] == y[i];
		}
		if (step % WINDOW == 0) {
			if (step == WINDOW) {
				first = window / WINDOW;
				first_right = right;
			}
			last = window / WINDOW;
			TH_LOG("%s step %u: loss %.4f accuracy %.3f", mode, step, last,
			       (double)right / (WINDOW * b));
			if (step == STEPS)
				EXPECT_LT(first_right, right);
			window = 0;
			right = 0;
		}
	}
	EXPECT_LT(last, first * 0.95f) TH_LOG("%s: loss %.4f at first, %.4f at the end", mode,
					     first, last);

	/* The firmware's modelled cycles beside the compiler's estimate. */
	ASSERT_EQ(0, wse_ctl_get(self->ctl, self->st.index, true, &st));
	ASSERT_TRUE(st.stats.has_device);
	EXPECT_EQ(STEPS, st.stats.dev_steps);
	EXPECT_LT(0, st.stats.dev_cycles);
	EXPECT_LT(0, st.stats.dev_est_cycles);
	TH_LOG("%s: %llu modelled cycles, compiler estimate %llu", mode,
	       (unsigned long long)st.stats.dev_cycles,
	       (unsigned long long)st.stats.dev_est_cycles);

	wse_ring_close(in);
	wse_ring_close(out);
	EXPECT_EQ(0, wse_program_unload(self->dev, q, SLOT));
	wse_bo_free(self->dev, &result);
	wsep_program_free(p);
	free(task.teacher);
	free(x);
	free(y);
	free(pred);
	free(loss);
	free(image);
}

TEST_F_TIMEOUT(train, pipelined, 300)
{
	train_mode(_metadata, self, "pipelined");
}

TEST_F_TIMEOUT(train, weight_streaming, 300)
{
	train_mode(_metadata, self, "weight_streaming");
}

TEST_HARNESS_MAIN
