// SPDX-License-Identifier: GPL-2.0-only
/*
 * Models of any size (Documentation/onnx-import.rst, "External data" and
 * "Compiling from shapes"), on tests/corpus/onnx's derived files: weights
 * in an external data file compile to the same program as the same model
 * with its weights inside; a location outside the model's directory, a
 * missing side file or a range outside it is refused naming the
 * initializer; --no-weights compiles a shapes-only export and reads no
 * weight from a side file; a graph whose inputs and activations exceed 2^32
 * elements compiles and validates; a graph of more units than a program
 * holds (64) has runs of them merged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/compiler_graph.h"
#include "wse/wafer.h"
#include "wse/wsep.h"
#include "test_files.h"

#define CORPUS "tests/corpus/onnx/"
#define LOCATION "ext-tiny.onnx.data"

static int write_all(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/* Every occurrence of @from in @buf replaced by @to, of the same length. */
static size_t replace_all(char *buf, size_t len, const char *from, const char *to)
{
	size_t n = strlen(from), count = 0;

	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, from, n)) {
			memcpy(buf + i, to, n);
			count++;
		}
	return count;
}

static int compile(const char *path, uint32_t batch, bool no_weights, const char *wafer_spec,
		   struct wsecc_graph_program **gp, struct wsecc_error *err)
{
	struct wsecc_graph_options o = { .batch = batch, .mode = WSECC_MODE_WEIGHT_STREAMING,
					 .seed = 1, .no_weights = no_weights,
					 .opt = { .kind = WSEP_OPT_SGD, .lr = 0.1 } };
	struct wse_wafer w;
	char msg[128];

	if (wse_wafer_parse(wafer_spec, &w, msg, sizeof(msg)))
		return -1;
	return wsecc_graph_compile(path, &o, &w, gp, err);
}

TEST(external_data_compiles_as_embedded)
{
	struct wsecc_graph_program *in, *ext;
	struct wsecc_error err;
	const struct wsep_program *a, *b;

	ASSERT_EQ(0, compile(CORPUS "gpt-tiny.onnx", 4, false, "64x64", &in, &err)) TH_LOG("%s", err.msg);
	ASSERT_EQ(0, compile(CORPUS "ext-tiny.onnx", 4, false, "64x64", &ext, &err)) TH_LOG("%s", err.msg);
	a = in->prog;
	b = ext->prog;
	ASSERT_NE(NULL, b->weights);
	ASSERT_EQ(a->num_weights, b->num_weights);
	EXPECT_EQ(0, memcmp(a->weights, b->weights, a->num_weights * sizeof(float)));
	ASSERT_EQ(a->graph->const_bytes, b->graph->const_bytes);
	EXPECT_EQ(0, memcmp(a->graph->consts, b->graph->consts, a->graph->const_bytes));
	EXPECT_EQ(a->summary.samples_per_s, b->summary.samples_per_s);
	wsecc_graph_program_free(in);
	wsecc_graph_program_free(ext);
}

TEST(bad_external_locations_refused)
{
	static const struct {
		const char *location, *says;
	} bad[] = {
		{ "/etc/ext-tiny.data", "is an absolute path" },
		{ "../ext-tiny.o.data", "leaves the model's directory through '..'" },
		{ "a/../../e-tiny.dat", "leaves the model's directory through '..'" },
		{ "ext-tiny.onnx.datX", "No such file or directory" },
	};
	size_t len;
	char *orig = test_read_file(CORPUS "ext-tiny.onnx", &len), *buf = malloc(len);

	ASSERT_NE(NULL, orig) TH_LOG("run from the repository root");
	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wsecc_graph *g = NULL;
		struct wsecc_error err;

		memcpy(buf, orig, len);
		ASSERT_LT(0, replace_all(buf, len, LOCATION, bad[i].location));
		EXPECT_EQ(-EINVAL, wsecc_onnx_import_buffer(buf, len, CORPUS "ext-tiny.onnx", NULL, &g,
						       &err));
		EXPECT_EQ(NULL, g);
		EXPECT_NE(NULL, strstr(err.msg, "initializer '")) TH_LOG("%s", err.msg);
		EXPECT_NE(NULL, strstr(err.msg, bad[i].says)) TH_LOG("%s: %s", bad[i].location, err.msg);
	}
	free(buf);
	free(orig);
}

