// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a run holds fixed: the data, the device (a system, or an appliance
 * and how many of its systems the job takes), the program loaded on it
 * and the execution mode that goes with it. Everything that can be
 * refused is checked here, before the first step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* A dataset against the program: input shape and type, classes. */
static int check_data(const struct train_job *j, const struct wse_dataset *ds)
{
	const struct wsep_program *p = j->p;
	uint32_t classes = wsep_classes(p);
	uint32_t shape[WSE_DATASET_MAX_RANK], rank;
	char err[512];

	if (wsep_label_rows(p) != 1)
		return train_fail("%s predicts %u rows per sample (a program over tokens): give it a text corpus (--text FILE)",
				  p->model_name, wsep_label_rows(p));
	if (p->input_type != WSEP_ELEM_U8 && p->input_type != WSEP_ELEM_F32)
		return train_fail("%s takes %s inputs; wsetrain feeds bytes or floats",
				  p->model_name, wsep_elem_name(p->input_type));
	rank = wsep_input_shape(p, shape, WSE_DATASET_MAX_RANK);
	if (wse_dataset_check_input(ds, shape, rank, p->input_type == WSEP_ELEM_F32, err,
				    sizeof(err)))
		return train_fail("%s (%s)", err, p->model_name);
	if (ds->item != j->record)
		return train_fail("the data's samples are %u bytes; %s takes %u", ds->item,
				  p->model_name, j->record);
	if (ds->classes > classes)
		return train_fail("the dataset has %u classes; %s has %u outputs", ds->classes,
				  p->model_name, classes);
	return 0;
}

/* The data the task needs: training and test sets, or the images to predict for. */
static int load_data(struct train_job *j, const struct train_opts *o)
{
	bool train = o->task == TRAIN_TASK_TRAIN_AND_EVAL || o->task == TRAIN_TASK_TRAIN;
	char err[512];

	if (o->n_text)
		return 0;	/* train_text_open() once the program is known */
	if (o->task == TRAIN_TASK_PREDICT) {
		if (wse_dataset_load(o->data_dir, NULL, &j->test, err, sizeof(err)))
			return train_fail("--data: %s (an IDX images file, such as t10k-images-idx3-ubyte.gz, or a CIFAR-10 batch such as test_batch.bin)",
					  err);
		return 0;
	}
	if ((train && wse_dataset_load_dir(o->data_dir, "train", &j->train, err, sizeof(err))) ||
	    (!o->no_eval && wse_dataset_load_dir(o->data_dir, "t10k", &j->test, err, sizeof(err))))
		return train_fail("the dataset: %s (Fashion-MNIST: apt install dataset-fashion-mnist; or give --data DIR)",
				  err);
	return 0;
}

/*
 * Is the device an appliance? It answers for its parts; a system refuses.
 * Then its systems must be enough for the job, which is told how many:
 * --systems of them, or, the device alone named, all of them.
 */
static int find_appliance(struct train_job *j, unsigned int *systems)
{
	struct wse_appliance a;
	int ret = wse_appliance_info(j->sys[0].out, &a);

	j->appliance = !ret;
	j->sys[0].appliance = j->appliance;
	*systems = j->o->systems;
	if (!j->appliance)
		return ret == -EINVAL ? 0 : train_fail("%s: %s", j->sys[0].name, wse_strerror(ret));
	if (!j->o->systems_set)
		*systems = a.systems;
	if (j->o->systems > a.systems)
		return train_fail("--systems %u: %s is an appliance of %u system%s (start it with wse-appliance --systems %u)",
				  j->o->systems, j->sys[0].name, a.systems,
				  a.systems == 1 ? "" : "s", j->o->systems);
	return 0;
}

int train_job_open(struct train_job *j, const struct train_opts *o)
{
	unsigned int systems;
	char spec[16];
	int ret;

	memset(j, 0, sizeof(*j));
	j->o = o;
	if (load_data(j, o) || train_pick_device(o, spec) ||
	    train_system_open(&j->sys[0], spec) || find_appliance(j, &systems))
		return -1;
	if (train_program(o, &j->sys[0].info.dev, &j->image, &j->image_len, &j->p))
		return -1;
	j->batch = j->p->batch;
	j->rows = wsep_label_rows(j->p);
	j->record = j->p->input_dim * (j->p->input_type == WSEP_ELEM_U8 ? 1 : 4);
	j->streaming = j->p->mode == WSEP_MODE_WEIGHT_STREAMING;
	j->n = j->appliance && j->streaming ? systems : 1;
	if (train_find_streams(j->p, &j->ids) ||
	    (o->n_text ? train_text_open(j) :
	     (j->train.count && check_data(j, &j->train)) ||
	     (j->test.count && check_data(j, &j->test))))
		return -1;
	j->used = o->train_limit && o->train_limit < j->train.count ? o->train_limit :
								       j->train.count;
	if (j->streaming && !j->appliance)
		return train_fail("%s is a single system: weight streaming runs on an appliance, whose MemoryX keeps the weights (start one with wse-appliance --systems N --listen ADDR and attach it; in the guest: tools/wsevm --appliance N)",
				  j->sys[0].name);
	if (o->systems > 1 && !j->streaming)
		return train_fail("the program is layer-pipelined; training on %u systems needs weight streaming (--execution-mode weight_streaming)",
				  o->systems);
	if (o->input_appliance && !j->appliance)
		return train_fail("--input appliance: %s is a single system; only an appliance has input workers",
				  j->sys[0].name);
	if (j->batch < j->n)
		return train_fail("a batch of %u cannot be split between %u systems", j->batch,
				  j->n);
	if (j->appliance) {
		/* On its own slot: slot 0's default is every user's. */
		ret = wse_appliance_job_slot(j->sys[0].out, TRAIN_SLOT, j->n);
		if (ret)
			return train_fail("%s refused a job on %u system%s: %s", j->sys[0].name, j->n,
					  j->n == 1 ? "" : "s", wse_strerror(ret));
	}
	/* The run's learning rate and schedule, now that its steps are known. */
	if (train_hparams_apply(j) || train_system_load(&j->sys[0], j->image, j->image_len))
		return -1;
	return 0;
}

void train_job_close(struct train_job *j)
{
	train_system_close(&j->sys[0]);
	wse_dataset_free(&j->train);
	wse_dataset_free(&j->test);
	wse_text_free(&j->text);
	wsep_program_free(j->p);
	free(j->image);
}
