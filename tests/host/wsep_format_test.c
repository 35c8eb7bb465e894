// SPDX-License-Identifier: GPL-2.0-only
/*
 * .wsep format: round trip, the documented byte layout, the seeded weight
 * initialiser, and specific refusals with the messages they must carry.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/crc32c.h"
#include "wse/wsep.h"
#include "wsep_sample.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void set64(uint8_t *p, uint64_t v)
{
	set32(p, (uint32_t)v);
	set32(p + 4, (uint32_t)(v >> 32));
}

/* Offset of section @type's data, from the table. */
static uint8_t *section(uint8_t *buf, uint32_t type, uint8_t **entry)
{
	uint32_t n = le32(buf + 12);

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = buf + 64 + 32 * i;

		if (le32(e) == type) {
			if (entry)
				*entry = e;
			return buf + le32(e + 16);
		}
	}
	return NULL;
}

FIXTURE(file) {
	struct wsep_program prog;
	uint8_t *buf;
	size_t len;
	char err[256];
};

FIXTURE_SETUP(file)
{
	void *b;

	wsep_sample_program(&self->prog, 1);
	ASSERT_EQ(0, wsep_write(&self->prog, &b, &self->len, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	self->buf = b;
}

FIXTURE_TEARDOWN(file)
{
	free(self->buf);
	wsep_sample_release(&self->prog);
}

TEST(crc32c_check_value)
{
	/* The standard check value of CRC-32C. */
	EXPECT_EQ(0xE3069283U, wse_crc32c(0, "123456789", 9));
	EXPECT_EQ(0, wse_crc32c(0, "", 0));
}

TEST_F(file, round_trip_keeps_every_field)
{
	struct wsep_program *q;
	const struct wsep_program *p = &self->prog;

	ASSERT_EQ(0, wsep_read(self->buf, self->len, &q, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_EQ(WSEP_VERSION_MAJOR, q->version_major);
	EXPECT_EQ(0, memcmp(&p->wafer, &q->wafer, sizeof(p->wafer)));
	EXPECT_STREQ(p->model_name, q->model_name);
	EXPECT_EQ(p->mode, q->mode);
	EXPECT_EQ(p->batch, q->batch);
	EXPECT_EQ(p->seed, q->seed);
	EXPECT_EQ(p->input_dim, q->input_dim);
	EXPECT_EQ(p->input_type, q->input_type);
	EXPECT_EQ(p->input_scale, q->input_scale);
	EXPECT_EQ(p->loss, q->loss);
	EXPECT_EQ(0, memcmp(&p->opt, &q->opt, sizeof(p->opt)));
	ASSERT_EQ(p->num_layers, q->num_layers);
	for (uint32_t i = 0; i < p->num_layers; i++) {
		EXPECT_EQ(0, memcmp(&p->layers[i], &q->layers[i], sizeof(p->layers[i])));
		EXPECT_EQ(0, memcmp(&p->regions[i], &q->regions[i], sizeof(p->regions[i])));
		EXPECT_EQ(0, memcmp(&p->estimates[i], &q->estimates[i], sizeof(p->estimates[i])));
	}
	ASSERT_EQ(p->num_streams, q->num_streams);
	for (uint32_t i = 0; i < p->num_streams; i++)
		EXPECT_EQ(0, memcmp(&p->streams[i], &q->streams[i], sizeof(p->streams[i])));
	EXPECT_EQ(0, memcmp(&p->summary, &q->summary, sizeof(p->summary)));
	ASSERT_EQ(p->num_weights, q->num_weights);
	ASSERT_NE(NULL, q->weights);
	EXPECT_EQ(0, memcmp(p->weights, q->weights, p->num_weights * sizeof(float)));
	wsep_program_free(q);
}

TEST_F(file, documented_layout)
{
	/* Header fields at the offsets Documentation/wsep-format.rst gives. */
	EXPECT_EQ(0, memcmp(self->buf, "WSEP", 4));
	EXPECT_EQ(1, self->buf[4]);
	EXPECT_EQ(64, le32(self->buf + 8));
	EXPECT_EQ(8, le32(self->buf + 12));
	EXPECT_EQ(self->len, le32(self->buf + 16));
	EXPECT_EQ(0, self->len % 8);
	/* First section right after the table, sections in type order. */
	EXPECT_EQ(WSEP_SEC_WAFER, le32(self->buf + 64));
	EXPECT_EQ(64 + 8 * 32, le32(self->buf + 64 + 16));
	EXPECT_EQ(0, memcmp(section(self->buf, WSEP_SEC_WAFER, NULL), "8x4:48K", 8));
	EXPECT_EQ(784, le32(section(self->buf, WSEP_SEC_LAYERS, NULL) + 8));
	EXPECT_EQ(0, memcmp(section(self->buf, WSEP_SEC_STREAMS, NULL) + 32, "samples", 8));
}

/* Format 1.5's program record: exec_flags (1.4) at 172, the precision at 176, 180..183 zero. */
TEST(program_record_1_5)
{
	struct wsep_program p, *q = NULL;
	uint8_t *e, *r;
	char err[256];
	void *b;
	size_t len;

	wsep_sample_program(&p, 1);
	p.precision = WSEP_PRECISION_BF16;
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	r = section(b, WSEP_SEC_PROGRAM, &e);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(184, le32(e + 4));
	EXPECT_EQ(0, le32(r + 172));
	EXPECT_EQ(WSEP_PRECISION_BF16, le32(r + 176));
	EXPECT_EQ(0, le32(r + 180));
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_PRECISION_BF16, q->precision);
	EXPECT_EQ(WSEP_FEATURE_PRECISION, q->features);
	wsep_program_free(q);
	free(b);
	wsep_sample_release(&p);
}

TEST_F(file, without_weights)
{
	struct wsep_program *q;
	void *b;
	size_t len;

	free(self->prog.weights);
	self->prog.weights = NULL;
	self->prog.num_weights = 0;
	ASSERT_EQ(0, wsep_write(&self->prog, &b, &len, self->err, sizeof(self->err)));
	ASSERT_EQ(0, wsep_read(b, len, &q, self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, q->weights);
	EXPECT_EQ(7, le32((uint8_t *)b + 12));
	wsep_program_free(q);
	free(b);
}

TEST_F(file, file_round_trip)
{
	char path[] = "/tmp/wsep_format_test.XXXXXX";
	int fd = mkstemp(path);
	struct wsep_program *q;

	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, wsep_write_file(&self->prog, path, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, wsep_read_file(path, &q, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_EQ(self->prog.num_weights, q->num_weights);
	wsep_program_free(q);
	unlink(path);
	EXPECT_EQ(-ENOENT, wsep_read_file(path, &q, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "No such file"));
	EXPECT_EQ(NULL, q);
}

/*
 * A file is mapped, not read into memory, up to the largest program the
 * format carries (24 GiB); past it, it is refused by its size, before
 * anything is mapped (a sparse file: no disk is used).
 */
TEST_F(file, larger_than_any_program_is_refused_by_size)
{
	char path[] = "/tmp/wsep_format_test.XXXXXX";
	int fd = mkstemp(path);
	struct wsep_program *q;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, (off_t)(24LL << 30) + 1));
	close(fd);
	EXPECT_NE(0, wsep_read_file(path, &q, self->err, sizeof(self->err)));
	EXPECT_EQ(NULL, q);
	EXPECT_NE(NULL, strstr(self->err, "25769803777 bytes, more than the largest program"))
		TH_LOG("%s", self->err);
	/* At the limit it is read as a program: this one's header is zeros. */
	ASSERT_EQ(0, truncate(path, 24LL << 30));
	EXPECT_NE(0, wsep_read_file(path, &q, self->err, sizeof(self->err)));
	EXPECT_EQ(NULL, strstr(self->err, "more than the largest program")) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, path)) TH_LOG("%s", self->err);
	unlink(path);
}

TEST_F(file, truncation_is_named)
{
	EXPECT_EQ(-EINVAL, wsep_validate(self->buf, 40, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "shorter than the 64-byte header")) TH_LOG("%s", self->err);
	EXPECT_EQ(-EINVAL, wsep_validate(self->buf, self->len - 8, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "truncated")) TH_LOG("%s", self->err);
	EXPECT_EQ(-EINVAL, wsep_validate(NULL, 0, self->err, sizeof(self->err)));
}

TEST_F(file, section_beyond_file_is_named)
{
	uint8_t *e;

	section(self->buf, WSEP_SEC_LAYERS, &e);
	set64(e + 24, self->len);
	wsep_sample_reseal(self->buf, self->len);
	EXPECT_EQ(-EINVAL, wsep_validate(self->buf, self->len, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "section 2 (layers): length")) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, "exceeds file size")) TH_LOG("%s", self->err);
}

