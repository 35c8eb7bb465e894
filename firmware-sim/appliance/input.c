// SPDX-License-Identifier: GPL-2.0-only
/*
 * An input worker (wse-appliance --role input): reads a dataset from the
 * directory the appliance shares with the user node (--data-root), in
 * the order wsetrain would take it (wse_dataset_order()), and puts the
 * samples and labels of the coming batches into the coordinator's input
 * region, from which the systems take their shards. The user node then
 * sends no samples at all, only names the dataset (WSE_LINK_PARAMS_INPUT).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "roles.h"
#include "svc.h"
#include "svc_proto.h"
#include "wse/dataset.h"
#include "wse/link_region.h"

struct input {
	const char *root;
	struct wse_link_region region;		/* the coordinator's, region 1 */
	char dir[512], split[40];		/* of the dataset loaded */
	struct wse_dataset ds;
	uint32_t *perm;				/* this epoch's order; NULL: as it lies */
	uint32_t used;				/* samples of the dataset in use */
	uint32_t cursor;			/* the next position in the order */
	uint32_t dim;
	struct svc_stats stats;
};

static void drop(struct input *in)
{
	wse_link_region_destroy(&in->region);
	wse_dataset_free(&in->ds);
	free(in->perm);
	in->perm = NULL;
	in->dir[0] = 0;
}

static void open_input(struct input *in, const struct svc_request *r, struct svc_reply *out)
{
	static uint32_t count;
	struct wse_link_input_info info;
	struct svc_in_open o;
	struct wse_link_err err;
	char dir[512], text[512], shape[80];

	if (r->len != sizeof(o)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "IN_OPEN is %zu bytes, not %zu", r->len, sizeof(o));
		return;
	}
	memcpy(&o, r->payload, sizeof(o));
	if (wse_link_input_decode(&o.in, sizeof(o.in), &info, &err) ||
	    info.source != WSE_LINK_INPUT_DATASET) {
		svc_refuse(out, WSE_LINK_E_INVAL, "input: %s", err.text);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/%s", in->root, info.dataset);
	if (strcmp(dir, in->dir) || strcmp(info.split, in->split)) {
		wse_dataset_free(&in->ds);
		in->dir[0] = 0;
		if (wse_dataset_load_dir(dir, info.split, &in->ds, text, sizeof(text))) {
			svc_refuse(out, WSE_LINK_E_INVAL, "the appliance's input workers: %s", text);
			return;
		}
		snprintf(in->dir, sizeof(in->dir), "%s", dir);
		snprintf(in->split, sizeof(in->split), "%s", info.split);
		wse_dataset_shape_name(&in->ds, shape, sizeof(shape));
		fwd_info("dataset %s/%s: %u samples of %s (%u bytes)", dir, info.split,
			 in->ds.count, shape, in->ds.item);
	}
	/* The coordinator feeds byte inputs only (coord_feed_note()). */
	if (o.rank < 1 || o.rank > SVC_INPUT_MAX_RANK ||
	    wse_dataset_check_input(&in->ds, o.shape, o.rank, false, text, sizeof(text))) {
		svc_refuse(out, WSE_LINK_E_INVAL, "the appliance's input workers: %s/%s: %s",
			   in->dir, in->split, o.rank ? text : "no input shape");
		return;
	}
	if (in->ds.item != o.input_dim || in->ds.classes > o.classes) {
		svc_refuse(out, WSE_LINK_E_INVAL,
			   "the dataset's samples are %u bytes in %u classes; the program takes %u in %u",
			   in->ds.item, in->ds.classes, o.input_dim, o.classes);
		return;
	}
	in->used = info.count && info.count < in->ds.count ? info.count : in->ds.count;
	if (info.first > in->used) {
		svc_refuse(out, WSE_LINK_E_INVAL, "position %u is past the %u samples used",
			   info.first, in->used);
		return;
	}
	free(in->perm);
	in->perm = NULL;
	if (info.flags & WSE_LINK_INPUT_SHUFFLE) {
		in->perm = malloc((size_t)in->used * sizeof(*in->perm));
		if (!in->perm) {
			svc_refuse(out, WSE_LINK_E_NOSPC, "out of memory for the order");
			return;
		}
		wse_dataset_order(in->perm, in->used, info.seed, info.epoch);
	}
	in->cursor = info.first;
	in->dim = o.input_dim;
	count = in->used;
	out->iov[0] = (struct iovec){ &count, sizeof(count) };
	out->iovcnt = 1;
}

