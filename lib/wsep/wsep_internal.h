/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between the .wsep reader, validator and writer; not public. */
#ifndef WSEP_INTERNAL_H
#define WSEP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "wse/wsep.h"

/* Formats a message into @err and returns -EINVAL. */
int wsep_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Field ranges and cross-field consistency of a decoded program. */
int wsep_check_program(const struct wsep_program *p, char *err, size_t errlen);

/* Structural checks and decoding into @p (arrays allocated; on failure
 * @p may hold partial arrays: release them with wsep_program_release()).
 */
int wsep_decode(const void *buf, size_t len, uint32_t supported, struct wsep_program *p,
		char *err, size_t errlen);

/* A graph program's graph against its layers (units), input and weights (wsep_graph.c). */
int wsep_check_graph(const struct wsep_program *p, char *err, size_t errlen);

void wsep_program_release(struct wsep_program *p);


#endif /* WSEP_INTERNAL_H */
