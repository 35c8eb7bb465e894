// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checkpoints off the training path (issue 15: every 20 steps halved the
 * rate). The run only marks where a checkpoint is; a thread of its own
 * gets the state and writes the file while the next steps run.
 *
 * Layer-pipelined, the device keeps a snapshot of its parameters at the
 * checkpoint's step (mode->snapshot_at, asked for before the chunk that
 * ends there), and the writer reads it on a ring of its own, on a hardware
 * queue the steps do not use, so the RUN that follows is not held up, nor
 * are its transfers queued behind the snapshot's. The device also gives
 * the payload's CRC32C, so the host does not pass over the bytes again.
 * Weight streaming, MemoryX is here: the state is copied at once (a
 * memcpy) and the writer writes that.
 *
 * One checkpoint at a time: the next one's snapshot is asked for only when
 * the writer is done with the last, so a writer slower than the steps
 * holds the run up rather than piling up copies. Without a spare hardware
 * queue (or on several systems) the state is read at once, as before, and
 * only the file is written by the thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mode.h"

#define SAVER_HW_QUEUE	3	/* RUNs on 0, samples on 1, results on 2 */
/*
 * The snapshot comes in the link's largest pieces, a few at a time. Smaller
 * pieces (256 KiB, two at a time) let a step's results pass between them
 * but made the read two to four times slower in the guest, and the run
 * waited for it longer.
 */
#define SAVER_DEPTH	4

struct train_saver {
	struct train_job *j;
	struct wse_ring *ring;		/* the writer's, for snapshots; NULL: capture at once */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock. */
	bool pending;			/* c is to be written */
	bool busy;			/* the writer is at it */
	bool stop;
	int error;
	uint64_t written;		/* the step of the last file written */
	char path[4096];
	bool announce;			/* written, not said yet */
	uint32_t count;			/* files written */
	double writing, waited;		/* seconds the writer worked, the run waited for it */
	/* The checkpoint in hand: the writer's while pending or busy. */
	struct train_checkpoint c;
};

/*
 * The checkpoint in s->c into its file: the device's snapshot read into
 * the file's own pages, or the state captured at take() copied there.
 * Lock not held.
 */
static int write_one(struct train_saver *s, char *path, size_t len)
{
	const struct train_opts *o = s->j->o;
	struct train_checkpoint *c = &s->c;
	size_t wbytes = c->floats * sizeof(float);
	struct train_ckpt_out out;
	struct wse_params params;
	uint32_t crc;

	train_state_destination(o, c->step, path, len);
	if (train_checkpoint_open_out(path, c->floats, c->state_arrays, &out))
		return -1;
	if (s->ring) {
		params = (struct wse_params){ .floats = c->floats, .state_arrays = c->state_arrays,
					      .weights = out.weights, .state = out.state };
		if (s->j->mode->read_snapshot(s->j->mode_state, s->ring, &params, &crc))
			goto fail;
		if (params.step != c->step) {
			train_fail("the device's snapshot is of step %llu, the checkpoint's %llu",
				   (unsigned long long)params.step, (unsigned long long)c->step);
			goto fail;
		}
		c->crc_known = true;
		c->payload_crc = crc;
	} else {
		memcpy(out.weights, c->weights, wbytes);
		memcpy(out.state, c->state, c->state_arrays * wbytes);
	}
	if (train_checkpoint_finish_out(&out, c))
		return -1;
	train_state_written(o);
	return 0;
fail:
	train_checkpoint_abandon_out(&out);
	return -1;
}

