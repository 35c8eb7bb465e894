// SPDX-License-Identifier: GPL-2.0-only
/*
 * The graph executor's entry points for running a graph a part at a time,
 * as the firmware does (Documentation/engine.rst, "The graph executor"):
 * the check that allocates nothing, node ranges, parameters bound to
 * memory the caller owns, the loss normalised by a whole batch so that
 * micro-batches add up to it, activation checkpointing (a part's
 * activations forgotten after its forward pass and recomputed before its
 * backward); and the gradients of Concat (an input read twice) and Slice
 * through the executor.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/engine_graph.h"

#define IN 6
#define HID 5
#define CLS 4

/* Weights of the two layers, fixed. */
static void weights(float *w1, float *b1, float *w2, float *b2)
{
	for (int i = 0; i < HID * IN; i++)
		w1[i] = (float)(0.3 * sin(0.7 * i + 0.1));
	for (int i = 0; i < HID; i++)
		b1[i] = (float)(0.05 * i - 0.1);
	for (int i = 0; i < CLS * HID; i++)
		w2[i] = (float)(0.4 * cos(0.9 * i));
	for (int i = 0; i < CLS; i++)
		b2[i] = (float)(0.02 * i);
}

struct mlp {
	struct engine_graph *g;
	int x, w1, b1, w2, b2, y, labels;
	size_t unit0_end;	/* nodes [0, unit0_end) are the first unit */
};

/* x [b, IN] -> gemm (w1 [HID, IN] transposed) + b1 -> @act -> gemm -> logits [b, CLS] */
static int build_act(struct mlp *m, size_t b, bool prepare, enum engine_act_kind act)
{
	float w1[HID * IN], b1[HID], w2[CLS * HID], b2[CLS];
	struct engine_node_attrs gemm = { .trans_b = true, .alpha = 1.0f, .beta = 1.0f };
	struct engine_node_attrs relu = { .act = act };
	int h, r, err;

	weights(w1, b1, w2, b2);
	if (engine_graph_create(&m->g))
		return -ENOMEM;
	m->x = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_INPUT, 2, (size_t[]){ b, IN }, NULL);
	m->w1 = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_PARAM, 2, (size_t[]){ HID, IN }, w1);
	m->b1 = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_PARAM, 1, (size_t[]){ HID }, b1);
	m->w2 = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_PARAM, 2, (size_t[]){ CLS, HID }, w2);
	m->b2 = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_PARAM, 1, (size_t[]){ CLS }, b2);
	h = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_ACT, 2, (size_t[]){ b, HID }, NULL);
	r = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_ACT, 2, (size_t[]){ b, HID }, NULL);
	m->y = engine_graph_add_value(m->g, ENGINE_DT_F32, ENGINE_VAL_ACT, 2, (size_t[]){ b, CLS }, NULL);
	m->labels = engine_graph_add_value(m->g, ENGINE_DT_I64, ENGINE_VAL_INPUT, 1, (size_t[]){ b }, NULL);
	err = engine_graph_add_node(m->g, ENGINE_OP_GEMM, &gemm, 3, (int[]){ m->x, m->w1, m->b1 }, 1, &h);
	if (err < 0)
		return err;
	err = engine_graph_add_node(m->g, ENGINE_OP_ACT, &relu, 1, &h, 1, &r);
	if (err < 0)
		return err;
	m->unit0_end = 2;
	err = engine_graph_add_node(m->g, ENGINE_OP_GEMM, &gemm, 3, (int[]){ r, m->w2, m->b2 }, 1, &m->y);
	if (err < 0)
		return err;
	err = engine_graph_set_loss(m->g, m->y, m->labels);
	if (err)
		return err;
	return prepare ? engine_graph_prepare(m->g, ENGINE_SGD) : 0;
}

static int build(struct mlp *m, size_t b, bool prepare)
{
	return build_act(m, b, prepare, ENGINE_ACT_RELU);
}

static void batch(size_t b, float *x, int64_t *labels)
{
	for (size_t i = 0; i < b * IN; i++)
		x[i] = (float)sin(1.7 * i + 0.3);
	for (size_t i = 0; i < b; i++)
		labels[i] = (int64_t)((i * 3 + 1) % CLS);
}

