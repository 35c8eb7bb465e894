// SPDX-License-Identifier: GPL-2.0-only
/* The sample program for the .wsep tests (see wsep_sample.h). */
#include <stdlib.h>
#include <string.h>

#include "wse/crc32c.h"
#include "wsep_sample.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void set32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void wsep_sample_reseal(uint8_t *buf, size_t len)
{
	uint32_t hsize, n;

	if (len < WSEP_HEADER_SIZE)
		return;
	hsize = le32(buf + 8);
	n = le32(buf + 12);
	if (hsize > len || n > WSEP_MAX_SECTIONS ||
	    (uint64_t)hsize + (uint64_t)n * WSEP_SECTION_ENTRY_SIZE > len)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = buf + hsize + i * WSEP_SECTION_ENTRY_SIZE;
		uint64_t off = le64(e + 16), length = le64(e + 24);

		if (off <= len && length <= len - off)
			set32(e + 12, wse_crc32c(0, buf + off, (size_t)length));
	}
	set32(buf + 56, wse_crc32c(0, buf + hsize, (size_t)n * WSEP_SECTION_ENTRY_SIZE));
	set32(buf + 60, wse_crc32c(0, buf, 60));
}

void wsep_sample_program(struct wsep_program *p, int with_weights)
{
	static const char *const names[] = { "samples", "labels", "losses", "predictions",
					     "weights.0", "weights.1" };

	memset(p, 0, sizeof(*p));
	strcpy(p->wafer.name, "8x4:48K");
	p->wafer.width = 8;
	p->wafer.height = 4;
	p->wafer.sram_per_pe = 48 * 1024;
	p->wafer.clock_hz = 1100000000;
	p->wafer.fp32_flops_per_cycle = 2;
	p->wafer.sram_bytes_per_cycle = 24;
	p->wafer.link_bytes_per_cycle = 4;
	p->wafer.io_bytes_per_s = 150e9;
	strcpy(p->model_name, "sample");
	p->mode = WSEP_MODE_PIPELINED;
	p->batch = 16;
	p->seed = 7;
	p->input_dim = 784;
	p->input_type = WSEP_ELEM_U8;
	p->input_scale = 1.0f / 255.0f;
	p->loss = WSEP_LOSS_SOFTMAX_XENT;
	p->opt.kind = WSEP_OPT_ADAM;
	p->opt.lr = 1e-3;
	p->opt.beta1 = 0.9;
	p->opt.beta2 = 0.999;
	p->opt.eps = 1e-8;
	p->num_layers = 2;
	p->layers = calloc(2, sizeof(*p->layers));
	p->regions = calloc(2, sizeof(*p->regions));
	p->estimates = calloc(2, sizeof(*p->estimates));
	p->layers[0] = (struct wsep_layer){ WSEP_LAYER_DENSE, WSEP_ACT_RELU, 784, 32,
					    400000, 0, 784 * 32 + 32 };
	p->layers[1] = (struct wsep_layer){ WSEP_LAYER_DENSE, WSEP_ACT_NONE, 32, 10, 20000,
					    784 * 32 + 32, 32 * 10 + 10 };
	p->regions[0] = (struct wsep_region){ 0, 0, 6, 4 };
	p->regions[1] = (struct wsep_region){ 6, 0, 1, 4 };
	for (int i = 0; i < 2; i++) {
		p->estimates[i] = (struct wsep_estimate){ 1000.0 * (i + 1), 10, 20, 3, 30,
							  WSEP_LIMIT_COMPUTE };
	}
	p->summary = (struct wsep_summary){ 3.6e7, 2.0e7, 0.5, 28, 420000, 0,
					    WSEP_LIMIT_COMPUTE };
	p->num_streams = 6;
	p->streams = calloc(6, sizeof(*p->streams));
	for (uint32_t i = 0; i < 6; i++) {
		struct wsep_stream *s = &p->streams[i];

		s->id = i;
		strcpy(s->name, names[i]);
		s->dir = i < 2 ? WSEP_DIR_HOST_TO_DEVICE : WSEP_DIR_DEVICE_TO_HOST;
		s->elem = i == 0 ? WSEP_ELEM_U8 : i == 1 || i == 3 ? WSEP_ELEM_I32 : WSEP_ELEM_F32;
		s->unit = i < 4 ? WSEP_UNIT_PER_SAMPLE : WSEP_UNIT_PER_TRANSFER;
		s->layer = i < 4 ? -1 : (int32_t)(i - 4);
		s->elems = i == 0 ? 784 : i < 4 ? 1 : wsep_layer_params(&p->layers[i - 4]);
	}
	if (with_weights) {
		p->num_weights = wsep_total_params(p->layers, 2);
		p->weights = calloc(p->num_weights, sizeof(float));
		wsep_init_weights(p->seed, p->layers, 2, p->weights);
	}
}

/* Value @v: its kind, rank, dims and batch dimension; the rest as given. */
static void value(struct wsep_graph_value *v, enum wsep_value_kind kind, uint32_t dtype,
		  uint32_t rank, const uint64_t *dims, int32_t batch_dim, uint64_t offset,
		  int32_t unit)
{
	*v = (struct wsep_graph_value){ .dtype = dtype, .kind = kind, .rank = rank,
					.batch_dim = batch_dim, .offset = offset, .unit = unit };
	memcpy(v->dims, dims, rank * sizeof(*dims));
}

