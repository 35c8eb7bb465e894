// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsecc: the wse compiler's command line. Documentation/wsecc.rst is its
 * manual page. Exit status: 0 success, 1 the model was refused (syntax,
 * no kernel, does not fit), 2 bad usage, 3 an output could not be written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse_version.h"
#include "wse/compiler.h"
#include "wse/compiler_graph.h"
#include "wse/numparse.h"
#include "wse/filekind.h"
#include "wse/outfile.h"
#include "wse/usage.h"
#include "params.h"

#define EXIT_REFUSED	1
#define EXIT_USAGE	2
#define EXIT_OUTPUT	3

static const char usage_text[] =
	"usage: wsecc MODEL [options]\n"
	"Compile a model description into a placed .wsep program for a wse wafer.\n"
	"MODEL is a model text file or an ONNX model (NAME.onnx, opset 13 or later),\n"
	"which becomes a graph program.\n"
	"\n"
	"  --wafer SPEC        wse1, wse2, wse3, or WxH[:SRAM][@CLOCK] (e.g. 64x64:48K);\n"
	"                      default: the model's 'wafer' statement, else " WSE_WAFER_DEFAULT "\n"
	"  --execution-mode MODE\n"
	"                      auto (default), pipelined or weight_streaming\n"
	"                      (--mode MODE is the older spelling)\n"
	"  --params FILE       settings from a params.yaml (ModelZoo's sections\n"
	"                      train_input, model, optimizer, runconfig); options\n"
	"                      given on the command line override it\n"
	"  --batch N           override the model's batch size (1..65536); for ONNX, the\n"
	"                      value of a symbolic first input dimension (default 1)\n"
	"  --micro-batch N     samples per micro-batch (1..the batch): weight streaming\n"
	"                      runs the batch in micro-batches of N and sizes SRAM for\n"
	"                      one (default: the largest that fits); pipelined, samples\n"
	"                      enter the pipeline N at a time (default 1)\n"
	"  --precision P       fp32 (default), fp16 or bf16: matrix products on 16-bit\n"
	"                      inputs with fp32 accumulation, fp32 master weights and\n"
	"                      optimizer state; fp16 scales the loss (GradScaler's rules)\n"
	"  --validate-only     only check that every op maps to a kernel (no placement)\n"
	"  --compile-only      compile and write the program (-o, default MODEL_NAME.wsep)\n"
	"  -o, --output FILE   write the .wsep program to FILE (- for standard output;\n"
	"                      a device or FIFO is written to, never replaced)\n"
	"  --report            print the placement and estimate report and write an SVG\n"
	"  --svg FILE          where --report writes the SVG (default MODEL_NAME.svg)\n"
	"  --systems LIST      the system counts --report estimates a weight-streaming\n"
	"                      program on, data-parallel at its batch per system\n"
	"                      (default 1,2,4,8,16,32,64,128,192; each 1..192)\n"
	"  --weights           include initial weights (default for pipelined)\n"
	"  --no-weights        leave them out (default for weight streaming: MemoryX\n"
	"                      makes them from the seed); ONNX: compile from the\n"
	"                      shapes alone, never reading the weights, for --report\n"
	"                      or --validate-only (no program is written)\n"
	"Training (an ONNX model's; they override a model text's 'optimizer' and\n"
	"'seed'; wsetrain can set --lr and the schedule again at run time):\n"
	"  --optimizer KIND    sgd, momentum, nesterov, adam (default), adamw\n"
	"  --lr X              learning rate (default 1e-3)\n"
	"  --momentum X        momentum (default 0.9)\n"
	"  --weight-decay X    L2 decay, decoupled for adamw (default 0; adamw 0.01)\n"
	"  --warmup N          linear warm-up steps, then cosine decay to --min-lr\n"
	"  --steps N, --max-steps N, --max_steps N\n"
	"                      the optimizer steps the run takes: the decay ends there\n"
	"  --schedule-steps N  the step the decay ends at instead (default --steps)\n"
	"  --min-lr X          the cosine's floor (default 0)\n"
	"  --seed N            dropout masks and the host's batch order (default 1)\n"
	"ONNX models only:\n"
	"  --recompute WHEN    weight streaming: auto (default: when a micro-batch's\n"
	"                      activations do not fit), on or off; with it each unit\n"
	"                      keeps only its input and recomputes the rest before its\n"
	"                      backward pass\n"
	"  --input u8|f32      what a float input is fed with: bytes scaled by 1/255\n"
	"                      on the device (default) or floats\n"
	"  --freeze PATTERN    keep the initializers whose names match the glob PATTERN\n"
	"                      constant (repeatable); --validate-only lists what trains\n"
	"  -q, --quiet         no summary line\n"
	"  -h, --help          this help\n"
	"  -V, --version       the version of wsecc\n"
	"\n"
	"Exit status: 0 ok, 1 model refused, 2 usage error, 3 output not written.\n"
	"See Documentation/wsecc.rst and Documentation/model-format.rst.\n";

