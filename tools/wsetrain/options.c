// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain's command line. The flags a ModelZoo user knows are here under
 * their names (--mode train|eval|train_and_eval, --model_dir, --max_steps,
 * --num_csx, --compile_only, --validate_only); the older spellings still
 * work, with a note where their meaning moved.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse_version.h"
#include "train.h"
#include "wse/numparse.h"
#include "wse/usage.h"

void train_usage(FILE *f)
{
	fprintf(f,
"usage: wsetrain MODEL|PROGRAM.wsep [options]\n"
"       wsetrain [MODEL] --eval CHECKPOINT | --predict CHECKPOINT --data FILE [-o OUT]\n"
"       wsetrain PROGRAM.wsep --predict CHECKPOINT --text FILE [-o OUT]\n"
"       wsetrain [MODEL] --predict CHECKPOINT --text FILE --sample N [--prompt TEXT]\n"
"       wsetrain --inspect CHECKPOINT\n"
"       wsetrain MODEL.onnx --export CHECKPOINT -o TRAINED.onnx\n"
"\n"
"Train a model on an IDX dataset (Fashion-MNIST by default) on an attached\n"
"wse device, evaluate a checkpoint, or predict with one. The model is compiled\n"
"for the device's wafer (or a .wsep is taken as it is) and run layer-pipelined\n"
"on a system, or by weight streaming on an appliance (wse-appliance), whose\n"
"MemoryX holds the weights and the optimizer and whose SwarmX spreads each\n"
"batch over its systems.\n"
"\n"
"What to do:\n"
"  --mode MODE           train_and_eval (default: evaluate after every epoch),\n"
"                        train, or eval (of --init-from, --eval or the newest\n"
"                        checkpoint in --model_dir)\n"
"  --eval CKPT           evaluate checkpoint CKPT on the test set (--mode eval)\n"
"  --predict CKPT        write CKPT's class prediction for every image of\n"
"                        --data FILE (an IDX images file), as CSV to -o OUT or\n"
"                        stdout, with the logits of a graph program; with\n"
"                        --text, the likeliest next token at every position\n"
"                        of each validation window\n"
"  --compile-only, --validate-only (or --compile_only, --validate_only)\n"
"                        only run the compiler (-o FILE for the program)\n"
"Data and model:\n"
"  --data DIR            IDX files {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]\n"
"                        (default " TRAIN_DEFAULT_DATA ")\n"
"  --text FILE           a text corpus instead, for a program over tokens (repeat\n"
"                        to join files): the windows of models/gpt_data.py; the\n"
"                        test set is the validation split\n"
"  --train-limit N       use only the first N training samples\n"
"  --test-limit N        evaluate on the first N test samples only\n"
"  --execution-mode M    auto (default: the compiler decides), pipelined or\n"
"                        weight_streaming\n"
"  --params FILE         settings from a params.yaml (ModelZoo's train_input,\n"
"                        model, optimizer and runconfig); the command line\n"
"                        overrides it, and wsecc is given it too\n"
"  --lr X                the learning rate, instead of the program's\n"
"  --warmup N            linear warm-up steps, then cosine decay to --min-lr\n"
"  --min-lr X            the decay's floor (default 0)\n"
"  --schedule-steps N    the step the decay ends at (default: the run's last)\n"
"  --wsecc PATH          the compiler (default: wsecc beside wsetrain, else PATH)\n"
"Systems:\n"
"  --systems N, --num_csx N\n"
"                        an appliance's systems to train on (weight streaming;\n"
"                        default: all of them)\n"
"  --devices N           the device (default: the first whose link is up)\n"
"  --input SOURCE        stream (default: wsetrain sends the samples) or\n"
"                        appliance (its input workers read the dataset, the\n"
"                        directory --data names, from the shared directory)\n"
"Schedule:\n"
"  --epochs N            passes over the training data (default 1)\n"
"  --steps N, --max-steps N, --max_steps N\n"
"                        stop after N optimizer steps in all (default: the\n"
"                        epochs over the data)\n"
"  --seed N              shuffle seed (default: the model's seed)\n"
"  --chunk N             steps per RUN job on the device (default 64)\n"
"  --no-eval             skip the test-set evaluation after each epoch (--mode train)\n"
"Run directory, checkpoints and metrics:\n"
"  --model_dir DIR       write everything here: checkpoint_<step>.ckpt files,\n"
"                        metrics.csv, TensorBoard events, run.json, the compile\n"
"                        report and wafer.svg; resume from its newest checkpoint\n"
"  --runs DIR            make the run directory DIR/MODEL-UTCTIME (default:\n"
"                        $WSETRAIN_RUNS; tools/wsevm --runs sets it)\n"
"  --keep N              checkpoint_<step> files kept (default 5; 0: all)\n"
"  --checkpoint FILE     write the checkpoint to FILE instead (atomically: the\n"
"                        old one stays until the new one is complete)\n"
"  --checkpoint-every K  steps between checkpoints (default: only at the end and\n"
"                        on Ctrl-C)\n"
"  --resume FILE         continue from a checkpoint (same model, data and systems\n"
"                        give the same weights as an uninterrupted run)\n"
"  --init-from FILE      start from a checkpoint's weights only: a fresh optimizer\n"
"                        at step 0 (fine-tuning; the batch and --lr may differ)\n"
"  --inspect FILE        print what a checkpoint holds and exit\n"
"  --export CKPT         write MODEL.onnx (the model the program was compiled\n"
"                        from) with CKPT's trained weights, by name, to -o FILE\n"
"  --csv FILE            metrics as CSV\n"
"  --tensorboard DIR     metrics as a TensorBoard event file in DIR\n"
"  --report N            a progress line every N steps (default 50)\n"
"  --progress STYLE      auto (a bar on a terminal, else lines), bar or lines\n"
"  --expect-accuracy X   exit 1 if the final test accuracy is below X (0..1)\n"
"Sampling (a program over tokens, --text for its characters):\n"
"  --sample N            generate N characters with a checkpoint's weights\n"
"                        (--predict CKPT, or --init-from or --resume), and exit\n"
"  --prompt TEXT         what they follow (default: a newline)\n"
"  --temperature X       0: the likeliest character; else sample (default 0.8)\n"
"  -q, --quiet           only the summary\n"
"  -h, --help            this help\n"
"  -V, --version         the version of wsetrain\n"
"\n"
"Ctrl-C ends the current chunk of steps, writes a checkpoint (to --checkpoint or\n"
"the run directory) and exits 130; a second Ctrl-C exits at once.\n"
"\n"
"Exit status: 0 done, 1 a device, the data or the model refused (the last\n"
"checkpoint is left intact), 2 usage error, 130 interrupted.\n"
"See Documentation/wsetrain.rst.\n");
}

