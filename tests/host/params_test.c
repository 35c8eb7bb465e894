// SPDX-License-Identifier: GPL-2.0-only
/*
 * The params.yaml reader (wse/hparams.h): every key, ModelZoo's schedule
 * list, and the refusals naming file, line and key. The writer's output
 * reads back to the same values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/hparams.h"

static int parse(const char *text, struct wse_hparams *h, char *err, size_t errlen)
{
	return wse_hparams_parse(text, strlen(text), "p.yaml", h, err, errlen);
}

static const char full[] =
	"# every key\n"
	"train_input:\n"
	"  data_dir: /usr/share/datasets/fashion-mnist\n"
	"  batch_size: 64\n"
	"  micro_batch_size: 16\n"
	"  shuffle_seed: 7\n"
	"model:\n"
	"  input: F32\n"
	"  freeze: [\"conv*\", fc.bias]\n"
	"optimizer:\n"
	"  optimizer_type: AdamW\n"
	"  learning_rate:\n"
	"    - scheduler: Linear\n"
	"      initial_learning_rate: 0.0\n"
	"      end_learning_rate: 3e-3\n"
	"      total_iters: 10\n"
	"    - scheduler: CosineDecay\n"
	"      initial_learning_rate: 3e-3\n"
	"      end_learning_rate: 1e-4\n"
	"      total_iters: 90\n"
	"  momentum: 0.9\n"
	"  nesterov: false\n"
	"  weight_decay: 0.01\n"
	"runconfig:\n"
	"  execution_mode: weight_streaming\n"
	"  max_steps: 100\n"
	"  num_epochs: 2\n"
	"  checkpoint_steps: 50\n"
	"  keep_checkpoint_max: 3\n"
	"  log_steps: 10\n"
	"  seed: 5\n"
	"  num_csx: 2\n"
	"  model_dir: runs/x\n";

static void check_full(struct __test_metadata *_metadata, const struct wse_hparams *h)
{
	EXPECT_STREQ("/usr/share/datasets/fashion-mnist", h->data_dir);
	EXPECT_EQ(64U, h->batch_size);
	EXPECT_EQ(16U, h->micro_batch_size);
	EXPECT_EQ(7U, h->shuffle_seed);
	EXPECT_STREQ("f32", h->input);
	ASSERT_EQ(2U, h->n_freeze);
	EXPECT_STREQ("conv*", h->freeze[0]);
	EXPECT_STREQ("fc.bias", h->freeze[1]);
	EXPECT_STREQ("adamw", h->optimizer_type);
	EXPECT_EQ(3e-3, h->learning_rate);
	EXPECT_EQ(10U, h->warmup_steps);
	EXPECT_EQ(100U, h->schedule_steps);
	EXPECT_EQ(1e-4, h->min_lr);
	EXPECT_EQ(0.9, h->momentum);
	EXPECT_FALSE(h->nesterov);
	EXPECT_EQ(0.01, h->weight_decay);
	EXPECT_STREQ("weight_streaming", h->execution_mode);
	EXPECT_EQ(100U, h->max_steps);
	EXPECT_EQ(2U, h->num_epochs);
	EXPECT_EQ(50U, h->checkpoint_steps);
	EXPECT_EQ(3U, h->keep_checkpoint_max);
	EXPECT_EQ(10U, h->log_steps);
	EXPECT_EQ(5U, h->seed);
	EXPECT_EQ(2U, h->num_csx);
	EXPECT_STREQ("runs/x", h->model_dir);
	EXPECT_TRUE(wse_hp_has(h, WSE_HP_WARMUP_STEPS));
	EXPECT_TRUE(wse_hp_has(h, WSE_HP_SCHEDULE_STEPS));
	EXPECT_TRUE(wse_hp_has(h, WSE_HP_MIN_LR));
	EXPECT_EQ(12U, h->line[WSE_HP_LEARNING_RATE]);
}

TEST(every_key)
{
	struct wse_hparams h;
	char err[512] = "";

	ASSERT_EQ(0, parse(full, &h, err, sizeof(err))) TH_LOG("%s", err);
	check_full(_metadata, &h);
	wse_hparams_free(&h);
}

/* What a run directory keeps reads back as what was written. */
TEST(emitted_reads_back)
{
	struct wse_hparams h, back;
	char err[512] = "", *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(0, parse(full, &h, err, sizeof(err))) TH_LOG("%s", err);
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, wse_hparams_emit(f, &h));
	fclose(f);
	ASSERT_EQ(0, wse_hparams_parse(text, len, "emitted", &back, err, sizeof(err)))
		TH_LOG("%s\n%s", err, text);
	EXPECT_EQ(h.set, back.set) TH_LOG("%s", text);
	back.line[WSE_HP_LEARNING_RATE] = 12;	/* the layout differs; the values not */
	check_full(_metadata, &back);
	wse_hparams_free(&h);
	wse_hparams_free(&back);
	free(text);
}

