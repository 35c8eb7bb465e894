// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The graph executor, part two: a step. Forward runs the nodes in order;
 * the loss writes the logits' gradient; backward runs them in reverse.
 * Each backward kernel overwrites its input gradients, so a tensor used by
 * several nodes (a residual stream, a weight shared between layers) takes
 * its first contribution in place and adds later ones from a scratch
 * buffer: "fresh" marks a gradient that holds this step's sum so far.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

static float *F(struct gvalue *v)
{
	return v->data;
}

static struct gvalue *IN(struct engine_graph *g, struct gnode *nd, size_t i)
{
	return i < nd->n_in && nd->in[i] >= 0 ? &g->v[nd->in[i]] : NULL;
}

static struct gvalue *OUT(struct engine_graph *g, struct gnode *nd, size_t i)
{
	return &g->v[nd->out[i]];
}

static uint64_t node_seed(uint64_t seed, size_t idx)
{
	struct engine_rng rng;

	engine_rng_seed(&rng, seed ^ (0x9E3779B97F4A7C15ULL * (idx + 1)));
	return engine_rng_next(&rng);
}

/*
 * Batch statistics only in training, and only for a node exported in
 * training mode. The running statistics are updated in place when they are
 * state (so checkpoints and later evaluation see them), into outputs 1 and
 * 2 when the node has them.
 */
static int forward_batchnorm(struct engine_graph *g, struct gnode *nd, bool training)
{
	struct gvalue *rm = IN(g, nd, 3), *rv = IN(g, nd, 4);
	size_t c = nd->k.bn.channels;
	float *m = F(rm), *v = F(rv);
	int err;

	nd->dropped = training && nd->a.training_mode;
	if (nd->dropped && (rm->kind != ENGINE_VAL_STATE || rv->kind != ENGINE_VAL_STATE)) {
		/* Fixed statistics (a node test's inputs): update copies. */
		m = nd->n_out == 3 ? F(OUT(g, nd, 1)) : nd->aux + 2 * c;
		v = nd->n_out == 3 ? F(OUT(g, nd, 2)) : nd->aux + 3 * c;
		memcpy(m, F(rm), c * sizeof(float));
		memcpy(v, F(rv), c * sizeof(float));
	}
	err = engine_batchnorm_forward(&nd->k.bn, nd->dropped, F(IN(g, nd, 0)), F(IN(g, nd, 1)),
				       F(IN(g, nd, 2)), m, v, F(OUT(g, nd, 0)), nd->aux, nd->aux + c);
	if (err || nd->n_out < 3)
		return err;
	if (m == F(rm)) {
		memcpy(F(OUT(g, nd, 1)), m, c * sizeof(float));
		memcpy(F(OUT(g, nd, 2)), v, c * sizeof(float));
	}
	return 0;
}

