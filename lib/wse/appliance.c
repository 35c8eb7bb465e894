// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse: what only an appliance answers (wse/wse.h, "appliances"): the
 * job's systems, its input and the state of its parts, through the
 * PARAMS_WRITE and PARAMS_READ of slot 0 or a program's slot
 * (Documentation/link-protocol.rst, "Appliances"), decoded by libwselink
 * so that callers see a struct.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse_internal.h"
#include "wse/link_payloads.h"

/* wse.h is installed without the link's header, so it names the bound again. */
_Static_assert(WSE_APPLIANCE_SYSTEMS_MAX == WSE_LINK_APPLIANCE_SYSTEMS_MAX,
	       "wse.h's WSE_APPLIANCE_SYSTEMS_MAX is uapi/wse_link.h's");

static int params(struct wse_ring *ring, uint32_t op, uint32_t slot, uint32_t which, void *buf,
		  size_t len, size_t *done)
{
	struct wse_xfer x = { .op = op, .args = { slot, which, 0 }, .buf = buf, .len = len,
			      .unit = 4 };

	return wse_ring_xfer(ring, &x, done);
}

int wse_appliance_info(struct wse_ring *ring, struct wse_appliance *a)
{
	size_t cap = wse_link_appliance_state_size(WSE_APPLIANCE_SYSTEMS_MAX), done = 0;
	struct wse_link_appliance_state *st = malloc(sizeof(*st));
	uint8_t *buf = malloc(cap);
	struct wse_link_err err;
	int ret;

	if (!st || !buf) {
		free(st);
		free(buf);
		return -ENOMEM;
	}
	ret = params(ring, DRM_WSE_OP_PARAMS_READ, 0, WSE_LINK_PARAMS_APPLIANCE, buf, cap, &done);
	if (!ret && wse_link_appliance_state_decode(buf, done, st, &err))
		ret = -EPROTO;
	if (!ret) {
		memset(a, 0, sizeof(*a));
		a->systems = st->systems;
		a->job_systems = st->job_systems;
		a->memoryx_state = st->memoryx_state;
		a->swarmx_state = st->swarmx_state;
		a->input_state = st->input_state;
		a->memoryx_capacity = st->memoryx_capacity;
		a->memoryx_held = st->memoryx_held;
		a->memoryx_updates = st->memoryx_updates;
		a->swarmx_broadcast = st->swarmx_broadcast;
		a->swarmx_reduced = st->swarmx_reduced;
		a->input_samples = st->input_samples;
		snprintf(a->reason, sizeof(a->reason), "%s", st->reason);
		for (uint32_t i = 0; i < st->systems; i++) {
			const struct wse_link_appliance_part_info *p = &st->part[i];
			struct wse_appliance_system *s = &a->system[i];

			*s = (struct wse_appliance_system){
				.device_id = p->device_id, .state = p->state,
				.frames_tx = p->frames_tx, .frames_rx = p->frames_rx,
				.bytes_tx = p->bytes_tx, .bytes_rx = p->bytes_rx,
				.steps = p->steps, .samples = p->samples,
			};
			snprintf(s->address, sizeof(s->address), "%s", p->address);
			snprintf(s->reason, sizeof(s->reason), "%s", p->reason);
		}
	}
	free(st);
	free(buf);
	return ret;
}

int wse_appliance_job_slot(struct wse_ring *ring, uint32_t slot, uint32_t systems)
{
	struct wse_link_job_info in = { systems };
	struct wse_link_job raw;

	if (!systems || slot > 255)
		return -EINVAL;
	wse_link_job_encode(&raw, &in);
	return params(ring, DRM_WSE_OP_PARAMS_WRITE, slot, WSE_LINK_PARAMS_JOB, &raw, sizeof(raw),
		      NULL);
}

int wse_appliance_job(struct wse_ring *ring, uint32_t systems)
{
	return wse_appliance_job_slot(ring, 0, systems);
}

int wse_appliance_input(struct wse_ring *ring, uint32_t slot, const struct wse_input *in)
{
	struct wse_link_input_info info = {
		.source = in->dataset ? WSE_LINK_INPUT_DATASET : WSE_LINK_INPUT_STREAM,
		.flags = in->shuffle ? WSE_LINK_INPUT_SHUFFLE : 0,
		.seed = in->seed, .epoch = in->epoch, .first = in->first, .count = in->count,
	};
	struct wse_link_input raw;

	if (in->dataset && (!in->path || !in->split ||
			    strlen(in->path) >= sizeof(info.dataset) ||
			    strlen(in->split) >= sizeof(info.split)))
		return -EINVAL;
	if (in->dataset) {
		snprintf(info.dataset, sizeof(info.dataset), "%s", in->path);
		snprintf(info.split, sizeof(info.split), "%s", in->split);
	}
	wse_link_input_encode(&raw, &info);
	return params(ring, DRM_WSE_OP_PARAMS_WRITE, slot, WSE_LINK_PARAMS_INPUT, &raw, sizeof(raw),
		      NULL);
}