TEST_F(file, corrupted_byte_fails_checksum)
{
	section(self->buf, WSEP_SEC_REGIONS, NULL)[0] ^= 1;
	EXPECT_EQ(-EINVAL, wsep_validate(self->buf, self->len, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "section 3 (regions): checksum mismatch"))
		TH_LOG("%s", self->err);
}

TEST_F(file, semantic_checks_behind_valid_checksums)
{
	static const struct {
		uint32_t type, field, value;
		const char *msg;
	} cases[] = {
		{ WSEP_SEC_LAYERS, WSEP_LAYER_RECORD + 8, 33,
		  "input 33 does not match previous layer's output 32" },
		{ WSEP_SEC_REGIONS, 16, 5, "region 1 overlaps region 0" },
		{ WSEP_SEC_REGIONS, 16 + 8, 5, "is not inside the 8x4 wafer" },
		{ WSEP_SEC_PROGRAM, 32, 3, "unknown mode 3" },
		{ WSEP_SEC_PROGRAM, 36, 0, "batch 0" },
		{ WSEP_SEC_LAYERS, 4 + WSEP_LAYER_RECORD, 1, "must have no activation" },
		{ WSEP_SEC_STREAMS, 48 + 12, 2, "layer 2 outside" },
		{ WSEP_SEC_STREAMS, 48 + 0, 0, "id 0 used twice" },
		{ WSEP_SEC_WEIGHTS, 4 * 100, 0x7fc00000, "float 100 is not finite" },
		{ WSEP_SEC_SUMMARY, 40, 9, "bottleneck layer 9" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *copy = malloc(self->len);

		memcpy(copy, self->buf, self->len);
		set32(section(copy, cases[i].type, NULL) + cases[i].field, cases[i].value);
		wsep_sample_reseal(copy, self->len);
		EXPECT_EQ(-EINVAL, wsep_validate(copy, self->len, self->err, sizeof(self->err)))
			TH_LOG("case %zu accepted", i);
		EXPECT_NE(NULL, strstr(self->err, cases[i].msg))
			TH_LOG("case %zu: '%s' lacks '%s'", i, self->err, cases[i].msg);
		free(copy);
	}
}

TEST_F(file, writer_refuses_inconsistent_program)
{
	void *b = NULL;
	size_t len;

	self->prog.layers[1].in = 31;
	EXPECT_EQ(-EINVAL, wsep_write(&self->prog, &b, &len, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "layer 1: input 31")) TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, b);
}

