// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run: epochs of training steps and an evaluation after each.
 *
 * Steps go to the devices in chunks, one RUN job of several steps per
 * system. Within a chunk, the transfers of step i carry the samples of
 * step i + 1 along (double buffering: the device finds its next batch
 * already there when it finishes a step) and take step i's losses and
 * predictions back. In weight streaming they also carry every layer's
 * weights from MemoryX to every system (SwarmX's broadcast) and take each
 * system's gradients back; SwarmX sums them weighted by the systems'
 * shares of the batch, and MemoryX applies the update before the next step.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stepio.h"
#include "train.h"
#include "wse_link.h"
#include "wse/engine_wsep.h"

struct member_buf {
	uint8_t *x[2];			/* two batches of samples: double buffering */
	int32_t *y[2];
	float *loss;
	int32_t *pred;
	float *grad[WSEP_MAX_LAYERS];
};

/* What every system does in the current step (read by the SwarmX members). */
struct step_plan {
	uint32_t kind;			/* WSE_LINK_RUN_TRAIN or _EVAL */
	int send;			/* buffer (0/1) of samples to send, -1: none */
	uint32_t send_count[TRAIN_MAX_SYSTEMS];
	bool collect;			/* read the step's losses and predictions */
	uint32_t collect_count[TRAIN_MAX_SYSTEMS];
};

struct trainer {
	const struct train_opts *o;
	struct wsep_program *p;
	void *image;
	size_t image_len;
	struct train_streams ids;
	bool ws;
	unsigned int n;			/* systems */
	struct train_system sys[TRAIN_MAX_SYSTEMS];
	struct member_buf mb[TRAIN_MAX_SYSTEMS];
	struct wse_swarmx *sx;
	struct wse_memoryx *mx;
	struct wse_dataset train, test;
	struct train_order order;
	struct train_metrics *metrics;
	uint32_t B, classes, record;
	struct step_plan plan;
	double scale[TRAIN_MAX_SYSTEMS];	/* each system's share of the batch */
	/* Progress. */
	uint64_t step;			/* optimizer steps done */
	uint32_t epoch, position;
	uint64_t steps_total;		/* what this run is to reach */
	uint64_t samples_done;		/* trained in this process */
	double t_io, t_update;		/* where the host's time went */
	double t_start, last_test_acc, last_test_loss;
	bool have_test;
	/* The current report window. */
	double win_loss, win_t0;
	uint64_t win_right, win_samples;
};

double train_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* System m's share of a batch of @b samples, and where it starts. */
static uint32_t shard(const struct trainer *t, uint32_t b, unsigned int m, uint32_t *first)
{
	uint32_t base = b / t->n, extra = b % t->n;

	*first = m * base + (m < extra ? m : extra);
	return base + (m < extra);
}

/* The work of one system in one step, run on all of them at once. */
static int member_step(unsigned int m, void *arg)
{
	struct trainer *t = arg;
	const struct step_plan *pl = &t->plan;
	struct train_system *s = &t->sys[m];
	struct member_buf *mb = &t->mb[m];
	struct io_cmd c[IO_MAX_CMDS];
	uint32_t L = t->p->num_layers;
	unsigned int n = 0;
	int ret;

	if (pl->send >= 0 && pl->send_count[m]) {
		c[n++] = (struct io_cmd){ DRM_WSE_OP_STREAM_WRITE, (uint32_t)t->ids.samples, t->record,
					  mb->x[pl->send], pl->send_count[m] * t->record };
		c[n++] = (struct io_cmd){ DRM_WSE_OP_STREAM_WRITE, (uint32_t)t->ids.labels, 4,
					  mb->y[pl->send], pl->send_count[m] * 4 };
	}
	if (t->ws && pl->collect) {
		for (uint32_t i = 0; i < (pl->kind == WSE_LINK_RUN_TRAIN ? 2 * L : L); i++) {
			uint32_t k = i < L ? i : 2 * L - 1 - i;
			size_t floats;
			const float *w = wse_memoryx_layer(t->mx, k, &floats);

			c[n++] = (struct io_cmd){ DRM_WSE_OP_STREAM_WRITE, (uint32_t)t->ids.weights[k],
						  4, (void *)w, (uint32_t)(floats * 4) };
		}
		if (pl->kind == WSE_LINK_RUN_TRAIN) {
			for (uint32_t k = L; k-- > 0;) {
				size_t floats;

				wse_memoryx_layer(t->mx, k, &floats);
				c[n++] = (struct io_cmd){ DRM_WSE_OP_STREAM_READ,
							  (uint32_t)t->ids.grads[k], 4, mb->grad[k],
							  (uint32_t)(floats * 4) };
			}
		}
	}
	if (pl->collect) {
		c[n++] = (struct io_cmd){ DRM_WSE_OP_STREAM_READ, (uint32_t)t->ids.losses, 4,
					  mb->loss, pl->collect_count[m] * 4 };
		c[n++] = (struct io_cmd){ DRM_WSE_OP_STREAM_READ, (uint32_t)t->ids.predictions, 4,
					  mb->pred, pl->collect_count[m] * 4 };
	}
	ret = io_run(s, c, n);
	if (ret)
		train_fail("%s: %s", s->name, wse_strerror(ret));
	return ret;
}

/* Gathers batch @b of the data at @first (in @perm's order) into buffer @buf of every system. */
static void gather(struct trainer *t, const struct wse_dataset *ds, const uint32_t *perm,
		   uint32_t first, uint32_t b, int buf)
{
	for (unsigned int m = 0; m < t->n; m++) {
		uint32_t at, cnt = shard(t, b, m, &at);

		train_gather(ds, perm, first + at, cnt, t->mb[m].x[buf], t->mb[m].y[buf]);
		t->plan.send_count[m] = cnt;
	}
}

/*
 * SwarmX's reduction and MemoryX's update. Both work element by element,
 * so every system's thread takes a slice of every layer: the same bits as
 * one thread doing it all, in a fraction of the time.
 */
static int member_update(unsigned int m, void *arg)
{
	struct trainer *t = arg;
	float *part[TRAIN_MAX_SYSTEMS];

	for (uint32_t k = 0; k < t->p->num_layers; k++) {
		size_t floats, first, count;

		wse_memoryx_layer(t->mx, k, &floats);
		first = floats * m / t->n;
		count = floats * (m + 1) / t->n - first;
		for (unsigned int i = 0; i < t->n; i++)
			part[i] = t->mb[i].grad[k] + first;
		wse_swarmx_reduce(t->sx, wse_memoryx_grad(t->mx, k) + first, part, t->scale, count);
		if (wse_memoryx_update_slice(t->mx, k, t->step + 1, first, count))
			return train_fail("MemoryX: the update of layer %u failed", k);
	}
	return 0;
}

static int update(struct trainer *t, uint32_t b)
{
	for (unsigned int m = 0; m < t->n; m++) {
		uint32_t at;

		t->scale[m] = (double)shard(t, b, m, &at) / b;
	}
	return wse_swarmx_each(t->sx, member_update, t) ? -1 : 0;
}

/* Losses and correct predictions of the step just collected. */
static void tally(struct trainer *t, const int32_t *labels_of[], double *loss, uint64_t *right)
{
	for (unsigned int m = 0; m < t->n; m++) {
		for (uint32_t i = 0; i < t->plan.collect_count[m]; i++) {
			*loss += t->mb[m].loss[i];
			*right += t->mb[m].pred[i] == labels_of[m][i];
		}
	}
}

static int submit_runs(struct trainer *t, uint32_t kind, uint32_t steps, uint32_t b)
{
	for (unsigned int m = 0; m < t->n; m++) {
		uint32_t at, cnt = shard(t, b, m, &at);

		if (train_run_submit(&t->sys[m], kind, steps, cnt))
			return -1;
	}
	return 0;
}

static int wait_runs(struct trainer *t)
{
	int ret = 0;

	for (unsigned int m = 0; m < t->n; m++)
		if (t->sys[m].run_pending && train_run_wait(&t->sys[m]))
			ret = -1;
	return ret;
}

/*
 * @steps steps of @b samples from @ds, starting at sample @first of
 * @perm's order. Training steps also update the weights (and, with
 * @progress, count in the report window).
 */
static int chunk(struct trainer *t, uint32_t kind, const struct wse_dataset *ds,
		 const uint32_t *perm, uint32_t first, uint32_t steps, uint32_t b, double *loss,
		 uint64_t *right)
{
	const int32_t *labels_of[TRAIN_MAX_SYSTEMS];
	double t0, t1;

	if (submit_runs(t, kind, steps, b))
		return -1;
	/* Step 0's samples go ahead of everything. */
	t->plan = (struct step_plan){ .kind = kind, .send = 0, .collect = false };
	gather(t, ds, perm, first, b, 0);
	if (wse_swarmx_each(t->sx, member_step, t))
		return -1;
	for (uint32_t i = 0; i < steps; i++) {
		int cur = (int)(i % 2), next = !cur;

		for (unsigned int m = 0; m < t->n; m++) {
			uint32_t at;

			t->plan.collect_count[m] = shard(t, b, m, &at);
			labels_of[m] = t->mb[m].y[cur];
		}
		t->plan.collect = true;
		t->plan.send = -1;
		if (i + 1 < steps) {
			gather(t, ds, perm, first + (i + 1) * b, b, next);
			t->plan.send = next;
		}
		t0 = train_now();
		if (wse_swarmx_each(t->sx, member_step, t))
			return -1;
		t1 = train_now();
		t->t_io += t1 - t0;
		tally(t, labels_of, loss, right);
		if (kind == WSE_LINK_RUN_TRAIN) {
			if (t->ws && update(t, b))
				return -1;
			t->t_update += train_now() - t1;
			t->step++;
			t->samples_done += b;
		}
	}
	return wait_runs(t);
}

static void fmt_time(double s, char *buf, size_t len)
{
	if (s < 0 || !isfinite(s))
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static void report(struct trainer *t, uint32_t steps_per_epoch)
{
	double now = train_now(), rate, loss, acc;
	char eta[32];

	if (!t->win_samples)
		return;
	rate = t->win_samples / (now - t->win_t0 > 1e-9 ? now - t->win_t0 : 1e-9);
	loss = t->win_loss / t->win_samples;
	acc = (double)t->win_right / t->win_samples;
	fmt_time((double)(t->steps_total - t->step) * t->B / rate, eta, sizeof(eta));
	if (!t->o->quiet) {
		printf("epoch %u/%u  step %5llu/%llu  loss %.4f  accuracy %.3f  %8.0f samples/s  ETA %s\n",
		       t->epoch + 1, t->o->epochs,
		       (unsigned long long)(t->step - (uint64_t)t->epoch * steps_per_epoch),
		       (unsigned long long)steps_per_epoch, loss, acc, rate, eta);
		fflush(stdout);
	}
	train_metrics_train(t->metrics, t->step, t->epoch, loss, acc, rate);
	t->win_loss = 0;
	t->win_right = 0;
	t->win_samples = 0;
	t->win_t0 = now;
}

/* The test set, forward only: loss and accuracy. */
static int evaluate(struct trainer *t)
{
	uint32_t n = t->test.count, b = t->B, full = n / b, last = n % b;
	double loss = 0, t0 = train_now();
	uint64_t right = 0;

	if (t->o->test_limit && t->o->test_limit < n) {
		n = t->o->test_limit;
		full = n / b;
		last = n % b;
	}
	for (uint32_t s = 0; s < full;) {
		uint32_t steps = full - s < t->o->chunk ? full - s : t->o->chunk;

		if (chunk(t, WSE_LINK_RUN_EVAL, &t->test, NULL, s * b, steps, b, &loss, &right))
			return -1;
		s += steps;
	}
	if (last >= t->n && chunk(t, WSE_LINK_RUN_EVAL, &t->test, NULL, full * b, 1, last, &loss,
				  &right))
		return -1;
	if (last < t->n)
		n -= last;
	t->last_test_loss = loss / n;
	t->last_test_acc = (double)right / n;
	t->have_test = true;
	if (!t->o->quiet) {
		printf("epoch %u/%u  test: loss %.4f  accuracy %.4f  (%u samples, %.1fs)\n",
		       t->epoch + 1, t->o->epochs, t->last_test_loss, t->last_test_acc, n,
		       train_now() - t0);
		fflush(stdout);
	}
	train_metrics_test(t->metrics, t->step, t->epoch, t->last_test_loss, t->last_test_acc);
	return 0;
}

/* Optimizer state arrays the program's optimizer keeps beside the weights. */
static uint32_t state_arrays(const struct wsep_program *p)
{
	struct engine_optim opt;

	/* A loaded program's optimizer is one the engine knows. */
	return engine_optim_from_wsep(&p->opt, &opt) ? 0 : engine_optim_state_arrays(opt.kind);
}

static int checkpoint(struct trainer *t)
{
	struct train_checkpoint c = {
		.mode = t->p->mode, .systems = t->n, .fingerprint = train_fingerprint(t->p),
		.step = t->step, .epoch = t->epoch, .position = t->position,
		.shuffle_seed = t->order.seed,
		.floats = wsep_total_params(t->p->layers, t->p->num_layers),
	};
	size_t sbytes;
	uint8_t *state;
	int ret = -1;

	snprintf(c.model, sizeof(c.model), "%s", t->p->model_name);
	c.state_arrays = state_arrays(t->p);
	sbytes = (size_t)c.state_arrays * c.floats * 4;
	c.weights = malloc(c.floats * 4);
	state = malloc(sbytes + 8);
	c.state = (float *)state;
	if (!c.weights || !state) {
		train_fail("out of memory for a checkpoint");
		goto out;
	}
	if (t->ws) {
		wse_memoryx_get(t->mx, c.weights, c.state);
	} else {
		uint64_t dev_step;

		/* The resident weights and the optimizer's state, with its step count. */
		if (train_params_read(&t->sys[0], WSE_LINK_PARAMS_WEIGHTS, c.weights, c.floats * 4) ||
		    train_params_read(&t->sys[0], WSE_LINK_PARAMS_OPT_STATE, state, sbytes + 8))
			goto out;
		memcpy(&dev_step, state + sbytes, 8);
		if (dev_step != t->step) {
			train_fail("%s has taken %llu optimizer steps, this run %llu: not checkpointing an inconsistent state",
				   t->sys[0].name, (unsigned long long)dev_step,
				   (unsigned long long)t->step);
			goto out;
		}
	}
	ret = train_checkpoint_save(t->o->checkpoint, &c);
	if (!ret && !t->o->quiet)
		printf("checkpoint: step %llu -> %s\n", (unsigned long long)t->step, t->o->checkpoint);
out:
	free(c.weights);
	free(state);
	return ret;
}

static int resume(struct trainer *t)
{
	struct train_checkpoint c;
	uint64_t floats = wsep_total_params(t->p->layers, t->p->num_layers);
	char err[512];
	int ret;

	ret = train_checkpoint_load(t->o->resume, &c, err, sizeof(err));
	if (ret)
		return train_fail("--resume: %s", err);
	ret = -1;
	if (c.fingerprint != train_fingerprint(t->p) || c.floats != floats ||
	    c.state_arrays != state_arrays(t->p)) {
		train_fail("--resume %s: the checkpoint is of model %s with other layers, optimizer or batch than %s",
			   t->o->resume, c.model, t->p->model_name);
		goto out;
	}
	if (c.position > t->order.n || c.epoch >= t->o->epochs) {
		train_fail("--resume %s: it is at epoch %u, sample %u, beyond this run's %u epochs of %u samples",
			   t->o->resume, c.epoch + 1, c.position, t->o->epochs, t->order.n);
		goto out;
	}
	if (c.systems != t->n && !t->o->quiet)
		printf("note: the checkpoint was written on %u systems, this run has %u: the gradients are summed in another order\n",
		       c.systems, t->n);
	t->step = c.step;
	t->epoch = c.epoch;
	t->position = c.position;
	t->order.seed = c.shuffle_seed;
	if (t->ws) {
		if (wse_memoryx_set(t->mx, c.weights, c.state)) {
			train_fail("--resume %s: the checkpoint holds non-finite values", t->o->resume);
			goto out;
		}
	} else {
		size_t sbytes = (size_t)c.state_arrays * c.floats * 4;
		uint8_t *state = malloc(sbytes + 8);

		if (!state) {
			train_fail("out of memory");
			goto out;
		}
		memcpy(state, c.state, sbytes);
		memcpy(state + sbytes, &c.step, 8);
		ret = train_params_write(&t->sys[0], WSE_LINK_PARAMS_WEIGHTS, c.weights, floats * 4);
		if (!ret)
			ret = train_params_write(&t->sys[0], WSE_LINK_PARAMS_OPT_STATE, state,
						 sbytes + 8);
		free(state);
		if (ret)
			goto out;
	}
	if (!t->o->quiet)
		printf("resumed from %s: step %llu, epoch %u, %u samples into it\n", t->o->resume,
		       (unsigned long long)c.step, c.epoch + 1, c.position);
	ret = 0;
out:
	train_checkpoint_free(&c);
	return ret;
}

/* One epoch's training from t->position, stopping early at t->steps_total. */
static int train_epoch(struct trainer *t, uint32_t steps_per_epoch)
{
	const struct train_opts *o = t->o;
	uint32_t n = t->order.n;

	train_order_epoch(&t->order, t->epoch);
	while (t->position < n && t->step < t->steps_total) {
		uint32_t left = n - t->position, b = left < t->B ? left : t->B;
		uint64_t steps = b == t->B ? left / t->B : 1;
		double loss = 0;
		uint64_t right = 0;

		if (b < t->n)
			break;	/* a remnant smaller than the number of systems */
		if (steps > o->chunk)
			steps = o->chunk;
		if (steps > t->steps_total - t->step)
			steps = t->steps_total - t->step;
		if (o->checkpoint_every && steps > o->checkpoint_every - t->step % o->checkpoint_every)
			steps = o->checkpoint_every - t->step % o->checkpoint_every;
		if (steps > o->report - t->step % o->report)
			steps = o->report - t->step % o->report;
		if (chunk(t, WSE_LINK_RUN_TRAIN, &t->train, t->order.perm, t->position,
			  (uint32_t)steps, b, &loss, &right))
			return -1;
		t->position += (uint32_t)steps * b;
		t->win_loss += loss;
		t->win_right += right;
		t->win_samples += steps * b;
		if (t->step % o->report == 0 || t->position >= n || t->step == t->steps_total)
			report(t, steps_per_epoch);
		if (o->checkpoint_every && t->step % o->checkpoint_every == 0 && checkpoint(t))
			return -1;
	}
	return 0;
}

/*
 * Registers what a system's rings move with them, so the commands go as
 * fixed-buffer commands: the kernel pins the pages once instead of on every
 * step. Without it (e.g. no locked memory to spare) they go plain.
 */
static void register_buffers(struct trainer *t, unsigned int m)
{
	struct member_buf *mb = &t->mb[m];
	uint32_t share = t->B / t->n + 1;
	struct iovec in[5], out[2 + WSEP_MAX_LAYERS];
	unsigned int nin = 0, nout = 0;

	for (int i = 0; i < 2; i++) {
		in[nin++] = (struct iovec){ mb->x[i], (size_t)share * t->record };
		in[nin++] = (struct iovec){ mb->y[i], (size_t)share * 4 };
	}
	if (t->ws)
		in[nin++] = (struct iovec){ (void *)wse_memoryx_weights(t->mx),
					    wse_memoryx_floats(t->mx) * 4 };
	out[nout++] = (struct iovec){ mb->loss, (size_t)share * 4 };
	out[nout++] = (struct iovec){ mb->pred, (size_t)share * 4 };
	for (uint32_t k = 0; t->ws && k < t->p->num_layers; k++)
		out[nout++] = (struct iovec){ mb->grad[k],
					      wsep_layer_params(&t->p->layers[k]) * 4 };
	if (wse_ring_register(t->sys[m].in, in, nin) ||
	    wse_ring_register(t->sys[m].out, out, nout))
		fprintf(stderr, "wsetrain: note: %s: buffers not registered with io_uring; transfers go through plain buffers\n",
			t->sys[m].name);
}

static int setup(struct trainer *t)
{
	const struct train_opts *o = t->o;
	char specs[TRAIN_MAX_SYSTEMS][16], err[512];
	uint32_t L;
	int ret;

	if (wse_dataset_load_dir(o->data_dir, "train", &t->train, err, sizeof(err)) ||
	    (!o->no_eval && wse_dataset_load_dir(o->data_dir, "t10k", &t->test, err, sizeof(err))))
		return train_fail("the dataset: %s (Fashion-MNIST: apt install dataset-fashion-mnist; or give --data DIR)",
				  err);
	if (train_pick_devices(o, specs))
		return -1;
	for (unsigned int m = 0; m < o->systems; m++) {
		if (train_system_open(&t->sys[m], specs[m]))
			return -1;
		t->n = m + 1;
	}
	if (train_program(o, &t->sys[0].info.dev, &t->image, &t->image_len, &t->p))
		return -1;
	L = t->p->num_layers;
	t->B = t->p->batch;
	t->classes = t->p->layers[L - 1].out;
	t->ws = t->p->mode == WSEP_MODE_WEIGHT_STREAMING;
	if (train_find_streams(t->p, &t->ids))
		return -1;
	if (t->p->input_type != WSEP_ELEM_U8)
		return train_fail("%s takes %s inputs; wsetrain feeds IDX bytes (declare 'input N u8')",
				  t->p->model_name, "f32");
	t->record = t->p->input_dim;
	if (t->train.item != t->p->input_dim || (!o->no_eval && t->test.item != t->p->input_dim))
		return train_fail("the dataset's images are %ux%u = %u values; %s takes %u inputs",
				  t->train.rows, t->train.cols, t->train.item, t->p->model_name,
				  t->p->input_dim);
	if (t->train.classes > t->classes || (!o->no_eval && t->test.classes > t->classes))
		return train_fail("the dataset has %u classes; %s has %u outputs",
				  t->train.classes > t->test.classes ? t->train.classes :
								     t->test.classes,
				  t->p->model_name, t->classes);
	if (t->n > 1 && !t->ws)
		return train_fail("the program is layer-pipelined; training on %u systems needs weight streaming (--mode weight_streaming)",
				  t->n);
	if (t->B < t->n)
		return train_fail("a batch of %u cannot be split between %u systems", t->B, t->n);
	for (unsigned int m = 0; m < t->n; m++)
		if (train_system_load(&t->sys[m], t->image, t->image_len))
			return -1;
	if (t->ws && (ret = wse_memoryx_create(t->p, &t->mx)))
		return train_fail("MemoryX cannot hold %s: %s", t->p->model_name, strerror(-ret));
	ret = wse_swarmx_create(t->n, &t->sx);
	if (ret)
		return train_fail("SwarmX: %s", strerror(-ret));
	for (unsigned int m = 0; m < t->n; m++) {
		struct member_buf *mb = &t->mb[m];
		uint32_t share = t->B / t->n + 1;

		for (int i = 0; i < 2; i++) {
			mb->x[i] = malloc((size_t)share * t->record);
			mb->y[i] = malloc((size_t)share * 4);
			if (!mb->x[i] || !mb->y[i])
				return train_fail("out of memory");
		}
		mb->loss = malloc((size_t)share * 4);
		mb->pred = malloc((size_t)share * 4);
		if (!mb->loss || !mb->pred)
			return train_fail("out of memory");
		for (uint32_t k = 0; t->ws && k < L; k++) {
			mb->grad[k] = malloc(wsep_layer_params(&t->p->layers[k]) * 4);
			if (!mb->grad[k])
				return train_fail("out of memory");
		}
	}
	for (unsigned int m = 0; m < t->n; m++)
		register_buffers(t, m);
	ret = train_order_init(&t->order, o->train_limit && o->train_limit < t->train.count ?
				       o->train_limit : t->train.count,
			       o->seed_set ? o->seed : t->p->seed);
	if (ret)
		return train_fail("out of memory");
	if (train_metrics_open(o, &t->metrics))
		return -1;
	if (!o->quiet) {
		printf("wsetrain: %s, %s on %u system%s (%s), batch %u, %u training and %u test samples\n",
		       t->p->model_name, wsep_mode_name(t->p->mode), t->n, t->n == 1 ? "" : "s",
		       t->sys[0].name, t->B, t->order.n, o->no_eval ? 0 : t->test.count);
		fflush(stdout);
	}
	return 0;
}

static void teardown(struct trainer *t)
{
	for (unsigned int m = 0; m < t->n; m++) {
		struct member_buf *mb = &t->mb[m];

		train_system_close(&t->sys[m]);
		for (int i = 0; i < 2; i++) {
			free(mb->x[i]);
			free(mb->y[i]);
		}
		free(mb->loss);
		free(mb->pred);
		for (uint32_t k = 0; k < WSEP_MAX_LAYERS; k++)
			free(mb->grad[k]);
	}
	wse_swarmx_destroy(t->sx);
	wse_memoryx_destroy(t->mx);
	train_order_free(&t->order);
	wse_dataset_free(&t->train);
	wse_dataset_free(&t->test);
	wsep_program_free(t->p);
	free(t->image);
}

static void summary(struct trainer *t, double wall, uint64_t samples)
{
	uint64_t cycles = 0, est = 0;

	for (unsigned int m = 0; m < t->n; m++) {
		cycles += t->sys[m].cycles;
		est += t->sys[m].est_cycles;
	}
	printf("summary: %s, %s on %u system%s: trained to step %llu, %llu samples in %.1fs, %.0f samples/s",
	       t->p->model_name, wsep_mode_name(t->p->mode), t->n, t->n == 1 ? "" : "s",
	       (unsigned long long)t->step, (unsigned long long)samples, wall,
	       wall > 0 ? samples / wall : 0.0);
	if (t->have_test)
		printf(", test accuracy %.4f (loss %.4f)", t->last_test_acc, t->last_test_loss);
	printf("\nsummary: host time in transfers %.1fs, in %s %.1fs; device cycles modelled %llu, compiler estimate %llu\n",
	       t->t_io, t->ws ? "MemoryX updates" : "bookkeeping", t->t_update,
	       (unsigned long long)cycles, (unsigned long long)est);
	fflush(stdout);
}

int train_run(const struct train_opts *o)
{
	struct trainer *t = calloc(1, sizeof(*t));
	uint32_t steps_per_epoch, used;
	uint64_t start_step;
	double wall;
	int ret = -1;

	if (!t)
		return train_fail("out of memory");
	t->o = o;
	if (setup(t))
		goto out;
	steps_per_epoch = t->order.n / t->B + (t->order.n % t->B >= t->n);
	t->steps_total = (uint64_t)steps_per_epoch * o->epochs;
	if (o->max_steps && o->max_steps < t->steps_total)
		t->steps_total = o->max_steps;
	if (o->resume && resume(t))
		goto out;
	start_step = t->step;
	t->t_start = train_now();
	t->win_t0 = t->t_start;
	used = t->order.n - (t->order.n % t->B < t->n ? t->order.n % t->B : 0);
	while (t->epoch < o->epochs && t->step < t->steps_total) {
		if (train_epoch(t, steps_per_epoch))
			goto out;
		if (t->position < used)
			break;	/* stopped by --steps inside the epoch */
		if (!o->no_eval && evaluate(t))
			goto out;
		t->epoch++;
		t->position = 0;
	}
	/* Stopped inside an epoch: still say how good the model is. */
	if (!o->no_eval && !t->have_test && t->step > start_step && evaluate(t))
		goto out;
	if (o->checkpoint && checkpoint(t))
		goto out;
	wall = train_now() - t->t_start;
	summary(t, wall, t->samples_done);
	ret = 0;
	if (o->expect_accuracy >= 0 && (!t->have_test || t->last_test_acc < o->expect_accuracy))
		ret = train_fail("the test accuracy %.4f is below the expected %.4f",
				 t->have_test ? t->last_test_acc : 0.0, o->expect_accuracy);
out:
	if (ret && o->checkpoint)
		fprintf(stderr, "wsetrain: the last checkpoint written (%s), if any, is intact: continue with --resume %s\n",
			o->checkpoint, o->checkpoint);
	if (t->metrics && train_metrics_close(t->metrics) && !ret)
		ret = -1;
	teardown(t);
	free(t);
	return ret;
}
