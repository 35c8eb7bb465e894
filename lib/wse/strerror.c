// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse error messages: what an errno means where the project gives it a
 * more specific meaning (the UAPI documents each), strerror() otherwise.
 */
#include <errno.h>
#include <string.h>

#include "wse/wse.h"

const char *wse_strerror(int code)
{
	if (code > 0)
		code = -code;
	switch (code) {
	case 0:
		return "success";
	case -EBUSY:
		return "queue full: collect finished jobs before submitting more "
		       "(or the firmware serves another host)";
	case -ENOTCONN:
		return "the device's firmware link is down (or it is a test device without one)";
	case -ENODEV:
		return "no such wse device (or it was detached)";
	case -ENOTTY:
		return "not a wse accel device";
	case -E2BIG:
		return "larger than the device takes (max BO size or max job bytes)";
	case -ETIME:
		return "the job did not finish before the deadline (it is still queued)";
	case -ETIMEDOUT:
		return "the firmware did not answer in time";
	case -ECANCELED:
		return "cancelled: its queue was destroyed or the device reset";
	case -ERANGE:
		return "outside device memory, or a value out of range";
	case -ENOSPC:
		return "the device has no room: SRAM full or too many queues or devices";
	case -EOPNOTSUPP:
		return "the firmware does not support this operation";
	case -EPROTO:
		return "the device sent a malformed reply";
	case -ENOENT:
		return "no such queue, job or buffer object in this file";
	case -EINVAL:
		return "invalid argument (a malformed spec, op, flag or range)";
	default:
		return strerror(-code);
	}
}
