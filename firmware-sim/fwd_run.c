// SPDX-License-Identifier: GPL-2.0-only
/*
 * RUN: steps of a loaded program. Each step takes a batch from the input
 * streams, cuts it into micro-batches (fwd_pipeline.h), runs the engine's
 * per-layer entry points on them and fills the output streams in sample
 * order.
 *
 * Both modes run a step as the program's task graph (fwd_pipeline.c) on
 * its worker threads; this thread stages the batch, starts the step, waits
 * for it and moves the streams.
 *
 * Layer pipelined, the weights are the program's resident parameters and
 * each layer's update runs in the graph after its last gradient.
 *
 * Weight streaming, layer k's weights arrive on weights.k twice a step
 * (for its forward passes, and again for its input gradients), are used in
 * place in that ring and dropped when the layer is done; its gradients,
 * accumulated over the micro-batches in place in the grads.k ring, go out
 * then; nothing of them stays on the device. In fp16 the RUN carries the
 * loss scale (WSE_LINK_RUN_SCALED) and the gradients go out scaled: the
 * host, which sees every system's, unscales them and decides the step.
 *
 * Each layer makes the same engine calls on the same shapes in the same
 * order in both modes, which is what makes them agree bit for bit. A
 * graph program's units are its layers here (fwd_graph.h); its labels
 * and predictions are a sample's rows (tokens), and PREDICT also puts
 * every row's logits on the logits stream.
 */
#include <float.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fwd_conn.h"
#include "fwd_exec.h"
#include "fwd_graph.h"
#include "fwd_log.h"
#include "fwd_ops.h"
#include "fwd_pipeline.h"
#include "wse/engine_ops.h"

struct step_ctx {
	struct fwd_exec *x;
	struct fwd_program *p;
	uint32_t kind;		/* WSE_LINK_RUN_* */
	bool retain;		/* the forward weights serve the backward pass */
	uint32_t batch;
	uint32_t norm;		/* the batch the loss is averaged over */
	uint64_t norm_rows;	/* graph programs: the rows it is averaged over (take_batch) */
	uint32_t step;		/* 1-based, within this RUN */
	char *text;
	size_t len;
	/* Where the RUN's time went, for the debug log. */
	uint64_t ns_input, ns_graph, ns_output;
};

static uint64_t now_ns(void);

/* Bytes of a step's outputs on @p's output stream @idx (0: the step puts none there). */
static uint64_t output_bytes(const struct step_ctx *c, int idx)
{
	const struct fwd_program *p = c->p;

	if (idx == p->losses)
		return c->kind != WSE_LINK_RUN_PREDICT ? (uint64_t)c->batch * 4 : 0;
	if (idx == p->predictions)
		return (uint64_t)c->batch * wsep_label_rows(p->prog) * 4;
	if (idx == p->logits && idx >= 0)
		return c->kind == WSE_LINK_RUN_PREDICT ? c->batch * p->streams[idx].record : 0;
	return 0;
}

/*
 * Lock held: can the step begin? Its batch is in the input streams, and
 * the output streams have room for all it will put there: so a step,
 * once begun, waits for nothing of the host's (but, weight streaming, its
 * layers' weights and room for their gradients), and a RUN that is
 * cancelled or stopped between steps leaves every step it took whole.
 */
static bool step_ready(const struct step_ctx *c)
{
	const struct fwd_program *p = c->p;
	const struct fwd_stream *in = &p->streams[p->samples];
	const int outs[] = { p->losses, p->predictions, p->logits };

	if (in->len < c->batch * in->record)
		return false;
	if (c->kind != WSE_LINK_RUN_PREDICT &&
	    p->streams[p->labels].len < (uint64_t)c->batch * wsep_label_rows(p->prog) * 4)
		return false;
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		const struct fwd_stream *s = outs[i] >= 0 ? &p->streams[outs[i]] : NULL;

		if (s && s->cap - s->len < output_bytes(c, outs[i]))
			return false;
	}
	return true;
}

/*
 * Waits until the step can begin (step_ready()), then takes its batch
 * into the staging buffers. WSE_LINK_OK, FWD_RUN_STOPPED (the link is
 * going) or WSE_LINK_E_CANCELED (the host cancelled the RUN): nothing is
 * taken then.
 */