static void fill(struct input *in, const struct svc_request *r, struct svc_reply *out)
{
	struct svc_fill f;
	uint8_t *px;
	int32_t *labels;

	if (r->len != sizeof(f)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "IN_FILL is %zu bytes, not %zu", r->len, sizeof(f));
		return;
	}
	memcpy(&f, r->payload, sizeof(f));
	if (!in->dir[0] || f.count > in->used - in->cursor) {
		svc_refuse(out, WSE_LINK_E_INVAL, "%u samples asked, %u left in the epoch", f.count,
			   in->dir[0] ? in->used - in->cursor : 0);
		return;
	}
	px = wse_link_region_at(&in->region, f.samples_at, (uint64_t)f.count * in->dim);
	labels = wse_link_region_at(&in->region, f.labels_at, (uint64_t)f.count * 4);
	if (!px || !labels) {
		svc_refuse(out, WSE_LINK_E_INVAL, "a fill outside the coordinator's input region");
		return;
	}
	for (uint32_t i = 0; i < f.count; i++) {
		uint32_t s = in->perm ? in->perm[in->cursor + i] : in->cursor + i;
		int32_t y = in->ds.labels[s];

		memcpy(px + (size_t)i * in->dim, wse_dataset_image(&in->ds, s), in->dim);
		memcpy(labels + i, &y, 4);
	}
	in->cursor += f.count;
	in->stats.ops++;
	in->stats.bytes += f.count;
}

static void region_map(struct input *in, const struct svc_request *r, struct svc_reply *out)
{
	struct wse_link_region_map_info info;
	struct wse_link_err err;
	char text[200];

	if (wse_link_region_map_decode(r->payload, r->len, &info, &err)) {
		svc_refuse(out, WSE_LINK_E_INVAL, "%s", err.text);
		return;
	}
	wse_link_region_destroy(&in->region);
	if (wse_link_region_map(&in->region, &info, text, sizeof(text)))
		svc_refuse(out, WSE_LINK_E_UNSUPPORTED, "%s", text);
}

static void handle(void *ctx, const struct svc_request *r, struct svc_reply *out)
{
	struct input *in = ctx;

	switch (r->f.opcode) {
	case WSE_LINK_OP_REGION_MAP:
		region_map(in, r, out);
		break;
	case SVC_OP_IN_OPEN:
		open_input(in, r, out);
		break;
	case SVC_OP_IN_FILL:
		fill(in, r, out);
		break;
	case SVC_OP_STATS:
		out->iov[0] = (struct iovec){ &in->stats, sizeof(in->stats) };
		out->iovcnt = 1;
		break;
	default:
		svc_refuse(out, WSE_LINK_E_UNSUPPORTED, "the input worker does not serve opcode 0x%02x",
			   r->f.opcode);
	}
}

static void disconnected(void *ctx)
{
	struct input *in = ctx;

	wse_link_region_destroy(&in->region);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wse-appliance --role input --listen ADDR [--data-root DIR]\n"
"                     [--port-file FILE] [--log-level LEVEL]\n"
"\n"
"An input worker: reads IDX and CIFAR-10 datasets under --data-root (the\n"
"directory the appliance shares with the user node; default\n"
"/usr/share/datasets) in the order the job names, into the coordinator's\n"
"input region.\n"
"wse-appliance starts it; see Documentation/wse-appliance.rst.\n");
}

/* --data-root: where the datasets are. */
static int option(struct role_service *rs, int c, const char *arg)
{
	struct input *in = rs->ctx;

	if (c != 'd')
		return -1;
	in->root = arg;
	return 0;
}

/* The host is gone and the worker stops: what it holds goes. */
static void stop(void *ctx)
{
	drop(ctx);
}

int input_main(int argc, char **argv)
{
	static const struct option lo[] = {
		ROLE_COMMON_OPTIONS,
		{ "data-root", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	static struct input in = { .root = "/usr/share/datasets" };
	struct svc_ops ops = { .fw_version = "wse-input 1", .handle = handle,
			       .disconnected = disconnected };
	struct role_service rs = { .role = "input", .logname = "wse-input", .options = lo,
				   .usage = usage, .option = option, .ops = &ops, .ctx = &in,
				   .drop = stop };

	return role_service_main(&rs, argc, argv);
}
