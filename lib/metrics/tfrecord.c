// SPDX-License-Identifier: GPL-2.0-only
/*
 * TFRecord framing, the container of TensorBoard event files:
 *
 *   offset  size  field
 *   0       8     length     of data, little-endian u64
 *   8       4     len_crc    masked CRC32C of the 8 length bytes, LE
 *   12      len   data       one serialized tensorflow.Event (event_pb.c)
 *   12+len  4     data_crc   masked CRC32C of data, LE
 *
 * Records follow each other with nothing between them. The CRC is CRC32C
 * (Castagnoli: reflected polynomial 0x82F63B78, initial value and final xor
 * ~0) and is masked - rotated right by 15 bits and offset by 0xa282ead8 -
 * because the CRC of data that itself holds CRCs is otherwise weak.
 */
#include <errno.h>
#include <string.h>

#include "metrics.h"

#define CRC_MASK_DELTA	0xa282ead8U

/*
 * crc_nibble[n] is the CRC register after shifting nibble n through the
 * reflected polynomial 0x82F63B78 four times: two lookups per byte, small
 * enough to write out, with no table to build at run time.
 */
static const uint32_t crc_nibble[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1,
	0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
	0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

/* Continues @crc (0 to start) over @buf; pre- and post-inverted. */
uint32_t tfrecord_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ crc_nibble[crc & 15];
		crc = (crc >> 4) ^ crc_nibble[crc & 15];
	}
	return ~crc;
}

uint32_t tfrecord_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + CRC_MASK_DELTA;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int tfrecord_write(FILE *f, const void *data, size_t len)
{
	uint8_t header[TFRECORD_HEADER], footer[TFRECORD_FOOTER];
	uint64_t len64 = len;

	for (int i = 0; i < 8; i++)
		header[i] = (uint8_t)(len64 >> (8 * i));
	put_le32(header + 8, tfrecord_mask(tfrecord_crc32c(0, header, 8)));
	put_le32(footer, tfrecord_mask(tfrecord_crc32c(0, data, len)));
	errno = 0;	/* stdio need not set it; then say -EIO */
	if (fwrite(header, sizeof(header), 1, f) != 1 ||
	    (len && fwrite(data, len, 1, f) != 1) ||
	    fwrite(footer, sizeof(footer), 1, f) != 1)
		return errno ? -errno : -EIO;
	return 0;
}
