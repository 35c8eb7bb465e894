// SPDX-License-Identifier: GPL-2.0-only
/* Link-level requests from the host: KEEPALIVE, SHUTDOWN, ERROR and CANCEL. */
#include <stdlib.h>

#include "fwd_device.h"
#include "fwd_exec.h"
#include "fwd_log.h"
#include "fwd_ops.h"

static void keepalive_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx,
			    const struct fwd_request *r)
{
	(void)ctx;
	fwd_conn_reply(c, &r->f, WSE_LINK_OK, NULL, 0);
}

static void shutdown_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx,
			   const struct fwd_request *r)
{
	(void)ctx;
	fwd_info("host %s asked for SHUTDOWN", c->peer);
	fwd_conn_reply(c, &r->f, WSE_LINK_OK, NULL, 0);
	c->dead = true;
}

static int error_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			struct wse_link_err *err)
{
	return wse_link_error_decode(payload, len, &a->error.code, a->error.text,
				     sizeof(a->error.text), err);
}

static void error_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const struct fwd_request *r)
{
	(void)ctx;
	fwd_warn("host %s reported %s: %s; closing", c->peer,
		 wse_link_status_name(r->args.error.code), r->args.error.text);
	c->dead = true;
}

static int cancel_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			 struct wse_link_err *err)
{
	return wse_link_cancel_decode(payload, len, &a->cancel, err);
}

/*
 * CANCEL, as it arrives: the request still queued is answered E_CANCELED
 * here, one executing is told and answers E_CANCELED itself if it waits
 * (or as usual, past its waits); the CANCEL is answered OK either way.
 */
static void cancel_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const struct fwd_request *r)
{
	struct fwd_req *dropped, *next;

	(void)ctx;
	fwd_exec_cancel(&c->dev->exec, r->args.cancel, &dropped);
	for (; dropped; dropped = next) {
		next = dropped->next;
		fwd_conn_reply_text(c, &dropped->r.f, WSE_LINK_E_CANCELED,
				    "cancelled by the host before it started");
		free(dropped);
	}
	fwd_conn_reply(c, &r->f, WSE_LINK_OK, NULL, 0);
}

const struct fwd_op fwd_op_keepalive = {
	.opcode = WSE_LINK_OP_KEEPALIVE,
	.link_level = true,
	.exact_len = true,
	.min_len = 0,
	.serve = keepalive_serve,
};

const struct fwd_op fwd_op_shutdown = {
	.opcode = WSE_LINK_OP_SHUTDOWN,
	.link_level = true,
	.exact_len = true,
	.min_len = 0,
	.serve = shutdown_serve,
};

const struct fwd_op fwd_op_error = {
	.opcode = WSE_LINK_OP_ERROR,
	.link_level = true,
	.min_len = sizeof(struct wse_link_error),
	.decode = error_decode,
	.serve = error_serve,
};

const struct fwd_op fwd_op_cancel = {
	.opcode = WSE_LINK_OP_CANCEL,
	.link_level = true,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_cancel),
	.decode = cancel_decode,
	.serve = cancel_serve,
};
