// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsecc --params FILE: what a params.yaml says about the program, as the
 * options that say it on the command line. Keys only wsetrain uses (the
 * data, epochs, checkpoints) are read, checked and left to it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wse/hparams.h"
#include "wse/usage.h"
#include "params.h"

/* ModelZoo writes SGD with a momentum; wsecc names that optimizer momentum. */
static const char *optimizer_of(const struct wse_hparams *h)
{
	if (!strcmp(h->optimizer_type, "sgd") && wse_hp_has(h, WSE_HP_MOMENTUM) && h->momentum > 0)
		return wse_hp_has(h, WSE_HP_NESTEROV) && h->nesterov ? "nesterov" : "momentum";
	if (!strcmp(h->optimizer_type, "momentum") && wse_hp_has(h, WSE_HP_NESTEROV) && h->nesterov)
		return "nesterov";
	return h->optimizer_type;
}

static int as_options(const struct wse_hparams *h, struct wse_hp_args *a)
{
	const char *kind = optimizer_of(h);
	int ret = wse_hp_args_schedule(h, a);

	if (wse_hp_has(h, WSE_HP_BATCH_SIZE))
		ret |= wse_hp_args_u64(a, "batch", h->batch_size);
	if (wse_hp_has(h, WSE_HP_MICRO_BATCH_SIZE))
		ret |= wse_hp_args_u64(a, "micro-batch", h->micro_batch_size);
	if (wse_hp_has(h, WSE_HP_INPUT))
		ret |= wse_hp_args_add(a, "input", h->input);
	for (size_t i = 0; i < h->n_freeze; i++)
		ret |= wse_hp_args_add(a, "freeze", h->freeze[i]);
	if (wse_hp_has(h, WSE_HP_OPTIMIZER_TYPE))
		ret |= wse_hp_args_add(a, "optimizer", kind);
	/* SGD's momentum 0 is plain SGD, which takes no --momentum. */
	if (wse_hp_has(h, WSE_HP_MOMENTUM) && (h->momentum > 0 || strcmp(kind, "sgd")))
		ret |= wse_hp_args_num(a, "momentum", h->momentum);
	if (wse_hp_has(h, WSE_HP_WEIGHT_DECAY))
		ret |= wse_hp_args_num(a, "weight-decay", h->weight_decay);
	if (wse_hp_has(h, WSE_HP_SEED))
		ret |= wse_hp_args_u64(a, "seed", h->seed);
	return ret;
}

int wsecc_params_argv(int argc, char **argv, int *out_argc, char ***out_argv)
{
	static struct wse_hp_args args;
	struct wse_hparams h;
	const char *file;
	char err[1024];
	bool twice;
	int ret;

	*out_argc = argc;
	*out_argv = argv;
	file = wse_hparams_option(argc, argv, &twice);
	if (!file)
		return 0;
	if (twice)
		return wse_usage_error("wsecc", "--params given twice: one file holds the set (the command line overrides it)");
	ret = wse_hparams_read(file, &h, err, sizeof(err));
	if (ret) {
		wse_hparams_free(&h);
		return wse_usage_error("wsecc", "%s", err);
	}
	ret = as_options(&h, &args);
	wse_hparams_free(&h);
	if (ret || wse_hp_args_argv(&args, argc, argv, out_argc, out_argv)) {
		fprintf(stderr, "wsecc: %s: too many settings to hold\n", file);
		return 1;
	}
	return 0;
}
