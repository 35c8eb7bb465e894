// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lowering a model to ops, and the table of kernels that run them. The
 * kernel names are the firmware engine's: an op with no kernel here is one
 * the device cannot run, and --validate-only reports it.
 */
#include <errno.h>
#include <string.h>

#include "compiler_internal.h"

static const char *act_name(enum wsecc_act a)
{
	switch (a) {
	case WSECC_ACT_NONE: return "none";
	case WSECC_ACT_RELU: return "relu";
	case WSECC_ACT_TANH: return "tanh";
	case WSECC_ACT_SIGMOID: return "sigmoid";
	case WSECC_ACT_GELU: return "gelu";
	}
	return "?";
}

/* The kernels the device has, by op name. */
static const struct {
	const char *op;
	const char *kernel;
} kernels[] = {
	{ "input_u8_scale", "u8_to_f32_scale" },
	{ "input_f32", "f32_copy" },
	{ "dense_fwd", "gemm_bias_f32" },
	{ "relu_fwd", "relu_f32" },
	{ "softmax_xent_fwd", "softmax_xent_f32" },
	{ "softmax_xent_bwd", "softmax_xent_grad_f32" },
	{ "relu_bwd", "relu_grad_f32" },
	{ "dense_bwd_data", "gemm_tn_f32" },
	{ "dense_bwd_weights", "gemm_nt_bias_grad_f32" },
	{ "sgd_update", "sgd_f32" },
	{ "momentum_update", "sgd_momentum_f32" },
	{ "adam_update", "adam_f32" },
};

static const char *kernel_for(const char *op)
{
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (strcmp(kernels[i].op, op) == 0)
			return kernels[i].kernel;
	return NULL;
}

/* Op names for activations and losses, forward and backward. */
static const char *act_op(enum wsecc_act a, int bwd)
{
	static const char *const names[][2] = {
		[WSECC_ACT_NONE] = { NULL, NULL },
		[WSECC_ACT_RELU] = { "relu_fwd", "relu_bwd" },
		[WSECC_ACT_TANH] = { "tanh_fwd", "tanh_bwd" },
		[WSECC_ACT_SIGMOID] = { "sigmoid_fwd", "sigmoid_bwd" },
		[WSECC_ACT_GELU] = { "gelu_fwd", "gelu_bwd" },
	};

	return names[a][bwd];
}

static const char *loss_op(enum wsecc_loss l, int bwd)
{
	if (l == WSECC_LOSS_SOFTMAX_XENT)
		return bwd ? "softmax_xent_bwd" : "softmax_xent_fwd";
	return bwd ? "mse_bwd" : "mse_fwd";
}

static const char *opt_op(enum wsep_optimizer_kind k)
{
	switch (k) {
	case WSEP_OPT_SGD: return "sgd_update";
	case WSEP_OPT_MOMENTUM: return "momentum_update";
	case WSEP_OPT_ADAM: return "adam_update";
	case WSEP_OPT_ADAMW: return "adamw_update";
	}
	return "?";
}

static void add(struct wsecc_op *ops, size_t max, size_t *n, enum wsecc_op_kind kind, int layer,
		const char *name, struct wsecc_pos pos)
{
	if (*n < max)
		ops[*n] = (struct wsecc_op){ kind, layer, name, kernel_for(name), pos };
	(*n)++;
}

