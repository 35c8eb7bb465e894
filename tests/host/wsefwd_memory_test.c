// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsefwd's sparse device memory on its own: a wafer-sized capacity costs
 * only the chunks written, unwritten memory maps to zeros, scatter lists
 * split at chunk boundaries, and range checks do not overflow.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "../../firmware-sim/fwd_memory.h"

TEST(wse2_capacity_is_sparse)
{
	const uint64_t cap = 750ULL * 994 * 48 * 1024;	/* ~36.6 GB */
	struct iovec iov[FWD_MEM_MAX_IOV];
	struct fwd_memory m;
	int cnt;

	ASSERT_EQ(0, fwd_memory_init(&m, cap));
	EXPECT_EQ(0U, m.resident);
	/* Write at the very end and in the middle: two chunks, no more. */
	ASSERT_EQ(0, fwd_memory_map(&m, cap - 100, 100, true, iov, &cnt));
	EXPECT_EQ(1, cnt);
	memset(iov[0].iov_base, 0xab, 100);
	ASSERT_EQ(0, fwd_memory_map(&m, cap / 2, 10, true, iov, &cnt));
	EXPECT_EQ(2ULL * FWD_MEM_CHUNK, m.resident);
	/* Reading back what was written, and zeros next to it. */
	ASSERT_EQ(0, fwd_memory_map(&m, cap - 200, 200, false, iov, &cnt));
	ASSERT_EQ(1, cnt);
	EXPECT_EQ(0, ((uint8_t *)iov[0].iov_base)[99]);
	EXPECT_EQ(0xab, ((uint8_t *)iov[0].iov_base)[100]);
	EXPECT_EQ(0xab, ((uint8_t *)iov[0].iov_base)[199]);
	/* Unwritten chunks read from the shared zero chunk, allocating nothing. */
	ASSERT_EQ(0, fwd_memory_map(&m, 0, 3 * FWD_MEM_CHUNK, false, iov, &cnt));
	EXPECT_EQ(3, cnt);
	EXPECT_EQ(2ULL * FWD_MEM_CHUNK, m.resident);
	for (int i = 0; i < cnt; i++)
		EXPECT_EQ(m.zero_chunk, iov[i].iov_base);
	fwd_memory_free(&m);
}

TEST(scatter_lists_split_at_chunks)
{
	struct iovec iov[FWD_MEM_MAX_IOV];
	struct fwd_memory m;
	size_t total = 0;
	int cnt;

	ASSERT_EQ(0, fwd_memory_init(&m, 64ULL << 20));
	/* 16 MiB starting 3 bytes before a chunk boundary: 3 bytes, 15 chunks, the rest. */
	ASSERT_EQ(0, fwd_memory_map(&m, FWD_MEM_CHUNK - 3, 16U << 20, true, iov, &cnt));
	EXPECT_EQ(17, cnt);
	EXPECT_EQ(3U, iov[0].iov_len);
	for (int i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	EXPECT_EQ((size_t)16 << 20, total);
	EXPECT_LE(cnt, (int)FWD_MEM_MAX_IOV);
	/* Consecutive pieces continue each other in device memory. */
	memset(iov[0].iov_base, 1, 3);
	memset(iov[1].iov_base, 2, 1);
	ASSERT_EQ(0, fwd_memory_map(&m, FWD_MEM_CHUNK - 2, 3, false, iov, &cnt));
	ASSERT_EQ(2, cnt);
	EXPECT_EQ(1, ((uint8_t *)iov[0].iov_base)[1]);
	EXPECT_EQ(2, ((uint8_t *)iov[1].iov_base)[0]);
	fwd_memory_free(&m);
}

TEST(range_checks)
{
	struct fwd_memory m;

	ASSERT_EQ(0, fwd_memory_init(&m, 16384));
	EXPECT_TRUE(fwd_memory_in_range(&m, 0, 16384));
	EXPECT_TRUE(fwd_memory_in_range(&m, 16384, 0));
	EXPECT_TRUE(fwd_memory_in_range(&m, 16383, 1));
	EXPECT_FALSE(fwd_memory_in_range(&m, 16383, 2));
	EXPECT_FALSE(fwd_memory_in_range(&m, 16385, 0));
	EXPECT_FALSE(fwd_memory_in_range(&m, UINT64_MAX, 2));
	EXPECT_FALSE(fwd_memory_in_range(&m, 1, UINT64_MAX));
	fwd_memory_free(&m);
}

TEST_HARNESS_MAIN
