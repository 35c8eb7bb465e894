// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading a .wsep file: header, section table and sections are checked
 * before anything they describe is touched, every length against what is
 * really there, then the records are decoded into a program that owns
 * its memory, and the program's fields are checked (wsep_check.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/crc32c.h"
#include "wsep_internal.h"
#include "wsep_le.h"

struct section {
	uint32_t type, record_size, count, crc;
	uint64_t offset, length;
	uint32_t index;		/* position in the table, for messages */
};

struct known_section {
	uint32_t type;
	uint32_t min_record;
	uint32_t exact_count;	/* 0: count is checked elsewhere */
	int required;
};

/* Minimum record sizes are format 1.0's: a 1.0 file reads as it did. */
static const struct known_section known[] = {
	{ WSEP_SEC_WAFER, WSEP_WAFER_RECORD, 1, 1 },
	{ WSEP_SEC_PROGRAM, WSEP_PROGRAM_RECORD_1_0, 1, 1 },
	{ WSEP_SEC_LAYERS, WSEP_LAYER_RECORD_1_0, 0, 1 },
	{ WSEP_SEC_REGIONS, WSEP_REGION_RECORD, 0, 1 },
	{ WSEP_SEC_STREAMS, WSEP_STREAM_RECORD, 0, 1 },
	{ WSEP_SEC_ESTIMATES, WSEP_ESTIMATE_RECORD, 0, 1 },
	{ WSEP_SEC_SUMMARY, WSEP_SUMMARY_RECORD, 1, 1 },
	{ WSEP_SEC_WEIGHTS, 4, 0, 0 },
	/* Required in graph programs (checked against the header's features). */
	{ WSEP_SEC_GRAPH, WSEP_GRAPH_RECORD, 1, 0 },
	{ WSEP_SEC_VALUES, WSEP_VALUE_RECORD, 0, 0 },
	{ WSEP_SEC_NODES, WSEP_NODE_RECORD, 0, 0 },
	{ WSEP_SEC_CONSTANTS, 1, 0, 0 },
	/* Optional (format 1.2): older readers skip it. */
	{ WSEP_SEC_PARAM_NAMES, WSEP_PARAM_NAME_RECORD, 0, 0 },
};
#define NUM_KNOWN (sizeof(known) / sizeof(known[0]))

static const struct known_section *find_known(uint32_t type)
{
	for (size_t i = 0; i < NUM_KNOWN; i++)
		if (known[i].type == type)
			return &known[i];
	return NULL;
}

#define SECFAIL(s, fmt, ...) \
	wsep_fail(err, errlen, "section %u (%s): " fmt, (s)->index, \
		  wsep_section_name((s)->type), __VA_ARGS__)

/* The first feature of @bits, as "graph execution (feature 0x1)". */
static int refuse_features(uint32_t bits, uint32_t supported, char *err, size_t errlen)
{
	uint32_t first = bits & -bits;

	return wsep_fail(err, errlen,
			 "this program needs %s (feature 0x%x%s), which this reader does not support (it supports 0x%x): update wsefwd and libwsep",
			 wsep_feature_name(first), first, bits != first ? ", and more" : "",
			 supported);
}

