// SPDX-License-Identifier: GPL-2.0-only
/*
 * A weight-streaming job on the appliance: the program given to MemoryX
 * (which keeps its weights and optimizer state, refusing what exceeds its
 * capacity), slots for its systems' gradients in SwarmX, the program
 * loaded on each system and the regions it reads and writes mapped there
 * (a system on another machine cannot map them: the coordinator then
 * carries its data in frames). The user node's samples and labels go into
 * rings in the coordinator's input region, from which the systems take
 * their shards; the losses and predictions come back through rings of
 * its own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fwd_log.h"
#include "../fwd_ring.h"
#include "coord.h"
#include "svc_proto.h"
#include "wse/engine_wsep.h"

/* Region ids on a system's link, and on MemoryX's and the input workers'. */
#define REGION_MX	1
#define REGION_SX	2
#define REGION_IN	3

uint64_t coord_ring_room(const struct coord_ring *r)
{
	return r->cap - r->len;
}

void coord_ring_put(struct coord_ring *r, const void *data, uint64_t n)
{
	fwd_ring_write(r->buf, r->cap, (r->head + r->len) % r->cap, data, n);
	r->len += n;
}

void coord_ring_get(struct coord_ring *r, void *data, uint64_t n)
{
	fwd_ring_read(r->buf, r->cap, r->head, data, n);
	r->head = (r->head + n) % r->cap;
	r->len -= n;
}

int coord_ring_pieces(const struct coord_ring *r, uint64_t at, uint64_t n, uint64_t off[2],
		      uint64_t len[2])
{
	uint64_t start = (r->head + at) % r->cap;

	off[0] = start;
	len[0] = n < r->cap - start ? n : r->cap - start;
	if (len[0] == n)
		return 1;
	off[1] = 0;
	len[1] = n - len[0];
	return 2;
}

void coord_job_fail(struct coord *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->job.failed) {
		c->job.failed = true;
		va_start(ap, fmt);
		vsnprintf(c->job.why, sizeof(c->job.why), fmt, ap);
		va_end(ap);
		snprintf(c->failure, sizeof(c->failure), "%s", c->job.why);
		fwd_warn("the job failed: %s", c->job.why);
	}
	coord_wake_all(c);
}

/* Maps a region a service described (its REGION_MAP body) into this process. */
static int map_service_region(const uint8_t *raw, size_t n, struct wse_link_region *r,
			      struct wse_link_region_map_info *info, char *text, size_t len)
{
	struct wse_link_err err;

	if (wse_link_region_map_decode(raw, n, info, &err)) {
		snprintf(text, len, "a service described its region badly: %s", err.text);
		return -EPROTO;
	}
	return wse_link_region_map(r, info, text, len);
}

/* REGION_MAP of @info under id @id on link @h; 0, or the status (E_UNSUPPORTED: not here). */
uint32_t coord_map_on(struct hostlink *h, const struct wse_link_region_map_info *info, uint32_t id,
		      char *text, size_t len)
{
	struct wse_link_region_map_info m = *info;
	struct wse_link_region_map raw;
	struct iovec iov = { &raw, sizeof(raw) };
	uint32_t tag, status = WSE_LINK_E_INTERNAL;

	m.region = id;
	wse_link_region_map_encode(&raw, &m);
	if (hostlink_submit(h, WSE_LINK_OP_REGION_MAP, Q_CTL, &iov, 1, NULL, 0, &tag) ||
	    hostlink_wait(h, tag, COORD_PART_MS, &status, NULL, text, len))
		return WSE_LINK_E_INTERNAL;
	return status;
}

/*
 * The job's program on MemoryX: its weights region, mapped here too (into
 * @region). MemoryX replaces what it held only if it takes the program.
 */
static uint32_t open_memoryx(struct coord *c, const void *image, size_t len,
			     struct wse_link_region *region, struct wse_link_region_map_info *map,
			     char *text, size_t textlen)
{
	uint8_t reply[sizeof(struct wse_link_region_map)];
	size_t piece = (4U << 20) - 64, n = 0;
	int ret = 0;

	for (size_t off = 0; off < len && !ret; off += piece) {
		struct wse_link_prog_load_info in = {
			.program = 1, .total = len, .offset = off,
			.flags = off + piece >= len ? WSE_LINK_PROG_LAST : 0,
		};
		struct wse_link_program_load raw;
		struct iovec iov[2] = { { &raw, sizeof(raw) },
					{ (uint8_t *)image + off, len - off < piece ? len - off : piece } };

		wse_link_prog_load_encode(&raw, &in);
		ret = coord_service_call(c, &c->mx, WSE_LINK_OP_PROGRAM_LOAD, iov, 2, reply,
					 sizeof(reply), &n, text, textlen);
	}
	if (ret)
		return ret == -EIO && strstr(text, "E_NOSPC") ? WSE_LINK_E_NOSPC :
		       ret == -EIO ? WSE_LINK_E_INVAL : WSE_LINK_E_INTERNAL;
	if (map_service_region(reply, n, region, map, text, textlen))
		return WSE_LINK_E_INTERNAL;
	return WSE_LINK_OK;
}

