/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libwse internals shared by its files; not installed. */
#ifndef WSE_INTERNAL_H
#define WSE_INTERNAL_H

#include <liburing.h>
#include <stdint.h>

#include "wse/wse.h"

struct wse_dev {
	int fd;
	int index;			/* control-plane index, -1 if unknown */
	uint64_t max_job_bytes;		/* cached from GET_INFO at open */
};

/*
 * The accel node @spec names (device.c): the path itself, or the node of
 * a control-plane index or of "any", with its index in *@index (-1 for a
 * path). 0 or a negative errno, as wse_open().
 */
#define WSE_NODE_PATH_MAX	64
int wse_node_path(const char *spec, char *path, size_t len, int *index);

/* ioctl() as 0 or -errno, restarted on EINTR. */
int wse_ioctl(struct wse_dev *dev, unsigned long req, void *arg);

/* A ring (ring.c); the stream batch (batch.c) needs its piece size. */
struct wse_ring {
	struct wse_dev *dev;
	struct io_uring ring;
	uint32_t queue_id;
	struct wse_ring_params p;
	unsigned int queued;		/* prepared, not yet submitted */
	unsigned int inflight;		/* submitted, completion not yet reaped */
	struct iovec *regs;		/* registered buffers */
	unsigned int nregs;
	struct wse_ring_stats st;
};

/* How long to wait for a command of @r beyond which the kernel has given up on it. */
int64_t wse_ring_wait_ms(const struct wse_ring *r);

#endif /* WSE_INTERNAL_H */
