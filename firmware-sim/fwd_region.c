// SPDX-License-Identifier: GPL-2.0-only
/*
 * REGION_MAP: a host on this machine names a shared-memory region, which
 * the device maps so that STREAM_WRITE_REGION and STREAM_READ_REGION
 * (fwd_stream.c) move a transfer's data through it instead of through
 * frames. A region of another machine (no such name here, or another
 * nonce) is refused with E_UNSUPPORTED: the host then sends its data in
 * frames. Regions go with the link.
 */
#include <stdio.h>

#include "fwd_conn.h"
#include "fwd_exec.h"
#include "fwd_log.h"
#include "fwd_ops.h"

void *fwd_region_at(struct fwd_exec *x, const struct wse_link_region_ref_info *ref,
		    uint64_t len, char *text, size_t textlen)
{
	void *at = NULL;

	if (ref->region >= 1 && ref->region <= WSE_LINK_REGIONS_MAX)
		at = wse_link_region_at(&x->regions[ref->region - 1], ref->offset, len);
	if (!at)
		snprintf(text, textlen,
			 "%llu bytes at offset %llu of region %u: no such region, or outside it",
			 (unsigned long long)len, (unsigned long long)ref->offset, ref->region);
	return at;
}

bool fwd_region_in_use(struct fwd_exec *x, uint32_t id)
{
	for (int i = 0; i < FWD_PROGRAM_SLOTS; i++) {
		struct fwd_program *p = x->slots[i];

		if (!p)
			continue;
		if (p->busy)
			return true;
		for (uint32_t k = 0; k < p->prog->num_streams; k++)
			for (uint32_t r = 0; r < p->streams[k].nref; r++)
				if (p->streams[k].ref_region[r] == id)
					return true;
	}
	return false;
}

void fwd_region_unmap_all(struct fwd_exec *x)
{
	for (int i = 0; i < WSE_LINK_REGIONS_MAX; i++)
		wse_link_region_destroy(&x->regions[i]);
}

static int map_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
		      struct wse_link_err *err)
{
	return wse_link_region_map_decode(payload, len, &a->region, err);
}

/* On the connection thread: mapping is quick, and replaces under the lock. */
static void map_serve(struct fwd_conn *c, struct fwd_rx_ctx *ctx, const struct fwd_request *r)
{
	struct fwd_exec *x = &c->dev->exec;
	struct wse_link_region region, old;
	char text[200];

	(void)ctx;
	if (wse_link_region_map(&region, &r->args.region, text, sizeof(text))) {
		fwd_conn_reply_text(c, &r->f, WSE_LINK_E_UNSUPPORTED, "%s", text);
		return;
	}
	pthread_mutex_lock(&x->lock);
	/* Transfers held by reference, or a RUN, use the old mapping. */
	if (x->regions[r->args.region.region - 1].base &&
	    fwd_region_in_use(x, r->args.region.region)) {
		pthread_mutex_unlock(&x->lock);
		wse_link_region_destroy(&region);
		fwd_conn_reply_text(c, &r->f, WSE_LINK_E_INVAL,
				    "region %u is in use (a RUN, or weights held by reference): map it again between RUNs",
				    r->args.region.region);
		return;
	}
	/* A copy in progress may use the old mapping: a moment's wait. */
	while (x->region_users)
		pthread_cond_wait(&x->changed, &x->lock);
	old = x->regions[r->args.region.region - 1];
	x->regions[r->args.region.region - 1] = region;
	pthread_mutex_unlock(&x->lock);
	wse_link_region_destroy(&old);
	fwd_dbg("region %u: %s, %llu bytes", r->args.region.region, region.name,
		(unsigned long long)region.size);
	fwd_conn_reply(c, &r->f, WSE_LINK_OK, NULL, 0);
}

const struct fwd_op fwd_op_region_map = {
	.opcode = WSE_LINK_OP_REGION_MAP,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_region_map),
	.decode = map_decode,
	.serve = map_serve,
};
