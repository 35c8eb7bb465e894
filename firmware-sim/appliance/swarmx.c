// SPDX-License-Identifier: GPL-2.0-only
/*
 * SwarmX (wse-appliance --role swarmx): the fabric between MemoryX and
 * the systems. It holds a slot per system in a shared-memory region, into
 * which each system puts its gradients (STREAM_READ_REGION, or the
 * coordinator on its behalf for a system on another machine), and sums a
 * layer's slots in the gradient tree (engine_sum_tree(), the order a
 * device sums its micro-batches in) into the first, where MemoryX takes
 * the sum. The order is fixed: 1, 2, 4 or 8 systems give the same bits.
 * The broadcast of the weights is each system reading MemoryX's region
 * (the coordinator's STREAM_WRITE_REGION), counted here in bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "roles.h"
#include "svc.h"
#include "svc_proto.h"
#include "wse/engine.h"
#include "wse/link_region.h"

struct swarmx {
	struct wse_link_region region;
	bool have_region;
	uint32_t systems;
	uint64_t floats;		/* per slot */
	struct wse_link_region_map raw;	/* the reply describing the region */
	struct svc_stats stats;
};

static void drop(struct swarmx *sx)
{
	if (sx->have_region)
		wse_link_region_destroy(&sx->region);
	sx->have_region = false;
	sx->systems = 0;
}

static void open_slots(struct swarmx *sx, const struct svc_request *r, struct svc_reply *out)
{
	struct wse_link_region_map_info info;
	struct svc_sx_open in;
	char text[200];

	if (r->len != sizeof(in)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "SX_OPEN is %zu bytes, not %zu", r->len, sizeof(in));
		return;
	}
	memcpy(&in, r->payload, sizeof(in));
	if (!in.systems || in.systems > SVC_REDUCE_MAX || !in.floats || in.floats > (1ULL << 36)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "SwarmX serves 1..%u systems of 1..2^36 floats",
			   SVC_REDUCE_MAX);
		return;
	}
	drop(sx);
	if (wse_link_region_create(&sx->region, "sx", in.systems * in.floats * sizeof(float), text,
				   sizeof(text))) {
		svc_refuse(out, WSE_LINK_E_NOSPC, "SwarmX: %s", text);
		return;
	}
	sx->have_region = true;
	sx->systems = in.systems;
	sx->floats = in.floats;
	sx->stats.held = in.systems * in.floats * sizeof(float);
	wse_link_region_describe(&sx->region, 1, &info);
	wse_link_region_map_encode(&sx->raw, &info);
	out->iov[0] = (struct iovec){ &sx->raw, sizeof(sx->raw) };
	out->iovcnt = 1;
	fwd_info("slots for %u systems of %llu floats", in.systems, (unsigned long long)in.floats);
}

static void reduce(struct swarmx *sx, const struct svc_request *r, struct svc_reply *out)
{
	static uint32_t first_slot;
	float *part[SVC_REDUCE_MAX];
	struct svc_reduce in;

	if (r->len != sizeof(in)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "SX_REDUCE is %zu bytes, not %zu", r->len, sizeof(in));
		return;
	}
	memcpy(&in, r->payload, sizeof(in));
	if (!sx->have_region || !in.n || in.n > sx->systems || in.first > sx->floats ||
	    in.count > sx->floats - in.first) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a reduction outside SwarmX's slots");
		return;
	}
	for (uint32_t i = 0; i < in.n; i++) {
		if (in.slot[i] >= sx->systems) {
			svc_refuse(out, WSE_LINK_E_INVAL, "slot %u: SwarmX has %u", in.slot[i],
				   sx->systems);
			return;
		}
		part[i] = (float *)(sx->region.base + WSE_LINK_REGION_HEADER) +
			  in.slot[i] * sx->floats + in.first;
	}
	engine_sum_tree(part, in.n, in.count);
	sx->stats.ops++;
	sx->stats.bytes += in.n * in.count * sizeof(float);
	first_slot = in.slot[0];
	out->iov[0] = (struct iovec){ &first_slot, sizeof(first_slot) };
	out->iovcnt = 1;
}

static void handle(void *ctx, const struct svc_request *r, struct svc_reply *out)
{
	struct swarmx *sx = ctx;

	switch (r->f.opcode) {
	case SVC_OP_SX_OPEN:
		open_slots(sx, r, out);
		break;
	case SVC_OP_SX_REDUCE:
		reduce(sx, r, out);
		break;
	case SVC_OP_STATS:
		out->iov[0] = (struct iovec){ &sx->stats, sizeof(sx->stats) };
		out->iovcnt = 1;
		break;
	default:
		svc_refuse(out, WSE_LINK_E_UNSUPPORTED, "SwarmX does not serve opcode 0x%02x",
			   r->f.opcode);
	}
}

static void disconnected(void *ctx)
{
	drop(ctx);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wse-appliance --role swarmx --listen ADDR [--port-file FILE]\n"
"                     [--log-level LEVEL]\n"
"\n"
"SwarmX: a gradient slot per system in shared memory, summed per layer in\n"
"a fixed tree for MemoryX. wse-appliance starts it; see\n"
"Documentation/wse-appliance.rst.\n");
}

int swarmx_main(int argc, char **argv)
{
	static const struct option lo[] = { ROLE_COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	static struct swarmx sx;
	struct svc_ops ops = { .fw_version = "wse-swarmx 1", .handle = handle,
			       .disconnected = disconnected };
	struct role_service rs = { .role = "swarmx", .logname = "wse-swarmx", .options = lo,
				   .usage = usage, .ops = &ops, .ctx = &sx,
				   .drop = disconnected };

	return role_service_main(&rs, argc, argv);
}
