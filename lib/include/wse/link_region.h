/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_region.h - shared-memory regions (library wselink): a host and
 * a device on the same machine move bulk data through a region both map
 * (REGION_MAP, STREAM_WRITE_REGION, STREAM_READ_REGION) instead of through
 * frames, as RDMA would between machines. The creator names the region,
 * writes a random nonce in its first bytes and unlinks it when done; a peer
 * maps it by name and checks the nonce, so a region of the same name on
 * another machine is refused. The first WSE_LINK_REGION_HEADER bytes are
 * the creator's; data lies after them.
 */
#ifndef WSE_LINK_REGION_H
#define WSE_LINK_REGION_H

#include <stdbool.h>
#include <stdint.h>

#include "wse/link_payloads.h"

#define WSE_LINK_REGION_HEADER	4096ULL

struct wse_link_region {
	char name[sizeof(((struct wse_link_region_map *)0)->name)];
	uint64_t size;		/* bytes mapped, the header included */
	uint64_t nonce;
	uint8_t *base;
	bool owner;		/* created here: unlinked at destroy */
};

/*
 * Creates a region of at least @data_bytes after the header, named
 * "/wse-PID-TAG-N" (@tag [a-z0-9]). Returns 0 or a negative errno; @text
 * says what failed.
 */
int wse_link_region_create(struct wse_link_region *r, const char *tag, uint64_t data_bytes,
			   char *text, size_t textlen);
/* Maps a region another process created, as REGION_MAP describes it. */
int wse_link_region_map(struct wse_link_region *r, const struct wse_link_region_map_info *in,
			char *text, size_t textlen);
/* Unmaps it (and unlinks it, if created here). */
void wse_link_region_destroy(struct wse_link_region *r);
/* [@off, @off + @len) of the region if it lies after the header and inside, else NULL. */
void *wse_link_region_at(const struct wse_link_region *r, uint64_t off, uint64_t len);
/* What a REGION_MAP of @r under id @id carries. */
void wse_link_region_describe(const struct wse_link_region *r, uint32_t id,
			      struct wse_link_region_map_info *out);

#endif /* WSE_LINK_REGION_H */
