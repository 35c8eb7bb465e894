// SPDX-License-Identifier: GPL-2.0-only
/*
 * PROGRAM_LOAD and PROGRAM_UNLOAD. An image arrives in pieces, in order,
 * into a buffer bounded by --max-program; on the last piece it is
 * validated by wsep_read() (the image is untrusted), checked against this
 * device (wafer, SRAM capacity, what the engine can run), and set up:
 * resident parameters (pipelined), the worker threads that run its steps, a
 * workspace per micro-batch, the stream buffers. Only then does it replace
 * what the slot held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_conn.h"
#include "fwd_device.h"
#include "fwd_exec.h"
#include "fwd_graph.h"
#include "fwd_log.h"
#include "fwd_ops.h"
#include "fwd_pipeline.h"
#include "wse/engine_wsep.h"

#define TEXT_MAX 256

struct fwd_program *fwd_program_get(struct fwd_exec *x, uint32_t slot, char *text, size_t len)
{
	if (!slot || slot >= FWD_PROGRAM_SLOTS) {
		snprintf(text, len, "program slot %u does not exist (slots are 1..%u)", slot,
			 FWD_PROGRAM_SLOTS - 1);
		return NULL;
	}
	if (!x->slots[slot]) {
		snprintf(text, len, "no program is loaded in slot %u", slot);
		return NULL;
	}
	return x->slots[slot];
}

void fwd_program_free(struct fwd_program *p)
{
	if (!p)
		return;
	/* The workers first: they use the workspaces, parameters and staging. */
	fwd_pipeline_destroy(p->pipeline);
	if (p->streams)
		for (uint32_t i = 0; i < p->prog->num_streams; i++) {
			free(p->streams[i].buf);
			fwd_wire16_free(&p->streams[i].wire);
		}
	free(p->streams);
	for (uint32_t m = 0; m < p->micro_max; m++)
		engine_workspace_destroy(p->micro_ws[m]);
	engine_params_destroy(p->params);
	fwd_graph_destroy(p->graph);
	free(p->logits_f32);
	free(p->in_bytes);
	free(p->in_f32);
	free(p->labels_u8);
	free(p->labels_i32);
	free(p->preds_i32);
	free(p->preds_u8);
	free(p->losses_f32);
	free(p->snap);
	wsep_program_free(p->prog);
	free(p);
}

/* Does the program fit this device's mesh and engine? */
static uint32_t check_device(struct fwd_exec *x, const struct wsep_program *prog,
			     char *text, size_t len)
{
	const struct fwd_config *cfg = x->dev->cfg;
	const struct wsep_wafer *w = &prog->wafer;

	if (w->sram_per_pe > cfg->sram_per_pe) {
		snprintf(text, len,
			 "the program was compiled for wafer %s with %llu B of SRAM per PE; this device has %llu B per PE",
			 w->name, (unsigned long long)w->sram_per_pe,
			 (unsigned long long)cfg->sram_per_pe);
		return WSE_LINK_E_INVAL;
	}
	for (uint32_t k = 0; k < prog->num_layers; k++) {
		const struct wsep_region *r = &prog->regions[k];

		if ((uint64_t)r->x + r->w > cfg->wafer_width ||
		    (uint64_t)r->y + r->h > cfg->wafer_height) {
			snprintf(text, len,
				 "the program was compiled for wafer %s (%ux%u PEs); this device is %ux%u PEs: layer %u's region %ux%u at %u,%u does not fit",
				 w->name, w->width, w->height, cfg->wafer_width, cfg->wafer_height,
				 k, r->w, r->h, r->x, r->y);
			return WSE_LINK_E_INVAL;
		}
	}
	if (!prog->graph && prog->layers[prog->num_layers - 1].out > 256) {
		snprintf(text, len, "the program has %u classes; labels are bytes on the device, at most 256",
			 prog->layers[prog->num_layers - 1].out);
		return WSE_LINK_E_UNSUPPORTED;
	}
	if (prog->input_type != WSEP_ELEM_U8 && prog->input_type != WSEP_ELEM_F32 &&
	    (prog->input_type != WSEP_ELEM_I32 || !prog->graph)) {
		snprintf(text, len, "input type %s is not supported (u8 or f32)",
			 wsep_elem_name(prog->input_type));
		return WSE_LINK_E_UNSUPPORTED;
	}
	return WSE_LINK_OK;
}

