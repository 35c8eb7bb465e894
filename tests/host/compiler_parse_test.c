// SPDX-License-Identifier: GPL-2.0-only
/*
 * The model language: a valid model parses to the expected fields; every
 * kind of mistake is refused at the right file:line:col with a message
 * saying what was expected; ops lower to kernels and --validate-only
 * catches the ones without.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/compiler.h"

#define BASE \
	"input 784 u8\n" \
	"dense 784 256 relu\n" \
	"dense 256 10 none\n" \
	"loss softmax_xent\n" \
	"optimizer adam lr=1e-3\n" \
	"batch 128\n" \
	"seed 7\n"

TEST(valid_model_fields)
{
	struct wsecc_model m;
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_string("# comment line\nmodel tiny # trailing comment\n\n" BASE
					"wafer 64x64:48K\n", "tiny.model", &m, &e))
		TH_LOG("%s:%u:%u: %s", e.file, e.line, e.col, e.msg);
	EXPECT_STREQ("tiny", m.name);
	EXPECT_EQ(784, m.input_dim);
	EXPECT_EQ(WSEP_ELEM_U8, m.input_type);
	EXPECT_EQ(1.0f / 255.0f, m.input_scale);
	ASSERT_EQ(2, m.num_layers);
	EXPECT_EQ(784, m.layers[0].in);
	EXPECT_EQ(256, m.layers[0].out);
	EXPECT_EQ(WSECC_ACT_RELU, m.layers[0].act);
	EXPECT_EQ(WSECC_ACT_NONE, m.layers[1].act);
	EXPECT_EQ(5, m.layers[0].pos.line);
	EXPECT_EQ(WSECC_LOSS_SOFTMAX_XENT, m.loss);
	EXPECT_EQ(WSEP_OPT_ADAM, m.opt.kind);
	EXPECT_EQ(1e-3, m.opt.lr);
	EXPECT_EQ(0.9, m.opt.beta1);	/* PyTorch defaults */
	EXPECT_EQ(0.999, m.opt.beta2);
	EXPECT_EQ(1e-8, m.opt.eps);
	EXPECT_EQ(128, m.batch);
	EXPECT_EQ(7, m.seed);
	EXPECT_STREQ("64x64:48K", m.wafer);
}

TEST(name_defaults_to_file)
{
	struct wsecc_model m;
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_string(BASE, "some/dir/my-net.model", &m, &e));
	EXPECT_STREQ("my-net", m.name);
}

