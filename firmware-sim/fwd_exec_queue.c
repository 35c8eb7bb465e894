// SPDX-License-Identifier: GPL-2.0-only
/*
 * The execution queues: one FIFO and one worker thread per device queue.
 * Requests on a queue run in arrival order; a request that must wait (for
 * stream room, stream data, a RUN's input) blocks only its own queue.
 * What was read ahead but not yet run is bounded (FWD_PENDING_MAX_*): past
 * that the connection thread stops reading, and TCP pushes back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fwd_conn.h"
#include "fwd_exec.h"
#include "fwd_log.h"
#include "fwd_ops.h"

struct worker_arg {
	struct fwd_exec *x;
	uint16_t queue;
};

static struct worker_arg worker_args[FWD_MAX_QUEUES];

int fwd_exec_init(struct fwd_exec *x, struct fwd_device *dev)
{
	pthread_condattr_t attr;

	memset(x, 0, sizeof(*x));
	x->dev = dev;
	x->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (x->wake_fd < 0)
		return -errno;
	pthread_mutex_init(&x->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&x->changed, &attr);
	for (int i = 0; i < FWD_MAX_QUEUES; i++)
		pthread_cond_init(&x->queues[i].cond, &attr);
	pthread_condattr_destroy(&attr);
	return 0;
}

void fwd_exec_destroy(struct fwd_exec *x)
{
	fwd_exec_detach(x);
	for (int i = 0; i < FWD_MAX_QUEUES; i++)
		pthread_cond_destroy(&x->queues[i].cond);
	pthread_cond_destroy(&x->changed);
	pthread_mutex_destroy(&x->lock);
	if (x->wake_fd >= 0)
		close(x->wake_fd);
	x->wake_fd = -1;
}

static void ring_doorbell(struct fwd_exec *x)
{
	uint64_t one = 1;

	if (write(x->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is saturated: poll() sees it anyway. */
	}
}

void fwd_exec_ack_wake(struct fwd_exec *x)
{
	uint64_t v;

	if (read(x->wake_fd, &v, sizeof(v)) < 0) {
		/* Nothing was pending. */
	}
}

bool fwd_exec_wait(struct fwd_exec *x)
{
	struct timespec ts;

	if (x->stopping)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&x->changed, &x->lock, &ts);
	return !x->stopping;
}

bool fwd_exec_throttled(struct fwd_exec *x)
{
	bool full;

	pthread_mutex_lock(&x->lock);
	full = x->pending_reqs >= FWD_PENDING_MAX_REQS || x->pending_bytes >= FWD_PENDING_MAX_BYTES;
	pthread_mutex_unlock(&x->lock);
	return full;
}

static void *worker(void *arg)
{
	struct worker_arg *a = arg;
	struct fwd_exec *x = a->x;
	struct fwd_queue *q = &x->queues[a->queue];

	pthread_mutex_lock(&x->lock);
	for (;;) {
		struct fwd_req *r;
		bool throttled;

		while (!q->head && !x->stopping)
			pthread_cond_wait(&q->cond, &x->lock);
		if (x->stopping)
			break;
		r = q->head;
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&x->lock);

		r->r.op->execute(x, &r->r);

		pthread_mutex_lock(&x->lock);
		throttled = x->pending_reqs >= FWD_PENDING_MAX_REQS ||
			    x->pending_bytes >= FWD_PENDING_MAX_BYTES;
		x->pending_reqs--;
		x->pending_bytes -= r->r.f.length;
		free(r);
		/* The connection thread may be waiting to read again, or to see
		 * that a reply failed and the link is dead.
		 */
		if (throttled || (x->conn && x->conn->dead))
			ring_doorbell(x);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

int fwd_exec_submit(struct fwd_exec *x, const struct fwd_request *req)
{
	uint16_t queue = req->f.queue;
	struct fwd_queue *q = &x->queues[queue];
	struct fwd_req *r = malloc(sizeof(*r) + req->len);
	int ret = 0;

	if (!r)
		return -ENOMEM;
	r->next = NULL;
	r->r = *req;
	memcpy(r->data, req->data, req->len);
	r->r.data = r->data;
	pthread_mutex_lock(&x->lock);
	if (!q->started) {
		worker_args[queue] = (struct worker_arg){ x, queue };
		ret = -pthread_create(&q->thread, NULL, worker, &worker_args[queue]);
		if (ret) {
			pthread_mutex_unlock(&x->lock);
			free(r);
			return ret;
		}
		q->started = true;
	}
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
	x->pending_reqs++;
	x->pending_bytes += r->r.f.length;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&x->lock);
	return 0;
}

void fwd_exec_attach(struct fwd_exec *x, struct fwd_conn *c)
{
	pthread_mutex_lock(&x->lock);
	x->conn = c;
	x->stopping = false;
	pthread_mutex_unlock(&x->lock);
}

void fwd_exec_detach(struct fwd_exec *x)
{
	pthread_mutex_lock(&x->lock);
	x->stopping = true;
	pthread_cond_broadcast(&x->changed);
	for (int i = 0; i < FWD_MAX_QUEUES; i++)
		pthread_cond_broadcast(&x->queues[i].cond);
	pthread_mutex_unlock(&x->lock);
	for (int i = 0; i < FWD_MAX_QUEUES; i++) {
		struct fwd_queue *q = &x->queues[i];

		if (q->started)
			pthread_join(q->thread, NULL);
		while (q->head) {
			struct fwd_req *r = q->head;

			q->head = r->next;
			free(r);
		}
		q->tail = NULL;
		q->started = false;
	}
	/* Workers are gone: nothing else touches the state now. */
	for (int i = 0; i < FWD_PROGRAM_SLOTS; i++) {
		if (x->slots[i])
			fwd_program_free(x->slots[i]);
		x->slots[i] = NULL;
		if (x->assembling[i])
			free(x->assembling[i]->buf);
		free(x->assembling[i]);
		x->assembling[i] = NULL;
	}
	if (x->programs)
		fwd_info("link gone: %u program(s) unloaded", x->programs);
	x->assembling_bytes = 0;
	x->sram_used = 0;
	x->programs = 0;
	x->pending_reqs = 0;
	x->pending_bytes = 0;
	x->stats = (struct fwd_exec_stats){ 0 };
	fwd_region_unmap_all(x);
	x->conn = NULL;
}