TEST(external_range_outside_the_file_refused)
{
	char dir[] = "/tmp/onnx_external_test.XXXXXX", path[128], data[128];
	struct wsecc_graph *g = NULL;
	struct wsecc_error err;
	size_t len, dlen;
	char *model = test_read_file(CORPUS "ext-tiny.onnx", &len);
	char *side = test_read_file(CORPUS LOCATION, &dlen);

	ASSERT_NE(NULL, model);
	ASSERT_NE(NULL, side);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ext-tiny.onnx", dir);
	snprintf(data, sizeof(data), "%s/" LOCATION, dir);
	EXPECT_EQ(0, write_all(path, model, len));
	/* The side file cut short: the last tensors lie beyond its end. */
	EXPECT_EQ(0, write_all(data, side, dlen / 2));
	EXPECT_EQ(-EINVAL, wsecc_onnx_import(path, NULL, &g, &err));
	EXPECT_NE(NULL, strstr(err.msg, "external data bytes")) TH_LOG("%s", err.msg);
	EXPECT_NE(NULL, strstr(err.msg, "lie outside")) TH_LOG("%s", err.msg);
	/* Whole again, it imports from there. */
	EXPECT_EQ(0, write_all(data, side, dlen));
	EXPECT_EQ(0, wsecc_onnx_import(path, NULL, &g, &err)) TH_LOG("%s", err.msg);
	wsecc_graph_free(g);
	unlink(data);
	unlink(path);
	rmdir(dir);
	free(model);
	free(side);
}

TEST(no_weights_compiles_from_shapes)
{
	struct wsecc_graph_program *full, *shapes;
	struct wsecc_graph *g = NULL;
	struct wsecc_onnx_options io = { .batch = 4, .no_weights = true };
	struct wsecc_error err;
	char msg[256];
	void *bytes;
	size_t len, wlen;
	char *buf;

	/* A shapes-only export: refused for a program, planned from its shapes. */
	EXPECT_NE(0, compile(CORPUS "shapes-tiny.onnx", 4, false, "64x64", &shapes, &err));
	EXPECT_NE(NULL, strstr(err.msg, "has no values (a shapes-only export?)")) TH_LOG("%s", err.msg);
	EXPECT_NE(NULL, strstr(err.msg, "--no-weights")) TH_LOG("%s", err.msg);
	ASSERT_EQ(0, compile(CORPUS "shapes-tiny.onnx", 4, true, "64x64", &shapes, &err))
		TH_LOG("%s", err.msg);
	ASSERT_EQ(0, compile(CORPUS "gpt-tiny.onnx", 4, false, "64x64", &full, &err)) TH_LOG("%s", err.msg);
	EXPECT_EQ(NULL, shapes->prog->weights);
	EXPECT_EQ(full->params, shapes->params);
	EXPECT_EQ(full->prog->summary.samples_per_s, shapes->prog->summary.samples_per_s);
	EXPECT_EQ(full->prog->num_layers, shapes->prog->num_layers);
	/* Nothing to train from: it cannot be written as a program. */
	EXPECT_NE(0, wsep_write(shapes->prog, &bytes, &wlen, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "carries its initial weights")) TH_LOG("%s", msg);
	EXPECT_EQ(0, wsep_check(shapes->prog, false, msg, sizeof(msg))) TH_LOG("%s", msg);
	wsecc_graph_program_free(full);
	wsecc_graph_program_free(shapes);

	/*
	 * --no-weights reads what folding needs (the causal mask) and leaves
	 * the weights unread: without the side file, only the mask is missed.
	 */
	ASSERT_EQ(0, wsecc_onnx_import(CORPUS "ext-tiny.onnx", &io, &g, &err)) TH_LOG("%s", err.msg);
	for (size_t t = 0; t < g->n_tensors; t++) {
		const struct wsecc_tensor *x = &g->tensors[t];

		if (x->kind == WSECC_T_PARAM) {
			EXPECT_TRUE(x->no_values) TH_LOG("%s", x->name);
			EXPECT_EQ(NULL, x->data) TH_LOG("%s", x->name);
		}
	}
	EXPECT_EQ(1, g->n_mapped);
	wsecc_graph_free(g);
	g = NULL;
	buf = test_read_file(CORPUS "ext-tiny.onnx", &len);
	ASSERT_NE(NULL, buf);
	ASSERT_LT(0, replace_all(buf, len, LOCATION, "ext-tiny.onnx.datX"));
	EXPECT_EQ(-EINVAL, wsecc_onnx_import_buffer(buf, len, CORPUS "ext-tiny.onnx", &io, &g, &err));
	EXPECT_NE(NULL, strstr(err.msg, "initializer 'blocks.0.attn.mask'")) TH_LOG("%s", err.msg);
	wsecc_graph_free(g);
	free(buf);
}

