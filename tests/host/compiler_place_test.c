// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mode choice on both sides of the SRAM boundary, placement invariants
 * (inside the mesh, no overlap, neighbours touch, balance beats the even
 * split), the weight-streaming plan, the report and SVG, and the emitted
 * program read back through the validator.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/compiler.h"
#include "wse/wsep.h"

static void load(struct __test_metadata *_metadata, const char *path, struct wsecc_model *m)
{
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_file(path, m, &e))
		TH_LOG("%s: %s (run from the repository root)", path, e.msg);
}

static void wafer(struct __test_metadata *_metadata, const char *spec, struct wse_wafer *w)
{
	char err[256];

	ASSERT_EQ(0, wse_wafer_parse(spec, w, err, sizeof(err))) TH_LOG("%s", err);
}

static int overlap(const struct wsep_region *a, const struct wsep_region *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* Every invariant a pipelined plan must hold. */
static void check_pipelined(struct __test_metadata *_metadata, const struct wsecc_model *m,
			    const struct wsecc_plan *p)
{
	const struct wse_wafer *w = &p->wafer;
	uint64_t usable = w->sram_per_pe - w->sram_per_pe / 8, active = 0;
	double worst = 0, sum = 0, width = 0, height = 0, step;

	ASSERT_EQ(WSEP_MODE_PIPELINED, p->mode);
	ASSERT_EQ(m->num_layers, p->num_layers);
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const struct wsecc_layer_plan *lp = &p->layers[i];
		const struct wsep_region *r = &lp->region;

		EXPECT_LE(1, r->w);
		EXPECT_LE(1, r->h);
		EXPECT_LE(r->x + r->w, w->width) TH_LOG("%s layer %u leaves the mesh", w->name, i);
		EXPECT_LE(r->y + r->h, w->height) TH_LOG("%s layer %u leaves the mesh", w->name, i);
		EXPECT_EQ((uint64_t)r->w * r->h, lp->pes);
		EXPECT_LE(lp->sram_per_pe, usable) TH_LOG("%s layer %u overfills its PEs", w->name, i);
		EXPECT_EQ(lp->sram_per_pe * lp->pes, lp->sram_bytes);
		/* The tile covers the layer. */
		EXPECT_LE(m->layers[i].in, (uint64_t)lp->tile_in * r->h);
		EXPECT_LE(m->layers[i].out, (uint64_t)lp->tile_out * r->w);
		for (uint32_t j = 0; j < i; j++) {
			EXPECT_FALSE(overlap(r, &p->layers[j].region))
				TH_LOG("%s: layers %u and %u overlap", w->name, i, j);
		}
		if (i > 0) {
			const struct wsep_region *q = &p->layers[i - 1].region;

			/* Neighbours in the network share an edge on the wafer. */
			EXPECT_EQ(q->x + q->w, r->x) TH_LOG("%s: layers %u, %u do not touch", w->name,
							   i - 1, i);
			EXPECT_TRUE(q->y < r->y + r->h && r->y < q->y + q->h);
		}
		EXPECT_GT(lp->est.stage_cycles, 0);
		EXPECT_GE(lp->est.stage_cycles, lp->est.io_cycles * (1 - 1e-12));
		if (lp->est.stage_cycles > worst)
			worst = lp->est.stage_cycles;
		sum += lp->est.stage_cycles;
		width += r->w;
		if (r->h > height)
			height = r->h;
		active += lp->pes;
	}
	EXPECT_EQ(active, p->summary.active_pes);
	EXPECT_LE(active, (uint64_t)w->width * w->height);
	/* Throughput: a step is the batch at the slowest stage's rate, the other
	 * stages once, and a trip across the regions both ways at a cycle a hop.
	 */
	step = p->batch * worst + (sum - worst) + 2 * (width + height);
	EXPECT_LT(fabs(p->summary.samples_per_s - p->batch * (double)w->clock_hz / step),
		  1e-9 * p->summary.samples_per_s);
	EXPECT_EQ(worst, p->layers[p->summary.bottleneck_layer].est.stage_cycles);
	EXPECT_GT(p->summary.utilization, 0);
	EXPECT_LE(p->summary.utilization, 1);
	/* No more than the host link can feed. */
	EXPECT_LE(p->summary.samples_per_s, p->host_io_samples_per_s * (1 + 1e-9));
}