static int forward_node(struct engine_graph *g, size_t idx, bool training, uint64_t seed)
{
	struct gnode *nd = &g->n[idx];
	struct gvalue *x = IN(g, nd, 0), *i1 = IN(g, nd, 1), *i2 = IN(g, nd, 2);
	float *y = F(OUT(g, nd, 0));

	switch (nd->op) {
	case ENGINE_OP_CONV2D:
		return engine_conv2d_forward(&nd->k.conv, F(x), F(i1), i2 ? F(i2) : NULL, y, g->scratch);
	case ENGINE_OP_MAXPOOL2D:
		return engine_maxpool2d_forward(&nd->k.pool, F(x), y);
	case ENGINE_OP_AVGPOOL2D:
		return engine_avgpool2d_forward(&nd->k.pool, F(x), y);
	case ENGINE_OP_GEMM:
		return engine_gemm_forward(&nd->k.gemm, F(x), F(i1), i2 ? F(i2) : NULL, y);
	case ENGINE_OP_MATMUL:
		return engine_matmul_forward(&nd->k.mm, F(x), F(i1), y);
	case ENGINE_OP_BINARY:
		return engine_binary_forward(&nd->k.bin, F(x), F(i1), y);
	case ENGINE_OP_ACT:
		return engine_act_forward(nd->a.act, F(x), x->n, y);
	case ENGINE_OP_LAYERNORM: {
		int err = engine_layernorm_forward(F(x), F(i1), i2 ? F(i2) : NULL, nd->outer,
						   nd->inner, nd->a.epsilon, y, nd->aux,
						   nd->aux + nd->outer);

		for (size_t k = 1; !err && k < nd->n_out; k++)
			memcpy(F(OUT(g, nd, k)), nd->aux + (k - 1) * nd->outer, nd->outer * sizeof(float));
		return err;
	}
	case ENGINE_OP_RMSNORM:
		return engine_rmsnorm_forward(F(x), F(i1), nd->outer, nd->inner, nd->a.epsilon, y,
					      nd->aux);
	case ENGINE_OP_ROTARY:
		return engine_rotary_forward(&nd->k.rot, F(x), F(i1), F(i2), y);
	case ENGINE_OP_SOFTMAX:
		return engine_softmax_forward(F(x), nd->outer, nd->len, nd->inner, y);
	case ENGINE_OP_GATHER:
		return engine_gather_forward(F(x), nd->outer, nd->len, nd->inner, i1->data, i1->n, y);
	case ENGINE_OP_ATTENTION:
		nd->k.att.key_mask = nd->n_in > 3 && IN(g, nd, 3) ? F(IN(g, nd, 3)) : NULL;
		nd->dropped = training && nd->a.ratio > 0.0f;
		if (nd->dropped)
			return engine_attention_forward_dropout(&nd->k.att, F(x), F(i1), F(i2),
								node_seed(seed, idx), y, nd->aux,
								nd->keep, g->scratch);
		return engine_attention_forward(&nd->k.att, F(x), F(i1), F(i2), y, nd->aux);
	case ENGINE_OP_DROPOUT: {
		int err = 0;

		nd->dropped = training && nd->a.ratio > 0.0f;
		if (nd->dropped)
			err = engine_dropout_forward(F(x), x->n, nd->a.ratio, node_seed(seed, idx), y,
						     nd->keep);
		else
			memcpy(y, F(x), x->n * sizeof(float));
		/* The mask output: what the backward pass will use. */
		for (size_t i = 0; !err && nd->n_out > 1 && i < x->n; i++)
			F(OUT(g, nd, 1))[i] = nd->dropped ? (float)nd->keep[i] : 1.0f;
		return err;
	}
	case ENGINE_OP_BATCHNORM:
		return forward_batchnorm(g, nd, training);
	case ENGINE_OP_TRANSPOSE:
		return engine_transpose(F(x), x->dims, x->rank, nd->a.perm, y);
	case ENGINE_OP_SPLIT: {
		float *ys[ENGINE_GRAPH_MAX_IO];

		for (size_t i = 0; i < nd->n_out; i++)
			ys[i] = F(OUT(g, nd, i));
		return engine_split(F(x), nd->outer, nd->inner, nd->sizes, nd->n_out, ys);
	}
	case ENGINE_OP_RESHAPE:
		memcpy(y, F(x), x->n * sizeof(float));
		return 0;
	case ENGINE_OP_CONCAT: {
		const float *xs[ENGINE_GRAPH_MAX_IO];

		for (size_t i = 0; i < nd->n_in; i++)
			xs[i] = F(IN(g, nd, i));
		return engine_concat(xs, nd->outer, nd->inner, nd->sizes, nd->n_in, y);
	}
	case ENGINE_OP_WHERE:
		return engine_where_forward(&nd->k.wh, F(x), F(i1), F(i2), y);
	case ENGINE_OP_SLICE:
		return engine_slice_forward(F(x), nd->outer, nd->len, nd->inner, nd->a.start,
					    OUT(g, nd, 0)->dims[nd->a.axis], y);
	default:
		return -EINVAL;
	}
}

static int run_forward(struct engine_graph *g, size_t first, size_t end, bool training,
		       uint64_t seed)
{
	for (size_t i = first; i < end; i++) {
		int err = forward_node(g, i, training, seed);

		if (err) {
			snprintf(g->err, sizeof(g->err), "node %zu: %s", i, engine_strerror(err));
			return err;
		}
	}
	return 0;
}

int engine_graph_forward_nodes(struct engine_graph *g, size_t first, size_t end, bool training,
			       uint64_t seed)
{
	int err;

	if (!g || !g->prepared || first > end || end > g->nn)
		return -EINVAL;
	/* A step starts at node 0: nothing of the last one counts any more. */
	if (!first) {
		for (size_t i = 0; i < g->nv; i++)
			g->v[i].fresh = false;
		g->loss_done = false;
	}
	g->forward_done = false;
	err = run_forward(g, first, end, training, seed);
	if (!err)
		g->forward_done = end == g->nn;
	return err;
}

/* Whether a node at or after @end reads value @v. */
static bool read_from(const struct engine_graph *g, int v, size_t end)
{
	for (size_t i = end; i < g->nn; i++)
		for (size_t k = 0; k < g->n[i].n_in; k++)
			if (g->n[i].in[k] == v)
				return true;
	return false;
}

