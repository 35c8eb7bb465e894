// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inference on the devices with the weights the job holds (trained, or
 * restored from a checkpoint): the test set's loss and accuracy (RUN
 * EVAL), and predictions for a file of samples (RUN PREDICT), in either
 * execution mode.
 *
 * Predictions go through one path: the samples, batch after batch, and
 * each sample's output handed to a writer. A classifier's writer prints
 * the class; another kind of output (the next token of a language model,
 * sampled over and over) is another writer on the same path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/*
 * @count samples of @ds from @first as data lies, @b at a time in chunks
 * of --chunk steps (a last short batch as a step of its own, if it can be
 * split between the systems), run as @kind; tallied into @t.
 * Returns the samples run, or -1.
 */
static int64_t run_all(struct train_job *j, struct train_steps *steps, uint32_t kind,
		       const struct wse_dataset *ds, uint32_t count, struct train_tally *t)
{
	uint32_t b = j->batch, full = count / b, last = count % b;
	int32_t *pred = t->predictions;

	for (uint32_t at = 0; at < full;) {
		uint32_t n = full - at < j->o->chunk ? full - at : j->o->chunk;

		t->predictions = pred ? pred + (size_t)at * b : NULL;
		if (train_steps_run(steps, kind, ds, NULL, at * b, n, b, t))
			return -1;
		at += n;
	}
	t->predictions = pred ? pred + (size_t)full * b : NULL;
	if (last >= j->n && train_steps_run(steps, kind, ds, NULL, full * b, 1, last, t))
		return -1;
	t->predictions = pred;
	return (int64_t)full * b + (last >= j->n ? last : 0);
}

int train_evaluate(struct train_job *j, struct train_steps *steps, uint32_t limit,
		   struct train_tally *t, uint32_t *samples)
{
	uint32_t n = j->test.count;
	int64_t done;

	if (limit && limit < n)
		n = limit;
	*t = (struct train_tally){ 0 };
	done = run_all(j, steps, WSE_RUN_EVAL, &j->test, n, t);
	if (done < 0)
		return -1;
	*samples = (uint32_t)done;
	return 0;
}

/* What a prediction writer does with each sample's output. */
struct predict_writer {
	const char *header;
	int (*sample)(FILE *f, uint32_t index, int32_t out);
};

static int write_class(FILE *f, uint32_t index, int32_t cls)
{
	return fprintf(f, "%u,%d\n", index, cls) < 0 ? -EIO : 0;
}

static const struct predict_writer class_writer = { "sample,class\n", write_class };

int train_predict(struct train_job *j, struct train_steps *steps)
{
	const struct train_opts *o = j->o;
	const struct predict_writer *w = &class_writer;
	struct train_tally t = { 0 };
	uint32_t n = j->test.count;
	FILE *f = stdout;
	struct wse_out out = { .fd = -1 };
	char err[512];
	int64_t done;
	int ret = 0;

	t.predictions = calloc(n ? n : 1, sizeof(*t.predictions));
	if (!t.predictions)
		return train_fail("out of memory for %u predictions", n);
	done = run_all(j, steps, WSE_RUN_PREDICT, &j->test, n, &t);
	if (done < 0) {
		free(t.predictions);
		return -1;
	}
	/* A file replaced whole, a FIFO or device written through, - standard output. */
	if (o->output && (wse_out_open(&out, o->output, WSE_OUT_STDOUT, err, sizeof(err)) ||
			  !(f = wse_out_stream(&out, err, sizeof(err))))) {
		if (out.fd >= 0)
			wse_out_abandon(&out);
		ret = train_fail("-o %s", err);
		free(t.predictions);
		return ret;
	}
	if (fputs(w->header, f) < 0)
		ret = -EIO;
	for (uint32_t i = 0; i < done && !ret; i++)
		ret = w->sample(f, i, t.predictions[i]);
	free(t.predictions);
	if (o->output) {
		if (ret) {
			wse_out_abandon(&out);
			return train_fail("writing the predictions to %s failed", o->output);
		}
		if (wse_out_commit(&out, err, sizeof(err)))
			return train_fail("writing the predictions failed: %s", err);
	} else if (ret || fflush(f)) {
		return train_fail("writing the predictions to stdout failed");
	}
	if (done < n)
		fprintf(stderr, "wsetrain: note: the last %u samples were left out: fewer than the %u systems\n",
			(uint32_t)(n - done), j->n);
	if (o->output && !o->quiet)
		fprintf(stderr, "wsetrain: %lld predictions -> %s\n", (long long)done, o->output);
	return 0;
}
