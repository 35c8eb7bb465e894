/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_io.h - whole frames on a stream socket with a deadline
 * (library wselink). Blocking and non-blocking descriptors alike: every
 * wait is bounded, so a silent peer never hangs the caller.
 */
#ifndef WSE_LINK_IO_H
#define WSE_LINK_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wse/link_frame.h"

/* CLOCK_MONOTONIC in milliseconds. */
int64_t wse_link_now_ms(void);

/*
 * Writes all of @iov to @fd (blocking or non-blocking) before the absolute
 * deadline @deadline_ms (wse_link_now_ms() time; < 0 waits for ever).
 * Returns 0 or a negative errno (-ETIMEDOUT, -EPIPE, ...), with @err set.
 */
int wse_link_write_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms,
		       struct wse_link_err *err);
/* Reads exactly @len bytes; -EPIPE when the peer closed first. */
int wse_link_read_all(int fd, void *buf, size_t len, int64_t deadline_ms,
		      struct wse_link_err *err);

/*
 * Sends one frame: computes @f->length and @f->data_crc from the payload
 * @iov (may be NULL/0), encodes the header and writes everything within
 * @timeout_ms. Returns 0 or a negative errno.
 */
int wse_link_send(int fd, struct wse_link_frame *f, const struct iovec *iov,
		  int iovcnt, int timeout_ms, struct wse_link_err *err);

/*
 * Receives one frame into @f and its payload into @buf (@cap bytes; a
 * payload larger than @cap but within @rules is an E_PROTO error), checking
 * header and data CRC. Returns 0, -EPROTO (-EBADMSG for a CRC) for a
 * malformed frame with @err saying which rule it broke, or the socket's
 * negative errno (@err->check WSE_LINK_CHECK_IO).
 */
int wse_link_recv(int fd, const struct wse_link_rx_rules *rules,
		  struct wse_link_frame *f, void *buf, size_t cap,
		  int timeout_ms, struct wse_link_err *err);

#endif /* WSE_LINK_IO_H */