static void *writer(void *arg)
{
	struct train_saver *s = arg;
	char path[4096];
	int ret;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->pending && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->pending)
			break;
		double t0 = train_now();

		s->pending = false;
		s->busy = true;
		pthread_mutex_unlock(&s->lock);
		ret = write_one(s, path, sizeof(path));
		pthread_mutex_lock(&s->lock);
		s->busy = false;
		s->writing += train_now() - t0;
		s->count += !ret;
		if (ret && !s->error) {
			s->error = -1;
		} else if (!ret) {
			s->written = s->c.step;
			snprintf(s->path, sizeof(s->path), "%s", path);
			s->announce = true;
		}
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int train_saver_open(struct train_job *j, struct train_saver **out)
{
	struct wse_ring_params rp = { .hw_queue = SAVER_HW_QUEUE, .depth = SAVER_DEPTH };
	struct train_progress none = { 0 };
	struct train_saver *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return train_fail("out of memory");
	s->j = j;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (train_state_new(j, &none, &s->c)) {
		train_saver_close(s);
		return -1;
	}
	if (j->mode->snapshot_at && j->n == 1 &&
	    j->sys[0].info.dev.num_queues > SAVER_HW_QUEUE &&
	    wse_ring_open(j->sys[0].dev, &rp, &s->ring))
		s->ring = NULL;	/* then the state is read at once */
	ret = pthread_create(&s->thread, NULL, writer, s);
	if (ret) {
		train_saver_close(s);
		return train_fail("cannot start the checkpoint writer: %s", strerror(ret));
	}
	s->started = true;
	*out = s;
	return 0;
}

/* Waits until the writer has nothing in hand (lock held); the wait is counted. */
static void wait_idle(struct train_saver *s)
{
	double t0 = train_now();

	while (s->pending || s->busy)
		pthread_cond_wait(&s->cond, &s->lock);
	s->waited += train_now() - t0;
}

int train_saver_due(struct train_saver *s, uint64_t step)
{
	pthread_mutex_lock(&s->lock);
	wait_idle(s);
	pthread_mutex_unlock(&s->lock);
	if (train_saver_poll(s))
		return -1;
	return s->ring ? s->j->mode->snapshot_at(s->j->mode_state, step) : 0;
}

int train_saver_take(struct train_saver *s, const struct train_progress *at)
{
	struct wse_params params;

	/* train_saver_due() left the writer idle: the buffers are ours. */
	train_state_describe(s->j, at, &s->c);
	if (!s->ring) {
		params = (struct wse_params){ .floats = s->c.floats,
					      .state_arrays = s->c.state_arrays,
					      .weights = s->c.weights, .state = s->c.state };
		if (s->j->mode->capture(s->j->mode_state, &params))
			return -1;
		if (params.step != at->step)
			return train_fail("%s has taken %llu optimizer steps, this run %llu: not checkpointing an inconsistent state",
					  s->j->sys[0].name, (unsigned long long)params.step,
					  (unsigned long long)at->step);
	}
	pthread_mutex_lock(&s->lock);
	s->pending = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int train_saver_poll(struct train_saver *s)
{
	char path[4096];
	uint64_t step;
	bool say;
	int err;

	pthread_mutex_lock(&s->lock);
	err = s->error;
	say = s->announce;
	s->announce = false;
	step = s->written;
	snprintf(path, sizeof(path), "%s", s->path);
	pthread_mutex_unlock(&s->lock);
	if (say && !s->j->o->quiet)
		train_report_note("checkpoint: step %llu -> %s", (unsigned long long)step, path);
	return err ? -1 : 0;
}

int train_saver_flush(struct train_saver *s)
{
	pthread_mutex_lock(&s->lock);
	wait_idle(s);
	pthread_mutex_unlock(&s->lock);
	return train_saver_poll(s);
}

void train_saver_summary(struct train_saver *s)
{
	pthread_mutex_lock(&s->lock);
	printf("summary: %u checkpoint%s written by the writer thread in %.1fs%s, training held up %.2fs waiting for it\n",
	       s->count, s->count == 1 ? "" : "s", s->writing,
	       s->ring ? " from the device's snapshots" : "", s->waited);
	pthread_mutex_unlock(&s->lock);
	fflush(stdout);
}

uint64_t train_saver_last(const struct train_saver *s, const char **path)
{
	*path = s->path;
	return s->written;
}

void train_saver_close(struct train_saver *s)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		wait_idle(s);
		s->stop = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	wse_ring_close(s->ring);
	train_checkpoint_free(&s->c);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