int engine_graph_forget_nodes(struct engine_graph *g, size_t first, size_t end)
{
	if (!g || !g->prepared || first > end || end > g->nn)
		return -EINVAL;
	for (size_t i = first; i < end; i++) {
		struct gnode *nd = &g->n[i];

		for (size_t k = 0; k < nd->n_out; k++) {
			struct gvalue *v = &g->v[nd->out[k]];

			if (read_from(g, nd->out[k], end))
				continue;
			if (v->dtype == ENGINE_DT_F32)
				for (size_t j = 0; j < v->n; j++)
					((float *)v->data)[j] = NAN;
			else
				memset(v->data, 0xff, v->n * sizeof(int64_t));
		}
		for (size_t j = 0; j < nd->aux_n; j++)
			nd->aux[j] = NAN;
		if (nd->keep_n)
			memset(nd->keep, 0, nd->keep_n);
	}
	return 0;
}

int engine_graph_recompute_nodes(struct engine_graph *g, size_t first, size_t end, uint64_t seed)
{
	if (!g || !g->prepared || !g->loss_done || first > end || end > g->nn)
		return -EINVAL;
	return run_forward(g, first, end, true, seed);
}

int engine_graph_forward(struct engine_graph *g, bool training, uint64_t seed)
{
	return engine_graph_forward_nodes(g, 0, g ? g->nn : 0, training, seed);
}

int engine_graph_loss_norm(struct engine_graph *g, bool grad, size_t norm,
			   struct engine_loss_result *res)
{
	struct gvalue *z, *l;
	int err;

	if (!g || !g->prepared || !g->forward_done || g->loss_logits < 0 || !res)
		return -EINVAL;
	z = &g->v[g->loss_logits];
	l = &g->v[g->loss_labels];
	err = engine_xent_tokens_forward(F(z), l->data, g->loss_rows, g->classes, &res->loss,
					 &res->correct);
	if (err || !grad)
		return err;
	if (!z->requires_grad)
		return -EINVAL;
	/* The mean's own count: the rows whose label is not ignored. */
	if (!norm)
		norm = engine_xent_tokens_counted(l->data, g->loss_rows);
	err = engine_xent_tokens_backward(F(z), l->data, g->loss_rows, g->classes,
					  norm ? norm : g->loss_rows, z->grad);
	if (err)
		return err;
	if (g->loss_scale != 1.0f)
		for (size_t i = 0; i < g->loss_rows * g->classes; i++)
			z->grad[i] *= g->loss_scale;
	z->fresh = true;
	g->loss_done = true;
	return 0;
}

int engine_graph_loss(struct engine_graph *g, bool grad, struct engine_loss_result *res)
{
	return engine_graph_loss_norm(g, grad, 0, res);
}

/*
 * Where input slot @i's gradient goes: the tensor's own gradient if nothing
 * wrote it yet this step (and no earlier slot of this node targets it),
 * else scratch buffer @i to be added afterwards. NULL: no gradient needed.
 */
static float *target(struct engine_graph *g, struct gnode *nd, size_t i, bool *add)
{
	struct gvalue *v = IN(g, nd, i);

	*add = false;
	if (!v || !v->requires_grad)
		return NULL;
	for (size_t j = 0; j < i; j++)
		if (nd->in[j] == nd->in[i]) {
			*add = true;
			return g->acc[i];
		}
	if (v->fresh) {
		*add = true;
		return g->acc[i];
	}
	return v->grad;
}

static void settle(struct engine_graph *g, struct gnode *nd, size_t i, float *t, bool add)
{
	struct gvalue *v = IN(g, nd, i);

	if (!t)
		return;
	if (add)
		for (size_t j = 0; j < v->n; j++)
			v->grad[j] += t[j];
	v->fresh = true;
}

/*
 * Concat's inputs each take their piece of dy: written into a gradient
 * nothing wrote yet this step, else added (an input read twice, or by
 * another node too).
 */
static int backward_concat(struct engine_graph *g, struct gnode *nd, const float *dy)
{
	size_t at = 0;

	for (size_t i = 0; i < nd->n_in; i++) {
		struct gvalue *v = IN(g, nd, i);
		size_t piece = nd->sizes[i];

		if (v->requires_grad) {
			float *dst = v->fresh ? g->acc[0] : v->grad;
			int err = engine_slice_forward(dy, nd->outer, nd->len, nd->inner, at, piece,
						       dst);

			if (err)
				return err;
			if (v->fresh)
				for (size_t j = 0; j < v->n; j++)
					v->grad[j] += dst[j];
			v->fresh = true;
		}
		at += piece;
	}
	return 0;
}