TEST(fc_mnist_placement_invariants_and_balance)
{
	static const char *const wafers[] = { "wse2", "wse3", "wse1", "64x64:48K", "32x32:48K",
					      "100x40:64K", "48x96:48K@850M" };
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;

	load(_metadata, "models/fc-mnist", &m);
	for (size_t i = 0; i < sizeof(wafers) / sizeof(wafers[0]); i++) {
		wafer(_metadata, wafers[i], &w);
		ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e))
			TH_LOG("%s: %s", wafers[i], e.msg);
		check_pipelined(_metadata, &m, &p);
		/* Balanced beats the naive even split by 15% or more: the stages
		 * are balanced, and the strips are no wider than pays for the
		 * longer trip across them (the even split spans the wafer).
		 */
		EXPECT_GT(p.summary.even_split_samples_per_s, 0) TH_LOG("%s", wafers[i]);
		EXPECT_GT(p.summary.samples_per_s, p.summary.even_split_samples_per_s * 1.15)
				TH_LOG("%s: balanced %.4g, even %.4g", wafers[i],
				       p.summary.samples_per_s, p.summary.even_split_samples_per_s);
		TH_LOG("%s: %.4g samples/s, even split %.4g (x%.2f), %llu active PEs", wafers[i],
		       p.summary.samples_per_s, p.summary.even_split_samples_per_s,
		       p.summary.samples_per_s / p.summary.even_split_samples_per_s,
		       (unsigned long long)p.summary.active_pes);
	}
}

TEST(deeper_model_invariants)
{
	static const char text[] =
		"input 1024 f32\n"
		"dense 1024 512 relu\ndense 512 2048 relu\ndense 2048 64 relu\n"
		"dense 64 64 relu\ndense 64 1000 relu\ndense 1000 10 none\n"
		"loss softmax_xent\noptimizer momentum lr=0.01 momentum=0.9\nbatch 32\nseed 3\n";
	static const char *const wafers[] = { "wse2", "128x128:48K", "64x200:96K" };
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_string(text, "deep", &m, &e)) TH_LOG("%s", e.msg);
	for (size_t i = 0; i < sizeof(wafers) / sizeof(wafers[0]); i++) {
		wafer(_metadata, wafers[i], &w);
		ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e))
			TH_LOG("%s: %s", wafers[i], e.msg);
		check_pipelined(_metadata, &m, &p);
		EXPECT_GE(p.summary.samples_per_s, p.summary.even_split_samples_per_s);
	}
}