static int check_header(const uint8_t *b, size_t len, uint32_t supported, uint32_t *nsec,
			uint32_t *hsize, char *err, size_t errlen)
{
	uint32_t magic, count, table_crc, features;
	uint64_t table_end;

	if (len < WSEP_HEADER_SIZE)
		return wsep_fail(err, errlen, "file is %zu bytes, shorter than the %u-byte header",
				 len, WSEP_HEADER_SIZE);
	magic = get_le32(b + HDR_MAGIC);
	if (magic != WSEP_MAGIC)
		return wsep_fail(err, errlen, "bad magic 0x%08x: not a .wsep program", magic);
	if (get_le32(b + HDR_HEADER_CRC) != wse_crc32c(0, b, HDR_HEADER_CRC))
		return wsep_fail(err, errlen, "header checksum mismatch: the file is corrupted");
	if (get_le16(b + HDR_VERSION_MAJOR) != WSEP_VERSION_MAJOR)
		return wsep_fail(err, errlen, "format version %u.%u, this reader knows %u.x",
				 get_le16(b + HDR_VERSION_MAJOR), get_le16(b + HDR_VERSION_MINOR),
				 WSEP_VERSION_MAJOR);
	*hsize = get_le32(b + HDR_HEADER_SIZE);
	if (*hsize < WSEP_HEADER_SIZE || *hsize % 8 || *hsize > len)
		return wsep_fail(err, errlen, "header size %u invalid for a %zu-byte file", *hsize,
				 len);
	if (get_le64(b + HDR_FILE_SIZE) != len)
		return wsep_fail(err, errlen, "header says %llu bytes, file is %zu (truncated?)",
				 (unsigned long long)get_le64(b + HDR_FILE_SIZE), len);
	features = get_le32(b + HDR_FEATURES);
	if (features & ~supported)
		return refuse_features(features & ~supported, supported, err, errlen);
	for (size_t i = HDR_RESERVED; i < HDR_TABLE_CRC; i++)
		if (b[i])
			return wsep_fail(err, errlen, "header byte %zu is reserved and must be 0", i);
	count = get_le32(b + HDR_SECTION_COUNT);
	if (count < 1 || count > WSEP_MAX_SECTIONS)
		return wsep_fail(err, errlen, "%u sections, expected 1..%u", count,
				 WSEP_MAX_SECTIONS);
	table_end = (uint64_t)*hsize + (uint64_t)count * WSEP_SECTION_ENTRY_SIZE;
	if (table_end > len)
		return wsep_fail(err, errlen,
				 "section table (%u entries) ends at %llu, beyond file size %zu",
				 count, (unsigned long long)table_end, len);
	table_crc = wse_crc32c(0, b + *hsize, (size_t)count * WSEP_SECTION_ENTRY_SIZE);
	if (get_le32(b + HDR_TABLE_CRC) != table_crc)
		return wsep_fail(err, errlen, "section table checksum mismatch: the file is corrupted");
	*nsec = count;
	return 0;
}

/* Bytes outside the header, the table and every section (alignment
 * padding) must be zero, so that no byte of a file escapes a check.
 */
static int check_gaps(const uint8_t *b, size_t len, uint64_t table_end, const struct section *s,
		      uint32_t n, char *err, size_t errlen)
{
	for (uint64_t pos = table_end; pos < len; pos++) {
		uint64_t next = len;
		int inside = 0;

		for (uint32_t i = 0; i < n; i++) {
			if (pos >= s[i].offset && pos < s[i].offset + s[i].length) {
				pos = s[i].offset + s[i].length - 1;
				inside = 1;
				break;
			}
			if (s[i].offset > pos && s[i].offset < next)
				next = s[i].offset;
		}
		if (inside)
			continue;
		for (; pos < next; pos++)
			if (b[pos])
				return wsep_fail(err, errlen,
						 "byte %llu lies outside every section and must be 0",
						 (unsigned long long)pos);
		pos--;
	}
	return 0;
}

