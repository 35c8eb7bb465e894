/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/crc32c.h - CRC32C (Castagnoli), the one implementation the link
 * protocol, the .wsep format and TFRecord files share. Its object file is
 * built into each library that uses it (wselink, wsep, wsemetrics); a
 * program linking several gets one copy.
 */
#ifndef WSE_CRC32C_H
#define WSE_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * Chainable like zlib's crc32(): start with crc = 0;
 * wse_crc32c(wse_crc32c(0, a, n), b, m) == wse_crc32c(0, a||b, n+m).
 * The value equals Linux's ~crc32c(~0, buf, len); "123456789" -> 0xE3069283.
 * Uses the SSE4.2 instruction when the CPU has it.
 */
uint32_t wse_crc32c(uint32_t crc, const void *buf, size_t len);
/* The same, always on the portable slicing-by-8 tables (for tests). */
uint32_t wse_crc32c_portable(uint32_t crc, const void *buf, size_t len);
/* CRC32C over a scatter list, chained from @crc. */
uint32_t wse_crc32c_iov(uint32_t crc, const struct iovec *iov, int iovcnt);

#endif /* WSE_CRC32C_H */