/* A model whose pipelined SRAM need sits just above or below the usable SRAM. */
TEST(mode_choice_on_both_sides_of_the_sram_boundary)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wsecc_memory mem;
	struct wse_wafer w;
	struct wsecc_error e;
	uint64_t sram;
	char spec[64];

	load(_metadata, "models/fc-mnist", &m);
	wafer(_metadata, "16x16:48K", &w);
	wsecc_memory_needed(&m, &w, &mem);
	/* Independently: 4 B per weight, gradient and two Adam moments. */
	EXPECT_EQ(4ULL * 269322, mem.weights);
	EXPECT_EQ(mem.weights, mem.grads);
	EXPECT_EQ(2 * mem.weights, mem.opt_state);
	EXPECT_EQ(4ULL * 128 * (784 + 2 * 256 + 256 + 2 * 256 + 256 + 2 * 10), mem.activations);
	EXPECT_EQ(mem.weights + mem.grads + mem.opt_state + mem.activations, mem.total);
	/*
	 * Compiled, the activations are those of the samples in flight: 5, 3
	 * and 1 (2 (3 - i) - 1) at layers 0, 1, 2, samples one at a time.
	 */
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(4ULL * (5 * (784 + 2 * 256) + 3 * (256 + 2 * 256) + 1 * (256 + 2 * 10)),
		  p.mem.activations);
	EXPECT_EQ(5U, p.in_flight[0]);
	EXPECT_EQ(1U, p.in_flight[2]);
	mem = p.mem;

	/* Below: the largest SRAM per PE (a multiple of 8) whose usable total is short. */
	sram = (mem.total / 256) * 8 / 7;
	sram -= sram % 8;
	while (256 * (sram - sram / 8) >= mem.total)
		sram -= 8;
	snprintf(spec, sizeof(spec), "16x16:%llu", (unsigned long long)sram);
	wafer(_metadata, spec, &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	ASSERT_LT(p.mem.usable, p.mem.total);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p.mode) TH_LOG("%s", spec);
	EXPECT_NE(NULL, strstr(p.mode_note, "would need"));
	/* Forced pipelined is refused, with the numbers. */
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "--execution-mode pipelined refused")) TH_LOG("%s", e.msg);
	EXPECT_NE(NULL, strstr(e.msg, "weights 1.08 MB")) TH_LOG("%s", e.msg);
	EXPECT_NE(NULL, strstr(e.msg, "adam state 2.15 MB")) TH_LOG("%s", e.msg);
	EXPECT_NE(NULL, strstr(e.msg, "usable (256 PEs x")) TH_LOG("%s", e.msg);

	/* Above: twice the need fits, pipelined. */
	sram = mem.total * 2 / 256 * 8 / 7;
	snprintf(spec, sizeof(spec), "16x16:%llu", (unsigned long long)sram);
	wafer(_metadata, spec, &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(WSEP_MODE_PIPELINED, p.mode) TH_LOG("%s: %s", spec, p.mode_note);
	check_pipelined(_metadata, &m, &p);
	/* And weight streaming can still be asked for. */
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_WEIGHT_STREAMING, &p, &e));
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p.mode);
}

TEST(fc_mnist_fits_default_and_modest_wafers)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;

	load(_metadata, "models/fc-mnist", &m);
	wafer(_metadata, WSE_WAFER_DEFAULT, &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	EXPECT_EQ(WSEP_MODE_PIPELINED, p.mode);
	wafer(_metadata, "32x32:48K", &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	EXPECT_EQ(WSEP_MODE_PIPELINED, p.mode);
}

TEST(fc_large_streams_and_pipelined_is_refused)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;
	uint64_t params = 0;

	load(_metadata, "models/fc-large", &m);
	EXPECT_STREQ("64x64:48K", m.wafer);
	wafer(_metadata, m.wafer, &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p.mode);
	for (uint32_t i = 0; i < m.num_layers; i++) {
		const struct wsecc_layer_plan *lp = &p.layers[i];

		/* Each layer on the whole wafer. */
		EXPECT_EQ(0, lp->region.x);
		EXPECT_EQ(0, lp->region.y);
		EXPECT_EQ(64, lp->region.w);
		EXPECT_EQ(64, lp->region.h);
		/* Forward and backward each take at least the weights' transfer. */
		params = (uint64_t)m.layers[i].in * m.layers[i].out + m.layers[i].out;
		EXPECT_GE(lp->est.fwd_cycles, params * 4.0 / (150e9 / 1.1e9) * (1 - 1e-9));
		EXPECT_GE(lp->est.bwd_cycles, params * 4.0 / (150e9 / 1.1e9) * (1 - 1e-9));
		EXPECT_LT(fabs(lp->est.stage_cycles - lp->est.fwd_cycles - lp->est.bwd_cycles -
			       lp->est.io_cycles), 1e-6 * lp->est.stage_cycles);
	}
	EXPECT_GT(p.summary.samples_per_s, 0);
	EXPECT_EQ(0, p.summary.even_split_samples_per_s);
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "needs 589.76 MB (weights 147.28 MB + gradients 147.28 MB + adam state 294.55 MB + activations 661.0 kB of the samples in flight, up to 7 of batch 128"))
		TH_LOG("%s", e.msg);
	EXPECT_NE(NULL, strstr(e.msg, "the 64x64:48K wafer has 176.16 MB usable")) TH_LOG("%s", e.msg);
	EXPECT_NE(NULL, strstr(e.msg, "Use --execution-mode weight_streaming"));
}

