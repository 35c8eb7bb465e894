// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ONNX importer and the graph executor end to end, on real PyTorch
 * exports (tests/corpus/onnx, made by its make-corpus; no PyTorch needed
 * here): the logits of a batch and the losses of three SGD steps must be
 * PyTorch's; attention and GELU must be fused; the gradients of the GPT
 * must match finite differences; the text model's graph must train like
 * the layer stack; broken files and unsupported ops must be refused with
 * messages naming the node.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/compiler_graph.h"
#include "wse/engine.h"
#include "wse/engine_graph.h"
#include "wse/engine_wsep.h"
#include "test_files.h"

#define CORPUS "tests/corpus/onnx/"

struct run {
	struct wsecc_graph *g;
	struct engine_graph *eg;
	int *ids, input, logits, labels;
};

/* Imports @name at @batch and builds its engine graph with the loss. */
static int open_run(const char *name, int64_t batch, enum engine_optim_kind kind, struct run *r)
{
	struct wsecc_onnx_options opt = { .batch = batch };
	struct wsecc_error err;
	char path[256];

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), CORPUS "%s.onnx", name);
	if (wsecc_onnx_import(path, &opt, &r->g, &err)) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		return -1;
	}
	r->ids = malloc(r->g->n_tensors * sizeof(int));
	if (!r->ids || engine_graph_create(&r->eg) ||
	    wsecc_graph_to_engine(r->g, r->eg, r->ids, true, &r->labels, &err) ||
	    engine_graph_prepare(r->eg, kind))
		return -1;
	r->input = r->ids[r->g->inputs[0]];
	r->logits = r->ids[r->g->outputs[0]];
	return 0;
}

static void close_run(struct run *r)
{
	engine_graph_destroy(r->eg);
	wsecc_graph_free(r->g);
	free(r->ids);
}

/*
 * The logits of NAME.input.pb (and NAME.mask.pb, a second input, where the
 * model has one) are NAME.logits.pb, and three SGD steps at lr 0.1 on
 * NAME.labels.pb give NAME.steps' losses, then the eval loss its fourth.
 */
static void matches_pytorch(struct __test_metadata *_metadata, const char *name)
{
	struct wsecc_tensor in, want, labels, mask = { 0 };
	struct wsecc_error err;
	struct engine_optim opt;
	struct engine_loss_result res;
	double steps[4];
	char path[256];
	struct run r;
	FILE *f;

	snprintf(path, sizeof(path), CORPUS "%s.input.pb", name);
	ASSERT_EQ(0, wsecc_onnx_read_tensor(path, &in, &err));
	snprintf(path, sizeof(path), CORPUS "%s.logits.pb", name);
	ASSERT_EQ(0, wsecc_onnx_read_tensor(path, &want, &err));
	snprintf(path, sizeof(path), CORPUS "%s.labels.pb", name);
	ASSERT_EQ(0, wsecc_onnx_read_tensor(path, &labels, &err));
	snprintf(path, sizeof(path), CORPUS "%s.steps", name);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(4, fscanf(f, "%lf %lf %lf %lf", &steps[0], &steps[1], &steps[2], &steps[3]));
	fclose(f);

	ASSERT_EQ(0, open_run(name, in.dims[0], ENGINE_SGD, &r));
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.input, in.data));
	snprintf(path, sizeof(path), CORPUS "%s.mask.pb", name);
	if (r.g->n_inputs > 1) {
		ASSERT_EQ(0, wsecc_onnx_read_tensor(path, &mask, &err)) TH_LOG("%s", err.msg);
		ASSERT_EQ(0, engine_graph_set_input(r.eg, r.ids[r.g->inputs[1]], mask.data));
	}
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.labels, labels.data));
	ASSERT_EQ(0, engine_graph_forward(r.eg, false, 0));
	const float *got = engine_graph_data(r.eg, r.logits);

	for (uint64_t i = 0; i < wsecc_tensor_numel(&want); i++) {
		float w = ((float *)want.data)[i];

		ASSERT_LT(fabsf(got[i] - w), 1e-5f + 1e-4f * fabsf(w));
	}
	/* Three plain SGD steps at lr 0.1: forward, loss, backward, update. */
	engine_optim_defaults(&opt, ENGINE_SGD, 0.1);
	for (int t = 1; t <= 3; t++) {
		ASSERT_EQ(0, engine_graph_train_step(r.eg, &opt, (uint64_t)t, -1.0, 1, &res));
		TH_LOG("%s step %d: loss %.7f, PyTorch %.7f", name, t, res.loss, steps[t - 1]);
		EXPECT_LT(fabs(res.loss - steps[t - 1]), 2e-5 * steps[t - 1]);
	}
	ASSERT_EQ(0, engine_graph_forward(r.eg, false, 0));
	ASSERT_EQ(0, engine_graph_loss(r.eg, false, &res));
	EXPECT_LT(fabs(res.loss - steps[3]), 2e-5 * steps[3]);
	close_run(&r);
	wsecc_tensor_release(&in);
	wsecc_tensor_release(&want);
	wsecc_tensor_release(&labels);
	if (mask.data)
		wsecc_tensor_release(&mask);
}

TEST(cnn_forward_and_sgd_steps_match_pytorch)
{
	matches_pytorch(_metadata, "cnn-tiny");
}

