/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ReLU in place, for the dense kernels' fused epilogue. */
#ifndef WSE_FIRMWARE_ENGINE_RELU_H
#define WSE_FIRMWARE_ENGINE_RELU_H

#include <stddef.h>

void engine_relu_inplace(float *x, size_t n);

#endif
