// SPDX-License-Identifier: GPL-2.0-only
/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78). Debian ships no C
 * library for it, so: slicing-by-8 tables built on first use, and the
 * SSE4.2 crc32 instruction when the CPU has it (it is several times faster,
 * which matters once the link carries bulk data).
 */
#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "wse/crc32c.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78U

static uint32_t crc_tables[8][256];
static pthread_once_t crc_tables_once = PTHREAD_ONCE_INIT;

static void crc_tables_build(void)
{
	for (unsigned int i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int bit = 0; bit < 8; bit++)
			c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY_REFLECTED : 0);
		crc_tables[0][i] = c;
	}
	for (unsigned int i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^
					   crc_tables[0][crc_tables[t - 1][i] & 0xff];
}

/* Raw register update: no inversion on entry or exit. */
static uint32_t crc_update_portable(uint32_t crc, const uint8_t *p, size_t len)
{
	pthread_once(&crc_tables_once, crc_tables_build);
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_tables[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v = le64toh(v) ^ crc;
		crc = crc_tables[7][v & 0xff] ^
		      crc_tables[6][(v >> 8) & 0xff] ^
		      crc_tables[5][(v >> 16) & 0xff] ^
		      crc_tables[4][(v >> 24) & 0xff] ^
		      crc_tables[3][(v >> 32) & 0xff] ^
		      crc_tables[2][(v >> 40) & 0xff] ^
		      crc_tables[1][(v >> 48) & 0xff] ^
		      crc_tables[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tables[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_update_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}

static bool have_sse42;
static pthread_once_t cpu_probe_once = PTHREAD_ONCE_INIT;

static void cpu_probe(void)
{
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2");
}

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t len)
{
	pthread_once(&cpu_probe_once, cpu_probe);
	return have_sse42 ? crc_update_sse42(crc, p, len)
			  : crc_update_portable(crc, p, len);
}
#else
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc_update_portable(crc, p, len);
}
#endif

uint32_t wse_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_update(~crc, buf, len);
}

uint32_t wse_crc32c_portable(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_update_portable(~crc, buf, len);
}

uint32_t wse_crc32c_iov(uint32_t crc, const struct iovec *iov, int iovcnt)
{
	for (int i = 0; i < iovcnt; i++)
		crc = wse_crc32c(crc, iov[i].iov_base, iov[i].iov_len);
	return crc;
}
