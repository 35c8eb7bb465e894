// SPDX-License-Identifier: LGPL-2.1-or-later
/* The engine's seeded numbers: the project's splitmix64 (wse/splitmix64.h). */
#include "wse/engine.h"
#include "wse/splitmix64.h"

void engine_rng_seed(struct engine_rng *rng, uint64_t seed)
{
	rng->state = seed;
}

uint64_t engine_rng_next(struct engine_rng *rng)
{
	return wse_splitmix64(&rng->state);
}

float engine_rng_uniform(struct engine_rng *rng)
{
	return wse_splitmix64_unit(&rng->state);
}
