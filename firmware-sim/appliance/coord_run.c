// SPDX-License-Identifier: GPL-2.0-only
/*
 * A RUN of the weight-streaming job. Each batch is cut into leaves (at
 * least --leaves micro-batches of equal size, none larger than the
 * program's micro-batch) and each system takes
 * an aligned run of them, its shard, averaging its loss over the whole
 * batch; so its gradient is a subtree of the batch's, and SwarmX's sum of
 * the systems' gradients in the same tree is the batch's, bit for bit,
 * on 1, 2, 4 or 8 systems (firmware-sim/fwd_pipeline.c).
 *
 * A driver thread per system carries its steps: its shard of the samples
 * and labels, every layer's weights from MemoryX once MemoryX has updated
 * them (the system keeps them for the backward pass), its
 * gradients into its SwarmX slot, its losses and predictions into the
 * step's stage. When every system's gradient of a layer is in, the last
 * driver there asks SwarmX to sum them and MemoryX to update the layer;
 * when every system's results are in, the last one puts them on the
 * output rings in sample order. On a system on this machine the data move
 * through the regions (the device copies them itself); on another, in
 * frames from and into the same places.
 *
 * fp16 (loss scaling, GradScaler's rules): a step may be applied only
 * whole, so a layer's sum is not applied but held: MemoryX divides it by
 * the step's scale in place in SwarmX's slot, where it stays, and says
 * whether it is finite (SVC_OP_MX_HOLD, in place of the update: still two
 * requests a layer). Once every layer of the step is held, the driver
 * that held the last one moves the job's one scaler on and asks MemoryX
 * to apply them all, or none if one was not finite (SVC_OP_MX_COMMIT, one
 * request a step). Each system runs each step as a RUN of its own,
 * carrying the step's scale (WSE_LINK_RUN_SCALED), sent once the step
 * before is committed: so every system scales by the same number.
 *
 * The first failure (a system, MemoryX or SwarmX that went, a refusal)
 * fails the job with a message naming the part; every driver stops, the
 * systems' links are dropped (which ends their RUNs and unloads the
 * program), and the job must be loaded again. A CANCEL of the RUN by the
 * host stops it the same way (a step may be half applied in MemoryX), and
 * the RUN is answered E_CANCELED, unless its steps were all done already.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fwd_log.h"
#include "coord.h"
#include "svc_proto.h"

#define SLICE_MS	250	/* waits on a system are cut up to watch for a failure */
#define REGION_MX	1
#define REGION_SX	2
#define REGION_IN	3
#define RING_STEPS	4	/* steps whose input may be in flight at once */
#define MAX_WRITES	(2 * WSEP_MAX_LAYERS)	/* in flight: a step's weights, on this machine */
#define INPUT_WRITES	8		/* in flight: a step's samples and labels */

struct coord_run;

struct driver {
	struct coord_run *run;
	unsigned int sys;		/* its index among the appliance's systems */
	unsigned int slot;		/* its SwarmX slot: its place in the job */
	uint32_t first, count;		/* its shard of each batch */
	pthread_t thread;
	bool started;
	uint8_t result[sizeof(struct wse_link_run_result)];
	struct wse_link_run_result_info res;
	uint32_t input_tags[RING_STEPS][INPUT_WRITES];	/* a step's input writes, by step % RING_STEPS */
	int ninput[RING_STEPS];
	pthread_t feeder;		/* writes the inputs ahead (feeder_main) */
	uint32_t writes[2][MAX_WRITES];	/* weight writes, by step % 2 */
	int nwrites[2];
	bool done;			/* its system answered the RUN: every step done */
	/*
	 * Under c->lock: the RUN sent to its system and not yet waited for.
	 * A system that refuses it sends nothing else the threads wait for.
	 */
	bool run_open;
	uint32_t run_tag;
};

struct coord_run {
	struct coord *c;
	uint32_t kind, steps, batch, leaf;
	const bool *cancel;		/* the host cancelled the RUN (under c->lock) */
	unsigned int n;
	struct driver d[COORD_SYSTEMS_MAX];
	uint64_t base;			/* the job's step at the start */
	uint32_t L;
	/* Under c->lock: */
	uint32_t freed;			/* steps whose input left the rings */
	uint32_t in_done[RING_STEPS];	/* drivers whose input writes of a step are done */
	uint32_t arrived[WSEP_MAX_LAYERS];
	/* fp16: steps (s + 1) whose layer k is held; layers held this step; one was not finite. */
	uint32_t held_step[WSEP_MAX_LAYERS];
	uint32_t held;
	bool found_inf;
	uint32_t outputs;		/* drivers whose results of the current step are staged */
	uint32_t committed;		/* steps whose results went to the output rings */
	uint32_t filled;		/* steps the input workers filled */
	float *loss_stage;
	int32_t *pred_stage;		/* rows per sample */
	uint8_t *logit_stage;		/* PREDICT of a program with logits; else NULL */
};

/* Lock held: does every thread of the RUN stop (a failure, the link going, a CANCEL)? */
static bool stopped(struct coord *c)
{
	return c->job.failed || c->stopping || (c->job.run && *c->job.run->cancel);
}

/*
 * Waits for @tag's answer on the driver's system: 0 with its length, or
 * -1 once the job failed (this failure recorded, naming the system).
 */