static int precision_parse(const char *s, enum wsep_precision *out)
{
	static const enum wsep_precision all[] = {
		WSEP_PRECISION_FP32, WSEP_PRECISION_FP16, WSEP_PRECISION_BF16,
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, wsep_precision_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -1;
}

/* " in bf16" for the summary line; nothing for fp32. */
static const char *precision_note(enum wsep_precision p)
{
	return p == WSEP_PRECISION_FP16 ? " in fp16" : p == WSEP_PRECISION_BF16 ? " in bf16" : "";
}

static void print_error(const struct wsecc_error *e)
{
	if (e->line)
		fprintf(stderr, "%s:%u:%u: error: %s\n", e->file, e->line, e->col, e->msg);
	else if (e->file[0])
		fprintf(stderr, "%s: error: %s\n", e->file, e->msg);
	else
		fprintf(stderr, "wsecc: error: %s\n", e->msg);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "wsecc: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'wsecc --help' for more information.\n");
	return EXIT_USAGE;
}

static int validate_only(const struct wsecc_model *m, int quiet)
{
	struct wsecc_op ops[WSECC_MAX_OPS];
	struct wsecc_error err;
	size_t n;

	if (wsecc_validate(m, &err)) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	n = wsecc_lower(m, ops, WSECC_MAX_OPS);
	if (!quiet) {
		printf("%s: ok: %u layers lower to %zu ops, each with a kernel\n", m->file,
		       m->num_layers, n);
		for (size_t i = 0; i < n; i++) {
			char layer[16] = "-";

			if (ops[i].layer >= 0)
				snprintf(layer, sizeof(layer), "%d", ops[i].layer);
			printf("  %-3s %-18s -> %s\n", layer, ops[i].name, ops[i].kernel);
		}
	}
	return 0;
}

static bool is_onnx(const char *path)
{
	size_t n = strlen(path);

	return n > 5 && strcmp(path + n - 5, ".onnx") == 0;
}

/*
 * Refuse what is plainly not a model, saying what it is; an ONNX model is
 * known by its name or its structure.
 */
static int check_model_kind(const char *path, bool *onnx)
{
	unsigned int models = WSE_FILE_BIT(WSE_FILE_ONNX) | WSE_FILE_BIT(WSE_FILE_TEXT);
	enum wse_file_kind k = wse_file_kind(path, NULL);

	/* A missing file, or a damaged .onnx one, is the reader's to explain. */
	models |= WSE_FILE_BIT(WSE_FILE_MISSING);
	if (is_onnx(path))
		models |= WSE_FILE_BIT(WSE_FILE_UNKNOWN);
	*onnx = is_onnx(path) || k == WSE_FILE_ONNX;
	return wse_file_expect("wsecc", path, models, "a model (ONNX or model text)");
}

#define MAX_FREEZE 64

/* --freeze patterns. */
struct freeze_args {
	const char *pattern[MAX_FREEZE];
	size_t n;
};

