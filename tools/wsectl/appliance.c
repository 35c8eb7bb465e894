// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsectl info of an appliance: its parts as the coordinator reports them
 * (libwse's wse_appliance_info(), asked of the device itself, since the
 * kernel does not look into an appliance): each system with its link and
 * counters, MemoryX (bytes held, updates), SwarmX (bytes broadcast and
 * reduced), the input workers, and why the last part that went went.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "wse/numformat.h"
#include "wse/wse.h"
#include "wse_link.h"
#include "wsectl.h"

static const char *part_state(enum wse_part_state s)
{
	switch (s) {
	case WSE_PART_UP: return "up";
	case WSE_PART_DOWN: return "down";
	case WSE_PART_IDLE: return "idle";
	}
	return "?";
}

int wsectl_appliance(uint32_t index, struct wse_appliance *a)
{
	struct wse_ring_params rp = { .hw_queue = WSE_LINK_Q_CTL, .depth = 2, .timeout_ms = 10000 };
	struct wse_ring *ring;
	struct wse_dev *dev;
	char spec[16];
	int ret;

	snprintf(spec, sizeof(spec), "%u", index);
	ret = wse_open(spec, &dev);
	if (ret)
		return ret;
	ret = wse_ring_open(dev, &rp, &ring);
	if (!ret) {
		ret = wse_appliance_info(ring, a);
		wse_ring_close(ring);
	}
	wse_close(dev);
	return ret;
}

void wsectl_show_appliance(const struct wse_appliance *a)
{
	char b1[WSE_NUMFORMAT_MAX], b2[WSE_NUMFORMAT_MAX];

	printf("  appliance     %u system%s", a->systems, a->systems == 1 ? "" : "s");
	if (a->job_systems)
		printf("; the weight-streaming job loaded runs on %u\n", a->job_systems);
	else
		printf("; no weight-streaming job loaded\n");
	for (uint32_t i = 0; i < a->systems; i++) {
		const struct wse_appliance_system *s = &a->system[i];

		printf("  system %-6u %-5s %s, device id %" PRIu64 ", %" PRIu64 " steps, %" PRIu64
		       " samples\n", i, part_state(s->state), s->address, s->device_id, s->steps,
		       s->samples);
		printf("                frames %" PRIu64 " out, %" PRIu64 " in; %s out, %s in%s%s%s\n",
		       s->frames_tx, s->frames_rx, wse_format_bytes(s->bytes_tx, b1, sizeof(b1)),
		       wse_format_bytes(s->bytes_rx, b2, sizeof(b2)), s->reason[0] ? " (" : "",
		       s->reason, s->reason[0] ? ")" : "");
	}
	printf("  MemoryX       %-5s holds %s of %s, %" PRIu64 " layer updates\n",
	       part_state(a->memoryx_state), wse_format_bytes(a->memoryx_held, b1, sizeof(b1)),
	       wse_format_bytes(a->memoryx_capacity, b2, sizeof(b2)), a->memoryx_updates);
	printf("  SwarmX        %-5s broadcast %s, reduced %s\n", part_state(a->swarmx_state),
	       wse_format_bytes(a->swarmx_broadcast, b1, sizeof(b1)),
	       wse_format_bytes(a->swarmx_reduced, b2, sizeof(b2)));
	printf("  input         %-5s %" PRIu64 " samples read\n", part_state(a->input_state),
	       a->input_samples);
	if (a->reason[0])
		printf("  last failure  %s\n", a->reason);
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

struct json_object *wsectl_json_appliance(const struct wse_appliance *a)
{
	struct json_object *o = json_object_new_object(), *systems = json_object_new_array();
	struct json_object *mx = json_object_new_object(), *sx = json_object_new_object();
	struct json_object *in = json_object_new_object();
	char id[32];

	add_u64(o, "systems", a->systems);
	add_u64(o, "job_systems", a->job_systems);
	for (uint32_t i = 0; i < a->systems; i++) {
		const struct wse_appliance_system *s = &a->system[i];
		struct json_object *j = json_object_new_object();

		snprintf(id, sizeof(id), "%" PRIu64, s->device_id);
		add_str(j, "device_id", id);
		add_str(j, "state", part_state(s->state));
		add_str(j, "link", part_state(s->state));	/* its first name, kept */
		add_str(j, "address", s->address);
		add_str(j, "reason", s->reason);
		add_u64(j, "frames_tx", s->frames_tx);
		add_u64(j, "frames_rx", s->frames_rx);
		add_u64(j, "bytes_tx", s->bytes_tx);
		add_u64(j, "bytes_rx", s->bytes_rx);
		add_u64(j, "steps", s->steps);
		add_u64(j, "samples", s->samples);
		json_object_array_add(systems, j);
	}
	json_object_object_add(o, "system", systems);
	add_str(mx, "state", part_state(a->memoryx_state));
	add_u64(mx, "capacity", a->memoryx_capacity);
	add_u64(mx, "bytes_held", a->memoryx_held);
	add_u64(mx, "updates", a->memoryx_updates);
	json_object_object_add(o, "memoryx", mx);
	add_str(sx, "state", part_state(a->swarmx_state));
	add_u64(sx, "bytes_broadcast", a->swarmx_broadcast);
	add_u64(sx, "bytes_reduced", a->swarmx_reduced);
	json_object_object_add(o, "swarmx", sx);
	add_str(in, "state", part_state(a->input_state));
	add_u64(in, "samples", a->input_samples);
	json_object_object_add(o, "input", in);
	add_str(o, "reason", a->reason);
	return o;
}
