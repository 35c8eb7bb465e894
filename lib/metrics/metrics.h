/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/metrics internals: TFRecord framing and the Event protobuf. */
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

/*
 * event_pb.c: a serialized tensorflow.Event, at most EVENT_PB_MAX bytes:
 * wall_time 9 and step 11, three keys with 2-byte lengths 9, simple_value
 * 5, and the tag.
 */
#define EVENT_PB_MAX	(34U + WSE_TFEVENTS_TAG_MAX)

/* Event { wall_time, file_version }: the first record of every file. */
size_t event_pb_file_version(uint8_t *buf, double wall_time, const char *version);
/* Event { wall_time, step, summary { value { tag, simple_value } } }. */
size_t event_pb_scalar(uint8_t *buf, double wall_time, int64_t step,
		       const char *tag, size_t tag_len, float value);

#endif /* WSE_METRICS_H */