static uint64_t program_sram(const struct wsep_program *prog)
{
	uint64_t sum = 0, max = 0;

	for (uint32_t k = 0; k < prog->num_layers; k++) {
		sum += prog->layers[k].sram_bytes;
		if (prog->layers[k].sram_bytes > max)
			max = prog->layers[k].sram_bytes;
	}
	/* Weight streaming runs the layers one after another on the whole wafer. */
	return prog->mode == WSEP_MODE_PIPELINED ? sum : max;
}

static void *alloc_zero(size_t n, size_t size, bool *failed)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		*failed = true;
	return p;
}

/* Staging, allocated once: a batch's inputs and outputs. */
static uint32_t staging(struct fwd_program *p, char *text, size_t len)
{
	const struct wsep_program *prog = p->prog;
	size_t b = prog->batch, rows = wsep_label_rows(prog);
	bool failed = false;

	p->in_bytes = alloc_zero(b * prog->input_dim, prog->input_type == WSEP_ELEM_U8 ? 1 : 4,
				 &failed);
	p->in_f32 = alloc_zero(b * prog->input_dim, sizeof(float), &failed);
	p->labels_u8 = alloc_zero(b, 1, &failed);
	p->labels_i32 = alloc_zero(b * rows, 4, &failed);
	p->preds_i32 = alloc_zero(b * rows, 4, &failed);
	p->preds_u8 = alloc_zero(b, 1, &failed);
	p->losses_f32 = alloc_zero(b, 4, &failed);
	if (prog->graph)
		p->logits_f32 = alloc_zero(b * rows * wsep_classes(prog), 4, &failed);
	if (failed || fwd_stream_setup(p)) {
		snprintf(text, len, "the simulator has no host memory left for the program's buffers");
		return WSE_LINK_E_NOSPC;
	}
	return WSE_LINK_OK;
}

/* The program's micro-batches are more than the simulator runs in a step. */
static uint32_t micro_too_many(const struct fwd_program *p, char *text, size_t len)
{
	snprintf(text, len,
		 "the program's micro-batches of %u samples cut its batch of %u into more than the %u this simulator runs in a step: compile it with a larger --micro-batch, or a smaller --batch",
		 p->prog->micro_batch, p->prog->batch, FWD_MICRO_BATCHES_MAX);
	return WSE_LINK_E_INVAL;
}

/* A graph program: its graphs and, pipelined, its weights (fwd_graph.c). */
static uint32_t build_graph(struct fwd_exec *x, struct fwd_program *p, char *text, size_t len)
{
	/* PARAMS_READ and _WRITE size the optimizer's state arrays from it. */
	if (engine_optim_from_wsep(&p->prog->opt, &p->opt)) {
		snprintf(text, len, "the engine refuses the program's optimizer");
		return WSE_LINK_E_INVAL;
	}
	if (fwd_micro_setup(p, x->dev->cfg->micro_batches))
		return micro_too_many(p, text, len);
	if (fwd_micro_prepare(p, 0, p->prog->batch)) {
		snprintf(text, len, "the program's batch of %u cannot be cut into micro-batches",
			 p->prog->batch);
		return WSE_LINK_E_INVAL;
	}
	return fwd_graph_create(p, x->dev->cfg->sram_total, &p->graph, text, len);
}

/* A layer program: a workspace per micro-batch and, pipelined, its parameters. */
static uint32_t build_layers(struct fwd_exec *x, struct fwd_program *p, char *text, size_t len)
{
	const struct wsep_program *prog = p->prog;
	uint32_t L = prog->num_layers;
	int err;

	p->shape.layers = L;
	p->shape.width[0] = prog->input_dim;
	for (uint32_t k = 0; k < L; k++) {
		p->shape.width[k + 1] = prog->layers[k].out;
		p->shape.relu[k] = prog->layers[k].act == WSEP_ACT_RELU;
	}
	err = engine_shape_check(&p->shape);
	if (!err)
		err = engine_optim_from_wsep(&prog->opt, &p->opt);
	if (!err)
		err = engine_optim_check(&p->opt);
	if (!err)
		err = engine_lr_from_wsep(&prog->opt, &p->sched);
	if (err) {
		snprintf(text, len, "the engine refuses the program: %s", engine_strerror(err));
		return WSE_LINK_E_INVAL;
	}
	if (fwd_micro_setup(p, x->dev->cfg->micro_batches))
		return micro_too_many(p, text, len);
	err = fwd_micro_prepare(p, 0, prog->batch);
	if (!err && p->resident)
		err = engine_params_create(&p->shape, p->opt.kind, &p->params);
	if (err) {
		snprintf(text, len, "the simulator cannot allocate the program's memory: %s",
			 engine_strerror(err));
		return WSE_LINK_E_NOSPC;
	}
	for (uint32_t k = 0; p->params && k < L; k++) {
		const struct wsep_layer *l = &prog->layers[k];
		struct engine_layer *el = &p->params->layer[k];

		if (prog->weights) {
			memcpy(el->w, prog->weights + l->weight_offset,
			       (size_t)l->in * l->out * sizeof(float));
			memcpy(el->b, prog->weights + l->weight_offset + (uint64_t)l->in * l->out,
			       l->out * sizeof(float));
		} else {
			wsep_init_layer(prog->seed, l->weight_offset, l->in, l->out, el->w, el->b);
		}
	}
	return WSE_LINK_OK;
}

