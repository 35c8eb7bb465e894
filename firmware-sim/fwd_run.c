// SPDX-License-Identifier: GPL-2.0-only
/*
 * RUN: steps of a loaded program. Each step takes a batch from the input
 * streams, cuts it into micro-batches (fwd_pipeline.h), runs the engine's
 * per-layer entry points on them and fills the output streams in sample
 * order.
 *
 * Layer pipelined, the weights are the program's resident parameters and
 * the layers run as concurrent pipeline stages, one thread each
 * (fwd_pipeline.c): stage k forwards micro-batch m while stage k + 1
 * forwards m - 1, the last stage takes the loss, backward passes flow
 * back through the stages, and each stage applies its layer's update once
 * the step's last micro-batch has passed back. This thread only feeds the
 * stages and moves the streams.
 *
 * Weight streaming, everything runs here, one call after another: layer
 * k's weights are taken from weights.k once for its forward pass over all
 * micro-batches and again (in reverse layer order) for its backward pass,
 * its gradients, accumulated over the micro-batches, go out on grads.k,
 * and nothing of them stays on the device.
 *
 * Each layer makes the same engine calls on the same shapes in the same
 * order in both modes, which is what makes them agree bit for bit.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fwd_conn.h"
#include "fwd_exec.h"
#include "fwd_log.h"
#include "fwd_ops.h"
#include "fwd_pipeline.h"

struct step_ctx {
	struct fwd_exec *x;
	struct fwd_program *p;
	uint32_t kind;		/* WSE_LINK_RUN_* */
	uint32_t batch;
	uint32_t step;		/* 1-based, within this RUN */
	char *text;
	size_t len;
};

/* Takes @n bytes of input stream @idx, waiting for them. */
static bool take(struct step_ctx *c, int idx, void *dst, uint64_t n)
{
	struct fwd_exec *x = c->x;
	struct fwd_stream *s = &c->p->streams[idx];
	bool ok = true;

	pthread_mutex_lock(&x->lock);
	while (s->len < n && (ok = fwd_exec_wait(x)))
		;
	if (ok) {
		fwd_stream_get(s, dst, n);
		pthread_cond_broadcast(&x->changed);
	}
	pthread_mutex_unlock(&x->lock);
	return ok;
}

/* Puts @n bytes on output stream @idx, waiting for room. */
static bool put(struct step_ctx *c, int idx, const void *src, uint64_t n)
{
	struct fwd_exec *x = c->x;
	struct fwd_stream *s = &c->p->streams[idx];
	bool ok = true;

	pthread_mutex_lock(&x->lock);
	while (s->cap - s->len < n && (ok = fwd_exec_wait(x)))
		;
	if (ok) {
		fwd_stream_put(s, src, n);
		pthread_cond_broadcast(&x->changed);
	}
	pthread_mutex_unlock(&x->lock);
	return ok;
}

static uint32_t engine_failed(struct step_ctx *c, const char *what, int err)
{
	return fwd_micro_failed(c->text, c->len, c->step, what, err);
}

/* Samples (and labels) of one batch, checked and staged for the micro-batches. */
static uint32_t take_batch(struct step_ctx *c)
{
	struct fwd_program *p = c->p;
	const struct wsep_program *prog = p->prog;
	uint32_t b = c->batch, classes = prog->layers[prog->num_layers - 1].out;
	size_t n = (size_t)b * prog->input_dim;

	if (!take(c, p->samples, p->in_bytes, b * p->streams[p->samples].record))
		return FWD_RUN_STOPPED;
	if (c->kind != WSE_LINK_RUN_PREDICT) {
		if (!take(c, p->labels, p->labels_i32, (uint64_t)b * 4))
			return FWD_RUN_STOPPED;
		for (uint32_t i = 0; i < b; i++) {
			int32_t l = p->labels_i32[i];

			if (l < 0 || (uint32_t)l >= classes) {
				snprintf(c->text, c->len,
					 "step %u: the label of sample %u is %d; the program has %u classes (0..%u)",
					 c->step, i, l, classes, classes - 1);
				return WSE_LINK_E_INVAL;
			}
			p->labels_u8[i] = (uint8_t)l;
		}
	}
	if (!fwd_micro_input_is_pixels(prog)) {
		const float *f32 = (const float *)p->in_bytes;

		for (size_t i = 0; i < n; i++)
			p->in_f32[i] = (prog->input_type == WSEP_ELEM_U8 ? (float)p->in_bytes[i]
									 : f32[i]) * prog->input_scale;
	}
	return WSE_LINK_OK;
}

