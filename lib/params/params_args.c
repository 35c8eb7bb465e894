// SPDX-License-Identifier: GPL-2.0-only
/*
 * A params file's settings as options in front of the command line's
 * (wse/hparams.h): one parser checks both, and the last word wins, which
 * is the command line's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/hparams.h"

const char *wse_hparams_option(int argc, char *const argv[], bool *twice)
{
	const char *file = NULL;

	*twice = false;
	for (int i = 1; i < argc; i++) {
		const char *f = NULL;

		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--params") && i + 1 < argc)
			f = argv[++i];
		else if (!strncmp(argv[i], "--params=", 9))
			f = argv[i] + 9;
		if (f) {
			*twice |= file != NULL;
			file = f;
		}
	}
	return file;
}

static int push(struct wse_hp_args *a, const char *s)
{
	if (a->n == WSE_HP_ARGS_MAX)
		return -E2BIG;
	a->word[a->n] = strdup(s);
	if (!a->word[a->n])
		return -ENOMEM;
	a->n++;
	return 0;
}

int wse_hp_args_add(struct wse_hp_args *a, const char *opt, const char *value)
{
	char word[64];

	int ret;

	snprintf(word, sizeof(word), "--%s", opt);
	ret = push(a, word);
	return ret || !value ? ret : push(a, value);
}

int wse_hp_args_u64(struct wse_hp_args *a, const char *opt, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return wse_hp_args_add(a, opt, buf);
}

int wse_hp_args_num(struct wse_hp_args *a, const char *opt, double v)
{
	char buf[40];

	/* %.17g reads back as the same double. */
	snprintf(buf, sizeof(buf), "%.17g", v);
	return wse_hp_args_add(a, opt, buf);
}

int wse_hp_args_argv(const struct wse_hp_args *a, int argc, char *const argv[], int *out_argc,
		     char ***out_argv)
{
	char **v = calloc((size_t)argc + (size_t)a->n + 1, sizeof(*v));
	int n = 0;

	if (!v)
		return -ENOMEM;
	v[n++] = argv[0];
	for (int i = 0; i < a->n; i++)
		v[n++] = a->word[i];
	for (int i = 1; i < argc; i++)
		v[n++] = argv[i];
	v[n] = NULL;
	*out_argc = n;
	*out_argv = v;
	return 0;
}

void wse_hp_args_free(struct wse_hp_args *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->word[i]);
	a->n = 0;
}

int wse_hp_args_schedule(const struct wse_hparams *h, struct wse_hp_args *a)
{
	int ret = 0;

	/* The first failure is the one returned: negative errnos do not combine. */
	if (wse_hp_has(h, WSE_HP_EXECUTION_MODE))
		ret = wse_hp_args_add(a, "execution-mode", h->execution_mode);
	if (!ret && wse_hp_has(h, WSE_HP_LEARNING_RATE))
		ret = wse_hp_args_num(a, "lr", h->learning_rate);
	if (!ret && wse_hp_has(h, WSE_HP_MIN_LR))
		ret = wse_hp_args_u64(a, "warmup", h->warmup_steps);
	if (!ret && wse_hp_has(h, WSE_HP_MIN_LR))
		ret = wse_hp_args_num(a, "min-lr", h->min_lr);
	if (!ret && wse_hp_has(h, WSE_HP_SCHEDULE_STEPS))
		ret = wse_hp_args_u64(a, "schedule-steps", h->schedule_steps);
	if (!ret && wse_hp_has(h, WSE_HP_MAX_STEPS))
		ret = wse_hp_args_u64(a, "steps", h->max_steps);
	return ret;
}
