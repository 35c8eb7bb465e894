// SPDX-License-Identifier: GPL-2.0-only
/*
 * Steps go to the systems in chunks: one RUN job of several steps per
 * system, each system taking its share of every batch. Within a chunk the
 * transfers of step i carry the samples of step i + 1 along (double
 * buffering: a system finds its next batch already there when it finishes
 * a step) and take step i's losses and predictions back, together with
 * whatever the mode adds (mode.h), in one libwse stream batch per system.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mode.h"

/* The transfers of one system's step: samples, labels, the mode's, losses, predictions. */
#define STEP_MAX_IO	(4 + TRAIN_MODE_MAX_IO)

/* One system's buffers. */
struct system_bufs {
	uint8_t *x[2];			/* two batches of samples: double buffering */
	int32_t *y[2];
	float *loss;
	int32_t *pred;
};

/* What every system does in the current step (read by their threads). */
struct step_plan {
	uint32_t kind;			/* WSE_RUN_TRAIN or WSE_RUN_EVAL */
	int send;			/* buffer (0/1) of samples to send, -1: none */
	uint32_t send_count[TRAIN_MAX_SYSTEMS];
	bool collect;			/* read the step's losses and predictions */
	uint32_t collect_count[TRAIN_MAX_SYSTEMS];
};

struct train_steps {
	struct train_job *j;
	struct system_bufs bufs[TRAIN_MAX_SYSTEMS];
	struct step_plan plan;
	struct train_step_times times;
};

uint32_t train_shard(const struct train_job *j, uint32_t b, unsigned int m, uint32_t *first)
{
	uint32_t base = b / j->n, extra = b % j->n;

	*first = m * base + (m < extra ? m : extra);
	return base + (m < extra);
}

/* A system's share of a batch, at most: the buffers' size in samples. */
static uint32_t max_share(const struct train_job *j)
{
	return j->batch / j->n + 1;
}

/*
 * Registers what a system's rings move with them, so the commands go as
 * fixed-buffer commands: the kernel pins the pages once instead of on every
 * step. Without it (e.g. no locked memory to spare) they go plain.
 */
static void register_buffers(struct train_steps *s, unsigned int m)
{
	struct train_job *j = s->j;
	struct system_bufs *b = &s->bufs[m];
	size_t share = max_share(j);
	struct iovec in[4 + TRAIN_MODE_MAX_IO], out[2 + TRAIN_MODE_MAX_IO];
	unsigned int nin = 0, nout = 0;

	for (int i = 0; i < 2; i++) {
		in[nin++] = (struct iovec){ b->x[i], share * j->record };
		in[nin++] = (struct iovec){ b->y[i], share * j->rows * 4 };
	}
	out[nout++] = (struct iovec){ b->loss, share * 4 };
	out[nout++] = (struct iovec){ b->pred, share * j->rows * 4 };
	nin += j->mode->buffers(j->mode_state, m, false, in + nin);
	nout += j->mode->buffers(j->mode_state, m, true, out + nout);
	if (wse_ring_register(j->sys[m].in, in, nin) ||
	    wse_ring_register(j->sys[m].out, out, nout))
		fprintf(stderr, "wsetrain: note: %s: buffers not registered with io_uring; transfers go through plain buffers\n",
			j->sys[m].name);
}

int train_steps_open(struct train_job *j, struct train_steps **out)
{
	struct train_steps *s = calloc(1, sizeof(*s));
	size_t share = max_share(j);

	*out = NULL;
	if (!s)
		return train_fail("out of memory");
	s->j = j;
	for (unsigned int m = 0; m < j->n; m++) {
		struct system_bufs *b = &s->bufs[m];

		for (int i = 0; i < 2; i++) {
			b->x[i] = malloc(share * j->record);
			b->y[i] = malloc(share * j->rows * 4);
		}
		b->loss = malloc(share * 4);
		b->pred = malloc(share * j->rows * 4);
		if (!b->x[0] || !b->x[1] || !b->y[0] || !b->y[1] || !b->loss || !b->pred) {
			train_steps_close(s);
			return train_fail("out of memory");
		}
	}
	for (unsigned int m = 0; m < j->n; m++)
		register_buffers(s, m);
	*out = s;
	return 0;
}

void train_steps_close(struct train_steps *s)
{
	if (!s)
		return;
	for (unsigned int m = 0; m < TRAIN_MAX_SYSTEMS; m++) {
		struct system_bufs *b = &s->bufs[m];

		for (int i = 0; i < 2; i++) {
			free(b->x[i]);
			free(b->y[i]);
		}
		free(b->loss);
		free(b->pred);
	}
	free(s);
}

const struct train_step_times *train_steps_times(const struct train_steps *s)
{
	return &s->times;
}