static int check_sections(const uint8_t *b, size_t len, uint32_t hsize, struct section *s,
			  uint32_t n, char *err, size_t errlen)
{
	uint64_t table_end = hsize + (uint64_t)n * WSEP_SECTION_ENTRY_SIZE;

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = b + hsize + (size_t)i * WSEP_SECTION_ENTRY_SIZE;
		const struct known_section *k;

		s[i].index = i;
		s[i].type = get_le32(e + SEC_TYPE);
		s[i].record_size = get_le32(e + SEC_RECORD_SIZE);
		s[i].count = get_le32(e + SEC_COUNT);
		s[i].crc = get_le32(e + SEC_CRC);
		s[i].offset = get_le64(e + SEC_OFFSET);
		s[i].length = get_le64(e + SEC_LENGTH);

		k = find_known(s[i].type);
		if (!k && !(s[i].type & WSEP_SEC_OPTIONAL_BIT))
			return SECFAIL(&s[i], "type %u is not known and not optional", s[i].type);
		if (s[i].offset < table_end)
			return SECFAIL(&s[i], "offset %llu is inside the header or section table",
				       (unsigned long long)s[i].offset);
		if (s[i].offset % 8)
			return SECFAIL(&s[i], "offset %llu is not 8-byte aligned",
				       (unsigned long long)s[i].offset);
		if (s[i].offset > len)
			return SECFAIL(&s[i], "offset %llu exceeds file size %zu",
				       (unsigned long long)s[i].offset, len);
		if (s[i].length > len - s[i].offset)
			return SECFAIL(&s[i], "length %llu exceeds file size %zu",
				       (unsigned long long)s[i].length, len);
		if (s[i].record_size < 1)
			return SECFAIL(&s[i], "record size %u", s[i].record_size);
		if ((uint64_t)s[i].record_size * s[i].count != s[i].length)
			return SECFAIL(&s[i], "%u records of %u bytes do not make length %llu",
				       s[i].count, s[i].record_size,
				       (unsigned long long)s[i].length);
		if (wse_crc32c(0, b + s[i].offset, (size_t)s[i].length) != s[i].crc)
			return SECFAIL(&s[i], "checksum mismatch (0x%08x): the section is corrupted",
				       s[i].crc);
		if (k && s[i].record_size < k->min_record)
			return SECFAIL(&s[i], "record size %u is smaller than %u", s[i].record_size,
				       k->min_record);
		if (k && s[i].type == WSEP_SEC_WEIGHTS && s[i].record_size != 4)
			return SECFAIL(&s[i], "record size %u, weights are 4-byte floats",
				       s[i].record_size);
		if (k && k->exact_count && s[i].count != k->exact_count)
			return SECFAIL(&s[i], "%u records, expected %u", s[i].count, k->exact_count);
		for (uint32_t j = 0; j < i; j++) {
			if (s[j].type == s[i].type)
				return SECFAIL(&s[i], "type %u appears twice (also section %u)",
					       s[i].type, j);
			if (s[i].offset < s[j].offset + s[j].length &&
			    s[j].offset < s[i].offset + s[i].length)
				return SECFAIL(&s[i], "overlaps section %u", j);
		}
	}
	if (check_gaps(b, len, table_end, s, n, err, errlen))
		return -EINVAL;
	for (size_t k = 0; k < NUM_KNOWN; k++) {
		uint32_t i;

		for (i = 0; i < n && s[i].type != known[k].type; i++)
			;
		if (i == n && known[k].required)
			return wsep_fail(err, errlen, "required section '%s' is missing",
					 wsep_section_name(known[k].type));
	}
	for (uint32_t i = 0; i < n; i++)
		if (s[i].type == WSEP_SEC_CONSTANTS && s[i].count == 0)
			return SECFAIL(&s[i], "%s", "is empty (a program without constants has none)");
	return 0;
}

static const struct section *find(const struct section *s, uint32_t n, uint32_t type)
{
	for (uint32_t i = 0; i < n; i++)
		if (s[i].type == type)
			return &s[i];
	return NULL;
}

/* Copies a fixed-size name field; it must hold a NUL. */
static int get_name(char *dst, const uint8_t *src, size_t size)
{
	if (!memchr(src, 0, size))
		return -EINVAL;
	memcpy(dst, src, size);
	return 0;
}

static void *alloc_array(uint64_t count, size_t size)
{
	return calloc(count ? (size_t)count : 1, size);
}

static int decode_fixed(const uint8_t *b, const struct section *s, uint32_t n,
			struct wsep_program *p, char *err, size_t errlen)
{
	const struct section *sec = find(s, n, WSEP_SEC_WAFER);
	const uint8_t *r = b + sec->offset;

