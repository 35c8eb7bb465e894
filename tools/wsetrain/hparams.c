// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain's hyperparameters at run time: what the device takes (the
 * learning rate and its schedule) written into the program before it is
 * loaded, what the program fixed checked against --params FILE, and the
 * set the run resolved kept in its directory as params.yaml.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "wse/hparams.h"
#include "wse/outfile.h"

/* ModelZoo's SGD with a momentum is the program's momentum optimizer. */
static enum wsep_optimizer_kind kind_of(const struct wse_hparams *h)
{
	const char *t = h->optimizer_type;

	if (!strcmp(t, "adam"))
		return WSEP_OPT_ADAM;
	if (!strcmp(t, "adamw"))
		return WSEP_OPT_ADAMW;
	if (!strcmp(t, "sgd") && !(wse_hp_has(h, WSE_HP_MOMENTUM) && h->momentum > 0))
		return WSEP_OPT_SGD;
	return WSEP_OPT_MOMENTUM;
}

/* What the program fixed (its batch and optimizer) is what the file says. */
static int check_fixed(const struct wsep_program *p, const char *model)
{
	const struct wse_hparams *h = train_params_file();
	const char *fix = "compile it again with wsecc --params, or train the model file itself";

	if (!h)
		return 0;
	if (wse_hp_has(h, WSE_HP_BATCH_SIZE) && h->batch_size != p->batch)
		return train_fail("%s:%u: train_input.batch_size %llu: %s was compiled for batches of %u; %s",
				  h->file, h->line[WSE_HP_BATCH_SIZE],
				  (unsigned long long)h->batch_size, model, p->batch, fix);
	if (wse_hp_has(h, WSE_HP_OPTIMIZER_TYPE) && kind_of(h) != p->opt.kind)
		return train_fail("%s:%u: optimizer.optimizer_type %s: %s was compiled for %s; %s",
				  h->file, h->line[WSE_HP_OPTIMIZER_TYPE], h->optimizer_type, model,
				  wsep_optimizer_name(p->opt.kind), fix);
	if (wse_hp_has(h, WSE_HP_MOMENTUM) && p->opt.kind == WSEP_OPT_MOMENTUM &&
	    h->momentum != p->opt.momentum)
		return train_fail("%s:%u: optimizer.momentum %g: %s was compiled with %g; %s", h->file,
				  h->line[WSE_HP_MOMENTUM], h->momentum, model, p->opt.momentum, fix);
	if (wse_hp_has(h, WSE_HP_WEIGHT_DECAY) && h->weight_decay != p->opt.weight_decay)
		return train_fail("%s:%u: optimizer.weight_decay %g: %s was compiled with %g; %s",
				  h->file, h->line[WSE_HP_WEIGHT_DECAY], h->weight_decay, model,
				  p->opt.weight_decay, fix);
	return 0;
}

int train_hparams_check_file(const struct train_opts *o)
{
	size_t n = o->model ? strlen(o->model) : 0;
	struct wsep_program *p;
	char err[512];
	int ret;

	if (!train_params_file() || n <= 5 || strcmp(o->model + n - 5, ".wsep"))
		return 0;
	if (wsep_read_file(o->model, &p, err, sizeof(err)))
		return train_fail("%s: %s", o->model, err);
	ret = check_fixed(p, o->model);
	wsep_program_free(p);
	return ret;
}

/* The learning rate and schedule the run asks for, into @p. */
static int run_schedule(const struct train_job *j, struct wsep_optimizer *opt)
{
	const struct train_opts *o = j->o;
	bool cosine = opt->schedule == WSEP_LR_WARMUP_COSINE;
	uint64_t warmup, total;
	double floor;

	if (o->lr_set)
		opt->lr = o->lr;
	if (!o->warmup_set && !o->min_lr_set && !o->schedule_steps_set) {
		if (cosine && opt->min_lr >= opt->lr)
			return train_fail("--lr %g: the program's schedule decays to %g, which is not below it (give --min-lr too)",
					  opt->lr, opt->min_lr);
		return 0;
	}
	/* What is not given stays the program's; the length is the run's. */
	warmup = o->warmup_set ? o->warmup : cosine ? opt->warmup : 0;
	total = o->schedule_steps_set ? o->schedule_steps : train_steps_total(j, NULL);
	floor = o->min_lr_set ? o->min_lr : cosine ? opt->min_lr : 0;
	if (total <= warmup)
		return train_fail("a warm-up of %llu steps leaves no decay in a schedule of %llu steps: lower --warmup, or raise --schedule-steps, --steps or --epochs",
				  (unsigned long long)warmup, (unsigned long long)total);
	if (floor >= opt->lr)
		return train_fail("--min-lr %g is not below the learning rate %g", floor, opt->lr);
	opt->schedule = WSEP_LR_WARMUP_COSINE;
	opt->warmup = warmup;
	opt->total_steps = total;
	opt->min_lr = floor;
	return 0;
}

