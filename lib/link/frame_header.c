// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The 32-byte frame header: encoding, and the receive checks in the order
 * Documentation/link-protocol.rst fixes (magic, header CRC, version, flags,
 * reserved, length; the data CRC once the payload is in).
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wse/link_frame.h"

/*
 * The code follows the structure in uapi/wse_link.h rather than literal
 * offsets: hdr_crc must be the last field and covers everything before it.
 */
_Static_assert(offsetof(struct wse_link_hdr, hdr_crc) + 4 == sizeof(struct wse_link_hdr),
	       "hdr_crc is the last header field");

int wse_link_err_set(struct wse_link_err *err, uint32_t code,
		     enum wse_link_check check, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		err->check = check;
		va_start(ap, fmt);
		vsnprintf(err->text, sizeof(err->text), fmt, ap);
		va_end(ap);
	}
	/* The statuses a receiver's checks report; callers with others return their own errno. */
	return code == WSE_LINK_E_CRC ? -EBADMSG : code == WSE_LINK_E_INVAL ? -EINVAL : -EPROTO;
}

void wse_link_hdr_encode(struct wse_link_hdr *raw, const struct wse_link_frame *f)
{
	memset(raw, 0, sizeof(*raw));
	raw->magic = htole32(WSE_LINK_MAGIC);
	raw->version = f->version;
	raw->opcode = f->opcode;
	raw->flags = htole16(f->flags);
	raw->queue = htole16(f->queue);
	raw->tag = htole32(f->tag);
	raw->length = htole32(f->length);
	raw->data_crc = htole32(f->data_crc);
	raw->hdr_crc = htole32(wse_crc32c(0, raw, WSE_LINK_HDR_CRC_LEN));
}

int wse_link_hdr_decode(const struct wse_link_hdr *raw,
			const struct wse_link_rx_rules *rules,
			struct wse_link_frame *f, struct wse_link_err *err)
{
	uint32_t magic = le32toh(raw->magic);
	uint32_t want_crc = le32toh(raw->hdr_crc);
	struct wse_link_hdr again;
	uint32_t crc;

	memset(f, 0, sizeof(*f));
	if (magic != WSE_LINK_MAGIC)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_MAGIC,
					"bad magic 0x%08x (expected 0x%08x)",
					magic, WSE_LINK_MAGIC);
	crc = wse_crc32c(0, raw, WSE_LINK_HDR_CRC_LEN);
	if (crc != want_crc)
		return wse_link_err_set(err, WSE_LINK_E_CRC, WSE_LINK_CHECK_HDR_CRC,
					"header CRC 0x%08x does not match the header (0x%08x)",
					want_crc, crc);
	f->version = raw->version;
	f->opcode = raw->opcode;
	f->flags = le16toh(raw->flags);
	f->queue = le16toh(raw->queue);
	f->tag = le32toh(raw->tag);
	f->length = le32toh(raw->length);
	f->data_crc = le32toh(raw->data_crc);
	if (f->version != rules->version)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_VERSION,
					"frame version %u, link speaks version %u",
					f->version, rules->version);
	if (f->flags & ~WSE_LINK_F_KNOWN)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_FLAGS,
					"unknown flags 0x%04x",
					(unsigned int)(f->flags & ~WSE_LINK_F_KNOWN));
	if (raw->reserved)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_RESERVED,
					"reserved header field is 0x%04x, must be 0",
					le16toh(raw->reserved));
	/* Any other byte (a reserved field or padding) must be zero as well:
	 * re-encoding what was decoded must give the same bytes.
	 */
	wse_link_hdr_encode(&again, f);
	if (memcmp(&again, raw, WSE_LINK_HDR_CRC_LEN))
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_RESERVED,
					"reserved header bytes are not zero");
	if (f->length > rules->max_payload)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_LENGTH,
					"payload length %u exceeds the link maximum %u",
					f->length, rules->max_payload);
	return 0;
}

int wse_link_check_data_crc(const struct wse_link_frame *f, uint32_t crc,
			    struct wse_link_err *err)
{
	if (crc != f->data_crc)
		return wse_link_err_set(err, WSE_LINK_E_CRC, WSE_LINK_CHECK_DATA_CRC,
					"data CRC 0x%08x does not match the %u-byte payload (0x%08x)",
					f->data_crc, f->length, crc);
	return 0;
}

const char *wse_link_op_name(unsigned int opcode)
{
	switch (opcode) {
	case WSE_LINK_OP_HELLO: return "HELLO";
	case WSE_LINK_OP_KEEPALIVE: return "KEEPALIVE";
	case WSE_LINK_OP_SHUTDOWN: return "SHUTDOWN";
	case WSE_LINK_OP_ERROR: return "ERROR";
	case WSE_LINK_OP_CANCEL: return "CANCEL";
	case WSE_LINK_OP_MEM_WRITE: return "MEM_WRITE";
	case WSE_LINK_OP_MEM_READ: return "MEM_READ";
	case WSE_LINK_OP_PROGRAM_LOAD: return "PROGRAM_LOAD";
	case WSE_LINK_OP_PROGRAM_UNLOAD: return "PROGRAM_UNLOAD";
	case WSE_LINK_OP_STREAM_WRITE: return "STREAM_WRITE";
	case WSE_LINK_OP_STREAM_READ: return "STREAM_READ";
	case WSE_LINK_OP_RUN: return "RUN";
	case WSE_LINK_OP_PARAMS_READ: return "PARAMS_READ";
	case WSE_LINK_OP_PARAMS_WRITE: return "PARAMS_WRITE";
	case WSE_LINK_OP_DEVICE_STATS: return "DEVICE_STATS";
	case WSE_LINK_OP_REGION_MAP: return "REGION_MAP";
	case WSE_LINK_OP_STREAM_WRITE_REGION: return "STREAM_WRITE_REGION";
	case WSE_LINK_OP_STREAM_READ_REGION: return "STREAM_READ_REGION";
	}
	return "unknown";
}

const char *wse_link_status_name(unsigned int code)
{
	switch (code) {
	case WSE_LINK_OK: return "OK";
	case WSE_LINK_E_VERSION: return "E_VERSION";
	case WSE_LINK_E_BUSY: return "E_BUSY";
	case WSE_LINK_E_PROTO: return "E_PROTO";
	case WSE_LINK_E_NOSPC: return "E_NOSPC";
	case WSE_LINK_E_RANGE: return "E_RANGE";
	case WSE_LINK_E_INVAL: return "E_INVAL";
	case WSE_LINK_E_UNSUPPORTED: return "E_UNSUPPORTED";
	case WSE_LINK_E_INTERNAL: return "E_INTERNAL";
	case WSE_LINK_E_CRC: return "E_CRC";
	case WSE_LINK_E_DATA_CRC: return "E_DATA_CRC";
	case WSE_LINK_E_CANCELED: return "E_CANCELED";
	}
	return "E_UNKNOWN";
}
