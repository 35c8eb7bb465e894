// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsecc: the wse compiler's command line. Documentation/wsecc.rst is its
 * manual page. Exit status: 0 success, 1 the model was refused (syntax,
 * no kernel, does not fit), 2 bad usage, 3 an output could not be written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse_version.h"
#include "wse/compiler.h"
#include "wse/compiler_graph.h"
#include "wse/numparse.h"

#define EXIT_REFUSED	1
#define EXIT_USAGE	2
#define EXIT_OUTPUT	3

static const char usage_text[] =
	"usage: wsecc MODEL [options]\n"
	"Compile a model description into a placed .wsep program for a wse wafer.\n"
	"MODEL is a model text file or an ONNX model (NAME.onnx, opset 13 or later;\n"
	"for now ONNX models are checked with --validate-only only).\n"
	"\n"
	"  --wafer SPEC        wse1, wse2, wse3, or WxH[:SRAM][@CLOCK] (e.g. 64x64:48K);\n"
	"                      default: the model's 'wafer' statement, else " WSE_WAFER_DEFAULT "\n"
	"  --mode MODE         auto (default), pipelined or weight_streaming\n"
	"  --batch N           override the model's batch size (1..65536); for ONNX, the\n"
	"                      value of a symbolic first input dimension (default 1)\n"
	"  --validate-only     only check that every op maps to a kernel (no placement)\n"
	"  --compile-only      compile and write the program (-o, default MODEL_NAME.wsep)\n"
	"  -o, --output FILE   write the .wsep program to FILE\n"
	"  --report            print the placement and estimate report and write an SVG\n"
	"  --svg FILE          where --report writes the SVG (default MODEL_NAME.svg)\n"
	"  --weights           include initial weights (default for pipelined)\n"
	"  --no-weights        leave them out (default for weight streaming: MemoryX\n"
	"                      makes them from the seed)\n"
	"  -q, --quiet         no summary line\n"
	"  -h, --help          this help\n"
	"  -V, --version       the version of wsecc\n"
	"\n"
	"Exit status: 0 ok, 1 model refused, 2 usage error, 3 output not written.\n"
	"See Documentation/wsecc.rst and Documentation/model-format.rst.\n";

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
	fprintf(stderr, "\nTry 'wsecc --help'.\n");
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

/* An ONNX model: import, list each node and its kernel, check. */
static int onnx_model(const char *path, const char *batch_arg, int validate, int quiet)
{
	struct wsecc_onnx_options opt = { .batch = 1 };
	struct wsecc_graph *g;
	struct wsecc_error err;
	size_t counts[WSECC_NODE_REFUSED + 1];
	int bad;

	if (batch_arg) {
		char *end;
		unsigned long b;

		errno = 0;
		b = strtoul(batch_arg, &end, 10);
		if (*end || errno || b < 1 || b > WSEP_MAX_BATCH || batch_arg[0] == '-')
			return usage_error("--batch '%s': expected an integer 1..65536", batch_arg);
		opt.batch = (int64_t)b;
	}
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
	}
	wsecc_graph_free(g);
	if (bad) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	if (!validate) {
		fprintf(stderr,
			"%s: error: ONNX models can only be validated so far (--validate-only): placing convolution and attention layers and writing them into a .wsep program come next\n",
			path);
		return EXIT_REFUSED;
	}
	return 0;
}

static int write_svg(const struct wsecc_model *m, const struct wsecc_plan *plan,
		     const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f) {
		fprintf(stderr, "wsecc: cannot write the SVG to %s: %s\n", path, strerror(errno));
		return EXIT_OUTPUT;
	}
	ret = wsecc_write_svg(f, m, plan);
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret) {
		fprintf(stderr, "wsecc: writing the SVG to %s failed: %s\n", path, strerror(-ret));
		return EXIT_OUTPUT;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_WAFER = 256, OPT_MODE, OPT_BATCH, OPT_VALIDATE, OPT_COMPILE, OPT_REPORT,
	       OPT_SVG, OPT_WEIGHTS, OPT_NO_WEIGHTS };
	static const struct option longopts[] = {
		{ "wafer", required_argument, NULL, OPT_WAFER },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "validate-only", no_argument, NULL, OPT_VALIDATE },
		{ "compile-only", no_argument, NULL, OPT_COMPILE },
		{ "output", required_argument, NULL, 'o' },
		{ "report", no_argument, NULL, OPT_REPORT },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "weights", no_argument, NULL, OPT_WEIGHTS },
		{ "no-weights", no_argument, NULL, OPT_NO_WEIGHTS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *wafer_spec = NULL, *output = NULL, *svg = NULL, *batch_arg = NULL;
	int validate = 0, compile = 0, report = 0, weights = -1, quiet = 0, c;
	enum wsecc_mode mode = WSECC_MODE_AUTO;
	static struct wsecc_model model;
	static struct wsecc_plan plan;
	struct wsecc_error err;
	struct wse_wafer wafer;
	char msg[256], path[WSEP_NAME_MAX + 8];
	int ret;

	while ((c = getopt_long(argc, argv, "o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_WAFER: wafer_spec = optarg; break;
		case OPT_MODE:
			if (wsecc_mode_parse(optarg, &mode))
				return usage_error("unknown --mode '%s': expected auto, pipelined or weight_streaming",
						   optarg);
			break;
		case OPT_BATCH: batch_arg = optarg; break;
		case OPT_VALIDATE: validate = 1; break;
		case OPT_COMPILE: compile = 1; break;
		case 'o': output = optarg; break;
		case OPT_REPORT: report = 1; break;
		case OPT_SVG: svg = optarg; break;
		case OPT_WEIGHTS: weights = 1; break;
		case OPT_NO_WEIGHTS: weights = 0; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return 0;
		case 'V': fputs(WSE_VERSION_LINE("wsecc"), stdout); return 0;
		default: return usage_error("%s", "bad option");
		}
	}
	if (optind != argc - 1)
		return usage_error("%s", optind == argc ? "expected a MODEL file"
							: "expected exactly one MODEL file");
	if (svg && !report)
		return usage_error("%s", "--svg needs --report");
	if (validate && (compile || report || output))
		return usage_error("%s", "--validate-only does not combine with --compile-only, --report or -o");

	if (is_onnx(argv[optind]))
		return onnx_model(argv[optind], batch_arg, validate, quiet);
	if (wsecc_parse_file(argv[optind], &model, &err)) {
		print_error(&err);
		return EXIT_REFUSED;
	}
	if (batch_arg) {
		uint64_t b;

		if (wse_opt_u64("wsecc", "--batch", batch_arg, 1, WSEP_MAX_BATCH, WSE_NUM_PLAIN,
				&b)) {
			fprintf(stderr, "Try 'wsecc --help'.\n");
			return EXIT_USAGE;
		}
		model.batch = (uint32_t)b;
	}
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
		wsecc_report(stdout, &model, &plan);
		if (!svg) {
			snprintf(path, sizeof(path), "%s.svg", model.name);
			svg = path;
		}
		ret = write_svg(&model, &plan, svg);
		if (ret)
			return ret;
		printf("svg:         %s\n", svg);
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
			printf("%s: %s on %s, %.4g samples/s estimated, %s initial weights -> %s\n",
			       model.name, wsep_mode_name(plan.mode), wafer.name,
			       plan.summary.samples_per_s, weights ? "with" : "without", output);
	}
	return 0;
}
