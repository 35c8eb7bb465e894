// SPDX-License-Identifier: GPL-2.0-only
/*
 * Graph programs on the device (fwd_graph.h). Each micro-batch has its own
 * engine graph (engine_graph_from_wsep() at the micro-batch's size),
 * prepared once at load and again only when a short batch needs another
 * size. A graph's parameters are bound to where the unit's weights are
 * for each task: the resident weights of a pipelined program, or the
 * weights.K ring's transfers of weight streaming. Gradients are each
 * graph's own until G puts them into their pair of micro-batches' buffer,
 * which the step graph's sum tree adds into the unit's (resident, or the
 * grads.K ring): the order a dense layer's gradients are summed in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_graph.h"
#include "wse/engine.h"
#include "wse/engine_graph.h"
#include "wse/engine_wsep.h"
#include "wse/splitmix64.h"

struct fwd_graph {
	const struct wsep_program *prog;
	uint32_t L;
	uint32_t first[WSEP_MAX_LAYERS], end[WSEP_MAX_LAYERS];
	/* The parameters, unit by unit: param[unit_param[k] .. unit_param[k + 1]) are unit k's. */
	uint32_t *param;
	uint32_t unit_param[WSEP_MAX_LAYERS + 1];
	struct engine_graph *inst[FWD_MICRO_BATCHES_MAX];
	uint32_t size[FWD_MICRO_BATCHES_MAX];
	/* Pipelined: the weights layout's resident arrays. */
	float *w, *g, *state[2];
	struct engine_optim opt;
	struct engine_lr_schedule sched;
};

/* Floats of value @v (parameters have no batch dimension). */
static uint64_t floats(const struct wsep_graph_value *v)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < v->rank; d++)
		n *= v->dims[d];
	return n;
}

/* Points unit @k's parameters of graph @eg at @w, the unit's floats. */
static void bind_unit(struct fwd_graph *g, struct engine_graph *eg, uint32_t k, const float *w)
{
	uint64_t base = g->prog->layers[k].weight_offset;

	for (uint32_t i = g->unit_param[k]; i < g->unit_param[k + 1]; i++) {
		const struct wsep_graph_value *v = &g->prog->graph->values[g->param[i]];

		/* The engine reads them; only the update (not here) writes
		 * parameters, and the training forward pass state (running
		 * statistics, which stay in the resident weights).
		 */
		engine_graph_bind(eg, (int)g->param[i], (float *)(w + (v->offset - base)));
	}
}

static uint32_t build_instance(struct fwd_graph *g, uint32_t m, uint32_t size, char *text,
			       size_t len)
{
	char msg[256];
	int err;

	engine_graph_destroy(g->inst[m]);
	g->inst[m] = NULL;
	g->size[m] = 0;
	err = engine_graph_from_wsep(g->prog, size, &g->inst[m], msg, sizeof(msg));
	if (err) {
		snprintf(text, len, "invalid program: the graph at %u samples: %s", size, msg);
		return err == -ENOMEM ? WSE_LINK_E_NOSPC : WSE_LINK_E_INVAL;
	}
	/* The graphs keep no optimizer state: updates are the unit's, once. */
	err = engine_graph_prepare(g->inst[m], ENGINE_SGD);
	if (err) {
		snprintf(text, len, "the simulator cannot allocate the graph of %u samples: %s", size,
			 engine_graph_error(g->inst[m]));
		engine_graph_destroy(g->inst[m]);
		g->inst[m] = NULL;
		return WSE_LINK_E_NOSPC;
	}
	g->size[m] = size;
	for (uint32_t k = 0; g->w && k < g->L; k++)
		bind_unit(g, g->inst[m], k, g->w + g->prog->layers[k].weight_offset);
	return WSE_LINK_OK;
}

void fwd_graph_destroy(struct fwd_graph *g)
{
	if (!g)
		return;
	for (uint32_t m = 0; m < FWD_MICRO_BATCHES_MAX; m++)
		engine_graph_destroy(g->inst[m]);
	free(g->param);
	free(g->w);
	free(g->g);
	free(g->state[0]);
	free(g->state[1]);
	free(g);
}

/*
 * Micro-batches whose values of unit @k a device holds at once: weight
 * streaming, one (the units run a micro-batch at a time); pipelined, the
 * unit's pipeline depth, 2 (L - k) - 1, as the step graph keeps to
 * (fwd_pipeline.c); never more than there are.
 */
