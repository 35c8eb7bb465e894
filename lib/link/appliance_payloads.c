// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Payloads only an appliance speaks: the HELLO appendix naming its
 * systems, the job and input descriptions a host writes with PARAMS_WRITE,
 * and the state of its parts it answers PARAMS_READ with.
 */
#include <endian.h>
#include <stdbool.h>
#include <string.h>

#include "payload_fields.h"
#include "wse/link_payloads.h"

_Static_assert(sizeof(struct wse_link_appliance_hello) == 16, "appliance_hello layout");
_Static_assert(sizeof(struct wse_link_appliance_system) == 32, "appliance_system layout");
_Static_assert(sizeof(struct wse_link_job) == 16, "job layout");
_Static_assert(sizeof(struct wse_link_input) == 256, "input layout");
_Static_assert(sizeof(struct wse_link_appliance_info) == 200, "appliance_info layout");
_Static_assert(sizeof(struct wse_link_appliance_part) == 192, "appliance_part layout");

/* A NUL-padded text field into a NUL-terminated string, unprintables replaced. */
static void text_in(char *out, const char *field, size_t cap)
{
	size_t n = strnlen(field, cap);

	for (size_t i = 0; i < n; i++)
		out[i] = field[i] >= 0x20 && field[i] < 0x7f ? field[i] : '?';
	out[n] = 0;
}

size_t wse_link_appliance_id_encode(void *buf, size_t cap, const struct wse_link_appliance_id *in)
{
	struct wse_link_appliance_hello h = {
		.systems = htole32(in->systems),
		.memoryx_capacity = htole64(in->memoryx_capacity),
	};
	size_t len = sizeof(h) + (size_t)in->systems * sizeof(struct wse_link_appliance_system);
	uint8_t *p = buf;

	if (in->systems > WSE_LINK_APPLIANCE_SYSTEMS_MAX || len > cap)
		return 0;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (uint32_t i = 0; i < in->systems; i++) {
		const struct wse_link_appliance_system_info *s = &in->system[i];
		struct wse_link_appliance_system raw = {
			.device_id = htole64(s->device_id),
			.wafer_width = htole32(s->wafer_width),
			.wafer_height = htole32(s->wafer_height),
			.sram_per_pe = htole64(s->sram_per_pe),
			.clock_khz = htole32(s->clock_khz),
		};

		memcpy(p, &raw, sizeof(raw));
		p += sizeof(raw);
	}
	return len;
}

int wse_link_appliance_id_decode(const void *buf, size_t len, struct wse_link_appliance_id *out,
				 struct wse_link_err *err)
{
	struct wse_link_appliance_hello h;
	const uint8_t *p = buf;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return bad(err, "the appliance HELLO appendix is too short");
	memcpy(&h, p, sizeof(h));
	out->systems = le32toh(h.systems);
	out->memoryx_capacity = le64toh(h.memoryx_capacity);
	if (h.reserved)
		return bad(err, "the appliance HELLO appendix has a reserved field set");
	if (!out->systems || out->systems > WSE_LINK_APPLIANCE_SYSTEMS_MAX)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"the appliance says it has %u systems, not 1..%u",
					out->systems, WSE_LINK_APPLIANCE_SYSTEMS_MAX);
	if (len != sizeof(h) + out->systems * sizeof(struct wse_link_appliance_system))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"the appliance HELLO appendix is %zu bytes for %u systems",
					len, out->systems);
	p += sizeof(h);
	for (uint32_t i = 0; i < out->systems; i++) {
		struct wse_link_appliance_system_info *s = &out->system[i];
		struct wse_link_appliance_system raw;

		memcpy(&raw, p + i * sizeof(raw), sizeof(raw));
		s->device_id = le64toh(raw.device_id);
		s->wafer_width = le32toh(raw.wafer_width);
		s->wafer_height = le32toh(raw.wafer_height);
		s->sram_per_pe = le64toh(raw.sram_per_pe);
		s->clock_khz = le32toh(raw.clock_khz);
		if (raw.reserved || !s->wafer_width || !s->wafer_height || !s->sram_per_pe ||
		    !s->clock_khz)
			return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
						"the appliance describes system %u impossibly", i);
	}
	return 0;
}

