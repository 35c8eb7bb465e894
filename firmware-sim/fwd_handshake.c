// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device side of the handshake: HELLO must be the host's first frame.
 * The device picks the highest version both sides speak, the smaller of
 * the two payload maxima, and answers with its identity and geometry. A
 * refusal (no common version, unusable limits) is a HELLO response with a
 * failure status and a text, after which the device closes the link.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fwd_log.h"
#include "fwd_ops.h"
#include "fwd_version.h"

static void hello_refuse(struct fwd_conn *c, const struct wse_link_frame *f,
			 uint32_t status, const char *text)
{
	fwd_conn_reply_text(c, f, status, "%s", text);
	c->dead = true;
}

static void hello_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const struct fwd_request *r)
{
	const struct wse_link_frame *f = &r->f;
	const struct fwd_config *cfg = c->dev->cfg;
	struct wse_link_hello_info h;
	struct wse_link_device_info d = { 0 };
	struct wse_link_hello_reply reply;
	struct wse_link_err err;
	struct iovec iov;
	uint16_t lo, hi;
	uint32_t max_payload;
	uint8_t *scratch;
	int ret;

	(void)ctx;
	if (c->hello_done) {
		fwd_conn_fail(c, WSE_LINK_E_PROTO, "HELLO after the handshake was done");
		return;
	}
	/* Decoded here: a HELLO the device cannot accept is refused, not a violation. */
	ret = wse_link_hello_decode(r->data, r->len, &h, &err);
	if (ret == -EPROTO) {
		fwd_conn_fail(c, err.code, "%s", err.text);
		return;
	}
	if (ret) {
		hello_refuse(c, f, err.code, err.text);
		return;
	}
	lo = h.version_min > WSE_LINK_VERSION_MIN ? h.version_min : WSE_LINK_VERSION_MIN;
	hi = h.version_max < WSE_LINK_VERSION_MAX ? h.version_max : WSE_LINK_VERSION_MAX;
	if (lo > hi) {
		fwd_conn_reply_text(c, f, WSE_LINK_E_VERSION,
				    "no common protocol version: host speaks %u..%u, device speaks %u..%u",
				    h.version_min, h.version_max, WSE_LINK_VERSION_MIN,
				    WSE_LINK_VERSION_MAX);
		c->dead = true;
		return;
	}
	max_payload = h.max_payload < cfg->max_payload ? h.max_payload : cfg->max_payload;
	/* The HELLO payload lives in the scratch buffer: decoded above, so it
	 * may move now.
	 */
	if (max_payload > c->scratch_cap) {
		scratch = realloc(c->scratch, max_payload);
		if (!scratch) {
			hello_refuse(c, f, WSE_LINK_E_INTERNAL,
				     "the device cannot allocate its receive buffer");
			return;
		}
		c->scratch = scratch;
		c->scratch_cap = max_payload;
	}

	d.version = hi;
	d.caps = c->dev->caps;
	d.max_payload = cfg->max_payload;
	d.version_min = WSE_LINK_VERSION_MIN;
	d.version_max = WSE_LINK_VERSION_MAX;
	d.device_id = cfg->device_id;
	d.wafer_width = cfg->wafer_width;
	d.wafer_height = cfg->wafer_height;
	d.sram_per_pe = cfg->sram_per_pe;
	d.sram_total = cfg->sram_total;
	d.clock_khz = cfg->clock_khz;
	d.num_queues = cfg->num_queues;
	snprintf(d.fw_version, sizeof(d.fw_version), "%s", FWD_VERSION);
	wse_link_hello_reply_encode(&reply, &d);
	iov.iov_base = &reply;
	iov.iov_len = sizeof(reply);
	fwd_conn_reply(c, f, WSE_LINK_OK, &iov, 1);
	if (c->dead)
		return;

	c->hello_done = true;
	c->rules.version = (uint8_t)hi;
	c->rules.max_payload = max_payload;
	c->max_payload = max_payload;
	c->keepalive_ms = h.keepalive_ms;
	fwd_info("host %s: link up, version %u, max payload %u, keepalive %u ms, host caps 0x%x",
		 c->peer, hi, max_payload, h.keepalive_ms, h.caps);
}

const struct fwd_op fwd_op_hello = {
	.opcode = WSE_LINK_OP_HELLO,
	.before_hello = true,
	.link_level = true,
	.min_len = sizeof(struct wse_link_hello),
	.serve = hello_serve,
};
