// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conformance: ONNX's own node tests (Debian's libonnx-testdata) for every
 * op the importer maps to a kernel. Each test directory holds model.onnx
 * (one node) and test_data_set_N directories with input_N.pb and output_N.pb
 * TensorProtos. The node is imported, run forward by the engine's graph
 * executor, and every output compared with the expected one (|x - e| <=
 * 1e-5 + 1e-3 |e|, ONNX's backend tolerance being rtol 1e-3). Inputs that
 * are not float tensors (shapes, indices, ratios) are bound as constants,
 * as a model's would be after folding.
 *
 * A test of an op the importer supports must pass; the table below lists
 * those it refuses, each with the class of reason it must give (an
 * unsupported attribute is refused, never ignored), and the few whose
 * expected output cannot be reproduced (random dropout masks) or that
 * fold whole (int64 operands bound as constants). The run
 * prints one line per test.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "wse/compiler_graph.h"
#include "wse/engine_graph.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

/* The node tests of the supported ops, by directory name prefix. */
static const char *const prefixes[] = {
	"test_basic_conv_", "test_conv_with_", "test_maxpool_", "test_averagepool_",
	"test_flatten_", "test_reshape_", "test_gemm_", "test_matmul_", "test_add",
	"test_sub", "test_mul", "test_div", "test_layer_normalization_", "test_relu",
	"test_tanh", "test_sigmoid", "test_softmax_", "test_gather_", "test_transpose_",
	"test_split_", "test_dropout_", "test_training_dropout", "test_sce_mean",
	"test_squeeze", "test_unsqueeze_", "test_identity", "test_batchnorm_",
	"test_globalaveragepool", "test_globalmaxpool", "test_constant_pad", "test_edge_pad",
	"test_reflect_pad", "test_slice", "test_concat_", "test_neg", "test_reduce_mean_",
	"test_reciprocal", "test_where_",
};

/* Prefixes matching other ops' tests. */
static const char *const not_ours[] = {
	"test_gather_elements", "test_gathernd", "test_matmulinteger", "test_softmax_cross",
	"test_identity_opt", "test_identity_sequence", "test_sub_", "test_mul_",
	"test_div_", "test_add_",
};

/*
 * MASK: a random dropout mask, checked against the output it made. OPSET:
 * a model of an opset before 11, which the importer refuses as a whole
 * (the op is covered by the PyTorch exports of onnx_graph_test).
 */
enum verdict { PASS, REFUSED, NOT_COMPARABLE, MASK, OPSET };

static const struct {
	const char *name;
	enum verdict v;
	enum wsecc_why why;
} expect[] = {
	/* 1-D and 3-D pooling, uint8, dilated average (opset 19), Indices output */
	{ "test_maxpool_1d_default", REFUSED, WSECC_WHY_SHAPE },
	{ "test_maxpool_3d_default", REFUSED, WSECC_WHY_SHAPE },
	{ "test_maxpool_2d_uint8", REFUSED, WSECC_WHY_DTYPE },
	{ "test_maxpool_with_argmax_2d_precomputed_pads", REFUSED, WSECC_WHY_ATTR },
	{ "test_maxpool_with_argmax_2d_precomputed_strides", REFUSED, WSECC_WHY_ATTR },
	{ "test_averagepool_1d_default", REFUSED, WSECC_WHY_SHAPE },
	{ "test_averagepool_3d_default", REFUSED, WSECC_WHY_SHAPE },
	/* zero-sized dimensions */
	{ "test_reshape_allowzero_reordered", REFUSED, WSECC_WHY_SHAPE },
	{ "test_split_zero_size_splits", REFUSED, WSECC_WHY_SHAPE },
	/* integer arithmetic */
	{ "test_add_uint8", REFUSED, WSECC_WHY_DTYPE },
	{ "test_sub_uint8", REFUSED, WSECC_WHY_DTYPE },
	{ "test_mul_uint8", REFUSED, WSECC_WHY_DTYPE },
	{ "test_div_uint8", REFUSED, WSECC_WHY_DTYPE },
	/* training-mode dropout: numpy drew the expected mask */
	{ "test_training_dropout_default_mask", MASK, 0 },
	{ "test_training_dropout_mask", MASK, 0 },
	{ "test_training_dropout", NOT_COMPARABLE, 0 },
	{ "test_training_dropout_default", NOT_COMPARABLE, 0 },
	/* softmax cross-entropy beyond [N, C] with a mean and no weights */
	{ "test_sce_mean_3d", REFUSED, WSECC_WHY_SHAPE },
	{ "test_sce_mean_*", REFUSED, WSECC_WHY_ATTR },	/* weights, ignore_index, log_prob */
	/* Pad other than by zeros */
	{ "test_constant_pad", REFUSED, WSECC_WHY_ATTR },
	{ "test_edge_pad", REFUSED, WSECC_WHY_DTYPE },
	{ "test_reflect_pad", REFUSED, WSECC_WHY_DTYPE },
	/* GlobalAveragePool and GlobalMaxPool: opset 1 models */
	{ "test_global*", OPSET, 0 },
	/* opset 11 Dropout with a ratio attribute */
	{ "test_dropout_random_old", REFUSED, WSECC_WHY_ATTR },
	/*
	 * Where of int64 values: bound as constants like every non-float
	 * input here, so the node folds at import and nothing is left to run
	 */
	{ "test_where_long_example", NOT_COMPARABLE, 0 },
	/* Slice: a step other than 1; a slice that is empty (zero-sized) */
	{ "test_slice_neg_steps", REFUSED, WSECC_WHY_ATTR },
	{ "test_slice_start_out_of_bounds", REFUSED, WSECC_WHY_SHAPE },
	/*
	 * Neg, Reciprocal and ReduceMean of activations run only inside a
	 * fused RMSNorm or rotary embedding: alone, refused as unsupported
	 * ops; a mean over every axis, refused for its attributes first.
	 */
	{ "test_neg*", REFUSED, WSECC_WHY_OP },
	{ "test_reciprocal*", REFUSED, WSECC_WHY_OP },
	{ "test_reduce_mean_default_axes_*", REFUSED, WSECC_WHY_ATTR },
	{ "test_reduce_mean_*", REFUSED, WSECC_WHY_OP },
};

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool selected(const char *name)
{
	bool sel = false;

	if (strstr(name, "_expanded"))
		return false;	/* the same test spelt with other ops */
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		sel |= has_prefix(name, prefixes[i]);
	for (size_t i = 0; i < sizeof(not_ours) / sizeof(not_ours[0]); i++)
		if (has_prefix(name, not_ours[i]) && strcmp(name, "test_add_bcast") &&
		    strcmp(name, "test_sub_bcast") && strcmp(name, "test_mul_bcast") &&
		    strcmp(name, "test_div_bcast") && strcmp(name, "test_add_uint8") &&
		    strcmp(name, "test_sub_uint8") && strcmp(name, "test_mul_uint8") &&
		    strcmp(name, "test_div_uint8") && strcmp(name, "test_sub_example") &&
		    strcmp(name, "test_mul_example") && strcmp(name, "test_div_example"))
			sel = false;
	return sel;
}

static int expected(const char *name, enum wsecc_why *why)
{
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		size_t n = strlen(expect[i].name);
		bool star = expect[i].name[n - 1] == '*';

		if (star ? !strncmp(expect[i].name, name, n - 1) : !strcmp(expect[i].name, name)) {
			*why = expect[i].why;
			return expect[i].v;
		}
	}
	*why = WSECC_WHY_NONE;
	return PASS;
}