	if (get_name(p->wafer.name, r + WAF_NAME, WSEP_WAFER_NAME_MAX))
		return SECFAIL(sec, "%s", "wafer name is not NUL-terminated");
	p->wafer.width = get_le32(r + WAF_WIDTH);
	p->wafer.height = get_le32(r + WAF_HEIGHT);
	p->wafer.sram_per_pe = get_le64(r + WAF_SRAM_PER_PE);
	p->wafer.clock_hz = get_le64(r + WAF_CLOCK_HZ);
	p->wafer.fp32_flops_per_cycle = get_f64(r + WAF_FP32_FLOPS);
	p->wafer.sram_bytes_per_cycle = get_f64(r + WAF_SRAM_BW);
	p->wafer.link_bytes_per_cycle = get_f64(r + WAF_LINK_BW);
	p->wafer.io_bytes_per_s = get_f64(r + WAF_IO_BW);

	sec = find(s, n, WSEP_SEC_PROGRAM);
	r = b + sec->offset;
	if (get_name(p->model_name, r + PRG_MODEL_NAME, WSEP_NAME_MAX))
		return SECFAIL(sec, "%s", "model name is not NUL-terminated");
	p->mode = get_le32(r + PRG_MODE);
	p->batch = get_le32(r + PRG_BATCH);
	p->seed = get_le64(r + PRG_SEED);
	p->input_dim = get_le32(r + PRG_INPUT_DIM);
	p->input_type = get_le32(r + PRG_INPUT_TYPE);
	p->input_scale = get_f32(r + PRG_INPUT_SCALE);
	p->loss = get_le32(r + PRG_LOSS);
	p->opt.kind = get_le32(r + PRG_OPT_KIND);
	p->opt.lr = get_f64(r + PRG_LR);
	p->opt.momentum = get_f64(r + PRG_MOMENTUM);
	p->opt.beta1 = get_f64(r + PRG_BETA1);
	p->opt.beta2 = get_f64(r + PRG_BETA2);
	p->opt.eps = get_f64(r + PRG_EPS);
	p->opt.weight_decay = get_f64(r + PRG_WEIGHT_DECAY);
	p->num_layers = get_le32(r + PRG_NUM_LAYERS);
	if (sec->record_size >= WSEP_PROGRAM_RECORD_1_1) {
		p->opt.dampening = get_f64(r + PRG_DAMPENING);
		p->opt.nesterov = get_le32(r + PRG_NESTEROV);
		p->opt.schedule = get_le32(r + PRG_SCHEDULE);
		p->opt.warmup = get_le64(r + PRG_WARMUP);
		p->opt.total_steps = get_le64(r + PRG_TOTAL_STEPS);
		p->opt.min_lr = get_f64(r + PRG_MIN_LR);
	}
	if (sec->record_size >= WSEP_PROGRAM_RECORD_1_3) {
		p->micro_batch = get_le32(r + PRG_MICRO_BATCH);
		p->exec_flags = get_le32(r + PRG_EXEC_FLAGS);
	}
	if (sec->record_size >= WSEP_PROGRAM_RECORD) {
		p->precision = get_le32(r + PRG_PRECISION);
		if (get_le32(r + PRG_RESERVED_1_5))
			return SECFAIL(sec, "%s", "reserved bytes 180..183 are not 0");
	}
	if (p->num_layers < 1 || p->num_layers > WSEP_MAX_LAYERS)
		return SECFAIL(sec, "%u layers, expected 1..%u", p->num_layers, WSEP_MAX_LAYERS);

	sec = find(s, n, WSEP_SEC_SUMMARY);
	r = b + sec->offset;
	p->summary.samples_per_s = get_f64(r + SUM_SAMPLES_PER_S);
	p->summary.even_split_samples_per_s = get_f64(r + SUM_EVEN_SPLIT);
	p->summary.utilization = get_f64(r + SUM_UTILIZATION);
	p->summary.active_pes = get_le64(r + SUM_ACTIVE_PES);
	p->summary.sram_bytes = get_le64(r + SUM_SRAM);
	p->summary.bottleneck_layer = get_le32(r + SUM_BOTTLENECK);
	p->summary.limit = get_le32(r + SUM_LIMIT);
	return 0;
}

