// SPDX-License-Identifier: GPL-2.0-only
/*
 * A struct wse_hparams back out as a params.yaml: what a run directory
 * keeps, readable by wse_hparams_read() and by ModelZoo's tools alike.
 * Only the keys that are set are written.
 */
#include <errno.h>
#include <stdio.h>

#include "wse/hparams.h"

/* A double-quoted YAML string: only '"' and '\\' need escaping here. */
static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static bool any(const struct wse_hparams *h, const enum wse_hp_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (wse_hp_has(h, keys[i]))
			return true;
	return false;
}

static void u64(FILE *f, const struct wse_hparams *h, enum wse_hp_key k, const char *name,
		uint64_t v)
{
	if (wse_hp_has(h, k))
		fprintf(f, "  %s: %llu\n", name, (unsigned long long)v);
}

static void num(FILE *f, const struct wse_hparams *h, enum wse_hp_key k, const char *name,
		double v)
{
	if (wse_hp_has(h, k))
		fprintf(f, "  %s: %.17g\n", name, v);
}

static void str(FILE *f, const struct wse_hparams *h, enum wse_hp_key k, const char *name,
		const char *v)
{
	if (wse_hp_has(h, k)) {
		fprintf(f, "  %s: ", name);
		quoted(f, v);
		fputc('\n', f);
	}
}

static void learning_rate(FILE *f, const struct wse_hparams *h)
{
	if (!wse_hp_has(h, WSE_HP_MIN_LR)) {
		num(f, h, WSE_HP_LEARNING_RATE, "learning_rate", h->learning_rate);
		return;
	}
	fprintf(f, "  learning_rate:\n");
	if (wse_hp_has(h, WSE_HP_WARMUP_STEPS))
		fprintf(f, "    - scheduler: Linear\n      initial_learning_rate: 0\n"
			"      end_learning_rate: %.17g\n      total_iters: %llu\n",
			h->learning_rate, (unsigned long long)h->warmup_steps);
	fprintf(f, "    - scheduler: CosineDecay\n      initial_learning_rate: %.17g\n"
		"      end_learning_rate: %.17g\n", h->learning_rate, h->min_lr);
	if (wse_hp_has(h, WSE_HP_SCHEDULE_STEPS))
		fprintf(f, "      total_iters: %llu\n",
			(unsigned long long)(h->schedule_steps - h->warmup_steps));
}

int wse_hparams_emit(FILE *f, const struct wse_hparams *h)
{
	static const enum wse_hp_key train_input[] = { WSE_HP_DATA_DIR, WSE_HP_BATCH_SIZE,
		WSE_HP_MICRO_BATCH_SIZE, WSE_HP_SHUFFLE_SEED };
	static const enum wse_hp_key model[] = { WSE_HP_INPUT, WSE_HP_FREEZE };
	static const enum wse_hp_key optimizer[] = { WSE_HP_OPTIMIZER_TYPE, WSE_HP_LEARNING_RATE,
		WSE_HP_MOMENTUM, WSE_HP_NESTEROV, WSE_HP_WEIGHT_DECAY, WSE_HP_MIN_LR };
	static const enum wse_hp_key runconfig[] = { WSE_HP_EXECUTION_MODE, WSE_HP_MAX_STEPS,
		WSE_HP_NUM_EPOCHS, WSE_HP_CHECKPOINT_STEPS, WSE_HP_KEEP_CHECKPOINT_MAX,
		WSE_HP_LOG_STEPS, WSE_HP_SEED, WSE_HP_NUM_CSX, WSE_HP_MODEL_DIR };

	if (any(h, train_input, sizeof(train_input) / sizeof(train_input[0]))) {
		fprintf(f, "train_input:\n");
		str(f, h, WSE_HP_DATA_DIR, "data_dir", h->data_dir);
		u64(f, h, WSE_HP_BATCH_SIZE, "batch_size", h->batch_size);
		u64(f, h, WSE_HP_MICRO_BATCH_SIZE, "micro_batch_size", h->micro_batch_size);
		u64(f, h, WSE_HP_SHUFFLE_SEED, "shuffle_seed", h->shuffle_seed);
	}
	if (any(h, model, sizeof(model) / sizeof(model[0]))) {
		fprintf(f, "model:\n");
		str(f, h, WSE_HP_INPUT, "input", h->input);
		if (wse_hp_has(h, WSE_HP_FREEZE)) {
			fprintf(f, "  freeze:\n");
			for (size_t i = 0; i < h->n_freeze; i++) {
				fprintf(f, "    - ");
				quoted(f, h->freeze[i]);
				fputc('\n', f);
			}
		}
	}
	if (any(h, optimizer, sizeof(optimizer) / sizeof(optimizer[0]))) {
		fprintf(f, "optimizer:\n");
		str(f, h, WSE_HP_OPTIMIZER_TYPE, "optimizer_type", h->optimizer_type);
		learning_rate(f, h);
		num(f, h, WSE_HP_MOMENTUM, "momentum", h->momentum);
		if (wse_hp_has(h, WSE_HP_NESTEROV))
			fprintf(f, "  nesterov: %s\n", h->nesterov ? "true" : "false");
		num(f, h, WSE_HP_WEIGHT_DECAY, "weight_decay", h->weight_decay);
	}
	if (any(h, runconfig, sizeof(runconfig) / sizeof(runconfig[0]))) {
		fprintf(f, "runconfig:\n");
		str(f, h, WSE_HP_EXECUTION_MODE, "execution_mode", h->execution_mode);
		u64(f, h, WSE_HP_MAX_STEPS, "max_steps", h->max_steps);
		u64(f, h, WSE_HP_NUM_EPOCHS, "num_epochs", h->num_epochs);
		u64(f, h, WSE_HP_CHECKPOINT_STEPS, "checkpoint_steps", h->checkpoint_steps);
		u64(f, h, WSE_HP_KEEP_CHECKPOINT_MAX, "keep_checkpoint_max", h->keep_checkpoint_max);
		u64(f, h, WSE_HP_LOG_STEPS, "log_steps", h->log_steps);
		u64(f, h, WSE_HP_SEED, "seed", h->seed);
		u64(f, h, WSE_HP_NUM_CSX, "num_csx", h->num_csx);
		str(f, h, WSE_HP_MODEL_DIR, "model_dir", h->model_dir);
	}
	return ferror(f) ? -EIO : 0;
}