#define MAX_IO 8

struct dataset {
	struct wsecc_tensor in[MAX_IO], out[MAX_IO];
	size_t n_in, n_out;
};

static void free_dataset(struct dataset *d)
{
	for (size_t i = 0; i < d->n_in; i++)
		wsecc_tensor_release(&d->in[i]);
	for (size_t i = 0; i < d->n_out; i++)
		wsecc_tensor_release(&d->out[i]);
}

/* Reads input_N.pb / output_N.pb of one data set; -1 if unreadable. */
static int load_dataset(const char *dir, struct dataset *d, char *msg, size_t len)
{
	char path[600];
	struct wsecc_error err;
	struct stat st;

	memset(d, 0, sizeof(*d));
	for (int io = 0; io < 2; io++)
		for (size_t k = 0; k < MAX_IO; k++) {
			snprintf(path, sizeof(path), "%s/%s_%zu.pb", dir, io ? "output" : "input", k);
			if (stat(path, &st))
				break;
			if (wsecc_onnx_read_tensor(path, io ? &d->out[k] : &d->in[k], &err)) {
				snprintf(msg, len, "%s", err.msg);
				return -1;
			}
			if (io)
				d->n_out++;
			else
				d->n_in++;
		}
	return 0;
}

/* Shapes, indices, labels, flags and scalars are constants in a model. */
static bool bound(const struct wsecc_tensor *t)
{
	return t->dtype == WSECC_DT_I64 || t->dtype == WSECC_DT_BOOL || t->rank == 0;
}

static bool close_enough(float got, float want)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabsf(got - want) <= 1e-5f + 1e-3f * fabsf(want);
}