static int await(struct driver *d, uint32_t tag, uint8_t op, size_t *len)
{
	struct coord *c = d->run->c;
	struct coord_part *s = &c->sys[d->sys];
	char text[HOSTLINK_TEXT + 64];
	uint32_t status;
	int ret;

	for (;;) {
		bool stop, open;
		uint32_t run_tag;

		ret = hostlink_wait(&s->link, tag, SLICE_MS, &status, len, text, sizeof(text));
		if (ret != -ETIMEDOUT)
			break;
		pthread_mutex_lock(&c->lock);
		stop = stopped(c);
		open = d->run_open && d->run_tag != tag;
		run_tag = d->run_tag;
		pthread_mutex_unlock(&c->lock);
		/* The system refused the RUN: what this waits for will not come. */
		if (!stop && open &&
		    hostlink_refused(&s->link, run_tag, &status, text, sizeof(text))) {
			pthread_mutex_lock(&c->lock);
			coord_job_fail(c, "%s refused %s (%s): %s", s->name,
				       wse_link_op_name(WSE_LINK_OP_RUN),
				       wse_link_status_name(status), text);
			pthread_mutex_unlock(&c->lock);
			stop = true;
		}
		if (stop) {
			hostlink_forget(&s->link, tag);
			return -1;
		}
	}
	pthread_mutex_lock(&c->lock);
	if (ret)
		coord_job_fail(c, "%s", text);
	else if (status)
		coord_job_fail(c, "%s refused %s (%s): %s", s->name, wse_link_op_name(op),
			       wse_link_status_name(status), text);
	pthread_mutex_unlock(&c->lock);
	return ret || status ? -1 : 0;
}

static int submit(struct driver *d, uint8_t op, uint16_t q, const struct iovec *iov, int iovcnt,
		  void *out, size_t cap, uint32_t *tag)
{
	struct coord *c = d->run->c;
	struct coord_part *s = &c->sys[d->sys];
	char why[HOSTLINK_TEXT];

	if (!hostlink_submit(&s->link, op, q, iov, iovcnt, out, cap, tag))
		return 0;
	hostlink_up(&s->link, why, sizeof(why));
	pthread_mutex_lock(&c->lock);
	coord_job_fail(c, "%s went away: %s", s->name, why);
	pthread_mutex_unlock(&c->lock);
	return -1;
}

/* Room for one more tag in @tags (@cap of them): when they are full the oldest are waited for. */
static int tag_room(struct driver *d, uint32_t *tags, int *ntags, int cap)
{
	size_t rlen;

	if (*ntags < cap)
		return 0;
	for (int i = 0; i < cap; i++)
		if (await(d, tags[i], WSE_LINK_OP_STREAM_WRITE, &rlen))
			return -1;
	*ntags = 0;
	return 0;
}

/*
 * A stream write of @len bytes: from @region at @off if the system maps
 * the appliance's regions, else in frames from @inline_data. Its tags go
 * to @tags (room for @cap; when they are full the oldest are waited for).
 */
static int write_stream(struct driver *d, uint32_t stream, uint16_t q, uint32_t region,
			uint64_t off, const uint8_t *inline_data, uint64_t len, uint32_t *tags,
			int *ntags, int cap)
{
	struct coord *c = d->run->c;
	struct coord_part *s = &c->sys[d->sys];
	uint64_t piece = s->maps_regions ? len : s->link.rules.max_payload - 64;

	for (uint64_t at = 0; at < len; at += piece) {
		uint32_t n = (uint32_t)(len - at < piece ? len - at : piece);
		struct wse_link_stream_info in = { c->job.slot, stream, n, 0 };
		struct wse_link_region_ref_info ref = { region, off + at };
		struct {
			struct wse_link_stream s;
			struct wse_link_region_ref r;
		} raw;
		struct iovec iov[2] = { { &raw, sizeof(raw) } };

		if (tag_room(d, tags, ntags, cap))
			return -1;
		wse_link_stream_encode(&raw.s, &in);
		if (s->maps_regions) {
			wse_link_region_ref_encode(&raw.r, &ref);
			if (submit(d, WSE_LINK_OP_STREAM_WRITE_REGION, q, iov, 1, NULL, 0,
				   &tags[(*ntags)++]))
				return -1;
		} else {
			iov[0].iov_len = sizeof(raw.s);
			iov[1] = (struct iovec){ (void *)(inline_data + at), n };
			if (submit(d, WSE_LINK_OP_STREAM_WRITE, q, iov, 2, NULL, 0, &tags[(*ntags)++]))
				return -1;
		}
	}
	return 0;
}

/* A stream read in flight: its request, and where the data go. */
struct pending_read {
	uint32_t tag;
	uint32_t stream, region;
	uint64_t off;			/* in the region */
	uint8_t *dst;			/* the same place, as this process sees it */
	uint64_t len, got;
	bool by_region;
	struct wse_link_region_done done;
};

/*
 * Asks for the rest of a read: @r->len bytes into @r->dst (@r->region at
 * @r->off if the system maps it; region 0: always in frames).
 */
static int read_submit(struct driver *d, struct pending_read *r)
{
	struct coord *c = d->run->c;
	struct coord_part *s = &c->sys[d->sys];
	uint64_t max = s->link.rules.max_payload - 64, left = r->len - r->got;
	uint32_t want = (uint32_t)(left < max || r->by_region ? left : max);
	struct wse_link_stream_info in = { c->job.slot, r->stream, want, 0 };
	struct wse_link_region_ref_info ref = { r->region, r->off + r->got };
	struct {
		struct wse_link_stream s;
		struct wse_link_region_ref r;
	} raw;
	struct iovec iov = { &raw, sizeof(raw) };

	wse_link_stream_encode(&raw.s, &in);
	if (r->by_region) {
		wse_link_region_ref_encode(&raw.r, &ref);
		return submit(d, WSE_LINK_OP_STREAM_READ_REGION, Q_OUT, &iov, 1, &r->done,
			      sizeof(r->done), &r->tag);
	}
	iov.iov_len = sizeof(raw.s);
	return submit(d, WSE_LINK_OP_STREAM_READ, Q_OUT, &iov, 1, r->dst + r->got, want, &r->tag);
}

