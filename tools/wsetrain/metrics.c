// SPDX-License-Identifier: GPL-2.0-only
/*
 * Metrics out of a run: a CSV (one row per progress report and one per
 * evaluation) and a TensorBoard event file with the scalars train/loss,
 * train/accuracy, train/samples_per_s, test/loss and test/accuracy. Both
 * are flushed at each evaluation, so a crash loses at most an epoch's
 * rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "wse/tfevents.h"

struct train_metrics {
	FILE *csv;
	struct wse_tfevents *tb;
	double t0;
	int error;
};

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
		/* A resumed run carries on appending to the same file. */
		m->csv = fopen(o->csv, o->resume ? "a" : "w");
		if (!m->csv) {
			ret = -errno;
			train_fail("--csv %s: %s", o->csv, strerror(errno));
			free(m);
			return ret;
		}
		if (!o->resume || ftell(m->csv) == 0)
			fprintf(m->csv, "kind,step,epoch,loss,accuracy,samples_per_s,wall_s\n");
	}
	if (o->tensorboard) {
		ret = wse_tfevents_open(o->tensorboard, &m->tb, err, sizeof(err));
		if (ret) {
			train_fail("--tensorboard: %s", err);
			if (m->csv)
				fclose(m->csv);
			free(m);
			return ret;
		}
	}
	*out = m;
	return 0;
}

static void scalar(struct train_metrics *m, const char *tag, uint64_t step, double v)
{
	int ret;

	if (!m->tb)
		return;
	ret = wse_tfevents_scalar(m->tb, tag, (int64_t)step, wse_tfevents_now(), (float)v);
	if (ret && !m->error)
		m->error = ret;
}

void train_metrics_train(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			 double accuracy, double samples_per_s)
{
	if (m->csv)
		fprintf(m->csv, "train,%llu,%u,%.6f,%.6f,%.1f,%.3f\n", (unsigned long long)step,
			epoch + 1, loss, accuracy, samples_per_s, train_now() - m->t0);
	scalar(m, "train/loss", step, loss);
	scalar(m, "train/accuracy", step, accuracy);
	scalar(m, "train/samples_per_s", step, samples_per_s);
}

void train_metrics_test(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			double accuracy)
{
	if (m->csv) {
		fprintf(m->csv, "test,%llu,%u,%.6f,%.6f,,%.3f\n", (unsigned long long)step,
			epoch + 1, loss, accuracy, train_now() - m->t0);
		fflush(m->csv);
	}
	scalar(m, "test/loss", step, loss);
	scalar(m, "test/accuracy", step, accuracy);
	if (m->tb) {
		int ret = wse_tfevents_flush(m->tb);

		if (ret && !m->error)
			m->error = ret;
	}
}

int train_metrics_close(struct train_metrics *m)
{
	int ret;

	if (!m)
		return 0;
	ret = m->error;
	if (m->csv && fclose(m->csv) && !ret)
		ret = -errno;
	if (m->tb) {
		int r = wse_tfevents_close(m->tb);

		if (r && !ret)
			ret = r;
	}
	if (ret)
		train_fail("writing the metrics failed: %s", strerror(-ret));
	free(m);
	return ret;
}
