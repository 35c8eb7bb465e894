// SPDX-License-Identifier: GPL-2.0-only
/*
 * Weights back to the model (Documentation/onnx-import.rst, "Weights back
 * to PyTorch"), from the repository root: the small exports of
 * tests/corpus/onnx compiled into programs that name their parameters,
 * trained a few steps by the engine from the program (as the firmware
 * trains it), written as a wsetrain checkpoint by wsetrain's own
 * checkpoint code, exported by build/bin/wsetrain --export, and the
 * exported model imported again by the project's importer: every
 * parameter must hold the checkpoint's values bit for bit, and every byte
 * of the file but the weights must be the original's. No PyTorch needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "wse/compiler_graph.h"
#include "wse/engine_wsep.h"
#include "wse/onnx_write.h"
#include "wse/wafer.h"
#include "../../tools/wsetrain/train.h"
#include "test_files.h"

#define CORPUS "tests/corpus/onnx/"
#define WSETRAIN "build/bin/wsetrain"
#define BATCH 4

static char out[1 << 16];

static struct wsecc_graph_program *compile(const char *path)
{
	struct wsecc_graph_options o = {
		.batch = BATCH, .mode = WSECC_MODE_PIPELINED, .seed = 1,
		.opt = { .kind = WSEP_OPT_SGD, .lr = 0.1 },
	};
	struct wsecc_graph_program *gp = NULL;
	struct wsecc_error err;
	struct wse_wafer w;
	char msg[256];

	if (wse_wafer_parse("64x64", &w, msg, sizeof(msg)) ||
	    wsecc_graph_compile(path, &o, &w, &gp, &err))
		return NULL;
	return gp;
}

/* Three SGD steps of the program's graph on made-up data; the weights in the program's layout. */
static float *train(struct __test_metadata *_metadata, const struct wsep_program *p)
{
	const struct wsep_graph *wg = p->graph;
	struct engine_optim opt = { .kind = ENGINE_SGD, .lr = 0.1 };
	struct engine_loss_result res;
	struct engine_graph *g = NULL;
	float *w = malloc(p->num_weights * sizeof(float));
	uint64_t in_n = wsep_graph_value_elems(p, &wg->values[wg->input], BATCH);
	uint64_t lab_n = wsep_graph_value_elems(p, &wg->values[wg->labels], BATCH);
	void *x = calloc(in_n, 8);
	int64_t *y = calloc(lab_n, 8);
	char msg[256];

	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, engine_graph_from_wsep(p, BATCH, &g, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, engine_graph_prepare(g, ENGINE_SGD));
	for (uint64_t i = 0; i < in_n; i++) {
		if (wg->values[wg->input].dtype == WSEP_ELEM_I64)
			((int64_t *)x)[i] = (int64_t)((i * 7) % wg->classes);
		else
			((float *)x)[i] = (float)((i * 13) % 255) / 255.0f;
	}
	for (uint64_t i = 0; i < lab_n; i++)
		y[i] = (int64_t)((i * 5 + 1) % wg->classes);
	ASSERT_EQ(0, engine_graph_set_input(g, wg->input, x));
	ASSERT_EQ(0, engine_graph_set_input(g, wg->labels, y));
	for (uint64_t t = 1; t <= 3; t++)
		ASSERT_EQ(0, engine_graph_train_step(g, &opt, t, -1, 1, &res));
	for (uint32_t v = 0; v < wg->num_values; v++)
		if (wg->values[v].kind == WSEP_VAL_PARAM)
			memcpy(w + wg->values[v].offset, engine_graph_data(g, (int)v),
			       wsep_graph_value_elems(p, &wg->values[v], BATCH) * sizeof(float));
	engine_graph_destroy(g);
	free(x);
	free(y);
	return w;
}

