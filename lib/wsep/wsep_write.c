// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writing a .wsep file: header, section table, then the sections in type
 * order, each 8-byte aligned and with its CRC32C. The program is checked
 * before and the bytes validated after, so the writer cannot produce a
 * file the reader would refuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wse/crc32c.h"
#include "wsep_internal.h"
#include "wsep_le.h"

struct out_section {
	uint32_t type, record_size, count;
	uint64_t offset;
};

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~7ULL;
}

static void put_name(uint8_t *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);	/* the rest stays zero */
}

static void write_wafer(uint8_t *r, const struct wsep_wafer *w)
{
	put_name(r + WAF_NAME, w->name, WSEP_WAFER_NAME_MAX);
	put_le32(r + WAF_WIDTH, w->width);
	put_le32(r + WAF_HEIGHT, w->height);
	put_le64(r + WAF_SRAM_PER_PE, w->sram_per_pe);
	put_le64(r + WAF_CLOCK_HZ, w->clock_hz);
	put_f64(r + WAF_FP32_FLOPS, w->fp32_flops_per_cycle);
	put_f64(r + WAF_SRAM_BW, w->sram_bytes_per_cycle);
	put_f64(r + WAF_LINK_BW, w->link_bytes_per_cycle);
	put_f64(r + WAF_IO_BW, w->io_bytes_per_s);
}

static void write_program(uint8_t *r, const struct wsep_program *p)
{
	put_name(r + PRG_MODEL_NAME, p->model_name, WSEP_NAME_MAX);
	put_le32(r + PRG_MODE, p->mode);
	put_le32(r + PRG_BATCH, p->batch);
	put_le64(r + PRG_SEED, p->seed);
	put_le32(r + PRG_INPUT_DIM, p->input_dim);
	put_le32(r + PRG_INPUT_TYPE, p->input_type);
	put_f32(r + PRG_INPUT_SCALE, p->input_scale);
	put_le32(r + PRG_LOSS, p->loss);
	put_le32(r + PRG_OPT_KIND, p->opt.kind);
	put_f64(r + PRG_LR, p->opt.lr);
	put_f64(r + PRG_MOMENTUM, p->opt.momentum);
	put_f64(r + PRG_BETA1, p->opt.beta1);
	put_f64(r + PRG_BETA2, p->opt.beta2);
	put_f64(r + PRG_EPS, p->opt.eps);
	put_f64(r + PRG_WEIGHT_DECAY, p->opt.weight_decay);
	put_le32(r + PRG_NUM_LAYERS, p->num_layers);
	put_f64(r + PRG_DAMPENING, p->opt.dampening);
	put_le32(r + PRG_NESTEROV, p->opt.nesterov);
	put_le32(r + PRG_SCHEDULE, p->opt.schedule);
	put_le64(r + PRG_WARMUP, p->opt.warmup);
	put_le64(r + PRG_TOTAL_STEPS, p->opt.total_steps);
	put_f64(r + PRG_MIN_LR, p->opt.min_lr);
	put_le32(r + PRG_MICRO_BATCH, p->micro_batch);
	put_le32(r + PRG_EXEC_FLAGS, p->exec_flags);
	put_le32(r + PRG_PRECISION, p->precision);
}

static void write_graph(uint8_t *r, const struct wsep_graph *g)
{
	put_le32(r + GRA_VALUES, g->num_values);
	put_le32(r + GRA_NODES, g->num_nodes);
	put_le32(r + GRA_INPUT, (uint32_t)g->input);
	put_le32(r + GRA_LOGITS, (uint32_t)g->logits);
	put_le32(r + GRA_LABELS, (uint32_t)g->labels);
	put_le32(r + GRA_ROWS, g->rows);
	put_le32(r + GRA_CLASSES, g->classes);
	put_le64(r + GRA_CONST_BYTES, g->const_bytes);
	/* A graph of one input keeps the bytes of format 1.5: zeros. */
	put_le32(r + GRA_MORE_INPUTS, g->n_inputs > 1 ? g->n_inputs - 1 : 0);
	for (uint32_t i = 1; i < g->n_inputs && i < WSEP_GRAPH_MAX_INPUTS; i++)
		put_le32(r + GRA_MORE_INPUT_IDS + 4 * (i - 1), (uint32_t)g->inputs[i]);
}

