// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gradient sum tree (wse/engine.h): the one order in which partial
 * gradients are added, on a device over its micro-batches and in SwarmX
 * over systems.
 */
#include "wse/engine.h"
#include "vec.h"

void engine_vec_add(float *acc, const float *x, size_t n)
{
	size_t j = 0;

	for (; j + VLEN <= n; j += VLEN)
		vstore(acc + j, vload(acc + j) + vload(x + j));
	for (; j < n; j++)
		acc[j] += x[j];
}

unsigned int engine_sum_tree_split(unsigned int c)
{
	unsigned int h = 1;

	while (2 * h < c)
		h *= 2;
	return h;
}

void engine_sum_tree(float *const *part, unsigned int n, size_t floats)
{
	unsigned int h;

	if (n < 2)
		return;
	h = engine_sum_tree_split(n);
	engine_sum_tree(part, h, floats);
	engine_sum_tree(part + h, n - h, floats);
	engine_vec_add(part[0], part[h], floats);
}
