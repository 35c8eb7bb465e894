// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Payloads of the execution opcodes (program load, streams, RUN, params,
 * device stats): encoders for the sender and decoders that check sizes and
 * reserved fields for the receiver, which trusts nothing.
 */
#include <endian.h>
#include <string.h>

#include "wse/link_payloads.h"

_Static_assert(sizeof(struct wse_link_program_load) == 24, "program_load layout");
_Static_assert(sizeof(struct wse_link_program_info) == 40, "program_info layout");
_Static_assert(sizeof(struct wse_link_program_ref) == 8, "program_ref layout");
_Static_assert(sizeof(struct wse_link_stream) == 16, "stream layout");
_Static_assert(sizeof(struct wse_link_run) == 24, "run layout");
_Static_assert(sizeof(struct wse_link_run_scale) == 8, "run_scale layout");
_Static_assert(sizeof(struct wse_link_run_result) == 32, "run_result layout");
_Static_assert(sizeof(struct wse_link_params) == 24, "params layout");
_Static_assert(sizeof(struct wse_link_dev_stats) == 64, "dev_stats layout");

static int too_short(struct wse_link_err *err, const char *what, size_t len, size_t need)
{
	return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
				"%s payload is %zu bytes, needs at least %zu", what, len, need);
}

static int reserved_set(struct wse_link_err *err, const char *what)
{
	return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
				"%s reserved field is not zero", what);
}

void wse_link_prog_load_encode(struct wse_link_program_load *raw,
			       const struct wse_link_prog_load_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->program = htole32(in->program);
	raw->flags = htole32(in->flags);
	raw->total = htole64(in->total);
	raw->offset = htole64(in->offset);
}

int wse_link_prog_load_decode(const void *buf, size_t len, struct wse_link_prog_load_info *out,
			      struct wse_link_err *err)
{
	struct wse_link_program_load raw;

	if (len < sizeof(raw))
		return too_short(err, "PROGRAM_LOAD", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	out->program = le32toh(raw.program);
	out->flags = le32toh(raw.flags);
	out->total = le64toh(raw.total);
	out->offset = le64toh(raw.offset);
	if (out->flags & ~(uint32_t)WSE_LINK_PROG_LAST)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"PROGRAM_LOAD has unknown flags 0x%x", out->flags);
	return 0;
}

void wse_link_prog_info_encode(struct wse_link_program_info *raw,
			       const struct wse_link_prog_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->program = htole32(in->program);
	raw->mode = htole32(in->mode);
	raw->num_layers = htole32(in->num_layers);
	raw->num_streams = htole32(in->num_streams);
	raw->batch = htole32(in->batch);
	raw->sram_bytes = htole64(in->sram_bytes);
	raw->est_cycles_per_step = htole64(in->est_cycles_per_step);
}

int wse_link_prog_info_decode(const void *buf, size_t len, struct wse_link_prog_info *out,
			      struct wse_link_err *err)
{
	struct wse_link_program_info raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"program info is %zu bytes, expected %zu", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return reserved_set(err, "program info");
	out->program = le32toh(raw.program);
	out->mode = le32toh(raw.mode);
	out->num_layers = le32toh(raw.num_layers);
	out->num_streams = le32toh(raw.num_streams);
	out->batch = le32toh(raw.batch);
	out->sram_bytes = le64toh(raw.sram_bytes);
	out->est_cycles_per_step = le64toh(raw.est_cycles_per_step);
	return 0;
}

void wse_link_prog_ref_encode(struct wse_link_program_ref *raw, uint32_t program)
{
	memset(raw, 0, sizeof(*raw));
	raw->program = htole32(program);
}

int wse_link_prog_ref_decode(const void *buf, size_t len, uint32_t *program,
			     struct wse_link_err *err)
{
	struct wse_link_program_ref raw;

	if (len < sizeof(raw))
		return too_short(err, "PROGRAM_UNLOAD", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return reserved_set(err, "PROGRAM_UNLOAD");
	*program = le32toh(raw.program);
	return 0;
}

void wse_link_stream_encode(struct wse_link_stream *raw, const struct wse_link_stream_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->program = htole32(in->program);
	raw->stream = htole32(in->stream);
	raw->length = htole32(in->length);
	raw->flags = htole32(in->flags);
}

int wse_link_stream_decode(const void *buf, size_t len, struct wse_link_stream_info *out,
			   struct wse_link_err *err)
{
	struct wse_link_stream raw;

	if (len < sizeof(raw))
		return too_short(err, "stream", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	out->program = le32toh(raw.program);
	out->stream = le32toh(raw.stream);
	out->length = le32toh(raw.length);
	out->flags = le32toh(raw.flags);
	if (out->flags & ~WSE_LINK_STREAM_FLAGS)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"stream flags 0x%x: unknown bits 0x%x", out->flags,
					out->flags & ~WSE_LINK_STREAM_FLAGS);
	return 0;
}

void wse_link_run_encode(struct wse_link_run *raw, const struct wse_link_run_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->program = htole32(in->program);
	raw->kind = htole32(in->kind);
	raw->steps = htole32(in->steps);
	raw->batch = htole32(in->batch);
	raw->leaf = htole32(in->leaf);
	raw->norm = htole32(in->norm);
}

int wse_link_run_decode(const void *buf, size_t len, struct wse_link_run_info *out,
			struct wse_link_err *err)
{
	struct wse_link_run raw;