static void write_value(uint8_t *r, const struct wsep_graph_value *v)
{
	put_le32(r + VAL_DTYPE, v->dtype);
	put_le32(r + VAL_KIND, v->kind);
	put_le32(r + VAL_RANK, v->rank);
	put_le32(r + VAL_BATCH_DIM, (uint32_t)v->batch_dim);
	for (int d = 0; d < WSEP_GRAPH_MAX_RANK; d++)
		put_le64(r + VAL_DIMS + 8 * d, v->dims[d]);
	put_le64(r + VAL_OFFSET, v->offset);
	put_le32(r + VAL_UNIT, (uint32_t)v->unit);
}

static void write_node(uint8_t *r, const struct wsep_graph_node *nd)
{
	const struct wsep_graph_attrs *a = &nd->a;

	put_le32(r + NOD_OP, nd->op);
	put_le32(r + NOD_UNIT, nd->unit);
	put_le32(r + NOD_N_IN, nd->n_in);
	put_le32(r + NOD_N_OUT, nd->n_out);
	for (int k = 0; k < WSEP_GRAPH_MAX_IO; k++) {
		put_le32(r + NOD_IN + 4 * k, (uint32_t)nd->in[k]);
		put_le32(r + NOD_OUT + 4 * k, (uint32_t)nd->out[k]);
	}
	for (int i = 0; i < 2; i++) {
		put_le32(r + NOD_KERNEL + 4 * i, a->kernel[i]);
		put_le32(r + NOD_STRIDE + 4 * i, a->stride[i]);
		put_le32(r + NOD_DILATION + 4 * i, a->dilation[i]);
	}
	for (int i = 0; i < 4; i++)
		put_le32(r + NOD_PADS + 4 * i, a->pads[i]);
	put_le32(r + NOD_FLAGS, a->flags);
	put_f32(r + NOD_ALPHA, a->alpha);
	put_f32(r + NOD_BETA, a->beta);
	put_le32(r + NOD_BINARY, a->binary);
	put_le32(r + NOD_ACT, a->act);
	put_le32(r + NOD_AXIS, a->axis);
	put_f32(r + NOD_EPSILON, a->epsilon);
	put_le32(r + NOD_HEADS, a->heads);
	put_f32(r + NOD_SCALE, a->scale);
	put_f32(r + NOD_RATIO, a->ratio);
	memcpy(r + NOD_PERM, a->perm, WSEP_GRAPH_MAX_RANK);
	put_f32(r + NOD_MOMENTUM, a->momentum);
	put_le32(r + NOD_START, a->start);
}