TEST(optimizers)
{
	struct wsecc_model m;
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_string("optimizer momentum lr=0.05 momentum=0.9 weight_decay=5e-4\n"
					"input 4 f32\ndense 4 2 none\nloss softmax_xent\nbatch 1\nseed 0\n",
					"m", &m, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(WSEP_OPT_MOMENTUM, m.opt.kind);
	EXPECT_EQ(0.05, m.opt.lr);
	EXPECT_EQ(0.9, m.opt.momentum);
	EXPECT_EQ(5e-4, m.opt.weight_decay);
	EXPECT_EQ(WSEP_ELEM_F32, m.input_type);
	EXPECT_EQ(1.0f, m.input_scale);
	ASSERT_EQ(0, wsecc_parse_string("optimizer sgd lr=0.1\n"
					"input 4 f32\ndense 4 2 none\nloss softmax_xent\nbatch 1\nseed 0\n",
					"m", &m, &e));
	EXPECT_EQ(WSEP_OPT_SGD, m.opt.kind);
}

struct bad_case {
	const char *line;	/* put before BASE, so errors are on line 1 */
	unsigned col;
	const char *msg;
};

TEST(errors_name_line_col_and_expectation)
{
	static const struct bad_case cases[] = {
		{ "frobnicate 3", 1, "unknown statement 'frobnicate': expected model, input" },
		{ "input 784 u16", 11, "unknown input type 'u16': expected u8 or f32" },
		{ "input 0 u8", 7, "an input size 0 is out of range: expected 1..16777216" },
		{ "input", 6, "expected 'input DIM TYPE'" },
		{ "dense 784 x relu", 11, "expected an output size (an integer" },
		{ "dense 784 10", 13, "expected 'dense IN OUT ACTIVATION'" },
		{ "dense 784 10 swish", 14, "unknown activation 'swish': expected relu or none" },
		{ "dense 784 99999999999999999999 relu", 11, "expected an output size" },
		{ "loss hinge", 6, "unknown loss 'hinge': expected softmax_xent" },
		{ "optimizer", 10, "expected an optimizer after 'optimizer': sgd, momentum or adam" },
		{ "optimizer rmsprop lr=1", 11, "unknown optimizer 'rmsprop'" },
		{ "optimizer adam lr=abc", 19, "expected a number for lr, got 'abc'" },
		{ "optimizer adam rate=1", 16, "unknown adam parameter 'rate': expected lr, beta1, beta2, eps, weight_decay" },
		{ "optimizer adam lr", 16, "expected 'lr=VALUE'" },
		{ "optimizer adam beta1=0.9", 25, "expected 'lr=VALUE'" },
		{ "optimizer momentum lr=0.1", 26, "expected 'momentum=VALUE'" },
		{ "optimizer sgd lr=-1", 18, "lr -1 is out of range" },
		{ "optimizer adam lr=1e-3 beta2=1", 30, "beta2 1 is out of range" },
		{ "batch 0", 7, "a batch size 0 is out of range: expected 1..65536" },
		{ "batch 70000", 7, "out of range" },
		{ "seed 1 2", 8, "unexpected '2': expected the end of the line after seed" },
		{ "seed -1", 6, "expected a seed (an integer" },
		{ "wafer 64y64", 7, "expected a preset (wse1, wse2, wse3) or WxH" },
		{ "model fc/mnist", 9, "model name may hold letters, digits" },
		{ "input 784\x01 u8", 10, "unexpected byte 0x01" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];
		struct wsecc_model m;
		struct wsecc_error e = { 0 };

		snprintf(text, sizeof(text), "%s\n%s", cases[i].line, BASE);
		EXPECT_EQ(-EINVAL, wsecc_parse_string(text, "bad.model", &m, &e))
			TH_LOG("'%s' was accepted", cases[i].line);
		EXPECT_STREQ("bad.model", e.file);
		EXPECT_EQ(1, e.line) TH_LOG("'%s': line %u", cases[i].line, e.line);
		EXPECT_EQ(cases[i].col, e.col) TH_LOG("'%s': col %u: %s", cases[i].line, e.col, e.msg);
		EXPECT_NE(NULL, strstr(e.msg, cases[i].msg))
			TH_LOG("'%s': '%s' lacks '%s'", cases[i].line, e.msg, cases[i].msg);
	}
}

TEST(whole_model_errors)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ BASE "batch 64\n", 8, 1, "second 'batch' statement: the first is on line 6" },
		{ "input 784 u8\ndense 784 256 relu\ndense 200 10 none\nloss softmax_xent\n"
		  "optimizer sgd lr=0.1\nbatch 1\nseed 1\n", 3, 7,
		  "layer 1 takes 200 inputs but the previous layer gives 256: expected 'dense 256 ...'" },
		{ "input 100 u8\ndense 784 10 none\nloss softmax_xent\noptimizer sgd lr=0.1\n"
		  "batch 1\nseed 1\n", 2, 7, "layer 0 takes 784 inputs but the input has 100" },
		{ "input 784 u8\ndense 784 10 none\noptimizer sgd lr=0.1\nbatch 1\nseed 1\n", 5, 1,
		  "missing a 'loss' statement" },
		{ "input 784 u8\nloss softmax_xent\noptimizer sgd lr=0.1\nbatch 1\nseed 1\n", 5, 1,
		  "missing layers" },
		{ "", 1, 1, "missing an 'input' statement" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wsecc_model m;
		struct wsecc_error e = { 0 };
		char formatted[1024];

		EXPECT_EQ(-EINVAL, wsecc_parse_string(cases[i].text, "w.model", &m, &e))
			TH_LOG("case %zu accepted", i);
		EXPECT_EQ(cases[i].line, e.line) TH_LOG("case %zu: %s", i, e.msg);
		EXPECT_EQ(cases[i].col, e.col) TH_LOG("case %zu: %s", i, e.msg);
		EXPECT_NE(NULL, strstr(e.msg, cases[i].msg))
			TH_LOG("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].msg);
		wsecc_error_format(&e, formatted, sizeof(formatted));
		EXPECT_EQ(0, strncmp(formatted, "w.model:", 8)) TH_LOG("%s", formatted);
	}
}

TEST(too_many_layers)
{
	static char text[8192];
	struct wsecc_model m;
	struct wsecc_error e;
	size_t n = 0;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "input 8 f32\n");
	for (unsigned i = 0; i <= WSECC_MAX_LAYERS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "dense 8 8 relu\n");
	EXPECT_EQ(-EINVAL, wsecc_parse_string(text, "deep", &m, &e));
	EXPECT_EQ(WSECC_MAX_LAYERS + 2, e.line);
	EXPECT_NE(NULL, strstr(e.msg, "too many layers"));
}

TEST(file_errors)
{
	struct wsecc_model m;
	struct wsecc_error e;

	EXPECT_EQ(-ENOENT, wsecc_parse_file("/nonexistent/model", &m, &e));
	EXPECT_NE(NULL, strstr(e.msg, "cannot open the model file"));
	EXPECT_EQ(0, e.line);
}

