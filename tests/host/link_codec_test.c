// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of libwselink: CRC32C vectors, header and payload codecs,
 * every receive check, frame I/O over a socketpair, the malformed-frame
 * generator, address parsing, and a seeded, bounded fuzz of the header
 * decoder.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/link_payloads.h"
#include "wse/link_io.h"
#include "wse/link_addr.h"
#include "wse/link_malform.h"
#include "wse/splitmix64.h"

static const struct wse_link_rx_rules rules_v1 = { .version = 1, .max_payload = 4096 };

/* A valid response header the check tests then break one field at a time. */
static void good_hdr(struct wse_link_hdr *raw)
{
	struct wse_link_frame f = {
		.version = 1, .opcode = WSE_LINK_OP_MEM_READ, .flags = WSE_LINK_F_RESPONSE,
		.queue = 2, .tag = 0xdeadbeef, .length = 100, .data_crc = 0x12345678,
	};

	wse_link_hdr_encode(raw, &f);
}

static void reseal(struct wse_link_hdr *raw)
{
	raw->hdr_crc = htole32(wse_crc32c(0, raw, WSE_LINK_HDR_CRC_LEN));
}

TEST(crc32c_standard_vectors)
{
	uint8_t buf[32];

	EXPECT_EQ(0xE3069283U, wse_crc32c(0, "123456789", 9));
	EXPECT_EQ(0xE3069283U, wse_crc32c_portable(0, "123456789", 9));
	EXPECT_EQ(0U, wse_crc32c(0, "", 0));
	/* RFC 3720 (iSCSI) B.4 vectors. */
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0x8A9136AAU, wse_crc32c(0, buf, 32));
	memset(buf, 0xff, sizeof(buf));
	EXPECT_EQ(0x62A8AB43U, wse_crc32c(0, buf, 32));
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	EXPECT_EQ(0x46DD794EU, wse_crc32c(0, buf, 32));
	EXPECT_EQ(0x46DD794EU, wse_crc32c_portable(0, buf, 32));
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	EXPECT_EQ(0x113FDB5CU, wse_crc32c(0, buf, 32));
}

/* The hardware and table paths agree at every length and alignment, and
 * chaining equals one pass.
 */
TEST(crc32c_paths_agree_and_chain)
{
	uint8_t buf[1100];
	uint64_t rng = 42;
	struct iovec iov[3];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)wse_splitmix64(&rng);
	for (size_t off = 0; off < 8; off++) {
		for (size_t len = 0; len + off <= 1060; len += 7) {
			uint32_t a = wse_crc32c(0, buf + off, len);

			ASSERT_EQ(a, wse_crc32c_portable(0, buf + off, len));
			ASSERT_EQ(a, wse_crc32c(wse_crc32c(0, buf + off, len / 3),
						buf + off + len / 3, len - len / 3));
		}
	}
	iov[0] = (struct iovec){ buf, 5 };
	iov[1] = (struct iovec){ buf + 5, 0 };
	iov[2] = (struct iovec){ buf + 5, 995 };
	EXPECT_EQ(wse_crc32c(0, buf, 1000), wse_crc32c_iov(0, iov, 3));
}

/*
 * Bulk buffers go three lanes at a time (blocks of 3 x 4096 and 3 x 256
 * bytes): around and across those sizes, from every alignment, the result
 * is the table path's, and chaining at any cut equals one pass.
 */
TEST(crc32c_lanes_agree_on_bulk_data)
{
	static const size_t lens[] = {
		767, 768, 769, 775, 1536, 2311, 12287, 12288, 12289, 12295, 13056,
		24576 + 768 + 13, 65536 + 3, 200003,
	};
	size_t cap = 200003 + 16;
	uint8_t *buf = malloc(cap);
	uint64_t rng = 7;

	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < cap; i++)
		buf[i] = (uint8_t)wse_splitmix64(&rng);
	for (size_t off = 0; off < 8; off += 3) {
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			size_t len = lens[i], cut = len / 5 + off;
			uint32_t a = wse_crc32c(0, buf + off, len);

			EXPECT_EQ(wse_crc32c_portable(0, buf + off, len), a)
				TH_LOG("length %zu at offset %zu", len, off);
			EXPECT_EQ(a, wse_crc32c(wse_crc32c(0, buf + off, cut), buf + off + cut,
						len - cut));
			EXPECT_EQ(wse_crc32c_portable(0x12345678U, buf + off, len),
				  wse_crc32c(0x12345678U, buf + off, len));
		}
	}
	free(buf);
}