TEST(counts_beyond_2_to_the_32_compile)
{
	struct wsecc_graph_program *gp;
	struct wsecc_error err;
	const struct wsep_program *p;
	const struct wsep_graph_value *x;
	char msg[256];

	/* x [65536, 131072]: 2^33 elements in one value at the batch. */
	ASSERT_EQ(0, compile(CORPUS "wide-shapes.onnx", 65536, true, "1024x1024:1M", &gp, &err))
		TH_LOG("%s", err.msg);
	p = gp->prog;
	x = &p->graph->values[p->graph->input];
	EXPECT_EQ(1ULL << 33, wsep_graph_value_elems(p, x, p->batch));
	EXPECT_EQ(131072U, p->input_dim);
	EXPECT_EQ(131072ULL * 16 + 16, gp->params);
	EXPECT_EQ(0, wsep_check(p, false, msg, sizeof(msg))) TH_LOG("%s", msg);
	wsecc_graph_program_free(gp);
}

TEST(more_units_than_a_program_holds_are_merged)
{
	struct wsecc_graph_program *gp;
	struct wsecc_error err;

	/* 70 layers, each a unit of its own: two to a unit fit in 64. */
	ASSERT_EQ(0, compile(CORPUS "deep-shapes.onnx", 4, true, "64x64", &gp, &err))
		TH_LOG("%s", err.msg);
	EXPECT_EQ(35U, gp->prog->num_layers);
	EXPECT_EQ(70ULL * 20, gp->params);
	EXPECT_NE(NULL, strstr(gp->plan.label[0], "l0 +1")) TH_LOG("%s", gp->plan.label[0]);
	EXPECT_NE(NULL, strstr(gp->plan.label[34], "l68 +1")) TH_LOG("%s", gp->plan.label[34]);
	wsecc_graph_program_free(gp);
}

/*
 * BERT-large's layers at BERT-large's batch (issue 26): two of its 24
 * encoder layers (width 1024, 16 heads, sequence 128, vocabulary 30522)
 * from a shapes-only export. At batch 1024 their activations are 100s of
 * GB: weight streaming must split the batch into micro-batches, and the
 * pipeline must hold only the samples in flight, as for the 24 layers.
 */
TEST(bert_large_layers_compile_at_batch_1024_in_both_modes)
{
	static const enum wsecc_mode modes[] = { WSECC_MODE_WEIGHT_STREAMING, WSECC_MODE_PIPELINED };
	struct wse_wafer w;
	char msg[128];

	ASSERT_EQ(0, wse_wafer_parse("wse2", &w, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct wsecc_graph_options o = { .batch = 1024, .mode = modes[i], .seed = 1,
						 .no_weights = true,
						 .opt = { .kind = WSEP_OPT_SGD, .lr = 0.1 } };
		struct wsecc_graph_program *gp = NULL;
		struct wsecc_error err;

		ASSERT_EQ(0, wsecc_graph_compile(CORPUS "bert-large-2l-shapes.onnx", &o, &w, &gp, &err))
			TH_LOG("mode %d: %s", (int)modes[i], err.msg);
		EXPECT_EQ((enum wsep_mode)modes[i], gp->prog->mode);
		EXPECT_EQ(1024U, gp->prog->batch);
		EXPECT_EQ(87865146ULL, gp->params);
		/* Not the whole batch at once: the wafer holds a part of it. */
		EXPECT_LE(1U, gp->plan.micro_batch);
		EXPECT_GT(1024U, gp->plan.in_flight[0]) TH_LOG("mode %d", (int)modes[i]);
		if (modes[i] == WSECC_MODE_WEIGHT_STREAMING) {
			EXPECT_EQ(gp->plan.micro_batch, gp->prog->micro_batch);
			EXPECT_GT(1024U, gp->plan.micro_batch);
		} else {
			/* 4 units (embedding, 2 layers, head): depth 2 x 4 - 1 at the first. */
			EXPECT_EQ(4U, gp->plan.num_layers);
			EXPECT_EQ(7U * gp->plan.micro_batch, gp->plan.in_flight[0]);
			EXPECT_EQ(gp->plan.micro_batch, gp->plan.in_flight[3]);
		}
		EXPECT_LT(0.0, gp->prog->summary.samples_per_s);
		wsecc_graph_program_free(gp);
	}
}

TEST_HARNESS_MAIN