/* Layer k's weights: the next transfer of weights.k. */
static uint32_t layer_weights(struct step_ctx *c, uint32_t k, const float **w, const float **bias)
{
	struct fwd_program *p = c->p;
	const struct wsep_layer *l = &p->prog->layers[k];

	if (!take(c, p->weights[k], p->layer_w, wsep_layer_params(l) * 4))
		return FWD_RUN_STOPPED;
	*w = p->layer_w;
	*bias = p->layer_w + (size_t)l->in * l->out;
	return WSE_LINK_OK;
}

/* Weight streaming: forward, loss and results of every micro-batch. */
static uint32_t streamed_forward(struct step_ctx *c, uint32_t n)
{
	struct fwd_program *p = c->p;
	struct engine_loss_result res;
	const char *what;
	int err;

	for (uint32_t k = 0; k < p->prog->num_layers; k++) {
		const float *w, *bias;
		uint32_t st = layer_weights(c, k, &w, &bias);

		if (st)
			return st;
		for (uint32_t m = 0; m < n; m++) {
			if (!k && (err = fwd_micro_load(p, m, fwd_micro_at(p, c->batch, m))))
				return engine_failed(c, "loading the input", err);
			err = engine_forward_layer(p->micro_ws[m], k, w, bias);
			if (err)
				return engine_failed(c, "the forward pass", err);
		}
	}
	for (uint32_t m = 0; m < n; m++) {
		struct fwd_micro s = fwd_micro_at(p, c->batch, m);

		err = fwd_micro_results(p, c->kind, m, s, &what);
		if (err)
			return engine_failed(c, what, err);
		if (c->kind == WSE_LINK_RUN_TRAIN &&
		    (err = engine_loss(p->micro_ws[m], p->labels_u8 + s.first, c->batch, &res)))
			return engine_failed(c, "the loss", err);
	}
	return WSE_LINK_OK;
}

/* Weight streaming: each layer's gradient, accumulated over the micro-batches, goes out. */
static uint32_t streamed_backward(struct step_ctx *c, uint32_t n)
{
	struct fwd_program *p = c->p;
	int err;

	p->step++;
	for (uint32_t k = p->prog->num_layers; k-- > 0;) {
		const struct wsep_layer *l = &p->prog->layers[k];
		const float *w, *bias;
		uint32_t st = layer_weights(c, k, &w, &bias);

		if (st)
			return st;
		for (uint32_t m = 0; m < n; m++) {
			err = engine_backward_layer(p->micro_ws[m], k, w, m ? 1.0f : 0.0f,
						    p->layer_g, p->layer_g + (size_t)l->in * l->out);
			if (err)
				return engine_failed(c, "the backward pass", err);
		}
		/* Nothing of the layer stays: its gradients leave, its weights are dropped. */
		if (!put(c, p->grads[k], p->layer_g, wsep_layer_params(l) * 4))
			return FWD_RUN_STOPPED;
	}
	return WSE_LINK_OK;
}

/* For the stages: is the link going? */
static bool link_stopping(void *arg)
{
	struct fwd_exec *x = arg;
	bool stopping;

	pthread_mutex_lock(&x->lock);
	stopping = x->stopping;
	pthread_mutex_unlock(&x->lock);
	return stopping;
}

static uint32_t one_step(struct step_ctx *c)
{
	struct fwd_program *p = c->p;
	uint32_t n = fwd_micro_count(p, c->batch), st = take_batch(c);

	if (!st && p->pipeline) {
		struct fwd_step step = { .kind = c->kind, .batch = c->batch, .number = c->step,
					 .t = p->step + 1 };
		bool updated;

		st = fwd_pipeline_step(p->pipeline, &step, link_stopping, c->x, c->text, c->len,
				       &updated);
		/* Adam's t counts the steps any layer was updated in. */
		if (updated)
			p->step = step.t;
	} else if (!st) {
		st = streamed_forward(c, n);
		if (!st && c->kind == WSE_LINK_RUN_TRAIN)
			st = streamed_backward(c, n);
	}
	if (st)
		return st;
	if (c->kind != WSE_LINK_RUN_PREDICT && !put(c, p->losses, p->losses_f32, (uint64_t)c->batch * 4))
		return FWD_RUN_STOPPED;
	if (!put(c, p->predictions, p->preds_i32, (uint64_t)c->batch * 4))
		return FWD_RUN_STOPPED;
	return WSE_LINK_OK;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int run_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
		      struct wse_link_err *err)
{
	return wse_link_run_decode(payload, len, &a->run, err);
}