/* Slots for the systems' gradients in SwarmX, mapped here and in MemoryX. */
static uint32_t open_swarmx(struct coord *c, char *text, size_t len)
{
	struct coord_job *j = &c->job;
	struct svc_sx_open o = { .systems = j->n, .floats = j->floats };
	struct iovec iov = { &o, sizeof(o) };
	uint8_t reply[sizeof(struct wse_link_region_map)];
	struct wse_link_region_map_info m;
	struct wse_link_region_map raw;
	size_t n = 0;

	if (coord_service_call(c, &c->sx, SVC_OP_SX_OPEN, &iov, 1, reply, sizeof(reply), &n, text,
			       len) ||
	    map_service_region(reply, n, &j->sx_region, &j->sx_map, text, len))
		return WSE_LINK_E_INTERNAL;
	m = j->sx_map;
	m.region = 1;
	wse_link_region_map_encode(&raw, &m);
	iov = (struct iovec){ &raw, sizeof(raw) };
	if (coord_service_call(c, &c->mx, WSE_LINK_OP_REGION_MAP, &iov, 1, NULL, 0, NULL, text, len))
		return WSE_LINK_E_INTERNAL;
	return WSE_LINK_OK;
}

/* Our input region (samples, then labels) and the output rings. */
static uint32_t open_rings(struct coord *c, char *text, size_t len)
{
	struct coord_job *j = &c->job;
	uint64_t b = j->prog->batch, samples = COORD_RING_BATCHES * b * j->record;
	uint64_t labels = COORD_RING_BATCHES * b * j->rows * 4;
	uint64_t losses = COORD_RING_BATCHES * b * 4, logits = COORD_RING_BATCHES * b * j->logit_bytes;

	if (wse_link_region_create(&j->in_region, "in", samples + labels, text, len))
		return WSE_LINK_E_NOSPC;
	wse_link_region_describe(&j->in_region, REGION_IN, &j->in_map);
	j->samples = (struct coord_ring){ .buf = j->in_region.base + WSE_LINK_REGION_HEADER,
					  .at = WSE_LINK_REGION_HEADER, .cap = samples };
	j->labels = (struct coord_ring){ .buf = j->samples.buf + samples,
					 .at = WSE_LINK_REGION_HEADER + samples, .cap = labels };
	j->losses = (struct coord_ring){ .buf = malloc(losses), .cap = losses };
	j->preds = (struct coord_ring){ .buf = malloc(labels), .cap = labels };
	j->logits = (struct coord_ring){ .buf = logits ? malloc(logits) : NULL, .cap = logits };
	if (!j->losses.buf || !j->preds.buf || (logits && !j->logits.buf)) {
		snprintf(text, len, "the coordinator is out of memory for the output rings");
		return WSE_LINK_E_NOSPC;
	}
	return WSE_LINK_OK;
}

/* Loads the program on the job's systems and maps the regions there (if they can). */
static uint32_t open_systems(struct coord *c, uint32_t slot, const void *image, size_t len,
			     struct wse_link_prog_info *info, char *text, size_t textlen)
{
	struct coord_job *j = &c->job;

	for (unsigned int m = 0; m < j->n; m++) {
		struct coord_part *s = &c->sys[j->sys[m]];
		struct wse_link_prog_info one;
		uint32_t status = 0;
		char why[256];

		if (coord_load_image(c, j->sys[m], slot, image, len, &one, &status, text, textlen))
			return WSE_LINK_E_INTERNAL;
		if (status)
			return status;
		if (!m)
			*info = one;
		snprintf(why, sizeof(why), "--no-regions");
		s->maps_regions = !c->o.no_regions &&
				  coord_map_on(&s->link, &j->mx_map, REGION_MX, why, sizeof(why)) == 0 &&
				  coord_map_on(&s->link, &j->sx_map, REGION_SX, why, sizeof(why)) == 0 &&
				  coord_map_on(&s->link, &j->in_map, REGION_IN, why, sizeof(why)) == 0;
		if (!s->maps_regions)
			fwd_info("%s cannot map the appliance's regions (%s): its data go in frames",
				 s->name, why);
	}
	return WSE_LINK_OK;
}

