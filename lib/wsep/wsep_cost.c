// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The work of a graph program's units and what it costs on a rectangle of
 * PEs (wse/wsep_cost.h). Each node's work is one of three kinds:
 *
 *  - a product with a weight operand (a convolution as an implicit GEMM,
 *    Gemm, MatMul by a parameter): K x M weights applied at N positions
 *    per sample (a convolution's output pixels, a sequence's tokens),
 *    placed like a dense layer: each PE holds a tile of ceil(K/rows) x
 *    ceil(M/cols) weights, inputs along the rows, partial sums down the
 *    columns. Columns beyond M hold copies of the weights, each group of
 *    M columns taking its share of the positions;
 *  - a product of two activations (attention's scores and their use,
 *    MatMul of activations): FLOPs spread over the unit's PEs;
 *  - element-wise work (bias, activations, normalization, softmax,
 *    pooling windows, data movement): elements spread over the PEs, each
 *    kind at its own cycles per element.
 *
 * The backward pass costs the forward's work again for the weight
 * gradient, again for the input gradient (when the input needs one),
 * twice the activation products, and the element-wise work once more.
 */
#include <math.h>

#include "wse/wsep_cost.h"

enum kind { K_ELEMENTWISE, K_TRANSCENDENTAL, K_NORMALIZE, K_SOFTMAX, K_WINDOW, K_COUNT };

struct work {
	uint64_t K, M;		/* a product with weights; K = 0: none */
	double N;		/* its positions per sample */
	bool dx;		/* its input needs a gradient */
	double flops;		/* activation products, forward, per sample */
	double elems[K_COUNT];	/* element-wise work per sample */
	double out, aux;	/* floats kept per sample */
	uint64_t loose;		/* parameters not in a product (biases, norms, tables) */
};

static uint64_t numel(const struct wsep_graph_value *v)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < v->rank; d++)
		n *= v->dims[d];
	return n;
}

static double per_sample(const struct wsep_program *p, const struct wsep_graph_value *v)
{
	return v->batch_dim < 0 ? (double)numel(v) : (double)numel(v) / p->batch;
}

static const struct wsep_graph_value *val(const struct wsep_program *p, int32_t id)
{
	return id >= 0 ? &p->graph->values[id] : NULL;
}

static bool is_param(const struct wsep_graph_value *v)
{
	return v && v->kind == WSEP_VAL_PARAM;
}

/* A product y = x W with W a parameter of K x M, at y's positions. */
static void weights(struct work *w, const struct wsep_program *p, const struct wsep_graph_value *x,
		    const struct wsep_graph_value *y, uint64_t K, uint64_t M)
{
	w->K = K;
	w->M = M;
	w->N = per_sample(p, y) / (double)M;
	w->dx = x->kind == WSEP_VAL_ACT;
}

static void node_work(const struct wsep_program *p, const struct wsep_graph_node *nd, struct work *w)
{
	const struct wsep_graph_value *x = val(p, nd->in[0]), *b = val(p, nd->in[1]);
	const struct wsep_graph_value *c = nd->n_in > 2 ? val(p, nd->in[2]) : NULL;
	const struct wsep_graph_value *y = val(p, nd->out[0]);
	double ys = per_sample(p, y);

	*w = (struct work){ 0 };
	for (uint32_t i = 0; i < nd->n_out; i++)
		w->out += per_sample(p, val(p, nd->out[i]));
	for (uint32_t i = 0; i < nd->n_in; i++)
		if (is_param(val(p, nd->in[i])))
			w->loose += numel(val(p, nd->in[i]));
	switch (nd->op) {
	case WSEP_OP_CONV2D:
		if (is_param(b)) {
			weights(w, p, x, y, b->dims[1] * b->dims[2] * b->dims[3], b->dims[0]);
			w->loose -= numel(b);
		} else {
			w->flops = 2.0 * ys * (double)(b->dims[1] * b->dims[2] * b->dims[3]);
		}
		if (c)
			w->elems[K_ELEMENTWISE] = ys;
		break;
	case WSEP_OP_GEMM:
	case WSEP_OP_MATMUL: {
		bool tb = nd->op == WSEP_OP_GEMM && (nd->a.flags & WSEP_ATTR_TRANS_B);

		if (is_param(b) && b->rank == 2) {
			weights(w, p, x, y, b->dims[tb ? 1 : 0], b->dims[tb ? 0 : 1]);
			w->loose -= numel(b);
		} else {
			bool ta = nd->op == WSEP_OP_GEMM && (nd->a.flags & WSEP_ATTR_TRANS_A);

			w->flops = 2.0 * ys * (double)x->dims[ta ? x->rank - 2 : x->rank - 1];
		}
		if (c)
			w->elems[K_ELEMENTWISE] = ys;
		break;
	}
	case WSEP_OP_ATTENTION: {
		double t = (double)x->dims[1], width = (double)x->dims[2], h = nd->a.heads;

		/* Scores Q K^T and their use P V: 2 T T (C / h) FLOPs each, per head. */
		w->flops = 4.0 * t * t * width;
		w->elems[K_SOFTMAX] = h * t * t;
		w->aux = h * t * t;
		break;
	}
	case WSEP_OP_ACT:
		w->elems[nd->a.act == WSEP_FN_RELU ? K_ELEMENTWISE : K_TRANSCENDENTAL] = ys;
		break;
	case WSEP_OP_LAYERNORM:
	case WSEP_OP_RMSNORM:
		w->elems[K_NORMALIZE] = ys;
		break;
	case WSEP_OP_SOFTMAX:
		w->elems[K_SOFTMAX] = ys;
		break;
	case WSEP_OP_MAXPOOL2D:
	case WSEP_OP_AVGPOOL2D:
		w->elems[K_WINDOW] = ys * nd->a.kernel[0] * nd->a.kernel[1];
		break;
	case WSEP_OP_RESHAPE:
		break;		/* the same elements, read in another shape */
	default:		/* binary, gather, dropout, transpose, split, concat, slice, where: one pass */
		w->elems[K_ELEMENTWISE] = ys;
	}
}

