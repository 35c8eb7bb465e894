// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The order an epoch takes a dataset's samples in (wse/dataset.h): a
 * Fisher-Yates shuffle driven by splitmix64 from the seed and the epoch
 * number alone, so wsetrain and an appliance's input workers, and a
 * resumed run, take the very same samples.
 */
#include "wse/dataset.h"
#include "wse/splitmix64.h"

void wse_dataset_order(uint32_t *perm, uint32_t n, uint64_t seed, uint32_t epoch)
{
	uint64_t state = seed ^ (0xd1b54a32d192ed03ULL * (epoch + 1ULL));

	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	/* The modulo bias of a 64-bit draw is negligible here. */
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(wse_splitmix64(&state) % i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
}
