/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse/hparams.h - one set of hyperparameters for wsecc and wsetrain, read
 * from a params.yaml in Cerebras ModelZoo's shape (library wseparams, on
 * libyaml). Documentation/wsetrain.rst, "params.yaml", is the user's
 * side: every key, its type and which tool uses it.
 *
 *   train_input:  data_dir, batch_size, micro_batch_size, shuffle_seed
 *   model:        input, freeze
 *   optimizer:    optimizer_type, learning_rate (a number or a schedule
 *                 list), momentum, nesterov, weight_decay
 *   runconfig:    execution_mode, max_steps, num_epochs, checkpoint_steps,
 *                 keep_checkpoint_max, log_steps, seed, num_csx, model_dir
 *
 * A key the project does not know, a value of the wrong type or out of
 * range is refused with the file, line and key: a typo never trains with a
 * default silently.
 */
#ifndef WSE_HPARAMS_H
#define WSE_HPARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WSE_HP_PATH_MAX		4096
#define WSE_HP_MAX_FREEZE	64
#define WSE_HP_WORD_MAX		32

/* One bit per key: which ones the file gave. */
enum wse_hp_key {
	WSE_HP_DATA_DIR,
	WSE_HP_BATCH_SIZE,
	WSE_HP_MICRO_BATCH_SIZE,
	WSE_HP_SHUFFLE_SEED,
	WSE_HP_INPUT,
	WSE_HP_FREEZE,
	WSE_HP_OPTIMIZER_TYPE,
	WSE_HP_LEARNING_RATE,
	WSE_HP_MOMENTUM,
	WSE_HP_NESTEROV,
	WSE_HP_WEIGHT_DECAY,
	WSE_HP_EXECUTION_MODE,
	WSE_HP_MAX_STEPS,
	WSE_HP_NUM_EPOCHS,
	WSE_HP_CHECKPOINT_STEPS,
	WSE_HP_KEEP_CHECKPOINT_MAX,
	WSE_HP_LOG_STEPS,
	WSE_HP_SEED,
	WSE_HP_NUM_CSX,
	WSE_HP_MODEL_DIR,
	/* Parts of learning_rate's schedule list. */
	WSE_HP_WARMUP_STEPS,
	WSE_HP_SCHEDULE_STEPS,
	WSE_HP_MIN_LR,
	WSE_HP_NUM_KEYS
};

/**
 * struct wse_hparams - a params.yaml, resolved
 * @set: WSE_HP_BIT(key) for every key the file gave
 * @optimizer_type: sgd, momentum, nesterov, adam or adamw (lower case;
 *	ModelZoo's "SGD", "Adam", "AdamW" are accepted as spelled there,
 *	and SGD with a momentum becomes "momentum")
 * @learning_rate: the peak rate; a schedule list also sets
 *	@warmup_steps (a "Linear" entry from 0), @schedule_steps (the step
 *	a "CosineDecay" entry ends at, warm-up included; unset: the run's
 *	length) and @min_lr (its end_learning_rate)
 * @execution_mode: auto, pipelined or weight_streaming
 * @input: u8 or f32 (what a float input is fed with)
 * @line: the line each key was given on, for messages
 */
struct wse_hparams {
	char file[WSE_HP_PATH_MAX];
	uint32_t set;
	char data_dir[WSE_HP_PATH_MAX];
	uint64_t batch_size, micro_batch_size, shuffle_seed;
	char input[WSE_HP_WORD_MAX];
	char *freeze[WSE_HP_MAX_FREEZE];
	size_t n_freeze;
	char optimizer_type[WSE_HP_WORD_MAX];
	double learning_rate, momentum, weight_decay, min_lr;
	bool nesterov;
	uint64_t warmup_steps, schedule_steps;
	char execution_mode[WSE_HP_WORD_MAX];
	uint64_t max_steps, num_epochs, checkpoint_steps, keep_checkpoint_max, log_steps;
	uint64_t seed, num_csx;
	char model_dir[WSE_HP_PATH_MAX];
	unsigned int line[WSE_HP_NUM_KEYS];
};

#define WSE_HP_BIT(k)		(1u << (k))

static inline bool wse_hp_has(const struct wse_hparams *h, enum wse_hp_key k)
{
	return h->set & WSE_HP_BIT(k);
}

/**
 * wse_hparams_read() - read and check a params.yaml
 * @path: the file
 * @h: filled in (wse_hparams_free() it, also after a failure)
 * @err: "FILE:LINE: SECTION.KEY: what is wrong", or what kept the file
 *	from being read
 * Return: 0, -ENOENT and the like when it cannot be opened, -EINVAL when
 * its content is refused.
 */
int wse_hparams_read(const char *path, struct wse_hparams *h, char *err, size_t errlen);

/* Same, of YAML text; @name stands for the file in messages. */
int wse_hparams_parse(const char *text, size_t len, const char *name, struct wse_hparams *h,
		      char *err, size_t errlen);

void wse_hparams_free(struct wse_hparams *h);

/* "optimizer.momentum": the key as a params.yaml spells it. */
const char *wse_hparams_key_name(enum wse_hp_key k);

/*
 * The schedule list's entries into @h (params_schedule.c), called by the
 * reader for each entry of learning_rate in order: @scheduler as spelled
 * ("Linear", "CosineDecay", "Constant"), the entry's numbers (NAN or
 * UINT64_MAX where not given). 0, or -EINVAL with a sentence in @err.
 */
struct wse_hp_sched_entry {
	const char *scheduler;
	double initial_lr, end_lr, lr;
	uint64_t total_iters;
	unsigned int line;
};
int wse_hparams_add_schedule(struct wse_hparams *h, const struct wse_hp_sched_entry *e,
			     size_t index, char *err, size_t errlen);

/*
 * Writes @h as a params.yaml (params_emit.c), ModelZoo's sections and
 * keys, a schedule as its list: what a run directory keeps as the set it
 * ran with. 0 or -EIO.
 */
int wse_hparams_emit(FILE *f, const struct wse_hparams *h);

/*
 * A params file as command-line options (params_args.c): a tool turns the
 * keys it takes into its own options, placed before the command line's,
 * so that its one option parser checks both and the command line wins.
 */
#define WSE_HP_ARGS_MAX		160

struct wse_hp_args {
	int n;
	char *word[WSE_HP_ARGS_MAX];
};

/*
 * The FILE of --params FILE or --params=FILE in @argv (options end at
 * "--"): NULL if there is none; *@twice is set when it is given again.
 */
const char *wse_hparams_option(int argc, char *const argv[], bool *twice);

/* Appends "--OPT" and, unless NULL, its value (copied). -ENOMEM or -E2BIG. */
int wse_hp_args_add(struct wse_hp_args *a, const char *opt, const char *value);
int wse_hp_args_u64(struct wse_hp_args *a, const char *opt, uint64_t v);
int wse_hp_args_num(struct wse_hp_args *a, const char *opt, double v);
/*
 * The keys both tools take alike - execution mode, learning rate and its
 * schedule, steps - as their options, appended to @a. -ENOMEM or -E2BIG.
 */
int wse_hp_args_schedule(const struct wse_hparams *h, struct wse_hp_args *a);

/*
 * argv[0], then @a's words, then argv[1..]: into *@out (NULL-terminated,
 * its words borrowed from @a and @argv). 0 or -ENOMEM.
 */
int wse_hp_args_argv(const struct wse_hp_args *a, int argc, char *const argv[], int *out_argc,
		     char ***out_argv);
void wse_hp_args_free(struct wse_hp_args *a);

#endif /* WSE_HPARAMS_H */
