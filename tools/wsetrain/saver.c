// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checkpoints off the training path (issue 15: every 20 steps halved the
 * rate). The run only marks where a checkpoint is; a thread of its own
 * gets the state and writes the file while the next steps run.
 *
 * Layer-pipelined, the device keeps a snapshot of its parameters at the
 * checkpoint's step (train_weights_snapshot_at()), asked for by the writer
 * while the chunk that ends there runs. The writer then has the device save it into
 * the checkpoint file itself when the file is in the storage the device
 * shares with this host (a run directory in --runs, which wsevm --runs
 * gives the simulators as --store): its bytes never cross the link, which
 * in the guest is the slow part (3.2 MB for fc-mnist, against 2 MB of
 * samples in 20 steps). Elsewhere it reads the snapshot over the link, on
 * a ring of its own on a hardware queue the steps do not use, straight
 * into the file's mapped pages. The device gives the payload's CRC32C
 * either way. If it cannot save into the storage (none, or not this
 * one), the writer says so once and reads from then on.
 *
 * The device keeps one snapshot: the next is asked for as soon as the
 * writer is done with the last, before it finishes that file (header,
 * sync, rename). The run waits only if the writer has not even done that
 * by the time the next checkpoint's chunk ends.
 *
 * Weight streaming (the appliance's MemoryX answers PARAMS_READ), or on a
 * device with no spare hardware queue or no snapshots, the state is
 * captured at once and the writer writes the file.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "wse_link.h"

#define SAVER_HW_QUEUE	WSE_LINK_Q_CTL	/* beside the step's RUN, samples and results */
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
	const char *root;		/* storage shared with the device, or NULL */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock. */
	uint64_t want;			/* a snapshot to ask for at this step; 0: none */
	uint64_t asked;			/* the step the device has a snapshot asked for, or taken */
	bool holding;			/* that snapshot is not saved or read yet */
	bool pending;			/* next is to be written */
	bool busy;			/* the writer is writing a file */
	bool stop;
	int error;
	struct train_checkpoint next;	/* what take() hands over (arrays: capture's) */
	uint64_t written;		/* the step of the last file written */
	char path[4096];
	bool announce;			/* written, not said yet */
	uint32_t count;			/* files written */
	uint32_t stored;		/* of which the device wrote the payload */
	double writing, waited;		/* seconds the writer worked, the run waited for it */
};

/* Asks the device for the wanted snapshot, if it is free (lock held; dropped meanwhile). */
static void ask(struct train_saver *s)
{
	uint64_t step = s->want;
	int ret;

	if (!step || s->holding)
		return;
	s->want = 0;
	s->holding = true;
	pthread_mutex_unlock(&s->lock);
	ret = train_weights_snapshot_at(s->ring, step);
	if (ret)
		train_fail("%s: asking for a snapshot at step %llu: %s", s->j->sys[0].name,
			   (unsigned long long)step, wse_strerror(ret));
	pthread_mutex_lock(&s->lock);
	if (ret) {
		s->holding = false;
		if (!s->error)
			s->error = -1;
	} else {
		s->asked = step;
	}
	pthread_cond_broadcast(&s->cond);
}

