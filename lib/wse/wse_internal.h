/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libwse internals shared by its files; not installed. */
#ifndef WSE_INTERNAL_H
#define WSE_INTERNAL_H

#include <stdint.h>

#include "wse/wse.h"

struct wse_dev {
	int fd;
	int index;			/* control-plane index, -1 if unknown */
	uint64_t max_job_bytes;		/* cached from GET_INFO at open */
};

/* ioctl() as 0 or -errno, restarted on EINTR. */
int wse_ioctl(struct wse_dev *dev, unsigned long req, void *arg);

#endif /* WSE_INTERNAL_H */