/*
 * BatchNorm2d exported in training mode: the logits in eval mode (running
 * statistics), three SGD steps with batch statistics, then the eval loss
 * again, which sees the running statistics the steps moved (PyTorch's
 * momentum, unbiased variance). They are state: not trained.
 */
TEST(batchnorm_cnn_trains_and_keeps_running_statistics_like_pytorch)
{
	struct run r;
	size_t state = 0, params = 0;

	matches_pytorch(_metadata, "bn-tiny");
	ASSERT_EQ(0, open_run("bn-tiny", 4, ENGINE_SGD, &r));
	for (size_t v = 0; v < engine_graph_values(r.eg); v++) {
		state += engine_graph_kind(r.eg, (int)v) == ENGINE_VAL_STATE;
		params += engine_graph_kind(r.eg, (int)v) == ENGINE_VAL_PARAM;
	}
	EXPECT_EQ(4, state);	/* two BatchNorm2d's running mean and variance */
	/* Both Pads run inside their AveragePool, the second's 1 pixel counted. */
	for (size_t i = 0; i < r.g->n_nodes; i++) {
		const struct wsecc_node *n = &r.g->nodes[i];

		if (!strcmp(n->op_type, "Pad"))
			EXPECT_EQ(WSECC_NODE_FUSED, n->state) TH_LOG("%s", n->name);
		if (!strcmp(n->op_type, "AveragePool") && n->attrs.kernel[0] == 3)
			EXPECT_TRUE(n->attrs.pads[0] == 1 && n->attrs.pads[3] == 1 &&
				    n->attrs.count_include_pad);
	}
	EXPECT_EQ(10, params);	/* weights and biases: 2 convolutions, 2 BatchNorm2d, the Linear */
	close_run(&r);
}

/* GlobalAveragePool and GlobalMaxPool at opset 17 against numpy's mean and max. */
TEST(global_pools_match_numpy)
{
	static const char *const outs[] = { "avg", "max" };
	struct wsecc_onnx_options opt = { 0 };
	struct wsecc_tensor in, want;
	struct wsecc_graph *g = NULL;
	struct engine_graph *eg = NULL;
	struct wsecc_error err;
	char path[256];
	int *ids, labels;

	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "global-pools.input.pb", &in, &err));
	ASSERT_EQ(0, wsecc_onnx_import(CORPUS "global-pools.onnx", &opt, &g, &err)) TH_LOG("%s", err.msg);
	ids = malloc(g->n_tensors * sizeof(int));
	ASSERT_NE(NULL, ids);
	ASSERT_EQ(0, engine_graph_create(&eg));
	ASSERT_EQ(0, wsecc_graph_to_engine(g, eg, ids, false, &labels, &err)) TH_LOG("%s", err.msg);
	ASSERT_EQ(0, engine_graph_prepare(eg, ENGINE_SGD));
	ASSERT_EQ(0, engine_graph_set_input(eg, ids[g->inputs[0]], in.data));
	ASSERT_EQ(0, engine_graph_forward(eg, false, 0));
	for (int k = 0; k < 2; k++) {
		const float *got = engine_graph_data(eg, ids[g->outputs[k]]);

		snprintf(path, sizeof(path), CORPUS "global-pools.%s.pb", outs[k]);
		ASSERT_EQ(0, wsecc_onnx_read_tensor(path, &want, &err));
		ASSERT_EQ(6, wsecc_tensor_numel(&want));
		for (int i = 0; i < 6; i++) {
			float w = ((float *)want.data)[i];

			EXPECT_LT(fabsf(got[i] - w), 1e-6f) TH_LOG("%s[%d]: %g, numpy %g", outs[k], i, got[i], w);
		}
		wsecc_tensor_release(&want);
	}
	engine_graph_destroy(eg);
	free(ids);
	wsecc_graph_free(g);
	wsecc_tensor_release(&in);
}

TEST(gpt_forward_and_sgd_steps_match_pytorch)
{
	matches_pytorch(_metadata, "gpt-tiny");
}

/*
 * head.weight = tok.weight: the exporter wrote the head's weight again,
 * transposed (onnx::MatMul_148). Tied back, one parameter trains from the
 * sum of the Gather's and the head's gradients, as PyTorch's does; the
 * copy is no value of the program.
 */
TEST(tied_gpt_trains_one_shared_weight_like_pytorch)
{
	struct run r;
	int copy, tok;

	matches_pytorch(_metadata, "gpt-tied-tiny");
	ASSERT_EQ(0, open_run("gpt-tied-tiny", 2, ENGINE_SGD, &r));
	tok = wsecc_graph_find(r.g, "tok.weight");
	copy = wsecc_graph_find(r.g, "onnx::MatMul_148");
	ASSERT_LE(0, tok);
	ASSERT_LE(0, copy);
	EXPECT_EQ(WSECC_T_PARAM, r.g->tensors[tok].kind);
	EXPECT_EQ(WSECC_T_VALUE, r.g->tensors[copy].kind);
	ASSERT_LE(0, r.g->tensors[copy].producer);
	EXPECT_STREQ("Transpose", r.g->nodes[r.g->tensors[copy].producer].op_type);
	EXPECT_EQ(ENGINE_VAL_ACT, engine_graph_kind(r.eg, r.ids[copy]));
	EXPECT_NE(NULL, strstr(r.g->notes, "note: 'onnx::MatMul_148' [16x96] is bit for bit the transpose of parameter 'tok.weight' [96x16]")) TH_LOG("%s", r.g->notes);
	close_run(&r);
}

