/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opcode table. Each request opcode the device serves is one struct
 * fwd_op, defined next to its handler and listed in fwd_dispatch.c; adding
 * an opcode (program load, streams, jobs) is a new entry there.
 */
#ifndef FWD_OPS_H
#define FWD_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fwd_conn.h"

struct fwd_op {
	uint8_t opcode;
	/* Accepted before the handshake (only HELLO is). */
	bool before_hello;
	/* A link-level frame: must travel on queue 0. */
	bool link_level;
	/* Payload must be exactly this long (with exact_len) or at least. */
	uint32_t min_len;
	bool exact_len;
	/*
	 * Optional: bytes of fixed prefix to collect before place() decides
	 * where the rest of the payload goes (e.g. straight into device
	 * memory). place() returns the scatter list for the remaining
	 * @body_len bytes in @iov/@iovcnt, or 0 entries to use the scratch
	 * buffer. It records any refusal in @ctx; the handler acts on it after
	 * the data CRC was checked.
	 */
	uint32_t prefix_len;
	void (*place)(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const uint8_t *prefix,
		      uint32_t body_len, struct iovec *iov, int *iovcnt);
	/* Handles a complete, CRC-checked request. @payload is NULL when the
	 * body went through place()'s scatter list.
	 */
	void (*handle)(struct fwd_conn *c, const struct wse_link_frame *f,
		       struct fwd_rx_ctx *ctx, const uint8_t *payload);
};

/* The op for @opcode, or NULL if the device does not serve it. */
const struct fwd_op *fwd_op_lookup(uint8_t opcode);

extern const struct fwd_op fwd_op_hello;
extern const struct fwd_op fwd_op_keepalive;
extern const struct fwd_op fwd_op_shutdown;
extern const struct fwd_op fwd_op_error;
extern const struct fwd_op fwd_op_mem_write;
extern const struct fwd_op fwd_op_mem_read;
extern const struct fwd_op fwd_op_program_load;
extern const struct fwd_op fwd_op_program_unload;
extern const struct fwd_op fwd_op_stream_write;
extern const struct fwd_op fwd_op_stream_read;
extern const struct fwd_op fwd_op_run;
extern const struct fwd_op fwd_op_params_read;
extern const struct fwd_op fwd_op_params_write;
extern const struct fwd_op fwd_op_device_stats;

#endif /* FWD_OPS_H */