int train_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("wsetrain: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* A whole number in [lo, hi]: the tools' one parser. */
static int number(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	return wse_opt_u64("wsetrain", opt, s, lo, hi, WSE_NUM_PLAIN, v) ? -1 : 0;
}

static bool is_exec_mode(const char *s)
{
	return !strcmp(s, "auto") || !strcmp(s, "pipelined") || !strcmp(s, "weight_streaming");
}

/* --mode: the task; an execution mode there is the older spelling. */
static int parse_mode(const char *s, struct train_opts *o)
{
	if (!strcmp(s, "train_and_eval")) {
		o->task = TRAIN_TASK_TRAIN_AND_EVAL;
	} else if (!strcmp(s, "train")) {
		o->task = TRAIN_TASK_TRAIN;
	} else if (!strcmp(s, "eval")) {
		o->task = TRAIN_TASK_EVAL;
	} else if (is_exec_mode(s)) {
		fprintf(stderr, "wsetrain: note: --mode %s is the execution mode, now spelled --execution-mode %s; --mode takes train, eval or train_and_eval\n",
			s, s);
		o->exec_mode = s;
	} else {
		return train_fail("--mode '%s': expected train, eval or train_and_eval (the execution mode is --execution-mode)",
				  s);
	}
	return 0;
}

enum {
	OPT_DATA = 256, OPT_TRAIN_LIMIT, OPT_TEST_LIMIT, OPT_MODE, OPT_EXEC_MODE, OPT_WSECC,
	OPT_COMPILE_ONLY, OPT_VALIDATE_ONLY, OPT_SYSTEMS, OPT_DEVICES, OPT_EPOCHS, OPT_STEPS,
	OPT_SEED, OPT_CHUNK, OPT_NO_EVAL, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME,
	OPT_INIT_FROM, OPT_EVAL, OPT_PREDICT, OPT_MODEL_DIR, OPT_RUNS, OPT_KEEP, OPT_LR,
	OPT_INSPECT, OPT_CSV, OPT_TENSORBOARD, OPT_REPORT, OPT_PROGRESS, OPT_EXPECT,
	OPT_INPUT, OPT_TEXT, OPT_SAMPLE, OPT_PROMPT, OPT_TEMPERATURE, OPT_EXPORT,
	OPT_PARAMS, OPT_WARMUP, OPT_MIN_LR, OPT_SCHEDULE_STEPS,
};

/* Checks what the options mean together; fills in what one implies. */
static int check_combination(struct train_opts *o)
{
	bool inference = o->task == TRAIN_TASK_EVAL || o->task == TRAIN_TASK_PREDICT;

	if (o->output && !o->pass_through && o->task != TRAIN_TASK_PREDICT)
		return train_fail("-o goes with --compile-only or --predict");
	if (o->resume && o->init_from)
		return train_fail("--resume continues a run, --init-from starts one from its weights: give one of them");
	/* Characters from a checkpoint: --sample's, whichever option names it. */
	if (o->sample && ((!o->resume && !o->init_from) || !o->n_text))
		return train_fail("--sample needs a checkpoint (--predict, --init-from or --resume) and --text FILE (the characters)");
	if (o->prompt && !o->sample)
		return train_fail("--prompt goes with --sample");
	if (o->task == TRAIN_TASK_PREDICT && !o->init_from)
		return train_fail("--predict needs the checkpoint to predict with");
	if (o->task == TRAIN_TASK_PREDICT && !o->sample && !o->n_text &&
	    !strcmp(o->data_dir, TRAIN_DEFAULT_DATA))
		return train_fail("--predict needs --data FILE, the IDX images file to predict for (or, for a program over characters, --text FILE: its validation windows, or --sample N characters)");
	if (o->task == TRAIN_TASK_EVAL && o->resume)
		return train_fail("--mode eval evaluates a checkpoint's weights: give it with --init-from (or --eval)");
	if (o->task == TRAIN_TASK_EVAL && !o->init_from && !o->model_dir)
		return train_fail("--mode eval needs a checkpoint: --init-from FILE, --eval FILE, or --model_dir DIR holding checkpoint_<step>.ckpt files");
	if (inference && (o->checkpoint || o->checkpoint_every))
		return train_fail("--checkpoint and --checkpoint-every go with training, not --mode %s",
				  o->task == TRAIN_TASK_EVAL ? "eval" : "predict");
	if (o->checkpoint_every && !o->checkpoint && !o->model_dir && !o->runs)
		return train_fail("--checkpoint-every needs somewhere to write: --checkpoint FILE, --model_dir DIR or --runs DIR");
	if (o->model_dir && o->runs)
		o->runs = NULL;		/* the run directory is named: nothing to make */
	if (o->input_appliance && o->n_text)
		return train_fail("--input appliance: the input workers read IDX datasets; wsetrain sends a --text corpus's windows itself");
	if (o->systems > 1 && !strcmp(o->exec_mode, "pipelined"))
		return train_fail("--systems %u: layer-pipelined training runs on one system; use --execution-mode weight_streaming (or auto) to train data-parallel",
				  o->systems);
	/*
	 * Data-parallel training is weight streaming; so is the appliance's
	 * input unless layer pipelined is asked for (its system is fed too).
	 */
	if (o->systems > 1 || (o->input_appliance && strcmp(o->exec_mode, "pipelined")))
		o->exec_mode = "weight_streaming";
	/* A sample is predictions from a checkpoint: layer pipelined, on one system. */
	if (o->sample) {
		o->exec_mode = "pipelined";
		o->systems = 1;
		o->systems_set = true;
		o->input_appliance = false;
	}
	if (o->task == TRAIN_TASK_TRAIN)
		o->no_eval = true;
	return 0;
}

/* --export takes the ONNX model, the checkpoint and -o, and nothing of a run. */
static int check_export(const struct train_opts *o)
{
	size_t n = o->model ? strlen(o->model) : 0;

	if (!o->model)
		return train_fail("--export needs the ONNX model the program was compiled from: wsetrain MODEL.onnx --export CHECKPOINT -o TRAINED.onnx");
	if (n >= 5 && !strcmp(o->model + n - 5, ".wsep"))
		return train_fail("--export writes an ONNX model: give the .onnx that %s was compiled from, not the program",
				  o->model);
	if (!o->output)
		return train_fail("--export needs -o FILE, where the trained model goes");
	if (o->task != TRAIN_TASK_TRAIN_AND_EVAL || o->resume || o->init_from || o->pass_through ||
	    o->sample || o->n_text)
		return train_fail("--export only writes a model: it goes with MODEL.onnx and -o alone");
	return 0;
}

int train_parse(int argc, char **argv, struct train_opts *o)
{
	static const struct option lo[] = {
		{ "data", required_argument, NULL, OPT_DATA },
		{ "train-limit", required_argument, NULL, OPT_TRAIN_LIMIT },
		{ "test-limit", required_argument, NULL, OPT_TEST_LIMIT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "execution-mode", required_argument, NULL, OPT_EXEC_MODE },
		{ "wsecc", required_argument, NULL, OPT_WSECC },
		{ "compile-only", no_argument, NULL, OPT_COMPILE_ONLY },
		{ "compile_only", no_argument, NULL, OPT_COMPILE_ONLY },
		{ "validate-only", no_argument, NULL, OPT_VALIDATE_ONLY },
		{ "validate_only", no_argument, NULL, OPT_VALIDATE_ONLY },
		{ "output", required_argument, NULL, 'o' },
		{ "systems", required_argument, NULL, OPT_SYSTEMS },
		{ "num_csx", required_argument, NULL, OPT_SYSTEMS },
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "max_steps", required_argument, NULL, OPT_STEPS },
		{ "max-steps", required_argument, NULL, OPT_STEPS },
		{ "params", required_argument, NULL, OPT_PARAMS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "min-lr", required_argument, NULL, OPT_MIN_LR },
		{ "schedule-steps", required_argument, NULL, OPT_SCHEDULE_STEPS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "no-eval", no_argument, NULL, OPT_NO_EVAL },
		{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
		{ "checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY },
		{ "resume", required_argument, NULL, OPT_RESUME },
		{ "init-from", required_argument, NULL, OPT_INIT_FROM },
		{ "eval", required_argument, NULL, OPT_EVAL },
		{ "predict", required_argument, NULL, OPT_PREDICT },
		{ "model_dir", required_argument, NULL, OPT_MODEL_DIR },
		{ "model-dir", required_argument, NULL, OPT_MODEL_DIR },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "lr", required_argument, NULL, OPT_LR },
		{ "inspect", required_argument, NULL, OPT_INSPECT },
		{ "export", required_argument, NULL, OPT_EXPORT },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "tensorboard", required_argument, NULL, OPT_TENSORBOARD },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "progress", required_argument, NULL, OPT_PROGRESS },
		{ "expect-accuracy", required_argument, NULL, OPT_EXPECT },
		{ "text", required_argument, NULL, OPT_TEXT },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "prompt", required_argument, NULL, OPT_PROMPT },
		{ "temperature", required_argument, NULL, OPT_TEMPERATURE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *runs_env = getenv("WSETRAIN_RUNS");
	char opt[40];
	int idx;
	uint64_t v;
	int c;

	*o = (struct train_opts){
		.data_dir = TRAIN_DEFAULT_DATA, .exec_mode = "auto", .systems = 1, .epochs = 1,
		.report = 50, .chunk = 64, .keep = 5, .expect_accuracy = -1, .temperature = 0.8,
		.runs = runs_env && *runs_env ? runs_env : NULL, .argc = argc, .argv = argv,
		.runs_root = runs_env && *runs_env ? runs_env : NULL,
		.runs_from_env = runs_env && *runs_env,
	};
	/* A params file's settings first: the command line overrides them. */
	if (train_params_argv(argc, argv, &argc, &argv))
		return -1;
	opterr = 0;
	while ((idx = -1, c = getopt_long(argc, argv, "hVo:q", lo, &idx)) != -1) {
		/* The option as named in messages: "--epochs", or the word given. */
		if (idx >= 0)
			snprintf(opt, sizeof(opt), "--%s", lo[idx].name);
		else
			snprintf(opt, sizeof(opt), "%s", argv[optind - 1]);
		switch (c) {
		case 'h':
			train_usage(stdout);
			return 1;
		case 'V':
			fputs(WSE_VERSION_LINE("wsetrain"), stdout);
			return 1;
		case 'q':
			o->quiet = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_DATA:
			o->data_dir = optarg;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, o))
				return -1;
			break;
		case OPT_EXEC_MODE:
			if (!is_exec_mode(optarg))
				return train_fail("--execution-mode '%s': expected auto, pipelined or weight_streaming",
						  optarg);
			o->exec_mode = optarg;
			break;
		case OPT_WSECC:
			o->wsecc = optarg;
			break;
		case OPT_COMPILE_ONLY:
			o->pass_through = "--compile-only";
			break;
		case OPT_VALIDATE_ONLY:
			o->pass_through = "--validate-only";
			break;
		case OPT_DEVICES:
			o->devices = optarg;
			break;
		case OPT_INPUT:
			if (strcmp(optarg, "stream") && strcmp(optarg, "appliance"))
				return train_fail("--input '%s': expected stream or appliance", optarg);
			o->input_appliance = !strcmp(optarg, "appliance");
			break;
		case OPT_NO_EVAL:
			o->task = TRAIN_TASK_TRAIN;
			break;
		case OPT_CHECKPOINT:
			o->checkpoint = optarg;
			break;
		case OPT_RESUME:
			o->resume = optarg;
			break;
		case OPT_INIT_FROM:
			o->init_from = optarg;
			break;
		case OPT_EVAL:
			o->task = TRAIN_TASK_EVAL;
			o->init_from = optarg;
			break;
		case OPT_PREDICT:
			o->task = TRAIN_TASK_PREDICT;
			o->init_from = optarg;
			break;
		case OPT_MODEL_DIR:
			o->model_dir = optarg;
			break;
		case OPT_RUNS:
			o->runs = optarg;
			o->runs_root = optarg;
			o->runs_from_env = false;
			break;
		case OPT_INSPECT:
			o->inspect = optarg;
			break;
		case OPT_EXPORT:
			o->export_ckpt = optarg;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_TENSORBOARD:
			o->tensorboard = optarg;
			break;
		case OPT_PROGRESS:
			if (!strcmp(optarg, "auto"))
				o->progress = TRAIN_PROGRESS_AUTO;
			else if (!strcmp(optarg, "bar"))
				o->progress = TRAIN_PROGRESS_BAR;
			else if (!strcmp(optarg, "lines"))
				o->progress = TRAIN_PROGRESS_LINES;
			else
				return train_fail("--progress '%s': expected auto, bar or lines", optarg);
			break;
		case OPT_TEXT:
			if (o->n_text == WSE_TEXT_MAX_FILES)
				return train_fail("at most %u --text files", WSE_TEXT_MAX_FILES);
			o->text[o->n_text++] = optarg;
			break;
		case OPT_SAMPLE:
			if (number(opt, optarg, 1, 1000000, &v))
				return -1;
			o->sample = (uint32_t)v;
			break;
		case OPT_PROMPT:
			o->prompt = optarg;
			break;
		case OPT_TEMPERATURE:
			if (wse_opt_double("wsetrain", opt, optarg, 0, 100, &o->temperature))
				return -1;
			break;
		case OPT_EXPECT:
			if (wse_opt_double("wsetrain", opt, optarg, 0, 1, &o->expect_accuracy))
				return -1;
			break;
		case OPT_LR:
			if (wse_opt_double("wsetrain", opt, optarg, 1e-12, 1e6, &o->lr))
				return -1;
			o->lr_set = true;
			break;
		case OPT_PARAMS:
			o->params = optarg;	/* its settings are in argv already */
			break;
		case OPT_WARMUP:
			if (number(opt, optarg, 0, UINT32_MAX, &o->warmup))
				return -1;
			o->warmup_set = true;
			break;
		case OPT_SCHEDULE_STEPS:
			if (number(opt, optarg, 1, UINT32_MAX, &o->schedule_steps))
				return -1;
			o->schedule_steps_set = true;
			break;
		case OPT_MIN_LR:
			if (wse_opt_double("wsetrain", opt, optarg, 0, 1e6, &o->min_lr))
				return -1;
			o->min_lr_set = true;
			break;
		case OPT_SYSTEMS:
			if (number(opt, optarg, 1, TRAIN_MAX_SYSTEMS, &v))
				return -1;
			o->systems = (unsigned int)v;
			o->systems_set = true;
			break;
		case OPT_EPOCHS:
			if (number(opt, optarg, 1, 100000, &v))
				return -1;
			o->epochs = (uint32_t)v;
			break;
		case OPT_STEPS:
			if (number(opt, optarg, 1, UINT32_MAX, &v))
				return -1;
			o->max_steps = v;
			break;
		case OPT_TRAIN_LIMIT:
		case OPT_TEST_LIMIT:
			if (number(opt, optarg, 1, UINT32_MAX, &v))
				return -1;
			*(c == OPT_TRAIN_LIMIT ? &o->train_limit : &o->test_limit) = (uint32_t)v;
			break;
		case OPT_SEED:
			if (number(opt, optarg, 0, UINT64_MAX, &v))
				return -1;
			o->seed = v;
			o->seed_set = true;
			break;
		case OPT_CHUNK:
			if (number(opt, optarg, 1, 4096, &v))
				return -1;
			o->chunk = (uint32_t)v;
			break;
		case OPT_KEEP:
			if (number(opt, optarg, 0, UINT32_MAX, &v))
				return -1;
			o->keep = (uint32_t)v;
			break;
		case OPT_CHECKPOINT_EVERY:
		case OPT_REPORT:
			if (number(opt, optarg, 1, UINT32_MAX, &v))
				return -1;
			*(c == OPT_REPORT ? &o->report : &o->checkpoint_every) = (uint32_t)v;
			break;
		default:
			return train_fail("unknown option, or one missing its value: '%s'", opt);
		}
	}
	if (o->inspect)
		return 0;
	if (optind < argc - 1)
		return train_fail("one model only; '%s' is extra", argv[optind + 1]);
	if (optind < argc)
		o->model = argv[optind];
	if (o->devices && (!o->devices[0] || strlen(o->devices) >= 16 || strchr(o->devices, ',')))
		return train_fail("--devices '%s': one device index: training runs on one device, a system or an appliance of several (--systems N of them)",
				  o->devices);
	if (o->export_ckpt)
		return check_export(o);
	/* Evaluating or predicting, the checkpoint's run directory can name the model. */
	if (!o->model && !o->init_from && !o->resume &&
	    !(o->task == TRAIN_TASK_EVAL && o->model_dir))
		return train_fail("no model given");
	return check_combination(o);
}