TEST(init_weights_are_deterministic_and_bounded)
{
	enum { IN = 784, OUT = 64 };
	static float w1[IN * OUT], b1[OUT], w2[IN * OUT], b2[OUT], w3[IN * OUT], b3[OUT];
	float bound = 1.0f / sqrtf(IN);
	double sum = 0;

	wsep_init_layer(42, 0, IN, OUT, w1, b1);
	wsep_init_layer(42, 0, IN, OUT, w2, b2);
	wsep_init_layer(43, 0, IN, OUT, w3, b3);
	EXPECT_EQ(0, memcmp(w1, w2, sizeof(w1)));
	EXPECT_EQ(0, memcmp(b1, b2, sizeof(b1)));
	EXPECT_NE(0, memcmp(w1, w3, sizeof(w1)));
	for (int i = 0; i < IN * OUT; i++) {
		ASSERT_LE(-bound, w1[i]);
		ASSERT_GT(bound, w1[i]);
		sum += w1[i];
	}
	/* Uniform and centred: the mean of 50k draws is near 0. */
	EXPECT_GT(0.01 * bound, fabs(sum / (IN * OUT)));
	/* A later layer continues the stream: offset 1 is draw 1 onwards. */
	wsep_init_layer(42, 1, IN, OUT, w3, b3);
	EXPECT_EQ(0, memcmp(w1 + 1, w3, sizeof(float) * (IN * OUT - 1)));
}