TEST(streaming_refuses_a_batch_that_does_not_fit)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;

	load(_metadata, "models/fc-large", &m);
	wafer(_metadata, "4x4:4K", &w);
	m.batch = 4096;
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "do not fit even with weight streaming")) TH_LOG("%s", e.msg);
}

/*
 * fc-large at batch 65536 on its 64x64:48K wafer, refused before micro-
 * batches (the batch's activations: 2.41 MB a PE), streams in micro-batches
 * of the most samples whose activations fit: a sample's are 4 B x (784 +
 * 2 x 4096 + 2 x (4096 + 2 x 4096) + 4096 + 2 x 10), over 4096 PEs beside
 * the 2 KiB stream buffer in the 43008 B a PE has usable.
 */
TEST(streaming_cuts_the_batch_into_the_largest_micro_batches_that_fit)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	const uint64_t sample = 4ULL * (784 + 2 * 4096 + 2 * (4096 + 2 * 4096) + 4096 + 2 * 10);
	const uint64_t largest = (43008 - 2048) * 4096ULL / sample;
	struct wsep_program *prog;
	struct wse_wafer w;
	struct wsecc_error e;
	char err[256];
	size_t len;
	void *buf;

	load(_metadata, "models/fc-large", &m);
	wafer(_metadata, m.wafer, &w);
	m.batch = 65536;
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p.mode);
	EXPECT_EQ(largest, p.micro_batch);
	EXPECT_LE(p.summary.sram_bytes, 4096ULL * 43008);
	/* The program records it, and needs a reader that knows micro-batches. */
	ASSERT_EQ(0, wsecc_emit(&m, &p, 0, &buf, &len, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, wsep_read(buf, len, &prog, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(largest, prog->micro_batch);
	EXPECT_EQ(WSEP_FEATURE_MICRO_BATCH, prog->features & WSEP_FEATURE_MICRO_BATCH);
	wsep_program_free(prog);
	EXPECT_EQ(-EINVAL, wsep_read_features(buf, len, WSEP_FEATURE_GRAPH | WSEP_FEATURE_TRAINING,
					      &prog, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "micro-batches (feature 0x4)")) TH_LOG("%s", err);
	free(buf);

	/* Asked for: as asked, up to the largest; one more is refused, naming the largest. */
	m.micro_batch = 1000;
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(1000U, p.micro_batch);
	m.micro_batch = (uint32_t)largest + 1;
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "the largest micro-batch that fits is 1113 (--micro-batch 1113)"))
		TH_LOG("%s", e.msg);
	m.micro_batch = 65537;
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "larger than the batch of 65536")) TH_LOG("%s", e.msg);

	/* The model's own batch of 128 fits whole: one micro-batch, no feature needed. */
	load(_metadata, "models/fc-large", &m);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(128U, p.micro_batch);
	ASSERT_EQ(0, wsecc_emit(&m, &p, 0, &buf, &len, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, wsep_read(buf, len, &prog, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0U, prog->features & WSEP_FEATURE_MICRO_BATCH);
	wsep_program_free(prog);
	free(buf);
}

/*
 * Micro-batches cost weight I/O: each streams every layer's weights in
 * twice and its gradients out, so a batch in 8 costs 8 times the weights'
 * transfer of a batch in one, and the compute the same.
 */
TEST(streaming_estimate_counts_weights_per_micro_batch)
{
	static struct wsecc_model m;
	static struct wsecc_plan one, eight;
	struct wse_wafer w;
	struct wsecc_error e;

	load(_metadata, "models/fc-large", &m);
	wafer(_metadata, m.wafer, &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_WEIGHT_STREAMING, &one, &e)) TH_LOG("%s", e.msg);
	m.micro_batch = 16;
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_WEIGHT_STREAMING, &eight, &e))
		TH_LOG("%s", e.msg);
	for (uint32_t i = 0; i < m.num_layers; i++) {
		const struct wsep_estimate *a = &one.layers[i].est, *b = &eight.layers[i].est;
		double wio = a->io_cycles, compute = a->fwd_cycles;

		EXPECT_TRUE(wio == b->io_cycles);
		/* Weight bound at 128 samples on this wafer: a pass is the weights' time. */
		if (compute <= wio * (1 + 1e-12)) {
			EXPECT_LT(fabs(b->stage_cycles - 8 * a->stage_cycles), 1e-9 * b->stage_cycles);
		}
		EXPECT_GE(b->stage_cycles, a->stage_cycles);
	}
	EXPECT_LT(eight.summary.samples_per_s, one.summary.samples_per_s);
}