static void write_records(uint8_t *r, uint32_t type, const struct wsep_program *p)
{
	switch (type) {
	case WSEP_SEC_WAFER:
		write_wafer(r, &p->wafer);
		break;
	case WSEP_SEC_PROGRAM:
		write_program(r, p);
		break;
	case WSEP_SEC_LAYERS:
		for (uint32_t i = 0; i < p->num_layers; i++, r += WSEP_LAYER_RECORD) {
			put_le32(r + LAY_KIND, p->layers[i].kind);
			put_le32(r + LAY_ACT, p->layers[i].act);
			put_le32(r + LAY_IN, p->layers[i].in);
			put_le32(r + LAY_OUT, p->layers[i].out);
			put_le64(r + LAY_SRAM, p->layers[i].sram_bytes);
			put_le64(r + LAY_WEIGHT_OFFSET, p->layers[i].weight_offset);
			put_le64(r + LAY_PARAMS, wsep_layer_params(&p->layers[i]));
		}
		break;
	case WSEP_SEC_REGIONS:
		for (uint32_t i = 0; i < p->num_layers; i++, r += WSEP_REGION_RECORD) {
			put_le32(r + REG_X, p->regions[i].x);
			put_le32(r + REG_Y, p->regions[i].y);
			put_le32(r + REG_W, p->regions[i].w);
			put_le32(r + REG_H, p->regions[i].h);
		}
		break;
	case WSEP_SEC_STREAMS:
		for (uint32_t i = 0; i < p->num_streams; i++, r += WSEP_STREAM_RECORD) {
			const struct wsep_stream *s = &p->streams[i];

			put_le32(r + STR_ID, s->id);
			put_le32(r + STR_DIR, s->dir);
			put_le32(r + STR_ELEM, s->elem);
			put_le32(r + STR_LAYER, (uint32_t)s->layer);
			put_le64(r + STR_ELEMS, s->elems);
			put_le32(r + STR_UNIT, s->unit);
			put_name(r + STR_NAME, s->name, WSEP_STREAM_NAME_MAX);
		}
		break;
	case WSEP_SEC_ESTIMATES:
		for (uint32_t i = 0; i < p->num_layers; i++, r += WSEP_ESTIMATE_RECORD) {
			const struct wsep_estimate *e = &p->estimates[i];

			put_f64(r + EST_FLOPS, e->flops_per_sample);
			put_f64(r + EST_FWD, e->fwd_cycles);
			put_f64(r + EST_BWD, e->bwd_cycles);
			put_f64(r + EST_IO, e->io_cycles);
			put_f64(r + EST_STAGE, e->stage_cycles);
			put_le32(r + EST_LIMIT, e->limit);
		}
		break;
	case WSEP_SEC_SUMMARY:
		put_f64(r + SUM_SAMPLES_PER_S, p->summary.samples_per_s);
		put_f64(r + SUM_EVEN_SPLIT, p->summary.even_split_samples_per_s);
		put_f64(r + SUM_UTILIZATION, p->summary.utilization);
		put_le64(r + SUM_ACTIVE_PES, p->summary.active_pes);
		put_le64(r + SUM_SRAM, p->summary.sram_bytes);
		put_le32(r + SUM_BOTTLENECK, p->summary.bottleneck_layer);
		put_le32(r + SUM_LIMIT, p->summary.limit);
		break;
	case WSEP_SEC_WEIGHTS:
		for (uint64_t i = 0; i < p->num_weights; i++)
			put_f32(r + 4 * i, p->weights[i]);
		break;
	case WSEP_SEC_GRAPH:
		write_graph(r, p->graph);
		break;
	case WSEP_SEC_VALUES:
		for (uint32_t i = 0; i < p->graph->num_values; i++, r += WSEP_VALUE_RECORD)
			write_value(r, &p->graph->values[i]);
		break;
	case WSEP_SEC_NODES:
		for (uint32_t i = 0; i < p->graph->num_nodes; i++, r += WSEP_NODE_RECORD)
			write_node(r, &p->graph->nodes[i]);
		break;
	case WSEP_SEC_CONSTANTS:
		memcpy(r, p->graph->consts, p->graph->const_bytes);
		break;
	case WSEP_SEC_PARAM_NAMES:
		wsep_param_names_encode(p->param_names, p->num_param_names, r);
		break;
	}
}

