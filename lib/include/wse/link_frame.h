/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_frame.h - the link's frame header in userspace (library
 * wselink): encoding, the receive checks in the order the protocol fixes
 * (magic, header CRC, version, flags, reserved, length, then the data
 * CRC), and how a failed check is reported (struct wse_link_err).
 *
 * The wire format is uapi/wse_link.h; Documentation/link-protocol.rst is
 * the specification. Functions work in host byte order on the decoded
 * structures and convert at the edge.
 */
#ifndef WSE_LINK_FRAME_H
#define WSE_LINK_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "wse/crc32c.h"
#include "wse_link.h"

#define WSE_LINK_HDR_SIZE	((uint32_t)sizeof(struct wse_link_hdr))
#define WSE_LINK_HDR_CRC_LEN	((uint32_t)offsetof(struct wse_link_hdr, hdr_crc))

/* A frame header in host byte order (magic and hdr_crc are implied). */
struct wse_link_frame {
	uint8_t version;
	uint8_t opcode;
	uint16_t flags;
	uint16_t queue;
	uint32_t tag;
	uint32_t length;
	uint32_t data_crc;
};

/* Which receive check a frame failed, in the order they are applied. */
enum wse_link_check {
	WSE_LINK_CHECK_OK = 0,
	WSE_LINK_CHECK_MAGIC,
	WSE_LINK_CHECK_HDR_CRC,
	WSE_LINK_CHECK_VERSION,
	WSE_LINK_CHECK_FLAGS,
	WSE_LINK_CHECK_RESERVED,
	WSE_LINK_CHECK_LENGTH,
	WSE_LINK_CHECK_DATA_CRC,
	WSE_LINK_CHECK_PAYLOAD,		/* opcode-specific payload size/content */
	WSE_LINK_CHECK_IO,		/* the socket failed, closed or timed out */
};

/*
 * What went wrong, beside the negative errno every function of wselink
 * returns (Documentation/conventions.rst): @code is the enum
 * wse_link_status_code a receiver answers or fails the link with (E_PROTO
 * or E_CRC for a malformed frame), @check the failed check
 * (WSE_LINK_CHECK_IO when the socket failed), @text a sentence for logs
 * and ERROR frames.
 */
struct wse_link_err {
	uint32_t code;
	enum wse_link_check check;
	char text[200];
};

/* What a receiver accepts: the header version and the largest payload. */
struct wse_link_rx_rules {
	uint8_t version;
	uint32_t max_payload;
};

/* Fills @raw from @f (magic, @f's fields, then hdr_crc). */
void wse_link_hdr_encode(struct wse_link_hdr *raw, const struct wse_link_frame *f);

/*
 * Validates @raw against @rules in the specified order (magic, header CRC,
 * version, flags, reserved, length) and decodes it into @f. Returns 0, or
 * -EPROTO (-EBADMSG for the header CRC) with @err filled.
 */
int wse_link_hdr_decode(const struct wse_link_hdr *raw,
			const struct wse_link_rx_rules *rules,
			struct wse_link_frame *f, struct wse_link_err *err);

/* Compares the payload CRC @crc with @f->data_crc: 0 or -EBADMSG (E_CRC). */
int wse_link_check_data_crc(const struct wse_link_frame *f, uint32_t crc,
			    struct wse_link_err *err);

/*
 * Sets @err and returns the errno for @code, for one-line error returns:
 * -EPROTO for E_PROTO, -EBADMSG for E_CRC, -EINVAL for E_INVAL.
 */
int wse_link_err_set(struct wse_link_err *err, uint32_t code,
		     enum wse_link_check check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

const char *wse_link_op_name(unsigned int opcode);
const char *wse_link_status_name(unsigned int code);

#endif /* WSE_LINK_FRAME_H */