/* The documented recipe, written out independently: one splitmix64 stream
 * from the seed through every layer, W then b (as the firmware engine's
 * engine_params_init() draws).
 */
TEST(init_weights_follow_the_recipe)
{
	static const struct wsep_layer layers[] = {
		{ WSEP_LAYER_DENSE, WSEP_ACT_RELU, 5, 3, 0, 0, 0 },
		{ WSEP_LAYER_DENSE, WSEP_ACT_NONE, 3, 2, 0, 18, 0 },
	};
	float got[26], want[26];
	uint64_t state = 1234;
	int k = 0;

	wsep_init_weights(1234, layers, 2, got);
	for (int l = 0; l < 2; l++) {
		float bound = 1.0f / sqrtf((float)layers[l].in);
		int n = (int)(layers[l].in * layers[l].out + layers[l].out);

		for (int i = 0; i < n; i++, k++) {
			uint64_t z = (state += 0x9E3779B97F4A7C15ULL);

			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
			z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
			z ^= z >> 31;
			want[k] = (2.0f * ((float)(z >> 40) * 0x1p-24f) - 1.0f) * bound;
		}
	}
	ASSERT_EQ(26, k);
	EXPECT_EQ(0, memcmp(want, got, sizeof(got)));
}

/* The training streams: found in the sample, and every way of being wrong is named. */
TEST(training_streams)
{
	struct wsep_train_streams ts;
	struct wsep_program p;
	struct wsep_stream want;
	char err[256];

	wsep_sample_program(&p, 0);
	ASSERT_EQ(0, wsep_train_streams(&p, &ts, err, sizeof(err)));
	EXPECT_EQ(0, ts.samples);
	EXPECT_EQ(3, ts.predictions);
	EXPECT_EQ(5, ts.weights[1]);
	EXPECT_EQ(-1, ts.grads[0]);
	EXPECT_EQ(-1, ts.weights[2]);
	/* What the sample declares is what the definition says. */
	ASSERT_EQ(0, wsep_train_stream(&p, WSEP_TRAIN_WEIGHTS, 1, &want));
	EXPECT_STREQ("weights.1", want.name);
	EXPECT_EQ(p.streams[5].elems, want.elems);
	EXPECT_EQ(-ENOENT, wsep_train_stream(&p, WSEP_TRAIN_GRADS, 0, &want));
	EXPECT_EQ(-ENOENT, wsep_train_stream(&p, WSEP_TRAIN_WEIGHTS, 2, &want));

	p.streams[1].dir = WSEP_DIR_DEVICE_TO_HOST;
	EXPECT_EQ(-EINVAL, wsep_train_streams(&p, &ts, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "stream 1 'labels' is device->host"));
	p.streams[1].dir = WSEP_DIR_HOST_TO_DEVICE;

	strcpy(p.streams[3].name, "guesses");
	EXPECT_EQ(-EINVAL, wsep_train_streams(&p, &ts, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no stream 'predictions'"));
	strcpy(p.streams[3].name, "predictions");

	/* The same program by weight streaming lacks its grads.K. */
	p.mode = WSEP_MODE_WEIGHT_STREAMING;
	EXPECT_EQ(-EINVAL, wsep_train_streams(&p, &ts, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "weights.0"));
	wsep_sample_release(&p);

	/* A stream that is none of them. */
	wsep_sample_program(&p, 0);
	p.num_streams = 7;
	p.streams = realloc(p.streams, 7 * sizeof(*p.streams));
	ASSERT_NE(NULL, p.streams);
	p.streams[6] = p.streams[0];
	p.streams[6].id = 6;
	strcpy(p.streams[6].name, "extra");
	EXPECT_EQ(-EINVAL, wsep_train_streams(&p, &ts, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "stream 6 'extra' is not a stream"));
	wsep_sample_release(&p);
}

/* Writes @p (expecting a refusal naming @msg) and releases nothing. */
static void refused(struct __test_metadata *_metadata, const struct wsep_program *p,
		    const char *msg)
{
	char err[256];
	void *b = NULL;
	size_t len;

	EXPECT_EQ(-EINVAL, wsep_write(p, &b, &len, err, sizeof(err))) TH_LOG("accepted: %s", msg);
	EXPECT_NE(NULL, strstr(err, msg)) TH_LOG("'%s' lacks '%s'", err, msg);
	free(b);
}

TEST(graph_program_round_trip)
{
	struct wsep_program p, *q;
	char err[256];
	void *b;
	size_t len;

	wsep_sample_graph_program(&p);
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_VERSION_MINOR, q->version_minor);
	EXPECT_EQ(WSEP_FEATURE_GRAPH, q->features);
	ASSERT_NE(NULL, q->graph);
	EXPECT_EQ(p.graph->num_values, q->graph->num_values);
	EXPECT_EQ(p.graph->num_nodes, q->graph->num_nodes);
	EXPECT_EQ(0, memcmp(p.graph->values, q->graph->values,
			    p.graph->num_values * sizeof(*p.graph->values)));
	EXPECT_EQ(0, memcmp(p.graph->nodes, q->graph->nodes,
			    p.graph->num_nodes * sizeof(*p.graph->nodes)));
	EXPECT_EQ(p.graph->rows, q->graph->rows);
	EXPECT_EQ(p.graph->classes, q->graph->classes);
	EXPECT_EQ(15, wsep_layer_params(&q->layers[0]));
	EXPECT_EQ(0, memcmp(p.weights, q->weights, 23 * sizeof(float)));
	/* Streams of a graph program: logits, and labels per row. */
	EXPECT_STREQ("logits", q->streams[4].name);
	EXPECT_EQ(2, q->streams[4].elems);
	wsep_program_free(q);
	free(b);
	wsep_sample_release(&p);
}

/* The version check: a reader without a feature refuses, naming it. */
TEST(old_readers_refuse_new_features)
{
	struct wsep_program p, *q = NULL;
	char err[256];
	void *b;
	size_t len;

	wsep_sample_graph_program(&p);
	p.opt.schedule = WSEP_LR_WARMUP_COSINE;
	p.opt.warmup = 10;
	p.opt.total_steps = 100;
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, wsep_read_features(b, len, 0, &q, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "this program needs graph execution (feature 0x1, and more), which this reader does not support (it supports 0x0): update wsefwd and libwsep"))
		TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, wsep_read_features(b, len, WSEP_FEATURE_GRAPH, &q, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "needs AdamW, Nesterov, dampening or a learning-rate schedule (feature 0x2)"))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, q);
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_FEATURE_GRAPH | WSEP_FEATURE_TRAINING, q->features);
	EXPECT_EQ(100, q->opt.total_steps);
	wsep_program_free(q);
	free(b);
	wsep_sample_release(&p);
}