static int read_start(struct driver *d, struct pending_read *r, uint32_t stream, uint32_t region,
		      uint64_t off, uint8_t *dst, uint64_t len)
{
	*r = (struct pending_read){ .stream = stream, .region = region, .off = off, .dst = dst,
				    .len = len, .by_region = region && d->run->c->sys[d->sys].maps_regions };
	return read_submit(d, r);
}

/* Waits for a read, asking again for what a short answer lacked. */
static int read_finish(struct driver *d, struct pending_read *r)
{
	struct coord *c = d->run->c;
	struct wse_link_err err;

	for (;;) {
		size_t rlen = 0;
		uint32_t n;

		if (await(d, r->tag, r->by_region ? WSE_LINK_OP_STREAM_READ_REGION :
						     WSE_LINK_OP_STREAM_READ, &rlen))
			return -1;
		n = (uint32_t)rlen;
		if (r->by_region && (wse_link_region_done_decode(&r->done, rlen, &n, &err) || !n)) {
			pthread_mutex_lock(&c->lock);
			coord_job_fail(c, "%s answered a region read badly", c->sys[d->sys].name);
			pthread_mutex_unlock(&c->lock);
			return -1;
		}
		r->got += n;
		if (r->got >= r->len)
			return 0;
		if (read_submit(d, r))
			return -1;
	}
}

/* Lock held: is step @s's batch in the input rings? */
static bool input_ready(struct coord_run *run, uint32_t s)
{
	struct coord_job *j = &run->c->job;
	uint64_t need = (uint64_t)(s - run->freed + 1) * run->batch;

	/* PREDICT takes no labels. */
	return j->samples.len >= need * j->record &&
	       (run->kind == WSE_LINK_RUN_PREDICT || j->labels.len >= need * j->rows * 4);
}

/* Writes the driver's shard of step @s's batch (which must be in the rings). */
static int write_input(struct driver *d, uint32_t s)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	uint64_t at, off[2], len[2], loff[2], llen[2];
	int slot = s % RING_STEPS, n, nl;

	/*
	 * Where the shard lies, found under the lock: the ring's head moves
	 * when another system is done with an earlier step, but these bytes
	 * stay until this system is done with them.
	 */
	pthread_mutex_lock(&c->lock);
	at = (uint64_t)(s - run->freed) * run->batch + d->first;
	n = coord_ring_pieces(&j->samples, at * j->record, (uint64_t)d->count * j->record, off, len);
	nl = coord_ring_pieces(&j->labels, at * j->rows * 4, (uint64_t)d->count * j->rows * 4,
			       loff, llen);
	pthread_mutex_unlock(&c->lock);
	d->ninput[slot] = 0;
	for (int i = 0; i < n; i++)
		if (write_stream(d, j->samples_id, Q_IN, REGION_IN, j->samples.at + off[i],
				 j->samples.buf + off[i], len[i], d->input_tags[slot], &d->ninput[slot],
				 INPUT_WRITES))
			return -1;
	if (run->kind == WSE_LINK_RUN_PREDICT)
		return 0;
	n = nl;
	memcpy(off, loff, sizeof(off));
	memcpy(len, llen, sizeof(len));
	for (int i = 0; i < n; i++)
		if (write_stream(d, j->labels_id, Q_IN, REGION_IN, j->labels.at + off[i],
				 j->labels.buf + off[i], len[i], d->input_tags[slot], &d->ninput[slot],
				 INPUT_WRITES))
			return -1;
	return 0;
}