/* The importer's warnings and notes about parameters; @warnings_only: not the notes. */
static void print_notes(const char *path, const char *notes, bool warnings_only)
{
	for (const char *line = notes; line && *line;) {
		size_t len = strcspn(line, "\n");

		if (!warnings_only || strncmp(line, "note: ", 6))
			fprintf(stderr, "%s: %.*s\n", path, (int)len, line);
		line += len + (line[len] == '\n');
	}
}

/* An ONNX model with --validate-only: import, list each node and its kernel, check. */
static int onnx_validate(const char *path, uint32_t batch, bool no_weights,
			 const struct freeze_args *fz, int quiet)
{
	struct wsecc_onnx_options opt = { .batch = batch, .no_weights = no_weights,
					  .freeze = fz->pattern, .n_freeze = fz->n };
	struct wsecc_graph *g;
	struct wsecc_error err;
	size_t counts[WSECC_NODE_REFUSED + 1];
	int bad;

	if (wsecc_onnx_import(path, &opt, &g, &err)) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	bad = wsecc_graph_check(g, &err);
	wsecc_graph_counts(g, counts);
	if (!quiet) {
		printf("%s: %s: %s, opset %lld, %zu nodes (batch %lld): %zu run as kernels, %zu folded into constants, %zu fused, %zu without a kernel\n",
		       path, bad ? "refused" : "ok", g->producer, (long long)g->opset, g->n_nodes,
		       (long long)g->batch, counts[WSECC_NODE_KERNEL] + counts[WSECC_NODE_LOSS],
		       counts[WSECC_NODE_FOLDED], counts[WSECC_NODE_FUSED],
		       counts[WSECC_NODE_REFUSED] + counts[WSECC_NODE_PENDING]);
		wsecc_graph_list(stdout, g);
		wsecc_graph_list_params(stdout, g);
	}
	print_notes(path, g->notes, true);	/* the listing shows what is frozen */
	wsecc_graph_free(g);
	if (bad) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	return 0;
}

/* The training an ONNX model lacks, from the command line. */
struct train_args {
	const char *optimizer, *lr, *momentum, *weight_decay, *warmup, *steps, *min_lr, *seed, *input;
	const char *schedule_steps;
};

/* A fresh optimizer of kind @k with torch.optim's defaults. */
static int optimizer_kind(const char *k, struct wsep_optimizer *opt)
{
	*opt = (struct wsep_optimizer){ .lr = 1e-3 };
	if (!strcmp(k, "sgd")) {
		opt->kind = WSEP_OPT_SGD;
	} else if (!strcmp(k, "momentum") || !strcmp(k, "nesterov")) {
		opt->kind = WSEP_OPT_MOMENTUM;
		opt->momentum = 0.9;
		opt->nesterov = !strcmp(k, "nesterov");
	} else if (!strcmp(k, "adam") || !strcmp(k, "adamw")) {
		opt->kind = !strcmp(k, "adam") ? WSEP_OPT_ADAM : WSEP_OPT_ADAMW;
		opt->beta1 = 0.9;
		opt->beta2 = 0.999;
		opt->eps = 1e-8;
		opt->weight_decay = opt->kind == WSEP_OPT_ADAMW ? 0.01 : 0;
	} else {
		return usage_error("--optimizer '%s': expected sgd, momentum, nesterov, adam or adamw", k);
	}
	return 0;
}

/*
 * The learning-rate schedule: --warmup (and --min-lr) over the run's
 * --steps, or --schedule-steps when the decay ends elsewhere. Without a
 * length the run's is not known yet: wsetrain sets the schedule then.
 */