TEST(check_allocates_nothing_and_refuses_wrong_shapes)
{
	struct engine_graph *g;
	struct engine_node_attrs relu = { .act = ENGINE_ACT_RELU };
	/* An input that claims 2^31 x 2^10 elements: checked, never allocated. */
	int x, y;

	ASSERT_EQ(0, engine_graph_create(&g));
	x = engine_graph_add_value(g, ENGINE_DT_F32, ENGINE_VAL_INPUT, 2,
				   (size_t[]){ (size_t)1 << 31, 1024 }, NULL);
	y = engine_graph_add_value(g, ENGINE_DT_F32, ENGINE_VAL_ACT, 2,
				   (size_t[]){ (size_t)1 << 31, 1023 }, NULL);
	ASSERT_GE(x, 0);
	ASSERT_GE(y, 0);
	ASSERT_LE(0, engine_graph_add_node(g, ENGINE_OP_ACT, &relu, 1, &x, 1, &y));
	ASSERT_EQ(-EINVAL, engine_graph_check(g));
	ASSERT_NE(NULL, strstr(engine_graph_error(g), "node 0 (activation): output 0 has the wrong shape"));
	ASSERT_EQ(NULL, engine_graph_data(g, x));
	engine_graph_destroy(g);
}

/*
 * Two micro-batches of 3 with shared (bound) weights, each run a unit at a
 * time with the loss normalised by the whole batch of 6, add up to the
 * gradient of one graph of 6.
 */
TEST(micro_batches_with_bound_weights_add_up_to_the_batch)
{
	struct mlp whole, part[2];
	float w1[HID * IN], b1[HID], w2[CLS * HID], b2[CLS], x[6 * IN];
	float sum[4][HID * IN];
	const int *params[4];
	int64_t labels[6];
	struct engine_loss_result res;
	size_t sizes[4] = { HID * IN, HID, CLS * HID, CLS };

	ASSERT_EQ(0, build(&whole, 6, true));
	batch(6, x, labels);
	ASSERT_EQ(0, engine_graph_set_input(whole.g, whole.x, x));
	ASSERT_EQ(0, engine_graph_set_input(whole.g, whole.labels, labels));
	ASSERT_EQ(0, engine_graph_forward(whole.g, true, 1));
	ASSERT_EQ(0, engine_graph_loss(whole.g, true, &res));
	ASSERT_EQ(0, engine_graph_backward(whole.g));

	weights(w1, b1, w2, b2);
	memset(sum, 0, sizeof(sum));
	for (int m = 0; m < 2; m++) {
		struct mlp *p = &part[m];
		size_t n;

		ASSERT_EQ(0, build(p, 3, true));
		/* Both read and would update the caller's one copy. */
		ASSERT_EQ(0, engine_graph_bind(p->g, p->w1, w1));
		ASSERT_EQ(0, engine_graph_bind(p->g, p->b1, b1));
		ASSERT_EQ(0, engine_graph_bind(p->g, p->w2, w2));
		ASSERT_EQ(0, engine_graph_bind(p->g, p->b2, b2));
		ASSERT_EQ((void *)w1, engine_graph_data(p->g, p->w1));
		ASSERT_EQ(0, engine_graph_set_input(p->g, p->x, x + m * 3 * IN));
		ASSERT_EQ(0, engine_graph_set_input(p->g, p->labels, labels + m * 3));
		n = engine_graph_nodes(p->g);
		ASSERT_EQ(0, engine_graph_forward_nodes(p->g, 0, p->unit0_end, true, 1));
		/* The loss needs the whole forward pass. */
		ASSERT_EQ(-EINVAL, engine_graph_loss_norm(p->g, true, 6, &res));
		ASSERT_EQ(0, engine_graph_forward_nodes(p->g, p->unit0_end, n, true, 1));
		ASSERT_EQ(0, engine_graph_loss_norm(p->g, true, 6, &res));
		ASSERT_EQ(0, engine_graph_backward_nodes(p->g, p->unit0_end, n));
		ASSERT_EQ(0, engine_graph_backward_nodes(p->g, 0, p->unit0_end));
		/* A part done: no second backward without a new loss. */
		ASSERT_EQ(-EINVAL, engine_graph_backward_nodes(p->g, 0, p->unit0_end));
		params[0] = &p->w1;
		params[1] = &p->b1;
		params[2] = &p->w2;
		params[3] = &p->b2;
		for (int k = 0; k < 4; k++) {
			const float *g = engine_graph_grad(p->g, *params[k]);

			ASSERT_NE(NULL, g);
			for (size_t i = 0; i < sizes[k]; i++)
				sum[k][i] += g[i];
		}
	}
	params[0] = &whole.w1;
	params[1] = &whole.b1;
	params[2] = &whole.w2;
	params[3] = &whole.b2;
	for (int k = 0; k < 4; k++) {
		const float *g = engine_graph_grad(whole.g, *params[k]);

		for (size_t i = 0; i < sizes[k]; i++)
			ASSERT_LT(fabs(sum[k][i] - g[i]), 1e-6 + 1e-5 * fabs(g[i]));
	}
	for (int m = 0; m < 2; m++)
		engine_graph_destroy(part[m].g);
	engine_graph_destroy(whole.g);
}