/*
 * A sinusoidal position table registered as a buffer, exported with the
 * project's helper (which lists the parameters): the table stays a
 * constant while the parameters train, and the SGD steps are PyTorch's.
 */
TEST(sinusoidal_buffer_stays_fixed_while_parameters_train)
{
	struct engine_optim opt;
	struct engine_loss_result res;
	struct wsecc_tensor in, labels;
	struct wsecc_error err;
	struct run r;
	float *pe0, *tok0;
	size_t n_pe, n_tok, moved = 0;
	int pe, tok;

	matches_pytorch(_metadata, "sine-pos-tiny");
	ASSERT_EQ(0, open_run("sine-pos-tiny", 2, ENGINE_SGD, &r));
	pe = wsecc_graph_find(r.g, "pe");
	tok = wsecc_graph_find(r.g, "tok.weight");
	ASSERT_LE(0, pe);
	ASSERT_LE(0, tok);
	EXPECT_EQ(ENGINE_VAL_CONST, engine_graph_kind(r.eg, r.ids[pe]));
	EXPECT_EQ(ENGINE_VAL_PARAM, engine_graph_kind(r.eg, r.ids[tok]));
	n_pe = wsecc_tensor_numel(&r.g->tensors[pe]);
	n_tok = wsecc_tensor_numel(&r.g->tensors[tok]);
	pe0 = malloc(n_pe * sizeof(float));
	tok0 = malloc(n_tok * sizeof(float));
	ASSERT_NE(NULL, pe0);
	ASSERT_NE(NULL, tok0);
	memcpy(pe0, engine_graph_data(r.eg, r.ids[pe]), n_pe * sizeof(float));
	memcpy(tok0, engine_graph_data(r.eg, r.ids[tok]), n_tok * sizeof(float));
	/* sin(0) and cos(0) of position 0: the table is the sinusoids. */
	EXPECT_EQ(0.0f, pe0[0]);
	EXPECT_EQ(1.0f, pe0[1]);
	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "sine-pos-tiny.input.pb", &in, &err));
	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "sine-pos-tiny.labels.pb", &labels, &err));
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.input, in.data));
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.labels, labels.data));
	engine_optim_defaults(&opt, ENGINE_SGD, 0.1);
	for (int t = 1; t <= 5; t++)
		ASSERT_EQ(0, engine_graph_train_step(r.eg, &opt, (uint64_t)t, -1.0, 1, &res));
	EXPECT_EQ(0, memcmp(pe0, engine_graph_data(r.eg, r.ids[pe]), n_pe * sizeof(float)));
	for (size_t i = 0; i < n_tok; i++)
		moved += ((const float *)engine_graph_data(r.eg, r.ids[tok]))[i] != tok0[i];
	/* The tokens of the batch move their rows; the others have no gradient. */
	EXPECT_LT(0U, moved);
	free(pe0);
	free(tok0);
	wsecc_tensor_release(&in);
	wsecc_tensor_release(&labels);
	close_run(&r);
}

static size_t count_kernel(const struct wsecc_graph *g, const char *kernel)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_nodes; i++)
		n += g->nodes[i].state == WSECC_NODE_KERNEL && !strcmp(g->nodes[i].kernel, kernel);
	return n;
}

/*
 * LLaMA's RMSNorm (Pow, ReduceMean, Add, Sqrt, Div, Mul, Mul) and SwiGLU
 * (F.silu as Sigmoid times its input, times the up projection): each
 * RMSNorm one kernel, each SiLU one; logits and SGD steps as PyTorch's.
 */
TEST(rmsnorm_and_swiglu_fuse_and_match_pytorch)
{
	struct wsecc_onnx_options opt = { .batch = 2 };
	struct wsecc_graph *g = NULL;
	struct wsecc_error err;

	matches_pytorch(_metadata, "rms-swiglu-tiny");
	ASSERT_EQ(0, wsecc_onnx_import(CORPUS "rms-swiglu-tiny.onnx", &opt, &g, &err))
		TH_LOG("%s", err.msg);
	EXPECT_EQ(2, count_kernel(g, "rmsnorm_f32"));
	EXPECT_EQ(1, count_kernel(g, "silu_f32"));
	for (size_t i = 0; i < g->n_nodes; i++) {
		const char *op = g->nodes[i].op_type;

		if (!strcmp(op, "Pow") || !strcmp(op, "ReduceMean") || !strcmp(op, "Sqrt") ||
		    !strcmp(op, "Sigmoid"))
			EXPECT_EQ(WSECC_NODE_FUSED, g->nodes[i].state) TH_LOG("%s", g->nodes[i].name);
	}
	wsecc_graph_free(g);
}

/*
 * models/reference_models.py's LLaMA: RMSNorm, rotary embeddings of q and
 * k (Slice, Neg, Concat, Mul by the folded cos and sin tables, Add) read
 * by one fused attention, SwiGLU. Nothing is left without a kernel; the
 * logits and SGD steps are PyTorch's.
 */