/*
 * @borrow: the weights may stay where they are in @b (a validation that only
 * reads them: no second copy of a program's largest section).
 */
static int decode_arrays(const uint8_t *b, const struct section *s, uint32_t n,
			 struct wsep_program *p, bool borrow, char *err, size_t errlen)
{
	static const uint32_t per_layer[] = { WSEP_SEC_LAYERS, WSEP_SEC_REGIONS, WSEP_SEC_ESTIMATES };
	const struct section *sec;

	for (size_t k = 0; k < 3; k++) {
		sec = find(s, n, per_layer[k]);
		if (sec->count != p->num_layers)
			return SECFAIL(sec, "%u records for %u layers", sec->count, p->num_layers);
	}
	p->layers = alloc_array(p->num_layers, sizeof(*p->layers));
	p->regions = alloc_array(p->num_layers, sizeof(*p->regions));
	p->estimates = alloc_array(p->num_layers, sizeof(*p->estimates));
	if (!p->layers || !p->regions || !p->estimates)
		return wsep_fail(err, errlen, "out of memory");

	sec = find(s, n, WSEP_SEC_LAYERS);
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const uint8_t *r = b + sec->offset + (uint64_t)i * sec->record_size;

		p->layers[i].kind = get_le32(r + LAY_KIND);
		p->layers[i].act = get_le32(r + LAY_ACT);
		p->layers[i].in = get_le32(r + LAY_IN);
		p->layers[i].out = get_le32(r + LAY_OUT);
		p->layers[i].sram_bytes = get_le64(r + LAY_SRAM);
		p->layers[i].weight_offset = get_le64(r + LAY_WEIGHT_OFFSET);
		/* Format 1.0 has dense layers only, whose count follows from in and out. */
		if (sec->record_size >= WSEP_LAYER_RECORD)
			p->layers[i].params = get_le64(r + LAY_PARAMS);
		else if (p->layers[i].kind == WSEP_LAYER_DENSE)
			p->layers[i].params = (uint64_t)p->layers[i].in * p->layers[i].out +
					      p->layers[i].out;
	}
	sec = find(s, n, WSEP_SEC_REGIONS);
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const uint8_t *r = b + sec->offset + (uint64_t)i * sec->record_size;

		p->regions[i].x = get_le32(r + REG_X);
		p->regions[i].y = get_le32(r + REG_Y);
		p->regions[i].w = get_le32(r + REG_W);
		p->regions[i].h = get_le32(r + REG_H);
	}
	sec = find(s, n, WSEP_SEC_ESTIMATES);
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const uint8_t *r = b + sec->offset + (uint64_t)i * sec->record_size;

		p->estimates[i].flops_per_sample = get_f64(r + EST_FLOPS);
		p->estimates[i].fwd_cycles = get_f64(r + EST_FWD);
		p->estimates[i].bwd_cycles = get_f64(r + EST_BWD);
		p->estimates[i].io_cycles = get_f64(r + EST_IO);
		p->estimates[i].stage_cycles = get_f64(r + EST_STAGE);
		p->estimates[i].limit = get_le32(r + EST_LIMIT);
	}

	sec = find(s, n, WSEP_SEC_STREAMS);
	if (sec->count < 1 || sec->count > WSEP_MAX_STREAMS)
		return SECFAIL(sec, "%u streams, expected 1..%u", sec->count, WSEP_MAX_STREAMS);
	p->num_streams = sec->count;
	p->streams = alloc_array(p->num_streams, sizeof(*p->streams));
	if (!p->streams)
		return wsep_fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < p->num_streams; i++) {
		const uint8_t *r = b + sec->offset + (uint64_t)i * sec->record_size;

		p->streams[i].id = get_le32(r + STR_ID);
		p->streams[i].dir = get_le32(r + STR_DIR);
		p->streams[i].elem = get_le32(r + STR_ELEM);
		p->streams[i].layer = (int32_t)get_le32(r + STR_LAYER);
		p->streams[i].elems = get_le64(r + STR_ELEMS);
		p->streams[i].unit = get_le32(r + STR_UNIT);
		if (get_name(p->streams[i].name, r + STR_NAME, WSEP_STREAM_NAME_MAX))
			return SECFAIL(sec, "stream %u name is not NUL-terminated", i);
	}

	sec = find(s, n, WSEP_SEC_WEIGHTS);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (sec && borrow && (uintptr_t)(b + sec->offset) % _Alignof(float) == 0) {
		p->num_weights = sec->count;
		p->weights = (float *)(uintptr_t)(b + sec->offset);
		return 0;
	}