void wse_link_job_encode(struct wse_link_job *raw, const struct wse_link_job_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->systems = htole32(in->systems);
}

int wse_link_job_decode(const void *buf, size_t len, struct wse_link_job_info *out,
			struct wse_link_err *err)
{
	struct wse_link_job raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"a job description is %zu bytes, expected %zu", len,
					sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.flags || raw.reserved)
		return bad(err, "a job description has flags or a reserved field set");
	out->systems = le32toh(raw.systems);
	if (!out->systems)
		return bad(err, "a job description asks for 0 systems");
	return 0;
}

void wse_link_input_encode(struct wse_link_input *raw, const struct wse_link_input_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->source = htole32(in->source);
	raw->flags = htole32(in->flags);
	raw->seed = htole64(in->seed);
	raw->epoch = htole32(in->epoch);
	raw->first = htole32(in->first);
	raw->count = htole32(in->count);
	text_out(raw->dataset, sizeof(raw->dataset), in->dataset);
	text_out(raw->split, sizeof(raw->split), in->split);
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* A relative path of name_char components, none "." or "..". */
static bool relative_path_ok(const char *s)
{
	const char *c = s;

	if (!*s || *s == '/')
		return false;
	while (*c) {
		size_t n = 0;

		while (c[n] && c[n] != '/') {
			if (!name_char(c[n]))
				return false;
			n++;
		}
		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c == '/' && !*++c)
			return false;
	}
	return true;
}

int wse_link_input_decode(const void *buf, size_t len, struct wse_link_input_info *out,
			  struct wse_link_err *err)
{
	struct wse_link_input raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"an input description is %zu bytes, expected %zu", len,
					sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	memset(out, 0, sizeof(*out));
	out->source = le32toh(raw.source);
	out->flags = le32toh(raw.flags);
	out->seed = le64toh(raw.seed);
	out->epoch = le32toh(raw.epoch);
	out->first = le32toh(raw.first);
	out->count = le32toh(raw.count);
	if (raw.reserved || out->flags & ~(uint32_t)WSE_LINK_INPUT_SHUFFLE ||
	    out->source > WSE_LINK_INPUT_DATASET)
		return bad(err, "an input description has an unknown source, flag or reserved field");
	if (strnlen(raw.dataset, sizeof(raw.dataset)) == sizeof(raw.dataset) ||
	    strnlen(raw.split, sizeof(raw.split)) == sizeof(raw.split))
		return bad(err, "an input description's dataset or split is not NUL-terminated");
	memcpy(out->dataset, raw.dataset, sizeof(raw.dataset));
	memcpy(out->split, raw.split, sizeof(raw.split));
	if (out->source == WSE_LINK_INPUT_STREAM)
		return 0;
	if (!relative_path_ok(out->dataset))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"the dataset '%.60s' is not a relative path of plain names",
					out->dataset);
	for (const char *c = out->split; *c; c++)
		if (!name_char(*c))
			return bad(err, "the split is not a plain name");
	if (!out->split[0])
		return bad(err, "an input description names no split");
	return 0;
}

size_t wse_link_appliance_state_size(uint32_t systems)
{
	return sizeof(struct wse_link_appliance_info) +
	       (size_t)systems * sizeof(struct wse_link_appliance_part);
}