/* The input writes of step @s are done; the steps all systems are done with leave the rings. */
static int input_done(struct driver *d, uint32_t s)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	int slot = s % RING_STEPS;
	size_t len;

	for (int i = 0; i < d->ninput[slot]; i++)
		if (await(d, d->input_tags[slot][i], WSE_LINK_OP_STREAM_WRITE, &len))
			return -1;
	pthread_mutex_lock(&c->lock);
	run->in_done[slot]++;
	while (run->in_done[run->freed % RING_STEPS] == run->n) {
		run->in_done[run->freed % RING_STEPS] = 0;
		j->samples.head = (j->samples.head + (uint64_t)run->batch * j->record) % j->samples.cap;
		j->samples.len -= (uint64_t)run->batch * j->record;
		if (run->kind != WSE_LINK_RUN_PREDICT) {
			j->labels.head = (j->labels.head + (uint64_t)run->batch * j->rows * 4) %
					 j->labels.cap;
			j->labels.len -= (uint64_t)run->batch * j->rows * 4;
		}
		run->freed++;
		pthread_cond_broadcast(&c->input_cond);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * The system's inputs, on a thread of their own: each step's shard as
 * soon as it is in the rings, as far ahead as the system's own rings take
 * (a write it has no room for waits there), so that a step never waits
 * for its batch while the last step's results are being collected.
 */
static void *feeder_main(void *arg)
{
	struct driver *d = arg;
	struct coord_run *run = d->run;
	struct coord *c = run->c;

	for (uint32_t s = 0; s < run->steps; s++) {
		bool ready;

		pthread_mutex_lock(&c->lock);
		while (!(ready = input_ready(run, s)) && !stopped(c) &&
		       coord_wait_on(c, &c->input_cond, 500))
			;
		ready = ready && !stopped(c);
		pthread_mutex_unlock(&c->lock);
		if (!ready || write_input(d, s) || input_done(d, s))
			break;
	}
	return NULL;
}

/*
 * Does layer @k go to the driver's system as 16-bit weights: in frames
 * (a system that maps MemoryX's region reads the f32 masters in place),
 * to a system that offers it, of a program with floats to narrow?
 */
static bool wire16(const struct driver *d, uint32_t k)
{
	const struct coord *c = d->run->c;
	const struct coord_part *s = &c->sys[d->sys];

	return !s->maps_regions && (s->link.dev.caps & WSE_LINK_CAP_WIRE16) &&
	       c->job.wire[k].nruns;
}

/*
 * Layer @k's weights @w to the system in frames, the floats the program
 * only multiplies as 16-bit values (fwd_wire16.h), packed piece by piece
 * from MemoryX's f32 masters: each piece ends on a whole value.
 */
static int write_weights16(struct driver *d, uint32_t k, const float *w, uint32_t *tags,
			   int *ntags, int cap)
{
	struct coord *c = d->run->c;
	const struct fwd_wire16 *layout = &c->job.wire[k];
	uint64_t per = (c->sys[d->sys].link.rules.max_payload - 64) / 4;
	uint8_t *buf = malloc((per < layout->elems ? per : layout->elems) * 4);
	int ret = buf ? 0 : -1;

	if (!buf) {
		pthread_mutex_lock(&c->lock);
		coord_job_fail(c, "the coordinator is out of memory for layer %u's 16-bit weights", k);
		pthread_mutex_unlock(&c->lock);
	}
	for (uint64_t e = 0; !ret && e < layout->elems; e += per) {
		uint64_t end = layout->elems - e < per ? layout->elems : e + per;
		uint32_t n = (uint32_t)fwd_wire16_pack(layout, e, end, w, buf);
		struct wse_link_stream_info in = { c->job.slot, c->job.weights_id[k], n,
						   WSE_LINK_STREAM_WIRE16 };
		struct wse_link_stream raw;
		struct iovec iov[2] = { { &raw, sizeof(raw) }, { buf, n } };

		wse_link_stream_encode(&raw, &in);
		/* The frame is sent before submit() returns: buf may be packed again. */
		ret = tag_room(d, tags, ntags, cap) ||
		      submit(d, WSE_LINK_OP_STREAM_WRITE, Q_CTL, iov, 2, NULL, 0, &tags[(*ntags)++]);
	}
	free(buf);
	return ret ? -1 : 0;
}

/*
 * Every layer's weights for step @s, in the order the system needs them,
 * once MemoryX has them: once a step, as the system keeps the forward
 * transfer for the backward pass (WSE_LINK_RUN_RETAIN).
 */
static int send_weights(struct driver *d, uint32_t s)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	int set = s % 2;
	/* Training, step s needs the updates of the steps before it; else none come. */
	uint64_t need = run->base + (run->kind == WSE_LINK_RUN_TRAIN ? s : 0);

	for (uint32_t k = 0; k < run->L; k++) {
		const struct wsep_layer *l = &j->prog->layers[k];
		uint64_t off = WSE_LINK_REGION_HEADER + l->weight_offset * 4;
		uint64_t len = wsep_layer_params(l) * 4;
		bool half = wire16(d, k), ok;

		pthread_mutex_lock(&c->lock);
		while (j->updated[k] < need && !stopped(c) && coord_wait_on(c, &c->update_cond, 500))
			;
		ok = !stopped(c);
		c->broadcast += !ok ? 0 : half ? fwd_wire16_bytes(&j->wire[k], 0, j->wire[k].elems) : len;
		pthread_mutex_unlock(&c->lock);
		if (!ok)
			return -1;
		if (half ? write_weights16(d, k, (const float *)(j->mx_region.base + off),
					   d->writes[set], &d->nwrites[set], MAX_WRITES) :
			   write_stream(d, j->weights_id[k], Q_CTL, REGION_MX, off,
					j->mx_region.base + off, len, d->writes[set], &d->nwrites[set],
					MAX_WRITES))
			return -1;
	}
	return 0;
}

/*
 * SwarmX's sum of layer @k's gradients over the systems (a single
 * system's are their own sum): *@offset is where it lies in MemoryX's
 * region.
 */
static int reduce_layer(struct coord_run *run, uint32_t k, uint64_t *offset, char *text,
			size_t len)
{
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	const struct wsep_layer *l = &j->prog->layers[k];
	struct svc_reduce red = { .n = run->n, .first = l->weight_offset,
				  .count = wsep_layer_params(l) };
	struct iovec iov = { &red, sizeof(red) };
	uint32_t sum = run->d[0].slot;
	size_t n = 0;

	for (unsigned int i = 0; i < run->n; i++)
		red.slot[i] = run->d[i].slot;
	if (run->n > 1) {
		if (coord_service_call(c, &c->sx, SVC_OP_SX_REDUCE, &iov, 1, &sum, sizeof(sum), &n,
				       text, len))
			return -1;
		if (n != sizeof(sum)) {
			snprintf(text, len, "SwarmX answered the reduce of layer %u with %zu bytes, not %zu",
				 k, n, sizeof(sum));
			return -1;
		}
		pthread_mutex_lock(&c->lock);
		c->reduced += run->n * red.count * 4;
		pthread_mutex_unlock(&c->lock);
	}
	*offset = WSE_LINK_REGION_HEADER + ((uint64_t)sum * j->floats + l->weight_offset) * 4;
	return 0;
}