#endif
	if (sec) {
		p->num_weights = sec->count;
		p->weights = alloc_array(p->num_weights, sizeof(float));
		if (!p->weights)
			return wsep_fail(err, errlen, "out of memory for %u weights", sec->count);
		for (uint64_t i = 0; i < p->num_weights; i++)
			p->weights[i] = get_f32(b + sec->offset + 4 * i);
	}
	return 0;
}

/* Bytes [@from, @to) of record @r must be zero (reserved). */
static int zeros(const uint8_t *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (r[i])
			return -EINVAL;
	return 0;
}

static void decode_attrs(const uint8_t *r, struct wsep_graph_attrs *a)
{
	for (int i = 0; i < 2; i++) {
		a->kernel[i] = get_le32(r + NOD_KERNEL + 4 * i);
		a->stride[i] = get_le32(r + NOD_STRIDE + 4 * i);
		a->dilation[i] = get_le32(r + NOD_DILATION + 4 * i);
	}
	for (int i = 0; i < 4; i++)
		a->pads[i] = get_le32(r + NOD_PADS + 4 * i);
	a->flags = get_le32(r + NOD_FLAGS);
	a->alpha = get_f32(r + NOD_ALPHA);
	a->beta = get_f32(r + NOD_BETA);
	a->binary = get_le32(r + NOD_BINARY);
	a->act = get_le32(r + NOD_ACT);
	a->axis = get_le32(r + NOD_AXIS);
	a->epsilon = get_f32(r + NOD_EPSILON);
	a->heads = get_le32(r + NOD_HEADS);
	a->scale = get_f32(r + NOD_SCALE);
	a->ratio = get_f32(r + NOD_RATIO);
	memcpy(a->perm, r + NOD_PERM, WSEP_GRAPH_MAX_RANK);
	a->momentum = get_f32(r + NOD_MOMENTUM);
	a->start = get_le32(r + NOD_START);
}

/* The graph sections of a graph program; their contents are checked by wsep_check_graph(). */
static int decode_graph(const uint8_t *b, const struct section *s, uint32_t n,
			struct wsep_program *p, char *err, size_t errlen)
{
	const struct section *sec = find(s, n, WSEP_SEC_GRAPH);
	const struct section *vs = find(s, n, WSEP_SEC_VALUES), *ns = find(s, n, WSEP_SEC_NODES);
	const struct section *cs = find(s, n, WSEP_SEC_CONSTANTS);
	struct wsep_graph *g;
	const uint8_t *r;
	uint32_t more;

