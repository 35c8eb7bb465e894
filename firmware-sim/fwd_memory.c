// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sparse device memory. A chunk table covers the whole capacity (40 GB of
 * SRAM is 40k pointers); chunks are calloc'd on the first write that
 * touches them. The link reads write payloads straight into the chunks and
 * sends read responses straight from them.
 */
#include <errno.h>
#include <stdlib.h>

#include "fwd_memory.h"

int fwd_memory_init(struct fwd_memory *m, uint64_t capacity)
{
	m->capacity = capacity;
	m->nchunks = (size_t)((capacity + FWD_MEM_CHUNK - 1) / FWD_MEM_CHUNK);
	m->resident = 0;
	m->chunks = calloc(m->nchunks ? m->nchunks : 1, sizeof(*m->chunks));
	m->zero_chunk = calloc(1, FWD_MEM_CHUNK);
	if (!m->chunks || !m->zero_chunk) {
		fwd_memory_free(m);
		return -ENOMEM;
	}
	return 0;
}

void fwd_memory_free(struct fwd_memory *m)
{
	if (m->chunks)
		for (size_t i = 0; i < m->nchunks; i++)
			free(m->chunks[i]);
	free(m->chunks);
	free(m->zero_chunk);
	m->chunks = NULL;
	m->zero_chunk = NULL;
	m->resident = 0;
}

bool fwd_memory_in_range(const struct fwd_memory *m, uint64_t addr, uint64_t len)
{
	return addr <= m->capacity && len <= m->capacity - addr;
}

int fwd_memory_map(struct fwd_memory *m, uint64_t addr, uint32_t len, bool for_write,
		   struct iovec *iov, int *iovcnt)
{
	int n = 0;

	while (len) {
		size_t idx = (size_t)(addr / FWD_MEM_CHUNK);
		uint32_t off = (uint32_t)(addr % FWD_MEM_CHUNK);
		uint32_t take = FWD_MEM_CHUNK - off;
		uint8_t *base = m->chunks[idx];

		if (take > len)
			take = len;
		if (!base && for_write) {
			base = calloc(1, FWD_MEM_CHUNK);
			if (!base)
				return -ENOMEM;
			m->chunks[idx] = base;
			m->resident += FWD_MEM_CHUNK;
		}
		if (n == (int)FWD_MEM_MAX_IOV)
			return -E2BIG;
		iov[n].iov_base = (base ? base : m->zero_chunk) + off;
		iov[n].iov_len = take;
		n++;
		addr += take;
		len -= take;
	}
	*iovcnt = n;
	return 0;
}
