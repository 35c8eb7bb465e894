/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: link frame encoding and validation (uapi/wse_link.h).
 */
#ifndef __WSE_FRAME_H__
#define __WSE_FRAME_H__

#include <linux/types.h>
#include <linux/uio.h>

#include "../uapi/wse_link.h"

#define WSE_HDR_CRC_LEN		offsetof(struct wse_link_hdr, hdr_crc)

u32 wse_crc32c(const void *buf, size_t len);
u32 wse_crc32c_kvec(const struct kvec *vec, unsigned int nvec);

void wse_frame_build(struct wse_link_hdr *hdr, u8 version, u8 opcode, u16 flags,
		     u16 queue, u32 tag, const struct kvec *payload,
		     unsigned int npayload);

int wse_frame_check_hdr(const struct wse_link_hdr *hdr, u8 version,
			u32 max_payload, const char **why);
int wse_frame_check_data(const struct wse_link_hdr *hdr, const void *payload,
			 const char **why);
int wse_frame_status_errno(u32 status);

#endif /* __WSE_FRAME_H__ */
