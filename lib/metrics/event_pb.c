// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tensorflow.Event protobuf, encoded by hand for the two events we
 * write. The subset of tensorflow/core/util/event.proto and
 * tensorflow/core/framework/summary.proto used (proto3):
 *
 *   message Event {
 *     double wall_time = 1;		// key 0x09, fixed64
 *     int64 step = 2;			// key 0x10, varint
 *     oneof what {
 *       string file_version = 3;	// key 0x1a, length-delimited
 *       Summary summary = 5;		// key 0x2a, length-delimited
 *     }
 *   }
 *   message Summary {
 *     repeated Value value = 1;	// key 0x0a, length-delimited
 *     message Value {
 *       string tag = 1;		// key 0x0a, length-delimited
 *       oneof value {
 *         float simple_value = 2;	// key 0x15, fixed32
 *       }
 *     }
 *   }
 *
 * A key is (field number << 3 | wire type). Fields are written in field
 * number order and proto3 scalars with their default value (step 0, an
 * all-zero wall_time) are left out, exactly as protobuf itself serializes,
 * so a parse and reserialize gives the same bytes. simple_value sits in a
 * oneof, so it is always written, 0.0 included. Fixed-width fields are
 * little-endian.
 */
#include <string.h>

#include "metrics.h"

enum wire_type {
	WIRE_VARINT = 0,
	WIRE_FIXED64 = 1,
	WIRE_LEN = 2,
	WIRE_FIXED32 = 5,
};

#define KEY(field, wire)	((uint8_t)((field) << 3 | (wire)))

/* Event fields. */
#define EVENT_WALL_TIME		KEY(1, WIRE_FIXED64)
#define EVENT_STEP		KEY(2, WIRE_VARINT)
#define EVENT_FILE_VERSION	KEY(3, WIRE_LEN)
#define EVENT_SUMMARY		KEY(5, WIRE_LEN)
/* Summary and Summary.Value fields. */
#define SUMMARY_VALUE		KEY(1, WIRE_LEN)
#define VALUE_TAG		KEY(1, WIRE_LEN)
#define VALUE_SIMPLE_VALUE	KEY(2, WIRE_FIXED32)

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static size_t put_fixed64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 8;
}

static size_t put_fixed32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 4;
}

/* A length-delimited field's key and length; the caller adds the bytes. */
static size_t put_len_key(uint8_t *p, uint8_t key, size_t len)
{
	p[0] = key;
	return 1 + put_varint(p + 1, len);
}

/* wall_time and step, the fields every event starts with. */
static size_t put_event_head(uint8_t *p, double wall_time, int64_t step)
{
	uint64_t bits;
	size_t n = 0;

	memcpy(&bits, &wall_time, sizeof(bits));
	if (bits) {
		p[n++] = EVENT_WALL_TIME;
		n += put_fixed64(p + n, bits);
	}
	if (step) {
		p[n++] = EVENT_STEP;
		/* int64 is a varint of the two's complement: 10 bytes if negative. */
		n += put_varint(p + n, (uint64_t)step);
	}
	return n;
}

size_t event_pb_file_version(uint8_t *buf, double wall_time, const char *version)
{
	size_t len = strlen(version);
	size_t n = put_event_head(buf, wall_time, 0);

	n += put_len_key(buf + n, EVENT_FILE_VERSION, len);
	memcpy(buf + n, version, len);
	return n + len;
}

size_t event_pb_scalar(uint8_t *buf, double wall_time, int64_t step,
		       const char *tag, size_t tag_len, float value)
{
	size_t value_len = 1 + varint_len(tag_len) + tag_len + 1 + 4;
	size_t summary_len = 1 + varint_len(value_len) + value_len;
	uint32_t bits;
	size_t n;

	n = put_event_head(buf, wall_time, step);
	n += put_len_key(buf + n, EVENT_SUMMARY, summary_len);
	n += put_len_key(buf + n, SUMMARY_VALUE, value_len);
	n += put_len_key(buf + n, VALUE_TAG, tag_len);
	memcpy(buf + n, tag, tag_len);
	n += tag_len;
	buf[n++] = VALUE_SIMPLE_VALUE;
	memcpy(&bits, &value, sizeof(bits));
	n += put_fixed32(buf + n, bits);
	return n;
}