static int write_checkpoint(const char *path, const struct wsep_program *p, float *w,
			    bool with_names)
{
	float state = 0;
	struct train_checkpoint c = {
		.mode = p->mode, .systems = 1, .step = 3, .floats = p->num_weights,
		.weights = w, .state = &state, .lr = 0.1, .batch = BATCH,
		.num_names = with_names ? p->num_param_names : 0,
		.names = with_names ? p->param_names : NULL,
	};

	snprintf(c.model, sizeof(c.model), "%s", p->model_name);
	return train_checkpoint_save(path, &c);
}

/*
 * The exported file with each in-place parameter's trained bytes put back
 * to the original's: then it must be the original, byte for byte.
 */
static void expect_only_weights_changed(struct __test_metadata *_metadata, const uint8_t *orig,
					size_t olen, uint8_t *exp, size_t elen,
					const struct wsep_program *p, const float *trained)
{
	ASSERT_EQ(olen, elen);
	for (uint32_t i = 0; i < p->num_param_names; i++) {
		const struct wsep_param_name *e = &p->param_names[i];
		size_t bytes = e->elems * sizeof(float);
		uint8_t *at = memmem(exp, elen, trained + e->offset, bytes);

		ASSERT_NE(NULL, at) TH_LOG("%s's trained values are not in the file", e->name);
		memcpy(at, p->weights + e->offset, bytes);
	}
	EXPECT_EQ(0, memcmp(orig, exp, olen)) TH_LOG("a byte besides the weights changed");
}

/* The exported model compiled again: each parameter by name holds the trained values. */
static void expect_reimport(struct __test_metadata *_metadata, const char *path,
			    const struct wsep_program *p, const float *trained)
{
	struct wsecc_graph_program *again = compile(path);

	ASSERT_NE(NULL, again);
	ASSERT_EQ(p->num_param_names, again->prog->num_param_names);
	for (uint32_t i = 0; i < p->num_param_names; i++) {
		const struct wsep_param_name *e = &p->param_names[i];
		const struct wsep_param_name *f = wsep_param_name_find(again->prog, e->name);

		ASSERT_NE(NULL, f) TH_LOG("%s is not a parameter of the exported model", e->name);
		ASSERT_EQ(e->elems, f->elems);
		EXPECT_EQ(0, memcmp(trained + e->offset, again->prog->weights + f->offset,
				    e->elems * sizeof(float))) TH_LOG("%s differs", e->name);
	}
	wsecc_graph_program_free(again);
}

/*
 * The writer in this process (under the sanitizers in the -san build):
 * what wsetrain wrote, and for every truncation of the model a refusal
 * with a message rather than a crash.
 */
static void in_process(struct __test_metadata *_metadata, const uint8_t *orig, size_t olen,
		       const uint8_t *exp, size_t elen, const struct wsep_program *p,
		       const float *trained)
{
	struct wsecc_onnx_weight *w = calloc(p->num_param_names, sizeof(*w));
	struct wsecc_onnx_write_summary sum;
	struct wsecc_error err;
	void *o = NULL;
	size_t olen2 = 0, refused = 0;

	ASSERT_NE(NULL, w);
	for (uint32_t i = 0; i < p->num_param_names; i++) {
		const struct wsep_param_name *e = &p->param_names[i];

		w[i] = (struct wsecc_onnx_weight){ .name = e->name, .data = trained + e->offset,
						   .elems = e->elems, .rank = e->rank };
		memcpy(w[i].dims, e->dims, sizeof(w[i].dims));
	}
	ASSERT_EQ(0, wsecc_onnx_write_weights(orig, olen, "m.onnx", w, p->num_param_names, &o,
					      &olen2, &sum, &err)) TH_LOG("%s", err.msg);
	ASSERT_EQ(elen, olen2);
	EXPECT_EQ(0, memcmp(exp, o, elen));
	EXPECT_EQ(p->num_param_names, sum.in_place + sum.copies);
	free(o);
	for (size_t cut = 1; cut < olen; cut += 1 + cut / 4) {
		err.msg[0] = '\0';
		if (!wsecc_onnx_write_weights(orig, cut, "m.onnx", w, p->num_param_names, &o, &olen2,
					      &sum, &err)) {
			free(o);
			continue;
		}
		refused++;
		EXPECT_NE('\0', err.msg[0]) TH_LOG("a refusal without a message at %zu bytes", cut);
	}
	EXPECT_LT(0, refused);
	free(w);
}

