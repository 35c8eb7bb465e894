// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inference on the devices with the weights the job holds (trained, or
 * restored from a checkpoint): the test set's loss and accuracy (RUN
 * EVAL), and predictions for a file of samples (RUN PREDICT), in either
 * execution mode.
 *
 * Predictions go through one path: the samples, batch after batch, and
 * each sample's output handed to a writer. A classifier's writer prints
 * the class, and a graph program's the logits beside it; a program over
 * tokens, the likeliest next token at every position of each window
 * (sampling characters one after another is sample.c's).
 *
 * Nothing here is worth a checkpoint: a signal ends predicting at once
 * (interrupt.c), the RUN left to the driver to cancel as the device
 * file closes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/*
 * @count samples of @ds from @first as data lies, @b at a time in chunks
 * of --chunk steps (a last short batch as a step of its own, if it can be
 * split between the systems), run as @kind; tallied into @t, whose
 * predictions and logits (if set) are the whole run's, filled in order.
 * Returns the samples run (0 for an evaluation a signal cut short), or -1.
 */
static int64_t run_all(struct train_job *j, struct train_steps *steps, uint32_t kind,
		       const struct wse_dataset *ds, uint32_t count, struct train_tally *t)
{
	uint32_t b = j->batch, full = count / b, last = count % b;
	size_t zrow = (size_t)j->rows * wsep_classes(j->p);
	int32_t *pred = t->predictions;
	float *logits = t->logits;
	int ret = 0;

	for (uint32_t at = 0; at < full && !ret;) {
		uint32_t n = full - at < j->o->chunk ? full - at : j->o->chunk;

		/* A training run's evaluation stops between chunks on a signal. */
		if (kind == WSE_RUN_EVAL && train_interrupted())
			return 0;

		t->predictions = pred ? pred + (size_t)at * b * j->rows : NULL;
		t->logits = logits ? logits + (size_t)at * b * zrow : NULL;
		ret = train_steps_run(steps, kind, ds, NULL, at * b, n, b, t);
		at += n;
	}
	t->predictions = pred ? pred + (size_t)full * b * j->rows : NULL;
	t->logits = logits ? logits + (size_t)full * b * zrow : NULL;
	if (!ret && last >= j->n)
		ret = train_steps_run(steps, kind, ds, NULL, full * b, 1, last, t);
	t->predictions = pred;
	t->logits = logits;
	if (ret)
		return -1;
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
	return train_interrupted() ? 1 : 0;
}

/*
 * What a prediction writer does with each sample's output: @classes holds
 * its rows' classes, @logits its rows x classes logits (NULL unless the
 * writer asked for them).
 */
struct predict_writer {
	bool logits;
	int (*header)(FILE *f, const struct train_job *j);
	int (*sample)(FILE *f, const struct train_job *j, uint32_t index, const int32_t *classes,
		      const float *logits);
};

static int class_header(FILE *f, const struct train_job *j)
{
	(void)j;
	return fputs("sample,class\n", f) < 0 ? -EIO : 0;
}

static int write_class(FILE *f, const struct train_job *j, uint32_t index, const int32_t *cls,
		       const float *logits)
{
	(void)j;
	(void)logits;
	return fprintf(f, "%u,%d\n", index, cls[0]) < 0 ? -EIO : 0;
}

/* A classifier fc-mnist's way. */
static const struct predict_writer class_writer = { false, class_header, write_class };

static int logits_header(FILE *f, const struct train_job *j)
{
	uint32_t classes = wsep_classes(j->p);
	int ret = fputs("sample,class", f) < 0 ? -EIO : 0;

	for (uint32_t c = 0; c < classes && !ret; c++)
		ret = fprintf(f, ",logit_%u", c) < 0 ? -EIO : 0;
	if (!ret && fputc('\n', f) == EOF)
		ret = -EIO;
	return ret;
}

/* %.9g: a float's every bit, read back by strtof (or Python's float) to the same value. */
static int write_logits(FILE *f, const struct train_job *j, uint32_t index, const int32_t *cls,
			const float *logits)
{
	uint32_t classes = wsep_classes(j->p);
	int ret = fprintf(f, "%u,%d", index, cls[0]) < 0 ? -EIO : 0;

	for (uint32_t c = 0; c < classes && !ret; c++)
		ret = fprintf(f, ",%.9g", (double)logits[c]) < 0 ? -EIO : 0;
	if (!ret && fputc('\n', f) == EOF)
		ret = -EIO;
	return ret;
}

/* A graph program's classifier: the class, then the logits it is the argmax of. */
static const struct predict_writer logits_writer = { true, logits_header, write_logits };

static int tokens_header(FILE *f, const struct train_job *j)
{
	int ret = fputs("sample", f) < 0 ? -EIO : 0;

	for (uint32_t r = 0; r < j->rows && !ret; r++)
		ret = fprintf(f, ",next_%u", r) < 0 ? -EIO : 0;
	if (!ret && fputc('\n', f) == EOF)
		ret = -EIO;
	return ret;
}

static int write_tokens(FILE *f, const struct train_job *j, uint32_t index, const int32_t *cls,
			const float *logits)
{
	int ret = fprintf(f, "%u", index) < 0 ? -EIO : 0;

	(void)logits;
	for (uint32_t r = 0; r < j->rows && !ret; r++)
		ret = fprintf(f, ",%d", cls[r]) < 0 ? -EIO : 0;
	if (!ret && fputc('\n', f) == EOF)
		ret = -EIO;
	return ret;
}

/*
 * A program over tokens: for each window, the likeliest next token at
 * every position (what evaluation counts right against the labels); its
 * logits, rows x classes a window, stay on the device's side of the link.
 */
static const struct predict_writer tokens_writer = { false, tokens_header, write_tokens };

static const struct predict_writer *writer_for(const struct train_job *j)
{
	if (j->rows > 1)
		return &tokens_writer;
	return j->ids.logits >= 0 ? &logits_writer : &class_writer;
}

int train_predict(struct train_job *j, struct train_steps *steps)
{
	const struct train_opts *o = j->o;
	const struct predict_writer *w = writer_for(j);
	const char *out = o->output ? o->output : "stdout";
	size_t zrow = (size_t)j->rows * wsep_classes(j->p);
	struct train_tally t = { 0 };
	uint32_t n = j->test.count;
	/* Static, each written once before it is shown: the signal watcher may read them later. */
	static char incomplete[PATH_MAX + 64], written[PATH_MAX + 64];
	FILE *f = stdout;
	struct wse_out dest = { .fd = -1 };
	char err[512];
	int64_t done;
	int ret = 0;

	t.predictions = calloc(n ? (size_t)n * j->rows : 1, sizeof(*t.predictions));
	t.logits = w->logits ? calloc(n ? n * zrow : 1, sizeof(*t.logits)) : NULL;
	if (!t.predictions || (w->logits && !t.logits)) {
		free(t.predictions);
		free(t.logits);
		return train_fail("out of memory for %u predictions", n);
	}
	train_interrupt_exit_saying(TRAIN_PREDICT_STOPPED);
	done = run_all(j, steps, WSE_RUN_PREDICT, &j->test, n, &t);
	if (done < 0) {
		free(t.predictions);
		free(t.logits);
		return -1;
	}
	/* A file replaced whole, a FIFO or device written through, - standard output. */
	if (o->output && (wse_out_open(&dest, o->output, WSE_OUT_STDOUT, err, sizeof(err)) ||
			  !(f = wse_out_stream(&dest, err, sizeof(err))))) {
		if (dest.fd >= 0)
			wse_out_abandon(&dest);
		free(t.predictions);
		free(t.logits);
		return train_fail("-o %s", err);
	}
	/* A signal from here on leaves OUT as it was; the temporary file goes. */
	if (dest.replace) {
		snprintf(incomplete, sizeof(incomplete),
			 "the prediction stopped while it was written; %s is as it was", out);
		train_interrupt_remove_on_exit(dest.tmp);
	} else {
		snprintf(incomplete, sizeof(incomplete), "the predictions written to %s are incomplete",
			 out);
	}
	train_interrupt_exit_saying(incomplete);
	ret = w->header(f, j);
	for (uint32_t i = 0; i < done && !ret; i++)
		ret = w->sample(f, j, i, t.predictions + (size_t)i * j->rows,
				t.logits ? t.logits + i * zrow : NULL);
	free(t.predictions);
	free(t.logits);
	if (o->output) {
		if (ret) {
			wse_out_abandon(&dest);
			train_interrupt_remove_on_exit(NULL);
			return train_fail("writing the predictions to %s failed", out);
		}
		ret = wse_out_commit(&dest, err, sizeof(err));
		train_interrupt_remove_on_exit(NULL);
		if (ret)
			return train_fail("writing the predictions failed: %s", err);
	} else if (ret || fflush(f)) {
		return train_fail("writing the predictions to stdout failed");
	}
	snprintf(written, sizeof(written), "after the predictions were written to %s", out);
	train_interrupt_exit_saying(written);
	if (done < n)
		fprintf(stderr, "wsetrain: note: the last %u samples were left out: fewer than the %u systems\n",
			(uint32_t)(n - done), j->n);
	if (o->output && !o->quiet)
		fprintf(stderr, "wsetrain: %lld predictions -> %s\n", (long long)done, o->output);
	return 0;
}
