// SPDX-License-Identifier: GPL-2.0-only
/* Input conversion: the host sends pixels as bytes (a quarter of the link
 * traffic of fp32); the device scales them to [0, 1].
 */
#include <errno.h>

#include "engine.h"

int engine_pixels_to_f32(const uint8_t *px, size_t n, float *out)
{
	if (!px || !out || !n)
		return -EINVAL;
	/* Division, not a multiply by 1/255, so 255 maps to exactly 1.0f. */
	for (size_t i = 0; i < n; i++)
		out[i] = (float)px[i] / 255.0f;
	return 0;
}