/*
 * Which systems: @want of those that hold no layer-pipelined program (a
 * system runs the job or pipelined programs, never both), the first ones
 * that answer.
 */
static uint32_t pick_systems(struct coord *c, unsigned int want, char *text, size_t len)
{
	struct coord_job *j = &c->job;
	char why[256] = "";

	j->n = 0;
	for (unsigned int i = 0; i < c->nsys && j->n < want; i++) {
		if (coord_programs_on(c, i, 0))
			continue;
		if (coord_system_ready(c, i, why, sizeof(why)))
			j->sys[j->n++] = i;
	}
	if (j->n < want) {
		snprintf(text, len, "the job needs %u systems; %u of the appliance's %u that are free answer (%s)",
			 want, j->n, c->nsys, why);
		return WSE_LINK_E_INVAL;
	}
	return WSE_LINK_OK;
}

static int find_streams(struct coord_job *j, char *text, size_t len)
{
	const struct wsep_program *p = j->prog;
	struct wsep_train_streams ts;

	if (wsep_train_streams(p, &ts, text, len))
		return -EINVAL;
	j->samples_id = p->streams[ts.samples].id;
	j->labels_id = p->streams[ts.labels].id;
	j->losses_id = p->streams[ts.losses].id;
	j->preds_id = p->streams[ts.predictions].id;
	j->logits_id = ts.logits >= 0 ? (int64_t)p->streams[ts.logits].id : -1;
	j->rows = wsep_label_rows(p);
	j->logit_bytes = ts.logits >= 0 ? j->rows * wsep_classes(p) * 4 : 0;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		j->weights_id[k] = p->streams[ts.weights[k]].id;
		j->grads_id[k] = p->streams[ts.grads[k]].id;
	}
	return 0;
}

int coord_job_open(struct coord *c, uint32_t slot, struct wsep_program *prog, unsigned int systems,
		   const void *image, size_t len, struct wse_link_prog_info *info, char *text,
		   size_t textlen)
{
	struct coord_job *j = &c->job;
	struct wse_link_region_map_info mx_map;
	struct wse_link_region mx_region;
	uint32_t st;

	/* MemoryX first: a program it refuses leaves the job it holds as it was. */
	st = open_memoryx(c, image, len, &mx_region, &mx_map, text, textlen);
	if (st) {
		wsep_program_free(prog);
		return st;
	}
	coord_job_close(c);
	j->mx_region = mx_region;
	j->mx_map = mx_map;
	j->prog = prog;
	j->slot = slot;
	j->record = prog->input_dim * (prog->input_type == WSEP_ELEM_U8 ? 1 : 4);
	j->floats = wsep_total_params(prog->layers, prog->num_layers);
	if (find_streams(j, text, textlen)) {
		st = WSE_LINK_E_INVAL;
		goto fail;
	}
	for (uint32_t k = 0; k < prog->num_layers; k++) {
		if (fwd_wire16_layout(prog, k, &j->wire[k])) {
			snprintf(text, textlen, "the coordinator is out of memory");
			st = WSE_LINK_E_NOSPC;
			goto fail;
		}
	}
	st = pick_systems(c, systems, text, textlen);
	if (!st)
		st = open_swarmx(c, text, textlen);
	if (!st)
		st = open_rings(c, text, textlen);
	if (!st)
		st = open_systems(c, slot, image, len, info, text, textlen);
	if (st)
		goto fail;
	pthread_mutex_lock(&c->lock);
	j->active = true;
	j->failed = false;
	j->why[0] = 0;
	j->step = 0;
	memset(j->updated, 0, sizeof(j->updated));
	j->loss_scaling = prog->precision == WSEP_PRECISION_FP16;
	engine_loss_scaler_init(&j->scaler);
	pthread_mutex_unlock(&c->lock);
	fwd_info("job %s: weight streaming on %u system%s, %llu parameters in MemoryX",
		 prog->model_name, j->n, j->n == 1 ? "" : "s", (unsigned long long)j->floats);
	return WSE_LINK_OK;
fail:
	coord_job_close(c);
	return st;
}

