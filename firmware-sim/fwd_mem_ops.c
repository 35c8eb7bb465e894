// SPDX-License-Identifier: GPL-2.0-only
/*
 * MEM_WRITE and MEM_READ: host access to device memory (the wafer SRAM).
 * A write's data is read from the socket straight into the backing chunks;
 * a read's response is sent straight from them.
 */
#include <errno.h>
#include <stdio.h>

#include "fwd_log.h"
#include "fwd_ops.h"

/* Queue, capacity and range checks common to reads and writes. */
static uint32_t mem_check(struct fwd_conn *c, uint16_t queue, const char *what,
			  uint64_t addr, uint32_t len, char *text, size_t textlen)
{
	const struct fwd_config *cfg = c->dev->cfg;
	uint64_t cap = c->dev->mem.capacity;

	if (queue >= cfg->num_queues) {
		snprintf(text, textlen, "queue %u does not exist (the device has %u queues)",
			 queue, cfg->num_queues);
		return WSE_LINK_E_INVAL;
	}
	if (len > cap) {
		snprintf(text, textlen,
			 "%s of %u bytes exceeds the device memory capacity of %llu bytes",
			 what, len, (unsigned long long)cap);
		return WSE_LINK_E_NOSPC;
	}
	if (!fwd_memory_in_range(&c->dev->mem, addr, len)) {
		snprintf(text, textlen,
			 "%s of %u bytes at address 0x%llx is outside device memory (capacity %llu bytes)",
			 what, len, (unsigned long long)addr, (unsigned long long)cap);
		return WSE_LINK_E_RANGE;
	}
	return WSE_LINK_OK;
}

static void mem_write_place(struct fwd_conn *c, struct fwd_rx_ctx *ctx,
			    const uint8_t *prefix, uint32_t body_len,
			    struct iovec *iov, int *iovcnt)
{
	struct wse_link_err err;
	int ret;

	if (wse_link_mem_decode(prefix, sizeof(struct wse_link_mem), &ctx->addr,
				&ctx->length, &err)) {
		ctx->status = err.code;
		ctx->fatal = true;
		snprintf(ctx->text, sizeof(ctx->text), "%s", err.text);
		return;
	}
	if (ctx->length != body_len) {
		ctx->status = WSE_LINK_E_PROTO;
		ctx->fatal = true;
		snprintf(ctx->text, sizeof(ctx->text),
			 "MEM_WRITE announces %u bytes but carries %u", ctx->length, body_len);
		return;
	}
	ctx->status = mem_check(c, c->f.queue, "write", ctx->addr, ctx->length,
				ctx->text, sizeof(ctx->text));
	if (ctx->status || !body_len)
		return;
	ret = fwd_memory_map(&c->dev->mem, ctx->addr, body_len, true, iov, iovcnt);
	if (ret) {
		*iovcnt = 0;
		ctx->status = WSE_LINK_E_NOSPC;
		snprintf(ctx->text, sizeof(ctx->text),
			 "the simulator has no host memory left to back device memory at 0x%llx",
			 (unsigned long long)ctx->addr);
	}
}

static void mem_write_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx,
			    const struct fwd_request *r)
{
	const struct wse_link_frame *f = &r->f;

	if (ctx->status) {
		fwd_conn_reply_text(c, f, ctx->status, "%s", ctx->text);
		return;
	}
	fwd_dbg("wrote %u bytes at 0x%llx (%llu bytes of device memory backed)",
		ctx->length, (unsigned long long)ctx->addr,
		(unsigned long long)c->dev->mem.resident);
	fwd_conn_reply(c, f, WSE_LINK_OK, NULL, 0);
}

static int mem_read_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			   struct wse_link_err *err)
{
	return wse_link_mem_decode(payload, len, &a->mem.addr, &a->mem.length, err);
}

static void mem_read_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const struct fwd_request *r)
{
	const struct wse_link_frame *f = &r->f;
	struct iovec iov[FWD_MEM_MAX_IOV];
	uint64_t addr = r->args.mem.addr;
	uint32_t len = r->args.mem.length;
	uint32_t status;
	int cnt = 0;

	status = mem_check(c, f->queue, "read", addr, len, ctx->text, sizeof(ctx->text));
	if (status) {
		fwd_conn_reply_text(c, f, status, "%s", ctx->text);
		return;
	}
	if (!fwd_conn_reply_fits(c, f, len))
		return;
	if (len && fwd_memory_map(&c->dev->mem, addr, len, false, iov, &cnt)) {
		fwd_conn_reply_text(c, f, WSE_LINK_E_INTERNAL, "cannot map device memory");
		return;
	}
	fwd_conn_reply(c, f, WSE_LINK_OK, iov, cnt);
}

const struct fwd_op fwd_op_mem_write = {
	.opcode = WSE_LINK_OP_MEM_WRITE,
	.min_len = sizeof(struct wse_link_mem),
	.prefix_len = sizeof(struct wse_link_mem),
	.place = mem_write_place,
	.serve = mem_write_serve,
};

const struct fwd_op fwd_op_mem_read = {
	.opcode = WSE_LINK_OP_MEM_READ,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_mem),
	.decode = mem_read_decode,
	.serve = mem_read_serve,
};