TEST(header_round_trip)
{
	struct wse_link_frame in = {
		.version = 1, .opcode = WSE_LINK_OP_MEM_WRITE, .flags = 0,
		.queue = 3, .tag = 0x01020304, .length = 4096, .data_crc = 0xa5a5a5a5,
	};
	struct wse_link_frame out;
	struct wse_link_err err;
	struct wse_link_hdr raw;
	const uint8_t *b = (const uint8_t *)&raw;

	wse_link_hdr_encode(&raw, &in);
	/* Little-endian on the wire, whatever the host. */
	EXPECT_EQ('W', b[0]);
	EXPECT_EQ('S', b[1]);
	EXPECT_EQ('E', b[2]);
	EXPECT_EQ('1', b[3]);
	EXPECT_EQ(1, b[offsetof(struct wse_link_hdr, version)]);
	EXPECT_EQ(WSE_LINK_OP_MEM_WRITE, b[offsetof(struct wse_link_hdr, opcode)]);
	EXPECT_EQ(3, b[offsetof(struct wse_link_hdr, queue)]);
	EXPECT_EQ(0x04, b[offsetof(struct wse_link_hdr, tag)]);
	EXPECT_EQ(0x01, b[offsetof(struct wse_link_hdr, tag) + 3]);
	EXPECT_EQ(0x00, b[offsetof(struct wse_link_hdr, length)]);
	EXPECT_EQ(0x10, b[offsetof(struct wse_link_hdr, length) + 1]);
	EXPECT_EQ(wse_crc32c(0, b, offsetof(struct wse_link_hdr, hdr_crc)), le32toh(raw.hdr_crc));
	ASSERT_EQ(0, wse_link_hdr_decode(&raw, &rules_v1, &out, &err));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
}

TEST(header_checks_each_rule)
{
	struct wse_link_frame f;
	struct wse_link_err err;
	struct wse_link_hdr raw;

	good_hdr(&raw);
	ASSERT_EQ(0, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));

	good_hdr(&raw);
	raw.magic ^= htole32(0x100);
	reseal(&raw);
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_MAGIC, err.check);
	EXPECT_NE(NULL, strstr(err.text, "magic"));

	good_hdr(&raw);
	raw.tag ^= htole32(1);
	EXPECT_EQ(-EBADMSG, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_HDR_CRC, err.check);

	good_hdr(&raw);
	raw.hdr_crc ^= htole32(0x80000000U);
	EXPECT_EQ(-EBADMSG, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_HDR_CRC, err.check);

	good_hdr(&raw);
	raw.version = 2;
	reseal(&raw);
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_VERSION, err.check);

	good_hdr(&raw);
	raw.flags |= htole16(0x8000);
	reseal(&raw);
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_FLAGS, err.check);
	EXPECT_NE(NULL, strstr(err.text, "0x8000"));

	good_hdr(&raw);
	raw.reserved = htole16(1);
	reseal(&raw);
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_RESERVED, err.check);

	good_hdr(&raw);
	raw.reserved2 = htole32(0x100);
	reseal(&raw);
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_RESERVED, err.check);

	good_hdr(&raw);
	raw.length = htole32(4097);
	reseal(&raw);
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_LENGTH, err.check);
	EXPECT_NE(NULL, strstr(err.text, "4097"));

	good_hdr(&raw);
	raw.length = htole32(4096);
	reseal(&raw);
	EXPECT_EQ(0, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(4096U, f.length);
}

/* A frame broken in several ways reports the first rule in the order. */
TEST(header_checks_in_order)
{
	struct wse_link_frame f;
	struct wse_link_err err;
	struct wse_link_hdr raw;

	good_hdr(&raw);
	raw.magic = 0;
	raw.version = 9;	/* CRC now wrong too */
	EXPECT_EQ(-EPROTO, wse_link_hdr_decode(&raw, &rules_v1, &f, &err));
	EXPECT_EQ(WSE_LINK_CHECK_MAGIC, err.check);

	good_hdr(&raw);
	raw.version = 9;
	raw.flags = htole16(0xffff);
	EXPECT_EQ(WSE_LINK_CHECK_HDR_CRC,
		  (wse_link_hdr_decode(&raw, &rules_v1, &f, &err), err.check));

	good_hdr(&raw);
	raw.flags = htole16(0xffff);
	raw.length = htole32(0xffffffff);
	raw.reserved = 7;
	reseal(&raw);
	EXPECT_EQ(WSE_LINK_CHECK_FLAGS,
		  (wse_link_hdr_decode(&raw, &rules_v1, &f, &err), err.check));

	good_hdr(&raw);
	raw.length = htole32(0xffffffff);
	raw.reserved = 7;
	reseal(&raw);
	EXPECT_EQ(WSE_LINK_CHECK_RESERVED,
		  (wse_link_hdr_decode(&raw, &rules_v1, &f, &err), err.check));
}