TEST(llama_fuses_rmsnorm_rotary_attention_swiglu_and_matches_pytorch)
{
	struct wsecc_onnx_options opt = { .batch = 2 };
	struct wsecc_graph *g = NULL;
	struct wsecc_error err;
	size_t pending = 0;

	matches_pytorch(_metadata, "llama-tiny");
	ASSERT_EQ(0, wsecc_onnx_import(CORPUS "llama-tiny.onnx", &opt, &g, &err)) TH_LOG("%s", err.msg);
	EXPECT_EQ(3, count_kernel(g, "rmsnorm_f32"));
	EXPECT_EQ(2, count_kernel(g, "rotary_f32"));
	EXPECT_EQ(1, count_kernel(g, "attention_f32"));
	EXPECT_EQ(1, count_kernel(g, "silu_f32"));
	for (size_t i = 0; i < g->n_nodes; i++) {
		const char *op = g->nodes[i].op_type;

		pending += g->nodes[i].state == WSECC_NODE_PENDING || g->nodes[i].state == WSECC_NODE_REFUSED;
		if (!strcmp(op, "Slice") || !strcmp(op, "Neg") || !strcmp(op, "Concat"))
			EXPECT_TRUE(g->nodes[i].state == WSECC_NODE_FUSED ||
				    g->nodes[i].state == WSECC_NODE_FOLDED) TH_LOG("%s", g->nodes[i].name);
	}
	EXPECT_EQ(0, pending);
	wsecc_graph_free(g);
	/* named_parameters(): 10; the cos, sin and mask buffers stay constants. */
	struct run r;
	size_t params = 0;

	ASSERT_EQ(0, open_run("llama-tiny", 2, ENGINE_SGD, &r));
	for (size_t v = 0; v < engine_graph_values(r.eg); v++)
		params += engine_graph_kind(r.eg, (int)v) == ENGINE_VAL_PARAM;
	EXPECT_EQ(10, params);
	close_run(&r);
}

/*
 * A BERT-style encoder (models/bert_mlm.py) with its padding mask as a
 * second graph input, made additive in the model ((1 - mask) * -10000):
 * the attention is fused with the mask as its key mask, and the masked-LM
 * loss counts only the masked positions (labels -100 elsewhere), as
 * PyTorch's cross_entropy does.
 */
TEST(bert_with_padding_mask_fuses_attention_and_matches_pytorch)
{
	struct wsecc_onnx_options opt = { .batch = 2 };
	struct wsecc_graph *g = NULL;
	struct wsecc_error err;
	size_t att = 0;

	matches_pytorch(_metadata, "bert-tiny");
	ASSERT_EQ(0, wsecc_onnx_import(CORPUS "bert-tiny.onnx", &opt, &g, &err)) TH_LOG("%s", err.msg);
	ASSERT_EQ(2, g->n_inputs);
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct wsecc_node *n = &g->nodes[i];

		EXPECT_TRUE(n->state != WSECC_NODE_PENDING && n->state != WSECC_NODE_REFUSED)
			TH_LOG("%s: %s", n->name, n->reason);
		if (n->state == WSECC_NODE_KERNEL && n->op == ENGINE_OP_ATTENTION) {
			att++;
			EXPECT_EQ(4, n->n_in);
			EXPECT_FALSE(n->attrs.causal);
		}
	}
	EXPECT_EQ(1, att);
	wsecc_graph_free(g);
}

TEST(gpt_export_fuses_attention_and_gelu_and_folds_shapes)
{
	struct wsecc_onnx_options opt = { .batch = 5 };
	struct wsecc_graph *g;
	struct wsecc_error err;
	size_t counts[WSECC_NODE_REFUSED + 1], params = 0;

	ASSERT_EQ(0, wsecc_onnx_import(CORPUS "gpt-tiny.onnx", &opt, &g, &err));
	ASSERT_EQ(0, wsecc_graph_check(g, &err));
	wsecc_graph_counts(g, counts);
	EXPECT_EQ(0, counts[WSECC_NODE_REFUSED] + counts[WSECC_NODE_PENDING]);
	EXPECT_EQ(1, count_kernel(g, "attention_f32"));
	EXPECT_EQ(1, count_kernel(g, "gelu_f32"));
	EXPECT_EQ(3, count_kernel(g, "layernorm_f32"));
	EXPECT_EQ(0, count_kernel(g, "transpose_f32"));
	EXPECT_GT(counts[WSECC_NODE_FOLDED], 40);
	for (size_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].state == WSECC_NODE_KERNEL && !strcmp(g->nodes[i].kernel, "attention_f32")) {
			EXPECT_EQ(2, g->nodes[i].attrs.heads);
			EXPECT_TRUE(g->nodes[i].attrs.causal);
			EXPECT_LT(fabsf(g->nodes[i].attrs.scale - 0.35355339f), 1e-7f);
		}
	/* Every trainable tensor of the model, the LayerNorm weights torch
	 * merged through Identity split again; the batch from the option.
	 */
	for (size_t t = 0; t < g->n_tensors; t++)
		params += g->tensors[t].kind == WSECC_T_PARAM;
	EXPECT_EQ(18, params);
	EXPECT_EQ(5, g->tensors[g->inputs[0]].dims[0]);
	wsecc_graph_free(g);
}

/* Loss of the current batch, in double through the fp32 executor. */
/*
 * gpt-tiny exported in training mode with dropout 0.1: every Dropout
 * imports (attention's inside the fused kernel), eval mode is gpt-tiny's
 * PyTorch logits (dropout is the identity), training draws masks from the
 * seed: the same seed the same loss, another seed another.
 */
