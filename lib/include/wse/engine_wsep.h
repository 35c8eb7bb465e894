/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A .wsep program's optimizer, learning-rate schedule and graph as the
 * engine's. The firmware and MemoryX both build theirs here, so a layer
 * updated on the wafer and one updated in MemoryX take bit-identical
 * steps. The optimizer is header only; the graph's builder is
 * lib/engine/graph_wsep.c, which reads the program's structures (this
 * header) and calls nothing of libwsep: the engine links on its own.
 */
#ifndef WSE_ENGINE_WSEP_H
#define WSE_ENGINE_WSEP_H

#include <errno.h>

#include "wse/engine.h"
#include "wse/engine_graph.h"
#include "wse/wsep.h"

/* Fills @e from @o. Returns 0, or -EINVAL for an unknown optimizer kind. */
/* The engine's precision for a program's (the two enums share their values). */
static inline enum engine_precision engine_precision_from_wsep(enum wsep_precision p)
{
	return p == WSEP_PRECISION_FP16 ? ENGINE_FP16 :
	       p == WSEP_PRECISION_BF16 ? ENGINE_BF16 : ENGINE_FP32;
}

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
	case WSEP_OPT_ADAMW:
		kind = ENGINE_ADAMW;
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
	e->dampening = o->dampening;
	e->nesterov = o->nesterov != 0;
	return 0;
}

/* The schedule of @o. Returns 0, or -EINVAL for an unknown one. */
static inline int engine_lr_from_wsep(const struct wsep_optimizer *o, struct engine_lr_schedule *s)
{
	switch (o->schedule) {
	case WSEP_LR_CONSTANT:
		*s = (struct engine_lr_schedule){ .kind = ENGINE_LR_CONSTANT };
		return 0;
	case WSEP_LR_WARMUP_COSINE:
		*s = (struct engine_lr_schedule){ .kind = ENGINE_LR_WARMUP_COSINE,
						  .warmup = o->warmup, .total = o->total_steps,
						  .min_lr = o->min_lr };
		return engine_lr_check(s);
	}
	return -EINVAL;
}

/*
 * The optimizer of optimizer step @t (1-based): @base with the learning
 * rate @sched gives at @t. What the firmware and MemoryX update with.
 */
static inline struct engine_optim engine_optim_at(const struct engine_optim *base,
						  const struct engine_lr_schedule *sched,
						  uint64_t t)
{
	struct engine_optim o = *base;

	o.lr = engine_lr_at(sched, base->lr, t);
	return o;
}


/*
 * The mapping between the file's ops and attributes (wse/wsep.h) and the
 * engine's, in one place (lib/engine/graph_wsep.c): ops from the engine's
 * (one the file lacks maps to WSEP_OP_COUNT + 1), attributes both ways. The
 * attributes written for the file are zeroed first, so two compare equal
 * with memcmp() exactly when they mean the same.
 */
uint32_t engine_op_to_wsep(enum engine_op op);
void engine_attrs_to_wsep(const struct engine_node_attrs *a, struct wsep_graph_attrs *w);
void engine_attrs_from_wsep(const struct wsep_graph_attrs *w, struct engine_node_attrs *a);

/*
 * engine_graph_from_wsep() - the graph of graph program @p at @batch
 * samples (1..the program's batch: each value's batch dimension scaled),
 * its parameters and constants copied from the program, the loss set, and
 * checked with engine_graph_check() but not prepared: a program whose
 * nodes do not fit their ops is refused here, before anything is
 * allocated. Value i of the program is engine value i.
 * Return: 0 with *@out set, or a negative errno with a message in @err
 * naming the node.
 */
int engine_graph_from_wsep(const struct wsep_program *p, uint32_t batch,
			   struct engine_graph **out, char *err, size_t errlen);

#endif /* WSE_ENGINE_WSEP_H */