TEST(shipped_models_parse_and_validate)
{
	static const char *const paths[] = { "models/fc-mnist", "models/fc-large" };

	for (size_t i = 0; i < 2; i++) {
		struct wsecc_model m;
		struct wsecc_error e;

		ASSERT_EQ(0, wsecc_parse_file(paths[i], &m, &e))
			TH_LOG("%s:%u:%u: %s (run from the repository root)", e.file, e.line, e.col,
			       e.msg);
		EXPECT_EQ(0, wsecc_validate(&m, &e)) TH_LOG("%s", e.msg);
	}
}

TEST(fc_mnist_is_the_seeds_network)
{
	struct wsecc_model m;
	struct wsecc_error e;

	ASSERT_EQ(0, wsecc_parse_file("models/fc-mnist", &m, &e));
	ASSERT_EQ(3, m.num_layers);
	EXPECT_EQ(784, m.layers[0].in);
	EXPECT_EQ(256, m.layers[0].out);
	EXPECT_EQ(256, m.layers[1].out);
	EXPECT_EQ(10, m.layers[2].out);
	EXPECT_EQ(WSEP_ELEM_U8, m.input_type);
	EXPECT_EQ(128, m.batch);
}

TEST(ops_map_to_kernels)
{
	struct wsecc_model m;
	struct wsecc_error e;
	struct wsecc_op ops[WSECC_MAX_OPS];
	size_t n, fwd = 0, bwd_data = 0, bwd_w = 0, upd = 0, act = 0;

	ASSERT_EQ(0, wsecc_parse_string(BASE, "m", &m, &e));
	n = wsecc_lower(&m, ops, WSECC_MAX_OPS);
	/* input, 2 dense + 1 relu, loss fwd/bwd, relu bwd, 2 dW, 1 dx, 2 updates */
	EXPECT_EQ(12, n);
	for (size_t i = 0; i < n; i++) {
		EXPECT_NE(NULL, ops[i].kernel) TH_LOG("op %s has no kernel", ops[i].name);
		fwd += ops[i].kind == WSECC_OP_DENSE_FWD;
		bwd_data += ops[i].kind == WSECC_OP_DENSE_BWD_DATA;
		bwd_w += ops[i].kind == WSECC_OP_DENSE_BWD_WEIGHTS;
		upd += ops[i].kind == WSECC_OP_OPT_UPDATE;
		act += ops[i].kind == WSECC_OP_ACT_FWD || ops[i].kind == WSECC_OP_ACT_BWD;
	}
	EXPECT_EQ(2, fwd);
	EXPECT_EQ(1, bwd_data);	/* layer 0 needs no gradient for its input */
	EXPECT_EQ(2, bwd_w);
	EXPECT_EQ(2, upd);
	EXPECT_EQ(2, act);
	EXPECT_STREQ("input_u8_scale", ops[0].name);
	EXPECT_STREQ("adam_update", ops[n - 1].name);
	EXPECT_EQ(0, wsecc_validate(&m, &e));
	/* A small count for @max still reports how many there are. */
	EXPECT_EQ(12, wsecc_lower(&m, ops, 3));
}

TEST(validate_only_finds_ops_without_kernels)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ "input 4 f32\ndense 4 4 tanh\ndense 4 2 none\nloss softmax_xent\n"
		  "optimizer sgd lr=0.1\nbatch 1\nseed 1\n", 2, 11,
		  "no kernel for op tanh_fwd (layer 0, activation tanh)" },
		{ "input 4 f32\ndense 4 2 none\nloss mse\noptimizer sgd lr=0.1\nbatch 1\nseed 1\n",
		  3, 6, "no kernel for op mse_fwd" },
		{ "input 4 f32\ndense 4 2 relu\nloss softmax_xent\noptimizer sgd lr=0.1\nbatch 1\n"
		  "seed 1\n", 2, 11, "expected activation none" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wsecc_model m;
		struct wsecc_error e = { 0 };

		ASSERT_EQ(0, wsecc_parse_string(cases[i].text, "k.model", &m, &e))
			TH_LOG("case %zu: %s", i, e.msg);
		EXPECT_EQ(-EINVAL, wsecc_validate(&m, &e)) TH_LOG("case %zu validated", i);
		EXPECT_EQ(cases[i].line, e.line) TH_LOG("case %zu: %s", i, e.msg);
		EXPECT_EQ(cases[i].col, e.col) TH_LOG("case %zu: %s", i, e.msg);
		EXPECT_NE(NULL, strstr(e.msg, cases[i].msg))
			TH_LOG("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].msg);
	}
}

TEST(mode_names)
{
	enum wsecc_mode mode;

	EXPECT_EQ(0, wsecc_mode_parse("auto", &mode));
	EXPECT_EQ(WSECC_MODE_AUTO, mode);
	EXPECT_EQ(0, wsecc_mode_parse("weight_streaming", &mode));
	EXPECT_EQ(WSECC_MODE_WEIGHT_STREAMING, mode);
	EXPECT_EQ(-EINVAL, wsecc_mode_parse("streaming", &mode));
}

TEST_HARNESS_MAIN
