// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Deliberately broken frames, for wsefwd's --fault-malformed-after knob and
 * the hostile peer. Each kind breaks exactly one receive rule of an
 * otherwise legitimate response, so a receiver's rejection can be traced to
 * the rule it enforced.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "wse/link_payloads.h"
#include "wse/link_malform.h"
#include "wse/splitmix64.h"

static const char *const malform_names[WSE_LINK_MAL_COUNT] = {
	[WSE_LINK_MAL_BAD_MAGIC] = "bad-magic",
	[WSE_LINK_MAL_BAD_HDR_CRC] = "bad-hdr-crc",
	[WSE_LINK_MAL_BAD_VERSION] = "bad-version",
	[WSE_LINK_MAL_BAD_FLAGS] = "bad-flags",
	[WSE_LINK_MAL_BAD_RESERVED] = "bad-reserved",
	[WSE_LINK_MAL_HUGE_LENGTH] = "huge-length",
	[WSE_LINK_MAL_BAD_DATA_CRC] = "bad-data-crc",
	[WSE_LINK_MAL_UNKNOWN_OPCODE] = "unknown-opcode",
	[WSE_LINK_MAL_UNKNOWN_TAG] = "unknown-tag",
	[WSE_LINK_MAL_SHORT_STATUS] = "short-status",
	[WSE_LINK_MAL_TRUNCATED] = "truncated",
	[WSE_LINK_MAL_RANDOM] = "random",
};

const char *wse_link_malform_name(enum wse_link_malform kind)
{
	if ((unsigned int)kind < WSE_LINK_MAL_COUNT)
		return malform_names[kind];
	return "unknown";
}

int wse_link_malform_parse(const char *name)
{
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		if (!strcmp(name, malform_names[k]))
			return k;
	return -EINVAL;
}

/* Re-seals the header CRC after a field was changed on purpose. */
static void reseal(struct wse_link_hdr *h)
{
	h->hdr_crc = htole32(wse_crc32c(0, h, WSE_LINK_HDR_CRC_LEN));
}

size_t wse_link_malform_build(enum wse_link_malform kind, uint64_t *rng,
			      uint8_t version, uint8_t opcode, uint32_t tag,
			      uint8_t *buf, bool *close_after)
{
	struct wse_link_frame f = {
		.version = version,
		.opcode = opcode,
		.flags = WSE_LINK_F_RESPONSE,
		.tag = tag,
	};
	struct wse_link_hdr h;
	struct wse_link_status st;
	uint8_t *payload = buf + sizeof(h);
	size_t plen = sizeof(st);
	uint64_t r = wse_splitmix64(rng);

	*close_after = false;
	wse_link_status_encode(&st, WSE_LINK_OK);
	memcpy(payload, &st, sizeof(st));

	if (kind == WSE_LINK_MAL_RANDOM) {
		size_t n = 1 + r % (WSE_LINK_MALFORM_MAX - 1);

		for (size_t i = 0; i < n; i += 8) {
			uint64_t v = wse_splitmix64(rng);

			memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
		}
		/* Random bytes with a valid magic get past the first check. */
		if (r & 1 && n >= 4) {
			uint32_t magic = htole32(WSE_LINK_MAGIC);

			memcpy(buf, &magic, 4);
		}
		return n;
	}
	if (kind == WSE_LINK_MAL_SHORT_STATUS)
		plen = r % sizeof(st);
	if (kind == WSE_LINK_MAL_UNKNOWN_TAG)
		f.tag = tag ^ (0x40000000U | (uint32_t)(r >> 40));
	if (kind == WSE_LINK_MAL_UNKNOWN_OPCODE) {
		/* Anything the protocol does not define: 0, 0x06..0x0f, 0x12..0x1f, 0x2b..0xff. */
		static const uint8_t unknown[] = { 0x00, 0x06, 0x0f, 0x12, 0x7f, 0x80, 0xfe, 0xff };

		f.opcode = unknown[r % sizeof(unknown)];
	}
	f.length = (uint32_t)plen;
	f.data_crc = wse_crc32c(0, payload, plen);
	wse_link_hdr_encode(&h, &f);

	switch (kind) {
	case WSE_LINK_MAL_BAD_MAGIC:
		h.magic ^= htole32(1U << (r % 32));
		reseal(&h);
		break;
	case WSE_LINK_MAL_BAD_HDR_CRC:
		h.hdr_crc ^= htole32(1U << (r % 32));
		break;
	case WSE_LINK_MAL_BAD_VERSION:
		h.version = (uint8_t)(version + 1 + r % 254);
		reseal(&h);
		break;
	case WSE_LINK_MAL_BAD_FLAGS:
		h.flags |= htole16((uint16_t)(0x0002U << (r % 15)));
		reseal(&h);
		break;
	case WSE_LINK_MAL_BAD_RESERVED:
		h.reserved = htole16((uint16_t)(1 + r % 0xfffe));
		reseal(&h);
		break;
	case WSE_LINK_MAL_HUGE_LENGTH:
		/* Beyond any negotiated maximum; no payload follows. */
		h.length = htole32(WSE_LINK_PAYLOAD_LIMIT + 1 + (uint32_t)(r % 0x7fffffff));
		reseal(&h);
		memcpy(buf, &h, sizeof(h));
		return sizeof(h);
	case WSE_LINK_MAL_BAD_DATA_CRC:
		h.data_crc ^= htole32(1U << (r % 32));
		reseal(&h);
		break;
	case WSE_LINK_MAL_TRUNCATED:
		/* Either a cut header or a frame whose payload never completes. */
		*close_after = true;
		if (r & 1) {
			memcpy(buf, &h, sizeof(h));
			return 1 + (r >> 1) % (sizeof(h) - 1);
		}
		h.length = htole32(64 + (uint32_t)(r >> 1) % 256);
		reseal(&h);
		memcpy(buf, &h, sizeof(h));
		return sizeof(h) + plen;
	default:
		break;
	}
	memcpy(buf, &h, sizeof(h));
	return sizeof(h) + plen;
}