static int backward_node(struct engine_graph *g, size_t idx)
{
	struct gnode *nd = &g->n[idx];
	struct gvalue *x = IN(g, nd, 0), *i1 = IN(g, nd, 1), *i2 = IN(g, nd, 2);
	struct gvalue *yv = OUT(g, nd, 0);
	float *t[3] = { NULL, NULL, NULL };
	bool add[3] = { false, false, false }, any = false;
	size_t slots = nd->n_in < 3 ? nd->n_in : 3;
	int err;

	for (size_t i = 0; i < nd->n_out; i++)
		any |= OUT(g, nd, i)->fresh;
	if (!any)
		return 0;	/* nothing downstream of it reached the loss */
	for (size_t i = 0; i < nd->n_out; i++) {
		struct gvalue *o = OUT(g, nd, i);

		if (!o->fresh) {
			memset(o->grad, 0, o->n * sizeof(float));
			o->fresh = true;
		}
	}
	if (nd->op == ENGINE_OP_CONCAT)
		return backward_concat(g, nd, yv->grad);
	if (nd->op == ENGINE_OP_GATHER)
		slots = 1;	/* the indices have no gradient */
	for (size_t i = 0; i < slots; i++)
		t[i] = target(g, nd, i, &add[i]);
	if (!t[0] && !t[1] && !t[2])
		return 0;
	const float *dy = yv->grad;

	switch (nd->op) {
	case ENGINE_OP_CONV2D:
		err = engine_conv2d_backward(&nd->k.conv, F(x), F(i1), dy, t[0], t[1], t[2], g->scratch);
		break;
	case ENGINE_OP_MAXPOOL2D:
		err = engine_maxpool2d_backward(&nd->k.pool, F(x), dy, t[0]);
		break;
	case ENGINE_OP_AVGPOOL2D:
		err = engine_avgpool2d_backward(&nd->k.pool, dy, t[0]);
		break;
	case ENGINE_OP_GEMM:
		err = engine_gemm_backward(&nd->k.gemm, F(x), F(i1), dy, t[0], t[1], t[2]);
		break;
	case ENGINE_OP_MATMUL:
		err = engine_matmul_backward(&nd->k.mm, F(x), F(i1), dy, t[0], t[1]);
		break;
	case ENGINE_OP_BINARY:
		err = engine_binary_backward(&nd->k.bin, F(x), F(i1), dy, t[0], t[1]);
		break;
	case ENGINE_OP_ACT:
		err = engine_act_backward(nd->a.act, F(x), F(yv), dy, x->n, t[0]);
		break;
	case ENGINE_OP_LAYERNORM:
		err = engine_layernorm_backward(F(x), F(i1), nd->aux, nd->aux + nd->outer, dy, nd->outer,
						nd->inner, t[0], t[1], t[2]);
		break;
	case ENGINE_OP_RMSNORM:
		err = engine_rmsnorm_backward(F(x), F(i1), nd->aux, dy, nd->outer, nd->inner, t[0],
					      t[1]);
		break;
	case ENGINE_OP_ROTARY:
		err = t[0] ? engine_rotary_backward(&nd->k.rot, F(i1), F(i2), dy, t[0]) : 0;
		break;
	case ENGINE_OP_SOFTMAX:
		err = engine_softmax_backward(F(yv), dy, nd->outer, nd->len, nd->inner, t[0]);
		break;
	case ENGINE_OP_GATHER:
		err = engine_gather_backward(dy, nd->outer, nd->len, nd->inner, i1->data, i1->n, t[0]);
		break;
	case ENGINE_OP_ATTENTION:
		if (nd->dropped)
			err = engine_attention_backward_dropout(&nd->k.att, F(x), F(i1), F(i2), nd->aux,
								nd->keep, dy, t[0], t[1], t[2],
								g->scratch);
		else
			err = engine_attention_backward(&nd->k.att, F(x), F(i1), F(i2), nd->aux, dy,
							t[0], t[1], t[2], g->scratch);
		break;
	case ENGINE_OP_DROPOUT:
		if (nd->dropped)
			err = engine_dropout_backward(dy, nd->keep, x->n, nd->a.ratio, t[0]);
		else
			err = (memcpy(t[0], dy, x->n * sizeof(float)), 0);
		break;
	case ENGINE_OP_TRANSPOSE: {
		size_t inv[ENGINE_MAX_RANK];

		for (size_t i = 0; i < x->rank; i++)
			inv[nd->a.perm[i]] = i;
		err = engine_transpose(dy, yv->dims, yv->rank, inv, t[0]);
		break;
	}
	case ENGINE_OP_SPLIT: {
		const float *dys[ENGINE_GRAPH_MAX_IO];

		for (size_t i = 0; i < nd->n_out; i++)
			dys[i] = OUT(g, nd, i)->grad;
		err = engine_concat(dys, nd->outer, nd->inner, nd->sizes, nd->n_out, t[0]);
		break;
	}
	case ENGINE_OP_RESHAPE:
		memcpy(t[0], dy, x->n * sizeof(float));
		err = 0;
		break;
	case ENGINE_OP_WHERE:
		err = engine_where_backward(&nd->k.wh, F(x), dy, t[1], t[2]);
		break;
	case ENGINE_OP_SLICE:
		err = engine_slice_backward(dy, nd->outer, nd->len, nd->inner, nd->a.start,
					    yv->dims[nd->a.axis], t[0]);
		break;
	case ENGINE_OP_BATCHNORM:
		err = engine_batchnorm_backward(&nd->k.bn, nd->dropped, F(x), F(i1), nd->aux,
						nd->aux + nd->k.bn.channels, dy, t[0], t[1], t[2]);
		break;
	default:
		err = -EINVAL;
	}
	if (err)
		return err;
	for (size_t i = 0; i < slots; i++)
		settle(g, nd, i, t[i], add[i]);
	return 0;
}