TEST(plain_rate_and_empty)
{
	struct wse_hparams h;
	char err[512] = "";

	ASSERT_EQ(0, parse("optimizer:\n  learning_rate: 0.05\n  optimizer_type: SGD\n", &h, err,
			   sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0.05, h.learning_rate);
	EXPECT_STREQ("sgd", h.optimizer_type);
	EXPECT_EQ(WSE_HP_BIT(WSE_HP_LEARNING_RATE) | WSE_HP_BIT(WSE_HP_OPTIMIZER_TYPE), h.set);
	ASSERT_EQ(0, parse("", &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0U, h.set);
	ASSERT_EQ(0, parse("runconfig:\n", &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0U, h.set);
	/* A decay without a length ends with the run. */
	ASSERT_EQ(0, parse("optimizer:\n  learning_rate:\n    - scheduler: CosineDecay\n"
			   "      initial_learning_rate: 0.1\n", &h, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0.1, h.learning_rate);
	EXPECT_EQ(0.0, h.min_lr);
	EXPECT_FALSE(wse_hp_has(&h, WSE_HP_SCHEDULE_STEPS));
	EXPECT_FALSE(wse_hp_has(&h, WSE_HP_WARMUP_STEPS));
	EXPECT_TRUE(wse_hp_has(&h, WSE_HP_MIN_LR));
}

struct refusal {
	const char *text;
	const char *msg;	/* the whole start of the message */
};

TEST(refusals_name_file_line_and_key)
{
	static const struct refusal cases[] = {
		{ "runconfig:\n  max_steps: 10\n  max_step: 5\n",
		  "p.yaml:3: runconfig.max_step: unknown key (runconfig takes execution_mode, max_steps" },
		{ "train_input:\n  batch_size: lots\n",
		  "p.yaml:2: train_input.batch_size: 'lots': expected a whole number from 1 to 65536" },
		{ "train_input:\n  batch_size: 0\n",
		  "p.yaml:2: train_input.batch_size: '0': expected a whole number from 1 to 65536" },
		{ "train_input:\n  batch_size: \"64\"\n",
		  "p.yaml:2: train_input.batch_size: expected a whole number, got a string '64'" },
		{ "train_input:\n  batch_size: [1, 2]\n",
		  "p.yaml:2: train_input.batch_size: expected a whole number, got a list" },
		{ "optimizer:\n  momentum: 1.5\n",
		  "p.yaml:2: optimizer.momentum: '1.5': expected a number from 0 to 0.999999" },
		{ "optimizer:\n  optimizer_type: lamb\n",
		  "p.yaml:2: optimizer.optimizer_type: 'lamb': expected sgd, momentum, nesterov, adam or adamw" },
		{ "optimizer:\n  nesterov: maybe\n",
		  "p.yaml:2: optimizer.nesterov: expected true or false, got a string 'maybe'" },
		{ "runconfig:\n  execution_mode: fast\n",
		  "p.yaml:2: runconfig.execution_mode: 'fast': expected auto, pipelined or weight_streaming" },
		{ "eval_input:\n  batch_size: 4\n",
		  "p.yaml:1: eval_input: unknown section: expected train_input, model, optimizer or runconfig" },
		{ "runconfig:\n  seed: 1\n  seed: 2\n",
		  "p.yaml:3: runconfig.seed: given twice (first on line 2)" },
		{ "- 1\n- 2\n", "p.yaml:1: expected a mapping of sections" },
		{ "runconfig: 5\n", "p.yaml:1: runconfig: expected a mapping of keys, got a string" },
		{ "runconfig:\n  max_steps: [\n", "p.yaml:3: not YAML: " },
		{ "optimizer:\n  learning_rate:\n    - scheduler: Step\n      total_iters: 3\n",
		  "p.yaml:3: optimizer.learning_rate[0]: scheduler 'Step': the device runs Linear" },
		{ "optimizer:\n  learning_rate:\n    - scheduler: Linear\n      initial_learning_rate: 0.1\n"
		  "      end_learning_rate: 1\n      total_iters: 3\n",
		  "p.yaml:3: optimizer.learning_rate[0]: Linear: the device's warm-up starts at 0" },
		{ "optimizer:\n  learning_rate:\n    - scheduler: Linear\n"
		  "      end_learning_rate: 1\n      total_iters: 3\n",
		  "p.yaml:3: optimizer.learning_rate: a Linear warm-up needs a CosineDecay entry" },
		{ "optimizer:\n  learning_rate:\n    - scheduler: CosineDecay\n      initial_learning_rate: 1\n"
		  "      end_learning_rate: 0.1\n      total_iters: 3\n"
		  "    - scheduler: CosineDecay\n      initial_learning_rate: 1\n",
		  "p.yaml:7: optimizer.learning_rate[1]: CosineDecay: nothing follows the decay" },
		{ "optimizer:\n  learning_rate:\n    - scheduler: CosineDecay\n      initial_learning_rate: 1\n"
		  "      total_iter: 3\n",
		  "p.yaml:5: optimizer.learning_rate[0].total_iter: unknown key" },
		{ "optimizer:\n  learning_rate: []\n", "p.yaml:2: optimizer.learning_rate: an empty schedule" },
		{ "optimizer:\n  learning_rate: -1\n",
		  "p.yaml:2: optimizer.learning_rate: '-1': expected a number from 1e-12 to 1e+06" },
	};
	struct wse_hparams h;
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, parse(cases[i].text, &h, err, sizeof(err))) TH_LOG("%s", cases[i].text);
		EXPECT_EQ(0, strncmp(err, cases[i].msg, strlen(cases[i].msg)))
			TH_LOG("case %zu: got '%s', expected '%s...'", i, err, cases[i].msg);
		wse_hparams_free(&h);
	}
}

TEST(files)
{
	char dir[] = "/tmp/params_test.XXXXXX", path[64], err[512];
	struct wse_hparams h;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.yaml", dir);
	EXPECT_EQ(-ENOENT, wse_hparams_read(path, &h, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cannot read the params file")) TH_LOG("%s", err);
	snprintf(path, sizeof(path), "%s/p.yaml", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("runconfig:\n  num_epochs: 3\n", f);
	fclose(f);
	ASSERT_EQ(0, wse_hparams_read(path, &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(3U, h.num_epochs);
	EXPECT_STREQ(path, h.file);
	EXPECT_EQ(2U, h.line[WSE_HP_NUM_EPOCHS]);
	unlink(path);
	rmdir(dir);
}

TEST(key_names)
{
	EXPECT_STREQ("optimizer.learning_rate", wse_hparams_key_name(WSE_HP_LEARNING_RATE));
	EXPECT_STREQ("runconfig.max_steps", wse_hparams_key_name(WSE_HP_MAX_STEPS));
	EXPECT_STREQ("train_input.batch_size", wse_hparams_key_name(WSE_HP_BATCH_SIZE));
}

TEST_HARNESS_MAIN
