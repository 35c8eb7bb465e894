// SPDX-License-Identifier: GPL-2.0-only
/* wsetrain's command line. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse_version.h"
#include "train.h"
#include "wse/numparse.h"

void train_usage(FILE *f)
{
	fprintf(f,
"usage: wsetrain MODEL|PROGRAM.wsep [options]\n"
"\n"
"Train a model on an IDX dataset (Fashion-MNIST by default) on attached wse\n"
"devices. The model is compiled for the first device's wafer (or a .wsep is\n"
"taken as it is), loaded on every system, and trained layer-pipelined or by\n"
"weight streaming: MemoryX (here) holds the weights and the optimizer,\n"
"SwarmX broadcasts each layer's weights to the systems and sums their\n"
"gradients, and the batch is split between them.\n"
"\n"
"Data and model:\n"
"  --data DIR            IDX files {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]\n"
"                        (default " TRAIN_DEFAULT_DATA ")\n"
"  --train-limit N       use only the first N training samples\n"
"  --test-limit N        evaluate on the first N test samples only\n"
"  --mode MODE           auto (default: the compiler decides), pipelined or\n"
"                        weight_streaming\n"
"  --wsecc PATH          the compiler (default: wsecc beside wsetrain, else PATH)\n"
"  --compile-only, --validate-only\n"
"                        only run the compiler (-o FILE for the program)\n"
"Systems:\n"
"  --systems N           train on N devices (weight streaming; default 1)\n"
"  --devices LIST        which ones, e.g. 0,1 (default: the first N whose link is up)\n"
"Schedule:\n"
"  --epochs N            passes over the training data (default 1)\n"
"  --steps N             stop after N optimizer steps in all\n"
"  --seed N              shuffle seed (default: the model's seed)\n"
"  --chunk N             steps per RUN job on the device (default 64)\n"
"  --no-eval             skip the test-set evaluation after each epoch\n"
"Checkpoints and metrics:\n"
"  --checkpoint FILE     write a checkpoint here every --checkpoint-every steps and\n"
"                        at the end (atomically: the old one stays until the new\n"
"                        one is complete)\n"
"  --checkpoint-every K  steps between checkpoints (default: only at the end)\n"
"  --resume FILE         continue from a checkpoint (same model, data and systems\n"
"                        give the same weights as an uninterrupted run)\n"
"  --inspect FILE        print what a checkpoint holds and exit\n"
"  --csv FILE            metrics as CSV\n"
"  --tensorboard DIR     metrics as a TensorBoard event file in DIR\n"
"  --report N            a progress line every N steps (default 50)\n"
"  --expect-accuracy X   exit 1 if the final test accuracy is below X (0..1)\n"
"  -q, --quiet           only the summary\n"
"  -h, --help            this help\n"
"  -V, --version         the version of wsetrain\n"
"\n"
"Exit status: 0 trained, 1 a device, the data or the model refused (the last\n"
"checkpoint is left intact), 2 usage error. See Documentation/wsetrain.rst.\n");
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

enum {
	OPT_DATA = 256, OPT_TRAIN_LIMIT, OPT_TEST_LIMIT, OPT_MODE, OPT_WSECC, OPT_COMPILE_ONLY,
	OPT_VALIDATE_ONLY, OPT_SYSTEMS, OPT_DEVICES, OPT_EPOCHS, OPT_STEPS, OPT_SEED, OPT_CHUNK,
	OPT_NO_EVAL, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME, OPT_INSPECT, OPT_CSV,
	OPT_TENSORBOARD, OPT_REPORT, OPT_EXPECT,
};

int train_parse(int argc, char **argv, struct train_opts *o)
{
	static const struct option lo[] = {
		{ "data", required_argument, NULL, OPT_DATA },
		{ "train-limit", required_argument, NULL, OPT_TRAIN_LIMIT },
		{ "test-limit", required_argument, NULL, OPT_TEST_LIMIT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "wsecc", required_argument, NULL, OPT_WSECC },
		{ "compile-only", no_argument, NULL, OPT_COMPILE_ONLY },
		{ "validate-only", no_argument, NULL, OPT_VALIDATE_ONLY },
		{ "output", required_argument, NULL, 'o' },
		{ "systems", required_argument, NULL, OPT_SYSTEMS },
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "no-eval", no_argument, NULL, OPT_NO_EVAL },
		{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
		{ "checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY },
		{ "resume", required_argument, NULL, OPT_RESUME },
		{ "inspect", required_argument, NULL, OPT_INSPECT },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "tensorboard", required_argument, NULL, OPT_TENSORBOARD },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "expect-accuracy", required_argument, NULL, OPT_EXPECT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char opt[40];
	int idx;
	uint64_t v;
	int c;

	*o = (struct train_opts){
		.data_dir = TRAIN_DEFAULT_DATA, .mode = "auto", .systems = 1, .epochs = 1,
		.report = 50, .chunk = 64, .expect_accuracy = -1,
	};
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
			if (strcmp(optarg, "auto") && strcmp(optarg, "pipelined") &&
			    strcmp(optarg, "weight_streaming"))
				return train_fail("--mode '%s': expected auto, pipelined or weight_streaming",
						  optarg);
			o->mode = optarg;
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
		case OPT_NO_EVAL:
			o->no_eval = true;
			break;
		case OPT_CHECKPOINT:
			o->checkpoint = optarg;
			break;
		case OPT_RESUME:
			o->resume = optarg;
			break;
		case OPT_INSPECT:
			o->inspect = optarg;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_TENSORBOARD:
			o->tensorboard = optarg;
			break;
		case OPT_EXPECT:
			if (wse_opt_double("wsetrain", opt, optarg, 0, 1, &o->expect_accuracy))
				return -1;
			break;
		case OPT_SYSTEMS:
			if (number(opt, optarg, 1, TRAIN_MAX_SYSTEMS, &v))
				return -1;
			o->systems = (unsigned int)v;
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
		case OPT_CHECKPOINT_EVERY:
		case OPT_REPORT:
			if (number(opt, optarg, 1, UINT32_MAX, &v))
				return -1;
			*(c == OPT_REPORT ? &o->report : &o->checkpoint_every) = (uint32_t)v;
			break;
		default:
			return train_fail("unknown option or missing value '%s' (see --help)", opt);
		}
	}
	if (o->inspect)
		return 0;
	if (optind >= argc)
		return train_fail("no model given (see --help)");
	if (optind != argc - 1)
		return train_fail("one model only; '%s' is extra (see --help)", argv[optind + 1]);
	o->model = argv[optind];
	if (o->output && !o->pass_through)
		return train_fail("-o goes with --compile-only");
	if (o->checkpoint_every && !o->checkpoint)
		return train_fail("--checkpoint-every needs --checkpoint FILE");
	if (o->systems > 1 && !strcmp(o->mode, "pipelined"))
		return train_fail("--systems %u: layer-pipelined training runs on one system; use --mode weight_streaming (or auto) to train data-parallel",
				  o->systems);
	/* Data-parallel training is weight streaming. */
	if (o->systems > 1)
		o->mode = "weight_streaming";
	return 0;
}