size_t wse_link_appliance_state_encode(void *buf, size_t cap,
				       const struct wse_link_appliance_state *in)
{
	struct wse_link_appliance_info raw = {
		.systems = htole32(in->systems),
		.job_systems = htole32(in->job_systems),
		.memoryx_state = htole32(in->memoryx_state),
		.swarmx_state = htole32(in->swarmx_state),
		.memoryx_capacity = htole64(in->memoryx_capacity),
		.memoryx_held = htole64(in->memoryx_held),
		.memoryx_updates = htole64(in->memoryx_updates),
		.swarmx_broadcast = htole64(in->swarmx_broadcast),
		.swarmx_reduced = htole64(in->swarmx_reduced),
		.input_samples = htole64(in->input_samples),
		.input_state = htole32(in->input_state),
	};
	size_t len = wse_link_appliance_state_size(in->systems);
	uint8_t *p = buf;

	if (in->systems > WSE_LINK_APPLIANCE_SYSTEMS_MAX || len > cap)
		return 0;
	text_out(raw.reason, sizeof(raw.reason), in->reason);
	memcpy(p, &raw, sizeof(raw));
	p += sizeof(raw);
	for (uint32_t i = 0; i < in->systems; i++) {
		const struct wse_link_appliance_part_info *s = &in->part[i];
		struct wse_link_appliance_part part = {
			.device_id = htole64(s->device_id),
			.state = htole32(s->state),
			.frames_tx = htole64(s->frames_tx),
			.frames_rx = htole64(s->frames_rx),
			.bytes_tx = htole64(s->bytes_tx),
			.bytes_rx = htole64(s->bytes_rx),
			.steps = htole64(s->steps),
			.samples = htole64(s->samples),
		};

		text_out(part.address, sizeof(part.address), s->address);
		text_out(part.reason, sizeof(part.reason), s->reason);
		memcpy(p, &part, sizeof(part));
		p += sizeof(part);
	}
	return len;
}

static bool state_ok(uint32_t s)
{
	return s >= WSE_LINK_PART_UP && s <= WSE_LINK_PART_IDLE;
}

int wse_link_appliance_state_decode(const void *buf, size_t len,
				    struct wse_link_appliance_state *out, struct wse_link_err *err)
{
	struct wse_link_appliance_info raw;
	const uint8_t *p = buf;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(raw))
		return bad(err, "the appliance state is too short");
	memcpy(&raw, p, sizeof(raw));
	out->systems = le32toh(raw.systems);
	out->job_systems = le32toh(raw.job_systems);
	out->memoryx_state = le32toh(raw.memoryx_state);
	out->swarmx_state = le32toh(raw.swarmx_state);
	out->input_state = le32toh(raw.input_state);
	out->memoryx_capacity = le64toh(raw.memoryx_capacity);
	out->memoryx_held = le64toh(raw.memoryx_held);
	out->memoryx_updates = le64toh(raw.memoryx_updates);
	out->swarmx_broadcast = le64toh(raw.swarmx_broadcast);
	out->swarmx_reduced = le64toh(raw.swarmx_reduced);
	out->input_samples = le64toh(raw.input_samples);
	text_in(out->reason, raw.reason, sizeof(raw.reason));
	if (raw.reserved || !out->systems || out->systems > WSE_LINK_APPLIANCE_SYSTEMS_MAX ||
	    out->job_systems > out->systems || !state_ok(out->memoryx_state) ||
	    !state_ok(out->swarmx_state) || !state_ok(out->input_state))
		return bad(err, "the appliance state is malformed");
	if (len != wse_link_appliance_state_size(out->systems))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"the appliance state is %zu bytes for %u systems", len,
					out->systems);
	p += sizeof(raw);
	for (uint32_t i = 0; i < out->systems; i++) {
		struct wse_link_appliance_part_info *s = &out->part[i];
		struct wse_link_appliance_part part;

		memcpy(&part, p + i * sizeof(part), sizeof(part));
		s->device_id = le64toh(part.device_id);
		s->state = le32toh(part.state);
		s->frames_tx = le64toh(part.frames_tx);
		s->frames_rx = le64toh(part.frames_rx);
		s->bytes_tx = le64toh(part.bytes_tx);
		s->bytes_rx = le64toh(part.bytes_rx);
		s->steps = le64toh(part.steps);
		s->samples = le64toh(part.samples);
		text_in(s->address, part.address, sizeof(part.address));
		text_in(s->reason, part.reason, sizeof(part.reason));
		if (part.reserved || !state_ok(s->state))
			return bad(err, "the appliance state describes a system impossibly");
	}
	return 0;
}
