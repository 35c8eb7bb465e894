// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Payloads of the shared-memory region opcodes (REGION_MAP and the
 * STREAM_*_REGION transfers): a host and a device on one machine move bulk
 * data through a region both map instead of through frames.
 */
#include <endian.h>
#include <stdbool.h>
#include <string.h>

#include "payload_fields.h"
#include "wse/link_payloads.h"

_Static_assert(sizeof(struct wse_link_region_map) == 64, "region_map layout");
_Static_assert(sizeof(struct wse_link_region_ref) == 16, "region_ref layout");
_Static_assert(sizeof(struct wse_link_region_done) == 8, "region_done layout");

#define REGION_SIZE_MAX		(1ULL << 40)
#define REGION_PAGE		4096ULL

void wse_link_region_map_encode(struct wse_link_region_map *raw,
				const struct wse_link_region_map_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->region = htole32(in->region);
	raw->size = htole64(in->size);
	raw->nonce = htole64(in->nonce);
	text_out(raw->name, sizeof(raw->name), in->name);
}

/* "/" then at least one of [A-Za-z0-9._-], NUL-padded to the end. */
static bool shm_name_ok(const char *name, size_t cap)
{
	size_t n = strnlen(name, cap);

	if (n < 2 || n == cap || name[0] != '/')
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	for (size_t i = n; i < cap; i++)
		if (name[i])
			return false;
	return true;
}

int wse_link_region_map_decode(const void *buf, size_t len,
			       struct wse_link_region_map_info *out, struct wse_link_err *err)
{
	struct wse_link_region_map raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"REGION_MAP payload is %zu bytes, expected %zu", len,
					sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	memset(out, 0, sizeof(*out));
	out->region = le32toh(raw.region);
	out->size = le64toh(raw.size);
	out->nonce = le64toh(raw.nonce);
	if (raw.flags)
		return bad(err, "REGION_MAP flags are not zero");
	if (!out->region || out->region > WSE_LINK_REGIONS_MAX)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"REGION_MAP region %u is outside 1..%u", out->region,
					WSE_LINK_REGIONS_MAX);
	if (!out->size || out->size % REGION_PAGE || out->size > REGION_SIZE_MAX)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"REGION_MAP size %llu is not a multiple of 4096 in 4096..2^40",
					(unsigned long long)out->size);
	if (!shm_name_ok(raw.name, sizeof(raw.name)))
		return bad(err, "REGION_MAP name is not '/' and [A-Za-z0-9._-], NUL-padded");
	memcpy(out->name, raw.name, sizeof(raw.name));
	return 0;
}

void wse_link_region_ref_encode(struct wse_link_region_ref *raw,
				const struct wse_link_region_ref_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->region = htole32(in->region);
	raw->offset = htole64(in->offset);
}

int wse_link_region_ref_decode(const void *buf, size_t len,
			       struct wse_link_region_ref_info *out, struct wse_link_err *err)
{
	struct wse_link_region_ref raw;

	if (len < sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"region reference is %zu bytes, needs %zu", len,
					sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return bad(err, "region reference reserved field is not zero");
	out->region = le32toh(raw.region);
	out->offset = le64toh(raw.offset);
	return 0;
}

void wse_link_region_done_encode(struct wse_link_region_done *raw, uint32_t length)
{
	raw->length = htole32(length);
	raw->reserved = 0;
}

int wse_link_region_done_decode(const void *buf, size_t len, uint32_t *length,
				struct wse_link_err *err)
{
	struct wse_link_region_done raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"STREAM_READ_REGION reply is %zu bytes, expected %zu", len,
					sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return bad(err, "STREAM_READ_REGION reply reserved field is not zero");
	*length = le32toh(raw.length);
	return 0;
}
