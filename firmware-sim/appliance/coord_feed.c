// SPDX-License-Identifier: GPL-2.0-only
/*
 * A layer-pipelined program fed by the input workers. The program runs on
 * one system and its requests go there as they are (coord_exec.c); once
 * the host names a dataset for it (WSE_LINK_PARAMS_INPUT on its slot), the
 * coordinator writes each step's samples and labels to the system itself
 * during a RUN: the input workers fill a batch into the feed's region, a
 * stream write hands it to the system (through the region when the system
 * maps it, in frames otherwise), FEED_BATCHES batches ahead. The user node
 * sends no samples and reads the losses and predictions from the system
 * as before, so its only traffic per step is the results.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fwd_log.h"
#include "coord.h"
#include "svc_proto.h"

#define FEED_BATCHES	4	/* batches in the region: filled, or on their way to the system */
#define REGION_FEED	4	/* the feed's region on the system's link */
#define FEED_WAIT_MS	250	/* waits on the system are cut up to watch for a stop */
#define FEED_WRITES	8	/* a batch's writes in flight: samples and labels, in frames */

/* The writes of one batch, by step % FEED_BATCHES. */
struct feed_batch {
	uint32_t tags[FEED_WRITES];
	int n;
};

struct feed_run {
	struct coord *c;
	struct coord_feed *f;
	uint32_t steps, batch;		/* the RUN's */
	bool labels;			/* not when predicting: the system takes none */
	pthread_t thread;
	struct feed_batch writes[FEED_BATCHES];
	bool cancel;			/* under c->lock: the RUN ended; stop waiting */
	bool failed;
	char why[HOSTLINK_TEXT + 512];
};

void coord_feed_note(struct coord_slot *s, const struct wsep_program *prog)
{
	struct wsep_train_streams ts;
	char text[256];

	s->feedable = !wsep_train_streams(prog, &ts, text, sizeof(text)) &&
		      wsep_label_rows(prog) == 1 && prog->input_type == WSEP_ELEM_U8;
	if (!s->feedable)
		return;
	s->samples_id = prog->streams[ts.samples].id;
	s->labels_id = prog->streams[ts.labels].id;
	s->record = prog->input_dim;
	s->batch = prog->batch;
	s->classes = wsep_classes(prog);
	s->input_rank = wsep_input_shape(prog, s->input_shape, SVC_INPUT_MAX_RANK);
}

void coord_feed_close(struct coord *c)
{
	struct coord_feed *f = &c->feed;

	wse_link_region_destroy(&f->region);
	memset(f, 0, sizeof(*f));
}

bool coord_feed_takes(struct coord *c, uint32_t slot, uint32_t stream)
{
	struct coord_feed *f = &c->feed;

	return f->active && f->slot == slot && (stream == f->samples_id || stream == f->labels_id);
}

/* The feed's region for the slot's batches, made anew when the program differs. */
static int feed_region(struct coord_feed *f, const struct coord_slot *s, char *text, size_t len)
{
	uint64_t samples = (uint64_t)FEED_BATCHES * s->batch * s->record;
	uint64_t labels = (uint64_t)FEED_BATCHES * s->batch * 4;

	if (f->region.base && f->record == s->record && f->batch == s->batch)
		return 0;
	wse_link_region_destroy(&f->region);
	if (wse_link_region_create(&f->region, "feed", samples + labels, text, len))
		return -ENOMEM;
	wse_link_region_describe(&f->region, REGION_FEED, &f->map);
	f->record = s->record;
	f->batch = s->batch;
	f->labels_at = WSE_LINK_REGION_HEADER + samples;
	return 0;
}

