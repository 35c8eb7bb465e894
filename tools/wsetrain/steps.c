// SPDX-License-Identifier: GPL-2.0-only
/*
 * Steps go to the device in chunks: one RUN job of several steps. Within
 * a chunk the transfers of step i carry the samples of step i + 1 along
 * (double buffering: the device finds its next batch already there when
 * it finishes a step) and take step i's losses and predictions back, in
 * one libwse stream batch. The device is a system (layer pipelined) or an
 * appliance (either mode), whose coordinator spreads each batch over the
 * job's systems; with --input appliance its input workers read the
 * samples themselves and only the labels are gathered here, to count the
 * right answers. Predictions (RUN PREDICT) send no labels and take no
 * losses back; each sample's classes (one a row) are handed back in
 * order, and so are the logits of a program that has a logits stream: the
 * device puts them there on every PREDICT step, and a step waits for room
 * on that stream, so they must be read even when nobody wants them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* The transfers of one step: samples, labels, losses, predictions, logits. */
#define STEP_MAX_IO	5
/*
 * With the appliance's input, the results of this many steps are asked for
 * at once: half the device's output rings (4 batches), so it runs ahead
 * while the host reads, and the host's round trips per step are halved.
 */
#define FED_STEPS	2

struct train_steps {
	struct train_job *j;
	uint8_t *x[2];			/* two batches of samples: double buffering */
	int32_t *y[2];			/* FED_STEPS batches each */
	float *loss;			/* FED_STEPS batches of results */
	int32_t *pred;
	float *logits;			/* FED_STEPS batches of a PREDICT's logits, if the program has them */
	uint32_t logit_floats;		/* of one sample: rows x classes (0: no logits stream) */
	struct train_step_times times;
};

/*
 * Registers what the rings move with them, so the commands go as
 * fixed-buffer commands: the kernel pins the pages once instead of on every
 * step. Without it (e.g. no locked memory to spare) they go plain.
 */
static void register_buffers(struct train_steps *s)
{
	struct train_job *j = s->j;
	struct iovec in[4], out[2];

	for (int i = 0; i < 2; i++) {
		in[2 * i] = (struct iovec){ s->x[i], (size_t)j->batch * j->record };
		in[2 * i + 1] = (struct iovec){ s->y[i], (size_t)FED_STEPS * j->batch * j->rows * 4 };
	}
	out[0] = (struct iovec){ s->loss, (size_t)FED_STEPS * j->batch * 4 };
	out[1] = (struct iovec){ s->pred, (size_t)FED_STEPS * j->batch * j->rows * 4 };
	if (wse_ring_register(j->sys[0].in, in, 4) || wse_ring_register(j->sys[0].out, out, 2))
		fprintf(stderr, "wsetrain: note: %s: buffers not registered with io_uring; transfers go through plain buffers\n",
			j->sys[0].name);
}

int train_steps_open(struct train_job *j, struct train_steps **out)
{
	struct train_steps *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return train_fail("out of memory");
	s->j = j;
	for (int i = 0; i < 2; i++) {
		s->x[i] = malloc((size_t)j->batch * j->record);
		s->y[i] = malloc((size_t)FED_STEPS * j->batch * j->rows * 4);
	}
	s->loss = malloc((size_t)FED_STEPS * j->batch * 4);
	s->pred = malloc((size_t)FED_STEPS * j->batch * j->rows * 4);
	if (j->ids.logits >= 0) {
		s->logit_floats = j->rows * wsep_classes(j->p);
		s->logits = malloc((size_t)FED_STEPS * j->batch * s->logit_floats * sizeof(float));
	}
	if (!s->x[0] || !s->x[1] || !s->y[0] || !s->y[1] || !s->loss || !s->pred ||
	    (s->logit_floats && !s->logits)) {
		train_steps_close(s);
		return train_fail("out of memory");
	}
	register_buffers(s);
	*out = s;
	return 0;
}

void train_steps_close(struct train_steps *s)
{
	if (!s)
		return;
	for (int i = 0; i < 2; i++) {
		free(s->x[i]);
		free(s->y[i]);
	}
	free(s->loss);
	free(s->pred);
	free(s->logits);
	free(s);
}

