// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain --params FILE: the keys wsetrain takes, as the options that say
 * them on the command line, placed before the command line's own so that
 * one parser checks both and the command line wins. Keys that only the
 * compiler uses reach it as wsecc --params FILE.
 */
#include <stdio.h>

#include "train.h"
#include "wse/hparams.h"

/* The file as read: hparams.c checks a compiled program against it. */
static struct wse_hparams file_hp;
static bool have_file;
static struct wse_hp_args file_args;

/* The keys wsetrain takes, as its options. */
static int as_options(const struct wse_hparams *h, struct wse_hp_args *a)
{
	int ret = 0;

	if (wse_hp_has(h, WSE_HP_DATA_DIR))
		ret |= wse_hp_args_add(a, "data", h->data_dir);
	if (wse_hp_has(h, WSE_HP_SHUFFLE_SEED))
		ret |= wse_hp_args_u64(a, "seed", h->shuffle_seed);
	ret |= wse_hp_args_schedule(h, a);
	if (wse_hp_has(h, WSE_HP_NUM_EPOCHS))
		ret |= wse_hp_args_u64(a, "epochs", h->num_epochs);
	if (wse_hp_has(h, WSE_HP_CHECKPOINT_STEPS))
		ret |= wse_hp_args_u64(a, "checkpoint-every", h->checkpoint_steps);
	if (wse_hp_has(h, WSE_HP_KEEP_CHECKPOINT_MAX))
		ret |= wse_hp_args_u64(a, "keep", h->keep_checkpoint_max);
	if (wse_hp_has(h, WSE_HP_LOG_STEPS))
		ret |= wse_hp_args_u64(a, "report", h->log_steps);
	if (wse_hp_has(h, WSE_HP_NUM_CSX))
		ret |= wse_hp_args_u64(a, "systems", h->num_csx);
	if (wse_hp_has(h, WSE_HP_MODEL_DIR))
		ret |= wse_hp_args_add(a, "model_dir", h->model_dir);
	return ret;
}

int train_params_argv(int argc, char **argv, int *out_argc, char ***out_argv)
{
	const char *file;
	char err[1024];
	bool twice;

	*out_argc = argc;
	*out_argv = argv;
	file = wse_hparams_option(argc, argv, &twice);
	if (!file)
		return 0;
	if (twice)
		return train_fail("--params given twice: one file holds the set (the command line overrides it)");
	if (wse_hparams_read(file, &file_hp, err, sizeof(err))) {
		wse_hparams_free(&file_hp);
		return train_fail("%s", err);
	}
	have_file = true;
	if (as_options(&file_hp, &file_args) ||
	    wse_hp_args_argv(&file_args, argc, argv, out_argc, out_argv))
		return train_fail("%s: too many settings to hold", file);
	return 0;
}

const struct wse_hparams *train_params_file(void)
{
	return have_file ? &file_hp : NULL;
}