static void round_trip(struct __test_metadata *_metadata, const char *name, bool copies)
{
	char dir[] = "/tmp/onnx-export-XXXXXX", src[256], ckpt[300], dst[300], cmd[1024];
	struct wsecc_graph_program *gp;
	const struct wsep_program *p;
	uint8_t *orig, *exp;
	size_t olen = 0, elen = 0;
	float *trained;
	uint64_t changed = 0;

	ASSERT_EQ(0, access(WSETRAIN, X_OK)) TH_LOG("run make, from the repository root");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(src, sizeof(src), CORPUS "%s.onnx", name);
	snprintf(ckpt, sizeof(ckpt), "%s/%s.ckpt", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s-trained.onnx", dir, name);
	gp = compile(src);
	ASSERT_NE(NULL, gp);
	p = gp->prog;
	ASSERT_LT(0, p->num_param_names);
	trained = train(_metadata, p);
	for (uint64_t i = 0; i < p->num_weights; i++)
		changed += trained[i] != p->weights[i];
	ASSERT_LT(p->num_weights / 10, changed) TH_LOG("training changed only %llu weights",
						      (unsigned long long)changed);
	ASSERT_EQ(0, write_checkpoint(ckpt, p, trained, true));

	snprintf(cmd, sizeof(cmd), WSETRAIN " %s --export %s -o %s", src, ckpt, dst);
	ASSERT_EQ(0, run_cmd_all(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "parameters")) TH_LOG("%s", out);
	EXPECT_EQ(copies, strstr(out, "Identity copies made initializers") != NULL) TH_LOG("%s", out);
	expect_reimport(_metadata, dst, p, trained);

	orig = test_read_file(src, &olen);
	exp = test_read_file(dst, &elen);
	ASSERT_NE(NULL, orig);
	ASSERT_NE(NULL, exp);
	in_process(_metadata, orig, olen, exp, elen, p, trained);
	if (!copies)
		expect_only_weights_changed(_metadata, orig, olen, exp, elen, p, trained);
	free(orig);
	free(exp);

	/* Refusals: another model, no -o, the program for the model, a checkpoint without names. */
	snprintf(cmd, sizeof(cmd), WSETRAIN " " CORPUS "%s.onnx --export %s -o %s/x.onnx",
		 copies ? "cnn-tiny" : "gpt-tiny", ckpt, dir);
	EXPECT_EQ(1, run_cmd_all(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "is this the model the program was compiled from?")) TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), WSETRAIN " %s --export %s", src, ckpt);
	EXPECT_EQ(2, run_cmd_all(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--export needs -o FILE")) TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), WSETRAIN " %s/p.wsep --export %s -o %s/x.onnx", dir, ckpt, dir);
	EXPECT_EQ(2, run_cmd_all(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "give the .onnx")) TH_LOG("%s", out);
	ASSERT_EQ(0, write_checkpoint(ckpt, p, trained, false));
	snprintf(cmd, sizeof(cmd), WSETRAIN " %s --export %s -o %s/x.onnx", src, ckpt, dir);
	EXPECT_EQ(1, run_cmd_all(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "names no parameters")) TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), "%s/x.onnx", dir);
	EXPECT_NE(0, access(cmd, F_OK)) TH_LOG("a refused export left %s", cmd);

	EXPECT_EQ(0, test_remove_dir(dir));
	free(trained);
	wsecc_graph_program_free(gp);
}

/* The CNN: every parameter an initializer, so only the weights' bytes change. */
TEST(cnn_export_round_trip)
{
	round_trip(_metadata, "cnn-tiny", false);
}

