// SPDX-License-Identifier: LGPL-2.1-or-later
/* Input conversion: the host sends pixels as bytes (a quarter of the link
 * traffic of fp32); the device scales them to [0, 1].
 */
#include <errno.h>

#include "wse/engine.h"
#include "vec.h"

int engine_pixels_to_f32(const uint8_t *px, size_t n, float *out)
{
	size_t i = 0;

	if (!px || !out || !n)
		return -EINVAL;
	/* Division, not a multiply by 1/255, so that each value is the
	 * correctly rounded quotient and 255 maps to exactly 1.0f.
	 */
	for (; i + VLEN <= n; i += VLEN) {
		vint p = { px[i], px[i + 1], px[i + 2], px[i + 3] };

		vstore(out + i, __builtin_convertvector(p, vfloat) / vsplat(255.0f));
	}
	for (; i < n; i++)
		out[i] = (float)px[i] / 255.0f;
	return 0;
}