TEST(data_crc_check)
{
	struct wse_link_frame f = { .length = 9, .data_crc = 0xE3069283U };
	struct wse_link_err err;

	EXPECT_EQ(0, wse_link_check_data_crc(&f, wse_crc32c(0, "123456789", 9), &err));
	EXPECT_EQ(-EBADMSG, wse_link_check_data_crc(&f, wse_crc32c(0, "123456788", 9), &err));
	EXPECT_EQ(WSE_LINK_CHECK_DATA_CRC, err.check);
}

TEST(hello_round_trip_and_checks)
{
	struct wse_link_hello_info in = {
		.version_min = 1, .version_max = 3, .caps = WSE_LINK_CAP_MEM,
		.max_payload = 1 << 20, .keepalive_ms = 5000,
	}, out;
	struct wse_link_hello raw;
	struct wse_link_err err;
	uint8_t longer[sizeof(raw) + 8] = { 0 };

	wse_link_hello_encode(&raw, &in);
	ASSERT_EQ(0, wse_link_hello_decode(&raw, sizeof(raw), &out, &err));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
	/* A later version may append fields. */
	memcpy(longer, &raw, sizeof(raw));
	EXPECT_EQ(0, wse_link_hello_decode(longer, sizeof(longer), &out, &err));

	EXPECT_EQ(-EPROTO, wse_link_hello_decode(&raw, sizeof(raw) - 1, &out, &err));
	raw.reserved = htole64(1);
	EXPECT_EQ(-EPROTO, wse_link_hello_decode(&raw, sizeof(raw), &out, &err));
	in.version_min = 4;
	wse_link_hello_encode(&raw, &in);
	EXPECT_EQ(-EINVAL, wse_link_hello_decode(&raw, sizeof(raw), &out, &err));
	in.version_min = 1;
	in.max_payload = WSE_LINK_PAYLOAD_MIN - 1;
	wse_link_hello_encode(&raw, &in);
	EXPECT_EQ(-EINVAL, wse_link_hello_decode(&raw, sizeof(raw), &out, &err));
	in.max_payload = WSE_LINK_PAYLOAD_LIMIT + 1;
	wse_link_hello_encode(&raw, &in);
	EXPECT_EQ(-EINVAL, wse_link_hello_decode(&raw, sizeof(raw), &out, &err));
}