/*
 * Pipelined memory by samples in flight: fc-mnist at batch 65536 on
 * 64x64:48K, whose batch's activations (613 MB) were refused, holds 5, 3
 * and 1 samples at its layers and runs pipelined; in micro-batches of 4,
 * 20, 12 and 4, each region's SRAM holding its share; a micro-batch larger
 * than the batch is refused.
 */
TEST(pipelined_holds_the_samples_in_flight_not_the_batch)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	const uint64_t per_sample[3] = { 4ULL * (784 + 2 * 256), 4ULL * (256 + 2 * 256),
					 4ULL * (256 + 2 * 10) };
	struct wsecc_memory whole;
	struct wse_wafer w;
	struct wsecc_error e;

	load(_metadata, "models/fc-mnist", &m);
	wafer(_metadata, "64x64:48K", &w);
	m.batch = 65536;
	wsecc_memory_needed(&m, &w, &whole);
	ASSERT_GT(whole.total, whole.usable);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(WSEP_MODE_PIPELINED, p.mode);
	EXPECT_EQ(1U, p.micro_batch);
	EXPECT_EQ(5 * per_sample[0] + 3 * per_sample[1] + per_sample[2], p.mem.activations);

	m.micro_batch = 4;
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(20U, p.in_flight[0]);
	EXPECT_EQ(12U, p.in_flight[1]);
	EXPECT_EQ(4U, p.in_flight[2]);
	for (uint32_t i = 0; i < 3; i++) {
		const struct wsecc_layer_plan *lp = &p.layers[i];

		EXPECT_EQ(per_sample[i] * p.in_flight[i], lp->act_bytes);
		EXPECT_LE(lp->sram_per_pe, 43008U);
	}
	m.micro_batch = 65537;
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "larger than the batch of 65536")) TH_LOG("%s", e.msg);
}

TEST(too_many_layers_for_the_columns)
{
	static const char text[] = "input 8 f32\ndense 8 8 relu\ndense 8 8 relu\ndense 8 4 none\n"
				   "loss softmax_xent\noptimizer sgd lr=0.1\nbatch 4\nseed 1\n";
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_string(text, "t", &m, &e));
	wafer(_metadata, "2x64:64K", &w);
	EXPECT_EQ(-EINVAL, wsecc_compile(&m, &w, WSECC_MODE_PIPELINED, &p, &e));
	EXPECT_NE(NULL, strstr(e.msg, "3 layers need at least 3 columns")) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, p.mode);
}

TEST(report_and_svg)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	load(_metadata, "models/fc-mnist", &m);
	wafer(_metadata, "wse2", &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	wsecc_report(f, &m, &p);
	fclose(f);
	EXPECT_NE(NULL, strstr(text, "mode:   layer-pipelined"));
	EXPECT_NE(NULL, strstr(text, "    0 784x256     relu 0,0 "));
	EXPECT_NE(NULL, strstr(text, "    2 256x10      none "));
	EXPECT_NE(NULL, strstr(text, "estimate:"));
	EXPECT_NE(NULL, strstr(text, "even split:"));
	EXPECT_NE(NULL, strstr(text, "utilization:"));
	free(text);

	f = open_memstream(&text, &len);
	ASSERT_EQ(0, wsecc_write_svg(f, &p));
	fclose(f);
	EXPECT_EQ(0, strncmp(text, "<?xml", 5));
	EXPECT_NE(NULL, strstr(text, "<rect id=\"wafer\""));
	EXPECT_NE(NULL, strstr(text, "<rect id=\"layer0\""));
	EXPECT_NE(NULL, strstr(text, "<rect id=\"layer2\""));
	EXPECT_EQ(NULL, strstr(text, "<rect id=\"layer3\""));
	EXPECT_NE(NULL, strstr(text, "</svg>\n"));
	free(text);
}