void coord_feed_input(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		      uint32_t slot, const struct wse_link_input_info *in)
{
	struct coord_feed *f = &c->feed;
	struct coord_slot *s = &c->slots[slot];
	struct coord_part *sys = &c->sys[s->system];
	struct svc_in_open o = { .input_dim = s->record, .classes = s->classes,
				 .rank = s->input_rank };
	struct iovec iov;
	uint32_t count = 0;
	char text[512] = "", why[256] = "--no-regions";
	size_t n = 0;

	memcpy(o.shape, s->input_shape, sizeof(o.shape));
	if (in->source == WSE_LINK_INPUT_STREAM) {
		if (f->slot == slot)
			f->active = false;
		coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
		return;
	}
	if (!s->feedable) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "the input workers read IDX images with a label each; the program in slot %u does not train on byte images with one label: the host sends its samples",
				 slot);
		return;
	}
	if (c->job.from_dataset) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "the input workers feed the weight-streaming job in slot %u; name its input as the host's (stream) first",
				 c->job.slot);
		return;
	}
	/* One program at a time: another's feed is not taken from it. */
	if (f->active && f->slot != slot) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "the input workers feed the program in slot %u; they feed one program at a time (until its input is the host's again, or it is unloaded)",
				 f->slot);
		return;
	}
	f->active = false;
	if (feed_region(f, s, text, sizeof(text))) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_NOSPC, "%s", text);
		return;
	}
	if (!coord_system_ready(c, s->system, text, sizeof(text))) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "%s", text);
		return;
	}
	{
		struct wse_link_region_map raw;
		struct wse_link_region_map_info m = f->map;

		m.region = 1;
		wse_link_region_map_encode(&raw, &m);
		iov = (struct iovec){ &raw, sizeof(raw) };
		if (coord_service_call(c, &c->in, WSE_LINK_OP_REGION_MAP, &iov, 1, NULL, 0, NULL,
				       text, sizeof(text)))
			goto fail;
	}
	wse_link_input_encode(&o.in, in);
	iov = (struct iovec){ &o, sizeof(o) };
	if (coord_service_call(c, &c->in, SVC_OP_IN_OPEN, &iov, 1, &count, sizeof(count), &n, text,
			       sizeof(text)))
		goto fail;
	f->by_region = !c->o.no_regions &&
		       coord_map_on(&sys->link, &f->map, REGION_FEED, why, sizeof(why)) == WSE_LINK_OK;
	if (!f->by_region)
		fwd_info("%s cannot map the feed's region (%s): its samples go in frames",
			 sys->name, why);
	f->slot = slot;
	f->system = s->system;
	f->samples_id = s->samples_id;
	f->labels_id = s->labels_id;
	f->left = count > in->first ? count - in->first : 0;
	f->active = true;
	coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
	return;
fail:
	coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "%s", text);
}

/* Waits for @tag's answer from the feed's system: 0, or -1 with the reason kept. */
static int await(struct feed_run *fr, uint32_t tag)
{
	struct coord_part *s = &fr->c->sys[fr->f->system];
	uint32_t status;
	char text[HOSTLINK_TEXT + 64];
	int ret;

	for (;;) {
		bool going;

		ret = hostlink_wait(&s->link, tag, FEED_WAIT_MS, &status, NULL, text, sizeof(text));
		if (ret != -ETIMEDOUT)
			break;
		pthread_mutex_lock(&fr->c->lock);
		going = fr->c->stopping || fr->cancel;
		pthread_mutex_unlock(&fr->c->lock);
		if (going) {
			hostlink_forget(&s->link, tag);
			snprintf(fr->why, sizeof(fr->why), "the RUN ended before its samples were written");
			return -1;
		}
	}
	if (ret || status) {
		snprintf(fr->why, sizeof(fr->why), "%s refused a stream write of the input workers' samples (%s): %s",
			 s->name, ret ? "its link went" : wse_link_status_name(status), text);
		return -1;
	}
	return 0;
}

/* A stream write of @len bytes at @at in the feed's region, as tags of @b. */
static int write_piece(struct feed_run *fr, struct feed_batch *b, uint32_t stream, uint64_t at,
		       uint64_t len)
{
	struct coord_feed *f = fr->f;
	struct coord_part *s = &fr->c->sys[f->system];
	uint64_t piece = f->by_region ? len : s->link.rules.max_payload - 64;

	for (uint64_t done = 0; done < len; done += piece) {
		uint32_t n = (uint32_t)(len - done < piece ? len - done : piece);
		struct wse_link_stream_info in = { f->slot, stream, n, 0 };
		struct wse_link_region_ref_info ref = { REGION_FEED, at + done };
		struct {
			struct wse_link_stream s;
			struct wse_link_region_ref r;
		} raw;
		struct iovec iov[2] = { { &raw, sizeof(raw) } };
		uint8_t op = WSE_LINK_OP_STREAM_WRITE_REGION;
		int iovcnt = 1;

		if (b->n == FEED_WRITES) {
			for (int i = 0; i < b->n; i++)
				if (await(fr, b->tags[i]))
					return -1;
			b->n = 0;
		}
		wse_link_stream_encode(&raw.s, &in);
		if (f->by_region) {
			wse_link_region_ref_encode(&raw.r, &ref);
		} else {
			op = WSE_LINK_OP_STREAM_WRITE;
			iov[0].iov_len = sizeof(raw.s);
			iov[1] = (struct iovec){ f->region.base + at + done, n };
			iovcnt = 2;
		}
		if (hostlink_submit(&s->link, op, Q_IN, iov, iovcnt, NULL, 0, &b->tags[b->n])) {
			snprintf(fr->why, sizeof(fr->why), "%s went away", s->name);
			return -1;
		}
		b->n++;
	}
	return 0;
}