/* The writer is done with the device's snapshot: the next may be asked for. */
static void release(struct train_saver *s)
{
	pthread_mutex_lock(&s->lock);
	s->holding = false;
	ask(s);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Checkpoint @c into its file: the device's snapshot saved into it by the
 * device or read into the file's own pages, or the state captured at
 * take() copied there. Lock not held.
 */
static int write_one(struct train_saver *s, struct train_checkpoint *c, char *path, size_t len)
{
	const struct train_opts *o = s->j->o;
	size_t wbytes = c->floats * sizeof(float), n = s->root ? strlen(s->root) : 0;
	struct train_ckpt_out out;
	struct wse_params params;
	uint32_t crc;
	int ret;

	train_state_destination(o, c->step, path, len);
	/*
	 * In the shared storage: the device writes the payload into the
	 * temporary file (not a FIFO or device the path may name, nor a file
	 * a link leads out of the storage to).
	 */
	if (s->root && !strncmp(path, s->root, n) && path[n] == '/') {
		if (train_checkpoint_open_out(path, c->floats, c->state_arrays, true, &out))
			return -1;
		if (!out.file.replace || strncmp(out.file.tmp, s->root, n) || out.file.tmp[n] != '/') {
			train_checkpoint_abandon_out(&out);
			goto by_host;
		}
		ret = train_weights_store_snapshot(s->j, s->ring, c->step,
						 TRAIN_CKPT_PAYLOAD, out.file.tmp + n + 1, &crc);
		if (!ret) {
			c->crc_known = true;
			c->payload_crc = crc;
			s->stored++;
			release(s);
			goto finish;
		}
		train_checkpoint_abandon_out(&out);
		fprintf(stderr, "wsetrain: note: the device did not save the checkpoint into %s itself (%s): it is read over the link from now on\n",
			s->root, wse_strerror(ret));
		s->root = NULL;
	}
by_host:
	if (train_checkpoint_open_out(path, c->floats, c->state_arrays, false, &out))
		return -1;
	if (s->ring) {
		params = (struct wse_params){ .floats = c->floats, .state_arrays = c->state_arrays,
					      .weights = out.weights, .state = out.state };
		ret = train_weights_read_snapshot(s->ring, &params, &crc);
		if (ret) {
			train_fail("%s: reading the snapshot of the weights: %s", s->j->sys[0].name,
				   wse_strerror(ret));
			goto fail;
		}
		if (params.step != c->step) {
			train_fail("the device's snapshot is of step %llu, the checkpoint's %llu",
				   (unsigned long long)params.step, (unsigned long long)c->step);
			goto fail;
		}
		c->crc_known = true;
		c->payload_crc = crc;
		release(s);
	} else {
		memcpy(out.weights, c->weights, wbytes);
		memcpy(out.state, c->state, c->state_arrays * wbytes);
	}
finish:
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
	struct train_checkpoint c;
	char path[4096];
	double t0;
	int ret;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->stop && !s->pending && !(s->want && !s->holding))
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->want && !s->holding) {
			ask(s);
			continue;
		}
		if (!s->pending)
			break;
		c = s->next;
		s->pending = false;
		s->busy = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		t0 = train_now();
		ret = write_one(s, &c, path, sizeof(path));
		pthread_mutex_lock(&s->lock);
		s->busy = false;
		if (ret)
			s->holding = false;	/* what the device kept is of no more use */
		s->writing += train_now() - t0;
		s->count += !ret;
		if (ret && !s->error) {
			s->error = -1;
		} else if (!ret) {
			s->written = c.step;
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
	if (train_weights_snapshots(j) && j->sys[0].info.dev.num_queues > SAVER_HW_QUEUE &&
	    wse_ring_open(j->sys[0].dev, &rp, &s->ring))
		s->ring = NULL;	/* then the state is captured at once */
	/* The freshly loaded program's own step: a device without snapshots says so now. */
	if (s->ring && (ret = train_weights_snapshot_at(s->ring, 0))) {
		fprintf(stderr, "wsetrain: note: %s keeps no snapshots (%s): checkpoints are read with training stopped\n",
			j->sys[0].name, wse_strerror(ret));
		wse_ring_close(s->ring);
		s->ring = NULL;
	}
	if (s->ring)
		s->root = j->o->runs_root;
	/* The arrays are only for a capture at once: snapshots go straight into files. */
	if (s->ring)
		train_state_describe(j, &none, &s->next);
	else if (train_state_new(j, &none, &s->next)) {
		train_saver_close(s);
		return -1;
	}
	ret = pthread_create(&s->thread, NULL, writer, s);
	if (ret) {
		train_saver_close(s);
		return train_fail("cannot start the checkpoint writer: %s", strerror(ret));
	}
	s->started = true;
	*out = s;
	return 0;
}

/* Waits (lock held) while @busy says so; the wait is counted. */
#define WAIT_WHILE(s, busy)							\
	do {									\
		double t0_ = train_now();					\
										\
		while (busy)							\
			pthread_cond_wait(&(s)->cond, &(s)->lock);		\
		(s)->waited += train_now() - t0_;				\
	} while (0)

int train_saver_due(struct train_saver *s, uint64_t step)
{
	if (!s->ring)
		return train_saver_poll(s);
	/* The writer asks, as soon as the device's snapshot is free. */
	pthread_mutex_lock(&s->lock);
	s->want = step;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return train_saver_poll(s);
}

int train_saver_take(struct train_saver *s, const struct train_progress *at)
{
	struct wse_params params;
	bool taken;

	pthread_mutex_lock(&s->lock);
	if (s->ring) {
		/* Its snapshot asked for (and so, the chunk over, taken): the writer's from here. */
		WAIT_WHILE(s, (s->want || s->asked != at->step || s->pending) && !s->error);
		taken = !s->error;
	} else {
		/* The buffers are the writer's until its file is written. */
		WAIT_WHILE(s, s->pending || s->busy);
		taken = true;
	}
	pthread_mutex_unlock(&s->lock);
	if (!taken)
		return train_saver_poll(s) ? -1 : train_fail("the checkpoint writer failed");
	train_state_describe(s->j, at, &s->next);
	if (!s->ring) {
		params = (struct wse_params){ .floats = s->next.floats,
					      .state_arrays = s->next.state_arrays,
					      .weights = s->next.weights, .state = s->next.state };
		if (train_weights_capture(s->j, &params))
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
	WAIT_WHILE(s, s->pending || s->busy || (s->want && !s->error));
	pthread_mutex_unlock(&s->lock);
	return train_saver_poll(s);
}

void train_saver_summary(struct train_saver *s)
{
	pthread_mutex_lock(&s->lock);
	printf("summary: %u checkpoint%s written by the writer thread in %.1fs%s%s, training held up %.2fs waiting for it\n",
	       s->count, s->count == 1 ? "" : "s", s->writing,
	       s->ring ? " from the device's snapshots" : "",
	       s->stored ? ", saved into the shared storage by the device" : "", s->waited);
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
		WAIT_WHILE(s, s->pending || s->busy);
		s->stop = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	wse_ring_close(s->ring);
	train_checkpoint_free(&s->next);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
