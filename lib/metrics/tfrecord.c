// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * TFRecord framing, the container of TensorBoard event files:
 *
 *   offset  size  field
 *   0       8     length     of data, little-endian u64
 *   8       4     len_crc    masked CRC32C of the 8 length bytes, LE
 *   12      len   data       one packed tensorflow.Event (tfevent.proto)
 *   12+len  4     data_crc   masked CRC32C of data, LE
 *
 * Records follow each other with nothing between them. The CRC is CRC32C
 * (Castagnoli, wse/crc32c.h: the link protocol's) and is masked -
 * rotated right by 15 bits and offset by 0xa282ead8 - because the CRC of
 * data that itself holds CRCs is otherwise weak.
 */
#include <errno.h>
#include <string.h>

#include "metrics.h"
#include "wse/crc32c.h"

#define CRC_MASK_DELTA	0xa282ead8U

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
	put_le32(header + 8, tfrecord_mask(wse_crc32c(0, header, 8)));
	put_le32(footer, tfrecord_mask(wse_crc32c(0, data, len)));
	errno = 0;	/* stdio need not set it; then say -EIO */
	if (fwrite(header, sizeof(header), 1, f) != 1 ||
	    (len && fwrite(data, len, 1, f) != 1) ||
	    fwrite(footer, sizeof(footer), 1, f) != 1)
		return errno ? -errno : -EIO;
	return 0;
}
