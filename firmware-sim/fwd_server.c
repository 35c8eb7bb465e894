// SPDX-License-Identifier: GPL-2.0-only
/*
 * Accepting hosts and the main loop. One host is served at a time; another
 * one is accepted only to be told E_BUSY. Closed links linger briefly
 * (write side shut, input drained) so a peer reads our last frame instead
 * of a connection reset.
 *
 * SIGTERM and SIGINT are blocked except inside ppoll(), so a signal can only
 * interrupt the wait, never a half-sent frame.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fwd_conn.h"
#include "fwd_fault.h"
#include "fwd_log.h"
#include "fwd_server.h"

#define LINGER_MAX		16
#define LINGER_MS		1000
#define BUSY_SEND_MS		1000
#define EXIT_DRAIN_MS		1000

static volatile sig_atomic_t stop_signal;
static int signal_wake_fd = -1;

static void on_stop_signal(int sig)
{
	uint64_t one = 1;

	stop_signal = sig;
	/* OpenBLAS' threads, started before main(), do not block the signal:
	 * it may land there, so ring the poll loop's doorbell too.
	 */
	if (signal_wake_fd >= 0 && write(signal_wake_fd, &one, sizeof(one)) < 0) {
		/* Saturated: the loop wakes anyway. */
	}
}

struct lingering {
	int fd;
	int64_t deadline_ms;
};

struct server {
	struct fwd_device *dev;
	int listen_fd;
	struct fwd_conn conn;
	bool have_conn;
	bool served_one;
	struct lingering linger[LINGER_MAX];
	int nlinger;
};