/* What the firmware relies on in a graph is checked before it is trusted. */
/*
 * The sample graph fed a second input (format 1.6): its ReLU becomes an
 * Add of a [batch, 3] float input, which each sample's record carries
 * after the 4 pixels (now f32: several inputs travel in 4-byte elements).
 */
static void two_inputs(struct wsep_program *p)
{
	struct wsep_graph *g = p->graph;
	int32_t m = (int32_t)g->num_values;
	struct wsep_stream s;

	g->values = realloc(g->values, (g->num_values + 1) * sizeof(*g->values));
	g->values[m] = g->values[5];	/* H: f32 [4, 3], batch dimension 0 */
	g->values[m].kind = WSEP_VAL_INPUT;
	g->num_values++;
	g->nodes[1].op = WSEP_OP_BINARY;
	g->nodes[1].a.binary = WSEP_BIN_ADD;
	g->nodes[1].n_in = 2;
	g->nodes[1].in[1] = m;
	g->n_inputs = 2;
	g->inputs[0] = g->input;
	g->inputs[1] = m;
	p->input_type = WSEP_ELEM_F32;
	p->input_scale = 1.0f;
	p->input_dim = 4 + 3;
	p->layers[0].in = p->input_dim;
	wsep_train_stream(p, WSEP_TRAIN_SAMPLES, 0, &s);
	s.id = p->streams[0].id;
	p->streams[0] = s;
}

