// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON form of what wsectl prints, built with json-c. Numbers are in
 * their base units (bytes, kHz, ms) as the kernel gives them; device_id
 * is a string, because a 64-bit id does not survive a trip through a
 * double (jq and JavaScript read numbers as doubles).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "wsectl.h"

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

static struct json_object *link_counters(const struct wse_link_counters *c)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "frames_tx", c->frames_tx);
	add_u64(o, "frames_rx", c->frames_rx);
	add_u64(o, "bytes_tx", c->bytes_tx);
	add_u64(o, "bytes_rx", c->bytes_rx);
	add_u64(o, "crc_errors", c->crc_errors);
	add_u64(o, "proto_errors", c->proto_errors);
	add_u64(o, "timeouts", c->timeouts);
	add_u64(o, "keepalives", c->keepalives);
	add_u64(o, "stale_responses", c->stale_responses);
	add_u64(o, "inflight", c->inflight);
	add_u64(o, "link_downs", c->link_downs);
	return o;
}

static struct json_object *device_counters(const struct wse_link_counters *c)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "cycles", c->dev_cycles);
	add_u64(o, "estimated_cycles", c->dev_est_cycles);
	add_u64(o, "steps", c->dev_steps);
	add_u64(o, "samples", c->dev_samples);
	add_u64(o, "sram_used", c->dev_sram_used);
	add_u64(o, "stream_bytes_in", c->dev_stream_in);
	add_u64(o, "stream_bytes_out", c->dev_stream_out);
	add_u64(o, "programs", c->dev_programs);
	return o;
}

struct json_object *wsectl_json_device(const struct wse_dev_status *d)
{
	struct json_object *o = json_object_new_object();
	char buf[32];

	add_u64(o, "index", d->index);
	if (d->accel_minor >= 0) {
		snprintf(buf, sizeof(buf), "/dev/accel/accel%d", d->accel_minor);
		add_str(o, "accel", buf);
	} else {
		json_object_object_add(o, "accel", NULL);
	}
	add_str(o, "link", wse_link_state_name(d->link_state));
	add_str(o, "peer", d->peer);
	add_str(o, "reason", d->reason);
	add_str(o, "fw_version", d->fw_version);
	snprintf(buf, sizeof(buf), "%" PRIu64, d->device_id);
	add_str(o, "device_id", buf);
	add_u64(o, "wafer_width", d->wafer_width);
	add_u64(o, "wafer_height", d->wafer_height);
	add_u64(o, "sram_per_pe", d->sram_per_pe);
	add_u64(o, "sram_total", d->sram_total);
	add_u64(o, "clock_khz", d->clock_khz);
	add_u64(o, "queues", d->num_queues);
	add_u64(o, "protocol", d->proto_version);
	add_u64(o, "keepalive_ms", d->keepalive_ms);
	if (d->has_stats) {
		json_object_object_add(o, "stats", link_counters(&d->stats));
		if (d->stats.has_device)
			json_object_object_add(o, "device", device_counters(&d->stats));
	}
	return o;
}

struct json_object *wsectl_json_event(const struct wse_event *ev)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "device", ev->index);
	add_str(o, "event", wse_event_name(ev->event));
	add_u64(o, "errno", ev->err);
	add_str(o, "reason", ev->reason);
	add_str(o, "peer", ev->peer);
	return o;
}

void wsectl_json_print(struct json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
					     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}