TEST(dropout_gpt_export_imports_whole_and_draws_seeded_masks)
{
	struct wsecc_tensor in, want, labels;
	struct wsecc_error err;
	struct engine_loss_result a, b, c;
	struct run r;
	size_t dropouts = 0;

	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "gpt-tiny.input.pb", &in, &err));
	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "gpt-tiny.logits.pb", &want, &err));
	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "gpt-tiny.labels.pb", &labels, &err));
	ASSERT_EQ(0, open_run("gpt-drop-tiny", in.dims[0], ENGINE_SGD, &r));
	ASSERT_EQ(1, count_kernel(r.g, "attention_f32"));
	for (size_t i = 0; i < r.g->n_nodes; i++) {
		const struct wsecc_node *n = &r.g->nodes[i];

		if (n->state == WSECC_NODE_KERNEL && n->op == ENGINE_OP_ATTENTION)
			EXPECT_EQ(0.1f, n->attrs.ratio);
		dropouts += n->state == WSECC_NODE_KERNEL && n->op == ENGINE_OP_DROPOUT;
	}
	EXPECT_EQ(3, dropouts);	/* embeddings, attention's projection, the MLP */
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.input, in.data));
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.labels, labels.data));
	ASSERT_EQ(0, engine_graph_forward(r.eg, false, 5));
	const float *got = engine_graph_data(r.eg, r.logits);

	for (uint64_t i = 0; i < wsecc_tensor_numel(&want); i++) {
		float w = ((float *)want.data)[i];

		ASSERT_LT(fabsf(got[i] - w), 1e-5f + 1e-4f * fabsf(w));
	}
	ASSERT_EQ(0, engine_graph_forward(r.eg, true, 5));
	ASSERT_EQ(0, engine_graph_loss(r.eg, true, &a));
	ASSERT_EQ(0, engine_graph_backward(r.eg));
	ASSERT_EQ(0, engine_graph_forward(r.eg, true, 5));
	ASSERT_EQ(0, engine_graph_loss(r.eg, false, &b));
	ASSERT_EQ(0, engine_graph_forward(r.eg, true, 6));
	ASSERT_EQ(0, engine_graph_loss(r.eg, false, &c));
	EXPECT_EQ(a.loss, b.loss);
	EXPECT_NE(a.loss, c.loss);
	close_run(&r);
	wsecc_tensor_release(&in);
	wsecc_tensor_release(&want);
	wsecc_tensor_release(&labels);
}

static double loss_now(struct run *r)
{
	struct engine_loss_result res;

	if (engine_graph_forward(r->eg, false, 0) || engine_graph_loss(r->eg, false, &res))
		return NAN;
	return res.loss;
}

TEST(gpt_gradients_match_finite_differences)
{
	struct wsecc_tensor in, labels;
	struct wsecc_error err;
	struct engine_loss_result res;
	struct run r;
	size_t checked = 0;

	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "gpt-tiny.input.pb", &in, &err));
	ASSERT_EQ(0, wsecc_onnx_read_tensor(CORPUS "gpt-tiny.labels.pb", &labels, &err));
	ASSERT_EQ(0, open_run("gpt-tiny", 2, ENGINE_SGD, &r));
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.input, in.data));
	ASSERT_EQ(0, engine_graph_set_input(r.eg, r.labels, labels.data));
	ASSERT_EQ(0, engine_graph_forward(r.eg, true, 0));
	ASSERT_EQ(0, engine_graph_loss(r.eg, true, &res));
	ASSERT_EQ(0, engine_graph_backward(r.eg));
	/* Keep the gradients: every forward pass below starts a new step. */
	float *grads[64] = { NULL };

	ASSERT_LE(engine_graph_values(r.eg), 64);
	for (size_t v = 0; v < engine_graph_values(r.eg); v++) {
		size_t rank, dims[ENGINE_MAX_RANK], n;
		const float *grad = engine_graph_grad(r.eg, (int)v);

		if (engine_graph_kind(r.eg, (int)v) != ENGINE_VAL_PARAM)
			continue;
		if (!grad)
			TH_LOG("parameter value %zu has no gradient", v);
		ASSERT_NE(NULL, grad);
		engine_graph_shape(r.eg, (int)v, &rank, dims);
		n = engine_numel(dims, rank);
		grads[v] = malloc(n * sizeof(float));
		memcpy(grads[v], grad, n * sizeof(float));
	}
	for (size_t v = 0; v < engine_graph_values(r.eg); v++) {
		size_t rank, dims[ENGINE_MAX_RANK], n;
		const float *grad = grads[v];
		float *w;

		if (!grad)
			continue;
		engine_graph_shape(r.eg, (int)v, &rank, dims);
		n = engine_numel(dims, rank);
		w = engine_graph_data(r.eg, (int)v);
		/* Three coordinates of every parameter tensor. */
		for (size_t k = 0; k < 3; k++) {
			size_t j = (k * 7919 + v * 104729) % n;
			float keep = w[j];
			const float h = 1e-2f;
			double lp, lm, num;

			w[j] = keep + h;
			lp = loss_now(&r);
			w[j] = keep - h;
			lm = loss_now(&r);
			w[j] = keep;
			num = (lp - lm) / (2.0 * h);
			if (!(fabs(num - grad[j]) <= 1e-3 + 3e-2 * fabs(num)))
				TH_LOG("value %zu element %zu: backward %g, finite differences %g", v, j,
				       grad[j], num);
			EXPECT_LE(fabs(num - grad[j]), 1e-3 + 3e-2 * fabs(num));
			checked++;
		}
		free(grads[v]);
	}
	EXPECT_EQ(18 * 3, checked);
	close_run(&r);
	wsecc_tensor_release(&in);
	wsecc_tensor_release(&labels);
}