int wsep_write(const struct wsep_program *p, void **bufp, size_t *lenp, char *err,
	       size_t errlen)
{
	const struct wsep_graph *g = p->graph;
	struct out_section s[13] = {
		{ WSEP_SEC_WAFER, WSEP_WAFER_RECORD, 1, 0 },
		{ WSEP_SEC_PROGRAM, WSEP_PROGRAM_RECORD, 1, 0 },
		{ WSEP_SEC_LAYERS, WSEP_LAYER_RECORD, p->num_layers, 0 },
		{ WSEP_SEC_REGIONS, WSEP_REGION_RECORD, p->num_layers, 0 },
		{ WSEP_SEC_STREAMS, WSEP_STREAM_RECORD, p->num_streams, 0 },
		{ WSEP_SEC_ESTIMATES, WSEP_ESTIMATE_RECORD, p->num_layers, 0 },
		{ WSEP_SEC_SUMMARY, WSEP_SUMMARY_RECORD, 1, 0 },
	};
	uint32_t n = 7;
	uint64_t size;
	uint8_t *b;

	*bufp = NULL;
	*lenp = 0;
	if (!p->layers || !p->regions || !p->estimates || !p->streams)
		return wsep_fail(err, errlen, "program has no layers, regions, estimates or streams");
	if ((p->weights && p->num_weights > UINT32_MAX) ||
	    (g && g->const_bytes > UINT32_MAX))
		return wsep_fail(err, errlen,
				 "%llu weights (or constant bytes) exceed what one section holds (2^32 - 1 records)",
				 (unsigned long long)p->num_weights);
	if (wsep_check_program(p, err, errlen))
		return -EINVAL;
	if (p->weights)
		s[n++] = (struct out_section){ WSEP_SEC_WEIGHTS, 4, (uint32_t)p->num_weights, 0 };
	if (g) {
		s[n++] = (struct out_section){ WSEP_SEC_GRAPH, WSEP_GRAPH_RECORD, 1, 0 };
		s[n++] = (struct out_section){ WSEP_SEC_VALUES, WSEP_VALUE_RECORD, g->num_values, 0 };
		s[n++] = (struct out_section){ WSEP_SEC_NODES, WSEP_NODE_RECORD, g->num_nodes, 0 };
		if (g->const_bytes)
			s[n++] = (struct out_section){ WSEP_SEC_CONSTANTS, 1,
						       (uint32_t)g->const_bytes, 0 };
	}
	if (p->num_param_names)
		s[n++] = (struct out_section){ WSEP_SEC_PARAM_NAMES, WSEP_PARAM_NAME_RECORD,
					       p->num_param_names, 0 };

	size = WSEP_HEADER_SIZE + (uint64_t)n * WSEP_SECTION_ENTRY_SIZE;
	for (uint32_t i = 0; i < n; i++) {
		size = align8(size);
		s[i].offset = size;
		size += (uint64_t)s[i].record_size * s[i].count;
	}
	size = align8(size);
	if (size > SIZE_MAX)
		return wsep_fail(err, errlen, "program of %llu bytes is too large",
				 (unsigned long long)size);
	b = calloc(1, (size_t)size);
	if (!b) {
		wsep_fail(err, errlen, "out of memory for %llu bytes", (unsigned long long)size);
		return -ENOMEM;
	}

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = b + WSEP_HEADER_SIZE + (size_t)i * WSEP_SECTION_ENTRY_SIZE;
		uint64_t length = (uint64_t)s[i].record_size * s[i].count;

		write_records(b + s[i].offset, s[i].type, p);
		put_le32(e + SEC_TYPE, s[i].type);
		put_le32(e + SEC_RECORD_SIZE, s[i].record_size);
		put_le32(e + SEC_COUNT, s[i].count);
		put_le32(e + SEC_CRC, wse_crc32c(0, b + s[i].offset, (size_t)length));
		put_le64(e + SEC_OFFSET, s[i].offset);
		put_le64(e + SEC_LENGTH, length);
	}
	put_le32(b + HDR_MAGIC, WSEP_MAGIC);
	put_le16(b + HDR_VERSION_MAJOR, WSEP_VERSION_MAJOR);
	put_le16(b + HDR_VERSION_MINOR, WSEP_VERSION_MINOR);
	put_le32(b + HDR_HEADER_SIZE, WSEP_HEADER_SIZE);
	put_le32(b + HDR_SECTION_COUNT, n);
	put_le64(b + HDR_FILE_SIZE, size);
	put_le32(b + HDR_FEATURES, wsep_features(p));
	put_le32(b + HDR_TABLE_CRC,
		 wse_crc32c(0, b + WSEP_HEADER_SIZE, (size_t)n * WSEP_SECTION_ENTRY_SIZE));
	put_le32(b + HDR_HEADER_CRC, wse_crc32c(0, b, HDR_HEADER_CRC));

	if (wsep_validate(b, (size_t)size, err, errlen)) {
		free(b);
		return -EINVAL;
	}
	*bufp = b;
	*lenp = (size_t)size;
	return 0;
}