/* SwarmX's sum of layer @k's gradients of step @s, and MemoryX's update of it. */
static int reduce_and_update(struct coord_run *run, uint32_t k, uint32_t s, char *text,
			     size_t len)
{
	struct svc_update up = { .layer = k, .region = 1, .t = run->base + s + 1 };
	struct iovec iov = { &up, sizeof(up) };

	if (reduce_layer(run, k, &up.offset, text, len))
		return -1;
	return coord_service_call(run->c, &run->c->mx, SVC_OP_MX_UPDATE, &iov, 1, NULL, 0, NULL,
				  text, len);
}

/*
 * fp16: SwarmX's sum of layer @k's gradients of the step, unscaled and
 * checked by MemoryX and held there for the step's commit; *@finite
 * says whether all of it is finite.
 */
static int reduce_and_hold(struct coord_run *run, uint32_t k, bool *finite, char *text,
			   size_t len)
{
	struct coord *c = run->c;
	struct svc_hold h = { .layer = k, .region = 1 };
	struct iovec iov = { &h, sizeof(h) };
	uint32_t ok = 0;
	size_t n = 0;

	if (reduce_layer(run, k, &h.offset, text, len))
		return -1;
	pthread_mutex_lock(&c->lock);
	h.scale = c->job.scaler.scale;	/* the step's: it moves only at the commit */
	pthread_mutex_unlock(&c->lock);
	if (coord_service_call(c, &c->mx, SVC_OP_MX_HOLD, &iov, 1, &ok, sizeof(ok), &n, text, len))
		return -1;
	if (n != sizeof(ok)) {
		snprintf(text, len, "MemoryX answered a hold of layer %u with %zu bytes, not %zu", k,
			 n, sizeof(ok));
		return -1;
	}
	*finite = ok != 0;
	return 0;
}

/*
 * fp16, every layer of step @s held: the scaler moves on (GradScaler's
 * update) and MemoryX applies the step, or skips it if a gradient was
 * inf or NaN. Then every layer counts as updated for the next step.
 */
static int commit_step(struct coord_run *run, uint32_t s, char *text, size_t len)
{
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	struct svc_commit cm = { .t = run->base + s + 1 };
	struct iovec iov = { &cm, sizeof(cm) };
	float scale;
	bool found;

	pthread_mutex_lock(&c->lock);
	found = run->found_inf;
	scale = j->scaler.scale;
	cm.apply = engine_loss_scaler_update(&j->scaler, found);
	if (found)
		fwd_info("step %llu: fp16 gradients overflowed at loss scale %g: the step is skipped on all %u systems, the scale is now %g (%llu skipped)",
			 (unsigned long long)cm.t, scale, run->n, j->scaler.scale,
			 (unsigned long long)j->scaler.skipped);
	pthread_mutex_unlock(&c->lock);
	return coord_service_call(c, &c->mx, SVC_OP_MX_COMMIT, &iov, 1, NULL, 0, NULL, text, len);
}

/* fp16: layer @k of step @s, the last system's gradient in: summed, held, the step committed when whole. */
static int layer_held(struct coord_run *run, uint32_t k, uint32_t s, char *text, size_t len)
{
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	bool finite = false, whole;

	if (reduce_and_hold(run, k, &finite, text, len))
		return -1;
	pthread_mutex_lock(&c->lock);
	run->found_inf |= !finite;
	run->held_step[k] = s + 1;
	whole = ++run->held == run->L;
	pthread_mutex_unlock(&c->lock);
	if (!whole)
		return 0;
	if (commit_step(run, s, text, len))
		return -1;
	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < run->L; i++)
		j->updated[i] = run->base + s + 1;
	run->held = 0;
	run->found_inf = false;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Lock held: is layer @k of step @s done for the drivers that wait (applied; fp16: held)? */
static bool layer_done(struct coord_run *run, uint32_t k, uint32_t s)
{
	if (run->c->job.loss_scaling)
		return run->held_step[k] >= s + 1;
	return run->c->job.updated[k] >= run->base + s + 1;
}

/* Layer @k's gradient of step @s is in this driver's slot: the last one in sums and updates. */
static int layer_in(struct driver *d, uint32_t k, uint32_t s)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	char text[512];
	bool last;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	last = ++run->arrived[k] == run->n;
	if (last)
		run->arrived[k] = 0;
	while (!last && !layer_done(run, k, s) && !stopped(c) &&
	       coord_wait_on(c, &c->update_cond, 500))
		;
	pthread_mutex_unlock(&c->lock);
	if (last && j->loss_scaling)
		ret = layer_held(run, k, s, text, sizeof(text));
	else if (last)
		ret = reduce_and_update(run, k, s, text, sizeof(text));
	pthread_mutex_lock(&c->lock);
	if (last && ret)
		coord_job_fail(c, "%s", text);
	else if (last && !j->loss_scaling)
		j->updated[k] = run->base + s + 1;
	ret = stopped(c) ? -1 : 0;
	if (last)
		pthread_cond_broadcast(&c->update_cond);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* The driver's results of step @s are staged; the last one in puts the step's on the rings. */
