// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mixed precision in the engine: 16-bit rounding of a matrix product's
 * inputs with fp32 accumulation, GradScaler's rules for fp16 loss scaling,
 * and training curves in fp32, bf16 and fp16 against PyTorch's
 * (tests/corpus/onnx/NAME.precision, made by make-corpus --precision; no
 * PyTorch needed here): 20 SGD steps of a 2-block GPT, a CNN and a dense
 * layer stack, each loss within 2% of PyTorch's at the same precision;
 * and the compiler's estimate at 16 bits.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/compiler.h"
#include "wse/compiler_graph.h"
#include "wse/engine.h"
#include "wse/engine_graph.h"
#include "wse/engine_ops.h"
#include "wse/wafer.h"

#define CORPUS "tests/corpus/onnx/"
#define STEPS 20

TEST(rounding_to_16_bits)
{
	const float x[] = { 1.0f + 0x1p-9f, 1.0f + 0x1p-8f + 0x1p-12f, 70000.0f, 1e-8f, -3.0f };
	float y[5];

	ASSERT_EQ(0, engine_round_f32(ENGINE_BF16, x, 5, y));
	EXPECT_EQ(1.0f, y[0]);			/* 7 mantissa bits: ties to even */
	EXPECT_EQ(1.0f + 0x1p-7f, y[1]);	/* past the half: up */
	EXPECT_EQ(70144.0f, y[2]);		/* bf16 has fp32's range */
	EXPECT_EQ(-3.0f, y[4]);
	ASSERT_EQ(0, engine_round_f32(ENGINE_FP16, x, 5, y));
	EXPECT_EQ(1.0f + 0x1p-9f, y[0]);	/* 10 mantissa bits */
	EXPECT_TRUE(isinf(y[2]));		/* past 65504 */
	EXPECT_EQ(0x1p-24f * 0.0f, y[3]);	/* below half the smallest subnormal */
	ASSERT_EQ(0, engine_round_f32(ENGINE_FP32, x, 5, y));
	EXPECT_EQ(0, memcmp(x, y, sizeof(y)));
	EXPECT_EQ(-EINVAL, engine_round_f32((enum engine_precision)7, x, 5, y));
}

/* A dense layer's product in bf16: the inputs rounded, the sum in fp32. */
TEST(dense_forward_rounds_its_inputs_and_accumulates_in_fp32)
{
	float x[64], w[64], xr[64], wr[64], y32, y16;
	double want = 0.0;

	for (int i = 0; i < 64; i++) {
		x[i] = 1.0f + (float)i * 0x1p-10f;
		w[i] = 1.0f - (float)i * 0x1p-11f;
	}
	ASSERT_EQ(0, engine_round_f32(ENGINE_BF16, x, 64, xr));
	ASSERT_EQ(0, engine_round_f32(ENGINE_BF16, w, 64, wr));
	for (int i = 0; i < 64; i++)
		want += (double)xr[i] * wr[i];
	EXPECT_EQ(ENGINE_FP32, engine_precision());
	ASSERT_EQ(0, engine_dense_forward(x, w, NULL, 1, 64, 1, false, &y32));
	EXPECT_EQ(ENGINE_FP32, engine_set_precision(ENGINE_BF16));
	ASSERT_EQ(0, engine_dense_forward(x, w, NULL, 1, 64, 1, false, &y16));
	EXPECT_EQ(ENGINE_BF16, engine_set_precision(ENGINE_FP32));
	EXPECT_NE(y32, y16);
	/* Every product of two bf16 values is exact in fp32: only the sum rounds. */
	EXPECT_LT(fabs(y16 - want), 1e-5 * want);
	TH_LOG("fp32 %.7f, bf16 inputs %.7f (exact %.7f)", y32, y16, want);
}

