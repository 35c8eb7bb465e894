/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/splitmix64.h - the project's one seeded generator: splitmix64
 * (Steele, Lea and Flood, 2014). Small, fully specified, and every seed
 * gives a good sequence, which is all weight initialisation, shuffles,
 * test data and fuzzing need. The .wsep format names it for initial
 * weights (Documentation/wsep-format.rst), so its bits are a contract:
 * the host and the firmware draw the same weights from the same seed.
 */
#ifndef WSE_SPLITMIX64_H
#define WSE_SPLITMIX64_H

#include <stdint.h>

/* The state is a counter: draw n of a stream seeded s is draw 0 of s + n * this. */
#define WSE_SPLITMIX64_GAMMA	0x9e3779b97f4a7c15ULL

/* The next 64 bits of the stream whose state is *@state. */
static inline uint64_t wse_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += WSE_SPLITMIX64_GAMMA);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform float in [0, 1) from the draw's top 24 bits, which a float holds exactly. */
static inline float wse_splitmix64_unit(uint64_t *state)
{
	return (float)(wse_splitmix64(state) >> 40) * 0x1p-24f;
}

#endif /* WSE_SPLITMIX64_H */