static uint32_t held_at(const struct fwd_program *p, uint32_t k)
{
	uint32_t depth = 2 * (p->prog->num_layers - k) - 1;

	if (!p->resident)
		return 1;
	return depth < p->micro_max ? depth : p->micro_max;
}

/* Dropout's masks: the program's seed, the step, the micro-batch. */
static uint64_t step_seed(const struct fwd_program *p, const struct fwd_step *step, uint32_t m)
{
	uint64_t state = p->prog->seed ^ (0xD1B54A32D192ED03ULL * (step->t + 1)) ^ m;

	return wse_splitmix64(&state);
}

/* Unit @k keeps only its input between its passes (the last has nothing to wait for). */
static bool recomputes(const struct fwd_program *p, uint32_t k)
{
	return (p->prog->exec_flags & WSEP_EXEC_RECOMPUTE) && k + 1 < p->prog->num_layers;
}

/*
 * The parameters' share of SRAM. Resident (layer-pipelined): every weight,
 * its gradient and the two Adam moments. Weight streaming keeps weights and
 * optimizer state in MemoryX: SRAM holds one unit's weights and gradients.
 */
static uint64_t streamed_params_bytes(const struct fwd_program *p)
{
	const struct wsep_program *prog = p->prog;
	uint64_t most = 0;

	if (p->resident)
		return wsep_total_params(prog->layers, prog->num_layers) * 4 * (2 + 2);
	for (uint32_t k = 0; k < prog->num_layers; k++) {
		uint64_t n = wsep_layer_params(&prog->layers[k]);

		most = n > most ? n : most;
	}
	return most * 4 * 2;
}

/*
 * Bytes the graphs of @p's micro-batches hold at once (values and their
 * gradients, at the largest micro-batch's size) and its resident arrays:
 * what a device's SRAM would have to hold. A program that recomputes
 * holds the values that cross from one unit to a later one and, one unit
 * at a time, the values that stay inside a unit: the largest unit's. 0 if
 * out of memory.
 */
static uint64_t graph_bytes(const struct fwd_program *p)
{
	const struct wsep_program *prog = p->prog;
	const struct wsep_graph *wg = prog->graph;
	uint64_t n = streamed_params_bytes(p), most = 0;
	uint32_t size = fwd_micro_at(p, prog->batch, 0).count;
	uint32_t *unit = calloc(wg->num_values, sizeof(*unit));
	uint32_t *last = calloc(wg->num_values, sizeof(*last));
	uint64_t inside[WSEP_MAX_LAYERS] = { 0 };

	if (!unit || !last) {
		free(unit);
		free(last);
		return 0;
	}
	/* A value belongs to the unit of the node that makes it (an input: unit 0). */
	for (uint32_t i = 0; i < wg->num_nodes; i++) {
		for (uint32_t o = 0; o < wg->nodes[i].n_out; o++)
			if (wg->nodes[i].out[o] >= 0)
				unit[wg->nodes[i].out[o]] = wg->nodes[i].unit;
		for (uint32_t k = 0; k < wg->nodes[i].n_in; k++)
			if (wg->nodes[i].in[k] >= 0)
				last[wg->nodes[i].in[k]] = wg->nodes[i].unit;
	}
	for (uint32_t v = 0; v < wg->num_values; v++) {
		const struct wsep_graph_value *x = &wg->values[v];
		uint64_t bytes;

		if (x->kind != WSEP_VAL_INPUT && x->kind != WSEP_VAL_ACT)
			continue;
		bytes = wsep_graph_value_elems(prog, x, size) * held_at(p, unit[v]) *
			(x->dtype == WSEP_ELEM_I64 ? 12 : 8);
		if (x->kind == WSEP_VAL_ACT && recomputes(p, unit[v]) && last[v] <= unit[v])
			inside[unit[v]] += bytes;
		else
			n += bytes;
	}
	for (uint32_t k = 0; k < prog->num_layers; k++)
		most = inside[k] > most ? inside[k] : most;
	free(unit);
	free(last);
	return n + most;
}

