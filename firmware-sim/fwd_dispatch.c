// SPDX-License-Identifier: GPL-2.0-only
/* Opcode -> handler. New opcodes are one line here plus their own file. */
#include <stddef.h>

#include "fwd_ops.h"

static const struct fwd_op *const op_table[256] = {
	[WSE_LINK_OP_HELLO] = &fwd_op_hello,
	[WSE_LINK_OP_KEEPALIVE] = &fwd_op_keepalive,
	[WSE_LINK_OP_SHUTDOWN] = &fwd_op_shutdown,
	[WSE_LINK_OP_ERROR] = &fwd_op_error,
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
};

const struct fwd_op *fwd_op_lookup(uint8_t opcode)
{
	return op_table[opcode];
}
