// SPDX-License-Identifier: LGPL-2.1-or-later
/* Network shapes for the layer stack. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "wse/engine.h"

int engine_shape_check(const struct engine_shape *shape)
{
	if (!shape || !shape->layers || shape->layers > ENGINE_MAX_LAYERS)
		return -EINVAL;
	for (size_t k = 0; k <= shape->layers; k++) {
		if (!shape->width[k])
			return -EINVAL;
		if (shape->width[k] > INT_MAX)
			return -EOVERFLOW;
	}
	/* The logits are the classes of byte labels. */
	return shape->width[shape->layers] <= 256 ? 0 : -EINVAL;
}

int engine_shape_mlp(struct engine_shape *shape, const size_t *widths,
		     size_t layers)
{
	struct engine_shape s;
	int err;

	if (!shape || !widths || !layers || layers > ENGINE_MAX_LAYERS)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.layers = layers;
	for (size_t k = 0; k <= layers; k++)
		s.width[k] = widths[k];
	for (size_t k = 0; k + 1 < layers; k++)
		s.relu[k] = true;
	err = engine_shape_check(&s);
	if (err)
		return err;
	*shape = s;
	return 0;
}

bool engine_shape_equal(const struct engine_shape *a, const struct engine_shape *b)
{
	if (!a || !b || a->layers != b->layers)
		return false;
	for (size_t k = 0; k < a->layers; k++)
		if (a->width[k] != b->width[k] || a->relu[k] != b->relu[k])
			return false;
	return a->width[a->layers] == b->width[b->layers];
}
