/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Float buffer allocation shared by the engine's create functions. */
#ifndef WSE_FIRMWARE_ENGINE_BUFFER_H
#define WSE_FIRMWARE_ENGINE_BUFFER_H

#include <stddef.h>

/* n zeroed floats, 64-byte aligned (a cache line, an AVX-512 vector);
 * NULL on overflow or out of memory. Free with free().
 */
float *engine_alloc_floats(size_t n);

#endif
