// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coordinator's parts: the systems (wsefwd, on this machine or
 * another) and the services (MemoryX, SwarmX, the input workers, on this
 * one). Each is a link on which the coordinator is the host (hostlink.h).
 * A part that goes is reconnected when a job next needs it (wse-appliance
 * restarts the processes it started), and its reason is kept for the
 * user node (WSE_LINK_PARAMS_APPLIANCE).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../fwd_log.h"
#include "coord.h"
#include "svc.h"
#include "svc_proto.h"

#define OPEN_MS		5000
#define START_TRIES	100	/* at start, parts may still be coming up: 100 x 100 ms */
#define REOPEN_TRIES	30	/* a part started again: 30 x 100 ms */

static int open_part(struct coord *c, struct coord_part *p, uint32_t caps, char *text,
		     size_t len)
{
	int ret;

	(void)c;
	if (p->opened) {
		p->base_frames_tx += p->link.frames_tx;
		p->base_frames_rx += p->link.frames_rx;
		p->base_bytes_tx += p->link.bytes_tx;
		p->base_bytes_rx += p->link.bytes_rx;
		hostlink_close(&p->link);
		p->opened = false;
	}
	/* A part the launcher is starting again listens a moment later. */
	for (int t = 0; t < REOPEN_TRIES; t++) {
		ret = hostlink_open(&p->link, p->name, p->addr, caps, OPEN_MS, text, len);
		if (ret != -ENOENT && ret != -ECONNREFUSED)
			break;
		usleep(100000);
	}
	if (ret) {
		snprintf(p->reason, sizeof(p->reason), "%s", text);
		return ret;
	}
	p->opened = true;
	p->reason[0] = 0;
	return 0;
}

static void name_part(struct coord_part *p, const char *what, const char *addr)
{
	p->addr = addr;
	snprintf(p->name, sizeof(p->name), "%s (%s)", what, addr);
	pthread_mutex_init(&p->call_lock, NULL);
}

/* A system's link opened: what it is, and whether it is one of the appliance's kind. */
static int system_opened(struct coord *c, unsigned int i, char *text, size_t len)
{
	struct coord_part *s = &c->sys[i];

	if (!(s->link.dev.caps & WSE_LINK_CAP_EXEC)) {
		snprintf(text, len, "%s does not run programs (no EXEC capability)", s->name);
		return -EINVAL;
	}
	if (i && (s->link.dev.wafer_width != c->sys[0].dev.wafer_width ||
		  s->link.dev.wafer_height != c->sys[0].dev.wafer_height ||
		  s->link.dev.sram_per_pe != c->sys[0].dev.sram_per_pe)) {
		snprintf(text, len, "%s has another wafer than system 0: an appliance's systems are alike",
			 s->name);
		return -EINVAL;
	}
	s->dev = s->link.dev;
	s->maps_regions = false;	/* found out when a job maps its regions */
	return 0;
}

bool coord_system_ready(struct coord *c, unsigned int i, char *text, size_t len)
{
	struct coord_part *s = &c->sys[i];
	bool up = true;

	pthread_mutex_lock(&c->parts_lock);
	if (s->opened && hostlink_up(&s->link, NULL, 0))
		goto out;
	if (s->opened)
		hostlink_up(&s->link, s->reason, sizeof(s->reason));
	if (open_part(c, s, WSE_LINK_CAP_EXEC | WSE_LINK_CAP_REGION, text, len) ||
	    system_opened(c, i, text, len)) {
		snprintf(s->reason, sizeof(s->reason), "%s", text);
		up = false;
		goto out;
	}
	fwd_info("%s connected", s->name);
out:
	pthread_mutex_unlock(&c->parts_lock);
	return up;
}

bool coord_service_ready(struct coord *c, struct coord_part *p, char *text, size_t len)
{
	if (p->opened && hostlink_up(&p->link, NULL, 0))
		return true;
	if (p->opened)
		hostlink_up(&p->link, p->reason, sizeof(p->reason));
	if (open_part(c, p, 0, text, len))
		return false;
	fwd_info("%s connected", p->name);
	return true;
}