TEST(text_model_graph_trains_like_the_layer_stack)
{
	static const char text[] = "model t\ninput 12 f32\ndense 12 9 relu\ndense 9 4 none\n"
				   "loss softmax_xent\noptimizer adam lr=0.01\nbatch 6\nseed 3\n";
	const size_t widths[] = { 12, 9, 4 };
	struct wsecc_model m;
	struct wsecc_error err;
	struct wsecc_graph *g;
	struct engine_graph *eg;
	struct engine_shape shape;
	struct engine_params *p;
	struct engine_workspace *ws;
	struct engine_optim opt;
	struct engine_rng rng;
	int ids[32], labels_id;
	float x[72];
	uint8_t y8[6];
	int64_t y64[6];

	ASSERT_EQ(0, wsecc_parse_string(text, "t.model", &m, &err));
	ASSERT_EQ(0, wsecc_graph_from_model(&m, &g, &err));
	ASSERT_LE(g->n_tensors, 32);
	EXPECT_EQ(0, wsecc_graph_check(g, &err));
	ASSERT_EQ(0, engine_graph_create(&eg));
	ASSERT_EQ(0, wsecc_graph_to_engine(g, eg, ids, false, &labels_id, &err));
	ASSERT_EQ(0, engine_graph_prepare(eg, ENGINE_ADAM));
	ASSERT_EQ(0, engine_shape_mlp(&shape, widths, 2));
	ASSERT_EQ(0, engine_params_create(&shape, ENGINE_ADAM, &p));
	ASSERT_EQ(0, engine_workspace_create(&shape, 6, &ws));
	/* The same initial weights in both. */
	for (size_t l = 0; l < 2; l++) {
		char wn[32], bn[32];

		snprintf(wn, sizeof(wn), "layer%zu.weight", l);
		snprintf(bn, sizeof(bn), "layer%zu.bias", l);
		memcpy(p->layer[l].w, g->tensors[wsecc_graph_find(g, wn)].data,
		       widths[l] * widths[l + 1] * sizeof(float));
		memcpy(p->layer[l].b, g->tensors[wsecc_graph_find(g, bn)].data,
		       widths[l + 1] * sizeof(float));
	}
	engine_optim_defaults(&opt, ENGINE_ADAM, 0.01);
	engine_rng_seed(&rng, 9);
	for (uint64_t t = 1; t <= 5; t++) {
		struct engine_loss_result a, b;
		uint8_t px[72];

		for (int i = 0; i < 72; i++) {
			px[i] = (uint8_t)(engine_rng_next(&rng) & 0xff);
			x[i] = px[i] / 255.0f;
		}
		for (int i = 0; i < 6; i++)
			y64[i] = y8[i] = (uint8_t)(engine_rng_next(&rng) % 4);
		ASSERT_EQ(0, engine_graph_set_input(eg, ids[g->inputs[0]], x));
		ASSERT_EQ(0, engine_graph_set_input(eg, labels_id, y64));
		ASSERT_EQ(0, engine_graph_train_step(eg, &opt, t, -1.0, 1, &a));
		/* The layer stack reads bytes; the text model's input is f32. */
		ASSERT_EQ(0, engine_load_input(ws, x, 6));
		for (size_t k = 0; k < 2; k++)
			ASSERT_EQ(0, engine_forward_layer(ws, k, p->layer[k].w, p->layer[k].b));
		ASSERT_EQ(0, engine_loss(ws, y8, 6, &b));
		for (size_t k = 2; k-- > 0;) {
			ASSERT_EQ(0, engine_backward_layer(ws, k, p->layer[k].w, 0.0f, p->layer[k].dw,
							   p->layer[k].db));
			ASSERT_EQ(0, engine_params_update_layer(p, &opt, t, k));
		}
		EXPECT_LT(fabsf(a.loss - b.loss), 1e-5f * b.loss);
		EXPECT_EQ(a.correct, b.correct);
	}
	const float *w0 = engine_graph_data(eg, ids[wsecc_graph_find(g, "layer0.weight")]);

	for (size_t i = 0; i < 12 * 9; i++)
		EXPECT_LT(fabsf(w0[i] - p->layer[0].w[i]), 1e-5f);
	engine_workspace_destroy(ws);
	engine_params_destroy(p);
	engine_graph_destroy(eg);
	wsecc_graph_free(g);
}

/* Replaces the first occurrence of @from in the buffer by @to (same length). */
static bool patch(char *buf, size_t len, const char *from, const char *to)
{
	size_t n = strlen(from);

	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, from, n)) {
			memcpy(buf + i, to, n);
			return true;
		}
	return false;
}