static int results_in(struct driver *d, uint32_t s)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	uint64_t bytes = (uint64_t)run->batch * 4, pbytes = bytes * j->rows;
	uint64_t zbytes = (uint64_t)run->batch * j->logit_bytes;
	bool losses = run->kind != WSE_LINK_RUN_PREDICT, logits = run->logit_stage != NULL;
	int ret;

	pthread_mutex_lock(&c->lock);
	if (++run->outputs == run->n) {
		while ((coord_ring_room(&j->preds) < pbytes ||
			(losses && coord_ring_room(&j->losses) < bytes) ||
			(logits && coord_ring_room(&j->logits) < zbytes)) &&
		       !stopped(c) && coord_wait_on(c, &c->output_cond, 500))
			;
		if (!stopped(c)) {
			if (losses)
				coord_ring_put(&j->losses, run->loss_stage, bytes);
			if (logits)
				coord_ring_put(&j->logits, run->logit_stage, zbytes);
			coord_ring_put(&j->preds, run->pred_stage, pbytes);
			run->outputs = 0;
			run->committed++;
		}
	}
	while (run->committed <= s && !stopped(c) && coord_wait_on(c, &c->output_cond, 500))
		;
	ret = stopped(c) ? -1 : 0;
	pthread_cond_broadcast(&c->output_cond);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/*
 * Step @s (its batch is the feeder's): the reads of its gradients and
 * results asked for at once, each layer's gradient summed
 * and applied as it comes, the next step's weights sent as soon as MemoryX
 * has them (layer 0's update is the last thing the next step waits for),
 * and only then the results.
 */
static int one_step(struct driver *d, uint32_t s)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	struct pending_read grads[WSEP_MAX_LAYERS], losses, preds, logits;
	bool train = run->kind == WSE_LINK_RUN_TRAIN;
	bool results = run->kind != WSE_LINK_RUN_PREDICT;
	int set = s % 2;
	size_t len;

	if (!s && send_weights(d, 0))
		return -1;
	for (uint32_t k = run->L; train && k-- > 0;) {
		const struct wsep_layer *l = &j->prog->layers[k];
		uint64_t off = WSE_LINK_REGION_HEADER + (d->slot * j->floats + l->weight_offset) * 4;

		if (read_start(d, &grads[k], j->grads_id[k], REGION_SX, off, j->sx_region.base + off,
			       wsep_layer_params(l) * 4))
			return -1;
	}
	if ((results && read_start(d, &losses, j->losses_id, 0, 0,
				   (uint8_t *)(run->loss_stage + d->first), (uint64_t)d->count * 4)) ||
	    read_start(d, &preds, j->preds_id, 0, 0,
		       (uint8_t *)(run->pred_stage + (uint64_t)d->first * j->rows),
		       (uint64_t)d->count * j->rows * 4) ||
	    (run->logit_stage &&
	     read_start(d, &logits, (uint32_t)j->logits_id, 0, 0,
			run->logit_stage + (uint64_t)d->first * j->logit_bytes,
			(uint64_t)d->count * j->logit_bytes)))
		return -1;
	for (uint32_t k = run->L; train && k-- > 0;)
		if (read_finish(d, &grads[k]) || layer_in(d, k, s))
			return -1;
	if (s + 1 < run->steps && send_weights(d, s + 1))
		return -1;
	for (int i = 0; i < d->nwrites[set]; i++)
		if (await(d, d->writes[set][i], WSE_LINK_OP_STREAM_WRITE, &len))
			return -1;
	d->nwrites[set] = 0;
	if ((results && read_finish(d, &losses)) || read_finish(d, &preds) ||
	    (run->logit_stage && read_finish(d, &logits)))
		return -1;
	return results_in(d, s);
}

/*
 * The system's RUN of @steps steps from step @s on; under fp16 loss
 * scaling (one step a RUN) it carries the job's scale, once step @s - 1
 * is committed, which is when that scale is the step's.
 */