static uint32_t take_inputs(struct step_ctx *c)
{
	struct fwd_exec *x = c->x;
	struct fwd_program *p = c->p;
	uint32_t st = WSE_LINK_OK;

	pthread_mutex_lock(&x->lock);
	if (fwd_exec_cancelled(x))
		st = WSE_LINK_E_CANCELED;
	while (!st && !step_ready(c)) {
		if (!fwd_exec_wait(x))
			st = fwd_exec_cancelled(x) ? WSE_LINK_E_CANCELED : FWD_RUN_STOPPED;
	}
	if (!st) {
		fwd_stream_get(&p->streams[p->samples], p->in_bytes,
			       c->batch * p->streams[p->samples].record);
		if (c->kind != WSE_LINK_RUN_PREDICT)
			fwd_stream_get(&p->streams[p->labels], p->labels_i32,
				       (uint64_t)c->batch * wsep_label_rows(p->prog) * 4);
		pthread_cond_broadcast(&x->changed);
	}
	pthread_mutex_unlock(&x->lock);
	return st;
}

/* The step's outputs, into the room step_ready() saw (only this RUN fills them). */
static void put_outputs(struct step_ctx *c)
{
	struct fwd_exec *x = c->x;
	struct fwd_program *p = c->p;
	const int outs[] = { p->losses, p->predictions, p->logits };
	const void *data[] = { p->losses_f32, p->preds_i32, p->logits_f32 };

	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		uint64_t n = outs[i] >= 0 ? output_bytes(c, outs[i]) : 0;

		if (n)
			fwd_stream_put(&p->streams[outs[i]], data[i], n);
	}
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
}

/* Samples (and labels) of one batch, checked and staged for the micro-batches. */
static uint32_t take_batch(struct step_ctx *c)
{
	struct fwd_program *p = c->p;
	const struct wsep_program *prog = p->prog;
	uint32_t b = c->batch, classes = wsep_classes(prog), rows = wsep_label_rows(prog);
	size_t n = (size_t)b * prog->input_dim;
	uint32_t st = take_inputs(c);

	if (st)
		return st;
	if (c->kind != WSE_LINK_RUN_PREDICT) {
		uint64_t counted = 0;

		for (uint32_t i = 0; i < b * rows; i++) {
			int32_t l = p->labels_i32[i];

			/* A graph's token loss skips rows labelled -100 (PyTorch's ignore_index). */
			if (prog->graph && l == ENGINE_XENT_IGNORE)
				continue;
			if (l < 0 || (uint32_t)l >= classes) {
				snprintf(c->text, c->len,
					 "step %u: the label of sample %u%s is %d; the program has %u classes (0..%u)%s",
					 c->step, i / rows, rows > 1 ? " (a row of it)" : "", l, classes,
					 classes - 1, prog->graph ? ", or -100 for a row not counted" : "");
				return WSE_LINK_E_INVAL;
			}
			counted++;
			if (!prog->graph)
				p->labels_u8[i] = (uint8_t)l;
		}
		c->norm_rows = (uint64_t)c->norm * rows;
		/*
		 * The mean is over the counted rows of the whole batch. A device
		 * holding all of it counts them; one holding a share of it (an
		 * appliance's system) cannot see the others' ignored rows.
		 */
		if (prog->graph && c->norm == b) {
			c->norm_rows = counted;
		} else if (prog->graph && counted != (uint64_t)b * rows) {
			snprintf(c->text, c->len,
				 "step %u: labels of -100 (rows not counted) in a batch split across systems: the loss's mean would need the other systems' counts; train such a model on one system",
				 c->step);
			return WSE_LINK_E_INVAL;
		}
	}
	/* A graph program's micro-batches convert their own input (fwd_graph.c). */
	if (!prog->graph && !fwd_micro_input_is_pixels(prog)) {
		const float *f32 = (const float *)p->in_bytes;

		for (size_t i = 0; i < n; i++)
			p->in_f32[i] = (prog->input_type == WSEP_ELEM_U8 ? (float)p->in_bytes[i]
									 : f32[i]) * prog->input_scale;
	}
	return WSE_LINK_OK;
}

