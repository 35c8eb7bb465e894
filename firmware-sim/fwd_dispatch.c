// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opcode -> op, and a complete request to its op: decoded once, then
 * served on the connection thread or queued for its queue's worker. New
 * opcodes are one line of the table plus their own file.
 */
#include <errno.h>
#include <stddef.h>

#include "fwd_ops.h"

static const struct fwd_op *const op_table[256] = {
	[WSE_LINK_OP_HELLO] = &fwd_op_hello,
	[WSE_LINK_OP_KEEPALIVE] = &fwd_op_keepalive,
	[WSE_LINK_OP_SHUTDOWN] = &fwd_op_shutdown,
	[WSE_LINK_OP_ERROR] = &fwd_op_error,
	[WSE_LINK_OP_CANCEL] = &fwd_op_cancel,
	[WSE_LINK_OP_MEM_WRITE] = &fwd_op_mem_write,
	[WSE_LINK_OP_MEM_READ] = &fwd_op_mem_read,
	[WSE_LINK_OP_PROGRAM_LOAD] = &fwd_op_program_load,
	[WSE_LINK_OP_PROGRAM_UNLOAD] = &fwd_op_program_unload,
	[WSE_LINK_OP_STREAM_WRITE] = &fwd_op_stream_write,
	[WSE_LINK_OP_STREAM_READ] = &fwd_op_stream_read,
	[WSE_LINK_OP_RUN] = &fwd_op_run,
	[WSE_LINK_OP_PARAMS_READ] = &fwd_op_params_read,
	[WSE_LINK_OP_PARAMS_WRITE] = &fwd_op_params_write,
	[WSE_LINK_OP_DEVICE_STATS] = &fwd_op_device_stats,
	[WSE_LINK_OP_REGION_MAP] = &fwd_op_region_map,
	[WSE_LINK_OP_STREAM_WRITE_REGION] = &fwd_op_stream_write_region,
	[WSE_LINK_OP_STREAM_READ_REGION] = &fwd_op_stream_read_region,
};

const struct fwd_op *fwd_op_lookup(uint8_t opcode)
{
	return op_table[opcode];
}

int fwd_data_announced(uint32_t announced, size_t carried, const char *what,
		       struct wse_link_err *err)
{
	if (announced == carried)
		return 0;
	return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD,
				"%s announces %u bytes but carries %zu", what, announced, carried);
}

void fwd_dispatch(struct fwd_conn *c, const struct fwd_op *op, const struct wse_link_frame *f,
		  struct fwd_rx_ctx *ctx, const uint8_t *payload)
{
	const struct fwd_config *cfg = c->dev->cfg;
	struct fwd_request r = { .op = op, .f = *f, .data = payload, .len = f->length };
	struct wse_link_err err;
	int ret;

	if (op->decode) {
		ret = op->decode(payload, f->length, &r.args, &err);
		if (ret) {
			fwd_conn_fail(c, err.code, "%s", err.text);
			return;
		}
		r.data = payload + op->min_len;
		r.len = f->length - op->min_len;
	}
	if (op->serve) {
		op->serve(c, ctx, &r);
		return;
	}
	if (f->queue >= cfg->num_queues) {
		fwd_conn_reply_text(c, f, WSE_LINK_E_INVAL,
				    "queue %u does not exist (the device has %u queues)", f->queue,
				    cfg->num_queues);
		return;
	}
	ret = fwd_exec_submit(&c->dev->exec, &r);
	if (ret == -EBUSY)
		fwd_conn_reply_text(c, f, WSE_LINK_E_BUSY,
				    "the device holds %u requests or %u MiB of their payloads ahead of their answers already (its read-ahead): ask again once some are answered",
				    WSE_LINK_QUEUED_REQS, WSE_LINK_QUEUED_BYTES >> 20);
	else if (ret)
		fwd_conn_reply_text(c, f, WSE_LINK_E_INTERNAL,
				    "the device cannot queue the request (out of memory or threads)");
}
