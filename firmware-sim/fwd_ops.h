/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opcode table. Each request opcode the device serves is one struct
 * fwd_op, defined in its own file next to its handler and listed in
 * fwd_dispatch.c: a new opcode is that file and one line of the table.
 *
 * A request is dispatched once and decoded once: the connection thread
 * looks its opcode up, checks the payload size, and decodes the fixed
 * part with the op's .decode into a struct fwd_request; then either the
 * op's .serve answers it there, or the request (decoded, with its data)
 * goes to its queue, whose worker calls the op's .execute.
 */
#ifndef FWD_OPS_H
#define FWD_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fwd_conn.h"
#include "fwd_request.h"

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
	 * buffer. It records any refusal in @ctx; the op acts on it after
	 * the data CRC was checked.
	 */
	uint32_t prefix_len;
	void (*place)(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const uint8_t *prefix,
		      uint32_t body_len, struct iovec *iov, int *iovcnt);
	/*
	 * Optional: decodes and checks the fixed part (the first min_len
	 * bytes of @payload, @len in all) into @a; data after it must be as
	 * long as it says. Returns 0, or -EPROTO with @err: a malformed
	 * request is a protocol violation (ERROR and close). HELLO has none:
	 * a HELLO the device cannot accept is refused with a response.
	 */
	int (*decode)(const uint8_t *payload, uint32_t len, union fwd_args *a,
		      struct wse_link_err *err);
	/* Exactly one of the two: */
	/* Answers a complete, CRC-checked request on the connection thread. */
	void (*serve)(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const struct fwd_request *r);
	/* Carries it out on its queue's worker, after the requests before it. */
	void (*execute)(struct fwd_exec *x, const struct fwd_request *r);
};

/*
 * For a .decode: a request that carries data (@carried bytes after its
 * fixed part) must carry what its header announces. 0 or -EPROTO.
 */
int fwd_data_announced(uint32_t announced, size_t carried, const char *what,
		       struct wse_link_err *err);

/* The op for @opcode, or NULL if the device does not serve it. */
const struct fwd_op *fwd_op_lookup(uint8_t opcode);

/*
 * Decodes the complete request @f of @op (payload @payload: the prefix
 * when the body went through place()'s scatter list) and serves or queues
 * it.
 */
void fwd_dispatch(struct fwd_conn *c, const struct fwd_op *op, const struct wse_link_frame *f,
		  struct fwd_rx_ctx *ctx, const uint8_t *payload);

extern const struct fwd_op fwd_op_hello;
extern const struct fwd_op fwd_op_keepalive;
extern const struct fwd_op fwd_op_shutdown;
extern const struct fwd_op fwd_op_error;
extern const struct fwd_op fwd_op_cancel;
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
extern const struct fwd_op fwd_op_region_map;
extern const struct fwd_op fwd_op_stream_write_region;
extern const struct fwd_op fwd_op_stream_read_region;

#endif /* FWD_OPS_H */
