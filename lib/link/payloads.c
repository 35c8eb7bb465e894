// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Payload helpers: HELLO and its reply, the response status, ERROR, CANCEL
 * and the device-memory access header. Decoders check everything the receiver is
 * about to trust; the peer is never trusted.
 */
#include <endian.h>
#include <string.h>

#include "wse/link_payloads.h"

_Static_assert(sizeof(struct wse_link_hello) == 24, "hello layout");
_Static_assert(sizeof(struct wse_link_hello_reply) == 88, "hello reply layout");
_Static_assert(sizeof(struct wse_link_status) == 8, "status layout");
_Static_assert(sizeof(struct wse_link_error) == 8, "error layout");
_Static_assert(sizeof(struct wse_link_mem) == 16, "mem layout");
_Static_assert(sizeof(struct wse_link_cancel) == 8, "cancel layout");

void wse_link_hello_encode(struct wse_link_hello *raw,
			   const struct wse_link_hello_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->version_min = htole16(in->version_min);
	raw->version_max = htole16(in->version_max);
	raw->caps = htole32(in->caps);
	raw->max_payload = htole32(in->max_payload);
	raw->keepalive_ms = htole32(in->keepalive_ms);
}

int wse_link_hello_decode(const void *buf, size_t len,
			  struct wse_link_hello_info *out, struct wse_link_err *err)
{
	struct wse_link_hello raw;

	if (len < sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO payload is %zu bytes, needs at least %zu",
					len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reserved field is not zero");
	out->version_min = le16toh(raw.version_min);
	out->version_max = le16toh(raw.version_max);
	out->caps = le32toh(raw.caps);
	out->max_payload = le32toh(raw.max_payload);
	out->keepalive_ms = le32toh(raw.keepalive_ms);
	if (out->version_min > out->version_max)
		return wse_link_err_set(err, WSE_LINK_E_INVAL, WSE_LINK_CHECK_PAYLOAD,
					"HELLO version range %u..%u is empty",
					out->version_min, out->version_max);
	if (out->max_payload < WSE_LINK_PAYLOAD_MIN ||
	    out->max_payload > WSE_LINK_PAYLOAD_LIMIT)
		return wse_link_err_set(err, WSE_LINK_E_INVAL, WSE_LINK_CHECK_PAYLOAD,
					"HELLO max_payload %u is outside %u..%u",
					out->max_payload, WSE_LINK_PAYLOAD_MIN,
					WSE_LINK_PAYLOAD_LIMIT);
	return 0;
}

void wse_link_hello_reply_encode(struct wse_link_hello_reply *raw,
				 const struct wse_link_device_info *in)
{
	memset(raw, 0, sizeof(*raw));
	raw->version = htole16(in->version);
	raw->caps = htole32(in->caps);
	raw->max_payload = htole32(in->max_payload);
	raw->version_min = htole16(in->version_min);
	raw->version_max = htole16(in->version_max);
	raw->device_id = htole64(in->device_id);
	raw->wafer_width = htole32(in->wafer_width);
	raw->wafer_height = htole32(in->wafer_height);
	raw->sram_per_pe = htole64(in->sram_per_pe);
	raw->sram_total = htole64(in->sram_total);
	raw->clock_khz = htole32(in->clock_khz);
	raw->num_queues = htole32(in->num_queues);
	/* NUL-padded, not necessarily NUL-terminated. */
	memcpy(raw->fw_version, in->fw_version,
	       strnlen(in->fw_version, sizeof(raw->fw_version)));
}

int wse_link_hello_reply_decode(const void *buf, size_t len,
				struct wse_link_device_info *out,
				struct wse_link_err *err)
{
	struct wse_link_hello_reply raw;
	uint64_t pes;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply body is %zu bytes, expected %zu",
					len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	memset(out, 0, sizeof(*out));
	out->version = le16toh(raw.version);
	out->caps = le32toh(raw.caps);
	out->max_payload = le32toh(raw.max_payload);
	out->version_min = le16toh(raw.version_min);
	out->version_max = le16toh(raw.version_max);
	out->device_id = le64toh(raw.device_id);
	out->wafer_width = le32toh(raw.wafer_width);
	out->wafer_height = le32toh(raw.wafer_height);
	out->sram_per_pe = le64toh(raw.sram_per_pe);
	out->sram_total = le64toh(raw.sram_total);
	out->clock_khz = le32toh(raw.clock_khz);
	out->num_queues = le32toh(raw.num_queues);
	memcpy(out->fw_version, raw.fw_version, sizeof(raw.fw_version));
	out->fw_version[sizeof(raw.fw_version)] = '\0';

