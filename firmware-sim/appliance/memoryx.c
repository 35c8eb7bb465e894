// SPDX-License-Identifier: GPL-2.0-only
/*
 * MemoryX (wse-appliance --role memoryx): the weight store of a
 * weight-streaming job and its optimizer. The coordinator gives it the
 * program (PROGRAM_LOAD), SwarmX's region of summed gradients
 * (REGION_MAP), and an update per layer and step (SVC_OP_MX_UPDATE); the
 * systems read their weights from its region; checkpoints are its
 * PARAMS_READ and PARAMS_WRITE. A program whose weights and optimizer
 * state exceed --capacity is refused, and what MemoryX held is kept.
 * With --store DIR it holds --ram bytes in RAM and the rest of its
 * capacity in a nameless file there (memoryx_spill.h).
 */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "memoryx_store.h"
#include "roles.h"
#include "svc.h"
#include "svc_proto.h"
#include "wse/numparse.h"
#include "wse/usage.h"

#define IMAGE_MAX	(1ULL << 30)	/* the largest program image it assembles */

struct memoryx {
	uint64_t capacity;
	uint64_t ram;			/* --ram; 0: the capacity */
	const char *store_dir;		/* --store */
	struct mx_spill spill;		/* fd -1 without --store */
	uint8_t *image;			/* a program arriving in pieces */
	uint64_t image_total, image_got;
	struct wsep_program *prog;
	struct mx_store store;
	bool have_store;
	struct wse_link_region peer[WSE_LINK_REGIONS_MAX];	/* SwarmX's, by id - 1 */
	struct wse_link_region_map raw_region;		/* the reply describing ours */
	uint32_t hold_finite;				/* the reply to a hold */
	struct svc_stats stats;
};

static void drop_job(struct memoryx *mx)
{
	if (mx->have_store)
		mx_store_destroy(&mx->store);
	mx->have_store = false;
	wsep_program_free(mx->prog);
	mx->prog = NULL;
	free(mx->image);
	mx->image = NULL;
	mx->image_total = mx->image_got = 0;
	for (int i = 0; i < WSE_LINK_REGIONS_MAX; i++)
		wse_link_region_destroy(&mx->peer[i]);
}

static void describe_region(struct memoryx *mx, struct svc_reply *out)
{
	struct wse_link_region_map_info info;

	wse_link_region_describe(&mx->store.region, 1, &info);
	wse_link_region_map_encode(&mx->raw_region, &info);
	out->iov[0] = (struct iovec){ &mx->raw_region, sizeof(mx->raw_region) };
	out->iovcnt = 1;
}

/* The whole program is here: check it against the capacity and keep it. */
static void take_program(struct memoryx *mx, struct svc_reply *out)
{
	struct wsep_program *p;
	struct mx_store st;
	char text[256];
	uint64_t bytes;

	if (wsep_read(mx->image, mx->image_total, &p, text, sizeof(text))) {
		svc_refuse(out, WSE_LINK_E_INVAL, "invalid program: %s", text);
		return;
	}
	bytes = mx_store_bytes(p);
	if (p->mode != WSEP_MODE_WEIGHT_STREAMING || !bytes) {
		svc_refuse(out, WSE_LINK_E_INVAL,
			   "MemoryX holds weight-streaming programs of dense layers; %s is not one",
			   p->model_name);
	} else if (bytes > mx->capacity) {
		svc_refuse(out, WSE_LINK_E_NOSPC,
			   "%s's weights and optimizer state take %llu bytes; MemoryX holds at most %llu (wse-appliance --memoryx-capacity)",
			   p->model_name, (unsigned long long)bytes,
			   (unsigned long long)mx->capacity);
	} else if (mx_store_create(&st, p, mx->spill.fd >= 0 ? &mx->spill : NULL, text,
				   sizeof(text))) {
		svc_refuse(out, WSE_LINK_E_NOSPC, "%s", text);
	} else {
		/* Only now does the new program replace the old. */
		drop_job(mx);
		mx->store = st;
		mx->have_store = true;
		mx->prog = p;
		fwd_info("holding %s: %llu bytes of weights and optimizer state, %llu of them in the file store",
			 p->model_name, (unsigned long long)bytes, (unsigned long long)st.spilled);
		describe_region(mx, out);
		return;
	}
	wsep_program_free(p);
}