/* Engine objects, parameters, staging and worker threads for a validated program. */
static uint32_t build(struct fwd_exec *x, struct fwd_program *p, char *text, size_t len)
{
	const struct fwd_config *cfg = x->dev->cfg;
	uint32_t st;
	int err;

	p->resident = p->prog->mode == WSEP_MODE_PIPELINED;
	/* Weight streaming, the host keeps the scaler and sends the scale with each RUN. */
	p->loss_scaling = p->prog->precision == WSEP_PRECISION_FP16;
	engine_loss_scaler_init(&p->scaler);
	st = p->prog->graph ? build_graph(x, p, text, len) : build_layers(x, p, text, len);
	if (!st)
		st = staging(p, text, len);
	if (st)
		return st;
	/* Once per load, not per RUN: hosts often RUN one step at a time. */
	err = fwd_pipeline_create(p, cfg->workers, p->resident ? (int)cfg->fault.stage_error : -1,
				  &p->pipeline);
	if (err) {
		snprintf(text, len, "the simulator cannot start the program's worker threads: %s",
			 strerror(-err));
		return WSE_LINK_E_NOSPC;
	}
	return WSE_LINK_OK;
}

/* Binds the program's declared streams to what the device produces and consumes. */
static uint32_t bind_streams(struct fwd_program *p, char *text, size_t len)
{
	struct wsep_train_streams ts;

	if (wsep_train_streams(p->prog, &ts, text, len))
		return WSE_LINK_E_INVAL;
	p->samples = ts.samples;
	p->labels = ts.labels;
	p->losses = ts.losses;
	p->predictions = ts.predictions;
	p->logits = ts.logits;
	for (int k = 0; k < ENGINE_MAX_LAYERS; k++) {
		p->weights[k] = ts.weights[k];
		p->grads[k] = ts.grads[k];
	}
	return WSE_LINK_OK;
}

