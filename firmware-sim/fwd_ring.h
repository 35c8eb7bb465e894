/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copies into and out of a byte ring of @cap bytes at @buf, from offset
 * @at, in one or two pieces as the data wrap: a device's stream buffers
 * (fwd_stream.c) and an appliance coordinator's rings (coord_job.c).
 */
#ifndef FWD_RING_H
#define FWD_RING_H

#include <stdint.h>
#include <string.h>

static inline void fwd_ring_write(uint8_t *buf, uint64_t cap, uint64_t at, const void *data,
				  uint64_t n)
{
	uint64_t first = n < cap - at ? n : cap - at;

	memcpy(buf + at, data, first);
	memcpy(buf, (const uint8_t *)data + first, n - first);
}

static inline void fwd_ring_read(const uint8_t *buf, uint64_t cap, uint64_t at, void *data,
				 uint64_t n)
{
	uint64_t first = n < cap - at ? n : cap - at;

	memcpy(data, buf + at, first);
	memcpy((uint8_t *)data + first, buf, n - first);
}

#endif /* FWD_RING_H */
