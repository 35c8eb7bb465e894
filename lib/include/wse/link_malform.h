/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_malform.h - deliberately broken frames, for wsefwd's fault
 * knobs and the hostile peer (library wselink). Each kind breaks exactly
 * one receive rule of an otherwise legitimate frame.
 */
#ifndef WSE_LINK_MALFORM_H
#define WSE_LINK_MALFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wse/link_frame.h"
#include "wse/splitmix64.h"

/* Kinds of broken frame, for fault injection and the hostile peer. */
enum wse_link_malform {
	WSE_LINK_MAL_BAD_MAGIC,
	WSE_LINK_MAL_BAD_HDR_CRC,
	WSE_LINK_MAL_BAD_VERSION,
	WSE_LINK_MAL_BAD_FLAGS,
	WSE_LINK_MAL_BAD_RESERVED,
	WSE_LINK_MAL_HUGE_LENGTH,
	WSE_LINK_MAL_BAD_DATA_CRC,
	WSE_LINK_MAL_UNKNOWN_OPCODE,
	WSE_LINK_MAL_UNKNOWN_TAG,
	WSE_LINK_MAL_SHORT_STATUS,
	WSE_LINK_MAL_TRUNCATED,
	WSE_LINK_MAL_RANDOM,
	WSE_LINK_MAL_COUNT
};

/* Name of a kind ("bad-magic", ...), and back (-EINVAL if unknown). */
const char *wse_link_malform_name(enum wse_link_malform kind);
int wse_link_malform_parse(const char *name);

/* Buffer size that always holds a generated frame. */
#define WSE_LINK_MALFORM_MAX	(WSE_LINK_HDR_SIZE + 512U)

/*
 * Builds one broken frame of @kind into @buf (WSE_LINK_MALFORM_MAX bytes) as
 * if it were a response to a request with @opcode and @tag (a frame that
 * is only broken in one way otherwise looks legitimate). @rng is a
 * wse_splitmix64() state. Returns the byte count; *@close_after is set when
 * the frame is deliberately cut short and the sender must close the stream
 * after it for the receiver to see the truncation.
 */
size_t wse_link_malform_build(enum wse_link_malform kind, uint64_t *rng,
			      uint8_t version, uint8_t opcode, uint32_t tag,
			      uint8_t *buf, bool *close_after);

#endif /* WSE_LINK_MALFORM_H */