/* Validates, places and installs a whole image; answers the last piece. */
static void place(struct fwd_exec *x, const struct wse_link_frame *f, uint32_t slot,
		  const uint8_t *image, uint64_t size)
{
	struct fwd_program *p = calloc(1, sizeof(*p)), *old = NULL;
	struct wse_link_prog_info info = { .program = slot };
	struct wse_link_program_info raw;
	char text[TEXT_MAX], msg[200];
	uint64_t others, total = x->dev->cfg->sram_total;
	uint32_t status;
	struct iovec iov;

	if (!p) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_NOSPC, "the simulator is out of memory");
		return;
	}
	p->slot = slot;
	if (wsep_read(image, size, &p->prog, msg, sizeof(msg))) {
		fwd_program_free(p);
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "invalid program: %s", msg);
		return;
	}
	status = check_device(x, p->prog, text, sizeof(text));
	if (!status) {
		p->sram_bytes = program_sram(p->prog);
		pthread_mutex_lock(&x->lock);
		others = x->sram_used - (x->slots[slot] ? x->slots[slot]->sram_bytes : 0);
		pthread_mutex_unlock(&x->lock);
		if (p->sram_bytes > total - others) {
			snprintf(text, sizeof(text),
				 "the program needs %llu bytes of SRAM; the device has %llu, of which %llu are held by other programs",
				 (unsigned long long)p->sram_bytes, (unsigned long long)total,
				 (unsigned long long)others);
			status = WSE_LINK_E_NOSPC;
		}
	}
	if (!status)
		status = bind_streams(p, text, sizeof(text));
	if (!status)
		status = build(x, p, text, sizeof(text));
	if (status) {
		fwd_program_free(p);
		fwd_conn_reply_text(x->conn, f, status, "%s", text);
		return;
	}
	p->est_cycles_per_step = fwd_timing_est_cycles(p->prog, FWD_TIMING_TRAIN, 1, p->prog->batch);

	pthread_mutex_lock(&x->lock);
	old = x->slots[slot];
	/* A stream copy in progress outside the lock is brief: let it end. */
	while (old && old->io) {
		if (!fwd_exec_wait(x)) {
			bool cancelled = fwd_exec_cancelled(x);

			pthread_mutex_unlock(&x->lock);
			fwd_program_free(p);
			if (cancelled)
				fwd_conn_reply_text(x->conn, f, WSE_LINK_E_CANCELED,
						    "cancelled by the host while it waited to replace program %u",
						    slot);
			return;
		}
		old = x->slots[slot];
	}
	if (old && (old->busy || old->snap_readers)) {
		pthread_mutex_unlock(&x->lock);
		fwd_program_free(p);
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL,
				    "program %u is running; it can be replaced when its RUN ends", slot);
		return;
	}
	others = x->sram_used - (old ? old->sram_bytes : 0);
	if (p->sram_bytes > total - others) {
		/* Another queue loaded a program meanwhile. */
		pthread_mutex_unlock(&x->lock);
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_NOSPC,
				    "the program needs %llu bytes of SRAM; the device has %llu, of which %llu are held by other programs",
				    (unsigned long long)p->sram_bytes, (unsigned long long)total,
				    (unsigned long long)others);
		fwd_program_free(p);
		return;
	}
	x->slots[slot] = p;
	x->sram_used = others + p->sram_bytes;
	if (!old)
		x->programs++;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
	fwd_program_free(old);

	fwd_info("program %u: %s, %s, %u layers, batch %u, %llu bytes of SRAM, %llu cycles per step estimated",
		 slot, p->prog->model_name, wsep_mode_name(p->prog->mode), p->prog->num_layers,
		 p->prog->batch, (unsigned long long)p->sram_bytes,
		 (unsigned long long)p->est_cycles_per_step);
	info.mode = p->prog->mode;
	info.num_layers = p->prog->num_layers;
	info.num_streams = p->prog->num_streams;
	info.batch = p->prog->batch;
	info.sram_bytes = p->sram_bytes;
	info.est_cycles_per_step = p->est_cycles_per_step;
	wse_link_prog_info_encode(&raw, &info);
	iov.iov_base = &raw;
	iov.iov_len = sizeof(raw);
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, &iov, 1);
}

static void drop_assembly(struct fwd_exec *x, uint32_t slot)
{
	struct fwd_assembly *a = x->assembling[slot];

	if (!a)
		return;
	x->assembling_bytes -= a->total;
	free(a->buf);
	free(a);
	x->assembling[slot] = NULL;
}

/* Takes one piece in (lock held). Returns a status; *@done gets a whole image. */
static uint32_t take_piece(struct fwd_exec *x, const struct wse_link_prog_load_info *in,
			   const uint8_t *piece, uint32_t n, struct fwd_assembly **done,
			   char *text, size_t len)
{
	struct fwd_assembly *a = x->assembling[in->program];

	if (!in->program || in->program >= FWD_PROGRAM_SLOTS) {
		snprintf(text, len, "program slot %u does not exist (slots are 1..%u)", in->program,
			 FWD_PROGRAM_SLOTS - 1);
		return WSE_LINK_E_INVAL;
	}
	if (in->offset == 0) {
		drop_assembly(x, in->program);	/* a fresh start replaces a half-sent image */
		if (!in->total || in->total > x->max_program - x->assembling_bytes) {
			snprintf(text, len,
				 "a program of %llu bytes does not fit: the device takes images of 1..%llu bytes (--max-program), %llu of which are being loaded into other slots",
				 (unsigned long long)in->total, (unsigned long long)x->max_program,
				 (unsigned long long)x->assembling_bytes);
			return WSE_LINK_E_NOSPC;
		}
		a = calloc(1, sizeof(*a));
		if (a)
			a->buf = malloc(in->total);
		if (!a || !a->buf) {
			free(a);
			snprintf(text, len, "the simulator cannot allocate %llu bytes for the image",
				 (unsigned long long)in->total);
			return WSE_LINK_E_NOSPC;
		}
		a->total = in->total;
		x->assembling[in->program] = a;
		x->assembling_bytes += a->total;
	} else if (!a) {
		snprintf(text, len,
			 "piece at offset %llu of program %u, but no load is in progress (the first piece has offset 0)",
			 (unsigned long long)in->offset, in->program);
		return WSE_LINK_E_INVAL;
	}
	if (in->total != a->total || in->offset != a->got || n > a->total - a->got) {
		snprintf(text, len,
			 "piece of %u bytes at offset %llu of a %llu-byte image does not follow the %llu bytes received of a %llu-byte image; the load is abandoned",
			 n, (unsigned long long)in->offset, (unsigned long long)in->total,
			 (unsigned long long)a->got, (unsigned long long)a->total);
		drop_assembly(x, in->program);
		return WSE_LINK_E_INVAL;
	}
	memcpy(a->buf + a->got, piece, n);
	a->got += n;
	if (!(in->flags & WSE_LINK_PROG_LAST))
		return WSE_LINK_OK;
	if (a->got != a->total) {
		snprintf(text, len, "the last piece ends at byte %llu of a %llu-byte image; the load is abandoned",
			 (unsigned long long)a->got, (unsigned long long)a->total);
		drop_assembly(x, in->program);
		return WSE_LINK_E_INVAL;
	}
	x->assembling[in->program] = NULL;
	x->assembling_bytes -= a->total;
	*done = a;
	return WSE_LINK_OK;
}