static int schedule_from_args(const struct train_args *t, struct wsep_optimizer *opt, int quiet)
{
	const char *len_opt = t->schedule_steps ? "--schedule-steps" : "--steps";
	const char *len = t->schedule_steps ? t->schedule_steps : t->steps;
	uint64_t warmup = 0, total;

	if (!t->warmup && !t->min_lr) {
		if (t->schedule_steps)
			return usage_error("%s", "--schedule-steps is the length of a schedule: add --warmup N (0 for none) or --min-lr X");
		return 0;
	}
	if (t->warmup && wse_opt_u64("wsecc", "--warmup", t->warmup, 0, UINT32_MAX, WSE_NUM_PLAIN,
				     &warmup))
		return EXIT_USAGE;
	if (!len) {
		if (!quiet)
			fprintf(stderr, "wsecc: note: the schedule has no length yet (--steps or --schedule-steps): the program keeps a constant rate, and wsetrain given the same --warmup/--min-lr (or --params) sets the schedule from the run's steps\n");
		opt->min_lr = 0;	/* a constant rate has no floor */
		return 0;
	}
	if (wse_opt_u64("wsecc", len_opt, len, warmup + 1, UINT32_MAX, WSE_NUM_PLAIN, &total))
		return EXIT_USAGE;
	opt->warmup = warmup;
	opt->total_steps = total;
	opt->schedule = WSEP_LR_WARMUP_COSINE;
	return 0;
}

/*
 * The optimizer from the command line: @base (a model text's own) with
 * what is given over it, or a fresh one of --optimizer's kind (default
 * adam, for an ONNX model).
 */
static int optimizer_from_args(const struct train_args *t, const struct wsep_optimizer *base,
			       struct wsep_optimizer *opt, int quiet)
{
	int ret;

	if (base && !t->optimizer) {
		*opt = *base;
	} else {
		ret = optimizer_kind(t->optimizer ? t->optimizer : "adam", opt);
		if (ret)
			return ret;
	}
	if ((t->lr && wse_opt_double("wsecc", "--lr", t->lr, 0, 1e6, &opt->lr)) ||
	    (t->weight_decay &&
	     wse_opt_double("wsecc", "--weight-decay", t->weight_decay, 0, 1e6, &opt->weight_decay)) ||
	    (t->min_lr && wse_opt_double("wsecc", "--min-lr", t->min_lr, 0, 1e6, &opt->min_lr)))
		return EXIT_USAGE;
	if (t->momentum) {
		if (opt->kind != WSEP_OPT_MOMENTUM)
			return usage_error("%s", "--momentum needs --optimizer momentum or nesterov");
		if (wse_opt_double("wsecc", "--momentum", t->momentum, 0, 0.999999, &opt->momentum))
			return EXIT_USAGE;
	}
	return schedule_from_args(t, opt, quiet);
}

/* An ONNX model's training: the optimizer, the seed and what feeds a float input. */
static int graph_training_from_args(const struct train_args *t, struct wsecc_graph_options *o,
				    int quiet)
{
	int ret = optimizer_from_args(t, NULL, &o->opt, quiet);

	if (ret)
		return ret;
	if (t->seed && wse_opt_u64("wsecc", "--seed", t->seed, 0, UINT64_MAX, WSE_NUM_PLAIN, &o->seed))
		return EXIT_USAGE;
	if (t->input && strcmp(t->input, "u8") && strcmp(t->input, "f32"))
		return usage_error("--input '%s': expected u8 or f32", t->input);
	o->float_input = t->input && !strcmp(t->input, "f32") ? WSEP_ELEM_F32 : WSEP_ELEM_U8;
	return 0;
}

static int write_svg(const struct wsecc_plan *plan, const char *path)
{
	struct wse_out out;
	char msg[512];
	FILE *f;
	int ret;

	/* Not "-": the report is on standard output already. */
	ret = wse_out_open(&out, path, 0, msg, sizeof(msg));
	if (ret) {
		fprintf(stderr, "wsecc: cannot write the SVG: %s\n", msg);
		return EXIT_OUTPUT;
	}
	f = wse_out_stream(&out, msg, sizeof(msg));
	if (!f) {
		wse_out_abandon(&out);
		fprintf(stderr, "wsecc: cannot write the SVG: %s\n", msg);
		return EXIT_OUTPUT;
	}
	ret = wsecc_write_svg(f, plan);
	if (ret) {
		wse_out_abandon(&out);
		fprintf(stderr, "wsecc: writing the SVG to %s failed: %s\n", path, strerror(-ret));
		return EXIT_OUTPUT;
	}
	if (wse_out_commit(&out, msg, sizeof(msg))) {
		fprintf(stderr, "wsecc: writing the SVG failed: %s\n", msg);
		return EXIT_OUTPUT;
	}
	return 0;
}

