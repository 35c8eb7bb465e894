/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A .wsep program's optimizer as the engine's. The firmware and MemoryX
 * both build theirs here, so a layer updated on the wafer and one updated
 * in MemoryX take bit-identical steps. Header only: the engine itself does
 * not know the .wsep format.
 */
#ifndef WSE_ENGINE_WSEP_H
#define WSE_ENGINE_WSEP_H

#include <errno.h>

#include "wse/engine.h"
#include "wse/wsep.h"

/* Fills @e from @o. Returns 0, or -EINVAL for an unknown optimizer kind. */
static inline int engine_optim_from_wsep(const struct wsep_optimizer *o, struct engine_optim *e)
{
	enum engine_optim_kind kind;

	switch (o->kind) {
	case WSEP_OPT_SGD:
		kind = ENGINE_SGD;
		break;
	case WSEP_OPT_MOMENTUM:
		kind = ENGINE_MOMENTUM;
		break;
	case WSEP_OPT_ADAM:
		kind = ENGINE_ADAM;
		break;
	default:
		return -EINVAL;
	}
	engine_optim_defaults(e, kind, o->lr);
	e->momentum = o->momentum;
	e->beta1 = o->beta1;
	e->beta2 = o->beta2;
	e->eps = o->eps;
	e->weight_decay = o->weight_decay;
	return 0;
}

#endif /* WSE_ENGINE_WSEP_H */