uint32_t fwd_graph_create(struct fwd_program *p, uint64_t sram, struct fwd_graph **out,
			  char *text, size_t len)
{
	const struct wsep_program *prog = p->prog;
	const struct wsep_graph *wg = prog->graph;
	struct fwd_graph *g = calloc(1, sizeof(*g));
	uint64_t n = wsep_total_params(prog->layers, prog->num_layers), held;
	uint32_t st = WSE_LINK_OK, np = 0;

	*out = NULL;
	/* The program's own sram_bytes may understate: count what it will hold. */
	held = graph_bytes(p);
	if (held > sram) {
		snprintf(text, len,
			 "the program's graph holds %llu bytes at its batch of %u in micro-batches of %u; the device has %llu bytes of SRAM",
			 (unsigned long long)held, prog->batch, fwd_micro_at(p, prog->batch, 0).count,
			 (unsigned long long)sram);
		free(g);
		return WSE_LINK_E_NOSPC;
	}
	if (!held || !g || !(g->param = calloc(wg->num_values, sizeof(*g->param))))
		goto oom;
	g->prog = prog;
	g->L = prog->num_layers;
	for (uint32_t k = 0; k < g->L; k++) {
		wsep_graph_unit_nodes(wg, k, &g->first[k], &g->end[k]);
		g->unit_param[k] = np;
		for (uint32_t v = 0; v < wg->num_values; v++)
			if ((wg->values[v].kind == WSEP_VAL_PARAM || wg->values[v].kind == WSEP_VAL_STATE) &&
			    wg->values[v].unit == (int32_t)k)
				g->param[np++] = v;
	}
	g->unit_param[g->L] = np;
	if (engine_optim_from_wsep(&prog->opt, &g->opt) || engine_optim_check(&g->opt) ||
	    engine_lr_from_wsep(&prog->opt, &g->sched)) {
		snprintf(text, len, "the engine refuses the program's optimizer or its schedule");
		fwd_graph_destroy(g);
		return WSE_LINK_E_INVAL;
	}
	if (prog->mode == WSEP_MODE_PIPELINED) {
		unsigned int arrays = engine_optim_state_arrays(g->opt.kind);

		g->w = malloc(n * sizeof(float));
		g->g = calloc(n, sizeof(float));
		for (unsigned int s = 0; s < arrays; s++)
			g->state[s] = calloc(n, sizeof(float));
		if (!g->w || !g->g || (arrays > 0 && !g->state[0]) || (arrays > 1 && !g->state[1]))
			goto oom;
		memcpy(g->w, prog->weights, n * sizeof(float));
	}
	for (uint32_t m = 0; m < p->micro_max && !st; m++)
		st = build_instance(g, m, fwd_micro_at(p, prog->batch, m).count, text, len);
	if (st) {
		fwd_graph_destroy(g);
		return st;
	}
	*out = g;
	return WSE_LINK_OK;
oom:
	fwd_graph_destroy(g);
	snprintf(text, len, "the simulator cannot allocate the program's memory");
	return WSE_LINK_E_NOSPC;
}

uint32_t fwd_graph_fit(struct fwd_program *p, uint32_t batch, char *text, size_t len)
{
	struct fwd_graph *g = p->graph;

	for (uint32_t m = 0; m < fwd_micro_count(p, batch); m++) {
		uint32_t size = fwd_micro_at(p, batch, m).count, st;

		if (g->size[m] == size)
			continue;
		st = build_instance(g, m, size, text, len);
		if (st)
			return st;
	}
	return WSE_LINK_OK;
}

/*
 * Fed input @i of micro-batch @s from each sample's record when a graph
 * has several (wsep-format.rst, "Fed inputs"): 4-byte elements, an f32
 * input's as floats (the first times input_scale), an i64 input's as i32.
 */
static void load_fed(struct fwd_program *p, struct engine_graph *eg, struct fwd_micro s,
		     uint32_t i)
{
	const struct wsep_program *prog = p->prog;
	int32_t id = wsep_graph_input_id(prog->graph, i);
	uint64_t elems, off = wsep_graph_input_at(prog, i, &elems);
	bool f32 = prog->graph->values[id].dtype == WSEP_ELEM_F32;
	float scale = i ? 1.0f : prog->input_scale;
	void *dst = engine_graph_data(eg, id);

	for (size_t k = 0; k < s.count; k++) {
		const uint8_t *rec = p->in_bytes + ((size_t)(s.first + k) * prog->input_dim + off) * 4;

		for (size_t e = 0; e < elems; e++) {
			int32_t v;
			float f;

			if (f32) {
				memcpy(&f, rec + 4 * e, sizeof(f));
				((float *)dst)[k * elems + e] = f * scale;
			} else {
				memcpy(&v, rec + 4 * e, sizeof(v));
				((int64_t *)dst)[k * elems + e] = v;
			}
		}
	}
}