static void program_load(struct memoryx *mx, const struct svc_request *r, struct svc_reply *out)
{
	struct wse_link_prog_load_info in;
	struct wse_link_err err;
	const uint8_t *piece = r->payload + sizeof(struct wse_link_program_load);
	size_t n;

	if (wse_link_prog_load_decode(r->payload, r->len, &in, &err)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "%s", err.text);
		return;
	}
	n = r->len - sizeof(struct wse_link_program_load);
	if (!in.offset) {
		free(mx->image);
		mx->image = NULL;
		if (!in.total || in.total > IMAGE_MAX) {
			svc_refuse(out, WSE_LINK_E_NOSPC, "a program of %llu bytes is beyond 1 GiB",
				   (unsigned long long)in.total);
			return;
		}
		mx->image = malloc(in.total);
		if (!mx->image) {
			svc_refuse(out, WSE_LINK_E_NOSPC, "MemoryX is out of memory for the image");
			return;
		}
		mx->image_total = in.total;
		mx->image_got = 0;
	}
	if (!mx->image || in.total != mx->image_total || in.offset != mx->image_got ||
	    n > mx->image_total - mx->image_got) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a program piece out of order");
		return;
	}
	memcpy(mx->image + mx->image_got, piece, n);
	mx->image_got += n;
	if (!(in.flags & WSE_LINK_PROG_LAST))
		return;
	if (mx->image_got != mx->image_total)
		svc_refuse(out, WSE_LINK_E_INVAL, "the program ended after %llu of %llu bytes",
			   (unsigned long long)mx->image_got, (unsigned long long)mx->image_total);
	else
		take_program(mx, out);
	free(mx->image);
	mx->image = NULL;
}

static void region_map(struct memoryx *mx, const struct svc_request *r, struct svc_reply *out)
{
	struct wse_link_region_map_info in;
	struct wse_link_region reg;
	struct wse_link_err err;
	char text[200];

	if (wse_link_region_map_decode(r->payload, r->len, &in, &err)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "%s", err.text);
		return;
	}
	if (wse_link_region_map(&reg, &in, text, sizeof(text))) {
		svc_refuse(out, WSE_LINK_E_UNSUPPORTED, "%s", text);
		return;
	}
	wse_link_region_destroy(&mx->peer[in.region - 1]);
	mx->peer[in.region - 1] = reg;
}

static void update(struct memoryx *mx, const struct svc_request *r, struct svc_reply *out)
{
	struct svc_update u;
	const float *g;
	size_t floats;
	int err;

	if (r->len != sizeof(u)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "an update is %zu bytes, not %zu", r->len, sizeof(u));
		return;
	}
	memcpy(&u, r->payload, sizeof(u));
	if (!mx->have_store || u.layer >= mx->store.layers) {
		svc_refuse(out, WSE_LINK_E_INVAL, "no program holds a layer %u", u.layer);
		return;
	}
	mx_store_layer_at(&mx->store, u.layer, &floats);
	g = u.region >= 1 && u.region <= WSE_LINK_REGIONS_MAX ?
	    wse_link_region_at(&mx->peer[u.region - 1], u.offset, floats * sizeof(float)) : NULL;
	if (!g) {
		svc_refuse(out, WSE_LINK_E_INVAL, "layer %u's gradient is not inside region %u",
			   u.layer, u.region);
		return;
	}
	err = mx_store_update(&mx->store, u.layer, u.t, g);
	if (err)
		svc_refuse(out, WSE_LINK_E_INTERNAL, "the update of layer %u failed: %s", u.layer,
			   engine_strerror(err));
	else
		mx->stats.ops++;
}