TEST(grad_scaler_rules)
{
	struct engine_loss_scaler s;
	float g[3] = { 65536.0f, -131072.0f, 0.0f };

	engine_loss_scaler_init(&s);
	EXPECT_EQ(65536.0f, s.scale);
	EXPECT_TRUE(engine_unscale(g, 3, s.scale));
	EXPECT_EQ(1.0f, g[0]);
	EXPECT_EQ(-2.0f, g[1]);
	g[2] = INFINITY;
	EXPECT_FALSE(engine_unscale(g, 3, s.scale));
	g[2] = NAN;
	EXPECT_FALSE(engine_unscale(g, 3, s.scale));
	/* An overflow skips the step and halves the scale. */
	EXPECT_FALSE(engine_loss_scaler_update(&s, true));
	EXPECT_EQ(32768.0f, s.scale);
	EXPECT_EQ(1, s.skipped);
	/* 2000 good steps in a row double it; an overflow restarts the count. */
	for (int i = 0; i < 1999; i++)
		EXPECT_TRUE(engine_loss_scaler_update(&s, false));
	EXPECT_EQ(32768.0f, s.scale);
	EXPECT_FALSE(engine_loss_scaler_update(&s, true));
	EXPECT_EQ(16384.0f, s.scale);
	for (int i = 0; i < 2000; i++)
		EXPECT_TRUE(engine_loss_scaler_update(&s, false));
	EXPECT_EQ(32768.0f, s.scale);
	EXPECT_EQ(2, s.skipped);
}

struct curves {
	double fp32[STEPS], bf16[STEPS], fp16[STEPS];
};

static int read_line(FILE *f, const char *mode, double *v)
{
	char name[32];

	if (fscanf(f, "%31s", name) != 1 || strcmp(name, mode))
		return -1;
	for (int i = 0; i < STEPS; i++)
		if (fscanf(f, "%lf", &v[i]) != 1)
			return -1;
	return 0;
}

static int read_curves(const char *name, struct curves *c)
{
	char path[256];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), CORPUS "%s.precision", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	err = read_line(f, "fp32", c->fp32) ?: read_line(f, "bf16", c->bf16) ?:
	      read_line(f, "fp16", c->fp16);
	fclose(f);
	return err;
}

struct run {
	struct wsecc_graph *g;
	struct engine_graph *eg;
	int *ids;
};

/* @name's export at its batch, with the loss, fed its batch. */
static int open_run(const char *name, struct run *r)
{
	struct wsecc_tensor in, labels;
	struct wsecc_onnx_options opt = { 0 };
	struct wsecc_error err;
	char path[256];
	int lab;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), CORPUS "%s.input.pb", name);
	if (wsecc_onnx_read_tensor(path, &in, &err))
		return -1;
	snprintf(path, sizeof(path), CORPUS "%s.labels.pb", name);
	if (wsecc_onnx_read_tensor(path, &labels, &err))
		return -1;
	opt.batch = in.dims[0];
	snprintf(path, sizeof(path), CORPUS "%s.onnx", name);
	if (wsecc_onnx_import(path, &opt, &r->g, &err)) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		return -1;
	}
	r->ids = malloc(r->g->n_tensors * sizeof(int));
	if (!r->ids || engine_graph_create(&r->eg) ||
	    wsecc_graph_to_engine(r->g, r->eg, r->ids, true, &lab, &err) ||
	    engine_graph_prepare(r->eg, ENGINE_SGD) ||
	    engine_graph_set_input(r->eg, r->ids[r->g->inputs[0]], in.data) ||
	    engine_graph_set_input(r->eg, lab, labels.data))
		return -1;
	wsecc_tensor_release(&in);
	wsecc_tensor_release(&labels);
	return 0;
}

static void close_run(struct run *r)
{
	engine_graph_destroy(r->eg);
	wsecc_graph_free(r->g);
	free(r->ids);
}