TEST(broken_files_and_unsupported_ops_are_refused_naming_the_node)
{
	struct wsecc_graph *g;
	struct wsecc_error err;
	size_t len;
	char *buf = test_read_file(CORPUS "gpt-tiny.onnx", &len);

	ASSERT_NE(NULL, buf);
	/* Truncations anywhere: an error, never a graph that runs. */
	for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
		int rc = wsecc_onnx_import_buffer(buf, cut, "cut.onnx", NULL, &g, &err);

		if (rc == 0) {
			EXPECT_NE(0, wsecc_graph_check(g, &err));
			wsecc_graph_free(g);
		} else {
			EXPECT_NE(0, err.msg[0]);
		}
	}
	ASSERT_GT(0, wsecc_onnx_import_buffer("\x0a\xff\xff\xff\x0f", 5, "junk.onnx", NULL, &g, &err));
	EXPECT_NE(NULL, strstr(err.msg, "truncated or corrupted"));
	/* An op with no kernel: the listing and the check name it. */
	ASSERT_TRUE(patch(buf, len, "\x22\x07Softmax", "\x22\x07Softmin"));	/* op_type */
	ASSERT_EQ(0, wsecc_onnx_import_buffer(buf, len, "softmin.onnx", NULL, &g, &err));
	ASSERT_GT(0, wsecc_graph_check(g, &err));
	EXPECT_NE(NULL, strstr(err.msg, "unsupported op"));
	EXPECT_NE(NULL, strstr(err.msg, "Softmin"));
	EXPECT_NE(NULL, strstr(err.msg, "/attn/"));
	wsecc_graph_free(g);
	free(buf);
	/* An unsupported attribute is refused, not ignored. */
	buf = test_read_file(CORPUS "cnn-tiny.onnx", &len);
	ASSERT_NE(NULL, buf);
	ASSERT_TRUE(patch(buf, len, "\x0a\x05group", "\x0a\x05grouq"));	/* a name */
	ASSERT_EQ(0, wsecc_onnx_import_buffer(buf, len, "attr.onnx", NULL, &g, &err));
	ASSERT_GT(0, wsecc_graph_check(g, &err));
	EXPECT_NE(NULL, strstr(err.msg, "attribute 'grouq' is not supported"));
	EXPECT_NE(NULL, strstr(err.msg, "Conv"));
	wsecc_graph_free(g);
	free(buf);
}

static struct wsecc_graph_program *compile(struct __test_metadata *_metadata, const char *name,
					   uint32_t batch, enum wsecc_mode mode)
{
	struct wsecc_graph_options o = {
		.batch = batch, .mode = mode, .seed = 1,
		.opt = { .kind = WSEP_OPT_SGD, .lr = 0.1 },
	};
	struct wsecc_graph_program *gp = NULL;
	struct wsecc_error err;
	struct wse_wafer w;
	char path[256], msg[256];

	snprintf(path, sizeof(path), CORPUS "%s.onnx", name);
	if (wse_wafer_parse("64x64", &w, msg, sizeof(msg)) ||
	    wsecc_graph_compile(path, &o, &w, &gp, &err))
		TH_LOG("%s: %s", path, err.msg);
	return gp;
}

/* The program's units: the module paths PyTorch's exporter named the nodes after. */
TEST(graph_programs_are_cut_into_units)
{
	struct wsecc_graph_program *gp = compile(_metadata, "gpt-tiny", 4, WSECC_MODE_WEIGHT_STREAMING);
	const struct wsep_program *p;
	static const char *const gpt[] = { "tok:", "blocks.0:", "head:" };
	static const char *const cnn[] = { "features.0:", "features.3:", "classifier.1:",
					   "classifier.3:" };

	ASSERT_NE(NULL, gp);
	p = gp->prog;
	ASSERT_EQ(3, p->num_layers);
	for (int u = 0; u < 3; u++) {
		EXPECT_EQ(0, strncmp(gp->plan.label[u], gpt[u], strlen(gpt[u])))
			TH_LOG("%s", gp->plan.label[u]);
	}
	/* Tokens in, the residual stream between the units, every token's logits out. */
	EXPECT_EQ(8, p->layers[0].in);
	EXPECT_EQ(8 * 16, p->layers[0].out);
	EXPECT_EQ(8 * 16, p->layers[1].out);
	EXPECT_EQ(8 * 96, p->layers[2].out);
	EXPECT_EQ(6608, wsep_total_params(p->layers, 3));
	EXPECT_EQ(WSEP_ELEM_I32, p->input_type);
	EXPECT_EQ(8, p->graph->rows);
	EXPECT_EQ(96, p->graph->classes);
	EXPECT_EQ(0, p->graph->values[p->graph->input].batch_dim);
	wsecc_graph_program_free(gp);

	gp = compile(_metadata, "cnn-tiny", 4, WSECC_MODE_AUTO);
	ASSERT_NE(NULL, gp);
	EXPECT_EQ(WSEP_MODE_PIPELINED, gp->prog->mode);
	ASSERT_EQ(4, gp->prog->num_layers);
	for (int u = 0; u < 4; u++) {
		EXPECT_EQ(0, strncmp(gp->plan.label[u], cnn[u], strlen(cnn[u])))
			TH_LOG("%s", gp->plan.label[u]);
	}
	/* A convolution's output crosses to the next unit pooled: 2 x 14 x 14. */
	EXPECT_EQ(2 * 14 * 14, gp->prog->layers[0].out);
	EXPECT_EQ(WSEP_ELEM_U8, gp->prog->input_type);
	wsecc_graph_program_free(gp);
}

/*
 * The program's graph, built by the engine at any batch up to the
 * program's, computes what the imported model does: the same logits, bit
 * for bit, at the batch and at a smaller one (its batch dimensions
 * scaled), and a program refuses a larger one.
 */
/*
 * bn-tiny's program: the running statistics are state values in the
 * weights layout, in their BatchNorm's unit, and survive the file.
 */