TEST(fed_inputs_round_trip_and_are_checked)
{
	struct wsep_program p, *q = NULL;
	uint64_t elems;
	char err[256];
	void *b;
	size_t len;

	wsep_sample_graph_program(&p);
	two_inputs(&p);
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	/* A reader of format 1.5 knows no feature 0x20. */
	EXPECT_EQ(-EINVAL, wsep_read_features(b, len, WSEP_FEATURE_GRAPH, &q, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "needs several fed inputs (feature 0x20)")) TH_LOG("%s", err);
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_FEATURE_GRAPH | WSEP_FEATURE_INPUTS, q->features);
	EXPECT_EQ(2U, wsep_graph_n_inputs(q->graph));
	EXPECT_EQ(p.graph->inputs[1], wsep_graph_input_id(q->graph, 1));
	EXPECT_EQ(4U, wsep_graph_input_at(q, 1, &elems));
	EXPECT_EQ(3U, elems);
	EXPECT_EQ(0U, wsep_graph_input_at(q, 0, &elems));
	EXPECT_EQ(4U, elems);
	wsep_program_free(q);
	free(b);
	/* A record that does not hold both, u8 samples, an input left unfed. */
	p.input_dim = 4;
	p.layers[0].in = 4;
	refused(_metadata, &p, "its 2 fed inputs hold 7 elements per sample; the program's input_dim is 4");
	p.input_dim = 7;
	p.layers[0].in = 7;
	p.input_type = WSEP_ELEM_U8;
	refused(_metadata, &p, "several inputs travel in 4-byte elements");
	p.input_type = WSEP_ELEM_F32;
	p.graph->inputs[1] = p.graph->input;
	refused(_metadata, &p, "value 9: an input that is neither a fed input nor the labels");
	wsep_sample_release(&p);
	/* One input writes the bytes of format 1.5: no feature, reserved zeros. */
	wsep_sample_graph_program(&p);
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(WSEP_FEATURE_GRAPH, q->features);
	EXPECT_EQ(1U, wsep_graph_n_inputs(q->graph));
	wsep_program_free(q);
	free(b);
	wsep_sample_release(&p);
}