/* RUN with flag SCALED carries the loss scale after it; the payload's length is exact either way. */
TEST(run_scale_round_trip_and_checks)
{
	struct wse_link_run_info in = { .program = 1, .kind = WSE_LINK_RUN_TRAIN |
				       WSE_LINK_RUN_RETAIN | WSE_LINK_RUN_SCALED,
				       .steps = 1, .batch = 4, .leaf = 1, .norm = 8 }, out;
	struct {
		struct wse_link_run run;
		struct wse_link_run_scale scale;
	} raw;
	struct wse_link_err err;
	float scale = -1.0f;

	_Static_assert(sizeof(raw) == 32, "RUN and its scale");
	wse_link_run_encode(&raw.run, &in);
	wse_link_run_scale_encode(&raw.scale, 65536.0f);
	ASSERT_EQ(0, wse_link_run_decode(&raw, sizeof(raw), &out, &err));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
	ASSERT_EQ(0, wse_link_run_scale_decode(&raw, sizeof(raw), &scale, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(65536.0f, scale);
	EXPECT_EQ(htole32(0x47800000), raw.scale.loss_scale);	/* 2^16, little-endian */
	/* The flag without the scale, or a scale without the flag: refused. */
	EXPECT_EQ(-EPROTO, wse_link_run_scale_decode(&raw, sizeof(raw.run), &scale, &err));
	EXPECT_NE(NULL, strstr(err.text, "RUN payload is 24 bytes, expected 32")) TH_LOG("%s", err.text);
	in.kind &= ~(uint32_t)WSE_LINK_RUN_SCALED;
	wse_link_run_encode(&raw.run, &in);
	EXPECT_EQ(-EPROTO, wse_link_run_scale_decode(&raw, sizeof(raw), &scale, &err));
	EXPECT_EQ(0, wse_link_run_scale_decode(&raw, sizeof(raw.run), &scale, &err));
	EXPECT_EQ(0.0f, scale);
	in.kind |= WSE_LINK_RUN_SCALED;
	wse_link_run_encode(&raw.run, &in);
	raw.scale.reserved = htole32(1);
	EXPECT_EQ(-EPROTO, wse_link_run_scale_decode(&raw, sizeof(raw), &scale, &err));
}

static void wse2_info(struct wse_link_device_info *d)
{
	memset(d, 0, sizeof(*d));
	d->version = 1;
	d->caps = WSE_LINK_CAP_MEM;
	d->max_payload = 1 << 20;
	d->version_min = 1;
	d->version_max = 1;
	d->device_id = 0x1122334455667788ULL;
	d->wafer_width = 750;
	d->wafer_height = 994;
	d->sram_per_pe = 48 * 1024;
	d->sram_total = 750ULL * 994 * 48 * 1024;
	d->clock_khz = 850000;
	d->num_queues = 4;
	strcpy(d->fw_version, "wsefwd test");
}

TEST(hello_reply_round_trip_and_checks)
{
	struct wse_link_device_info in, out;
	struct wse_link_hello_reply raw;
	struct wse_link_err err;

	wse2_info(&in);
	wse_link_hello_reply_encode(&raw, &in);
	ASSERT_EQ(0, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));

	/* A full 32-character version has no NUL on the wire. */
	memset(in.fw_version, 'v', 32);
	in.fw_version[32] = '\0';
	wse_link_hello_reply_encode(&raw, &in);
	ASSERT_EQ(0, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	EXPECT_EQ(32U, strlen(out.fw_version));

	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw) - 8, &out, &err));
	wse2_info(&in);
	in.sram_total--;
	wse_link_hello_reply_encode(&raw, &in);
	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	EXPECT_NE(NULL, strstr(err.text, "sram_total"));
	wse2_info(&in);
	in.num_queues = 0;
	wse_link_hello_reply_encode(&raw, &in);
	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	wse2_info(&in);
	in.version = 2;
	wse_link_hello_reply_encode(&raw, &in);
	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	wse2_info(&in);
	in.wafer_width = 0;
	in.sram_total = 0;
	wse_link_hello_reply_encode(&raw, &in);
	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	wse2_info(&in);
	in.wafer_width = in.wafer_height = 0xffffffffU;
	in.sram_per_pe = 1ULL << 40;
	wse_link_hello_reply_encode(&raw, &in);
	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
	wse2_info(&in);
	wse_link_hello_reply_encode(&raw, &in);
	raw.reserved0 = 1;
	EXPECT_EQ(-EPROTO, wse_link_hello_reply_decode(&raw, sizeof(raw), &out, &err));
}