/* For the graph's workers: wake the RUN's thread, which waits on exec->changed. */
static void wake_run(void *arg)
{
	struct fwd_exec *x = arg;

	pthread_mutex_lock(&x->lock);
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
}

/* Weight streaming: how far each layer's weights and gradients are in a step (bit k: layer k). */
struct streamed {
	uint32_t fwd_next;	/* layers 0 .. fwd_next - 1 have their forward weights */
	uint64_t in_open;	/* the second transfer of the weights there */
	uint64_t grad_open;	/* gradient buffer reserved */
	uint64_t done;		/* gradients out, weights dropped */
};

/*
 * Weight streaming, the RUN's thread (lock held): what can move now.
 * Layer k's weights.k ring holds its two transfers of the step one after
 * the other: the weights for the forward passes, then the same again for
 * the input gradients. Both are used in place as they arrive, and dropped
 * once the layer's backward pass is complete (forward only: once the step
 * is). Its gradients accumulate in place in the grads.k ring, which they
 * join at that point. So nothing of a layer stays on the device, and
 * nothing is copied. The rings hold whole transfers at whole-transfer
 * offsets (the device takes and puts only those, and a ring holds two), so
 * each lies in one piece.
 */
static uint32_t stream_layers(struct step_ctx *c, struct streamed *sd, bool *moved,
			      bool *finished)
{
	struct fwd_program *p = c->p;
	const struct wsep_program *prog = p->prog;
	uint32_t L = prog->num_layers;
	uint64_t all = L == 64 ? ~0ULL : (1ULL << L) - 1;
	bool train = c->kind == WSE_LINK_RUN_TRAIN, out = false;
	struct fwd_pipeline_state st;

	fwd_pipeline_state(p->pipeline, &st);
	if (st.failed) {
		*finished = true;
		return WSE_LINK_OK;
	}
	for (; sd->fwd_next < L; sd->fwd_next++) {
		uint32_t k = sd->fwd_next;
		const struct wsep_layer *l = &prog->layers[k];
		struct fwd_stream *ws = &p->streams[p->weights[k]];
		uint64_t n = wsep_layer_params(l) * 4;
		const float *w = fwd_stream_peek(ws, 0, n);

		if (!w && ws->len >= n) {
			snprintf(c->text, c->len, "step %u: weights.%u straddles its buffer's end",
				 c->step, k);
			return WSE_LINK_E_INTERNAL;
		}
		if (!w)
			break;
		fwd_pipeline_open_forward(p->pipeline, k, w,
					  p->graph ? NULL : w + (size_t)l->in * l->out);
		*moved = true;
	}
	for (uint32_t k = 0; train && k < sd->fwd_next; k++) {
		const struct wsep_layer *l = &prog->layers[k];
		struct fwd_stream *ws = &p->streams[p->weights[k]];
		uint64_t bit = 1ULL << k, n = wsep_layer_params(l) * 4;
		const float *w;
		float *g;

		/* The second transfer, behind the first (retained: the first again). */
		if (!(sd->in_open & bit) && (w = fwd_stream_peek(ws, c->retain ? 0 : n, n))) {
			/* A graph's unit 0 has a backward pass too (its weights' gradients). */
			if (k || p->graph)
				fwd_pipeline_open_input(p->pipeline, k, w);
			sd->in_open |= bit;
			*moved = true;
		}
		if (!(sd->grad_open & bit) && (g = fwd_stream_reserve(&p->streams[p->grads[k]], n))) {
			fwd_pipeline_open_grads(p->pipeline, k, g,
						p->graph ? NULL : g + (size_t)l->in * l->out);
			sd->grad_open |= bit;
			*moved = true;
		}
		/* Complete: the gradients go out, both transfers are dropped. */
		if ((st.backward & bit) && (sd->in_open & bit) && !(sd->done & bit)) {
			fwd_stream_commit(&p->streams[p->grads[k]], n);
			fwd_stream_consume(ws, c->retain ? n : 2 * n);
			sd->done |= bit;
			*moved = true;
			out = true;
		}
	}
	/* Forward only: the weights are dropped when the step is done. */
	for (uint32_t k = 0; !train && st.done && k < L; k++) {
		fwd_stream_consume(&p->streams[p->weights[k]], wsep_layer_params(&prog->layers[k]) * 4);
		sd->done |= 1ULL << k;
		out = true;
	}
	/* Gradients to read, room to write: wake the streams' waiters. */
	if (out)
		pthread_cond_broadcast(&c->x->changed);
	*finished = sd->done == all;
	return WSE_LINK_OK;
}

