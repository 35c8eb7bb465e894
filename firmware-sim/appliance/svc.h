/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device side of a service's link (MemoryX, SwarmX, an input
 * worker): one host at a time (the coordinator), the handshake, the
 * link-level opcodes, and every other request handed in order to the
 * service's handler, whose answer goes back at once.
 */
#ifndef APPLIANCE_SVC_H
#define APPLIANCE_SVC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wse/link_frame.h"

struct svc_request {
	struct wse_link_frame f;
	const uint8_t *payload;
	size_t len;
};

struct svc_reply {
	uint32_t status;	/* WSE_LINK_OK, or an error with text */
	struct iovec iov[2];
	int iovcnt;
	char text[256];
};

struct svc_ops {
	const char *fw_version;		/* what HELLO says it is: "wse-memoryx 1" */
	uint64_t capacity;		/* bytes it may hold (HELLO's SRAM of a 1x1 "wafer") */
	void (*handle)(void *ctx, const struct svc_request *r, struct svc_reply *out);
	/* The host went: what it set up goes too. */
	void (*disconnected)(void *ctx);
};

/*
 * Serves hosts on @listen_fd one after another until SIGTERM or SIGINT.
 * Returns the process's exit status.
 */
int svc_serve(const struct svc_ops *ops, void *ctx, int listen_fd);

/* Sets @out to refuse the request with @status and a text. */
void svc_refuse(struct svc_reply *out, uint32_t status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Opens @spec for listening (and writes the TCP port to @port_file if
 * given); returns the fd or a negative errno, logging why.
 */
int svc_listen(const char *spec, const char *port_file);

/* SIGTERM and SIGINT set a flag the serving loops poll. */
void svc_catch_signals(void);
int svc_stopping(void);

#endif /* APPLIANCE_SVC_H */