TEST(status_error_mem_payloads)
{
	uint8_t buf[64];
	struct wse_link_status st;
	struct wse_link_err err;
	const uint8_t *rest;
	size_t rest_len, n;
	uint32_t status, code, len;
	uint64_t addr;
	char text[16];
	struct wse_link_mem mem;

	wse_link_status_encode(&st, WSE_LINK_E_RANGE);
	memcpy(buf, &st, sizeof(st));
	memcpy(buf + sizeof(st), "why", 3);
	ASSERT_EQ(0, wse_link_status_decode(buf, sizeof(st) + 3, &status, &rest, &rest_len, &err));
	EXPECT_EQ(WSE_LINK_E_RANGE, status);
	EXPECT_EQ(3U, rest_len);
	EXPECT_EQ(0, memcmp(rest, "why", 3));
	EXPECT_EQ(-EPROTO, wse_link_status_decode(buf, 7, &status, &rest, &rest_len, &err));
	buf[5] = 1;
	EXPECT_EQ(-EPROTO, wse_link_status_decode(buf, 8, &status, &rest, &rest_len, &err));

	n = wse_link_error_encode(buf, sizeof(buf), WSE_LINK_E_BUSY, "busy\x01 now, a long text");
	EXPECT_EQ(8U + 22U, n);
	ASSERT_EQ(0, wse_link_error_decode(buf, n, &code, text, sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_BUSY, code);
	/* Truncated to the buffer and made printable. */
	EXPECT_STREQ("busy? now, a lo", text);
	EXPECT_EQ(12U, wse_link_error_encode(buf, 12, WSE_LINK_E_PROTO, "abcdef"));
	EXPECT_EQ(-EPROTO, wse_link_error_decode(buf, 7, &code, text, sizeof(text), &err));

	wse_link_mem_encode(&mem, 0x123456789aULL, 4096);
	ASSERT_EQ(0, wse_link_mem_decode(&mem, sizeof(mem), &addr, &len, &err));
	EXPECT_EQ(0x123456789aULL, addr);
	EXPECT_EQ(4096U, len);
	EXPECT_EQ(-EPROTO, wse_link_mem_decode(&mem, 15, &addr, &len, &err));
	mem.reserved = 1;
	EXPECT_EQ(-EPROTO, wse_link_mem_decode(&mem, sizeof(mem), &addr, &len, &err));
}

/* CANCEL names a request by its tag; its names in logs. */
TEST(cancel_payload_and_names)
{
	struct wse_link_cancel raw;
	struct wse_link_err err;
	uint8_t buf[12] = { 0 };
	uint32_t tag = 0;

	wse_link_cancel_encode(&raw, 0xdeadbeefU);
	ASSERT_EQ(0, wse_link_cancel_decode(&raw, sizeof(raw), &tag, &err));
	EXPECT_EQ(0xdeadbeefU, tag);
	memcpy(buf, &raw, sizeof(raw));
	EXPECT_EQ(-EPROTO, wse_link_cancel_decode(buf, 7, &tag, &err));
	EXPECT_EQ(-EPROTO, wse_link_cancel_decode(buf, 12, &tag, &err));
	EXPECT_EQ(WSE_LINK_CHECK_PAYLOAD, err.check);
	raw.reserved = 1;
	EXPECT_EQ(-EPROTO, wse_link_cancel_decode(&raw, sizeof(raw), &tag, &err));
	EXPECT_STREQ("CANCEL", wse_link_op_name(WSE_LINK_OP_CANCEL));
	EXPECT_STREQ("E_CANCELED", wse_link_status_name(WSE_LINK_E_CANCELED));
}

FIXTURE(pair) {
	int fd[2];
};

FIXTURE_SETUP(pair)
{
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, self->fd));
}

FIXTURE_TEARDOWN(pair)
{
	close(self->fd[0]);
	if (self->fd[1] >= 0)
		close(self->fd[1]);
}

TEST_F(pair, send_recv_round_trip)
{
	uint8_t out[3000], in[4096];
	struct iovec iov[2] = { { out, 1000 }, { out + 1000, 2000 } };
	struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_MEM_WRITE, .tag = 7 };
	struct wse_link_frame g;
	struct wse_link_err err;
	uint64_t rng = 1;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)wse_splitmix64(&rng);
	ASSERT_EQ(0, wse_link_send(self->fd[0], &f, iov, 2, 1000, &err));
	EXPECT_EQ(3000U, f.length);
	ASSERT_EQ(0, wse_link_recv(self->fd[1], &rules_v1, &g, in, sizeof(in), 1000, &err));
	EXPECT_EQ(7U, g.tag);
	EXPECT_EQ(3000U, g.length);
	EXPECT_EQ(0, memcmp(out, in, 3000));

	/* Empty payload: data CRC 0. */
	ASSERT_EQ(0, wse_link_send(self->fd[0], &f, NULL, 0, 1000, &err));
	ASSERT_EQ(0, wse_link_recv(self->fd[1], &rules_v1, &g, in, sizeof(in), 1000, &err));
	EXPECT_EQ(0U, g.length);
	EXPECT_EQ(0U, g.data_crc);
}

TEST_F(pair, recv_detects_corrupt_payload)
{
	struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_MEM_WRITE, .tag = 7 };
	struct wse_link_frame g;
	struct wse_link_err err;
	struct wse_link_hdr raw;
	uint8_t data[16] = "0123456789abcdef", in[64];

	f.length = sizeof(data);
	f.data_crc = wse_crc32c(0, data, sizeof(data));
	wse_link_hdr_encode(&raw, &f);
	data[3] ^= 0x10;
	ASSERT_EQ((ssize_t)sizeof(raw), write(self->fd[0], &raw, sizeof(raw)));
	ASSERT_EQ((ssize_t)sizeof(data), write(self->fd[0], data, sizeof(data)));
	EXPECT_EQ(-EBADMSG, wse_link_recv(self->fd[1], &rules_v1, &g, in, sizeof(in), 1000, &err));
	EXPECT_EQ(WSE_LINK_CHECK_DATA_CRC, err.check);
}

