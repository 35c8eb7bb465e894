/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_client.h - a small host side of the link for tools, tests and
 * benchmarks (library wselink): the handshake, and requests with their
 * responses fully checked. The kernel driver is the real host.
 */
#ifndef WSE_LINK_CLIENT_H
#define WSE_LINK_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wse/link_payloads.h"

/* Requests a client may have in flight at once (wse_link_client_submit). */
#define WSE_LINK_CLIENT_MAX_PENDING	32

/* A submitted request, and its response once it arrived out of turn. */
struct wse_link_client_pending {
	uint32_t tag;
	uint8_t opcode;
	uint16_t queue;
	bool arrived;
	uint8_t *payload;	/* the whole response payload (malloc) */
	size_t len;
};

/*
 * A minimal host side of the link, for tools, tests and benchmarks.
 * wse_link_client_call() has one request in flight; submit/wait have up
 * to WSE_LINK_CLIENT_MAX_PENDING, answered in any order (the device
 * answers in completion order). (The kernel driver is the real host.)
 */
struct wse_link_client {
	int fd;
	int timeout_ms;			/* per request */
	struct wse_link_rx_rules rules;	/* after HELLO: negotiated */
	uint32_t next_tag;
	struct wse_link_device_info dev;	/* from the HELLO reply */
	/* An appliance's appendix, when the host offered WSE_LINK_CAP_APPLIANCE
	 * (appliance.systems is 0 otherwise).
	 */
	struct wse_link_appliance_id appliance;
	uint32_t peer_error;		/* code of an ERROR frame received, 0: none */
	bool peer_shutdown;		/* the device sent SHUTDOWN (answered) */
	uint8_t *buf;			/* response payloads */
	size_t cap;
	struct wse_link_client_pending pending[WSE_LINK_CLIENT_MAX_PENDING];
	unsigned int npending;
};

/*
 * Binds @cl to connected @fd and performs the handshake. Returns 0 with
 * *@status the HELLO status (on failure @text holds the device's reason),
 * or a negative errno: the socket's, -EPROTO or -EBADMSG for a protocol
 * violation by the device, -ECONNRESET for an ERROR frame from it
 * (cl->peer_error holds its code); @err says what. The caller closes @fd;
 * wse_link_client_free() releases the buffer.
 */
int wse_link_client_hello(struct wse_link_client *cl, int fd,
			  const struct wse_link_hello_info *hello, int timeout_ms,
			  uint32_t *status, char *text, size_t textlen,
			  struct wse_link_err *err);
void wse_link_client_free(struct wse_link_client *cl);

/*
 * Sends request @opcode on @queue with payload @iov and waits for its
 * response, answering device KEEPALIVEs meanwhile. On return 0, *@status is
 * the response status and the rest of the payload is at cl->buf + 8 with
 * *@rest_len bytes. Errors as for wse_link_client_hello(); a SHUTDOWN
 * from the device is answered and gives -ESHUTDOWN.
 */
int wse_link_client_call(struct wse_link_client *cl, uint8_t opcode, uint16_t queue,
			 const struct iovec *iov, int iovcnt, uint32_t *status,
			 size_t *rest_len, struct wse_link_err *err);

/*
 * Sends request @opcode on @queue without waiting for its response;
 * *@tag identifies it for wse_link_client_wait(). -EBUSY when
 * WSE_LINK_CLIENT_MAX_PENDING requests are already in flight.
 */
int wse_link_client_submit(struct wse_link_client *cl, uint8_t opcode, uint16_t queue,
			   const struct iovec *iov, int iovcnt, uint32_t *tag,
			   struct wse_link_err *err);
/*
 * Waits up to @timeout_ms (< 0: cl->timeout_ms per frame, for ever in
 * total) for the response to @tag, keeping responses to other submitted
 * requests that arrive meanwhile. Returns as wse_link_client_call() (the
 * payload after the status at cl->buf + 8), or -ETIMEDOUT, with the
 * request still pending, when nothing came in time.
 */
int wse_link_client_wait(struct wse_link_client *cl, uint32_t tag, int timeout_ms,
			 uint32_t *status, size_t *rest_len, struct wse_link_err *err);

/*
 * Takes back submitted request @tag (WSE_LINK_OP_CANCEL, to a device that
 * offers WSE_LINK_CAP_CANCEL): sends CANCEL and waits for its answer as
 * wse_link_client_wait() does, *@status its status (OK whether or not
 * the device still held the request). The request stays pending: wait for
 * it, and it answers WSE_LINK_E_CANCELED, or as usual if it was past its
 * waits. -EINVAL if @tag is not pending; CANCEL needs a free place among
 * the WSE_LINK_CLIENT_MAX_PENDING (-EBUSY otherwise).
 */
int wse_link_client_cancel(struct wse_link_client *cl, uint32_t tag, int timeout_ms,
			   uint32_t *status, struct wse_link_err *err);

/* The text of a failure response, as left in cl->buf by call or wait. */
void wse_link_client_text(const struct wse_link_client *cl, size_t rest_len,
			  char *text, size_t textlen);

/* MEM_WRITE / MEM_READ of @len bytes at @addr via wse_link_client_call();
 * a failure status leaves its text in @text.
 */
int wse_link_client_mem_write(struct wse_link_client *cl, uint16_t queue, uint64_t addr,
			      const void *data, uint32_t len, uint32_t *status,
			      char *text, size_t textlen, struct wse_link_err *err);
int wse_link_client_mem_read(struct wse_link_client *cl, uint16_t queue, uint64_t addr,
			     void *data, uint32_t len, uint32_t *status,
			     char *text, size_t textlen, struct wse_link_err *err);

#endif /* WSE_LINK_CLIENT_H */