TEST(graph_program_keeps_running_statistics_as_state)
{
	struct wsecc_graph_program *gp = compile(_metadata, "bn-tiny", 4, WSECC_MODE_PIPELINED);
	struct wsep_program *back = NULL;
	size_t len, state = 0, bn = 0, n_ir = 0;
	struct run r;
	char msg[256];
	void *buf;

	ASSERT_NE(NULL, gp);
	ASSERT_EQ(0, open_run("bn-tiny", 4, ENGINE_SGD, &r));
	ASSERT_EQ(0, wsep_write(gp->prog, &buf, &len, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, wsep_read(buf, len, &back, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (uint32_t v = 0; v < back->graph->num_values; v++) {
		const struct wsep_graph_value *x = &back->graph->values[v];

		if (x->kind != WSEP_VAL_STATE)
			continue;
		state++;
		ASSERT_LE(0, x->unit);
		EXPECT_LE(x->offset + x->dims[0], back->num_weights);
		/* The export's statistics, in the order the model has them. */
		while (n_ir < r.g->n_tensors && r.g->tensors[n_ir].kind != WSECC_T_STATE)
			n_ir++;
		ASSERT_LT(n_ir, r.g->n_tensors);
		EXPECT_EQ(0, memcmp(back->weights + x->offset, r.g->tensors[n_ir].data,
				    x->dims[0] * sizeof(float)))
			TH_LOG("%s", r.g->tensors[n_ir].name);
		n_ir++;
	}
	close_run(&r);
	for (uint32_t i = 0; i < back->graph->num_nodes; i++) {
		const struct wsep_graph_node *nd = &back->graph->nodes[i];

		if (nd->op != WSEP_OP_BATCHNORM)
			continue;
		bn++;
		EXPECT_EQ(WSEP_ATTR_TRAINING_MODE | WSEP_ATTR_UNBIASED, nd->a.flags);
		EXPECT_EQ(0.9f, nd->a.momentum);
		EXPECT_EQ(WSEP_VAL_STATE, back->graph->values[nd->in[3]].kind);
		EXPECT_EQ(WSEP_VAL_STATE, back->graph->values[nd->in[4]].kind);
	}
	EXPECT_EQ(4, state);
	EXPECT_EQ(2, bn);
	free(buf);
	wsep_program_free(back);
	wsecc_graph_program_free(gp);
	EXPECT_EQ(NULL, compile(_metadata, "bn-tiny", 4, WSECC_MODE_WEIGHT_STREAMING));
}

TEST(graph_programs_compute_what_the_model_does_at_any_batch)
{
	static const char *const names[] = { "cnn-tiny", "gpt-tiny", "bn-tiny", "llama-tiny" };

	for (int n = 0; n < 4; n++) {
		struct wsecc_graph_program *gp = compile(_metadata, names[n], 6, WSECC_MODE_AUTO);
		uint32_t batches[] = { 6, 3 };
		char msg[256];

		ASSERT_NE(NULL, gp);
		for (int b = 0; b < 2; b++) {
			struct engine_graph *pg;
			struct run r;
			size_t rank, dims[ENGINE_MAX_RANK], in_n, out_n;
			const struct wsep_graph *wg = gp->prog->graph;
			void *x;

			ASSERT_EQ(0, open_run(names[n], batches[b], ENGINE_SGD, &r));
			ASSERT_EQ(0, engine_graph_from_wsep(gp->prog, batches[b], &pg, msg, sizeof(msg)))
				TH_LOG("%s", msg);
			ASSERT_EQ(0, engine_graph_prepare(pg, ENGINE_SGD));
			engine_graph_shape(r.eg, r.input, &rank, dims);
			in_n = 1;
			for (size_t d = 0; d < rank; d++)
				in_n *= dims[d];
			x = calloc(in_n, 8);
			for (size_t i = 0; i < in_n; i++) {
				if (engine_graph_dtype(r.eg, r.input) == ENGINE_DT_I64)
					((int64_t *)x)[i] = (int64_t)((i * 7) % 96);
				else
					((float *)x)[i] = (float)((i * 13) % 255) / 255.0f;
			}
			ASSERT_EQ(0, engine_graph_set_input(r.eg, r.input, x));
			ASSERT_EQ(0, engine_graph_set_input(pg, wg->input, x));
			/* A training pass first: bn-tiny's running statistics move alike. */
			ASSERT_EQ(0, engine_graph_forward(r.eg, true, 0));
			ASSERT_EQ(0, engine_graph_forward(pg, true, 0));
			ASSERT_EQ(0, engine_graph_forward(r.eg, false, 0));
			ASSERT_EQ(0, engine_graph_forward(pg, false, 0));
			engine_graph_shape(pg, wg->logits, &rank, dims);
			out_n = 1;
			for (size_t d = 0; d < rank; d++)
				out_n *= dims[d];
			EXPECT_EQ(batches[b], dims[0]);
			EXPECT_EQ(0, memcmp(engine_graph_data(r.eg, r.logits),
					    engine_graph_data(pg, wg->logits), out_n * sizeof(float)))
				TH_LOG("%s at batch %u", names[n], batches[b]);
			free(x);
			engine_graph_destroy(pg);
			close_run(&r);
		}
		EXPECT_EQ(-EINVAL, engine_graph_from_wsep(gp->prog, 7, &(struct engine_graph *){ NULL },
							  msg, sizeof(msg)));
		wsecc_graph_program_free(gp);
	}
}

TEST_HARNESS_MAIN
