// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

float *engine_alloc_floats(size_t n)
{
	const size_t align = 64;
	size_t bytes;
	float *p;

	if (!n || n > (SIZE_MAX - align) / sizeof(float))
		return NULL;
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	bytes = (n * sizeof(float) + align - 1) / align * align;
	p = aligned_alloc(align, bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}
