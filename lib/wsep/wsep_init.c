// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Deterministic initial weights from the program's seed, so that the host
 * (MemoryX) and the firmware produce the same bits without shipping them.
 * splitmix64 is small, fully specified and good enough for initialisation;
 * one stream runs through all layers in order, W then b, which is what the
 * firmware engine's engine_params_init() draws too.
 */
#include <math.h>

#include "wse/splitmix64.h"
#include "wse/wsep.h"

/* A uniform draw in [-bound, bound) from the top 24 bits, exact in float. */
static float draw(uint64_t *state, float bound)
{
	return (2.0f * wse_splitmix64_unit(state) - 1.0f) * bound;
}

uint64_t wsep_layer_params(const struct wsep_layer *l)
{
	return l->kind == WSEP_LAYER_UNIT ? l->params : (uint64_t)l->in * l->out + l->out;
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
	uint64_t state = seed + WSE_SPLITMIX64_GAMMA * offset;
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
