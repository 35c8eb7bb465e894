// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * splitmix64 (Steele, Lea and Flood, 2014): tiny, fast, and every seed
 * gives a good sequence, which is all initialisation and test data need.
 */
#include "wse/engine.h"

void engine_rng_seed(struct engine_rng *rng, uint64_t seed)
{
	rng->state = seed;
}

uint64_t engine_rng_next(struct engine_rng *rng)
{
	uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

float engine_rng_uniform(struct engine_rng *rng)
{
	/* The top 24 bits fill a float's significand exactly. */
	return (float)(engine_rng_next(rng) >> 40) * 0x1p-24f;
}
