// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device side of a service's link (svc.h). Single-threaded: a request
 * is answered before the next is read, which is all the coordinator needs
 * of a service, and keeps each service's state free of locks.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "svc.h"
#include "wse/link_addr.h"
#include "wse/link_io.h"
#include "wse/link_payloads.h"

#define POLL_MS		500
#define FRAME_MS	10000	/* the rest of a frame once its first byte came */
#define SEND_MS		WSE_LINK_SEND_MS

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

void svc_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int svc_stopping(void)
{
	return stop_signal != 0;
}

void svc_refuse(struct svc_reply *out, uint32_t status, const char *fmt, ...)
{
	va_list ap;

	out->status = status;
	out->iovcnt = 0;
	va_start(ap, fmt);
	vsnprintf(out->text, sizeof(out->text), fmt, ap);
	va_end(ap);
}

int svc_listen(const char *spec, const char *port_file)
{
	struct wse_link_addr addr;
	char err[256];
	int fd, port, ret;

	if (wse_link_addr_parse(spec, &addr, err, sizeof(err))) {
		fwd_err("--listen %s", err);
		return -EINVAL;
	}
	fd = wse_link_listen(&addr, err, sizeof(err));
	if (fd < 0) {
		fwd_err("%s", err);
		return fd;
	}
	if (addr.is_unix) {
		fwd_info("listening on unix:%s", addr.path);
		return fd;
	}
	port = wse_link_local_port(fd);
	fwd_info("listening on tcp:%s:%d", addr.host, port);
	if (port_file && (ret = wse_link_write_port_file(port_file, port))) {
		fwd_err("cannot write the port to %s: %s", port_file, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

/* Waits for input on @fd; 1 readable, 0 stopping, negative errno. */
static int wait_input(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (!stop_signal) {
		int n = poll(&p, 1, POLL_MS);

		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static int send_reply(int fd, const struct wse_link_rx_rules *rules, const struct wse_link_frame *req,
		      uint32_t status, const struct iovec *data, int ndata, const char *text)
{
	struct wse_link_frame f = { .version = rules->version, .opcode = req->opcode,
				    .flags = WSE_LINK_F_RESPONSE, .queue = req->queue,
				    .tag = req->tag };
	struct wse_link_status st;
	struct iovec iov[3] = { { &st, sizeof(st) } };
	struct wse_link_err err;
	int n = 1;

	wse_link_status_encode(&st, status);
	if (status) {
		iov[n++] = (struct iovec){ (void *)text, strlen(text) };
	} else {
		for (int i = 0; i < ndata; i++)
			iov[n++] = data[i];
	}
	return wse_link_send(fd, &f, iov, n, SEND_MS, &err);
}

/* HELLO: the link's first frame. 0 and @rules negotiated, or negative. */
static int handshake(int fd, const struct svc_ops *ops, uint8_t *buf,
		     struct wse_link_rx_rules *rules)
{
	struct wse_link_frame f;
	struct wse_link_hello_info hello;
	struct wse_link_device_info dev = {
		.version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.max_payload = WSE_LINK_PAYLOAD_LIMIT, .device_id = (uint64_t)getpid(),
		.wafer_width = 1, .wafer_height = 1, .num_queues = 4, .clock_khz = 1,
	};
	struct wse_link_hello_reply raw;
	struct iovec iov = { &raw, sizeof(raw) };
	struct wse_link_err err;
	int ret;

	*rules = (struct wse_link_rx_rules){ .version = WSE_LINK_VERSION_MIN,
					     .max_payload = WSE_LINK_PAYLOAD_MIN };
	ret = wait_input(fd);
	if (ret <= 0)
		return ret ? ret : -EINTR;
	ret = wse_link_recv(fd, rules, &f, buf, WSE_LINK_PAYLOAD_MIN, FRAME_MS, &err);
	if (ret)
		return ret;
	if (f.opcode != WSE_LINK_OP_HELLO || (f.flags & WSE_LINK_F_RESPONSE))
		return -EPROTO;
	if (wse_link_hello_decode(buf, f.length, &hello, &err) ||
	    hello.version_min > WSE_LINK_VERSION_MAX || hello.version_max < WSE_LINK_VERSION_MIN) {
		send_reply(fd, rules, &f, WSE_LINK_E_VERSION, NULL, 0,
			   "no common protocol version with the appliance's services");
		return -EPROTO;
	}
	dev.version = hello.version_max < WSE_LINK_VERSION_MAX ? hello.version_max :
								 WSE_LINK_VERSION_MAX;
	dev.sram_per_pe = ops->capacity ? ops->capacity : 1;
	dev.sram_total = dev.sram_per_pe;
	dev.max_payload = hello.max_payload < WSE_LINK_PAYLOAD_LIMIT ? hello.max_payload :
								       WSE_LINK_PAYLOAD_LIMIT;
	snprintf(dev.fw_version, sizeof(dev.fw_version), "%s", ops->fw_version);
	wse_link_hello_reply_encode(&raw, &dev);
	ret = send_reply(fd, rules, &f, WSE_LINK_OK, &iov, 1, "");
	rules->max_payload = dev.max_payload;
	rules->version = dev.version;
	return ret;
}

/* One host's link, until it goes or a signal comes. */
static void serve_host(const struct svc_ops *ops, void *ctx, int fd, uint8_t *buf)
{
	struct wse_link_rx_rules rules;
	struct wse_link_err err;
	int ret = handshake(fd, ops, buf, &rules);

	if (ret) {
		fwd_warn("a host failed the handshake: %s", strerror(-ret));
		return;
	}
	while ((ret = wait_input(fd)) > 0) {
		struct svc_request r;
		struct svc_reply out = { .status = WSE_LINK_OK };

		ret = wse_link_recv(fd, &rules, &r.f, buf, rules.max_payload, FRAME_MS, &err);
		if (ret) {
			if (ret != -EPIPE)
				fwd_warn("the host's frame: %s", err.text);
			return;
		}
		r.payload = buf;
		r.len = r.f.length;
		if (r.f.flags & WSE_LINK_F_RESPONSE || r.f.opcode == WSE_LINK_OP_ERROR)
			return;		/* nothing here asks the host anything */
		if (r.f.opcode == WSE_LINK_OP_KEEPALIVE || r.f.opcode == WSE_LINK_OP_SHUTDOWN) {
			send_reply(fd, &rules, &r.f, WSE_LINK_OK, NULL, 0, "");
			if (r.f.opcode == WSE_LINK_OP_SHUTDOWN)
				return;
			continue;
		}
		ops->handle(ctx, &r, &out);
		if (send_reply(fd, &rules, &r.f, out.status, out.iov, out.iovcnt, out.text))
			return;
	}
}

int svc_serve(const struct svc_ops *ops, void *ctx, int listen_fd)
{
	uint8_t *buf = malloc(WSE_LINK_PAYLOAD_LIMIT);

	if (!buf) {
		fwd_err("out of memory");
		return 1;
	}
	while (wait_input(listen_fd) > 0) {
		int fd = accept(listen_fd, NULL, NULL);
		char peer[128];

		if (fd < 0)
			continue;
		wse_link_tune_socket(fd);
		wse_link_peer_name(fd, peer, sizeof(peer));
		fwd_info("host %s connected", peer);
		serve_host(ops, ctx, fd, buf);
		close(fd);
		fwd_info("host %s left", peer);
		if (ops->disconnected)
			ops->disconnected(ctx);
	}
	free(buf);
	fwd_info("stopping (signal %d)", (int)stop_signal);
	return 0;
}
