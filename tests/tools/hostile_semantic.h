/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse-hostile-peer's semantic mode: wrong answers with good digests,
 * relayed from a real firmware.
 */
#ifndef HOSTILE_SEMANTIC_H
#define HOSTILE_SEMANTIC_H

#include <stdbool.h>
#include <stdint.h>

/* The ways an answer is told wrongly. */
enum semantic_kind {
	SEM_STATUS,		/* an error status instead of the answer */
	SEM_SHORT,		/* half the data */
	SEM_LONG,		/* 4 KiB more data than asked for */
	SEM_TAG_OTHER,		/* first to another request's tag, then right */
	SEM_TAG_UNISSUED,	/* to a tag the host never gave out */
	SEM_OPCODE,		/* another opcode */
	SEM_QUEUE,		/* another queue */
	SEM_DUPLICATE,		/* the answer twice */
	SEM_DROP,		/* no answer */
	SEM_KEEPALIVE,		/* a keepalive answer nobody asked for, first */
	SEM_REQUEST,		/* a request of the device's own, first */
	SEM_COUNT
};

struct semantic_opts {
	const char *upstream;		/* the real firmware */
	volatile int *stop;		/* set by a signal: end the connection */
	uint64_t every;			/* lie about one answer in this many */
	long limit;			/* stop a connection after this many lies */
	bool kinds[SEM_COUNT];
};

struct semantic_stats {
	long frames;			/* frames sent to hosts */
	long mutated;			/* of them, told wrongly */
	long per_kind[SEM_COUNT];
};

const char *semantic_kind_name(enum semantic_kind k);
int semantic_parse_kinds(const char *list, bool *kinds);
/* Relays host @fd to the upstream firmware until either side ends. */
int semantic_serve(int fd, const struct semantic_opts *o, uint64_t *rng,
		   struct semantic_stats *st);

#endif /* HOSTILE_SEMANTIC_H */