	if (len < sizeof(raw))
		return too_short(err, "RUN", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	out->program = le32toh(raw.program);
	out->kind = le32toh(raw.kind);
	out->steps = le32toh(raw.steps);
	out->batch = le32toh(raw.batch);
	out->leaf = le32toh(raw.leaf);
	out->norm = le32toh(raw.norm);
	return 0;
}

int wse_link_run_scale_decode(const void *buf, size_t len, float *scale,
			      struct wse_link_err *err)
{
	struct wse_link_run raw;
	struct wse_link_run_scale sc;
	uint32_t bits;

	size_t want = sizeof(raw);

	*scale = 0.0f;
	if (len < sizeof(raw))
		return too_short(err, "RUN", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	want += le32toh(raw.kind) & WSE_LINK_RUN_SCALED ? sizeof(sc) : 0;
	if (len != want)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"RUN payload is %zu bytes, expected %zu (%zu, or %zu with flag SCALED)",
					len, want, sizeof(raw), sizeof(raw) + sizeof(sc));
	if (want == sizeof(raw))
		return 0;
	memcpy(&sc, (const uint8_t *)buf + sizeof(raw), sizeof(sc));
	if (sc.reserved)
		return reserved_set(err, "RUN scale");
	bits = le32toh(sc.loss_scale);
	memcpy(scale, &bits, sizeof(bits));
	return 0;
}

void wse_link_run_scale_encode(struct wse_link_run_scale *raw, float loss_scale)
{
	uint32_t bits;

	memcpy(&bits, &loss_scale, sizeof(bits));
	memset(raw, 0, sizeof(*raw));
	raw->loss_scale = htole32(bits);
}

void wse_link_run_result_encode(struct wse_link_run_result *raw,
				const struct wse_link_run_result_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->steps = htole32(in->steps);
	raw->samples = htole32(in->samples);
	raw->cycles = htole64(in->cycles);
	raw->est_cycles = htole64(in->est_cycles);
	raw->host_ns = htole64(in->host_ns);
}

int wse_link_run_result_decode(const void *buf, size_t len, struct wse_link_run_result_info *out,
			       struct wse_link_err *err)
{
	struct wse_link_run_result raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"run result is %zu bytes, expected %zu", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	out->steps = le32toh(raw.steps);
	out->samples = le32toh(raw.samples);
	out->cycles = le64toh(raw.cycles);
	out->est_cycles = le64toh(raw.est_cycles);
	out->host_ns = le64toh(raw.host_ns);
	return 0;
}

void wse_link_params_encode(struct wse_link_params *raw, const struct wse_link_params_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->program = htole32(in->program);
	raw->which = htole32(in->which);
	raw->offset = htole64(in->offset);
	raw->length = htole32(in->length);
}

int wse_link_params_decode(const void *buf, size_t len, struct wse_link_params_info *out,
			   struct wse_link_err *err)
{
	struct wse_link_params raw;

	if (len < sizeof(raw))
		return too_short(err, "params", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return reserved_set(err, "params");
	out->program = le32toh(raw.program);
	out->which = le32toh(raw.which);
	out->offset = le64toh(raw.offset);
	out->length = le32toh(raw.length);
	return 0;
}

void wse_link_dev_stats_encode(struct wse_link_dev_stats *raw,
			       const struct wse_link_dev_stats_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->cycles = htole64(in->cycles);
	raw->est_cycles = htole64(in->est_cycles);
	raw->steps = htole64(in->steps);
	raw->samples = htole64(in->samples);
	raw->sram_used = htole64(in->sram_used);
	raw->stream_bytes_in = htole64(in->stream_bytes_in);
	raw->stream_bytes_out = htole64(in->stream_bytes_out);
	raw->programs = htole32(in->programs);
}

int wse_link_dev_stats_decode(const void *buf, size_t len, struct wse_link_dev_stats_info *out,
			      struct wse_link_err *err)
{
	struct wse_link_dev_stats raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"device stats are %zu bytes, expected %zu", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return reserved_set(err, "device stats");
	out->cycles = le64toh(raw.cycles);
	out->est_cycles = le64toh(raw.est_cycles);
	out->steps = le64toh(raw.steps);
	out->samples = le64toh(raw.samples);
	out->sram_used = le64toh(raw.sram_used);
	out->stream_bytes_in = le64toh(raw.stream_bytes_in);
	out->stream_bytes_out = le64toh(raw.stream_bytes_out);
	out->programs = le32toh(raw.programs);
	return 0;
}