TEST_F(pair, recv_times_out_and_sees_eof)
{
	struct wse_link_frame g;
	struct wse_link_err err;
	struct wse_link_hdr raw;
	uint8_t in[64];
	int64_t t0 = wse_link_now_ms();

	EXPECT_EQ(-ETIMEDOUT, wse_link_recv(self->fd[1], &rules_v1, &g, in, sizeof(in), 100, &err));
	EXPECT_GE(wse_link_now_ms() - t0, 100);
	EXPECT_LT(wse_link_now_ms() - t0, 2000);
	good_hdr(&raw);
	ASSERT_EQ(10, write(self->fd[0], &raw, 10));
	close(self->fd[0]);
	self->fd[0] = dup(self->fd[1]);
	EXPECT_EQ(-EPIPE, wse_link_recv(self->fd[1], &rules_v1, &g, in, sizeof(in), 1000, &err));
	EXPECT_EQ(WSE_LINK_CHECK_IO, err.check);
}

TEST_F(pair, recv_refuses_payload_larger_than_buffer)
{
	uint8_t out[200], in[100];
	struct iovec iov = { out, sizeof(out) };
	struct wse_link_frame f = { .version = 1, .opcode = WSE_LINK_OP_MEM_WRITE };
	struct wse_link_frame g;
	struct wse_link_err err;

	memset(out, 1, sizeof(out));
	ASSERT_EQ(0, wse_link_send(self->fd[0], &f, &iov, 1, 1000, &err));
	EXPECT_EQ(-EPROTO, wse_link_recv(self->fd[1], &rules_v1, &g, in, sizeof(in), 1000, &err));
}

/* Every generated kind fails exactly the check it is named after. */
TEST(malformed_frames_break_their_rule)
{
	uint8_t buf[WSE_LINK_MALFORM_MAX];
	uint64_t rng = 7;
	struct wse_link_frame f;
	struct wse_link_err err;
	struct wse_link_hdr raw;
	bool close_after;
	size_t n;

	for (int round = 0; round < 200; round++) {
		for (int k = 0; k < WSE_LINK_MAL_COUNT; k++) {
			n = wse_link_malform_build(k, &rng, 1, WSE_LINK_OP_MEM_READ, 99, buf,
						   &close_after);
			ASSERT_GT(n, 0U);
			ASSERT_LE(n, WSE_LINK_MALFORM_MAX);
			ASSERT_EQ(k, wse_link_malform_parse(wse_link_malform_name(k)));
			if (k == WSE_LINK_MAL_RANDOM)
				continue;
			if (k == WSE_LINK_MAL_TRUNCATED) {
				EXPECT_TRUE(close_after);
				continue;
			}
			EXPECT_FALSE(close_after);
			memcpy(&raw, buf, sizeof(raw));
			int ret = wse_link_hdr_decode(&raw, &rules_v1, &f, &err);

			switch (k) {
			case WSE_LINK_MAL_BAD_MAGIC:
				EXPECT_EQ(WSE_LINK_CHECK_MAGIC, err.check);
				break;
			case WSE_LINK_MAL_BAD_HDR_CRC:
				EXPECT_EQ(WSE_LINK_CHECK_HDR_CRC, err.check);
				break;
			case WSE_LINK_MAL_BAD_VERSION:
				EXPECT_EQ(WSE_LINK_CHECK_VERSION, err.check);
				break;
			case WSE_LINK_MAL_BAD_FLAGS:
				EXPECT_EQ(WSE_LINK_CHECK_FLAGS, err.check);
				break;
			case WSE_LINK_MAL_BAD_RESERVED:
				EXPECT_EQ(WSE_LINK_CHECK_RESERVED, err.check);
				break;
			case WSE_LINK_MAL_HUGE_LENGTH:
				EXPECT_EQ(WSE_LINK_CHECK_LENGTH, err.check);
				EXPECT_EQ(sizeof(raw), n);
				break;
			default:
				ASSERT_EQ(0, ret);
				ASSERT_EQ(n, sizeof(raw) + f.length);
				ret = wse_link_check_data_crc(&f, wse_crc32c(0, buf + sizeof(raw), f.length), &err);
				if (k == WSE_LINK_MAL_BAD_DATA_CRC) {
					EXPECT_EQ(-EBADMSG, ret);
					break;
				}
				ASSERT_EQ(0, ret);
				if (k == WSE_LINK_MAL_UNKNOWN_OPCODE)
					EXPECT_STREQ("unknown", wse_link_op_name(f.opcode));
				if (k == WSE_LINK_MAL_UNKNOWN_TAG)
					EXPECT_NE(99U, f.tag);
				if (k == WSE_LINK_MAL_SHORT_STATUS)
					EXPECT_LT(f.length, sizeof(struct wse_link_status));
			}
		}
	}
	EXPECT_EQ(-EINVAL, wse_link_malform_parse("no-such-kind"));
}

