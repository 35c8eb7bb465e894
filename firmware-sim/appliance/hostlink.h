/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A link on which the appliance is the host: to each system (wsefwd) and
 * to MemoryX, SwarmX and the input workers. Thread-safe: any thread may
 * submit requests on any queue and wait for their answers, which a receive
 * thread pairs up by tag and copies where the submitter asked. A link that
 * dies (EOF, ERROR, a malformed frame, SHUTDOWN) fails every waiter with
 * the reason, which names the part.
 */
#ifndef APPLIANCE_HOSTLINK_H
#define APPLIANCE_HOSTLINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "wse/link_payloads.h"

#define HOSTLINK_PENDING	64	/* requests in flight on one link */

/* @ms from now, as pthread_cond_timedwait() takes it (CLOCK_REALTIME). */
static inline struct timespec hostlink_deadline(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}
#define HOSTLINK_TEXT		200

struct hostlink_pending {
	bool used, done;
	bool forgotten;		/* nobody waits: drop the answer */
	uint32_t tag;
	uint8_t op;		/* the answer carries the request's opcode and queue */
	uint16_t queue;
	void *out;		/* where the reply data go */
	size_t cap, len;
	uint32_t status;
	int err;		/* the link died: its negative errno */
	char text[HOSTLINK_TEXT];
	pthread_cond_t cond;	/* its answer came, or the link died */
};

struct hostlink {
	char name[64];		/* "system 1 (unix:/run/wse/sys1.sock)" */
	int fd;
	struct wse_link_rx_rules rules;
	struct wse_link_device_info dev;
	struct wse_link_appliance_id appliance;
	pthread_t rx;
	bool rx_started;
	pthread_mutex_t tx_lock;	/* one frame on the socket at a time */
	pthread_mutex_t lock;		/* guards what follows */
	/*
	 * A waiter waits on its request's condition, so an answer wakes only
	 * its waiter; a submitter finding no free slot waits on slot_cond.
	 */
	pthread_cond_t slot_cond;
	unsigned int slot_waiters;
	uint32_t next_tag;
	bool dead;
	int dead_err;
	char reason[HOSTLINK_TEXT];
	struct hostlink_pending pending[HOSTLINK_PENDING];
	uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx;
	uint8_t *rxbuf;
};

/*
 * Connects to @addr and shakes hands offering @caps; @name is how
 * messages call the part. 0, or a negative errno with @text saying what
 * failed (the part named).
 */
int hostlink_open(struct hostlink *h, const char *name, const char *addr, uint32_t caps,
		  int timeout_ms, char *text, size_t textlen);
/* Closes the link: waiters fail, the receive thread is joined. */
void hostlink_close(struct hostlink *h);
/* False once the link died; @why (may be NULL) says why. */
bool hostlink_up(struct hostlink *h, char *why, size_t len);

/*
 * Sends request @op on @queue; its reply data (after the status) will be
 * copied to @out (at most @cap bytes; a longer reply fails the link).
 * *@tag identifies it for hostlink_wait(). 0 or a negative errno.
 */
int hostlink_submit(struct hostlink *h, uint8_t op, uint16_t queue, const struct iovec *iov,
		    int iovcnt, void *out, size_t cap, uint32_t *tag);
/*
 * Waits up to @timeout_ms for @tag's answer: 0 with *@status (and, when it
 * is not OK, the device's text in @text), *@len bytes at the submitter's
 * @out; or a negative errno with @text naming the part and why (the link
 * died; or -ETIMEDOUT, the request still pending: wait again, or
 * hostlink_forget() it).
 */
int hostlink_wait(struct hostlink *h, uint32_t tag, int timeout_ms, uint32_t *status,
		  size_t *len, char *text, size_t textlen);
/*
 * Looks at @tag without waiting for it or taking its answer: true once the
 * device answered it with a status other than OK (*@status set, @text
 * saying why), false while it is pending or if it was answered OK.
 */
bool hostlink_refused(struct hostlink *h, uint32_t tag, uint32_t *status, char *text,
		      size_t textlen);
/* Gives up on @tag: its answer, if it comes, is dropped (the slot is freed then). */
void hostlink_forget(struct hostlink *h, uint32_t tag);
/*
 * Sends CANCEL of request @tag (which the caller still waits for: the
 * device answers it E_CANCELED, or as usual if it was past its waits);
 * the CANCEL's own answer is dropped. 0; -EOPNOTSUPP if the device does
 * not offer WSE_LINK_CAP_CANCEL; or as hostlink_submit().
 */
int hostlink_cancel(struct hostlink *h, uint32_t tag);
/* submit + wait, and a status other than OK is an error: -EIO with the text. */
int hostlink_call(struct hostlink *h, uint8_t op, uint16_t queue, const struct iovec *iov,
		  int iovcnt, void *out, size_t cap, size_t *len, int timeout_ms, char *text,
		  size_t textlen);

#endif /* APPLIANCE_HOSTLINK_H */