static void node(struct wsep_graph_node *n, enum wsep_op op, uint32_t unit, uint32_t n_in,
		 const int32_t *in, int32_t out)
{
	*n = (struct wsep_graph_node){ .op = op, .unit = unit, .n_in = n_in, .n_out = 1 };
	for (int k = 0; k < WSEP_GRAPH_MAX_IO; k++) {
		n->in[k] = (uint32_t)k < n_in ? in[k] : -1;
		n->out[k] = k ? -1 : out;
	}
}

void wsep_sample_graph_program(struct wsep_program *p)
{
	enum { W0, B0, W1, B1, X, H, R, Z, LABELS, NV };
	struct wsep_graph *g;

	wsep_sample_program(p, 0);
	/* Two units: gemm + relu on 4 pixels to 3, then gemm to 2 classes. */
	p->input_dim = 4;
	p->batch = 4;
	p->layers[0] = (struct wsep_layer){ WSEP_LAYER_UNIT, WSEP_ACT_NONE, 4, 3, 4096, 0, 15 };
	p->layers[1] = (struct wsep_layer){ WSEP_LAYER_UNIT, WSEP_ACT_NONE, 3, 2, 4096, 15, 8 };
	g = p->graph = calloc(1, sizeof(*g));
	g->num_values = NV;
	g->num_nodes = 3;
	g->values = calloc(NV, sizeof(*g->values));
	g->nodes = calloc(3, sizeof(*g->nodes));
	value(&g->values[W0], WSEP_VAL_PARAM, WSEP_ELEM_F32, 2, (uint64_t[]){ 3, 4 }, -1, 0, 0);
	value(&g->values[B0], WSEP_VAL_PARAM, WSEP_ELEM_F32, 1, (uint64_t[]){ 3 }, -1, 12, 0);
	value(&g->values[W1], WSEP_VAL_PARAM, WSEP_ELEM_F32, 2, (uint64_t[]){ 2, 3 }, -1, 15, 1);
	value(&g->values[B1], WSEP_VAL_PARAM, WSEP_ELEM_F32, 1, (uint64_t[]){ 2 }, -1, 21, 1);
	value(&g->values[X], WSEP_VAL_INPUT, WSEP_ELEM_F32, 2, (uint64_t[]){ 4, 4 }, 0, 0, -1);
	value(&g->values[H], WSEP_VAL_ACT, WSEP_ELEM_F32, 2, (uint64_t[]){ 4, 3 }, 0, 0, -1);
	value(&g->values[R], WSEP_VAL_ACT, WSEP_ELEM_F32, 2, (uint64_t[]){ 4, 3 }, 0, 0, -1);
	value(&g->values[Z], WSEP_VAL_ACT, WSEP_ELEM_F32, 2, (uint64_t[]){ 4, 2 }, 0, 0, -1);
	value(&g->values[LABELS], WSEP_VAL_INPUT, WSEP_ELEM_I64, 1, (uint64_t[]){ 4 }, 0, 0, -1);
	node(&g->nodes[0], WSEP_OP_GEMM, 0, 3, (int32_t[]){ X, W0, B0 }, H);
	node(&g->nodes[1], WSEP_OP_ACT, 0, 1, (int32_t[]){ H }, R);
	node(&g->nodes[2], WSEP_OP_GEMM, 1, 3, (int32_t[]){ R, W1, B1 }, Z);
	g->nodes[0].a = g->nodes[2].a = (struct wsep_graph_attrs){
		.flags = WSEP_ATTR_TRANS_B, .alpha = 1.0f, .beta = 1.0f };
	g->nodes[1].a.act = WSEP_FN_RELU;
	g->input = X;
	g->logits = Z;
	g->labels = LABELS;
	g->rows = 1;
	g->classes = 2;
	p->num_weights = 23;
	p->weights = calloc(23, sizeof(float));
	for (int i = 0; i < 23; i++)
		p->weights[i] = 0.1f * (float)(i % 7) - 0.3f;
	free(p->streams);
	p->streams = calloc(8, sizeof(*p->streams));
	p->num_streams = 0;
	for (int r = WSEP_TRAIN_SAMPLES; r <= WSEP_TRAIN_PREDICTIONS; r++)
		wsep_train_stream(p, r, 0, &p->streams[p->num_streams++]);
	wsep_train_stream(p, WSEP_TRAIN_LOGITS, 0, &p->streams[p->num_streams++]);
	for (uint32_t k = 0; k < 2; k++) {
		if (!wsep_train_stream(p, WSEP_TRAIN_WEIGHTS, k, &p->streams[p->num_streams]))
			p->num_streams++;
	}
	for (uint32_t i = 0; i < p->num_streams; i++)
		p->streams[i].id = i;
}

void wsep_sample_release(struct wsep_program *p)
{
	if (p->graph) {
		free(p->graph->values);
		free(p->graph->nodes);
		free(p->graph->consts);
		free(p->graph);
	}
	free(p->layers);
	free(p->regions);
	free(p->estimates);
	free(p->streams);
	free(p->weights);
	memset(p, 0, sizeof(*p));
}