/* fp16 loss scaling: a layer's summed gradient unscaled and checked, held for the commit. */
static void hold(struct memoryx *mx, const struct svc_request *r, struct svc_reply *out)
{
	struct svc_hold h;
	size_t floats;
	float *g;
	int ret;

	if (r->len != sizeof(h)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a hold is %zu bytes, not %zu", r->len, sizeof(h));
		return;
	}
	memcpy(&h, r->payload, sizeof(h));
	if (!mx->have_store || h.layer >= mx->store.layers) {
		svc_refuse(out, WSE_LINK_E_INVAL, "no program holds a layer %u", h.layer);
		return;
	}
	if (!(h.scale > 0.0f && h.scale <= FLT_MAX)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "loss scale %g: must be finite and above 0",
			   (double)h.scale);
		return;
	}
	mx_store_layer_at(&mx->store, h.layer, &floats);
	g = h.region >= 1 && h.region <= WSE_LINK_REGIONS_MAX ?
	    wse_link_region_at(&mx->peer[h.region - 1], h.offset, floats * sizeof(float)) : NULL;
	if (!g) {
		svc_refuse(out, WSE_LINK_E_INVAL, "layer %u's gradient is not inside region %u",
			   h.layer, h.region);
		return;
	}
	ret = mx_store_hold(&mx->store, h.layer, g, h.scale);
	mx->hold_finite = ret > 0;
	out->iov[0] = (struct iovec){ &mx->hold_finite, sizeof(mx->hold_finite) };
	out->iovcnt = 1;
}

/* fp16 loss scaling: the step's held updates, all of them or none. */
static void commit(struct memoryx *mx, const struct svc_request *r, struct svc_reply *out)
{
	struct svc_commit cm;
	int err;

	if (r->len != sizeof(cm)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a commit is %zu bytes, not %zu", r->len,
			   sizeof(cm));
		return;
	}
	memcpy(&cm, r->payload, sizeof(cm));
	if (!mx->have_store || !cm.t) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a commit of step %llu, and %s",
			   (unsigned long long)cm.t,
			   mx->have_store ? "steps count from 1" : "MemoryX holds no program");
		return;
	}
	err = mx_store_commit(&mx->store, cm.t, cm.apply);
	if (err)
		svc_refuse(out, WSE_LINK_E_INTERNAL, "the update of step %llu failed: %s",
			   (unsigned long long)cm.t, engine_strerror(err));
	else
		mx->stats.ops += cm.apply ? mx->store.layers : 0;
}

static void params(struct memoryx *mx, const struct svc_request *r, struct svc_reply *out,
		   bool write)
{
	static uint8_t buf[WSE_LINK_PAYLOAD_LIMIT];
	struct wse_link_params_info in;
	struct wse_link_err err;
	char text[256];

	if (wse_link_params_decode(r->payload, r->len, &in, &err)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "%s", err.text);
		return;
	}
	if (!mx->have_store) {
		svc_refuse(out, WSE_LINK_E_INVAL, "MemoryX holds no program");
		return;
	}
	if (write && r->len - sizeof(struct wse_link_params) != in.length) {
		svc_refuse(out, WSE_LINK_E_INVAL, "PARAMS_WRITE announces %u bytes but carries %zu",
			   in.length, r->len - sizeof(struct wse_link_params));
		return;
	}
	if (in.length > sizeof(buf) - 64) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a params transfer of %u bytes exceeds a frame",
			   in.length);
		return;
	}
	if (write)
		memcpy(buf, r->payload + sizeof(struct wse_link_params), in.length);
	if (mx_store_params(&mx->store, in.which, in.offset, in.length, buf, write, text,
			    sizeof(text))) {
		svc_refuse(out, WSE_LINK_E_INVAL, "%s", text);
		return;
	}
	if (!write) {
		out->iov[0] = (struct iovec){ buf, in.length };
		out->iovcnt = 1;
	}
}

static void handle(void *ctx, const struct svc_request *r, struct svc_reply *out)
{
	struct memoryx *mx = ctx;

	switch (r->f.opcode) {
	case WSE_LINK_OP_PROGRAM_LOAD:
		program_load(mx, r, out);
		break;
	case WSE_LINK_OP_REGION_MAP:
		region_map(mx, r, out);
		break;
	case SVC_OP_MX_UPDATE:
		update(mx, r, out);
		break;
	case SVC_OP_MX_HOLD:
		hold(mx, r, out);
		break;
	case SVC_OP_MX_COMMIT:
		commit(mx, r, out);
		break;
	case SVC_OP_MX_REGION:
		if (mx->have_store)
			describe_region(mx, out);
		else
			svc_refuse(out, WSE_LINK_E_INVAL, "MemoryX holds no program");
		break;
	case WSE_LINK_OP_PARAMS_READ:
	case WSE_LINK_OP_PARAMS_WRITE:
		params(mx, r, out, r->f.opcode == WSE_LINK_OP_PARAMS_WRITE);
		break;
	case SVC_OP_STATS:
		mx->stats.capacity = mx->capacity;
		mx->stats.held = mx->have_store ? mx_store_bytes(mx->prog) : 0;
		out->iov[0] = (struct iovec){ &mx->stats, sizeof(mx->stats) };
		out->iovcnt = 1;
		break;
	default:
		svc_refuse(out, WSE_LINK_E_UNSUPPORTED, "MemoryX does not serve opcode 0x%02x",
			   r->f.opcode);
	}
}