TEST(graph_checks)
{
	struct wsep_program p;
	struct wsep_graph_value v;
	int32_t in;

	wsep_sample_graph_program(&p);
	/* Unit 1's gemm reads unit 0's weights. */
	in = p.graph->nodes[2].in[1];
	p.graph->nodes[2].in[1] = 0;
	refused(_metadata, &p, "node 2 (gemm) of unit 1 reads parameter value 0 of unit 0");
	p.graph->nodes[2].in[1] = in;
	/* The relu reads what the second gemm computes later. */
	in = p.graph->nodes[1].in[0];
	p.graph->nodes[1].in[0] = 7;
	refused(_metadata, &p, "node 1 (activation): input 0 (value 7) is not computed by an earlier node");
	p.graph->nodes[1].in[0] = in;
	/* The layer records must say what crosses between the units. */
	p.layers[0].out = 4;
	p.layers[1].in = 4;
	refused(_metadata, &p, "layer 0: 4 elements per sample leave it, its graph hands on 3");
	p.layers[0].out = 3;
	p.layers[1].in = 3;
	/* A parameter outside its unit's share of the weights. */
	v = p.graph->values[1];
	p.graph->values[1].offset = 13;
	refused(_metadata, &p, "starts where the previous one ends");
	p.graph->values[1] = v;
	/* A batch dimension that is not a multiple of the batch. */
	p.graph->values[5].dims[0] = 6;
	refused(_metadata, &p, "value 5: batch dimension 0 is not one of its 2 dimensions, a multiple of the batch 4");
	p.graph->values[5].dims[0] = 4;
	/* Samples of the wrong type. */
	p.input_type = WSEP_ELEM_I32;
	refused(_metadata, &p, "the input (value 4) must be a i64 input");
	p.input_type = WSEP_ELEM_U8;
	/* No weights: a graph program carries them. */
	{
		float *w = p.weights;

		p.weights = NULL;
		refused(_metadata, &p, "a graph program carries its initial weights");
		p.weights = w;
	}
	/* State (running statistics) is laid out as a parameter is, only pipelined. */
	{
		struct wsep_program *q = NULL;
		char err[256];
		void *b;
		size_t len;

		p.graph->values[1].kind = WSEP_VAL_STATE;
		ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
		ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
		EXPECT_EQ(WSEP_VAL_STATE, q->graph->values[1].kind);
		wsep_program_free(q);
		free(b);
		p.graph->values[1].unit = 1;
		refused(_metadata, &p, "value 1: floats 12..14 lie outside unit 1's parameters");
		p.graph->values[1].unit = 0;
		struct wsep_region r0 = p.regions[0], r1 = p.regions[1];

		p.mode = WSEP_MODE_WEIGHT_STREAMING;
		p.regions[0] = p.regions[1] = (struct wsep_region){ 0, 0, p.wafer.width, p.wafer.height };
		refused(_metadata, &p, "value 1: state (running statistics) in a weight-streaming program");
		p.mode = WSEP_MODE_PIPELINED;
		p.regions[0] = r0;
		p.regions[1] = r1;
		p.graph->nodes[0].a.momentum = 2.0f;
		refused(_metadata, &p, "node 0 (gemm): an attribute is out of range");
		p.graph->nodes[0].a.momentum = 0.0f;
	}
	wsep_sample_release(&p);
}

/* The sample graph program's four parameters, named as an export would name them. */
static void name_sample(struct wsep_param_name *n)
{
	static const struct { uint64_t off; uint32_t rank; uint64_t d0, d1; const char *name, *torch; }
	e[] = {
		{ 0, 2, 3, 4, "fc1.weight", "fc1.weight" },
		{ 12, 1, 3, 0, "fc1.bias", "" },
		{ 15, 2, 2, 3, "onnx::MatMul_7", "fc2.weight" },
		{ 21, 1, 2, 0, "fc2.bias", "fc2.bias" },
	};

	memset(n, 0, 4 * sizeof(*n));
	for (int i = 0; i < 4; i++) {
		n[i].offset = e[i].off;
		n[i].rank = e[i].rank;
		n[i].dims[0] = e[i].d0;
		n[i].dims[1] = e[i].d1;
		n[i].elems = e[i].d0 * (e[i].d1 ? e[i].d1 : 1);
		strcpy(n[i].name, e[i].name);
		strcpy(n[i].torch_name, e[i].torch);
	}
	n[2].flags = WSEP_PARAM_TORCH_TRANSPOSED;
}

