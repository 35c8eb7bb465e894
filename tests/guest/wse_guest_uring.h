/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * io_uring for the guest selftests: a DRM_WSE_URING_CMD_JOB in an SQE.
 */
#ifndef WSE_GUEST_URING_H
#define WSE_GUEST_URING_H

#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "drm/wse_accel.h"

/*
 * liburing 2.3 has no helper for URING_CMD: fills a 128-byte SQE by hand,
 * on registered buffer @fixed_index, or plain memory if it is negative.
 */
static inline void guest_uring_prep(struct io_uring_sqe *sqe, int fd,
				    const struct drm_wse_uring_job *job, uint64_t user_data,
				    int fixed_index)
{
	if (!sqe)
		abort();	/* the rings of the tests are sized for them */
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = DRM_WSE_URING_CMD_JOB;
	sqe->user_data = user_data;
	if (fixed_index >= 0) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = (uint16_t)fixed_index;
	}
	memcpy(sqe->cmd, job, sizeof(*job));
}

#endif /* WSE_GUEST_URING_H */