static void disconnected(void *ctx)
{
	drop_job(ctx);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wse-appliance --role memoryx --listen ADDR [--capacity BYTES]\n"
"                     [--store DIR [--ram BYTES]]\n"
"                     [--port-file FILE] [--log-level LEVEL]\n"
"\n"
"MemoryX: holds a weight-streaming job's weights and optimizer state (at\n"
"most --capacity bytes, K/M/G suffixes; default 4G) and applies the\n"
"optimizer as the coordinator hands it each layer's summed gradient.\n"
"With --store, at most --ram bytes (default: the capacity) are in RAM and\n"
"the optimizer state beyond them in a nameless file in DIR.\n"
"wse-appliance starts it; see Documentation/wse-appliance.rst.\n");
}

/* --capacity: what it holds at most, which its HELLO says too; --ram, --store. */
static int option(struct role_service *rs, int c, const char *arg)
{
	struct memoryx *mx = rs->ctx;

	if (c == 's') {
		mx->store_dir = arg;
		return 0;
	}
	if (c == 'R')
		return wse_opt_u64(ROLE_PROG, "--ram", arg, 4096, 1ULL << 50, WSE_NUM_BINARY,
				   &mx->ram) ? 1 : 0;
	if (c != 'c')
		return -1;
	if (wse_opt_u64(ROLE_PROG, "--capacity", arg, 4096, 1ULL << 50, WSE_NUM_BINARY,
			&mx->capacity))
		return 1;
	rs->ops->capacity = mx->capacity;
	return 0;
}

/* The file store, checked against its file system before MemoryX serves. */
static int start(void *ctx)
{
	struct memoryx *mx = ctx;
	char text[512];

	if (!mx->store_dir) {
		if (mx->ram) {
			fprintf(stderr, "%s: --ram needs --store DIR, where what exceeds it goes\n",
				ROLE_PROG);
			return 1;
		}
		return 0;
	}
	if (mx_spill_check(mx->capacity, &mx->ram, text, sizeof(text)) ||
	    mx_spill_open(&mx->spill, mx->store_dir, mx->ram, mx->capacity - mx->ram, text,
			  sizeof(text))) {
		fprintf(stderr, "%s: %s\n", ROLE_PROG, text);
		return 1;
	}
	fwd_log_set_name("wse-memoryx");
	fwd_info("MemoryX capacity %llu bytes: %llu in RAM, %llu in a file store in %s",
		 (unsigned long long)mx->capacity, (unsigned long long)mx->ram,
		 (unsigned long long)mx->spill.limit, mx->store_dir);
	return 0;
}

int memoryx_main(int argc, char **argv)
{
	static const struct option lo[] = {
		ROLE_COMMON_OPTIONS,
		{ "capacity", required_argument, NULL, 'c' },
		{ "ram", required_argument, NULL, 'R' },
		{ "store", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	static struct memoryx mx = { .capacity = 4ULL << 30, .spill = { .fd = -1 } };
	struct svc_ops ops = { .fw_version = "wse-memoryx 1", .capacity = 4ULL << 30,
			       .handle = handle, .disconnected = disconnected };
	struct role_service rs = { .role = "memoryx", .logname = "wse-memoryx", .options = lo,
				   .usage = usage, .option = option, .start = start, .ops = &ops,
				   .ctx = &mx, .drop = disconnected };
	int ret = role_service_main(&rs, argc, argv);

	mx_spill_close(&mx.spill);
	return ret;
}