/* The transfers of one system in one step, run on all of them at once. */
static int system_step(unsigned int m, void *arg)
{
	struct train_steps *s = arg;
	struct train_job *j = s->j;
	const struct step_plan *pl = &s->plan;
	struct system_bufs *b = &s->bufs[m];
	struct train_system *sys = &j->sys[m];
	struct wse_stream_io io[STEP_MAX_IO];
	unsigned int n = 0;
	int ret;

	/* Predictions: no labels go in and no losses come out. */
	bool labelled = pl->kind != WSE_RUN_PREDICT;

	if (pl->send >= 0 && pl->send_count[m]) {
		io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_WRITE, (uint32_t)j->ids.samples,
						  j->record, b->x[pl->send],
						  (size_t)pl->send_count[m] * j->record };
		if (labelled)
			io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_WRITE,
							  (uint32_t)j->ids.labels, j->rows * 4,
							  b->y[pl->send],
							  (size_t)pl->send_count[m] * j->rows * 4 };
	}
	if (pl->collect) {
		n += j->mode->step_io(j->mode_state, m, pl->kind, io + n);
		if (labelled)
			io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_READ,
							  (uint32_t)j->ids.losses, 4, b->loss,
							  (size_t)pl->collect_count[m] * 4 };
		io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_READ,
						  (uint32_t)j->ids.predictions, j->rows * 4, b->pred,
						  (size_t)pl->collect_count[m] * j->rows * 4 };
	}
	ret = wse_stream_batch(sys->in, sys->out, TRAIN_SLOT, io, n);
	if (ret)
		train_fail("%s: %s", sys->name, wse_strerror(ret));
	return ret;
}

/* Gathers batch @b of the data at @first (in @perm's order) into buffer @buf of every system. */
static void gather(struct train_steps *s, const struct wse_dataset *ds, const uint32_t *perm,
		   uint32_t first, uint32_t b, int buf)
{
	for (unsigned int m = 0; m < s->j->n; m++) {
		uint32_t at, cnt = train_shard(s->j, b, m, &at);

		if (s->j->tokens)
			train_text_gather(s->j, ds == &s->j->test, perm, first + at, cnt,
					  s->bufs[m].x[buf], s->bufs[m].y[buf]);
		else
			train_gather(ds, perm, first + at, cnt, s->bufs[m].x[buf], s->bufs[m].y[buf]);
		s->plan.send_count[m] = cnt;
	}
}

/*
 * Losses and correct predictions of the step just collected, or (@labelled
 * false) the predictions alone, into @pred: the step's samples in order.
 */
static void tally(struct train_steps *s, const int32_t *labels_of[], bool labelled,
		  int32_t *pred, struct train_tally *t)
{
	uint32_t rows = s->j->rows;

	for (unsigned int m = 0; m < s->j->n; m++) {
		const struct system_bufs *b = &s->bufs[m];

		for (uint32_t i = 0; i < s->plan.collect_count[m]; i++) {
			uint32_t right = 0;

			if (labelled) {
				t->loss += b->loss[i];
				for (uint32_t r = i * rows; r < (i + 1) * rows; r++)
					right += b->pred[r] == labels_of[m][r];
				t->right += (double)right / rows;
			}
			/* A class a sample: a program over tokens predicts with --sample. */
			if (pred)
				*pred++ = b->pred[i * rows];
		}
	}
}

static int submit_runs(struct train_job *j, uint32_t kind, uint32_t steps, uint32_t b)
{
	for (unsigned int m = 0; m < j->n; m++) {
		uint32_t at, cnt = train_shard(j, b, m, &at);

		if (train_run_submit(&j->sys[m], kind, steps, cnt))
			return -1;
	}
	return 0;
}

static int wait_runs(struct train_job *j)
{
	int ret = 0;

	for (unsigned int m = 0; m < j->n; m++)
		if (j->sys[m].run_pending && train_run_wait(&j->sys[m]))
			ret = -1;
	return ret;
}

int train_steps_run(struct train_steps *s, uint32_t kind, const struct wse_dataset *ds,
		    const uint32_t *perm, uint32_t first, uint32_t steps, uint32_t b,
		    struct train_tally *tally_out)
{
	struct train_job *j = s->j;
	const int32_t *labels_of[TRAIN_MAX_SYSTEMS];
	double shares[TRAIN_MAX_SYSTEMS], t0, t1;

	for (unsigned int m = 0; m < j->n; m++) {
		uint32_t at;

		shares[m] = (double)train_shard(j, b, m, &at) / b;
	}
	if (submit_runs(j, kind, steps, b))
		return -1;
	/* Step 0's samples go ahead of everything. */
	s->plan = (struct step_plan){ .kind = kind, .send = 0, .collect = false };
	gather(s, ds, perm, first, b, 0);
	if (j->mode->each(j->mode_state, system_step, s))
		return -1;
	for (uint32_t i = 0; i < steps; i++) {
		int cur = (int)(i % 2), next = !cur;

		for (unsigned int m = 0; m < j->n; m++) {
			uint32_t at;

			s->plan.collect_count[m] = train_shard(j, b, m, &at);
			labels_of[m] = s->bufs[m].y[cur];
		}
		s->plan.collect = true;
		s->plan.send = -1;
		if (i + 1 < steps) {
			gather(s, ds, perm, first + (i + 1) * b, b, next);
			s->plan.send = next;
		}
		t0 = train_now();
		if (j->mode->each(j->mode_state, system_step, s))
			return -1;
		t1 = train_now();
		s->times.io += t1 - t0;
		tally(s, labels_of, kind != WSE_RUN_PREDICT,
		      tally_out->predictions ? tally_out->predictions + (size_t)i * b : NULL,
		      tally_out);
		if (kind == WSE_RUN_TRAIN) {
			if (j->mode->after_step(j->mode_state, shares))
				return -1;
			s->times.update += train_now() - t1;
			s->times.trained += b;
		}
	}
	return wait_runs(j);
}