/* STEPS SGD steps of @name at @p; fp16 with a GradScaler. */
static int train(const char *name, double lr, enum engine_precision p, double *loss,
		 uint64_t *skipped)
{
	struct engine_loss_scaler scaler;
	struct engine_loss_result res;
	struct engine_optim opt;
	struct run r;
	bool stepped;
	int err = 0;

	if (open_run(name, &r))
		return -1;
	engine_optim_defaults(&opt, ENGINE_SGD, lr);
	engine_loss_scaler_init(&scaler);
	engine_set_precision(p);
	for (int t = 1; t <= STEPS && !err; t++) {
		if (p == ENGINE_FP16)
			err = engine_graph_train_step_scaled(r.eg, &opt, (uint64_t)t, -1.0, 1,
							     &scaler, &res, &stepped);
		else
			err = engine_graph_train_step(r.eg, &opt, (uint64_t)t, -1.0, 1, &res);
		loss[t - 1] = res.loss;
	}
	engine_set_precision(ENGINE_FP32);
	*skipped = scaler.skipped;
	close_run(&r);
	return err;
}

static double worst(const double *got, const double *want)
{
	double w = 0.0;

	for (int i = 0; i < STEPS; i++)
		w = fmax(w, fabs(got[i] - want[i]) / want[i]);
	return w;
}

static void matches_pytorch(struct __test_metadata *_metadata, const char *name, double lr)
{
	double l32[STEPS], lb[STEPS], lh[STEPS];
	uint64_t skipped;
	struct curves c;

	ASSERT_EQ(0, read_curves(name, &c));
	ASSERT_EQ(0, train(name, lr, ENGINE_FP32, l32, &skipped));
	ASSERT_EQ(0, train(name, lr, ENGINE_BF16, lb, &skipped));
	ASSERT_EQ(0, train(name, lr, ENGINE_FP16, lh, &skipped));
	EXPECT_EQ(0, skipped);
	TH_LOG("%s step 1: fp32 %.5f (PyTorch %.5f), bf16 %.5f (%.5f), fp16 %.5f (%.5f)", name,
	       l32[0], c.fp32[0], lb[0], c.bf16[0], lh[0], c.fp16[0]);
	TH_LOG("%s step %d: fp32 %.5f (PyTorch %.5f), bf16 %.5f (%.5f), fp16 %.5f (%.5f)", name,
	       STEPS, l32[STEPS - 1], c.fp32[STEPS - 1], lb[STEPS - 1], c.bf16[STEPS - 1],
	       lh[STEPS - 1], c.fp16[STEPS - 1]);
	TH_LOG("%s worst step: fp32 %.3g, bf16 %.3g, fp16 %.3g of PyTorch's loss", name,
	       worst(l32, c.fp32), worst(lb, c.bf16), worst(lh, c.fp16));
	EXPECT_LT(worst(l32, c.fp32), 1e-4);
	EXPECT_LT(worst(lb, c.bf16), 0.02);
	EXPECT_LT(worst(lh, c.fp16), 0.02);
	/* The fp16 reference rounds exactly where the engine does: closer still. */
	EXPECT_LT(worst(lh, c.fp16), 1e-3);
	/* The 16-bit runs really are rounded: their losses are not fp32's. */
	EXPECT_NE(0, memcmp(l32, lb, sizeof(l32)));
	EXPECT_NE(0, memcmp(l32, lh, sizeof(l32)));
}

TEST(gpt_trains_in_bf16_and_fp16_like_pytorch)
{
	matches_pytorch(_metadata, "gpt-mp", 0.1);
}

TEST(cnn_trains_in_bf16_and_fp16_like_pytorch)
{
	matches_pytorch(_metadata, "cnn-mp", 0.05);
}

/*
 * A scale so large that the scaled gradients overflow fp16 where a
 * product rounds them: the step is skipped (the weights, so the next
 * loss, unchanged) and the scale halved, until it fits.
 */