/* --systems: the system counts of the report's table across systems. */
struct systems_arg {
	const char *list;	/* NULL: the default counts */
	uint32_t n[WSECC_SCALE_MAX_POINTS];
	uint32_t count;
};

/* A pipelined plan runs on one system: --systems asked of one is refused, before any report. */
static int check_systems(const struct wsecc_plan *plan, const struct systems_arg *sys)
{
	if (sys->list && plan->mode != WSEP_MODE_WEIGHT_STREAMING)
		return usage_error("%s", "--systems: this model compiles layer-pipelined, which runs on one system; the estimate across systems is for weight streaming: add --execution-mode weight_streaming");
	return 0;
}

/* The report's table across systems, for a weight-streaming plan. */
static void report_systems(FILE *f, const struct wsecc_plan *plan, const struct wsep_optimizer *opt,
			   const struct systems_arg *sys)
{
	if (plan->mode != WSEP_MODE_WEIGHT_STREAMING)
		return;
	if (sys->list)
		wsecc_scale_report(f, plan, opt, sys->n, sys->count);
	else
		wsecc_scale_report(f, plan, opt, wsecc_scale_default_systems,
				   wsecc_scale_default_count);
}

/* With -o -, the program is standard output: what wsecc says goes to stderr. */
static FILE *chatter(const char *output)
{
	return output && !strcmp(output, "-") ? stderr : stdout;
}

