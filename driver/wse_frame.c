// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: link frames. Building them, and checking every header and payload
 * that arrives from the peer before anything in it is used: the firmware
 * end of the link is not trusted.
 */

#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/stddef.h>

#include "wse_frame.h"

static_assert(sizeof(struct wse_link_hdr) == 32);
static_assert(WSE_HDR_CRC_LEN == 28);
static_assert(sizeof(struct wse_link_status) == 8);
static_assert(sizeof(struct wse_link_hello) == 24);
static_assert(sizeof(struct wse_link_hello_reply) == 88);
static_assert(sizeof(struct wse_link_error) == 8);
static_assert(sizeof(struct wse_link_mem) == 16);
static_assert(sizeof(struct wse_link_program_load) == 24);
static_assert(sizeof(struct wse_link_program_info) == 40);
static_assert(sizeof(struct wse_link_program_ref) == 8);
static_assert(sizeof(struct wse_link_stream) == 16);
static_assert(sizeof(struct wse_link_run) == 24);
static_assert(sizeof(struct wse_link_run_result) == 32);
static_assert(sizeof(struct wse_link_params) == 24);
static_assert(sizeof(struct wse_link_dev_stats) == 64);

/* CRC32C as iSCSI and NVMe/TCP use it: seed ~0, result inverted. */
u32 wse_crc32c(const void *buf, size_t len)
{
	return ~crc32c(~0U, buf, len);
}

u32 wse_crc32c_kvec(const struct kvec *vec, unsigned int nvec)
{
	u32 crc = ~0U;
	unsigned int i;

	for (i = 0; i < nvec; i++)
		crc = crc32c(crc, vec[i].iov_base, vec[i].iov_len);
	return ~crc;
}

void wse_frame_build(struct wse_link_hdr *hdr, u8 version, u8 opcode, u16 flags,
		     u16 queue, u32 tag, const struct kvec *payload,
		     unsigned int npayload)
{
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < npayload; i++)
		len += payload[i].iov_len;

	hdr->magic = cpu_to_le32(WSE_LINK_MAGIC);
	hdr->version = version;
	hdr->opcode = opcode;
	hdr->flags = cpu_to_le16(flags);
	hdr->queue = cpu_to_le16(queue);
	hdr->reserved = 0;
	hdr->tag = cpu_to_le32(tag);
	hdr->length = cpu_to_le32(len);
	hdr->reserved2 = 0;
	hdr->data_crc = cpu_to_le32(len ? wse_crc32c_kvec(payload, npayload) : 0);
	hdr->hdr_crc = cpu_to_le32(wse_crc32c(hdr, WSE_HDR_CRC_LEN));
}

/*
 * The order matters: nothing but the magic and digest is believed until the
 * digest matches, and the length is bounded before anyone reads that many
 * bytes. Returns -EBADMSG for a digest mismatch, -EPROTO for the rest.
 */
int wse_frame_check_hdr(const struct wse_link_hdr *hdr, u8 version,
			u32 max_payload, const char **why)
{
	if (le32_to_cpu(hdr->magic) != WSE_LINK_MAGIC) {
		*why = "bad magic";
		return -EPROTO;
	}
	if (le32_to_cpu(hdr->hdr_crc) != wse_crc32c(hdr, WSE_HDR_CRC_LEN)) {
		*why = "header digest mismatch";
		return -EBADMSG;
	}
	if (hdr->version != version) {
		*why = "frame version differs from the negotiated one";
		return -EPROTO;
	}
	if (le16_to_cpu(hdr->flags) & ~WSE_LINK_F_KNOWN) {
		*why = "unknown frame flags";
		return -EPROTO;
	}
	if (hdr->reserved || hdr->reserved2) {
		*why = "reserved header field not zero";
		return -EPROTO;
	}
	if (le32_to_cpu(hdr->length) > max_payload) {
		*why = "payload longer than negotiated";
		return -EPROTO;
	}
	if (!le32_to_cpu(hdr->length) && hdr->data_crc) {
		*why = "data digest on an empty frame";
		return -EPROTO;
	}
	return 0;
}

int wse_frame_check_data(const struct wse_link_hdr *hdr, const void *payload,
			 const char **why)
{
	u32 len = le32_to_cpu(hdr->length);

	if (len && le32_to_cpu(hdr->data_crc) != wse_crc32c(payload, len)) {
		*why = "data digest mismatch";
		return -EBADMSG;
	}
	return 0;
}

/* What a firmware status code means to a caller. */
int wse_frame_status_errno(u32 status)
{
	switch (status) {
	case WSE_LINK_OK:
		return 0;
	case WSE_LINK_E_VERSION:
		return -EPROTONOSUPPORT;
	case WSE_LINK_E_BUSY:
		return -EBUSY;
	case WSE_LINK_E_PROTO:
		return -EPROTO;
	case WSE_LINK_E_NOSPC:
		return -ENOSPC;
	case WSE_LINK_E_RANGE:
		return -ERANGE;
	case WSE_LINK_E_INVAL:
		return -EINVAL;
	case WSE_LINK_E_UNSUPPORTED:
		return -EOPNOTSUPP;
	case WSE_LINK_E_CRC:
	case WSE_LINK_E_DATA_CRC:
		return -EBADMSG;
	case WSE_LINK_E_CANCELED:
		return -ECANCELED;
	default:
		return -EIO;
	}
}