	if (!(p->features & WSEP_FEATURE_GRAPH)) {
		for (uint32_t i = 0; i < n; i++)
			if (s[i].type >= WSEP_SEC_GRAPH && s[i].type <= WSEP_SEC_CONSTANTS)
				return SECFAIL(&s[i], "%s",
					       "belongs to a graph program, but the header does not announce one (feature 0x1)");
		return 0;
	}
	if (!sec || !vs || !ns)
		return wsep_fail(err, errlen,
				 "the header announces a graph program (feature 0x1), but section '%s' is missing",
				 wsep_section_name(!sec ? WSEP_SEC_GRAPH : !vs ? WSEP_SEC_VALUES :
							  WSEP_SEC_NODES));
	g = p->graph = calloc(1, sizeof(*g));
	if (!g)
		return wsep_fail(err, errlen, "out of memory");
	r = b + sec->offset;
	g->num_values = get_le32(r + GRA_VALUES);
	g->num_nodes = get_le32(r + GRA_NODES);
	g->input = (int32_t)get_le32(r + GRA_INPUT);
	g->logits = (int32_t)get_le32(r + GRA_LOGITS);
	g->labels = (int32_t)get_le32(r + GRA_LABELS);
	g->rows = get_le32(r + GRA_ROWS);
	g->classes = get_le32(r + GRA_CLASSES);
	g->const_bytes = get_le64(r + GRA_CONST_BYTES);
	if (zeros(r, GRA_CLASSES + 4, GRA_CONST_BYTES) || zeros(r, GRA_END, WSEP_GRAPH_RECORD))
		return SECFAIL(sec, "%s", "reserved bytes are not 0");
	more = get_le32(r + GRA_MORE_INPUTS);
	if (more >= WSEP_GRAPH_MAX_INPUTS)
		return SECFAIL(sec, "feeds %u inputs; a graph takes 1..%u", more + 1,
			       WSEP_GRAPH_MAX_INPUTS);
	g->n_inputs = more + 1;
	g->inputs[0] = g->input;
	for (uint32_t i = 1; i < WSEP_GRAPH_MAX_INPUTS; i++) {
		uint32_t id = get_le32(r + GRA_MORE_INPUT_IDS + 4 * (i - 1));

		if (i > more && id)
			return SECFAIL(sec, "input slot %u is %u beyond its %u inputs: must be 0", i,
				       id, more + 1);
		g->inputs[i] = i <= more ? (int32_t)id : -1;
	}
	if (vs->count != g->num_values || ns->count != g->num_nodes)
		return SECFAIL(sec, "says %u values and %u nodes; the sections hold %u and %u",
			       g->num_values, g->num_nodes, vs->count, ns->count);
	if (g->const_bytes != (cs ? cs->count : 0) || (cs && cs->record_size != 1))
		return SECFAIL(sec, "says %llu bytes of constants; the constants section holds %u",
			       (unsigned long long)g->const_bytes, cs ? cs->count : 0);
	if (!g->num_values || g->num_values > WSEP_GRAPH_MAX_VALUES || !g->num_nodes ||
	    g->num_nodes > WSEP_GRAPH_MAX_NODES)
		return SECFAIL(sec, "%u values and %u nodes, expected 1..%u of each", g->num_values,
			       g->num_nodes, WSEP_GRAPH_MAX_VALUES);
	g->values = alloc_array(g->num_values, sizeof(*g->values));
	g->nodes = alloc_array(g->num_nodes, sizeof(*g->nodes));
	g->consts = alloc_array(g->const_bytes, 1);
	if (!g->values || !g->nodes || !g->consts)
		return wsep_fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < g->num_values; i++) {
		struct wsep_graph_value *v = &g->values[i];

		r = b + vs->offset + (uint64_t)i * vs->record_size;
		v->dtype = get_le32(r + VAL_DTYPE);
		v->kind = get_le32(r + VAL_KIND);
		v->rank = get_le32(r + VAL_RANK);
		v->batch_dim = (int32_t)get_le32(r + VAL_BATCH_DIM);
		for (int d = 0; d < WSEP_GRAPH_MAX_RANK; d++)
			v->dims[d] = get_le64(r + VAL_DIMS + 8 * d);
		v->offset = get_le64(r + VAL_OFFSET);
		v->unit = (int32_t)get_le32(r + VAL_UNIT);
		if (zeros(r, VAL_END, WSEP_VALUE_RECORD))
			return SECFAIL(vs, "value %u: reserved bytes are not 0", i);
	}
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		struct wsep_graph_node *nd = &g->nodes[i];

		r = b + ns->offset + (uint64_t)i * ns->record_size;
		nd->op = get_le32(r + NOD_OP);
		nd->unit = get_le32(r + NOD_UNIT);
		nd->n_in = get_le32(r + NOD_N_IN);
		nd->n_out = get_le32(r + NOD_N_OUT);
		for (int k = 0; k < WSEP_GRAPH_MAX_IO; k++) {
			nd->in[k] = (int32_t)get_le32(r + NOD_IN + 4 * k);
			nd->out[k] = (int32_t)get_le32(r + NOD_OUT + 4 * k);
		}
		decode_attrs(r, &nd->a);
		if (zeros(r, NOD_PERM + WSEP_GRAPH_MAX_RANK, NOD_MOMENTUM))
			return SECFAIL(ns, "node %u: reserved bytes are not 0", i);
	}
	if (cs)
		memcpy(g->consts, b + cs->offset, g->const_bytes);
	return 0;
}

