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

void wsep_sample_release(struct wsep_program *p)
{
	free(p->layers);
	free(p->regions);
	free(p->estimates);
	free(p->streams);
	free(p->weights);
	memset(p, 0, sizeof(*p));
}
