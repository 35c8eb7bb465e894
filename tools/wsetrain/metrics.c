// SPDX-License-Identifier: GPL-2.0-only
/*
 * Metrics out of a run: a CSV (one row per progress report and one per
 * evaluation) and a TensorBoard event file with the scalars train/loss,
 * train/accuracy, train/samples_per_s (Rate), train/global_samples_per_s
 * (GlobalRate), train/lr (the learning rate of the report's last step),
 * test/loss and test/accuracy. Both are flushed at each
 * evaluation, so a crash loses at most an epoch's rows.
 *
 * The two hold the same numbers: every value is rounded once to the
 * float TensorBoard stores, and the CSV prints that float in full
 * (%.9g reads back to the same float).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "train.h"
#include "wse/outfile.h"
#include "wse/tfevents.h"

struct train_metrics {
	struct wse_out csv_out;
	FILE *csv;			/* its stream, or NULL */
	struct wse_tfevents *tb;
	double t0;
	int error;
	bool lr_column;			/* the CSV's header has "lr" */
};

/*
 * A resumed run appends to its CSV: rows keep the header's columns, so
 * a file from before the lr column goes on without one.
 */
static bool header_has_lr(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], *save = NULL;
	bool lr = false;

	if (!f)
		return true;
	if (fgets(line, sizeof(line), f))
		for (char *c = strtok_r(line, ",\r\n", &save); c && !lr;
		     c = strtok_r(NULL, ",\r\n", &save))
			lr = !strcmp(c, "lr");
	fclose(f);
	return lr;
}

int train_metrics_open(const struct train_opts *o, struct train_metrics **out)
{
	struct train_metrics *m = calloc(1, sizeof(*m));
	char err[512];
	int ret;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->t0 = train_now();
	if (o->csv) {
		struct stat st;

		/*
		 * Written in place, not replaced at the end: it is read while it
		 * grows. A resumed run carries on appending to the same file.
		 */
		ret = wse_out_open(&m->csv_out, o->csv, o->resume ? WSE_OUT_APPEND : WSE_OUT_IN_PLACE,
				   err, sizeof(err));
		if (!ret && !(m->csv = wse_out_stream(&m->csv_out, err, sizeof(err)))) {
			wse_out_abandon(&m->csv_out);
			ret = -ENOMEM;
		}
		if (ret) {
			train_fail("--csv %s", err);
			free(m);
			return ret;
		}
		m->lr_column = true;
		if (o->resume && !fstat(m->csv_out.fd, &st) && st.st_size > 0)
			m->lr_column = header_has_lr(o->csv);
		else
			fprintf(m->csv, "kind,step,epoch,loss,accuracy,samples_per_s,global_samples_per_s,eta_s,wall_s,lr\n");
	}
	if (o->tensorboard) {
		ret = wse_tfevents_open(o->tensorboard, &m->tb, err, sizeof(err));
		if (ret) {
			train_fail("--tensorboard: %s", err);
			if (m->csv)
				wse_out_abandon(&m->csv_out);
			free(m);
			return ret;
		}
	}
	*out = m;
	return 0;
}

/* @v as TensorBoard keeps it; the CSV prints this very value. */
static float scalar(struct train_metrics *m, const char *tag, uint64_t step, double v)
{
	float f = (float)v;
	int ret;

	if (!m->tb)
		return f;
	ret = wse_tfevents_scalar(m->tb, tag, (int64_t)step, wse_tfevents_now(), f);
	if (ret && !m->error)
		m->error = ret;
	return f;
}

void train_metrics_train(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			 double accuracy, double rate, double global_rate, double eta_s, double lr)
{
	float l = scalar(m, "train/loss", step, loss);
	float a = scalar(m, "train/accuracy", step, accuracy);
	float r = scalar(m, "train/samples_per_s", step, rate);
	float g = scalar(m, "train/global_samples_per_s", step, global_rate);
	float lr32 = scalar(m, "train/lr", step, lr);

	if (!m->csv)
		return;
	fprintf(m->csv, "train,%llu,%u,%.9g,%.9g,%.9g,%.9g,", (unsigned long long)step,
		epoch + 1, l, a, r, g);
	if (eta_s >= 0)
		fprintf(m->csv, "%.3f", eta_s);
	fprintf(m->csv, ",%.3f", train_now() - m->t0);
	if (m->lr_column)
		fprintf(m->csv, ",%.9g", lr32);
	fprintf(m->csv, "\n");
}

void train_metrics_test(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			double accuracy)
{
	float l = scalar(m, "test/loss", step, loss);
	float a = scalar(m, "test/accuracy", step, accuracy);

	if (m->csv) {
		fprintf(m->csv, "test,%llu,%u,%.9g,%.9g,,,,%.3f%s\n", (unsigned long long)step,
			epoch + 1, l, a, train_now() - m->t0, m->lr_column ? "," : "");
		fflush(m->csv);
	}
	if (m->tb) {
		int ret = wse_tfevents_flush(m->tb);

		if (ret && !m->error)
			m->error = ret;
	}
}

int train_metrics_close(struct train_metrics *m)
{
	bool said = false;
	int ret;

	if (!m)
		return 0;
	ret = m->error;
	if (m->csv) {
		char err[512];
		int r = wse_out_commit(&m->csv_out, err, sizeof(err));

		/* Its message names the file; the one below would say less. */
		if (r && !ret) {
			train_fail("--csv %s", err);
			ret = r;
			said = true;
		}
	}
	if (m->tb) {
		int r = wse_tfevents_close(m->tb);

		if (r && !ret)
			ret = r;
	}
	if (ret && !said)
		train_fail("writing the metrics failed: %s", strerror(-ret));
	free(m);
	return ret;
}
