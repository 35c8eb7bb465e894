// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sentences for the engine's error codes, for the firmware's messages. */
#include <errno.h>

#include "wse/engine.h"

const char *engine_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -EINVAL:
		return "invalid argument (NULL pointer, zero or inconsistent size, bad layer index, batch larger than the workspace, bad hyperparameter, or layer stack call out of order)";
	case -EOVERFLOW:
		return "dimension too large for the BLAS interface";
	case -EDOM:
		return "label out of range (not smaller than the number of classes)";
	case -ENOMEM:
		return "out of memory";
	case -ERANGE:
		return "no loss scale gives finite fp16 gradients";
	default:
		return "unknown engine error";
	}
}