/* The GPT: its merged LayerNorm parameters are Identity copies, made initializers of their own. */
TEST(gpt_export_round_trip)
{
	round_trip(_metadata, "gpt-tiny", true);
}

/* A checkpoint carries the names: --inspect lists them, and a damaged record is refused. */
/*
 * The tied GPT: one parameter tok.weight, whose transpose the exporter
 * wrote again as onnx::MatMul_148. The export writes the trained weight
 * into both; imported again, the two are still tied (bit for bit the
 * transpose), so the model computes with the weight it trained.
 */
TEST(tied_gpt_export_writes_the_shared_weight_twice)
{
	char dir[] = "/tmp/onnx-export-XXXXXX", ckpt[300], dst[300], cmd[1024];
	struct wsecc_onnx_options opt = { .batch = BATCH };
	struct wsecc_graph *g = NULL;
	struct wsecc_graph_program *gp;
	struct wsecc_error err;
	const struct wsep_program *p;
	float *trained;
	int copy;

	ASSERT_EQ(0, access(WSETRAIN, X_OK)) TH_LOG("run make, from the repository root");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(ckpt, sizeof(ckpt), "%s/tied.ckpt", dir);
	snprintf(dst, sizeof(dst), "%s/tied-trained.onnx", dir);
	gp = compile(CORPUS "gpt-tied-tiny.onnx");
	ASSERT_NE(NULL, gp);
	p = gp->prog;
	ASSERT_NE(NULL, wsep_param_name_find(p, "tok.weight"));
	EXPECT_EQ(NULL, wsep_param_name_find(p, "onnx::MatMul_148"));
	trained = train(_metadata, p);
	ASSERT_EQ(0, write_checkpoint(ckpt, p, trained, true));
	snprintf(cmd, sizeof(cmd), WSETRAIN " " CORPUS "gpt-tied-tiny.onnx --export %s -o %s", ckpt, dst);
	ASSERT_EQ(0, run_cmd_all(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "1 tied copies of a parameter (written twice by the exporter) given its trained values")) TH_LOG("%s", out);
	expect_reimport(_metadata, dst, p, trained);
	ASSERT_EQ(0, wsecc_onnx_import(dst, &opt, &g, &err)) TH_LOG("%s", err.msg);
	copy = wsecc_graph_find(g, "onnx::MatMul_148");
	ASSERT_LE(0, copy);
	EXPECT_EQ(WSECC_T_VALUE, g->tensors[copy].kind);
	EXPECT_NE(NULL, g->notes && strstr(g->notes, "'onnx::MatMul_148' [16x96] is bit for bit the transpose of parameter 'tok.weight'")) TH_LOG("%s", g->notes);
	wsecc_graph_free(g);
	EXPECT_EQ(0, test_remove_dir(dir));
	free(trained);
	wsecc_graph_program_free(gp);
}

