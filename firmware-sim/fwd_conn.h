/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One host link: the receive state machine and the send path every reply
 * takes (where the fault knobs act).
 */
#ifndef FWD_CONN_H
#define FWD_CONN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fwd_device.h"
#include "fwd_fault.h"
#include "fwd_memory.h"
#include "wse/link_io.h"
#include "wse/link_payloads.h"

enum fwd_rx_phase {
	FWD_RX_HEADER,	/* collecting the 32-byte header */
	FWD_RX_PREFIX,	/* collecting the opcode's fixed part */
	FWD_RX_BODY,	/* the rest, straight into its destination */
};

/*
 * Per-frame state an opcode's place() hook leaves for its handler: a
 * decision about the request taken before its body arrived.
 */
struct fwd_rx_ctx {
	uint32_t status;	/* WSE_LINK_OK or what to answer/fail with */
	bool fatal;		/* status is a protocol violation: ERROR and close */
	uint64_t addr;
	uint32_t length;
	char text[200];
};

struct fwd_conn {
	int fd;
	char peer[64];
	struct fwd_device *dev;

	/* Link state. */
	bool hello_done;
	uint32_t max_payload;	/* negotiated: what either side may send */
	uint32_t keepalive_ms;	/* the host's interval, 0: none */
	struct wse_link_rx_rules rules;
	_Atomic bool dead;	/* close now (workers set it when a reply fails) */
	bool abrupt;		/* close without the usual drain (fault knob) */
	bool stopping;		/* SHUTDOWN sent, waiting for its response */
	uint32_t shutdown_tag;
	int64_t accepted_ms;
	int64_t last_rx_ms;
	int64_t stop_deadline_ms;

	/* Receive state machine. */
	enum fwd_rx_phase phase;
	struct wse_link_hdr raw;
	struct wse_link_frame f;
	const struct fwd_op *op;
	size_t got;		/* bytes of the current phase received */
	uint8_t prefix[64];
	uint32_t prefix_len;
	struct iovec body[FWD_MEM_MAX_IOV];
	int body_cnt;
	int body_idx;
	uint32_t body_left;
	uint32_t crc;		/* chained over the payload as it arrives */
	bool body_in_scratch;
	struct fwd_rx_ctx ctx;
	uint8_t *scratch;	/* payloads that have no better home */
	size_t scratch_cap;

	/* Every frame sent goes through fwd_conn_send under this lock:
	 * queue workers answer from their own threads.
	 */
	pthread_mutex_t send_lock;

	/* Counters and fault injection. */
	uint64_t frames_rx;
	uint64_t frames_tx;
	uint64_t bytes_rx;
	uint64_t bytes_tx;
	struct fwd_fault fault;
};

/* Sets up @c for a freshly accepted, non-blocking @fd. */
int fwd_conn_init(struct fwd_conn *c, struct fwd_device *dev, int fd);
void fwd_conn_release(struct fwd_conn *c);

/* Reads what the socket has and handles every frame completed. */
void fwd_conn_on_readable(struct fwd_conn *c);

/* When fwd_conn_check_timers() must next run (ms, monotonic), or -1. */
int64_t fwd_conn_next_deadline(const struct fwd_conn *c);
/* Enforces the HELLO, keepalive and shutdown deadlines. */
void fwd_conn_check_timers(struct fwd_conn *c, int64_t now);

/* Starts an orderly shutdown from the device side (SIGTERM). */
void fwd_conn_begin_shutdown(struct fwd_conn *c);

/*
 * Sends a frame (length, digests and header computed here) through the
 * fault knobs: delay and malformed replies for responses, corruption of
 * the Nth frame (in a copy of the first payload piece, at most 512 bytes,
 * or in the header). Failure marks the link dead.
 */
void fwd_conn_send(struct fwd_conn *c, struct wse_link_frame *f,
		   const struct iovec *iov, int iovcnt);

/* Answers request @req with @status and reply data @iov. */
void fwd_conn_reply(struct fwd_conn *c, const struct wse_link_frame *req,
		    uint32_t status, const struct iovec *iov, int iovcnt);
/* Answers @req with a failure status and a text. */
void fwd_conn_reply_text(struct fwd_conn *c, const struct wse_link_frame *req,
			 uint32_t status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Whether a reply of @len data bytes fits one response to @req; if not,
 * refuses @req with E_INVAL and says why.
 */
bool fwd_conn_reply_fits(struct fwd_conn *c, const struct wse_link_frame *req, uint32_t len);
/* Sends an ERROR frame and closes the link (a protocol violation). */
void fwd_conn_fail(struct fwd_conn *c, uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* FWD_CONN_H */
