// SPDX-License-Identifier: GPL-2.0-only
/*
 * The execution queues: one FIFO and one worker thread per device queue.
 * Requests on a queue run in arrival order; a request that must wait (for
 * stream room, stream data, a RUN's input) blocks only its own queue.
 * What is queued or executing is bounded (WSE_LINK_QUEUED_REQS requests,
 * WSE_LINK_QUEUED_BYTES of payload): a request past that is refused
 * (E_BUSY) as it arrives, so the connection thread always reads and
 * keepalives and CANCEL get through whatever waits. CANCEL takes a
 * request out of its FIFO, or tells the worker executing it, whose waits
 * end (fwd_exec_wait()).
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

/* The queue whose worker this thread is (NULL on other threads). */
static _Thread_local struct fwd_queue *self_queue;

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

bool fwd_exec_cancelled(struct fwd_exec *x)
{
	return !x->stopping && self_queue && self_queue->cancel;
}

/* Lock held: the request queue @q carries out no longer counts. */
static void uncount(struct fwd_exec *x, struct fwd_queue *q)
{
	if (!q->counted)
		return;
	q->counted = false;
	x->pending_reqs--;
	x->pending_bytes -= q->length;
}

void fwd_exec_answering(struct fwd_exec *x, const struct wse_link_frame *f)
{
	struct fwd_queue *q = self_queue;

	if (!q || !q->counted || q->tag != f->tag || q != &x->queues[f->queue % FWD_MAX_QUEUES])
		return;
	pthread_mutex_lock(&x->lock);
	uncount(x, q);
	pthread_mutex_unlock(&x->lock);
}

bool fwd_exec_wait(struct fwd_exec *x)
{
	struct timespec ts;

	if (x->stopping || fwd_exec_cancelled(x))
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&x->changed, &x->lock, &ts);
	return !x->stopping && !fwd_exec_cancelled(x);
}

static void *worker(void *arg)
{
	struct worker_arg *a = arg;
	struct fwd_exec *x = a->x;
	struct fwd_queue *q = &x->queues[a->queue];

	self_queue = q;
	pthread_mutex_lock(&x->lock);
	for (;;) {
		struct fwd_req *r;

		while (!q->head && !x->stopping)
			pthread_cond_wait(&q->cond, &x->lock);
		if (x->stopping)
			break;
		r = q->head;
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
		/* From here a CANCEL of its tag finds it executing, not queued. */
		q->executing = true;
		q->cancel = false;
		q->tag = r->r.f.tag;
		q->counted = true;
		q->length = r->r.f.length;
		pthread_mutex_unlock(&x->lock);

		r->r.op->execute(x, &r->r);

		pthread_mutex_lock(&x->lock);
		q->executing = false;
		q->cancel = false;
		uncount(x, q);	/* unanswered: the link is going */
		free(r);
		/* The connection thread may be waiting to see that a reply failed
		 * and the link is dead.
		 */
		if (x->conn && x->conn->dead)
			ring_doorbell(x);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

int fwd_exec_submit(struct fwd_exec *x, const struct fwd_request *req)
{
	uint16_t queue = req->f.queue;
	struct fwd_queue *q = &x->queues[queue];
	struct fwd_req *r;
	int ret = 0;

	pthread_mutex_lock(&x->lock);
	/* Refused, not waited for: the connection thread must go on reading. */
	if (x->pending_reqs >= WSE_LINK_QUEUED_REQS ||
	    req->f.length > WSE_LINK_QUEUED_BYTES - x->pending_bytes) {
		pthread_mutex_unlock(&x->lock);
		return -EBUSY;
	}
	pthread_mutex_unlock(&x->lock);
	r = malloc(sizeof(*r) + req->len);
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

void fwd_exec_cancel(struct fwd_exec *x, uint32_t tag, struct fwd_req **dropped)
{
	struct fwd_req **end = dropped;
	bool told = false;

	*dropped = NULL;
	pthread_mutex_lock(&x->lock);
	for (int i = 0; i < FWD_MAX_QUEUES; i++) {
		struct fwd_queue *q = &x->queues[i];
		struct fwd_req *prev = NULL, *r = q->head;

		while (r) {
			struct fwd_req *next = r->next;

			if (r->r.f.tag != tag) {
				prev = r;
				r = next;
				continue;
			}
			if (prev)
				prev->next = next;
			else
				q->head = next;
			if (q->tail == r)
				q->tail = prev;
			x->pending_reqs--;
			x->pending_bytes -= r->r.f.length;
			r->next = NULL;
			*end = r;
			end = &r->next;
			r = next;
		}
		if (q->executing && q->tag == tag && !q->cancel) {
			q->cancel = true;
			told = true;
		}
	}
	if (told)
		pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
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
		q->executing = false;
		q->cancel = false;
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
