// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: calls, requests whose caller waits for the answer (MEM_XFER, the
 * firmware's counters), or that nobody waits for (the driver's own
 * unloads). A call lives on the heap and is counted: the caller, the link
 * until the firmware answers, and the sender until the frame is out each
 * hold it. A caller that gives up - a timeout, a signal, being killed -
 * takes back what has not started and leaves the rest to finish without
 * it, so neither waits for the other and the link goes on.
 */

#include <linux/sched/signal.h>

#include "wse_call.h"

static void wse_call_put(struct wse_call *call)
{
	if (refcount_dec_and_test(&call->users))
		call->release(call);
}

/* Answered, refused or failed with the link: the caller may go on. */
static void wse_call_done(struct wse_link_req *req)
{
	complete(&req->wait);
}

/* The firmware answered, or never will: the link lets go. */
static void wse_call_retire(struct wse_link_req *req)
{
	wse_call_put(container_of(req, struct wse_call, req));
}

/* The frame is sent or dropped: the sender lets go. */
static void wse_call_sent(struct wse_link_req *req)
{
	wse_call_put(container_of(req, struct wse_call, req));
}

/* Queues the call's request, held by @users (the link's, the sender's, and
 * the caller's if it waits); none of them if it could not be queued.
 */
static int wse_call_submit(struct wse_link *link, struct wse_call *call, const struct kvec *vec,
			   unsigned int nvec, unsigned int users)
{
	struct wse_link_req *req = &call->req;

	req->done = wse_call_done;
	req->retire = wse_call_retire;
	req->tx_done = wse_call_sent;
	refcount_set(&call->users, users);
	return wse_link_submit(link, req, vec, nvec);
}

/**
 * wse_call() - send a request and wait for its answer
 * @link: the link
 * @call: the call: @req.opcode, @req.queue, @req.resp, @req.resp_cap and
 *	@release set; @req.resp and the payload must live until @release
 * @vec: the request payload
 * @nvec: entries in @vec (at most 3)
 * @timeout: jiffies to wait for the answer
 *
 * The caller ends with wse_call_finish(), whatever this returns: @release
 * runs once the caller, the link and the sender are all done with the
 * call, which may be after that.
 *
 * Return: 0 (@call->req.resp_len says how much came back); the firmware's
 * refusal as an errno; -ENOTCONN if the link is or goes down; -ETIMEDOUT;
 * -ERESTARTSYS if a signal interrupted the wait. Read @req.resp before
 * wse_call_finish().
 */
int wse_call(struct wse_link *link, struct wse_call *call, const struct kvec *vec,
	     unsigned int nvec, long timeout)
{
	struct wse_link_req *req = &call->req;
	long left;
	int ret;

	ret = wse_call_submit(link, call, vec, nvec, 3);
	if (ret) {
		refcount_set(&call->users, 1);
		return ret;
	}
	wse_link_push(link, false);

	left = wait_for_completion_interruptible_timeout(&req->wait, timeout);
	if (left > 0)
		return req->status;
	/* Not answered: the link holds the call until the firmware answers
	 * (a frame not yet started is not sent), and the caller goes.
	 */
	if (wse_link_abandon(link, req)) {
		if (!left)
			atomic64_inc(&link->stats.timeouts);
		return left ? (int)left : -ETIMEDOUT;
	}
	/* The receiver or a failure has it and finishes it at once. */
	wait_for_completion(&req->wait);
	return req->status;
}

/**
 * wse_call_post() - send a request nobody waits for
 * @link: the link
 * @call: the call: @req.opcode, @req.queue and @release set; @release runs
 *	once the link and the sender are done with it, @req.status holding
 *	the firmware's answer, or why none came
 * @vec: the request payload, which must live until @release
 * @nvec: entries in @vec (at most 3)
 *
 * The transmit work sends it.
 *
 * Return: 0, or the error it could not be queued with: then @release does
 * not run and the call is still the caller's.
 */
int wse_call_post(struct wse_link *link, struct wse_call *call, const struct kvec *vec,
		  unsigned int nvec)
{
	int ret = wse_call_submit(link, call, vec, nvec, 2);

	if (!ret)
		wse_link_push(link, true);
	return ret;
}

/**
 * wse_call_finish() - the caller is done with a call
 * @call: a call wse_call() took
 */
void wse_call_finish(struct wse_call *call)
{
	wse_call_put(call);
}