static int decode_names(const uint8_t *b, const struct section *s, uint32_t n,
			struct wsep_program *p, char *err, size_t errlen)
{
	const struct section *sec = find(s, n, WSEP_SEC_PARAM_NAMES);
	char why[256];

	if (!sec)
		return 0;
	if (wsep_param_names_decode(b + sec->offset, sec->record_size, sec->count,
				    &p->param_names, why, sizeof(why)))
		return SECFAIL(sec, "%s", why);
	p->num_param_names = sec->count;
	return 0;
}

static int decode(const void *buf, size_t len, uint32_t supported, struct wsep_program *p,
		  bool borrow, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	struct section s[WSEP_MAX_SECTIONS];
	uint32_t n = 0, hsize = 0, uses;

	memset(p, 0, sizeof(*p));
	if (!buf)
		return wsep_fail(err, errlen, "no buffer");
	if (check_header(b, len, supported, &n, &hsize, err, errlen) ||
	    check_sections(b, len, hsize, s, n, err, errlen))
		return -EINVAL;
	p->version_major = get_le16(b + HDR_VERSION_MAJOR);
	p->version_minor = get_le16(b + HDR_VERSION_MINOR);
	p->features = get_le32(b + HDR_FEATURES);
	if (decode_fixed(b, s, n, p, err, errlen) || decode_arrays(b, s, n, p, borrow, err, errlen) ||
	    decode_graph(b, s, n, p, err, errlen) || decode_names(b, s, n, p, err, errlen) ||
	    wsep_check_program(p, err, errlen))
		return -EINVAL;
	/* What the header announces is what the program uses. */
	uses = wsep_features(p);
	if (uses != p->features)
		return wsep_fail(err, errlen,
				 "the header announces features 0x%x, the program uses 0x%x (%s)",
				 p->features, uses,
				 wsep_feature_name((uses ^ p->features) & -(uses ^ p->features)));
	return 0;
}

int wsep_decode(const void *buf, size_t len, uint32_t supported, struct wsep_program *p,
		char *err, size_t errlen)
{
	return decode(buf, len, supported, p, false, err, errlen);
}

void wsep_program_release(struct wsep_program *p)
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
	free(p->param_names);
	memset(p, 0, sizeof(*p));
}

void wsep_program_free(struct wsep_program *p)
{
	if (!p)
		return;
	wsep_program_release(p);
	free(p);
}

int wsep_validate(const void *buf, size_t len, char *err, size_t errlen)
{
	struct wsep_program p;
	int ret = decode(buf, len, WSEP_FEATURES_KNOWN, &p, true, err, errlen);
	const uint8_t *w = (const uint8_t *)p.weights;

	/* Borrowed weights are the caller's bytes. */
	if (w >= (const uint8_t *)buf && w < (const uint8_t *)buf + len)
		p.weights = NULL;
	wsep_program_release(&p);
	return ret;
}

int wsep_read(const void *buf, size_t len, struct wsep_program **out, char *err, size_t errlen)
{
	return wsep_read_features(buf, len, WSEP_FEATURES_KNOWN, out, err, errlen);
}

int wsep_read_features(const void *buf, size_t len, uint32_t supported, struct wsep_program **out,
		       char *err, size_t errlen)
{
	struct wsep_program *p = calloc(1, sizeof(*p));
	int ret;

	*out = NULL;
	if (!p) {
		wsep_fail(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = wsep_decode(buf, len, supported, p, err, errlen);
	if (ret) {
		wsep_program_free(p);
		return ret;
	}
	*out = p;
	return 0;
}