/*
 * Runs one node test: PASS when every output matches, REFUSED with @why
 * set when the importer refuses the node; -1 (and @msg) on any failure.
 */
/* y is x * mask / (1 - ratio), and about 1 - ratio of the mask is kept. */
static int check_mask(const struct dataset *d, const float *y, const float *mask, size_t n,
		      char *msg, size_t len)
{
	float ratio = d->n_in > 1 ? *(const float *)d->in[1].data : 0.5f;
	const float *x = d->in[0].data;
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		if ((mask[i] != 0.0f && mask[i] != 1.0f) ||
		    !close_enough(y[i], mask[i] ? x[i] / (1.0f - ratio) : 0.0f)) {
			snprintf(msg, len, "element %zu: mask %g, y %g for x %g", i, mask[i], y[i], x[i]);
			return -1;
		}
		kept += mask[i] != 0.0f;
	}
	/* n >= 60 here: 5 standard deviations of a binomial */
	if (fabs((double)kept - n * (1.0 - ratio)) > 5.0 * sqrt(n * ratio * (1.0 - ratio)) + 1.0) {
		snprintf(msg, len, "%zu of %zu kept at ratio %g", kept, n, ratio);
		return -1;
	}
	return 0;
}

static int run_node_test(const char *name, enum wsecc_why *why, char *msg, size_t len)
{
	char dir[400], sub[500], model[450];
	struct dataset d;
	struct wsecc_bind binds[MAX_IO];
	size_t n_binds = 0;
	struct wsecc_onnx_options opt = { 0 };
	struct wsecc_graph *g = NULL;
	struct engine_graph *eg = NULL;
	struct wsecc_error err;
	int *ids = NULL, labels, rc = -1;

	snprintf(dir, sizeof(dir), "%s/%s", NODE_DIR, name);
	snprintf(model, sizeof(model), "%s/model.onnx", dir);
	snprintf(sub, sizeof(sub), "%s/test_data_set_0", dir);
	if (load_dataset(sub, &d, msg, len))
		return -1;
	for (size_t k = 0; k < d.n_in; k++)
		if (bound(&d.in[k]))
			binds[n_binds++] = (struct wsecc_bind){ d.in[k].name, d.in[k].dtype, d.in[k].rank,
								{ 0 }, d.in[k].data };
	for (size_t k = 0, b = 0; k < d.n_in; k++)
		if (bound(&d.in[k]))
			memcpy(binds[b++].dims, d.in[k].dims, sizeof(d.in[k].dims));
	opt.binds = binds;
	opt.n_binds = n_binds;
	if (wsecc_onnx_import(model, &opt, &g, &err)) {
		snprintf(msg, len, "import: %s", err.msg);
		if (strstr(err.msg, "opset 1:"))
			rc = OPSET;
		goto out;
	}
	if (wsecc_graph_check(g, &err)) {
		for (size_t i = 0; i < g->n_nodes; i++)
			if (g->nodes[i].state == WSECC_NODE_REFUSED)
				*why = g->nodes[i].why;
			else if (g->nodes[i].state == WSECC_NODE_PENDING)
				*why = WSECC_WHY_OP;
		snprintf(msg, len, "%s", err.msg);
		rc = REFUSED;
		goto out;
	}
	ids = malloc(g->n_tensors * sizeof(int));
	if (!ids || engine_graph_create(&eg))
		goto out;
	if (wsecc_graph_to_engine(g, eg, ids, false, &labels, &err)) {
		snprintf(msg, len, "to engine: %s", err.msg);
		goto out;
	}
	if (engine_graph_prepare(eg, ENGINE_SGD)) {
		snprintf(msg, len, "prepare: %s", engine_graph_error(eg));
		goto out;
	}
	for (size_t k = 0; k < d.n_in; k++) {
		int t = wsecc_graph_find(g, d.in[k].name), id = t >= 0 ? ids[t] : -1;

		if (id >= 0 && engine_graph_kind(eg, id) == ENGINE_VAL_INPUT &&
		    engine_graph_set_input(eg, id, d.in[k].data)) {
			snprintf(msg, len, "input %s does not fit", d.in[k].name);
			goto out;
		}
	}
	/* Training-mode tests run a training forward pass (batch statistics, dropout). */
	if (engine_graph_forward(eg, strstr(name, "training") != NULL, 1)) {
		snprintf(msg, len, "forward: %s", engine_graph_error(eg));
		goto out;
	}
	for (size_t k = 0; k < d.n_out && k < g->n_outputs; k++) {
		const struct wsecc_tensor *want = &d.out[k];
		int t = g->outputs[k], id = ids[t];
		struct engine_loss_result res;
		const float *got;
		size_t rank, dims[ENGINE_MAX_RANK];
		enum wsecc_why mask_why;

		if (g->tensors[t].producer >= 0 && g->nodes[g->tensors[t].producer].state == WSECC_NODE_LOSS) {
			if (engine_graph_loss(eg, false, &res)) {
				snprintf(msg, len, "loss: %s", engine_graph_error(eg));
				goto out;
			}
			got = &res.loss;
			rank = 0;
		} else {
			if (id < 0 || engine_graph_shape(eg, id, &rank, dims)) {
				snprintf(msg, len, "output %zu was not computed", k);
				goto out;
			}
			got = engine_graph_data(eg, id);
		}
		if (k == 0 && expected(name, &mask_why) == MASK)
			continue;	/* checked with the mask */
		if (k == 1 && want->dtype == WSECC_DT_BOOL && expected(name, &mask_why) == MASK) {
			if (check_mask(&d, engine_graph_data(eg, ids[g->outputs[0]]), got,
				       wsecc_tensor_numel(want), msg, len))
				goto out;
			continue;
		}
		/* A bool output (Dropout's mask) comes as fp32 1 and 0. */
		if ((want->dtype != WSECC_DT_F32 && want->dtype != WSECC_DT_BOOL) || rank != want->rank) {
			snprintf(msg, len, "output %zu: rank %zu, expected %u", k, rank, want->rank);
			goto out;
		}
		for (size_t i = 0; i < rank; i++)
			if ((int64_t)dims[i] != want->dims[i]) {
				snprintf(msg, len, "output %zu: dimension %zu is %zu, expected %lld", k, i,
					 dims[i], (long long)want->dims[i]);
				goto out;
			}
		for (uint64_t i = 0; want->dtype == WSECC_DT_BOOL && i < wsecc_tensor_numel(want); i++)
			if (got[i] != (float)((const uint8_t *)want->data)[i]) {
				snprintf(msg, len, "output %zu element %llu: %g, expected %u", k,
					 (unsigned long long)i, got[i], ((const uint8_t *)want->data)[i]);
				goto out;
			}
		for (uint64_t i = 0; want->dtype == WSECC_DT_F32 && i < wsecc_tensor_numel(want); i++)
			if (!close_enough(got[i], ((const float *)want->data)[i])) {
				snprintf(msg, len, "output %zu element %llu: %.9g, expected %.9g", k,
					 (unsigned long long)i, got[i], ((const float *)want->data)[i]);
				goto out;
			}
	}
	rc = PASS;
out:
	free(ids);
	engine_graph_destroy(eg);
	wsecc_graph_free(g);
	free_dataset(&d);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

TEST(node_tests_of_supported_ops)
{
	DIR *dir = opendir(NODE_DIR);
	struct dirent *e;
	char *names[1024];
	size_t n = 0, passed = 0, refused = 0, skipped = 0, failed = 0;

	if (!dir)
		SKIP(return, "%s is missing: tools/install-deps installs libonnx-testdata", NODE_DIR);
	while ((e = readdir(dir)) && n < 1024)
		if (selected(e->d_name))
			names[n++] = strdup(e->d_name);
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp_names);
	ASSERT_GT(n, 100);
	for (size_t i = 0; i < n; i++) {
		enum wsecc_why why = WSECC_WHY_NONE, want_why;
		int want = expected(names[i], &want_why);
		char msg[600] = "";
		int got = run_node_test(names[i], &why, msg, sizeof(msg));

		if (want == NOT_COMPARABLE) {
			printf("#   skip    %-52s %s\n", names[i],
			       strstr(names[i], "dropout") ?
			       "the expected output holds numpy's random dropout mask" :
			       "all inputs bound as constants: the node folds, nothing runs");
			skipped++;
		} else if (got == OPSET && want == OPSET) {
			printf("#   opset   %-52s %s\n", names[i], msg);
			skipped++;
		} else if (got == PASS && (want == PASS || want == MASK)) {
			printf("#   pass    %s\n", names[i]);
			passed++;
		} else if (got == REFUSED && want == REFUSED && why == want_why) {
			printf("#   refused %-52s %s: %s\n", names[i], wsecc_why_name(why), msg);
			refused++;
		} else {
			printf("#   FAIL    %-52s expected %s, got %s: %s\n", names[i],
			       want == PASS ? "pass" : "refusal",
			       got == PASS ? "pass" : got == REFUSED ? "refusal" : "error", msg);
			failed++;
		}
		free(names[i]);
	}
	printf("# node tests: %zu passed, %zu refused as expected, %zu not comparable or of an old opset, %zu failed\n",
	       passed, refused, skipped, failed);
	EXPECT_EQ(0, failed);
}

TEST_HARNESS_MAIN
