// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Link addresses ("tcp:HOST:PORT", "unix:PATH"): parsing, listening,
 * connecting with a timeout, and socket tuning for bulk transfer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "wse/link_addr.h"
#include "wse/numparse.h"
#include "wse/outfile.h"

/* 4 MiB: a few maximum-size frames in flight each way. */
#define LINK_SOCKET_BUFFER	(4 << 20)

int wse_link_addr_parse(const char *spec, struct wse_link_addr *addr,
			char *err, size_t errlen)
{
	const char *rest, *colon;
	size_t hostlen;
	uint64_t port;
	char why[160];

	memset(addr, 0, sizeof(*addr));
	if (!strncmp(spec, "unix:", 5)) {
		rest = spec + 5;
		if (!*rest || strlen(rest) >= sizeof(addr->path)) {
			snprintf(err, errlen,
				 "'%s': a unix socket path must be 1..%zu characters",
				 spec, sizeof(addr->path) - 1);
			return -EINVAL;
		}
		addr->is_unix = true;
		strcpy(addr->path, rest);
		return 0;
	}
	if (strncmp(spec, "tcp:", 4)) {
		snprintf(err, errlen,
			 "'%s': an address is tcp:HOST:PORT or unix:PATH", spec);
		return -EINVAL;
	}
	rest = spec + 4;
	colon = strrchr(rest, ':');
	if (!colon || colon == rest) {
		snprintf(err, errlen, "'%s': expected tcp:HOST:PORT", spec);
		return -EINVAL;
	}
	hostlen = (size_t)(colon - rest);
	/* [v6addr]:port */
	if (rest[0] == '[' && hostlen >= 2 && rest[hostlen - 1] == ']') {
		rest++;
		hostlen -= 2;
	}
	if (!hostlen || hostlen >= sizeof(addr->host)) {
		snprintf(err, errlen, "'%s': bad host part", spec);
		return -EINVAL;
	}
	memcpy(addr->host, rest, hostlen);
	addr->host[hostlen] = '\0';
	if (wse_parse_u64(colon + 1, 0, 65535, WSE_NUM_PLAIN, &port, why, sizeof(why))) {
		snprintf(err, errlen, "'%s': the port %s", spec, why);
		return -EINVAL;
	}
	snprintf(addr->port, sizeof(addr->port), "%llu", (unsigned long long)port);
	return 0;
}

static void unix_sockaddr(const struct wse_link_addr *addr, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, addr->path, strlen(addr->path));
}

static int listen_unix(const struct wse_link_addr *addr, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, probe;

	unix_sockaddr(addr, &sun);
	if (!lstat(addr->path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket: remove it or pick another path",
				 addr->path);
			return -EEXIST;
		}
		/* A socket file nobody listens on is left over from a crash. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && !connect(probe, (struct sockaddr *)&sun, sizeof(sun))) {
			close(probe);
			snprintf(err, errlen, "%s: another process is listening there",
				 addr->path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(addr->path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    listen(fd, 8)) {
		int e = errno;

		snprintf(err, errlen, "cannot listen on unix:%s: %s", addr->path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

static int listen_tcp(const struct wse_link_addr *addr, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE,
	};
	struct addrinfo *res, *ai;
	int fd = -1, one = 1, rc, saved = 0;

	rc = getaddrinfo(addr->host, addr->port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot resolve %s: %s", addr->host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 8))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on tcp:%s:%s: %s", addr->host,
			 addr->port, strerror(saved));
		return -saved;
	}
	return fd;
}

int wse_link_listen(const struct wse_link_addr *addr, char *err, size_t errlen)
{
	return addr->is_unix ? listen_unix(addr, err, errlen)
			     : listen_tcp(addr, err, errlen);
}

/* Non-blocking connect bounded by @timeout_ms; returns 0 or an errno. */
static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t len,
			   int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int flags = fcntl(fd, F_GETFL);
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	int n;

	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, sa, len)) {
		if (errno != EINPROGRESS)
			return errno;
		do {
			n = poll(&pfd, 1, timeout_ms);
		} while (n < 0 && errno == EINTR);
		if (n == 0)
			return ETIMEDOUT;
		if (n < 0)
			return errno;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
			return errno;
		if (soerr)
			return soerr;
	}
	fcntl(fd, F_SETFL, flags);
	return 0;
}

int wse_link_connect(const struct wse_link_addr *addr, int timeout_ms,
		     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct sockaddr_un sun;
	int fd, rc;

	if (addr->is_unix) {
		unix_sockaddr(addr, &sun);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			rc = errno;
		else
			rc = connect_timeout(fd, (struct sockaddr *)&sun, sizeof(sun),
					     timeout_ms);
		if (rc) {
			snprintf(err, errlen, "cannot connect to unix:%s: %s",
				 addr->path, strerror(rc));
			if (fd >= 0)
				close(fd);
			return -rc;
		}
		wse_link_tune_socket(fd);
		return fd;
	}
	rc = getaddrinfo(addr->host, addr->port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot resolve %s: %s", addr->host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	fd = -1;
	rc = ENOENT;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			rc = errno;
			continue;
		}
		rc = connect_timeout(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
		if (!rc)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to tcp:%s:%s: %s", addr->host,
			 addr->port, strerror(rc));
		return -rc;
	}
	wse_link_tune_socket(fd);
	return fd;
}

int wse_link_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -EAFNOSUPPORT;
}

void wse_link_tune_socket(int fd)
{
	int size = LINK_SOCKET_BUFFER, one = 1;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	/* Best effort: the kernel clamps to its limits and that is fine. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (!getsockname(fd, (struct sockaddr *)&ss, &len) &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6))
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void wse_link_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

	if (getpeername(fd, (struct sockaddr *)&ss, &sl)) {
		snprintf(buf, len, "unknown peer");
		return;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(sin->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(sin6->sin6_port));
	} else {
		struct ucred cred;
		socklen_t cl = sizeof(cred);

		if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
			snprintf(buf, len, "unix peer pid %d", (int)cred.pid);
		else
			snprintf(buf, len, "unix peer");
	}
}

int wse_link_write_port_file(const char *path, int port)
{
	char line[16];
	int n = snprintf(line, sizeof(line), "%d\n", port);

	/* A FIFO a script reads the port from is written through, never replaced. */
	return wse_out_write_file(path, 0, line, (size_t)n, NULL, 0);
}