/*
 * Lock held: waits for the step's workers, whose work depends on nothing
 * of the host's (a pipelined step), so a cancel does not end the wait;
 * false when the link is going.
 */
static bool wait_workers(struct fwd_exec *x)
{
	struct timespec ts;

	if (x->stopping)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&x->changed, &x->lock, &ts);
	return !x->stopping;
}

/*
 * A cancelled weight-streaming RUN: every layer's weights.K is emptied
 * (the abandoned step's transfers, and any sent ahead for steps that will
 * not run), once no copy into it is in progress. The program is busy.
 */
static void drop_weights(struct fwd_exec *x, struct fwd_program *p)
{
	pthread_mutex_lock(&x->lock);
	for (uint32_t k = 0; k < p->prog->num_layers; k++) {
		struct fwd_stream *s = &p->streams[p->weights[k]];

		while (s->writing && wait_workers(x))
			;
		if (s->writing)
			break;		/* the link is going: the program goes too */
		s->head = s->len = 0;
		s->nref = 0;
	}
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
}

/*
 * One step through the program's task graph (fwd_pipeline.c). This thread
 * only waits for it, and for weight streaming moves the layers' weights
 * and gradients as they come and go. A weight-streaming step that waits
 * (for a layer's weights, room for its gradients) ends when the host
 * cancels the RUN: it is abandoned (E_CANCELED), nothing of it applied.
 */
static uint32_t run_graph(struct step_ctx *c)
{
	struct fwd_exec *x = c->x;
	struct fwd_program *p = c->p;
	struct fwd_step step = { .kind = c->kind, .batch = c->batch, .norm = c->norm,
				 .norm_rows = c->norm_rows, .number = c->step, .t = p->step + 1 };
	struct streamed sd = { 0 };
	bool stopped = false, cancelled = false, finished = false, updated;
	uint32_t st = WSE_LINK_OK, end;

	/* A short batch's micro-batches may need graphs of other sizes. */
	if (p->graph) {
		st = fwd_graph_fit(p, c->batch, c->text, c->len);
		if (st)
			return st;
	}
	fwd_pipeline_begin(p->pipeline, &step, wake_run, x);
	pthread_mutex_lock(&x->lock);
	while (!finished && !st) {
		bool moved = false;

		if (p->resident) {
			struct fwd_pipeline_state ps;

			fwd_pipeline_state(p->pipeline, &ps);
			finished = ps.done || ps.failed;
		} else {
			st = stream_layers(c, &sd, &moved, &finished);
		}
		if (!finished && !st && !moved &&
		    !(p->resident ? wait_workers(x) : fwd_exec_wait(x))) {
			cancelled = fwd_exec_cancelled(x);
			stopped = !cancelled;
			break;
		}
	}
	pthread_mutex_unlock(&x->lock);
	if (stopped || cancelled) {
		struct fwd_pipeline_state ps;

		fwd_pipeline_state(p->pipeline, &ps);
		fwd_dbg("step %u stopped with %u of %u micro-batches through: %s", c->step,
			ps.through, ps.micro, stopped ? "the link is going" : "the host cancelled the RUN");
	}
	if (p->resident && c->kind == WSE_LINK_RUN_TRAIN && !stopped && !cancelled && !st) {
		struct fwd_pipeline_state ps;

		fwd_pipeline_state(p->pipeline, &ps);
		fwd_dbg("step %u: %u micro-batches; layer %u held at most %u at once, its pipeline depth %u",
			c->step, ps.micro, ps.held_layer, ps.held_most, ps.held_depth);
	}
	end = fwd_pipeline_end(p->pipeline, stopped || cancelled || st, c->text, c->len, &updated);
	if (st)
		return st;
	if (stopped)
		return FWD_RUN_STOPPED;
	if (cancelled) {
		snprintf(c->text, c->len, "step %u was abandoned", c->step);
		return WSE_LINK_E_CANCELED;
	}
	if (c->kind == WSE_LINK_RUN_TRAIN && (updated || !p->resident))
		p->step = step.t;	/* Adam's t: the steps any layer was updated in */
	return end;
}

