// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deterministic initial weights from the program's seed, so that the host
 * (MemoryX) and the firmware produce the same bits without shipping them.
 * splitmix64 is small, fully specified and good enough for initialisation;
 * one stream runs through all layers in order, W then b, which is what the
 * firmware engine's engine_params_init() draws too.
 */
#include <math.h>

#include "wse/wsep.h"

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A uniform draw in [-bound, bound) from the top 24 bits, exact in float. */
static float draw(uint64_t *state, float bound)
{
	float u = (float)(splitmix64(state) >> 40) * (1.0f / 16777216.0f);

	return (2.0f * u - 1.0f) * bound;
}

uint64_t wsep_layer_params(const struct wsep_layer *l)
{
	return (uint64_t)l->in * l->out + l->out;
}

uint64_t wsep_total_params(const struct wsep_layer *layers, uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += wsep_layer_params(&layers[i]);
	return total;
}

void wsep_init_layer(uint64_t seed, uint64_t offset, uint32_t in, uint32_t out, float *w,
		     float *b)
{
	/* splitmix64's state is a counter: skip the draws of earlier layers. */
	uint64_t state = seed + 0x9E3779B97F4A7C15ULL * offset;
	float bound = 1.0f / sqrtf((float)in);
	uint64_t n = (uint64_t)in * out;

	for (uint64_t i = 0; i < n; i++)
		w[i] = draw(&state, bound);
	for (uint32_t i = 0; i < out; i++)
		b[i] = draw(&state, bound);
}

void wsep_init_weights(uint64_t seed, const struct wsep_layer *layers, uint32_t n, float *out)
{
	for (uint32_t i = 0; i < n; i++) {
		float *w = out + layers[i].weight_offset;

		wsep_init_layer(seed, layers[i].weight_offset, layers[i].in, layers[i].out, w,
				w + (uint64_t)layers[i].in * layers[i].out);
	}
}