TEST(fp16_overflow_halves_the_scale_and_skips_the_step)
{
	struct engine_loss_scaler scaler;
	struct engine_loss_result res;
	struct engine_optim opt;
	double first = 0.0;
	bool stepped = true;
	struct run r;
	int skips = 0;

	ASSERT_EQ(0, open_run("gpt-mp", &r));
	engine_optim_defaults(&opt, ENGINE_SGD, 0.1);
	engine_loss_scaler_init(&scaler);
	scaler.scale = 0x1p40f;
	engine_set_precision(ENGINE_FP16);
	for (int t = 1; t <= 40 && !(stepped && t > 1); t++) {
		float before = scaler.scale;

		ASSERT_EQ(0, engine_graph_train_step_scaled(r.eg, &opt, (uint64_t)t, -1.0, 1,
							    &scaler, &res, &stepped));
		if (t == 1)
			first = res.loss;
		EXPECT_EQ(first, res.loss);	/* nothing was updated yet */
		if (!stepped) {
			EXPECT_EQ(before / 2, scaler.scale);
			skips++;
		}
	}
	engine_set_precision(ENGINE_FP32);
	TH_LOG("skipped %d steps, scale now 2^%g", skips, log2(scaler.scale));
	EXPECT_TRUE(stepped);
	EXPECT_LT(0, skips);
	EXPECT_EQ((uint64_t)skips, scaler.skipped);
	EXPECT_LT(scaler.scale, 0x1p40f);
	/* Then it trains. */
	ASSERT_EQ(0, engine_graph_train_step(r.eg, &opt, 50, -1.0, 1, &res));
	EXPECT_LT(res.loss, first);
	close_run(&r);
}