static int run_submit(struct driver *d, uint32_t s, uint32_t steps, uint32_t *tag)
{
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	struct wse_link_run_info in = { .program = j->slot,
					.kind = run->kind | WSE_LINK_RUN_RETAIN, .steps = steps,
					.batch = d->count, .leaf = run->leaf, .norm = run->batch };
	struct wse_link_run raw;
	struct wse_link_run_scale sc;
	struct iovec iov[2] = { { &raw, sizeof(raw) }, { &sc, sizeof(sc) } };
	bool scaled = j->loss_scaling && run->kind == WSE_LINK_RUN_TRAIN;
	float scale = 0.0f;

	if (scaled) {
		bool ok;

		pthread_mutex_lock(&c->lock);
		while (j->updated[0] < run->base + s && !stopped(c) &&
		       coord_wait_on(c, &c->update_cond, 500))
			;
		ok = !stopped(c);
		scale = j->scaler.scale;
		if (ok && !(scale > 0.0f)) {
			coord_job_fail(c, "fp16 loss scaling: every step overflowed until the scale fell to 0 (the weights have diverged); train again from a checkpoint with a lower learning rate");
			ok = false;
		}
		pthread_mutex_unlock(&c->lock);
		if (!ok)
			return -1;
		in.kind |= WSE_LINK_RUN_SCALED;
		wse_link_run_scale_encode(&sc, scale);
	}
	wse_link_run_encode(&raw, &in);
	if (submit(d, WSE_LINK_OP_RUN, Q_RUN, iov, scaled ? 2 : 1, d->result,
		   sizeof(d->result), tag))
		return -1;
	pthread_mutex_lock(&c->lock);
	d->run_open = true;
	d->run_tag = *tag;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* The driver gives up on its RUN: its answer, if one comes, is dropped. */
static void run_abandon(struct driver *d)
{
	struct coord *c = d->run->c;
	bool open;

	pthread_mutex_lock(&c->lock);
	open = d->run_open;
	d->run_open = false;
	pthread_mutex_unlock(&c->lock);
	if (open)
		hostlink_forget(&c->sys[d->sys].link, d->run_tag);
}

/* Waits for a RUN of the system and adds its result to the driver's. */
static int run_finish(struct driver *d, uint32_t tag)
{
	struct coord *c = d->run->c;
	struct wse_link_run_result_info r;
	struct wse_link_err err;
	size_t len = 0;
	int ret;

	ret = await(d, tag, WSE_LINK_OP_RUN, &len);
	pthread_mutex_lock(&c->lock);
	d->run_open = false;
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return -1;
	if (wse_link_run_result_decode(d->result, len, &r, &err)) {
		pthread_mutex_lock(&c->lock);
		coord_job_fail(c, "%s answered the RUN badly: %s", c->sys[d->sys].name, err.text);
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	d->res.steps += r.steps;
	d->res.samples += r.samples;
	d->res.cycles += r.cycles;
	d->res.est_cycles += r.est_cycles;
	return 0;
}

static void *driver_main(void *arg)
{
	struct driver *d = arg;
	struct coord_run *run = d->run;
	struct coord *c = run->c;
	struct coord_part *s = &c->sys[d->sys];
	bool per_step = c->job.loss_scaling && run->kind == WSE_LINK_RUN_TRAIN;
	uint32_t tag;
	int ret = 0;

	if (!per_step && run_submit(d, 0, run->steps, &tag))
		return NULL;
	if (pthread_create(&d->feeder, NULL, feeder_main, d)) {
		pthread_mutex_lock(&c->lock);
		coord_job_fail(c, "the coordinator cannot start a feeder thread");
		pthread_mutex_unlock(&c->lock);
		run_abandon(d);
		return NULL;
	}
	for (uint32_t step = 0; step < run->steps && !ret; step++) {
		ret = per_step ? run_submit(d, step, 1, &tag) : 0;
		ret = ret ? ret : one_step(d, step);
		ret = ret || !per_step ? ret : run_finish(d, tag);
	}
	/* The feeder ends with the last step's input, or sees the failure. */
	pthread_join(d->feeder, NULL);
	if (ret || (!per_step && run_finish(d, tag))) {
		run_abandon(d);
		return NULL;
	}
	s->steps += d->res.steps;
	s->samples += d->res.samples;
	d->done = true;
	return NULL;
}

/* The input workers' batches, filled ahead into the rings while the drivers run. */
static void fill_from_dataset(struct coord_run *run)
{
	struct coord *c = run->c;
	struct coord_job *j = &c->job;
	/* The input workers read IDX datasets: a label per sample. */
	uint64_t sbytes = (uint64_t)run->batch * j->record, lbytes = (uint64_t)run->batch * 4;

	pthread_mutex_lock(&c->lock);
	while (run->filled < run->steps && !stopped(c)) {
		struct svc_fill f = { 0 };
		uint64_t soff[2], slen[2], loff[2], llen[2];
		char text[512];
		int ns, nl, ret = 0;

		if (coord_ring_room(&j->samples) < sbytes || coord_ring_room(&j->labels) < lbytes) {
			coord_wait_on(c, &c->input_cond, 500);
			continue;
		}
		if (j->dataset_left < run->batch) {
			coord_job_fail(c, "the dataset has %u samples left in this epoch; the RUN needs %u more",
				       j->dataset_left, (run->steps - run->filled) * run->batch);
			break;
		}
		/* Both rings hold the same records at the same places: their pieces match. */
		ns = coord_ring_pieces(&j->samples, j->samples.len, sbytes, soff, slen);
		nl = coord_ring_pieces(&j->labels, j->labels.len, lbytes, loff, llen);
		pthread_mutex_unlock(&c->lock);
		for (int i = 0; i < ns && i < nl && !ret; i++) {
			struct iovec iov = { &f, sizeof(f) };

			f.count = (uint32_t)(slen[i] / j->record);
			f.samples_at = j->samples.at + soff[i];
			f.labels_at = j->labels.at + loff[i];
			ret = coord_service_call(c, &c->in, SVC_OP_IN_FILL, &iov, 1, NULL, 0, NULL,
						 text, sizeof(text));
		}
		pthread_mutex_lock(&c->lock);
		if (ret) {
			coord_job_fail(c, "%s", text);
			break;
		}
		j->samples.len += sbytes;
		j->labels.len += lbytes;
		j->dataset_left -= run->batch;
		run->filled++;
		pthread_cond_broadcast(&c->input_cond);
	}
	pthread_mutex_unlock(&c->lock);
}

/*
 * Each system's shard: aligned runs of at least --leaves leaves, and of
 * leaves no larger than the program's micro-batch (what its activations
 * were sized for); a power of two of them, so that shards stay subtrees.
 */
static void shard(struct coord_run *run)
{
	struct coord_job *j = &run->c->job;
	uint32_t leaves = run->c->o.leaves, fit = j->prog->micro_batch, used;

	while (leaves < j->n || (fit && (run->batch + leaves - 1) / leaves > fit))
		leaves *= 2;
	run->leaf = (run->batch + leaves - 1) / leaves;
	used = (run->batch + run->leaf - 1) / run->leaf;
	run->n = 0;
	for (unsigned int m = 0; m < j->n; m++) {
		uint32_t lo = m * leaves / j->n, hi = (m + 1) * leaves / j->n, end;
		struct driver *d = &run->d[run->n];

		lo = lo < used ? lo : used;
		hi = hi < used ? hi : used;
		end = hi * run->leaf < run->batch ? hi * run->leaf : run->batch;
		if (lo == hi)
			continue;	/* a batch too small for every system */
		*d = (struct driver){ .run = run, .sys = j->sys[m], .slot = m,
				      .first = lo * run->leaf, .count = end - lo * run->leaf };
		run->n++;
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void coord_run_execute(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		       const struct wse_link_run_info *in)
{
	struct coord_job *j = &c->job;
	struct coord_run *run;
	struct wse_link_run_result_info res = { 0 };
	struct wse_link_run_result raw;
	struct iovec iov = { &raw, sizeof(raw) };
	double t0 = now_ns();
	char why[256];
	bool failed, cancelled, all = true;

	if (in->kind < WSE_LINK_RUN_TRAIN || in->kind > WSE_LINK_RUN_PREDICT || !in->steps ||
	    !in->batch || in->batch > j->prog->batch || in->leaf || in->norm) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "RUN kind %u, %u steps, batch %u: the kind must be 1..3, steps at least 1, the batch 1..%u, and leaf and norm 0 (the appliance chooses them)",
				 in->kind, in->steps, in->batch, j->prog->batch);
		return;
	}
	run = calloc(1, sizeof(*run));
	if (run) {
		run->loss_stage = calloc(in->batch, 4);
		run->pred_stage = calloc((size_t)in->batch * j->rows, 4);
		if (in->kind == WSE_LINK_RUN_PREDICT && j->logit_bytes)
			run->logit_stage = calloc(in->batch, j->logit_bytes);
	}
	if (!run || !run->loss_stage || !run->pred_stage ||
	    (in->kind == WSE_LINK_RUN_PREDICT && j->logit_bytes && !run->logit_stage)) {
		if (run) {
			free(run->loss_stage);
			free(run->pred_stage);
			free(run->logit_stage);
		}
		free(run);
		coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "the coordinator is out of memory");
		return;
	}
	*run = (struct coord_run){ .c = c, .kind = in->kind, .steps = in->steps, .batch = in->batch,
				   .cancel = coord_cancel_flag(),
				   .L = j->prog->num_layers, .loss_stage = run->loss_stage,
				   .pred_stage = run->pred_stage, .logit_stage = run->logit_stage };
	shard(run);
	pthread_mutex_lock(&c->lock);
	failed = j->failed || j->run;
	snprintf(why, sizeof(why), "%s", j->failed ? j->why : "another RUN of the job is running");
	if (!failed) {
		j->run = run;
		run->base = j->step;
	}
	pthread_mutex_unlock(&c->lock);
	if (failed) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "the job cannot run: %s", why);
		goto out;
	}
	for (unsigned int i = 0; i < run->n; i++) {
		struct driver *d = &run->d[i];

		d->started = !pthread_create(&d->thread, NULL, driver_main, d);
		if (!d->started) {
			pthread_mutex_lock(&c->lock);
			coord_job_fail(c, "the coordinator cannot start a driver thread");
			pthread_mutex_unlock(&c->lock);
		}
	}
	if (j->from_dataset)
		fill_from_dataset(run);
	for (unsigned int i = 0; i < run->n; i++) {
		if (run->d[i].started)
			pthread_join(run->d[i].thread, NULL);
		all = all && run->d[i].done;
	}

	pthread_mutex_lock(&c->lock);
	/* Cancelled: unless every system was done, the job stops as if it failed. */
	cancelled = !j->failed && !c->stopping && *run->cancel && !all;
	if (cancelled)
		coord_job_fail(c, "the host cancelled a RUN of it after %u of %u steps", run->committed,
			       in->steps);
	failed = j->failed;
	snprintf(why, sizeof(why), "%s", j->why);
	if (!failed && in->kind == WSE_LINK_RUN_TRAIN)
		j->step = run->base + in->steps;
	pthread_mutex_unlock(&c->lock);
	if (failed) {
		/* The systems' RUNs wait for what will never come: their links go. */
		for (unsigned int m = 0; m < j->n; m++)
			coord_system_reset(c, j->sys[m]);
	}
	pthread_mutex_lock(&c->lock);
	j->run = NULL;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	if (cancelled) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_CANCELED,
				 "cancelled by the host after %u of %u steps; the job's systems were let go: load the program again to go on (from a checkpoint)",
				 run->committed, in->steps);
		goto out;
	}
	if (failed) {
		if (!c->stopping)
			coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL,
					 "%s (%u of %u steps completed); load the program again to go on (from a checkpoint)",
					 why, run->committed, in->steps);
		goto out;
	}
	res.steps = in->steps;
	res.samples = in->steps * in->batch;
	for (unsigned int i = 0; i < run->n; i++) {
		if (run->d[i].res.cycles > res.cycles)
			res.cycles = run->d[i].res.cycles;
		if (run->d[i].res.est_cycles > res.est_cycles)
			res.est_cycles = run->d[i].res.est_cycles;
	}
	res.host_ns = (uint64_t)(now_ns() - t0);
	wse_link_run_result_encode(&raw, &res);
	coord_reply(conn, &r->f, WSE_LINK_OK, &iov, 1);
out:
	free(run->loss_stage);
	free(run->pred_stage);
	free(run->logit_stage);
	free(run);
}