/* One step of @m on a batch of 3, unit 0 forgotten after its forward pass when @forget. */
static int step_parts(struct mlp *m, bool forget, bool recompute)
{
	float x[3 * IN];
	int64_t labels[3];
	struct engine_loss_result res;
	size_t n = engine_graph_nodes(m->g);
	int err;

	batch(3, x, labels);
	err = engine_graph_set_input(m->g, m->x, x) ?: engine_graph_set_input(m->g, m->labels, labels) ?:
	      engine_graph_forward_nodes(m->g, 0, m->unit0_end, true, 7);
	if (!err && forget)
		err = engine_graph_forget_nodes(m->g, 0, m->unit0_end);
	err = err ?: engine_graph_forward_nodes(m->g, m->unit0_end, n, true, 7) ?:
	      engine_graph_loss(m->g, true, &res) ?:
	      engine_graph_backward_nodes(m->g, m->unit0_end, n);
	if (!err && recompute)
		err = engine_graph_recompute_nodes(m->g, 0, m->unit0_end, 7);
	return err ?: engine_graph_backward_nodes(m->g, 0, m->unit0_end);
}

/*
 * Unit 0 (a GELU, whose backward pass reads its input) forgotten after
 * its forward pass: its output (unit 1's input) stays, its hidden
 * pre-activation does not; recomputed before its
 * backward pass, the gradients are those of keeping everything, bit for
 * bit; not recomputed, its weights' gradient is NaN (what was forgotten
 * is really gone).
 */
TEST(a_forgotten_part_recomputed_gives_the_same_gradients)
{
	struct mlp keep, again, lost;
	const float *g0, *g1, *g2;

	ASSERT_EQ(0, build_act(&keep, 3, true, ENGINE_ACT_GELU));
	ASSERT_EQ(0, build_act(&again, 3, true, ENGINE_ACT_GELU));
	ASSERT_EQ(0, build_act(&lost, 3, true, ENGINE_ACT_GELU));
	/* Nothing to recompute from before the loss. */
	ASSERT_EQ(-EINVAL, engine_graph_recompute_nodes(again.g, 0, again.unit0_end, 7));
	ASSERT_EQ(-EINVAL, engine_graph_forget_nodes(again.g, 0, engine_graph_nodes(again.g) + 1));
	ASSERT_EQ(0, step_parts(&keep, false, false));
	ASSERT_EQ(0, step_parts(&again, true, true));
	ASSERT_EQ(0, step_parts(&lost, true, false));
	g0 = engine_graph_grad(keep.g, keep.w1);
	g1 = engine_graph_grad(again.g, again.w1);
	g2 = engine_graph_grad(lost.g, lost.w1);
	ASSERT_NE(NULL, g0);
	ASSERT_NE(NULL, g1);
	ASSERT_NE(NULL, g2);
	EXPECT_EQ(0, memcmp(g0, g1, HID * IN * sizeof(float)));
	EXPECT_EQ(0, memcmp(engine_graph_grad(keep.g, keep.w2), engine_graph_grad(again.g, again.w2),
			    CLS * HID * sizeof(float)));
	EXPECT_TRUE(isnan(g2[0]));
	/* The second layer's gradient needs only unit 0's output, which stayed. */
	EXPECT_EQ(0, memcmp(engine_graph_grad(keep.g, keep.w2), engine_graph_grad(lost.g, lost.w2),
			    CLS * HID * sizeof(float)));
	engine_graph_destroy(keep.g);
	engine_graph_destroy(again.g);
	engine_graph_destroy(lost.g);
}