/* The first @len bytes after an IDX file's header of @header bytes. */
static int read_idx(const char *path, size_t header, uint8_t *out, size_t len)
{
	FILE *f = fopen(path, "rb");
	int ok = f && fseek(f, (long)header, SEEK_SET) == 0 && fread(out, 1, len, f) == len;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* fc-mp: 784-32-16-10 from PyTorch's initial weights, STEPS SGD steps at @p. */
static int train_dense(enum engine_precision p, double *loss, uint64_t *skipped)
{
	static const size_t widths[] = { 784, 32, 16, 10 };
	static uint8_t px[16 * 784], labels[16];
	struct engine_loss_scaler scaler;
	struct engine_loss_result res;
	struct engine_workspace *ws = NULL;
	struct engine_params *params = NULL;
	struct engine_shape shape;
	struct engine_optim opt;
	struct wsecc_tensor flat;
	struct wsecc_error e;
	const float *f;
	bool stepped;
	int err;

	if (read_idx(CORPUS "fc-mp.images.idx", 16, px, sizeof(px)) ||
	    read_idx(CORPUS "fc-mp.labels.idx", 8, labels, sizeof(labels)) ||
	    wsecc_onnx_read_tensor(CORPUS "fc-mp.params.pb", &flat, &e))
		return -1;
	f = flat.data;
	err = engine_shape_mlp(&shape, widths, 3) ?:
	      engine_params_create(&shape, ENGINE_SGD, &params) ?:
	      engine_workspace_create(&shape, 16, &ws);
	for (size_t k = 0; !err && k < 3; k++) {
		struct engine_layer *l = &params->layer[k];

		memcpy(l->w, f, l->in * l->out * sizeof(float));
		f += l->in * l->out;
		memcpy(l->b, f, l->out * sizeof(float));
		f += l->out;
	}
	if (!err && (size_t)(f - (const float *)flat.data) != wsecc_tensor_numel(&flat))
		err = -EINVAL;
	engine_optim_defaults(&opt, ENGINE_SGD, 0.1);
	engine_loss_scaler_init(&scaler);
	engine_set_precision(p);
	for (int t = 1; t <= STEPS && !err; t++) {
		if (p == ENGINE_FP16)
			err = engine_train_step_scaled(ws, params, &opt, (uint64_t)t, px, labels, 16,
						       &scaler, &res, &stepped);
		else
			err = engine_train_step(ws, params, &opt, (uint64_t)t, px, labels, 16, &res);
		loss[t - 1] = res.loss;
	}
	engine_set_precision(ENGINE_FP32);
	*skipped = scaler.skipped;
	engine_workspace_destroy(ws);
	engine_params_destroy(params);
	wsecc_tensor_release(&flat);
	return err;
}

/* A layer program's dense stack, from PyTorch's weights, in each precision. */
TEST(dense_layers_train_in_bf16_and_fp16_like_pytorch)
{
	double l32[STEPS], lb[STEPS], lh[STEPS];
	uint64_t skipped;
	struct curves c;

	ASSERT_EQ(0, read_curves("fc-mp", &c));
	ASSERT_EQ(0, train_dense(ENGINE_FP32, l32, &skipped));
	ASSERT_EQ(0, train_dense(ENGINE_BF16, lb, &skipped));
	ASSERT_EQ(0, train_dense(ENGINE_FP16, lh, &skipped));
	EXPECT_EQ(0, skipped);
	TH_LOG("fc-mp step %d: fp32 %.5f (PyTorch %.5f), bf16 %.5f (%.5f), fp16 %.5f (%.5f)", STEPS,
	       l32[STEPS - 1], c.fp32[STEPS - 1], lb[STEPS - 1], c.bf16[STEPS - 1], lh[STEPS - 1],
	       c.fp16[STEPS - 1]);
	TH_LOG("fc-mp worst step: fp32 %.3g, bf16 %.3g, fp16 %.3g of PyTorch's loss",
	       worst(l32, c.fp32), worst(lb, c.bf16), worst(lh, c.fp16));
	EXPECT_LT(worst(l32, c.fp32), 1e-4);
	EXPECT_LT(worst(lb, c.bf16), 0.02);
	EXPECT_LT(worst(lh, c.fp16), 1e-3);
	EXPECT_NE(0, memcmp(l32, lb, sizeof(l32)));
	EXPECT_NE(0, memcmp(l32, lh, sizeof(l32)));
}

/* fc-large on wse2 at @prec in @mode. */
static int plan_fc_large(enum wsep_precision prec, enum wsecc_mode mode, struct wsecc_plan *plan)
{
	static struct wsecc_model m;
	struct wsecc_error err;
	struct wse_wafer w;
	char msg[128];

	if (wsecc_parse_file("models/fc-large", &m, &err) ||
	    wse_wafer_parse("wse2", &w, msg, sizeof(msg)))
		return -1;
	m.precision = prec;
	return wsecc_compile(&m, &w, mode, plan, &err);
}

/*
 * The estimate at 16 bits: weight streaming moves each weight and gradient
 * in 2 bytes, not 4 (fc-large on wse2 is weight-I/O bound: twice the
 * samples/s); pipelined, its matrix products run at the 16-bit peak.
 */
TEST(the_estimate_takes_16_bit_weights_and_peak)
{
	static struct wsecc_plan p32, p16;

	ASSERT_EQ(0, plan_fc_large(WSEP_PRECISION_FP32, WSECC_MODE_WEIGHT_STREAMING, &p32));
	ASSERT_EQ(0, plan_fc_large(WSEP_PRECISION_BF16, WSECC_MODE_WEIGHT_STREAMING, &p16));
	EXPECT_EQ(p32.layers[0].est.io_cycles, 2 * p16.layers[0].est.io_cycles);
	TH_LOG("weight streaming: fp32 %.4g samples/s, bf16 %.4g", p32.summary.samples_per_s,
	       p16.summary.samples_per_s);
	EXPECT_GT(p16.summary.samples_per_s, 1.9 * p32.summary.samples_per_s);
	ASSERT_EQ(0, plan_fc_large(WSEP_PRECISION_FP32, WSECC_MODE_PIPELINED, &p32));
	ASSERT_EQ(0, plan_fc_large(WSEP_PRECISION_FP16, WSECC_MODE_PIPELINED, &p16));
	TH_LOG("pipelined: fp32 %.4g samples/s, fp16 %.4g", p32.summary.samples_per_s,
	       p16.summary.samples_per_s);
	EXPECT_GT(p16.summary.samples_per_s, p32.summary.samples_per_s);
}

TEST_HARNESS_MAIN