TEST(checkpoint_carries_names)
{
	char dir[] = "/tmp/onnx-export-XXXXXX", ckpt[300], cmd[512], err[512];
	struct wsecc_graph_program *gp = compile(CORPUS "gpt-tiny.onnx");
	struct train_checkpoint c;
	FILE *f;

	ASSERT_NE(NULL, gp);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(ckpt, sizeof(ckpt), "%s/g.ckpt", dir);
	ASSERT_EQ(0, write_checkpoint(ckpt, gp->prog, gp->prog->weights, true));
	ASSERT_EQ(0, train_checkpoint_load(ckpt, &c, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(gp->prog->num_param_names, c.num_names);
	EXPECT_EQ(0, memcmp(gp->prog->param_names, c.names, c.num_names * sizeof(*c.names)));
	train_checkpoint_free(&c);
	snprintf(cmd, sizeof(cmd), WSETRAIN " --inspect %s", ckpt);
	ASSERT_EQ(0, run_cmd_all(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "onnx::MatMul_138 [16,48] at 1696")) TH_LOG("%s", out);
	/* A flipped byte in the names: their own CRC says so. */
	f = fopen(ckpt, "r+b");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, fseek(f, -10, SEEK_END));
	fputc('!', f);
	fclose(f);
	EXPECT_NE(0, train_checkpoint_load(ckpt, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "the parameter names' checksum does not match")) TH_LOG("%s", err);
	EXPECT_EQ(0, test_remove_dir(dir));
	wsecc_graph_program_free(gp);
}

/* Appends a protobuf length-delimited field @num holding @len bytes of @data at @p. */
static uint8_t *put_field(uint8_t *p, unsigned int num, const void *data, size_t len)
{
	*p++ = (uint8_t)(num << 3 | 2);
	for (size_t v = len; ; v >>= 7) {
		*p++ = (uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80);
		if (v < 0x80)
			break;
	}
	memcpy(p, data, len);
	return p + len;
}

/*
 * The export helper's metadata (models/wse_export.py): the listed
 * initializers are trained, with their state_dict names; one left out (a
 * buffer, as the helper would leave it) stays a constant.
 */
TEST(metadata_lists_the_parameters)
{
	static const char meta[] =
		"features.0.weight\tfeatures.0.weight\nfeatures.0.bias\tfeatures.0.bias\n"
		"features.3.weight\tfeatures.3.weight\nfeatures.3.bias\tfeatures.3.bias\n"
		"classifier.1.weight\tclassifier.1.weight\nclassifier.1.bias\tclassifier.1.bias\n"
		"classifier.3.weight\tmodel.head.weight\ttransposed";
	struct wsecc_graph_options o = {
		.batch = BATCH, .mode = WSECC_MODE_PIPELINED, .seed = 1,
		.opt = { .kind = WSEP_OPT_SGD, .lr = 0.1 },
	};
	struct wsecc_graph_program *gp = NULL, *plain = compile(CORPUS "cnn-tiny.onnx");
	uint8_t entry[512], *e = entry, *buf, *p;
	const struct wsep_param_name *n;
	struct wsecc_error err;
	struct wse_wafer w;
	size_t len = 0;
	char msg[256];

	ASSERT_NE(NULL, plain);
	e = put_field(e, 1, "wse.parameters", strlen("wse.parameters"));
	e = put_field(e, 2, meta, strlen(meta));
	buf = test_read_file(CORPUS "cnn-tiny.onnx", &len);
	ASSERT_NE(NULL, buf);
	buf = realloc(buf, len + sizeof(entry) + 8);
	p = put_field(buf + len, 14, entry, (size_t)(e - entry));	/* ModelProto.metadata_props */
	ASSERT_EQ(0, wse_wafer_parse("64x64", &w, msg, sizeof(msg)));
	ASSERT_EQ(0, wsecc_graph_compile_buffer(buf, (size_t)(p - buf), "meta.onnx", &o, &w, &gp, &err))
		TH_LOG("%s", err.msg);
	EXPECT_EQ(7, gp->prog->num_param_names);
	EXPECT_EQ(plain->prog->num_weights - 10, gp->prog->num_weights);
	EXPECT_EQ(NULL, wsep_param_name_find(gp->prog, "classifier.3.bias"));
	n = wsep_param_name_find(gp->prog, "model.head.weight");
	ASSERT_NE(NULL, n);
	EXPECT_STREQ("classifier.3.weight", n->name);
	EXPECT_EQ(WSEP_PARAM_TORCH_TRANSPOSED, n->flags);
	n = wsep_param_name_find(gp->prog, "features.0.bias");
	ASSERT_NE(NULL, n);
	EXPECT_STREQ("features.0.bias", n->torch_name);
	EXPECT_EQ(0, n->flags);
	wsecc_graph_program_free(gp);
	wsecc_graph_program_free(plain);
	free(buf);
}

TEST_HARNESS_MAIN