static void run_execute(struct fwd_exec *x, const struct fwd_request *req)
{
	const struct wse_link_run_info in = req->args.run;
	const struct wse_link_frame *f = &req->f;
	struct wse_link_run_result_info r = { 0 };
	struct wse_link_run_result raw;
	struct fwd_program *p;
	enum fwd_timing_kind tk;
	char text[256] = "";
	uint32_t st = WSE_LINK_OK;
	uint64_t t0 = now_ns();
	struct step_ctx c;
	struct iovec iov;

	pthread_mutex_lock(&x->lock);
	p = fwd_program_get(x, in.program, text, sizeof(text));
	if (p && (in.kind < WSE_LINK_RUN_TRAIN || in.kind > WSE_LINK_RUN_PREDICT)) {
		snprintf(text, sizeof(text), "RUN kind %u is not train (1), eval (2) or predict (3)",
			 in.kind);
		p = NULL;
	} else if (p && !in.steps) {
		snprintf(text, sizeof(text), "RUN of 0 steps: steps must be at least 1");
		p = NULL;
	} else if (p && (!in.batch || in.batch > p->prog->batch)) {
		snprintf(text, sizeof(text), "RUN batch %u is outside 1..%u (the program's batch)",
			 in.batch, p->prog->batch);
		p = NULL;
	} else if (p && p->busy) {
		snprintf(text, sizeof(text), "program %u is already running a RUN on another queue",
			 in.program);
		p = NULL;
	}
	if (p)
		p->busy = true;
	pthread_mutex_unlock(&x->lock);
	if (!p) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return;
	}

	c = (struct step_ctx){ .x = x, .p = p, .kind = in.kind, .batch = in.batch,
			       .text = text, .len = sizeof(text) };
	for (uint32_t s = 0; s < in.steps; s++) {
		bool stopping;

		pthread_mutex_lock(&x->lock);
		stopping = x->stopping;
		pthread_mutex_unlock(&x->lock);
		if (stopping) {
			st = FWD_RUN_STOPPED;	/* the link is going: no more steps */
			break;
		}
		c.step = s + 1;
		st = one_step(&c);
		if (st)
			break;
		r.steps++;
	}
	tk = in.kind == WSE_LINK_RUN_TRAIN ? FWD_TIMING_TRAIN : FWD_TIMING_FORWARD;
	r.samples = r.steps * in.batch;
	r.cycles = fwd_timing_run_cycles(&x->timing, p->prog, tk, r.steps, in.batch);
	r.est_cycles = fwd_timing_est_cycles(p->prog, tk, r.steps, in.batch);
	r.host_ns = now_ns() - t0;

	pthread_mutex_lock(&x->lock);
	p->busy = false;
	x->stats.cycles += r.cycles;
	x->stats.est_cycles += r.est_cycles;
	x->stats.steps += r.steps;
	x->stats.samples += r.samples;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);

	if (st == FWD_RUN_STOPPED)
		return;
	if (st) {
		fwd_conn_reply_text(x->conn, f, st, "%s (%u of %u steps completed)", text, r.steps,
				    in.steps);
		return;
	}
	fwd_dbg("program %u: %u steps, %llu cycles modelled, %llu estimated, %llu ns",
		in.program, r.steps, (unsigned long long)r.cycles,
		(unsigned long long)r.est_cycles, (unsigned long long)r.host_ns);
	wse_link_run_result_encode(&raw, &r);
	iov.iov_base = &raw;
	iov.iov_len = sizeof(raw);
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, &iov, 1);
}

const struct fwd_op fwd_op_run = {
	.opcode = WSE_LINK_OP_RUN,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_run),
	.decode = run_decode,
	.execute = run_execute,
};