void wsep_unit_extent(const struct wsep_program *p, uint32_t k, uint32_t *rows, uint32_t *cols)
{
	uint32_t first, end;
	uint64_t r = 0, c = 0;
	double most = 1;

	wsep_graph_unit_nodes(p->graph, k, &first, &end);
	for (uint32_t i = first; i < end; i++) {
		struct work w;

		node_work(p, &p->graph->nodes[i], &w);
		/* A product uses K rows, and M columns for each of its positions. */
		if (w.K && w.K * w.M > r * c) {
			r = w.K;
			c = w.M * (uint64_t)ceil(w.N);
		}
		if (w.out > most)
			most = w.out;
		if ((double)w.loose > most)
			most = (double)w.loose;
	}
	/* No product: a square of PEs for its widest activation or parameter. */
	if (!r) {
		r = (uint64_t)ceil(sqrt(most));
		c = (uint64_t)ceil(most / (double)r);
	}
	*rows = r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
	*cols = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

static double spread(double elems, double cycles, double pes)
{
	return elems > 0 ? elems * cycles / (elems < pes ? elems : pes) : 0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

void wsep_unit_cost(const struct wsep_program *p, uint32_t k, const struct wsep_wafer *wf,
		    uint32_t h, uint32_t w, uint32_t batch, unsigned int state,
		    const struct wsep_costs *c, struct wsep_unit_cost *out)
{
	const double per_kind[K_COUNT] = { c->elementwise, c->transcendental, c->normalize,
					   c->softmax, c->window };
	const struct wsep_graph *g = p->graph;
	double fpc = wf->fp32_flops_per_cycle, pes, keep = 0, weights_pe = 0, largest = 0;
	double product_fpc = c->product_flops_per_cycle > 0 ? c->product_flops_per_cycle : fpc;
	uint32_t first, end, rows, cols;
	uint64_t params = wsep_layer_params(&p->layers[k]);

	wsep_unit_extent(p, k, &rows, &cols);
	*out = (struct wsep_unit_cost){ 0 };
	out->rows = h < rows ? h : rows;
	out->cols = w < cols ? w : cols;
	pes = (double)out->rows * out->cols;
	wsep_graph_unit_nodes(g, k, &first, &end);
	for (uint32_t i = first; i < end; i++) {
		struct work wk;

		node_work(p, &g->nodes[i], &wk);
		if (wk.K) {
			uint64_t ti = ceil_div(wk.K, wk.K < out->rows ? wk.K : out->rows);
			uint64_t to = ceil_div(wk.M, wk.M < out->cols ? wk.M : out->cols);
			/* Groups of M columns share the positions out. */
			double groups = out->cols > wk.M ? floor((double)out->cols / wk.M) : 1;
			double n = ceil(wk.N / (groups < wk.N ? groups : wk.N));
			double mm = 2.0 * (double)(ti * to) / product_fpc * n;

			out->fwd += mm;
			out->bwd += mm * (wk.dx ? 2 : 1);
			out->sram += c->sram_bytes_per_weight * (double)(ti * to) * n /
				     wf->sram_bytes_per_cycle;
			out->fabric += c->fabric_directions * (double)(ti + to) * 4.0 * n /
				       wf->link_bytes_per_cycle;
			out->flops += 2.0 * (double)(wk.K * wk.M) * wk.N * (wk.dx ? 3 : 2);
			weights_pe += (double)(ti * to);
			if ((double)(wk.K * wk.M) > largest) {
				largest = (double)(wk.K * wk.M);
				out->tile_in = (uint32_t)ti;
				out->tile_out = (uint32_t)to;
			}
		}
		out->fwd += wk.flops / (pes * fpc);
		out->bwd += 2.0 * wk.flops / (pes * fpc);
		out->flops += 3.0 * wk.flops;
		for (int j = 0; j < K_COUNT; j++) {
			out->fwd += spread(wk.elems[j], per_kind[j], pes);
			out->bwd += spread(wk.elems[j], per_kind[j], pes);
			out->flops += 2.0 * wk.elems[j];
		}
		weights_pe += ceil((double)wk.loose / pes);
		keep += 2.0 * wk.out + wk.aux;
	}
	if (k + 1 == p->num_layers) {
		double logits = (double)g->rows * g->classes;

		out->fwd += spread(logits, c->loss_fwd, pes);
		out->bwd += spread(logits, c->loss_bwd, pes);
		out->flops += (c->loss_fwd + c->loss_bwd) * logits;
	}
	out->opt = weights_pe * c->opt_flops / fpc / batch;
	out->flops += (double)params * c->opt_flops / batch;
	if (k == 0) {
		/* The sample in; its labels in and its loss and predictions out. */
		double elem = p->input_type == WSEP_ELEM_U8 ? 1.0 : 4.0;
		double bytes = p->input_dim * elem + 8.0 * g->rows + 4.0;

		out->host = bytes / (wf->io_bytes_per_s / (double)wf->clock_hz);
	}
	/* The unit's input and its values and their gradients, over the batch. */
	out->act_bytes = (uint64_t)(4.0 * batch * (p->layers[k].in + keep));
	out->sram_per_pe = (uint64_t)(4.0 * weights_pe * (2 + state)) +
			   (uint64_t)ceil((double)out->act_bytes / pes);
}