TEST(bind_takes_parameters_only)
{
	struct mlp m;
	float w[HID * IN] = { 0 };

	ASSERT_EQ(0, build(&m, 2, false));
	ASSERT_EQ(-EINVAL, engine_graph_bind(m.g, m.x, w));
	ASSERT_EQ(-EINVAL, engine_graph_bind(m.g, 99, w));
	ASSERT_EQ(0, engine_graph_bind(m.g, m.w1, w));
	ASSERT_EQ((void *)w, engine_graph_data(m.g, m.w1));
	ASSERT_EQ(0, engine_graph_bind(m.g, m.w1, NULL));
	ASSERT_NE((void *)w, engine_graph_data(m.g, m.w1));
	/* Inputs have no memory before prepare(). */
	ASSERT_EQ(-EINVAL, engine_graph_set_input(m.g, m.x, w));
	engine_graph_destroy(m.g);
}

/*
 * Concat of p [2, 3], q [2, 2] and p again along axis 1, then a slice of
 * columns 3..6 (q and the second p's first two columns) into the loss:
 * p's gradient gathers its pieces', q's is its own, each against central
 * differences of the loss.
 */
static double concat_slice_loss(struct engine_graph *g, int labels, bool grad)
{
	struct engine_loss_result res;
	const int64_t lab[2] = { 1, 3 };

	if (engine_graph_set_input(g, labels, lab) || engine_graph_forward(g, true, 0) ||
	    engine_graph_loss(g, grad, &res) || (grad && engine_graph_backward(g)))
		return NAN;
	return res.loss;
}

TEST(concat_and_slice_gradients_match_finite_differences)
{
	struct engine_node_attrs cat = { .axis = 1 }, sl = { .axis = 1, .start = 3 };
	float p0[6] = { 0.1f, -0.4f, 0.7f, 0.2f, 0.9f, -0.3f }, q0[4] = { 0.5f, -0.8f, 0.3f, 0.6f };
	struct engine_graph *g;
	int p, q, y, z, labels;

	ASSERT_EQ(0, engine_graph_create(&g));
	p = engine_graph_add_value(g, ENGINE_DT_F32, ENGINE_VAL_PARAM, 2, (size_t[]){ 2, 3 }, p0);
	q = engine_graph_add_value(g, ENGINE_DT_F32, ENGINE_VAL_PARAM, 2, (size_t[]){ 2, 2 }, q0);
	y = engine_graph_add_value(g, ENGINE_DT_F32, ENGINE_VAL_ACT, 2, (size_t[]){ 2, 8 }, NULL);
	z = engine_graph_add_value(g, ENGINE_DT_F32, ENGINE_VAL_ACT, 2, (size_t[]){ 2, 4 }, NULL);
	labels = engine_graph_add_value(g, ENGINE_DT_I64, ENGINE_VAL_INPUT, 1, (size_t[]){ 2 }, NULL);
	ASSERT_LE(0, engine_graph_add_node(g, ENGINE_OP_CONCAT, &cat, 3, (int[]){ p, q, p }, 1, &y));
	ASSERT_LE(0, engine_graph_add_node(g, ENGINE_OP_SLICE, &sl, 1, &y, 1, &z));
	ASSERT_EQ(0, engine_graph_set_loss(g, z, labels));
	ASSERT_EQ(0, engine_graph_prepare(g, ENGINE_SGD)) TH_LOG("%s", engine_graph_error(g));
	float grads[2][6];

	ASSERT_FALSE(isnan(concat_slice_loss(g, labels, true)));
	ASSERT_NE(NULL, engine_graph_grad(g, p));
	ASSERT_NE(NULL, engine_graph_grad(g, q));
	memcpy(grads[0], engine_graph_grad(g, p), 6 * sizeof(float));
	memcpy(grads[1], engine_graph_grad(g, q), 4 * sizeof(float));
	/* Column 2 of p lies outside the slice in both copies: no gradient. */
	EXPECT_EQ(0.0f, grads[0][2]);
	EXPECT_EQ(0.0f, grads[0][5]);
	for (int v = 0; v < 2; v++) {
		int id = v ? q : p;
		size_t n = v ? 4 : 6;
		float *grad = grads[v], *data = engine_graph_data(g, id);

		for (size_t i = 0; i < n; i++) {
			float keep = data[i];
			double lp, lm;

			data[i] = keep + 1e-2f;
			lp = concat_slice_loss(g, labels, false);
			data[i] = keep - 1e-2f;
			lm = concat_slice_loss(g, labels, false);
			data[i] = keep;
			EXPECT_LT(fabs((lp - lm) / 2e-2 - grad[i]), 2e-3 + 2e-2 * fabs(grad[i]))
				TH_LOG("value %d element %zu: %g against %g", v, i, grad[i], (lp - lm) / 2e-2);
		}
	}
	engine_graph_destroy(g);
}

TEST_HARNESS_MAIN