int coord_service_call(struct coord *c, struct coord_part *p, uint8_t op, const struct iovec *iov,
		       int iovcnt, void *out, size_t cap, size_t *len, char *text, size_t textlen)
{
	int ret;

	pthread_mutex_lock(&p->call_lock);
	ret = coord_service_ready(c, p, text, textlen) ?
	      hostlink_call(&p->link, op, Q_CTL, iov, iovcnt, out, cap, len, COORD_PART_MS, text,
			    textlen) : -ENOTCONN;
	if (ret && !hostlink_up(&p->link, NULL, 0))
		hostlink_up(&p->link, p->reason, sizeof(p->reason));
	pthread_mutex_unlock(&p->call_lock);
	return ret;
}

void coord_system_reset(struct coord *c, unsigned int i)
{
	struct coord_part *s = &c->sys[i];
	char why[HOSTLINK_TEXT];

	pthread_mutex_lock(&c->parts_lock);
	if (!s->opened) {
		pthread_mutex_unlock(&c->parts_lock);
		return;
	}
	if (!hostlink_up(&s->link, why, sizeof(why)))
		snprintf(s->reason, sizeof(s->reason), "%s", why);
	s->base_frames_tx += s->link.frames_tx;
	s->base_frames_rx += s->link.frames_rx;
	s->base_bytes_tx += s->link.bytes_tx;
	s->base_bytes_rx += s->link.bytes_rx;
	hostlink_close(&s->link);
	s->opened = false;
	pthread_mutex_unlock(&c->parts_lock);
}

int coord_parts_start(struct coord *c)
{
	char text[256];

	c->nsys = c->o.systems;
	for (unsigned int i = 0; i < c->nsys; i++) {
		char what[24];

		snprintf(what, sizeof(what), "system %u", i);
		name_part(&c->sys[i], what, c->o.system[i]);
	}
	name_part(&c->mx, "MemoryX", c->o.memoryx);
	name_part(&c->sx, "SwarmX", c->o.swarmx);
	name_part(&c->in, "the input workers", c->o.input);
	for (unsigned int i = 0; i < c->nsys; i++) {
		bool up = false;

		for (int t = 0; t < START_TRIES && !up && !svc_stopping(); t++) {
			up = coord_system_ready(c, i, text, sizeof(text));
			if (!up && strstr(text, "wafer"))
				break;
			if (!up)
				usleep(100000);
		}
		if (!up) {
			fwd_err("%s", text);
			return -1;
		}
	}
	c->id.systems = c->nsys;
	c->id.memoryx_capacity = c->o.memoryx_capacity;
	for (unsigned int i = 0; i < c->nsys; i++)
		c->id.system[i] = (struct wse_link_appliance_system_info){
			.device_id = c->sys[i].dev.device_id,
			.wafer_width = c->sys[i].dev.wafer_width,
			.wafer_height = c->sys[i].dev.wafer_height,
			.sram_per_pe = c->sys[i].dev.sram_per_pe,
			.clock_khz = c->sys[i].dev.clock_khz,
		};
	/* The services come up beside us; a job connects them if they are late. */
	coord_service_ready(c, &c->mx, text, sizeof(text));
	coord_service_ready(c, &c->sx, text, sizeof(text));
	coord_service_ready(c, &c->in, text, sizeof(text));
	return 0;
}

void coord_parts_stop(struct coord *c)
{
	for (unsigned int i = 0; i < c->nsys; i++)
		coord_system_reset(c, i);
	if (c->mx.opened)
		hostlink_close(&c->mx.link);
	if (c->sx.opened)
		hostlink_close(&c->sx.link);
	if (c->in.opened)
		hostlink_close(&c->in.link);
}

