/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: requests whose caller waits for the answer, or that nobody waits for.
 */
#ifndef __WSE_CALL_H__
#define __WSE_CALL_H__

#include <linux/refcount.h>

#include "wse_link.h"

/**
 * struct wse_call - a request a caller waits for, which outlives a caller
 * that gives up (or one nobody waits for: wse_call_post())
 * @req: the request
 * @users: the caller (if it waits), the link until it retires the
 *	request, and the sender until the frame is sent or dropped
 * @release: frees the call and what its request points at, once nobody
 *	uses it; process context, on whichever side let go last (the
 *	receive thread, the transmit work or the caller)
 *
 * Embed it in a structure that also holds the payload and the room for
 * the answer.
 */
struct wse_call {
	struct wse_link_req req;
	refcount_t users;
	void (*release)(struct wse_call *call);
};

int wse_call(struct wse_link *link, struct wse_call *call, const struct kvec *vec,
	     unsigned int nvec, long timeout);
int wse_call_post(struct wse_link *link, struct wse_call *call, const struct kvec *vec,
		  unsigned int nvec);
void wse_call_finish(struct wse_call *call);

#endif /* __WSE_CALL_H__ */
