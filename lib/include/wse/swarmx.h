/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SwarmX: the fabric between MemoryX and N systems training one model
 * data-parallel. It runs one piece of work on every member at once (a
 * thread per member), which is how a layer's weights are broadcast to all
 * of them and their gradients gathered, and it sums the members'
 * gradients in a fixed order, so a run is reproducible.
 */
#ifndef WSE_SWARMX_H
#define WSE_SWARMX_H

#include <stddef.h>

struct wse_swarmx;

/* @members 1..WSE_SWARMX_MAX; -EINVAL, -ENOMEM, or a pthread error as -errno. */
#define WSE_SWARMX_MAX 16
int wse_swarmx_create(unsigned int members, struct wse_swarmx **out);
void wse_swarmx_destroy(struct wse_swarmx *sx);
unsigned int wse_swarmx_members(const struct wse_swarmx *sx);

/*
 * Calls @fn(member, @arg) for every member at the same time and waits for
 * all of them. Returns 0, or the negative code of the lowest-numbered
 * member that failed (every member still finishes its call).
 */
int wse_swarmx_each(struct wse_swarmx *sx, int (*fn)(unsigned int member, void *arg),
		    void *arg);

/*
 * The reduction: out[i] = sum over members m (in order) of scale[m] *
 * part[m][i], for @n floats. A member's gradient is the mean over its
 * shard of the batch, so scale[m] = shard[m] / batch gives the whole
 * batch's mean; with one member and scale 1 the result is that member's
 * gradient bit for bit.
 */
void wse_swarmx_reduce(const struct wse_swarmx *sx, float *out, float *const *part,
		       const double *scale, size_t n);

#endif /* WSE_SWARMX_H */