/* A service's state and counters, asked of it now. */
static uint32_t service_state(struct coord *c, struct coord_part *p, struct svc_stats *st)
{
	char text[256];
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	if (!p->opened && !p->reason[0])
		return WSE_LINK_PART_IDLE;
	if (coord_service_call(c, p, SVC_OP_STATS, NULL, 0, st, sizeof(*st), &n, text,
			       sizeof(text)) || n != sizeof(*st))
		return WSE_LINK_PART_DOWN;
	return WSE_LINK_PART_UP;
}

size_t coord_parts_state(struct coord *c, void *buf, size_t cap)
{
	struct wse_link_appliance_state st = { 0 };
	struct svc_stats mx, sx, in;
	const char *reason = "";

	st.systems = c->nsys;
	st.memoryx_state = service_state(c, &c->mx, &mx);
	st.swarmx_state = service_state(c, &c->sx, &sx);
	st.input_state = service_state(c, &c->in, &in);
	st.memoryx_capacity = mx.capacity ? mx.capacity : c->o.memoryx_capacity;
	st.memoryx_held = mx.held;
	st.memoryx_updates = mx.ops;
	st.swarmx_reduced = sx.bytes;
	st.input_samples = in.bytes;
	pthread_mutex_lock(&c->lock);
	st.job_systems = c->job.active ? c->job.n : 0;
	st.swarmx_broadcast = c->broadcast;
	if (c->job.failed)
		reason = c->job.why;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&c->parts_lock);
	for (unsigned int i = 0; i < c->nsys; i++) {
		struct coord_part *s = &c->sys[i];
		struct wse_link_appliance_part_info *p = &st.part[i];
		char why[HOSTLINK_TEXT] = "";

		p->device_id = s->dev.device_id;
		p->state = s->opened && hostlink_up(&s->link, why, sizeof(why)) ? WSE_LINK_PART_UP :
			   WSE_LINK_PART_DOWN;
		if (p->state != WSE_LINK_PART_UP)
			snprintf(p->reason, sizeof(p->reason), "%s", s->opened ? why : s->reason);
		pthread_mutex_lock(&s->link.lock);
		p->frames_tx = s->base_frames_tx + (s->opened ? s->link.frames_tx : 0);
		p->frames_rx = s->base_frames_rx + (s->opened ? s->link.frames_rx : 0);
		p->bytes_tx = s->base_bytes_tx + (s->opened ? s->link.bytes_tx : 0);
		p->bytes_rx = s->base_bytes_rx + (s->opened ? s->link.bytes_rx : 0);
		pthread_mutex_unlock(&s->link.lock);
		p->steps = s->steps;
		p->samples = s->samples;
		snprintf(p->address, sizeof(p->address), "%s", s->addr);
	}
	pthread_mutex_unlock(&c->parts_lock);
	if (!reason[0] && st.memoryx_state == WSE_LINK_PART_DOWN)
		reason = c->mx.reason;
	if (!reason[0] && st.swarmx_state == WSE_LINK_PART_DOWN)
		reason = c->sx.reason;
	snprintf(st.reason, sizeof(st.reason), "%.127s", reason);
	return wse_link_appliance_state_encode(buf, cap, &st);
}

void coord_parts_restart(struct coord *c)
{
	struct coord_part *svc[] = { &c->mx, &c->sx, &c->in };

	for (unsigned int i = 0; i < c->nsys; i++) {
		coord_system_reset(c, i);
		c->sys[i].steps = c->sys[i].samples = 0;
		c->sys[i].base_frames_tx = c->sys[i].base_frames_rx = 0;
		c->sys[i].base_bytes_tx = c->sys[i].base_bytes_rx = 0;
		c->sys[i].reason[0] = 0;
	}
	for (size_t i = 0; i < sizeof(svc) / sizeof(svc[0]); i++) {
		pthread_mutex_lock(&svc[i]->call_lock);
		if (svc[i]->opened)
			hostlink_close(&svc[i]->link);
		svc[i]->opened = false;
		svc[i]->reason[0] = 0;
		pthread_mutex_unlock(&svc[i]->call_lock);
	}
	pthread_mutex_lock(&c->lock);
	c->broadcast = c->reduced = 0;
	pthread_mutex_unlock(&c->lock);
}
