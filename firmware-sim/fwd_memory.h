/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device memory: the wafer's SRAM as one flat byte range of a hard
 * capacity. Backed sparsely in chunks allocated on first write, so a 40 GB
 * wafer costs only what the host actually wrote; never-written memory
 * reads as zeros.
 */
#ifndef FWD_MEMORY_H
#define FWD_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define FWD_MEM_CHUNK		(1U << 20)
/* Scatter entries for one access of up to WSE_LINK_PAYLOAD_LIMIT bytes. */
#define FWD_MEM_MAX_IOV		((16U << 20) / FWD_MEM_CHUNK + 2)

struct fwd_memory {
	uint64_t capacity;
	size_t nchunks;
	uint8_t **chunks;	/* NULL: never written, reads as zeros */
	uint8_t *zero_chunk;	/* shared read source for unwritten chunks */
	uint64_t resident;	/* bytes of chunks allocated */
};

int fwd_memory_init(struct fwd_memory *m, uint64_t capacity);
void fwd_memory_free(struct fwd_memory *m);

/* Is [addr, addr + len) inside the device memory? */
bool fwd_memory_in_range(const struct fwd_memory *m, uint64_t addr, uint64_t len);

/*
 * Describes [addr, addr + len) (in range, len <= 16 MiB) as a scatter list
 * into the backing chunks: for writing, missing chunks are allocated
 * (-ENOMEM if that fails); for reading, they map to the zero chunk, which
 * must not be written. Returns 0 and sets *@iovcnt.
 */
int fwd_memory_map(struct fwd_memory *m, uint64_t addr, uint32_t len, bool for_write,
		   struct iovec *iov, int *iovcnt);

#endif /* FWD_MEMORY_H */