int train_hparams_apply(struct train_job *j)
{
	const struct train_opts *o = j->o;
	struct wsep_optimizer before = j->p->opt;
	char err[512];
	void *img;
	size_t n;

	if (o->task == TRAIN_TASK_EVAL || o->task == TRAIN_TASK_PREDICT)
		return 0;
	if (check_fixed(j->p, o->model ? o->model : j->p->model_name) ||
	    run_schedule(j, &j->p->opt))
		return -1;
	if (!memcmp(&before, &j->p->opt, sizeof(before)))
		return 0;
	/* The firmware reads the optimizer from the program as it loads it. */
	if (wsep_write(j->p, &img, &n, err, sizeof(err)))
		return train_fail("%s with the run's learning rate and schedule: %s", j->p->model_name,
				  err);
	free(j->image);
	j->image = img;
	j->image_len = n;
	return 0;
}

/* The run's settings, resolved, in params.yaml's keys. */
static void resolved(const struct train_job *j, const char *dir, struct wse_hparams *h)
{
	const struct train_opts *o = j->o;
	const struct wsep_program *p = j->p;
	const struct wsep_optimizer *opt = &p->opt;

	memset(h, 0, sizeof(*h));
	h->set = WSE_HP_BIT(WSE_HP_BATCH_SIZE) | WSE_HP_BIT(WSE_HP_SHUFFLE_SEED) |
		 WSE_HP_BIT(WSE_HP_OPTIMIZER_TYPE) | WSE_HP_BIT(WSE_HP_LEARNING_RATE) |
		 WSE_HP_BIT(WSE_HP_WEIGHT_DECAY) | WSE_HP_BIT(WSE_HP_EXECUTION_MODE) |
		 WSE_HP_BIT(WSE_HP_MAX_STEPS) | WSE_HP_BIT(WSE_HP_NUM_EPOCHS) |
		 WSE_HP_BIT(WSE_HP_KEEP_CHECKPOINT_MAX) | WSE_HP_BIT(WSE_HP_LOG_STEPS) |
		 WSE_HP_BIT(WSE_HP_SEED) | WSE_HP_BIT(WSE_HP_NUM_CSX) | WSE_HP_BIT(WSE_HP_MODEL_DIR);
	if (!o->n_text) {
		h->set |= WSE_HP_BIT(WSE_HP_DATA_DIR);
		snprintf(h->data_dir, sizeof(h->data_dir), "%s", o->data_dir);
	}
	h->batch_size = p->batch;
	if (p->micro_batch) {
		h->set |= WSE_HP_BIT(WSE_HP_MICRO_BATCH_SIZE);
		h->micro_batch_size = p->micro_batch;
	}
	h->shuffle_seed = o->seed_set ? o->seed : p->seed;
	snprintf(h->optimizer_type, sizeof(h->optimizer_type), "%s",
		 opt->kind == WSEP_OPT_MOMENTUM && opt->nesterov ? "nesterov" :
		 wsep_optimizer_name(opt->kind));
	h->learning_rate = opt->lr;
	if (opt->kind == WSEP_OPT_MOMENTUM) {
		h->set |= WSE_HP_BIT(WSE_HP_MOMENTUM);
		h->momentum = opt->momentum;
	}
	h->weight_decay = opt->weight_decay;
	if (opt->schedule == WSEP_LR_WARMUP_COSINE) {
		h->set |= WSE_HP_BIT(WSE_HP_MIN_LR) | WSE_HP_BIT(WSE_HP_SCHEDULE_STEPS);
		if (opt->warmup)
			h->set |= WSE_HP_BIT(WSE_HP_WARMUP_STEPS);
		h->warmup_steps = opt->warmup;
		h->schedule_steps = opt->total_steps;
		h->min_lr = opt->min_lr;
	}
	snprintf(h->execution_mode, sizeof(h->execution_mode), "%s", wsep_mode_name(p->mode));
	h->max_steps = train_steps_total(j, NULL);
	h->num_epochs = o->epochs;
	if (o->checkpoint_every) {
		h->set |= WSE_HP_BIT(WSE_HP_CHECKPOINT_STEPS);
		h->checkpoint_steps = o->checkpoint_every;
	}
	h->keep_checkpoint_max = o->keep;
	h->log_steps = o->report;
	h->seed = p->seed;
	h->num_csx = j->n;
	snprintf(h->model_dir, sizeof(h->model_dir), "%s", dir);
}

int train_hparams_record(const struct train_job *j, const char *dir)
{
	struct wse_hparams h;
	struct wse_out out;
	char path[4096], msg[512];
	FILE *f;

	resolved(j, dir, &h);
	snprintf(path, sizeof(path), "%s/params.yaml", dir);
	if (wse_out_open(&out, path, 0, msg, sizeof(msg)))
		return train_fail("%s", msg);
	f = wse_out_stream(&out, msg, sizeof(msg));
	if (!f) {
		wse_out_abandon(&out);
		return train_fail("%s", msg);
	}
	fprintf(f, "# The settings this run resolved (--params, the command line and the\n"
		"# program): wsetrain --params %s repeats them.\n", path);
	if (wse_hparams_emit(f, &h)) {
		wse_out_abandon(&out);
		return train_fail("writing %s failed", path);
	}
	if (wse_out_commit(&out, msg, sizeof(msg)))
		return train_fail("%s", msg);
	return 0;
}
