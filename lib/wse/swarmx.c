// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SwarmX (wse/swarmx.h): a worker thread per member, woken for each
 * wse_swarmx_each() by a generation count. Member 0 runs in the caller's
 * thread: no thread at all for a single system.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "wse/swarmx.h"

struct wse_swarmx;

struct swarmx_member {
	struct wse_swarmx *sx;
	unsigned int index;
	pthread_t thread;
	bool started;
};

struct wse_swarmx {
	unsigned int members;
	struct swarmx_member member[WSE_SWARMX_MAX];
	pthread_mutex_t lock;
	pthread_cond_t go, done;
	/* Protected by @lock: the work of the current generation. */
	unsigned long generation;
	unsigned int finished;		/* threads done with this generation */
	bool quit;
	int (*fn)(unsigned int member, void *arg);
	void *arg;
	int result[WSE_SWARMX_MAX];
};

static void *member_main(void *p)
{
	struct swarmx_member *me = p;
	struct wse_swarmx *sx = me->sx;
	unsigned long seen = 0;

	pthread_mutex_lock(&sx->lock);
	for (;;) {
		int r;

		while (!sx->quit && sx->generation == seen)
			pthread_cond_wait(&sx->go, &sx->lock);
		if (sx->quit)
			break;
		seen = sx->generation;
		pthread_mutex_unlock(&sx->lock);
		r = sx->fn(me->index, sx->arg);
		pthread_mutex_lock(&sx->lock);
		sx->result[me->index] = r;
		if (++sx->finished == sx->members - 1)
			pthread_cond_signal(&sx->done);
	}
	pthread_mutex_unlock(&sx->lock);
	return NULL;
}

int wse_swarmx_create(unsigned int members, struct wse_swarmx **out)
{
	struct wse_swarmx *sx;
	int err;

	*out = NULL;
	if (!members || members > WSE_SWARMX_MAX)
		return -EINVAL;
	sx = calloc(1, sizeof(*sx));
	if (!sx)
		return -ENOMEM;
	sx->members = members;
	pthread_mutex_init(&sx->lock, NULL);
	pthread_cond_init(&sx->go, NULL);
	pthread_cond_init(&sx->done, NULL);
	for (unsigned int m = 1; m < members; m++) {
		sx->member[m].sx = sx;
		sx->member[m].index = m;
		err = pthread_create(&sx->member[m].thread, NULL, member_main, &sx->member[m]);
		if (err) {
			wse_swarmx_destroy(sx);
			return -err;
		}
		sx->member[m].started = true;
	}
	*out = sx;
	return 0;
}

void wse_swarmx_destroy(struct wse_swarmx *sx)
{
	if (!sx)
		return;
	pthread_mutex_lock(&sx->lock);
	sx->quit = true;
	pthread_cond_broadcast(&sx->go);
	pthread_mutex_unlock(&sx->lock);
	for (unsigned int m = 1; m < sx->members; m++)
		if (sx->member[m].started)
			pthread_join(sx->member[m].thread, NULL);
	pthread_cond_destroy(&sx->go);
	pthread_cond_destroy(&sx->done);
	pthread_mutex_destroy(&sx->lock);
	free(sx);
}

unsigned int wse_swarmx_members(const struct wse_swarmx *sx)
{
	return sx->members;
}

int wse_swarmx_each(struct wse_swarmx *sx, int (*fn)(unsigned int member, void *arg),
		    void *arg)
{
	int ret;

	pthread_mutex_lock(&sx->lock);
	sx->fn = fn;
	sx->arg = arg;
	sx->finished = 0;
	sx->generation++;
	pthread_cond_broadcast(&sx->go);
	pthread_mutex_unlock(&sx->lock);

	sx->result[0] = fn(0, arg);

	pthread_mutex_lock(&sx->lock);
	while (sx->finished < sx->members - 1)
		pthread_cond_wait(&sx->done, &sx->lock);
	ret = 0;
	for (unsigned int m = 0; m < sx->members && !ret; m++)
		ret = sx->result[m];
	pthread_mutex_unlock(&sx->lock);
	return ret;
}

void wse_swarmx_reduce(const struct wse_swarmx *sx, float *out, float *const *part,
		       const double *scale, size_t n)
{
	float s0 = (float)scale[0];

	/* Member order is fixed: the sum is the same bits on every run. */
	for (size_t i = 0; i < n; i++)
		out[i] = s0 == 1.0f ? part[0][i] : s0 * part[0][i];
	for (unsigned int m = 1; m < sx->members; m++) {
		float s = (float)scale[m];

		for (size_t i = 0; i < n; i++)
			out[i] += s * part[m][i];
	}
}
