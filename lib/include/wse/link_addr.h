/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_addr.h - link addresses, "tcp:HOST:PORT" and "unix:PATH":
 * parsing, listening, connecting with a timeout, and socket tuning for
 * bulk transfer (library wselink).
 */
#ifndef WSE_LINK_ADDR_H
#define WSE_LINK_ADDR_H

#include <stdbool.h>
#include <stddef.h>

/* "tcp:HOST:PORT" (HOST may be [v6]) or "unix:PATH". */
struct wse_link_addr {
	bool is_unix;
	char host[256];
	char port[8];
	char path[108];
};

/* Returns 0, or -EINVAL with a sentence in @err. */
int wse_link_addr_parse(const char *spec, struct wse_link_addr *addr,
			char *err, size_t errlen);
/*
 * Opens a listening socket (close-on-exec, non-blocking accept). For unix
 * addresses a stale socket file with nobody listening is replaced; a live
 * one is refused. Returns the fd, or a negative errno with @err set.
 */
int wse_link_listen(const struct wse_link_addr *addr, char *err, size_t errlen);
/* Connects within @timeout_ms; returns a blocking fd, or a negative errno with @err set. */
int wse_link_connect(const struct wse_link_addr *addr, int timeout_ms,
		     char *err, size_t errlen);
/* The local TCP port of a bound socket, or a negative errno. */
int wse_link_local_port(int fd);
/*
 * Writes @port to @path as wse/outfile.h writes an output: a regular file
 * atomically (a temporary file renamed over it), so a script waiting for
 * the file reads the whole number; a FIFO written through. 0 or a negative
 * errno.
 */
int wse_link_write_port_file(const char *path, int port);
/* Large buffers and no Nagle delay: the link carries bulk and small frames. */
void wse_link_tune_socket(int fd);
/* "127.0.0.1:40000", "[::1]:40000" or "unix peer pid N" for @fd's peer. */
void wse_link_peer_name(int fd, char *buf, size_t len);

#endif /* WSE_LINK_ADDR_H */
