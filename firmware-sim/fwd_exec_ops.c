// SPDX-License-Identifier: GPL-2.0-only
/*
 * The execution opcodes as the connection thread sees them: the frame's
 * fixed part is checked here (a malformed one is a protocol violation:
 * ERROR and close), a queue the device lacks is refused at once, and the
 * request goes to its queue's FIFO; its worker answers it when it is done
 * (fwd_exec_queue.c).
 */
#include "fwd_device.h"
#include "fwd_log.h"
#include "fwd_ops.h"

/* The fixed part parses; for requests that carry data, its announced length is exact. */
static bool well_formed(struct fwd_conn *c, const struct wse_link_frame *f, const uint8_t *payload)
{
	struct wse_link_prog_load_info pl;
	struct wse_link_stream_info st;
	struct wse_link_params_info pa;
	struct wse_link_run_info run;
	struct wse_link_err err;
	uint32_t slot;
	int ret = 0;

	switch (f->opcode) {
	case WSE_LINK_OP_PROGRAM_LOAD:
		ret = wse_link_prog_load_decode(payload, f->length, &pl, &err);
		break;
	case WSE_LINK_OP_PROGRAM_UNLOAD:
		ret = wse_link_prog_ref_decode(payload, f->length, &slot, &err);
		break;
	case WSE_LINK_OP_STREAM_WRITE:
	case WSE_LINK_OP_STREAM_READ:
		ret = wse_link_stream_decode(payload, f->length, &st, &err);
		if (!ret && f->opcode == WSE_LINK_OP_STREAM_WRITE &&
		    st.length != f->length - sizeof(struct wse_link_stream))
			ret = wse_link_err_set(&err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					       "STREAM_WRITE announces %u bytes but carries %zu",
					       st.length, f->length - sizeof(struct wse_link_stream));
		break;
	case WSE_LINK_OP_RUN:
		ret = wse_link_run_decode(payload, f->length, &run, &err);
		break;
	case WSE_LINK_OP_PARAMS_READ:
	case WSE_LINK_OP_PARAMS_WRITE:
		ret = wse_link_params_decode(payload, f->length, &pa, &err);
		if (!ret && f->opcode == WSE_LINK_OP_PARAMS_WRITE &&
		    pa.length != f->length - sizeof(struct wse_link_params))
			ret = wse_link_err_set(&err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
					       "PARAMS_WRITE announces %u bytes but carries %zu",
					       pa.length, f->length - sizeof(struct wse_link_params));
		break;
	default:
		break;
	}
	if (ret)
		fwd_conn_fail(c, ret, "%s", err.text);
	return !ret;
}

static void exec_handle(struct fwd_conn *c, const struct wse_link_frame *f,
			struct fwd_rx_ctx *ctx, const uint8_t *payload)
{
	const struct fwd_config *cfg = c->dev->cfg;

	(void)ctx;
	if (!well_formed(c, f, payload))
		return;
	if (f->queue >= cfg->num_queues) {
		fwd_conn_reply_text(c, f, WSE_LINK_E_INVAL,
				    "queue %u does not exist (the device has %u queues)", f->queue,
				    cfg->num_queues);
		return;
	}
	if (fwd_exec_submit(&c->dev->exec, f, payload))
		fwd_conn_reply_text(c, f, WSE_LINK_E_INTERNAL,
				    "the device cannot queue the request (out of memory or threads)");
}

const struct fwd_op fwd_op_program_load = {
	.opcode = WSE_LINK_OP_PROGRAM_LOAD,
	.min_len = sizeof(struct wse_link_program_load),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_program_unload = {
	.opcode = WSE_LINK_OP_PROGRAM_UNLOAD,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_program_ref),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_stream_write = {
	.opcode = WSE_LINK_OP_STREAM_WRITE,
	.min_len = sizeof(struct wse_link_stream),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_stream_read = {
	.opcode = WSE_LINK_OP_STREAM_READ,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_stream),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_run = {
	.opcode = WSE_LINK_OP_RUN,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_run),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_params_read = {
	.opcode = WSE_LINK_OP_PARAMS_READ,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_params),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_params_write = {
	.opcode = WSE_LINK_OP_PARAMS_WRITE,
	.min_len = sizeof(struct wse_link_params),
	.handle = exec_handle,
};

const struct fwd_op fwd_op_device_stats = {
	.opcode = WSE_LINK_OP_DEVICE_STATS,
	.exact_len = true,
	.min_len = 0,
	.handle = exec_handle,
};
