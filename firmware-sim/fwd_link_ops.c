// SPDX-License-Identifier: GPL-2.0-only
/* Link-level requests from the host: KEEPALIVE, SHUTDOWN and ERROR. */
#include "fwd_log.h"
#include "fwd_ops.h"

static void keepalive_handle(struct fwd_conn *c, const struct wse_link_frame *f,
			     struct fwd_rx_ctx *ctx, const uint8_t *payload)
{
	(void)ctx;
	(void)payload;
	fwd_conn_reply(c, f, WSE_LINK_OK, NULL, 0);
}

static void shutdown_handle(struct fwd_conn *c, const struct wse_link_frame *f,
			    struct fwd_rx_ctx *ctx, const uint8_t *payload)
{
	(void)ctx;
	(void)payload;
	fwd_info("host %s asked for SHUTDOWN", c->peer);
	fwd_conn_reply(c, f, WSE_LINK_OK, NULL, 0);
	c->dead = true;
}

static void error_handle(struct fwd_conn *c, const struct wse_link_frame *f,
			 struct fwd_rx_ctx *ctx, const uint8_t *payload)
{
	struct wse_link_err err;
	char text[256];
	uint32_t code;

	(void)ctx;
	if (wse_link_error_decode(payload, f->length, &code, text, sizeof(text), &err)) {
		fwd_conn_fail(c, err.code, "%s", err.text);
		return;
	}
	fwd_warn("host %s reported %s: %s; closing", c->peer, wse_link_status_name(code), text);
	c->dead = true;
}

const struct fwd_op fwd_op_keepalive = {
	.opcode = WSE_LINK_OP_KEEPALIVE,
	.link_level = true,
	.exact_len = true,
	.min_len = 0,
	.handle = keepalive_handle,
};

const struct fwd_op fwd_op_shutdown = {
	.opcode = WSE_LINK_OP_SHUTDOWN,
	.link_level = true,
	.exact_len = true,
	.min_len = 0,
	.handle = shutdown_handle,
};

const struct fwd_op fwd_op_error = {
	.opcode = WSE_LINK_OP_ERROR,
	.link_level = true,
	.min_len = sizeof(struct wse_link_error),
	.handle = error_handle,
};
