// SPDX-License-Identifier: GPL-2.0-only
/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), initial value ~0
 * and final xor ~0: the same digest the link protocol uses. A 256-entry
 * table built on first use; programs are checked once per load, so this
 * need not be faster.
 */
#include <stdint.h>

#include "wse/wsep.h"

static uint32_t table[256];
static int table_ready;

static void build_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78U : c >> 1;
		table[i] = c;
	}
	table_ready = 1;
}

uint32_t wsep_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!table_ready)
		build_table();
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