/* Step @step's batch: filled by the input workers, then written to the system. */
static int feed_step(struct feed_run *fr, uint32_t step)
{
	struct coord_feed *f = fr->f;
	struct feed_batch *b = &fr->writes[step % FEED_BATCHES];
	uint64_t slot = step % FEED_BATCHES;
	uint64_t sbytes = (uint64_t)fr->batch * f->record, lbytes = (uint64_t)fr->batch * 4;
	/* Places of whole program batches: a smaller last batch of the epoch fits. */
	struct svc_fill fill = {
		.count = fr->batch,
		.samples_at = WSE_LINK_REGION_HEADER + slot * f->batch * f->record,
		.labels_at = f->labels_at + slot * f->batch * 4,
	};
	struct iovec iov = { &fill, sizeof(fill) };

	/* The batch FEED_BATCHES steps back used this place: the system has it by now. */
	for (int i = 0; i < b->n; i++)
		if (await(fr, b->tags[i]))
			return -1;
	b->n = 0;
	if (coord_service_call(fr->c, &fr->c->in, SVC_OP_IN_FILL, &iov, 1, NULL, 0, NULL, fr->why,
			       sizeof(fr->why)))
		return -1;
	return write_piece(fr, b, f->samples_id, fill.samples_at, sbytes) ||
	       (fr->labels && write_piece(fr, b, f->labels_id, fill.labels_at, lbytes));
}

static void *feed_main(void *arg)
{
	struct feed_run *fr = arg;
	int ret = 0;

	for (uint32_t step = 0; step < fr->steps && !ret; step++)
		ret = feed_step(fr, step);
	for (int k = 0; k < FEED_BATCHES && !ret; k++)
		for (int i = 0; i < fr->writes[k].n && !ret; i++)
			ret = await(fr, fr->writes[k].tags[i]);
	if (ret) {
		fr->failed = true;
		/* The system's RUN waits for samples that will not come: its link goes. */
		coord_system_reset(fr->c, fr->f->system);
	}
	return NULL;
}

int coord_feed_start(struct coord *c, const struct wse_link_run_info *in, struct feed_run **out,
		     char *text, size_t len)
{
	struct coord_feed *f = &c->feed;
	struct feed_run *fr;
	uint64_t need = (uint64_t)in->steps * in->batch;

	*out = NULL;
	if (!f->active || f->slot != in->program)
		return 0;
	if (!in->batch || in->batch > f->batch) {
		snprintf(text, len, "a RUN of batch %u: the program's batch is %u", in->batch,
			 f->batch);
		return -EINVAL;
	}
	if (need > f->left) {
		snprintf(text, len, "the dataset has %u samples left in this epoch; the RUN needs %llu",
			 f->left, (unsigned long long)need);
		return -EINVAL;
	}
	fr = calloc(1, sizeof(*fr));
	if (!fr) {
		snprintf(text, len, "the coordinator is out of memory");
		return -ENOMEM;
	}
	*fr = (struct feed_run){ .c = c, .f = f, .steps = in->steps, .batch = in->batch,
				 .labels = in->kind != WSE_LINK_RUN_PREDICT };
	if (pthread_create(&fr->thread, NULL, feed_main, fr)) {
		free(fr);
		snprintf(text, len, "the coordinator cannot start a feeder thread");
		return -EAGAIN;
	}
	f->left -= (uint32_t)need;
	*out = fr;
	return 0;
}

int coord_feed_end(struct feed_run *fr, char *text, size_t len)
{
	int ret;

	if (!fr)
		return 0;
	/*
	 * A RUN that ended well took every batch, and the system answered
	 * their writes before the RUN: the feeder finds those answers and
	 * ends. Otherwise (or a system that lost writes) it gives up within
	 * a slice of its wait, and the join is bounded either way.
	 */
	pthread_mutex_lock(&fr->c->lock);
	fr->cancel = true;
	pthread_mutex_unlock(&fr->c->lock);
	pthread_join(fr->thread, NULL);
	ret = fr->failed ? -EIO : 0;
	if (ret)
		snprintf(text, len, "%s", fr->why);
	free(fr);
	return ret;
}