const struct train_step_times *train_steps_times(const struct train_steps *s)
{
	return &s->times;
}

/*
 * One step of @kind's transfers: batch @send's samples and labels (-1:
 * none; with the appliance's input, none are sent; predicting, no labels),
 * and @collect samples' results (predicting, no losses).
 */
static int step_io(struct train_steps *s, uint32_t kind, int send, uint32_t send_count,
		   uint32_t collect)
{
	struct train_job *j = s->j;
	struct train_system *sys = &j->sys[0];
	struct wse_stream_io io[STEP_MAX_IO];
	bool labelled = kind != WSE_RUN_PREDICT;
	unsigned int n = 0;
	int ret;

	if (send >= 0 && !j->o->input_appliance) {
		io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_WRITE, (uint32_t)j->ids.samples,
						  j->record, s->x[send],
						  (size_t)send_count * j->record };
		if (labelled)
			io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_WRITE,
							  (uint32_t)j->ids.labels, j->rows * 4,
							  s->y[send], (size_t)send_count * j->rows * 4 };
	}
	if (collect) {
		if (labelled)
			io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_READ,
							  (uint32_t)j->ids.losses, 4, s->loss,
							  (size_t)collect * 4 };
		io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_READ,
						  (uint32_t)j->ids.predictions, j->rows * 4, s->pred,
						  (size_t)collect * j->rows * 4 };
		if (!labelled && s->logit_floats)
			io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_READ,
							  (uint32_t)j->ids.logits,
							  s->logit_floats * 4, s->logits,
							  (size_t)collect * s->logit_floats * 4 };
	}
	ret = wse_stream_batch(sys->in, sys->out, TRAIN_SLOT, io, n);
	if (ret == -ETIMEDOUT)
		train_fail("%s: RUN %s: a step's samples or results: %s (%u s): the RUN is stuck or the firmware is gone; 'wsectl status' shows the link, the firmware's log says why",
			   sys->name, train_run_kind_name(kind), wse_strerror(ret),
			   TRAIN_XFER_TIMEOUT_MS / 1000);
	else if (ret)
		train_fail("%s: RUN %s: a step's samples or results: %s", sys->name,
			   train_run_kind_name(kind), wse_strerror(ret));
	if (ret)
		train_system_why(sys);
	return ret;
}

/* Batch @b of the data at @first (in @order's order) into buffer @buf (labels only: @labels_only). */
static void gather(struct train_steps *s, const struct wse_dataset *ds,
		   const struct train_order *order, uint32_t first, uint32_t b, int buf)
{
	const uint32_t *perm = order ? order->perm : NULL;

	if (s->j->tokens) {
		train_text_gather(s->j, ds == &s->j->test, perm, first, b, s->x[buf], s->y[buf]);
		return;
	}
	if (!s->j->o->input_appliance) {
		train_gather(ds, perm, first, b, s->x[buf], s->y[buf]);
		return;
	}
	for (uint32_t i = 0; ds->labels && i < b; i++)
		s->y[buf][i] = ds->labels[perm ? perm[first + i] : first + i];
}

/* With --input appliance: where the appliance's input workers take the coming samples from. */
static int name_input(struct train_steps *s, const struct wse_dataset *ds,
		      const struct train_order *order, uint32_t first)
{
	struct train_job *j = s->j;
	const char *slash = strrchr(j->o->data_dir, '/');
	struct wse_input in = {
		.dataset = true, .path = slash && slash[1] ? slash + 1 : j->o->data_dir,
		.split = ds == &j->train ? "train" : "t10k", .shuffle = order != NULL,
		.seed = order ? order->seed : 0, .epoch = order ? order->epoch : 0,
		.first = first, .count = order ? order->n : 0,
	};
	int ret = wse_appliance_input(j->sys[0].out, TRAIN_SLOT, &in);

	if (ret)
		return train_fail("%s: its input workers cannot read %s/%s: %s (the appliance's --data-root must hold the dataset directory %s)",
				  j->sys[0].name, in.path, in.split, wse_strerror(ret), in.path);
	return 0;
}

