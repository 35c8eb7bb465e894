// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whole-frame I/O on a stream socket with a deadline. Works on blocking and
 * non-blocking descriptors alike: every wait is a poll() bounded by the
 * deadline, so a silent peer can never hang the caller.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wse/link_io.h"

int64_t wse_link_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for @events until the deadline: 0 ready, -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
	for (int tries = 0; tries < 1000000; tries++) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int timeout = -1;
		int n;

		if (deadline_ms >= 0) {
			int64_t left = deadline_ms - wse_link_now_ms();

			if (left <= 0)
				return -ETIMEDOUT;
			timeout = left > INT_MAX ? INT_MAX : (int)left;
		}
		n = poll(&pfd, 1, timeout);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
	return -ETIMEDOUT;
}

int wse_link_write_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms,
		       struct wse_link_err *err)
{
	while (iovcnt > 0) {
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
		ssize_t n;
		int ret;

		if (!iov->iov_len) {
			iov++;
			iovcnt--;
			continue;
		}
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				ret = -errno;
				wse_link_err_set(err, 0, WSE_LINK_CHECK_IO,
						 "send failed: %s", strerror(-ret));
				return ret;
			}
			ret = wait_fd(fd, POLLOUT, deadline_ms);
			if (ret) {
				wse_link_err_set(err, 0, WSE_LINK_CHECK_IO,
						 "send: %s", strerror(-ret));
				return ret;
			}
			continue;
		}
		while (n > 0 && iovcnt > 0) {
			if ((size_t)n >= iov->iov_len) {
				n -= (ssize_t)iov->iov_len;
				iov++;
				iovcnt--;
			} else {
				iov->iov_base = (uint8_t *)iov->iov_base + n;
				iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return 0;
}

int wse_link_read_all(int fd, void *buf, size_t len, int64_t deadline_ms,
		      struct wse_link_err *err)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
		int ret;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0) {
			wse_link_err_set(err, 0, WSE_LINK_CHECK_IO,
					 "peer closed the link with %zu bytes of a frame still due",
					 len);
			return -EPIPE;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			ret = -errno;
			wse_link_err_set(err, 0, WSE_LINK_CHECK_IO, "receive failed: %s",
					 strerror(errno));
			return ret;
		}
		ret = wait_fd(fd, POLLIN, deadline_ms);
		if (ret) {
			wse_link_err_set(err, 0, WSE_LINK_CHECK_IO, "receive: %s",
					 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int64_t deadline_from(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : wse_link_now_ms() + timeout_ms;
}

int wse_link_send(int fd, struct wse_link_frame *f, const struct iovec *iov,
		  int iovcnt, int timeout_ms, struct wse_link_err *err)
{
	struct iovec vec[1 + 64];
	struct wse_link_hdr raw;
	uint64_t length = 0;

	if (iovcnt < 0 || iovcnt > 64) {
		wse_link_err_set(err, WSE_LINK_E_INTERNAL, WSE_LINK_CHECK_IO,
				 "a frame takes at most 64 payload pieces, not %d", iovcnt);
		return -EINVAL;
	}
	for (int i = 0; i < iovcnt; i++)
		length += iov[i].iov_len;
	if (length > WSE_LINK_PAYLOAD_LIMIT) {
		wse_link_err_set(err, WSE_LINK_E_INTERNAL, WSE_LINK_CHECK_LENGTH,
				 "payload of %llu bytes exceeds the protocol limit",
				 (unsigned long long)length);
		return -EMSGSIZE;
	}
	f->length = (uint32_t)length;
	f->data_crc = wse_crc32c_iov(0, iov, iovcnt);
	wse_link_hdr_encode(&raw, f);
	vec[0].iov_base = &raw;
	vec[0].iov_len = sizeof(raw);
	if (iovcnt)
		memcpy(&vec[1], iov, sizeof(*iov) * (size_t)iovcnt);
	return wse_link_write_all(fd, vec, 1 + iovcnt, deadline_from(timeout_ms), err);
}

int wse_link_recv(int fd, const struct wse_link_rx_rules *rules,
		  struct wse_link_frame *f, void *buf, size_t cap,
		  int timeout_ms, struct wse_link_err *err)
{
	int64_t deadline = deadline_from(timeout_ms);
	struct wse_link_hdr raw;
	int ret;

	ret = wse_link_read_all(fd, &raw, sizeof(raw), deadline, err);
	if (ret)
		return ret;
	ret = wse_link_hdr_decode(&raw, rules, f, err);
	if (ret)
		return ret;
	if (f->length > cap)
		return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_LENGTH,
					"%s payload of %u bytes does not fit the %zu-byte receive buffer",
					wse_link_op_name(f->opcode), f->length, cap);
	ret = wse_link_read_all(fd, buf, f->length, deadline, err);
	if (ret)
		return ret;
	return wse_link_check_data_crc(f, wse_crc32c(0, buf, f->length), err);
}