/* An ONNX model compiled: --report and its SVG, and the program. */
static int onnx_program(const char *path, uint32_t batch, uint32_t micro,
			enum wsep_precision precision, enum wsecc_recompute recompute,
			const struct train_args *t, const struct freeze_args *fz,
			const char *wafer_spec, enum wsecc_mode mode, bool no_weights, int report,
			const char *svg, const struct systems_arg *sys, const char *output, int quiet)
{
	struct wsecc_graph_options o = { .batch = batch, .micro_batch = micro, .mode = mode,
					 .precision = precision, .recompute = recompute,
					 .seed = 1, .no_weights = no_weights,
					 .freeze = fz->pattern, .n_freeze = fz->n };
	struct wsecc_graph_program *gp;
	struct wsecc_error err;
	struct wse_wafer wafer;
	char msg[256], path_svg[WSEP_NAME_MAX + 8], path_wsep[WSEP_NAME_MAX + 8];
	int ret;

	ret = graph_training_from_args(t, &o, quiet);
	if (ret)
		return ret;
	if (wse_wafer_parse(wafer_spec ? wafer_spec : WSE_WAFER_DEFAULT, &wafer, msg, sizeof(msg)))
		return usage_error("--wafer: %s", msg);
	if (wsecc_graph_compile(path, &o, &wafer, &gp, &err)) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	print_notes(path, gp->notes, false);
	if (recompute == WSECC_RECOMPUTE_ON && gp->plan.mode == WSEP_MODE_PIPELINED)
		fprintf(stderr,
			"%s: note: --recompute on is for weight streaming; the model fits layer-pipelined, which runs without it (add --mode weight_streaming to recompute)\n",
			path);
	if (report) {
		ret = check_systems(&gp->plan, sys);
		if (ret)
			goto out;
		wsecc_graph_report(chatter(output), gp);
		report_systems(chatter(output), &gp->plan, &gp->prog->opt, sys);
		if (!svg) {
			snprintf(path_svg, sizeof(path_svg), "%s.svg", gp->prog->model_name);
			svg = path_svg;
		}
		ret = write_svg(&gp->plan, svg);
		if (ret)
			goto out;
		fprintf(chatter(output), "svg:         %s\n", svg);
	}
	if (output || !report) {
		if (!output) {
			snprintf(path_wsep, sizeof(path_wsep), "%s.wsep", gp->prog->model_name);
			output = path_wsep;
		}
		ret = wsep_write_file(gp->prog, output, err.msg, sizeof(err.msg));
		if (ret) {
			fprintf(stderr, "wsecc: cannot write the program to %s: %s\n", output, err.msg);
			ret = EXIT_OUTPUT;
			goto out;
		}
		if (!quiet)
			fprintf(chatter(output),
				"%s: graph program, %s on %s%s, %u units, %.4g samples/s estimated -> %s\n",
				gp->prog->model_name, wsep_mode_name(gp->plan.mode), wafer.name,
				precision_note(gp->prog->precision),
				gp->prog->num_layers, gp->plan.summary.samples_per_s, output);
	}
out:
	wsecc_graph_program_free(gp);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_WAFER = 256, OPT_MODE, OPT_BATCH, OPT_MICRO, OPT_VALIDATE, OPT_COMPILE, OPT_REPORT,
	       OPT_SVG, OPT_WEIGHTS, OPT_NO_WEIGHTS, OPT_OPTIMIZER, OPT_LR, OPT_MOMENTUM, OPT_WD,
	       OPT_WARMUP, OPT_STEPS, OPT_MIN_LR, OPT_SEED, OPT_INPUT, OPT_FREEZE, OPT_PARAMS,
	       OPT_SCHEDULE_STEPS, OPT_SYSTEMS, OPT_PRECISION, OPT_RECOMPUTE };
	static const struct option longopts[] = {
		{ "wafer", required_argument, NULL, OPT_WAFER },
		{ "execution-mode", required_argument, NULL, OPT_MODE },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "params", required_argument, NULL, OPT_PARAMS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "micro-batch", required_argument, NULL, OPT_MICRO },
		{ "precision", required_argument, NULL, OPT_PRECISION },
		{ "validate-only", no_argument, NULL, OPT_VALIDATE },
		{ "compile-only", no_argument, NULL, OPT_COMPILE },
		{ "output", required_argument, NULL, 'o' },
		{ "report", no_argument, NULL, OPT_REPORT },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "systems", required_argument, NULL, OPT_SYSTEMS },
		{ "weights", no_argument, NULL, OPT_WEIGHTS },
		{ "no-weights", no_argument, NULL, OPT_NO_WEIGHTS },
		{ "optimizer", required_argument, NULL, OPT_OPTIMIZER },
		{ "lr", required_argument, NULL, OPT_LR },
		{ "momentum", required_argument, NULL, OPT_MOMENTUM },
		{ "weight-decay", required_argument, NULL, OPT_WD },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "max-steps", required_argument, NULL, OPT_STEPS },
		{ "max_steps", required_argument, NULL, OPT_STEPS },
		{ "schedule-steps", required_argument, NULL, OPT_SCHEDULE_STEPS },
		{ "min-lr", required_argument, NULL, OPT_MIN_LR },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "freeze", required_argument, NULL, OPT_FREEZE },
		{ "recompute", required_argument, NULL, OPT_RECOMPUTE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *wafer_spec = NULL, *output = NULL, *svg = NULL, *batch_arg = NULL;
	const char *micro_arg = NULL;
	uint64_t micro = 0;
	enum wsep_precision precision = WSEP_PRECISION_FP32;
	int validate = 0, compile = 0, report = 0, weights = -1, quiet = 0, c;
	enum wsecc_mode mode = WSECC_MODE_AUTO;
	enum wsecc_recompute recompute = WSECC_RECOMPUTE_AUTO;
	const char *recompute_arg = NULL;
	static struct wsecc_model model;
	static struct wsecc_plan plan;
	struct wsecc_error err;
	struct wse_wafer wafer;
	char msg[256], path[WSEP_NAME_MAX + 8];
	struct train_args train = { 0 };
	struct freeze_args freeze = { 0 };
	struct systems_arg systems = { 0 };
	bool train_given = false;
	bool onnx;
	int ret;

	/* A params file's settings come first: the command line overrides them. */
	ret = wsecc_params_argv(argc, argv, &argc, &argv);
	if (ret)
		return ret;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_WAFER: wafer_spec = optarg; break;
		case OPT_MODE:
			if (wsecc_mode_parse(optarg, &mode))
				return usage_error("--execution-mode '%s': expected auto, pipelined or weight_streaming",
						   optarg);
			break;
		case OPT_BATCH: batch_arg = optarg; break;
		case OPT_MICRO: micro_arg = optarg; break;
		case OPT_PRECISION:
			if (precision_parse(optarg, &precision))
				return usage_error("unknown --precision '%s': expected fp32, fp16 or bf16",
						   optarg);
			break;
		case OPT_VALIDATE: validate = 1; break;
		case OPT_COMPILE: compile = 1; break;
		case 'o': output = optarg; break;
		case OPT_REPORT: report = 1; break;
		case OPT_SVG: svg = optarg; break;
		case OPT_SYSTEMS: systems.list = optarg; break;
		case OPT_WEIGHTS: weights = 1; break;
		case OPT_NO_WEIGHTS: weights = 0; break;
		case OPT_OPTIMIZER: train.optimizer = optarg; train_given = true; break;
		case OPT_LR: train.lr = optarg; train_given = true; break;
		case OPT_MOMENTUM: train.momentum = optarg; train_given = true; break;
		case OPT_WD: train.weight_decay = optarg; train_given = true; break;
		case OPT_WARMUP: train.warmup = optarg; train_given = true; break;
		case OPT_STEPS: train.steps = optarg; train_given = true; break;
		case OPT_SCHEDULE_STEPS: train.schedule_steps = optarg; train_given = true; break;
		case OPT_PARAMS: break;		/* read before the options */
		case OPT_MIN_LR: train.min_lr = optarg; train_given = true; break;
		case OPT_SEED: train.seed = optarg; train_given = true; break;
		case OPT_INPUT: train.input = optarg; train_given = true; break;
		case OPT_FREEZE:
			if (freeze.n == MAX_FREEZE)
				return usage_error("%s", "more than 64 --freeze patterns: use wider globs");
			if (!optarg[0])
				return usage_error("%s", "--freeze needs a non-empty PATTERN");
			freeze.pattern[freeze.n++] = optarg;
			break;
		case OPT_RECOMPUTE:
			if (wsecc_recompute_parse(optarg, &recompute))
				return usage_error("unknown --recompute '%s': expected auto, on or off",
						   optarg);
			recompute_arg = optarg;
			break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return 0;
		case 'V': fputs(WSE_VERSION_LINE("wsecc"), stdout); return 0;
		default: return wse_usage_bad_option("wsecc", argv, optind, optopt);
		}
	}
	if (optind != argc - 1)
		return usage_error("%s", optind == argc ? "expected a MODEL file"
							: "expected exactly one MODEL file");
	if (svg && !report)
		return usage_error("%s", "--svg needs --report");
	if (systems.list && !report)
		return usage_error("%s", "--systems needs --report (it sets the report's table across systems)");
	if (systems.list) {
		int n = wsecc_scale_parse(systems.list, systems.n, msg, sizeof(msg));

		if (n < 0)
			return usage_error("--systems: %s", msg);
		systems.count = (uint32_t)n;
	}
	if (validate && (compile || report || output))
		return usage_error("%s", "--validate-only does not combine with --compile-only, --report or -o");
	if (micro_arg && wse_opt_u64("wsecc", "--micro-batch", micro_arg, 1, WSEP_MAX_BATCH,
				     WSE_NUM_PLAIN, &micro)) {
		fprintf(stderr, "Try 'wsecc --help' for more information.\n");
		return EXIT_USAGE;
	}

	if (recompute == WSECC_RECOMPUTE_ON && mode == WSECC_MODE_PIPELINED)
		return usage_error("%s", "--recompute on is for weight streaming: a pipelined stage holds its samples' activations until their backward pass; drop one of --recompute on and --mode pipelined");
	if (check_model_kind(argv[optind], &onnx))
		return EXIT_REFUSED;
	if (onnx) {
		uint64_t b = 1;

		if (batch_arg && wse_opt_u64("wsecc", "--batch", batch_arg, 1, WSEP_MAX_BATCH,
					     WSE_NUM_PLAIN, &b)) {
			fprintf(stderr, "Try 'wsecc --help' for more information.\n");
			return EXIT_USAGE;
		}
		if (validate)
			return onnx_validate(argv[optind], (uint32_t)b, weights == 0, &freeze, quiet);
		/* From shapes alone there is nothing to train: an estimate only. */
		if (weights == 0 && (compile || output || !report))
			return usage_error("%s", "--no-weights compiles an ONNX model from its shapes for --report or --validate-only; it writes no program (there are no weights to train from): add --report, or drop --no-weights");
		return onnx_program(argv[optind], (uint32_t)b, (uint32_t)micro, precision, recompute,
				    &train, &freeze, wafer_spec, mode, weights == 0, report, svg,
				    &systems, compile || output || !report ? output : NULL, quiet);
	}
	if (train.input || freeze.n)
		return usage_error("%s", "--input and --freeze are for ONNX models: a model text file says its own input and trains every layer");
	if (recompute_arg)
		return usage_error("%s", "--recompute is for ONNX models (graph programs): a text model's dense layer keeps only its input and output, there is nothing to recompute");
	if (wsecc_parse_file(argv[optind], &model, &err)) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	/* The command line's (or a params file's) training over the model's own. */
	if (train_given) {
		ret = optimizer_from_args(&train, &model.opt, &model.opt, quiet);
		if (ret)
			return ret;
		if (train.seed && wse_opt_u64("wsecc", "--seed", train.seed, 0, UINT64_MAX,
					      WSE_NUM_PLAIN, &model.seed))
			return EXIT_USAGE;
	}
	if (batch_arg) {
		uint64_t b;

		if (wse_opt_u64("wsecc", "--batch", batch_arg, 1, WSEP_MAX_BATCH, WSE_NUM_PLAIN,
				&b)) {
			fprintf(stderr, "Try 'wsecc --help' for more information.\n");
			return EXIT_USAGE;
		}
		model.batch = (uint32_t)b;
	}
	model.micro_batch = (uint32_t)micro;
	model.precision = precision;
	if (validate)
		return validate_only(&model, quiet);

	if (!wafer_spec)
		wafer_spec = model.wafer[0] ? model.wafer : WSE_WAFER_DEFAULT;
	if (wse_wafer_parse(wafer_spec, &wafer, msg, sizeof(msg)))
		return usage_error("--wafer: %s", msg);
	if (wsecc_compile(&model, &wafer, mode, &plan, &err)) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	if (weights < 0)
		weights = plan.mode == WSEP_MODE_PIPELINED;

	if (report) {
		ret = check_systems(&plan, &systems);
		if (ret)
			return ret;
		wsecc_report(chatter(output), &model, &plan);
		report_systems(chatter(output), &plan, &model.opt, &systems);
		if (!svg) {
			snprintf(path, sizeof(path), "%s.svg", model.name);
			svg = path;
		}
		ret = write_svg(&plan, svg);
		if (ret)
			return ret;
		fprintf(chatter(output), "svg:         %s\n", svg);
	}
	if (compile || output || !report) {
		char wsep_path[WSEP_NAME_MAX + 8];

		if (!output) {
			snprintf(wsep_path, sizeof(wsep_path), "%s.wsep", model.name);
			output = wsep_path;
		}
		if (wsecc_emit_file(&model, &plan, weights, output, &err)) {
			print_error(&err);
			return EXIT_OUTPUT;
		}
		if (!quiet)
			fprintf(chatter(output),
				"%s: %s on %s%s, %.4g samples/s estimated, %s initial weights -> %s\n",
				model.name, wsep_mode_name(plan.mode), wafer.name,
				precision_note(model.precision),
				plan.summary.samples_per_s, weights ? "with" : "without", output);
	}
	return 0;
}