static int has_stream(const struct wsep_program *q, const char *name, enum wsep_direction dir)
{
	for (uint32_t i = 0; i < q->num_streams; i++)
		if (strcmp(q->streams[i].name, name) == 0)
			return q->streams[i].dir == dir;
	return 0;
}

TEST(emitted_program_round_trips)
{
	static struct wsecc_model m;
	static struct wsecc_plan p;
	struct wse_wafer w;
	struct wsecc_error e;
	struct wsep_program *q;
	char err[256];
	float *expect;
	void *buf;
	size_t len;

	load(_metadata, "models/fc-mnist", &m);
	wafer(_metadata, "64x64:48K", &w);
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_AUTO, &p, &e));
	ASSERT_EQ(0, wsecc_emit(&m, &p, 1, &buf, &len, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, wsep_read(buf, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_MODE_PIPELINED, q->mode);
	EXPECT_STREQ("fc-mnist", q->model_name);
	EXPECT_STREQ("64x64:48K", q->wafer.name);
	EXPECT_EQ(64, q->wafer.width);
	EXPECT_EQ(m.batch, q->batch);
	EXPECT_EQ(m.seed, q->seed);
	EXPECT_EQ(WSEP_OPT_ADAM, q->opt.kind);
	EXPECT_EQ(m.opt.lr, q->opt.lr);
	ASSERT_EQ(3, q->num_layers);
	for (uint32_t i = 0; i < 3; i++) {
		EXPECT_EQ(0, memcmp(&p.layers[i].region, &q->regions[i], sizeof(q->regions[i])));
		EXPECT_EQ(p.layers[i].est.stage_cycles, q->estimates[i].stage_cycles);
		EXPECT_EQ(p.layers[i].sram_bytes, q->layers[i].sram_bytes);
		EXPECT_EQ(i < 2 ? WSEP_ACT_RELU : WSEP_ACT_NONE, q->layers[i].act);
	}
	EXPECT_EQ(p.summary.samples_per_s, q->summary.samples_per_s);
	EXPECT_TRUE(has_stream(q, "samples", WSEP_DIR_HOST_TO_DEVICE));
	EXPECT_TRUE(has_stream(q, "labels", WSEP_DIR_HOST_TO_DEVICE));
	EXPECT_TRUE(has_stream(q, "losses", WSEP_DIR_DEVICE_TO_HOST));
	EXPECT_TRUE(has_stream(q, "weights.2", WSEP_DIR_DEVICE_TO_HOST));
	EXPECT_FALSE(has_stream(q, "grads.0", WSEP_DIR_DEVICE_TO_HOST));
	/* The weights are the seeded initialisation. */
	ASSERT_EQ(269322, q->num_weights);
	expect = malloc(269322 * sizeof(float));
	wsep_init_weights(m.seed, q->layers, 3, expect);
	EXPECT_EQ(0, memcmp(expect, q->weights, 269322 * sizeof(float)));
	free(expect);
	wsep_program_free(q);
	free(buf);

	/* Weight streaming: weights in, gradients out, no weights in the file. */
	ASSERT_EQ(0, wsecc_compile(&m, &w, WSECC_MODE_WEIGHT_STREAMING, &p, &e));
	ASSERT_EQ(0, wsecc_emit(&m, &p, 0, &buf, &len, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, wsep_read(buf, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_MODE_WEIGHT_STREAMING, q->mode);
	EXPECT_EQ(NULL, q->weights);
	EXPECT_TRUE(has_stream(q, "weights.1", WSEP_DIR_HOST_TO_DEVICE));
	EXPECT_TRUE(has_stream(q, "grads.1", WSEP_DIR_DEVICE_TO_HOST));
	EXPECT_EQ(64, q->regions[2].w);
	wsep_program_free(q);
	free(buf);
}

TEST_HARNESS_MAIN