TEST(address_parsing)
{
	struct wse_link_addr a;
	char err[200];

	ASSERT_EQ(0, wse_link_addr_parse("tcp:127.0.0.1:4000", &a, err, sizeof(err)));
	EXPECT_FALSE(a.is_unix);
	EXPECT_STREQ("127.0.0.1", a.host);
	EXPECT_STREQ("4000", a.port);
	ASSERT_EQ(0, wse_link_addr_parse("tcp:[::1]:0", &a, err, sizeof(err)));
	EXPECT_STREQ("::1", a.host);
	EXPECT_STREQ("0", a.port);
	ASSERT_EQ(0, wse_link_addr_parse("unix:/tmp/x.sock", &a, err, sizeof(err)));
	EXPECT_TRUE(a.is_unix);
	EXPECT_STREQ("/tmp/x.sock", a.path);

	EXPECT_EQ(-EINVAL, wse_link_addr_parse("udp:1.2.3.4:5", &a, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "tcp:HOST:PORT or unix:PATH"));
	EXPECT_EQ(-EINVAL, wse_link_addr_parse("tcp:host", &a, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, wse_link_addr_parse("tcp::80", &a, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, wse_link_addr_parse("tcp:h:65536", &a, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, wse_link_addr_parse("tcp:h:8x", &a, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, wse_link_addr_parse("tcp:h:", &a, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, wse_link_addr_parse("unix:", &a, err, sizeof(err)));
}

/*
 * Seeded, bounded fuzz of the decoder: random headers and single-bit
 * mutations of a valid one. Nothing may crash (ASan/UBSan watch), every
 * rejection names a check, and whatever is accepted re-encodes to the same
 * bytes.
 */
TEST(fuzz_header_decoder)
{
	uint64_t rng = 0x5eed;
	struct wse_link_frame f;
	struct wse_link_err err;
	struct wse_link_hdr raw, again;
	int accepted = 0, rejected = 0;

	for (int i = 0; i < 200000; i++) {
		if (i & 1) {
			uint64_t words[(sizeof(raw) + 7) / 8];

			for (size_t w = 0; w < sizeof(words) / 8; w++)
				words[w] = wse_splitmix64(&rng);
			memcpy(&raw, words, sizeof(raw));
			if (i & 2)
				raw.magic = htole32(WSE_LINK_MAGIC);
			if (i & 4)
				reseal(&raw);
		} else {
			uint64_t r = wse_splitmix64(&rng);

			good_hdr(&raw);
			((uint8_t *)&raw)[r % sizeof(raw)] ^= (uint8_t)(1U << ((r >> 8) % 8));
			if (r & 0x10000)
				reseal(&raw);
		}
		int ret = wse_link_hdr_decode(&raw, &rules_v1, &f, &err);

		if (ret) {
			ASSERT_TRUE(ret == -EPROTO || ret == -EBADMSG);
			ASSERT_NE(WSE_LINK_CHECK_OK, err.check);
			rejected++;
			continue;
		}
		ASSERT_LE(f.length, rules_v1.max_payload);
		wse_link_hdr_encode(&again, &f);
		ASSERT_EQ(0, memcmp(&raw, &again, sizeof(raw)));
		accepted++;
	}
	EXPECT_GT(accepted, 1000);
	EXPECT_GT(rejected, 1000);
	TH_LOG("fuzz: %d accepted, %d rejected", accepted, rejected);
}

TEST_HARNESS_MAIN