/* Micro-batch m's samples and labels into its graph's inputs. */
static int load(struct fwd_program *p, const struct fwd_step *step, struct engine_graph *eg,
		struct fwd_micro s)
{
	const struct wsep_program *prog = p->prog;
	const struct wsep_graph *wg = prog->graph;
	size_t n = (size_t)s.count * prog->input_dim, at = (size_t)s.first * prog->input_dim;
	size_t rows = (size_t)s.count * wg->rows;
	int64_t *labels = engine_graph_data(eg, wg->labels);
	void *in = engine_graph_data(eg, wg->input);

	if (wsep_graph_n_inputs(wg) > 1) {
		for (uint32_t i = 0; i < wsep_graph_n_inputs(wg); i++)
			load_fed(p, eg, s, i);
		goto labels;
	}
	switch (prog->input_type) {
	case WSEP_ELEM_U8:
		if (prog->input_scale == 1.0f / 255.0f) {
			/* Exactly as wse-graphtrain and PyTorch's x / 255 do. */
			int err = engine_pixels_to_f32(p->in_bytes + at, n, in);

			if (err)
				return err;
			break;
		}
		for (size_t i = 0; i < n; i++)
			((float *)in)[i] = (float)p->in_bytes[at + i] * prog->input_scale;
		break;
	case WSEP_ELEM_F32:
		for (size_t i = 0; i < n; i++)
			((float *)in)[i] = ((const float *)p->in_bytes)[at + i] * prog->input_scale;
		break;
	default:	/* token ids; the embedding refuses one out of range */
		for (size_t i = 0; i < n; i++)
			((int64_t *)in)[i] = ((const int32_t *)p->in_bytes)[at + i];
	}
labels:
	for (size_t i = 0; step->kind != WSE_LINK_RUN_PREDICT && i < rows; i++)
		labels[i] = p->labels_i32[(size_t)s.first * wg->rows + i];
	return 0;
}

/* Per-sample losses (mean over its rows), each row's prediction, the logits (predict). */
static int results(struct fwd_program *p, const struct fwd_step *step, struct engine_graph *eg,
		   struct fwd_micro s, const char **what)
{
	const struct wsep_graph *wg = p->prog->graph;
	size_t rows = wg->rows, classes = wg->classes, at = (size_t)s.first * rows;
	const float *z = engine_graph_data(eg, wg->logits);
	const int64_t *labels = engine_graph_data(eg, wg->labels);

	for (size_t i = 0; step->kind != WSE_LINK_RUN_PREDICT && i < s.count; i++) {
		size_t correct;
		int err;

		*what = "the loss";
		err = engine_xent_tokens_forward(z + i * rows * classes, labels + i * rows, rows,
						 classes, &p->losses_f32[s.first + i], &correct);
		if (err)
			return err;
	}
	for (size_t r = 0; r < s.count * rows; r++) {
		const float *row = z + r * classes;
		size_t best = 0;

		/* The first maximum, as engine_argmax() and PyTorch take it. */
		for (size_t c = 1; c < classes; c++)
			if (row[c] > row[best])
				best = c;
		p->preds_i32[at + r] = (int32_t)best;
	}
	if (step->kind == WSE_LINK_RUN_PREDICT)
		memcpy(p->logits_f32 + at * classes, z, s.count * rows * classes * sizeof(float));
	return 0;
}

