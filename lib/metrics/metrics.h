/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/metrics internals: the TFRecord framing around each event. */
#ifndef WSE_METRICS_H
#define WSE_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wse/tfevents.h"

/* tfrecord.c */
#define TFRECORD_HEADER	12U	/* u64 length, u32 masked CRC of it */
#define TFRECORD_FOOTER	4U	/* u32 masked CRC of the data */

uint32_t tfrecord_mask(uint32_t crc);
/* Writes one record; 0 or a negative errno. */
int tfrecord_write(FILE *f, const void *data, size_t len);

#endif /* WSE_METRICS_H */