/*
 * Losses and correct predictions of the step just collected, or (@labelled
 * false) the predictions alone: the step's samples in order, from sample
 * @at of the tally's arrays.
 */
static void tally(struct train_steps *s, uint32_t count, const int32_t *labels, bool labelled,
		  size_t at, struct train_tally *t)
{
	uint32_t rows = s->j->rows;

	for (uint32_t i = 0; i < count; i++) {
		uint32_t right = 0;

		if (labelled && s->j->mlm) {
			/* Masked LM: a sample weighs its predicted rows (its loss is their mean). */
			uint32_t k = train_text_counted(s->j, labels + (size_t)i * rows);

			for (uint32_t r = i * rows; r < (i + 1) * rows; r++)
				right += s->pred[r] == labels[r];
			t->loss += (double)s->loss[i] * k / rows;
			t->right += (double)right / rows;
			t->weight += (double)k / rows;
		} else if (labelled) {
			t->loss += s->loss[i];
			for (uint32_t r = i * rows; r < (i + 1) * rows; r++)
				right += s->pred[r] == labels[r];
			t->right += (double)right / rows;
		}
	}
	if (t->predictions)
		memcpy(t->predictions + at * rows, s->pred, (size_t)count * rows * sizeof(int32_t));
	if (t->logits && s->logit_floats)
		memcpy(t->logits + at * s->logit_floats, s->logits,
		       (size_t)count * s->logit_floats * sizeof(float));
}

/*
 * With the appliance's input nothing goes out: the results of FED_STEPS
 * steps come back in one read (a short answer is carried on), their
 * labels gathered here to count the right answers.
 */
static int run_fed(struct train_steps *s, uint32_t kind, const struct wse_dataset *ds,
		   const struct train_order *order, uint32_t first, uint32_t steps, uint32_t b,
		   struct train_tally *tally_out)
{
	struct train_job *j = s->j;

	for (uint32_t i = 0; i < steps;) {
		uint32_t k = steps - i < FED_STEPS ? steps - i : FED_STEPS;
		double t0;

		/* The k steps' samples lie one after another in the order. */
		gather(s, ds, order, first + i * b, k * b, 0);
		t0 = train_now();
		if (step_io(s, kind, -1, 0, k * b))
			return -1;
		s->times.io += train_now() - t0;
		tally(s, k * b, s->y[0], kind != WSE_RUN_PREDICT, (size_t)i * b, tally_out);
		if (kind == WSE_RUN_TRAIN)
			s->times.trained += k * b;
		i += k;
	}
	return train_run_wait(&j->sys[0]);
}

int train_steps_run(struct train_steps *s, uint32_t kind, const struct wse_dataset *ds,
		    const struct train_order *order, uint32_t first, uint32_t steps, uint32_t b,
		    struct train_tally *tally_out)
{
	struct train_job *j = s->j;
	double t0;

	if (j->o->input_appliance && name_input(s, ds, order, first))
		return -1;
	if (train_run_submit(&j->sys[0], kind, steps, b))
		return -1;
	if (j->o->input_appliance)
		return run_fed(s, kind, ds, order, first, steps, b, tally_out);
	/* Step 0's samples go ahead of everything. */
	gather(s, ds, order, first, b, 0);
	if (step_io(s, kind, 0, b, 0))
		return -1;
	for (uint32_t i = 0; i < steps; i++) {
		int cur = (int)(i % 2), next = !cur, send = -1;

		if (i + 1 < steps) {
			gather(s, ds, order, first + (i + 1) * b, b, next);
			send = next;
		}
		t0 = train_now();
		if (step_io(s, kind, send, b, b))
			return -1;
		s->times.io += train_now() - t0;
		tally(s, b, s->y[cur], kind != WSE_RUN_PREDICT, (size_t)i * b, tally_out);
		if (kind == WSE_RUN_TRAIN)
			s->times.trained += b;
	}
	return train_run_wait(&j->sys[0]);
}