void coord_job_close(struct coord *c)
{
	struct coord_job *j = &c->job;

	/* A RUN that failed is still stopping its systems: let it finish. */
	pthread_mutex_lock(&c->lock);
	while (j->run)
		pthread_cond_wait(&c->changed, &c->lock);
	pthread_mutex_unlock(&c->lock);

	for (unsigned int m = 0; j->active && m < j->n; m++) {
		struct coord_part *s = &c->sys[j->sys[m]];
		struct wse_link_program_ref ref;
		struct iovec iov = { &ref, sizeof(ref) };
		char text[256];

		if (!s->opened || !hostlink_up(&s->link, NULL, 0))
			continue;
		wse_link_prog_ref_encode(&ref, j->slot);
		hostlink_call(&s->link, WSE_LINK_OP_PROGRAM_UNLOAD, coord_own_queue(s), &iov, 1, NULL,
			      0, NULL, COORD_PART_MS, text, sizeof(text));
	}
	wse_link_region_destroy(&j->mx_region);
	wse_link_region_destroy(&j->sx_region);
	wse_link_region_destroy(&j->in_region);
	free(j->losses.buf);
	free(j->preds.buf);
	free(j->logits.buf);
	for (uint32_t k = 0; k < WSEP_MAX_LAYERS; k++)
		fwd_wire16_free(&j->wire[k]);
	wsep_program_free(j->prog);
	pthread_mutex_lock(&c->lock);
	memset(j, 0, sizeof(*j));
	pthread_mutex_unlock(&c->lock);
}

void coord_job_sync_step(struct coord *c)
{
	struct coord_job *j = &c->job;
	struct engine_optim opt;
	struct wse_link_params_info in = { .program = 1, .which = WSE_LINK_PARAMS_OPT_STATE,
					   .length = 8 };
	struct wse_link_params raw;
	struct iovec iov = { &raw, sizeof(raw) };
	uint64_t step = 0;
	char text[256];
	size_t n = 0;

	if (engine_optim_from_wsep(&j->prog->opt, &opt))
		return;
	in.offset = engine_optim_state_arrays(opt.kind) * j->floats * 4;
	wse_link_params_encode(&raw, &in);
	if (coord_service_call(c, &c->mx, WSE_LINK_OP_PARAMS_READ, &iov, 1, &step, sizeof(step), &n,
			       text, sizeof(text)) || n != 8)
		return;
	pthread_mutex_lock(&c->lock);
	j->step = le64toh(step);
	for (uint32_t k = 0; k < j->prog->num_layers; k++)
		j->updated[k] = j->step;
	pthread_mutex_unlock(&c->lock);
}

/* The user node's samples and labels, into the input rings (waiting for room). */
void coord_job_write(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		     const struct wse_link_stream_info *in)
{
	struct coord_job *j = &c->job;
	struct coord_ring *ring;
	uint32_t unit;

	if (in->stream == j->samples_id) {
		ring = &j->samples;
		unit = j->record;
	} else if (in->stream == j->labels_id) {
		ring = &j->labels;
		unit = j->rows * 4;
	} else {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "program %u is the appliance's weight-streaming job: the host writes only its samples (stream %u) and labels (stream %u); its weights live in MemoryX",
				 in->program, j->samples_id, j->labels_id);
		return;
	}
	if (in->length % unit || in->length > ring->cap) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "a write of %u bytes on stream %u is not whole %u-byte records within %llu",
				 in->length, in->stream, unit, (unsigned long long)ring->cap);
		return;
	}
	pthread_mutex_lock(&c->lock);
	while (!j->failed && !j->from_dataset && coord_ring_room(ring) < in->length &&
	       coord_wait_on(c, &c->input_cond, 500))
		;
	if (j->failed || j->from_dataset || c->stopping) {
		bool dataset = j->from_dataset;
		char why[256];

		snprintf(why, sizeof(why), "%s", j->why);
		pthread_mutex_unlock(&c->lock);
		if (dataset)
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
					 "the job takes its samples from the appliance's input workers (WSE_LINK_PARAMS_INPUT): the host writes none");
		else if (!c->stopping)
			coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "the job failed: %s", why);
		return;
	}
	if (coord_ring_room(ring) < in->length) {
		/* Only a CANCEL ends the wait so: nothing of the write went in. */
		pthread_mutex_unlock(&c->lock);
		coord_reply_text(conn, &r->f, WSE_LINK_E_CANCELED,
				 "cancelled by the host while it waited for room in the job's input");
		return;
	}
	coord_ring_put(ring, r->payload + sizeof(struct wse_link_stream), in->length);
	pthread_cond_broadcast(&c->input_cond);
	pthread_mutex_unlock(&c->lock);
	coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
}