static uint32_t one_step(struct step_ctx *c)
{
	uint64_t t0 = now_ns(), t1, t2;
	uint32_t st = take_batch(c);

	t1 = now_ns();
	if (!st)
		st = run_graph(c);
	t2 = now_ns();
	c->ns_input += t1 - t0;
	c->ns_graph += t2 - t1;
	if (st)
		return st;
	put_outputs(c);
	c->ns_output += now_ns() - t2;
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
	return wse_link_run_decode(payload, len, &a->run.in, err) ||
	       wse_link_run_scale_decode(payload, len, &a->run.loss_scale, err) ? -1 : 0;
}

static void run_execute(struct fwd_exec *x, const struct fwd_request *req)
{
	struct wse_link_run_info in = req->args.run.in;
	float loss_scale = req->args.run.loss_scale;
	const struct wse_link_frame *f = &req->f;
	struct wse_link_run_result_info r = { 0 };
	struct wse_link_run_result raw;
	struct fwd_program *p;
	enum fwd_timing_kind tk;
	char text[256] = "";
	uint32_t st = WSE_LINK_OK, flags;
	uint64_t t0 = now_ns();
	bool scaled;
	struct step_ctx c;
	struct iovec iov;

	pthread_mutex_lock(&x->lock);
	p = fwd_program_get(x, in.program, text, sizeof(text));
	flags = in.kind & ~(uint32_t)WSE_LINK_RUN_KIND_MASK;
	in.kind &= WSE_LINK_RUN_KIND_MASK;
	/* Only fp16 training by weight streaming takes, and needs, the step's loss scale. */
	scaled = p && !p->resident && p->loss_scaling && in.kind == WSE_LINK_RUN_TRAIN;
	if (p && (in.kind < WSE_LINK_RUN_TRAIN || in.kind > WSE_LINK_RUN_PREDICT)) {
		snprintf(text, sizeof(text), "RUN kind %u is not train (1), eval (2) or predict (3)",
			 in.kind);
		p = NULL;
	} else if (p && flags & ~(uint32_t)(WSE_LINK_RUN_RETAIN | WSE_LINK_RUN_SCALED)) {
		snprintf(text, sizeof(text), "RUN flags 0x%x are unknown", flags);
		p = NULL;
	} else if (p && scaled != !!(flags & WSE_LINK_RUN_SCALED)) {
		if (scaled)
			snprintf(text, sizeof(text),
				 "program %u trains in fp16 by weight streaming: its RUN needs the loss scale (flag SCALED), which the host that unscales and checks the gradients (an appliance's MemoryX) sends",
				 in.program);
		else
			snprintf(text, sizeof(text),
				 "RUN flag SCALED is only for training an fp16 weight-streaming program; this is a RUN of kind %u (1 train, 2 eval, 3 predict) of program %u, %s %s",
				 in.kind, in.program, wsep_precision_name(p->prog->precision),
				 p->resident ? "layer pipelined" : "weight streaming");
		p = NULL;
	} else if (p && scaled && !(loss_scale > 0.0f && loss_scale <= FLT_MAX)) {
		snprintf(text, sizeof(text), "RUN loss scale %g: must be finite and above 0",
			 (double)loss_scale);
		p = NULL;
	} else if (p && !in.steps) {
		snprintf(text, sizeof(text), "RUN of 0 steps: steps must be at least 1");
		p = NULL;
	} else if (p && (!in.batch || in.batch > p->prog->batch)) {
		snprintf(text, sizeof(text), "RUN batch %u is outside 1..%u (the program's batch)",
			 in.batch, p->prog->batch);
		p = NULL;
	} else if (p && in.leaf && (in.leaf > in.batch ||
				    (in.batch + in.leaf - 1) / in.leaf > FWD_MICRO_BATCHES_MAX)) {
		snprintf(text, sizeof(text),
			 "RUN leaf of %u samples: must be 1..%u and cut the batch into at most %u",
			 in.leaf, in.batch, FWD_MICRO_BATCHES_MAX);
		p = NULL;
	} else if (p && in.leaf && p->prog->micro_batch && in.leaf > p->prog->micro_batch) {
		snprintf(text, sizeof(text),
			 "RUN leaf of %u samples is larger than the program's micro-batch of %u (what its activations were sized for)",
			 in.leaf, p->prog->micro_batch);
		p = NULL;
	} else if (p && in.norm && (in.norm < in.batch || in.norm > FWD_RUN_NORM_MAX)) {
		snprintf(text, sizeof(text), "RUN norm %u is outside %u..%u (the batch .. 2^24)",
			 in.norm, in.batch, FWD_RUN_NORM_MAX);
		p = NULL;
	} else if (p && p->busy) {
		snprintf(text, sizeof(text), "program %u is already running a RUN on another queue",
			 in.program);
		p = NULL;
	}
	if (p)
		p->busy = true;
	/* fp16 weight streaming: every step of this RUN scales its loss by the host's scale. */
	if (p && (flags & WSE_LINK_RUN_SCALED))
		p->scaler.scale = loss_scale;
	pthread_mutex_unlock(&x->lock);
	if (!p) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return;
	}
	/* The program is busy: its workspaces are this RUN's to resize. */
	if (fwd_micro_prepare(p, in.leaf, in.batch) ||
	    fwd_pipeline_reserve(p->pipeline, fwd_micro_count(p, in.batch))) {
		pthread_mutex_lock(&x->lock);
		p->busy = false;
		pthread_mutex_unlock(&x->lock);
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_NOSPC,
				    "the simulator has no memory for micro-batches of %u samples",
				    in.leaf ? in.leaf : p->micro_default);
		return;
	}

	c = (struct step_ctx){ .x = x, .p = p, .kind = in.kind,
			       .retain = flags & WSE_LINK_RUN_RETAIN, .batch = in.batch,
			       .norm = in.norm ? in.norm : in.batch, .text = text,
			       .len = sizeof(text) };
	/* Between steps the link may go, or the host cancel (take_batch() sees both). */
	for (uint32_t s = 0; s < in.steps; s++) {
		c.step = s + 1;
		st = one_step(&c);
		if (st)
			break;
		r.steps++;
		if (in.kind == WSE_LINK_RUN_TRAIN && p->resident)
			fwd_snapshot_after_step(x, p);
	}
	tk = in.kind == WSE_LINK_RUN_TRAIN ? FWD_TIMING_TRAIN : FWD_TIMING_FORWARD;
	r.samples = r.steps * in.batch;
	r.cycles = fwd_timing_run_cycles(&x->timing, p->prog, tk, r.steps, in.batch);
	r.est_cycles = fwd_timing_est_cycles(p->prog, tk, r.steps, in.batch);
	r.host_ns = now_ns() - t0;
	if (st == WSE_LINK_E_CANCELED && !p->resident)
		drop_weights(x, p);

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
	if (st == WSE_LINK_E_CANCELED) {
		fwd_conn_reply_text(x->conn, f, st,
				    "cancelled by the host after %u of %u steps%s%s", r.steps, in.steps,
				    text[0] ? ": " : "", text);
		return;
	}
	if (st) {
		fwd_conn_reply_text(x->conn, f, st, "%s (%u of %u steps completed)", text, r.steps,
				    in.steps);
		return;
	}
	fwd_dbg("program %u: %u steps, %llu cycles modelled, %llu estimated, %llu ns: %llu waiting for input and output room, %llu in the step graph, %llu putting the output",
		in.program, r.steps, (unsigned long long)r.cycles,
		(unsigned long long)r.est_cycles, (unsigned long long)r.host_ns,
		(unsigned long long)c.ns_input, (unsigned long long)c.ns_graph,
		(unsigned long long)c.ns_output);
	wse_link_run_result_encode(&raw, &r);
	iov.iov_base = &raw;
	iov.iov_len = sizeof(raw);
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, &iov, 1);
}

const struct fwd_op fwd_op_run = {
	.opcode = WSE_LINK_OP_RUN,
	/* Exactly the RUN, or with flag SCALED the scale too: run_decode() checks. */
	.min_len = sizeof(struct wse_link_run),
	.decode = run_decode,
	.execute = run_execute,
};