static int load_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
		       struct wse_link_err *err)
{
	return wse_link_prog_load_decode(payload, len, &a->load, err);
}

static void load_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	const struct wse_link_prog_load_info *in = &r->args.load;
	const struct wse_link_frame *f = &r->f;
	struct fwd_assembly *done = NULL;
	char text[TEXT_MAX];
	uint32_t status;

	pthread_mutex_lock(&x->lock);
	status = take_piece(x, in, r->data, r->len, &done, text, sizeof(text));
	pthread_mutex_unlock(&x->lock);
	if (status) {
		fwd_conn_reply_text(x->conn, f, status, "%s", text);
		return;
	}
	if (!done) {
		fwd_conn_reply(x->conn, f, WSE_LINK_OK, NULL, 0);
		return;
	}
	place(x, f, in->program, done->buf, done->total);
	free(done->buf);
	free(done);
}

static int unload_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			 struct wse_link_err *err)
{
	return wse_link_prog_ref_decode(payload, len, &a->program, err);
}

/*
 * Frees the slot: its program, and an image being loaded into it (a host
 * that sent some pieces and left must not leave them for the slot's next
 * user to complete). A slot that held only such an image is answered OK.
 */
static void unload_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	const struct wse_link_frame *f = &r->f;
	uint32_t slot = r->args.program;
	uint32_t status = WSE_LINK_E_INVAL;
	struct fwd_program *p;
	char text[TEXT_MAX];
	bool image = false;

	pthread_mutex_lock(&x->lock);
	p = fwd_program_get(x, slot, text, sizeof(text));
	while (p && p->io) {
		if (!fwd_exec_wait(x)) {
			bool cancelled = fwd_exec_cancelled(x);

			pthread_mutex_unlock(&x->lock);
			if (cancelled)
				fwd_conn_reply_text(x->conn, f, WSE_LINK_E_CANCELED,
						    "cancelled by the host while it waited to unload program %u",
						    slot);
			return;
		}
		p = fwd_program_get(x, slot, text, sizeof(text));
	}
	if (slot && slot < FWD_PROGRAM_SLOTS && x->assembling[slot]) {
		drop_assembly(x, slot);
		image = true;
	}
	/* E_BUSY, not E_INVAL: the host may ask again, and frees the slot
	 * only once it is really empty.
	 */
	if (!p && image) {
		pthread_mutex_unlock(&x->lock);
		fwd_info("slot %u: the image being loaded into it dropped", slot);
		fwd_conn_reply(x->conn, f, WSE_LINK_OK, NULL, 0);
		return;
	}
	if (p && (p->busy || p->snap_readers)) {
		snprintf(text, sizeof(text), "program %u is running; unload it when its RUN ends", slot);
		status = WSE_LINK_E_BUSY;
		p = NULL;
	} else if (p) {
		x->slots[slot] = NULL;
		x->sram_used -= p->sram_bytes;
		x->programs--;
		pthread_cond_broadcast(&x->changed);
	}
	pthread_mutex_unlock(&x->lock);
	if (!p) {
		fwd_conn_reply_text(x->conn, f, status, "%s", text);
		return;
	}
	fwd_info("program %u unloaded", slot);
	fwd_program_free(p);
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, NULL, 0);
}

const struct fwd_op fwd_op_program_load = {
	.opcode = WSE_LINK_OP_PROGRAM_LOAD,
	.min_len = sizeof(struct wse_link_program_load),
	.decode = load_decode,
	.execute = load_execute,
};

const struct fwd_op fwd_op_program_unload = {
	.opcode = WSE_LINK_OP_PROGRAM_UNLOAD,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_program_ref),
	.decode = unload_decode,
	.execute = unload_execute,
};
