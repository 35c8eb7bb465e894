/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the coordinator asks of MemoryX, SwarmX and the input workers: the
 * link protocol's framing, handshake and link-level opcodes, the exec
 * opcodes where they mean the same (PROGRAM_LOAD of the job's program,
 * PARAMS_READ/WRITE of its weights and optimizer state, REGION_MAP of a
 * peer's region), and these. The services run on the appliance's own
 * machine, beside the coordinator, so their structures are in host byte
 * order; each is checked for size and range like any frame
 * (Documentation/wse-appliance.rst, "Inside the appliance").
 */
#ifndef APPLIANCE_SVC_PROTO_H
#define APPLIANCE_SVC_PROTO_H

#include <stdint.h>

#include "wse_link.h"

enum svc_op {
	SVC_OP_STATS = 0x40,		/* empty; struct svc_stats */
	SVC_OP_MX_UPDATE = 0x41,	/* struct svc_update; empty */
	SVC_OP_SX_OPEN = 0x42,		/* struct svc_sx_open; struct wse_link_region_map */
	SVC_OP_SX_REDUCE = 0x43,	/* struct svc_reduce; uint32_t: the slot holding the sum */
	SVC_OP_IN_OPEN = 0x44,		/* struct svc_in_open; uint32_t: samples in the dataset */
	SVC_OP_IN_FILL = 0x45,		/* struct svc_fill; empty */
	SVC_OP_MX_REGION = 0x46,	/* empty; struct wse_link_region_map of the weights */
	SVC_OP_MX_HOLD = 0x47,		/* struct svc_hold; uint32_t: 1 if the gradient is finite */
	SVC_OP_MX_COMMIT = 0x48,	/* struct svc_commit; empty */
};

/* A service's counters. */
struct svc_stats {
	uint64_t capacity;	/* MemoryX: bytes it may hold */
	uint64_t held;		/* MemoryX: bytes held; SwarmX: of its slots */
	uint64_t ops;		/* MemoryX: layer updates; SwarmX: reductions; input: batches */
	uint64_t bytes;		/* SwarmX: gradient bytes summed; input: samples read */
};

/*
 * MemoryX: the optimizer step @t of layer @layer from the gradient at
 * @offset (bytes) of region @region (SwarmX's slots, mapped with REGION_MAP).
 */
struct svc_update {
	uint32_t layer;
	uint32_t region;
	uint64_t t;
	uint64_t offset;
};

/*
 * MemoryX, fp16 loss scaling: layer @layer's summed gradient at @offset of
 * region @region divided by @scale in place and held for the step's
 * commit (memoryx_store.h, mx_store_hold()).
 */
struct svc_hold {
	uint32_t layer;
	uint32_t region;
	uint64_t offset;
	float scale;
	uint32_t reserved;
};

/* MemoryX: the held step @t applied (every layer) if @apply, else skipped. */
struct svc_commit {
	uint64_t t;
	uint32_t apply;
	uint32_t reserved;
};

/* SwarmX: a slot of @floats floats for each of @systems systems. */
struct svc_sx_open {
	uint32_t systems;
	uint32_t reserved;
	uint64_t floats;
};

#define SVC_REDUCE_MAX	16

/*
 * SwarmX: floats [@first, @first + @count) of the slots @slot[0 ..
 * @n - 1], in that order, summed in the gradient tree into the first.
 */
struct svc_reduce {
	uint32_t n;
	uint32_t slot[SVC_REDUCE_MAX];
	uint32_t reserved;
	uint64_t first;
	uint64_t count;
};

/* Input: the dataset and order of the coming batches, and what the program takes. */
#define SVC_INPUT_MAX_RANK	4U	/* WSE_DATASET_MAX_RANK */
struct svc_in_open {
	struct wse_link_input in;	/* as the host wrote it (little-endian) */
	uint32_t input_dim;		/* bytes of one sample */
	uint32_t classes;
	uint32_t rank;			/* of a sample: wsep_input_shape() */
	uint32_t shape[SVC_INPUT_MAX_RANK];
};

/*
 * Input: the next @count samples of the order into the coordinator's input
 * region (mapped with REGION_MAP as region 1), pixels at @samples_at and
 * labels (int32) at @labels_at.
 */
struct svc_fill {
	uint32_t count;
	uint32_t reserved;
	uint64_t samples_at;
	uint64_t labels_at;
};

#endif /* APPLIANCE_SVC_PROTO_H */