int fwd_graph_forward(struct fwd_program *p, const struct fwd_step *step, uint32_t k,
		      uint32_t m, const float *w, const char **what)
{
	struct fwd_graph *g = p->graph;
	struct engine_graph *eg = g->inst[m];
	struct fwd_micro s = fwd_micro_at(p, step->batch, m);
	bool train = step->kind == WSE_LINK_RUN_TRAIN;
	struct engine_loss_result res;
	int err;

	bind_unit(g, eg, k, w);
	if (k == 0) {
		*what = "loading the input";
		err = load(p, step, eg, s);
		if (err)
			return err;
	}
	*what = "the forward pass";
	err = engine_graph_forward_nodes(eg, g->first[k], g->end[k], train, step_seed(p, step, m));
	if (!err && train && recomputes(p, k))
		err = engine_graph_forget_nodes(eg, g->first[k], g->end[k]);
	if (err || k + 1 < g->L)
		return err;
	err = results(p, step, eg, s, what);
	if (err || !train)
		return err;
	*what = "the loss";
	/* Weight streaming too: the scale is then the RUN's (fwd_run.c). */
	if (p->loss_scaling && !(p->scaler.scale > 0.0f)) {
		*what = "fp16 loss scaling (every step overflowed until the scale fell to 0: the weights have diverged)";
		return -ERANGE;
	}
	err = engine_graph_set_loss_scale(eg, p->loss_scaling ? p->scaler.scale : 1.0f);
	if (err)
		return err;
	return engine_graph_loss_norm(eg, true, step->norm_rows, &res);
}

int fwd_graph_backward(struct fwd_program *p, const struct fwd_step *step, uint32_t k,
		       uint32_t m, const float *w, const char **what)
{
	struct fwd_graph *g = p->graph;
	int err;

	bind_unit(g, g->inst[m], k, w);
	if (recomputes(p, k)) {
		*what = "the recomputed forward pass";
		err = engine_graph_recompute_nodes(g->inst[m], g->first[k], g->end[k],
						   step_seed(p, step, m));
		if (err)
			return err;
	}
	*what = "the backward pass";
	return engine_graph_backward_nodes(g->inst[m], g->first[k], g->end[k]);
}

int fwd_graph_gradients(struct fwd_program *p, uint32_t k, uint32_t m, bool first, float *dw)
{
	struct fwd_graph *g = p->graph;
	uint64_t base = p->prog->layers[k].weight_offset;

	for (uint32_t i = g->unit_param[k]; i < g->unit_param[k + 1]; i++) {
		const struct wsep_graph_value *v = &p->prog->graph->values[g->param[i]];
		const float *grad = engine_graph_grad(g->inst[m], (int)g->param[i]);
		float *dst = dw + (v->offset - base);
		uint64_t n = floats(v);

		/* A parameter nothing of this micro-batch reached adds nothing. */
		if (first && !grad)
			memset(dst, 0, n * sizeof(float));
		else if (first)
			memcpy(dst, grad, n * sizeof(float));
		else if (grad)
			engine_vec_add(dst, grad, n);
	}
	return 0;
}

/* The optimizer over floats [@at, @at + @n) of the weights layout. */
static int update_range(struct fwd_graph *g, const struct engine_optim *o, uint64_t t,
			uint64_t at, uint64_t n)
{
	return n ? engine_optim_step(o, t, g->w + at, g->g + at,
				     g->state[0] ? g->state[0] + at : NULL,
				     g->state[1] ? g->state[1] + at : NULL, n) : 0;
}

/*
 * The unit's range element by element, except its state values (running
 * statistics), which the optimizer must not touch (weight decay would).
 */
int fwd_graph_update(struct fwd_program *p, uint32_t k, uint64_t t)
{
	struct fwd_graph *g = p->graph;
	uint64_t at = p->prog->layers[k].weight_offset;
	uint64_t end = at + wsep_layer_params(&p->prog->layers[k]);
	struct engine_optim o = engine_optim_at(&g->opt, &g->sched, t);
	int err = 0;

	for (uint32_t i = g->unit_param[k]; !err && i < g->unit_param[k + 1]; i++) {
		const struct wsep_graph_value *v = &p->prog->graph->values[g->param[i]];

		if (v->kind != WSEP_VAL_STATE)
			continue;
		err = update_range(g, &o, t, at, v->offset - at);
		at = v->offset + floats(v);
	}
	return err ?: update_range(g, &o, t, at, end - at);
}

float *fwd_graph_weights(struct fwd_graph *g, uint32_t k)
{
	return g->w ? g->w + g->prog->layers[k].weight_offset : NULL;
}

float *fwd_graph_grads(struct fwd_graph *g, uint32_t k)
{
	return g->g ? g->g + g->prog->layers[k].weight_offset : NULL;
}

float *fwd_graph_array(struct fwd_graph *g, int which)
{
	return which < 0 ? g->w : which < 2 ? g->state[which] : NULL;
}