/* Losses and predictions, as soon as there are some. */
void coord_job_read(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		    const struct wse_link_stream_info *in)
{
	struct coord_job *j = &c->job;
	struct coord_ring *ring = in->stream == j->losses_id ? &j->losses :
				  in->stream == j->preds_id ? &j->preds :
				  (int64_t)in->stream == j->logits_id ? &j->logits : NULL;
	uint32_t unit = ring == &j->losses ? 4 : ring == &j->preds ? j->rows * 4 : j->logit_bytes;
	uint8_t *buf = NULL;
	bool cancelled = false;
	struct iovec iov;
	uint64_t n;

	if (!ring) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "program %u is the appliance's weight-streaming job: the host reads only its losses (stream %u), predictions (stream %u) and logits",
				 in->program, j->losses_id, j->preds_id);
		return;
	}
	if (!in->length || in->length % unit || in->length > WSE_LINK_PAYLOAD_LIMIT - 64) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "a read of %u bytes on stream %u is not whole %u-byte records", in->length,
				 in->stream, unit);
		return;
	}
	pthread_mutex_lock(&c->lock);
	while (!j->failed && ring->len < unit && coord_wait_on(c, &c->output_cond, 500))
		;
	if (ring->len >= unit) {
		n = ring->len < in->length ? ring->len : in->length;
		buf = malloc(n);
		if (buf) {
			coord_ring_get(ring, buf, n);
			pthread_cond_broadcast(&c->output_cond);
		}
	} else {
		cancelled = !j->failed && coord_cancelled(c);
	}
	pthread_mutex_unlock(&c->lock);
	if (!buf && cancelled) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_CANCELED,
				 "cancelled by the host while it waited for the job's output");
		return;
	}
	if (!buf) {
		if (!c->stopping)
			coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "the job failed: %s", j->why);
		return;
	}
	iov = (struct iovec){ buf, n };
	coord_reply(conn, &r->f, WSE_LINK_OK, &iov, 1);
	free(buf);
}

void coord_job_input(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		     const struct wse_link_input_info *in)
{
	struct coord_job *j = &c->job;
	struct svc_in_open o = { .input_dim = j->record };
	struct wse_link_region_map raw;
	struct wse_link_region_map_info m;
	struct iovec iov;
	uint32_t count = 0;
	char text[512];
	size_t n = 0;

	if (!j->active) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "load a weight-streaming program before naming its input");
		return;
	}
	if (in->source == WSE_LINK_INPUT_STREAM) {
		j->from_dataset = false;
		coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
		return;
	}
	/* The workers' region and order are the program's they feed: not taken from it. */
	if (c->feed.active) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "the input workers feed the program in slot %u; they feed one program at a time (until its input is the host's again, or it is unloaded)",
				 c->feed.slot);
		return;
	}
	if (j->samples.len || j->labels.len) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "the host's samples are still queued: name the input between RUNs");
		return;
	}
	if (j->rows != 1 || j->prog->input_type != WSEP_ELEM_U8) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "the input workers read IDX images with a label each; %s takes %u labels per sample of %s inputs: the host sends them",
				 j->prog->model_name, j->rows,
				 j->prog->input_type == WSEP_ELEM_U8 ? "byte" : "other");
		return;
	}
	o.rank = wsep_input_shape(j->prog, o.shape, SVC_INPUT_MAX_RANK);
	m = j->in_map;
	m.region = 1;
	wse_link_region_map_encode(&raw, &m);
	iov = (struct iovec){ &raw, sizeof(raw) };
	wse_link_input_encode(&o.in, in);
	o.classes = wsep_classes(j->prog);
	if (coord_service_call(c, &c->in, WSE_LINK_OP_REGION_MAP, &iov, 1, NULL, 0, NULL, text,
			       sizeof(text)))
		goto fail;
	iov = (struct iovec){ &o, sizeof(o) };
	if (coord_service_call(c, &c->in, SVC_OP_IN_OPEN, &iov, 1, &count, sizeof(count), &n, text,
			       sizeof(text)))
		goto fail;
	pthread_mutex_lock(&c->lock);
	j->from_dataset = true;
	j->dataset_left = count - in->first;
	pthread_mutex_unlock(&c->lock);
	coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
	return;
fail:
	coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "%s", text);
}