int engine_graph_backward_nodes(struct engine_graph *g, size_t first, size_t end)
{
	if (!g || !g->prepared || !g->loss_done || first > end || end > g->nn)
		return -EINVAL;
	for (size_t i = end; i-- > first;) {
		int err = backward_node(g, i);

		if (err) {
			snprintf(g->err, sizeof(g->err), "node %zu (backward): %s", i,
				 engine_strerror(err));
			return err;
		}
	}
	if (!first)
		g->loss_done = false;
	return 0;
}

int engine_graph_backward(struct engine_graph *g)
{
	return engine_graph_backward_nodes(g, 0, g ? g->nn : 0);
}

int engine_graph_update(struct engine_graph *g, const struct engine_optim *opt, uint64_t t,
			double lr)
{
	struct engine_optim o;
	int err;

	if (!g || !g->prepared || !opt || opt->kind != g->kind)
		return -EINVAL;
	o = *opt;
	if (lr >= 0.0)
		o.lr = lr;
	err = engine_optim_check(&o);
	if (err)
		return err;
	for (size_t i = 0; i < g->nv; i++) {
		struct gvalue *v = &g->v[i];

		/* As PyTorch skips a parameter whose .grad is None. */
		if (v->kind != ENGINE_VAL_PARAM || !v->fresh)
			continue;
		err = engine_optim_step(&o, t, F(v), v->grad, v->state[0], v->state[1], v->n);
		if (err)
			return err;
	}
	return 0;
}

int engine_graph_train_step(struct engine_graph *g, const struct engine_optim *opt, uint64_t t,
			    double lr, uint64_t seed, struct engine_loss_result *res)
{
	return engine_graph_forward(g, true, seed) ?: engine_graph_loss(g, true, res) ?:
	       engine_graph_backward(g) ?: engine_graph_update(g, opt, t, lr);
}

int engine_graph_set_loss_scale(struct engine_graph *g, float scale)
{
	if (!g || !(scale > 0.0f) || !isfinite(scale))
		return -EINVAL;
	g->loss_scale = scale;
	return 0;
}

int engine_graph_unscale(struct engine_graph *g, bool *finite)
{
	if (!g || !g->prepared || !finite)
		return -EINVAL;
	*finite = true;
	for (size_t i = 0; i < g->nv; i++) {
		struct gvalue *v = &g->v[i];

		if (v->kind == ENGINE_VAL_PARAM && v->fresh)
			*finite &= engine_unscale(v->grad, v->n, g->loss_scale);
	}
	return 0;
}

int engine_graph_train_step_scaled(struct engine_graph *g, const struct engine_optim *opt,
				   uint64_t t, double lr, uint64_t seed,
				   struct engine_loss_scaler *scaler,
				   struct engine_loss_result *res, bool *stepped)
{
	bool finite;
	int err;

	if (!scaler || !stepped)
		return -EINVAL;
	err = engine_graph_set_loss_scale(g, scaler->scale) ?:
	      engine_graph_forward(g, true, seed) ?: engine_graph_loss(g, true, res) ?:
	      engine_graph_backward(g) ?: engine_graph_unscale(g, &finite);
	if (err)
		return err;
	*stepped = engine_loss_scaler_update(scaler, !finite);
	return *stepped ? engine_graph_update(g, opt, t, lr) : 0;
}