size_t wsecc_lower(const struct wsecc_model *m, struct wsecc_op *ops, size_t max)
{
	size_t n = 0;

	add(ops, max, &n, WSECC_OP_INPUT_SCALE, -1,
	    m->input_type == WSEP_ELEM_U8 ? "input_u8_scale" : "input_f32", m->input_pos);
	for (uint32_t i = 0; i < m->num_layers; i++) {
		const struct wsecc_layer *l = &m->layers[i];

		add(ops, max, &n, WSECC_OP_DENSE_FWD, (int)i, "dense_fwd", l->pos);
		if (act_op(l->act, 0))
			add(ops, max, &n, WSECC_OP_ACT_FWD, (int)i, act_op(l->act, 0), l->act_pos);
	}
	add(ops, max, &n, WSECC_OP_LOSS_FWD, -1, loss_op(m->loss, 0), m->loss_pos);
	add(ops, max, &n, WSECC_OP_LOSS_BWD, -1, loss_op(m->loss, 1), m->loss_pos);
	for (uint32_t k = m->num_layers; k-- > 0;) {
		const struct wsecc_layer *l = &m->layers[k];

		if (act_op(l->act, 1))
			add(ops, max, &n, WSECC_OP_ACT_BWD, (int)k, act_op(l->act, 1), l->act_pos);
		add(ops, max, &n, WSECC_OP_DENSE_BWD_WEIGHTS, (int)k, "dense_bwd_weights", l->pos);
		if (k > 0)
			add(ops, max, &n, WSECC_OP_DENSE_BWD_DATA, (int)k, "dense_bwd_data", l->pos);
	}
	for (uint32_t i = 0; i < m->num_layers; i++)
		add(ops, max, &n, WSECC_OP_OPT_UPDATE, (int)i, opt_op(m->opt.kind), m->opt_pos);
	return n;
}

int wsecc_validate(const struct wsecc_model *m, struct wsecc_error *err)
{
	struct wsecc_op ops[WSECC_MAX_OPS];
	size_t n;

	if (m->num_layers < 1 || m->num_layers > WSECC_MAX_LAYERS)
		return wsecc_fail(err, m->file, 0, 0, "%u layers: expected 1..%u", m->num_layers,
				  WSECC_MAX_LAYERS);
	n = wsecc_lower(m, ops, WSECC_MAX_OPS);
	if (n > WSECC_MAX_OPS)
		return wsecc_fail(err, m->file, 0, 0, "%zu ops exceed the limit of %d", n,
				  WSECC_MAX_OPS);
	for (size_t i = 0; i < n; i++) {
		const struct wsecc_op *op = &ops[i];

		if (op->kernel)
			continue;
		if (op->kind == WSECC_OP_ACT_FWD || op->kind == WSECC_OP_ACT_BWD)
			return wsecc_fail(err, m->file, op->pos.line, op->pos.col,
					  "no kernel for op %s (layer %d, activation %s): the device has relu and none",
					  op->name, op->layer, act_name(m->layers[op->layer].act));
		return wsecc_fail(err, m->file, op->pos.line, op->pos.col,
				  "no kernel for op %s: the device has the softmax_xent loss only",
				  op->name);
	}
	/* softmax_xent takes logits: an activation on the last layer is a mistake. */
	if (m->layers[m->num_layers - 1].act != WSECC_ACT_NONE) {
		const struct wsecc_layer *l = &m->layers[m->num_layers - 1];

		return wsecc_fail(err, m->file, l->act_pos.line, l->act_pos.col,
				  "the last layer feeds softmax_xent, which takes logits: expected activation none");
	}
	return 0;
}

int wsecc_mode_parse(const char *s, enum wsecc_mode *mode)
{
	if (strcmp(s, "auto") == 0)
		*mode = WSECC_MODE_AUTO;
	else if (strcmp(s, "pipelined") == 0)
		*mode = WSECC_MODE_PIPELINED;
	else if (strcmp(s, "weight_streaming") == 0)
		*mode = WSECC_MODE_WEIGHT_STREAMING;
	else
		return -EINVAL;
	return 0;
}

int wsecc_recompute_parse(const char *s, enum wsecc_recompute *r)
{
	if (strcmp(s, "auto") == 0)
		*r = WSECC_RECOMPUTE_AUTO;
	else if (strcmp(s, "on") == 0)
		*r = WSECC_RECOMPUTE_ON;
	else if (strcmp(s, "off") == 0)
		*r = WSECC_RECOMPUTE_OFF;
	else
		return -EINVAL;
	return 0;
}