int fwd_server_listen(const struct fwd_config *cfg)
{
	char err[256];
	int fd, port;

	fd = wse_link_listen(&cfg->listen, err, sizeof(err));
	if (fd < 0) {
		fwd_err("%s", err);
		return -1;
	}
	if (cfg->listen.is_unix) {
		fwd_info("listening on unix:%s", cfg->listen.path);
		return fd;
	}
	port = wse_link_local_port(fd);
	fwd_info("listening on tcp:%s:%d", cfg->listen.host, port);
	if (cfg->port_file && wse_link_write_port_file(cfg->port_file, port)) {
		fwd_err("cannot write the port to %s: %s", cfg->port_file, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Shuts our side and lets the peer's last bytes drain before closing. */
static void linger_add(struct server *s, int fd)
{
	if (s->nlinger == LINGER_MAX) {
		close(fd);
		return;
	}
	shutdown(fd, SHUT_WR);
	s->linger[s->nlinger].fd = fd;
	s->linger[s->nlinger].deadline_ms = wse_link_now_ms() + LINGER_MS;
	s->nlinger++;
}

static void linger_remove(struct server *s, int i)
{
	close(s->linger[i].fd);
	s->linger[i] = s->linger[--s->nlinger];
}

/* Reads and discards; closes at EOF, error or deadline. */
static void linger_service(struct server *s, int i, int64_t now)
{
	static uint8_t sink[65536];
	ssize_t n;

	for (int tries = 0; tries < 16; tries++) {
		n = recv(s->linger[i].fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    now < s->linger[i].deadline_ms)
			return;
		break;
	}
	if (n > 0 && now < s->linger[i].deadline_ms)
		return;
	linger_remove(s, i);
}

static void refuse_busy(struct server *s, int fd)
{
	struct wse_link_frame f = { .version = WSE_LINK_VERSION_MIN, .opcode = WSE_LINK_OP_ERROR };
	uint8_t payload[sizeof(struct wse_link_error) + 128];
	char peer[64], text[128];
	struct wse_link_err err;
	struct iovec iov;

	wse_link_peer_name(fd, peer, sizeof(peer));
	snprintf(text, sizeof(text), "device already serves host %s", s->conn.peer);
	fwd_warn("refusing host %s: %s", peer, text);
	iov.iov_base = payload;
	iov.iov_len = wse_link_error_encode(payload, sizeof(payload), WSE_LINK_E_BUSY, text);
	if (wse_link_send(fd, &f, &iov, 1, BUSY_SEND_MS, &err))
		fwd_warn("refusing host %s: %s", peer, err.text);
	linger_add(s, fd);
}

static void on_accept(struct server *s)
{
	char peer[64];
	int fd;

	for (int i = 0; i < 8; i++) {
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				fwd_warn("accept: %s", strerror(errno));
			return;
		}
		if (s->have_conn) {
			refuse_busy(s, fd);
			continue;
		}
		wse_link_peer_name(fd, peer, sizeof(peer));
		if (fwd_fault_drop_at_accept(&s->dev->cfg->fault)) {
			fwd_warn("fault: dropping host %s at accept", peer);
			close(fd);
			s->served_one = true;
			continue;
		}
		if (fwd_conn_init(&s->conn, s->dev, fd)) {
			fwd_err("out of memory for the link to %s", peer);
			fwd_conn_release(&s->conn);
			close(fd);
			continue;
		}
		s->have_conn = true;
		fwd_exec_attach(&s->dev->exec, &s->conn);
		fwd_info("host %s connected", peer);
	}
}

static void end_conn(struct server *s)
{
	struct fwd_conn *c = &s->conn;

	fwd_info("link to %s closed: %llu frames in (%llu bytes), %llu frames out (%llu bytes)",
		 c->peer, (unsigned long long)c->frames_rx, (unsigned long long)c->bytes_rx,
		 (unsigned long long)c->frames_tx, (unsigned long long)c->bytes_tx);
	/* The queue workers answer on this link: they stop before it goes. */
	fwd_exec_detach(&s->dev->exec);
	if (c->abrupt)
		close(c->fd);
	else
		linger_add(s, c->fd);
	fwd_conn_release(c);
	s->have_conn = false;
	s->served_one = true;
}

static int poll_timeout(struct server *s, int64_t now)
{
	int64_t next = -1;

	if (s->have_conn)
		next = fwd_conn_next_deadline(&s->conn);
	for (int i = 0; i < s->nlinger; i++)
		if (next < 0 || s->linger[i].deadline_ms < next)
			next = s->linger[i].deadline_ms;
	if (next < 0)
		return -1;
	if (next <= now)
		return 0;
	return next - now > INT_MAX ? INT_MAX : (int)(next - now);
}

static bool finished(struct server *s)
{
	if (stop_signal)
		return !s->have_conn;
	return s->dev->cfg->once && s->served_one && !s->have_conn;
}

/* Closes the lingering links, giving peers a moment to read our last frame. */
static void drain_lingering(struct server *s, sigset_t *waitmask)
{
	int64_t end = wse_link_now_ms() + EXIT_DRAIN_MS;

	while (s->nlinger) {
		struct pollfd pfds[LINGER_MAX];
		struct timespec ts;
		int64_t now = wse_link_now_ms();

		if (now >= end)
			break;
		for (int i = 0; i < s->nlinger; i++)
			pfds[i] = (struct pollfd){ .fd = s->linger[i].fd, .events = POLLIN };
		ts.tv_sec = (end - now) / 1000;
		ts.tv_nsec = (long)((end - now) % 1000) * 1000000;
		if (ppoll(pfds, (nfds_t)s->nlinger, &ts, waitmask) < 0 && errno != EINTR)
			break;
		now = wse_link_now_ms();
		for (int i = s->nlinger - 1; i >= 0; i--)
			if (pfds[i].revents)
				linger_service(s, i, now);
	}
	while (s->nlinger)
		linger_remove(s, s->nlinger - 1);
}

void fwd_server_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int fwd_server_run(struct fwd_device *dev, int listen_fd)
{
	struct server s = { .dev = dev, .listen_fd = listen_fd };
	sigset_t waitmask;
	bool stop_seen = false;

	signal_wake_fd = dev->exec.wake_fd;
	/* A signal that came before (fwd_server_catch_signals()) is pending: ppoll() takes it. */
	sigprocmask(SIG_BLOCK, NULL, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);

	while (!finished(&s)) {
		struct pollfd pfds[3 + LINGER_MAX];
		int nfds = 0, conn_idx = -1, wake_idx, linger_base, timeout, n;
		struct timespec ts, *tsp = NULL;
		int64_t now = wse_link_now_ms();

		if (stop_signal && !stop_seen) {
			stop_seen = true;
			fwd_info("signal %d: stopping", (int)stop_signal);
			if (s.have_conn)
				fwd_conn_begin_shutdown(&s.conn);
			if (s.have_conn && s.conn.dead)
				end_conn(&s);
			continue;
		}
		if (!stop_signal)
			pfds[nfds++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
		if (s.have_conn) {
			/* Always read: what the queues cannot take is refused (E_BUSY). */
			conn_idx = nfds;
			pfds[nfds++] = (struct pollfd){ .fd = s.conn.fd, .events = POLLIN };
		}
		wake_idx = nfds;
		pfds[nfds++] = (struct pollfd){ .fd = dev->exec.wake_fd, .events = POLLIN };
		linger_base = nfds;
		for (int i = 0; i < s.nlinger; i++)
			pfds[nfds++] = (struct pollfd){ .fd = s.linger[i].fd, .events = POLLIN };
		timeout = poll_timeout(&s, now);
		if (timeout >= 0) {
			ts.tv_sec = timeout / 1000;
			ts.tv_nsec = (long)(timeout % 1000) * 1000000;
			tsp = &ts;
		}
		n = ppoll(pfds, (nfds_t)nfds, tsp, &waitmask);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fwd_err("poll: %s", strerror(errno));
			break;
		}
		now = wse_link_now_ms();
		/* Lingering links first: removing one reorders the array. */
		for (int i = s.nlinger - 1; i >= 0; i--)
			if (pfds[linger_base + i].revents || now >= s.linger[i].deadline_ms)
				linger_service(&s, i, now);
		if (pfds[wake_idx].revents)
			fwd_exec_ack_wake(&dev->exec);
		if (conn_idx >= 0 && pfds[conn_idx].revents)
			fwd_conn_on_readable(&s.conn);
		if (s.have_conn)
			fwd_conn_check_timers(&s.conn, wse_link_now_ms());
		if (s.have_conn && s.conn.dead)
			end_conn(&s);
		if (!stop_signal && pfds[0].revents)
			on_accept(&s);
	}
	if (s.have_conn)
		end_conn(&s);
	drain_lingering(&s, &waitmask);
	fwd_info("stopped");
	return 0;
}