/* Format 1.2's optional param_names: kept by a round trip, absent without names, checked. */
TEST(param_names)
{
	struct wsep_param_name names[4], keep[4];
	struct wsep_program p, *q;
	char err[256];
	void *b;
	size_t len;

	wsep_sample_graph_program(&p);
	name_sample(names);
	p.param_names = names;
	p.num_param_names = 4;
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_NE(NULL, section(b, WSEP_SEC_PARAM_NAMES, NULL));
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(4, q->num_param_names);
	EXPECT_EQ(0, memcmp(names, q->param_names, sizeof(names)));
	EXPECT_EQ(&q->param_names[2], wsep_param_name_find(q, "onnx::MatMul_7"));
	EXPECT_EQ(&q->param_names[2], wsep_param_name_find(q, "fc2.weight"));
	EXPECT_EQ(NULL, wsep_param_name_find(q, "fc3.weight"));
	wsep_program_free(q);
	free(b);

	/* Without names (a program of format 1.1): no section, and it reads as before. */
	p.param_names = NULL;
	p.num_param_names = 0;
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(NULL, section(b, WSEP_SEC_PARAM_NAMES, NULL));
	ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, q->num_param_names);
	EXPECT_EQ(NULL, q->param_names);
	wsep_program_free(q);
	free(b);

	p.param_names = names;
	p.num_param_names = 4;
	memcpy(keep, names, sizeof(names));
	strcpy(names[3].name, "fc1.bias");
	refused(_metadata, &p, "parameter name 'fc1.bias' is given twice");
	memcpy(names, keep, sizeof(names));
	strcpy(names[3].torch_name, "fc2.weight");
	refused(_metadata, &p, "parameter name 'fc2.weight' is given twice");
	memcpy(names, keep, sizeof(names));
	names[1].offset = 13;
	refused(_metadata, &p, "parameter 'fc1.bias': 3 floats at 13 do not follow the previous one (at 12)");
	memcpy(names, keep, sizeof(names));
	names[2].dims[0] = 3;
	names[2].dims[1] = 2;
	refused(_metadata, &p, "parameter 'onnx::MatMul_7': its offset or shape is not the program's parameter 2's");
	memcpy(names, keep, sizeof(names));
	names[1].flags = WSEP_PARAM_TORCH_TRANSPOSED;
	refused(_metadata, &p, "parameter 'fc1.bias': flags 0x1 (transposed needs rank 2)");
	memcpy(names, keep, sizeof(names));
	names[0].name[0] = '\0';
	refused(_metadata, &p, "parameter name 0: empty");
	memcpy(names, keep, sizeof(names));
	p.num_param_names = 2;
	refused(_metadata, &p, "the parameter names cover 15 of the 23 weights");
	p.param_names = NULL;
	p.num_param_names = 0;
	wsep_sample_release(&p);
}

/* A file whose names section was damaged behind valid CRCs is refused, naming the section. */
TEST(param_names_damaged)
{
	struct wsep_param_name names[4];
	struct wsep_program p, *q;
	uint8_t *sec;
	char err[256];
	void *b;
	size_t len;

	wsep_sample_graph_program(&p);
	name_sample(names);
	p.param_names = names;
	p.num_param_names = 4;
	ASSERT_EQ(0, wsep_write(&p, &b, &len, err, sizeof(err))) TH_LOG("%s", err);
	sec = section(b, WSEP_SEC_PARAM_NAMES, NULL);
	ASSERT_NE(NULL, sec);
	memset(sec + WSEP_PARAM_NAME_RECORD + 72, 'x', 128);	/* record 1's name: no NUL */
	wsep_sample_reseal(b, len);
	EXPECT_EQ(-EINVAL, wsep_read(b, len, &q, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "(param_names): parameter name 1 is not NUL-terminated")) TH_LOG("%s", err);
	free(b);
	p.param_names = NULL;
	p.num_param_names = 0;
	wsep_sample_release(&p);
}

/* A sample's input shape: a graph input without its batch, else input_dim. */
TEST(input_shape)
{
	struct wsep_graph_value v = { .dtype = WSEP_ELEM_F32, .rank = 4, .batch_dim = 0,
				      .dims = { 32, 3, 32, 32 } };
	struct wsep_graph g = { .num_values = 1, .input = 0, .values = &v };
	struct wsep_program p = { .input_dim = 3072, .graph = &g };
	uint32_t shape[4] = { 0 };

	ASSERT_EQ(3, wsep_input_shape(&p, shape, 4));
	EXPECT_EQ(3, shape[0]);
	EXPECT_EQ(32, shape[1]);
	EXPECT_EQ(32, shape[2]);
	/* Too many dimensions for the room given: flat. */
	ASSERT_EQ(1, wsep_input_shape(&p, shape, 2));
	EXPECT_EQ(3072, shape[0]);
	/* Dimensions that do not make input_dim: flat. */
	p.input_dim = 784;
	ASSERT_EQ(1, wsep_input_shape(&p, shape, 4));
	EXPECT_EQ(784, shape[0]);
	/* A layer program: flat. */
	p.graph = NULL;
	ASSERT_EQ(1, wsep_input_shape(&p, shape, 4));
	EXPECT_EQ(784, shape[0]);
}

TEST_HARNESS_MAIN