	if (raw.reserved0)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply reserved field is not zero");
	if (out->version_min > out->version_max ||
	    out->version < out->version_min || out->version > out->version_max)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply chose version %u outside its own range %u..%u",
					out->version, out->version_min, out->version_max);
	if (out->max_payload < WSE_LINK_PAYLOAD_MIN ||
	    out->max_payload > WSE_LINK_PAYLOAD_LIMIT)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply max_payload %u is outside %u..%u",
					out->max_payload, WSE_LINK_PAYLOAD_MIN,
					WSE_LINK_PAYLOAD_LIMIT);
	if (out->num_queues < 1)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply offers no queues");
	if (!out->wafer_width || !out->wafer_height || !out->sram_per_pe)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply describes an empty wafer (%ux%u PEs, %llu bytes per PE)",
					out->wafer_width, out->wafer_height,
					(unsigned long long)out->sram_per_pe);
	pes = (uint64_t)out->wafer_width * out->wafer_height;
	if (out->sram_per_pe > UINT64_MAX / pes ||
	    pes * out->sram_per_pe != out->sram_total)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"HELLO reply sram_total %llu is not %ux%u PEs x %llu bytes",
					(unsigned long long)out->sram_total,
					out->wafer_width, out->wafer_height,
					(unsigned long long)out->sram_per_pe);
	return 0;
}

void wse_link_status_encode(struct wse_link_status *raw, uint32_t status)
{
	raw->status = htole32(status);
	raw->reserved = 0;
}

int wse_link_status_decode(const void *buf, size_t len, uint32_t *status,
			   const uint8_t **rest, size_t *rest_len,
			   struct wse_link_err *err)
{
	struct wse_link_status raw;

	if (len < sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"response payload is %zu bytes, shorter than its %zu-byte status",
					len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"response status reserved field is not zero");
	*status = le32toh(raw.status);
	if (rest)
		*rest = (const uint8_t *)buf + sizeof(raw);
	if (rest_len)
		*rest_len = len - sizeof(raw);
	return 0;
}

size_t wse_link_error_encode(void *buf, size_t cap, uint32_t code, const char *text)
{
	struct wse_link_error raw = { .code = htole32(code) };
	size_t n = text ? strlen(text) : 0;

	if (cap < sizeof(raw))
		return 0;
	if (n > cap - sizeof(raw))
		n = cap - sizeof(raw);
	memcpy(buf, &raw, sizeof(raw));
	if (n)
		memcpy((uint8_t *)buf + sizeof(raw), text, n);
	return sizeof(raw) + n;
}

int wse_link_error_decode(const void *buf, size_t len, uint32_t *code,
			  char *text, size_t text_cap, struct wse_link_err *err)
{
	struct wse_link_error raw;
	const uint8_t *t = (const uint8_t *)buf + sizeof(raw);
	size_t n, i;

	if (len < sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"ERROR payload is %zu bytes, needs at least %zu",
					len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"ERROR reserved field is not zero");
	*code = le32toh(raw.code);
	if (!text_cap)
		return 0;
	n = len - sizeof(raw);
	if (n > text_cap - 1)
		n = text_cap - 1;
	/* The text is the peer's: keep it printable before it reaches a log. */
	for (i = 0; i < n; i++)
		text[i] = (t[i] >= 0x20 && t[i] < 0x7f) ? (char)t[i] : '?';
	text[n] = '\0';
	return 0;
}

void wse_link_cancel_encode(struct wse_link_cancel *raw, uint32_t tag)
{
	raw->tag = htole32(tag);
	raw->reserved = 0;
}

int wse_link_cancel_decode(const void *buf, size_t len, uint32_t *tag, struct wse_link_err *err)
{
	struct wse_link_cancel raw;

	if (len != sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"CANCEL payload is %zu bytes, expected %zu", len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"CANCEL reserved field is not zero");
	*tag = le32toh(raw.tag);
	return 0;
}

void wse_link_mem_encode(struct wse_link_mem *raw, uint64_t addr, uint32_t length)
{
	raw->addr = htole64(addr);
	raw->length = htole32(length);
	raw->reserved = 0;
}

int wse_link_mem_decode(const void *buf, size_t len, uint64_t *addr,
			uint32_t *length, struct wse_link_err *err)
{
	struct wse_link_mem raw;

	if (len < sizeof(raw))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"memory access payload is %zu bytes, needs at least %zu",
					len, sizeof(raw));
	memcpy(&raw, buf, sizeof(raw));
	if (raw.reserved)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					"memory access reserved field is not zero");
	*addr = le64toh(raw.addr);
	*length = le32toh(raw.length);
	return 0;
}
