// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coordinator's parts: the systems (wsefwd, on this machine or
 * another) and the services (MemoryX, SwarmX, the input workers, on this
 * one). Each is a link on which the coordinator is the host (hostlink.h).
 * A part that goes is reconnected when a job next needs it (wse-appliance
 * restarts the processes it started), and its reason is kept for the
 * user node (WSE_LINK_PARAMS_APPLIANCE).
 *
 * Each part's state is its own (part_state()): up while its link is open
 * and alive; down once its link died or it could not be connected, with
 * that reason, until a job connects it again; idle while the coordinator
 * holds no link to it and nothing went wrong with it (a new user node, or
 * a failed job letting go of the systems that were still answering).
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
#define STATS_MS	5000	/* a service's counters, for the user node's question */

/*
 * @p's reason from @text, without the part's name that starts most texts
 * ("system 1 (unix:...): connect: ..."): the state names the part, and a
 * system's reason has 64 bytes on the wire.
 */
static void set_reason(struct coord_part *p, const char *text)
{
	size_t n = strlen(p->name);

	if (!strncmp(text, p->name, n) && (text[n] == ':' || text[n] == ' ')) {
		text += n + 1;
		while (*text == ' ')
			text++;
	}
	snprintf(p->reason, sizeof(p->reason), "%s", text);
}

/*
 * The part's lock held (parts_lock for a system, call_lock for a service):
 * the coordinator lets go of @p's link. A link that had died leaves the
 * part down with the link's reason; one that still answered leaves it idle.
 */
static void drop_link(struct coord_part *p)
{
	char why[HOSTLINK_TEXT];

	if (!p->opened)
		return;
	if (hostlink_up(&p->link, why, sizeof(why)))
		p->reason[0] = 0;
	else
		snprintf(p->reason, sizeof(p->reason), "%s", why);
	p->base_frames_tx += p->link.frames_tx;
	p->base_frames_rx += p->link.frames_rx;
	p->base_bytes_tx += p->link.bytes_tx;
	p->base_bytes_rx += p->link.bytes_rx;
	hostlink_close(&p->link);
	p->opened = false;
}

/* The part's lock held: its state (WSE_LINK_PART_*), and when it is down why, in @why. */
static uint32_t part_state(struct coord_part *p, char *why, size_t len)
{
	why[0] = 0;
	if (p->opened)
		return hostlink_up(&p->link, why, len) ? WSE_LINK_PART_UP : WSE_LINK_PART_DOWN;
	snprintf(why, len, "%s", p->reason);
	return p->reason[0] ? WSE_LINK_PART_DOWN : WSE_LINK_PART_IDLE;
}

static int open_part(struct coord *c, struct coord_part *p, uint32_t caps, char *text,
		     size_t len)
{
	int ret;

	(void)c;
	drop_link(p);
	/* A part the launcher is starting again listens a moment later. */
	for (int t = 0; t < REOPEN_TRIES; t++) {
		ret = hostlink_open(&p->link, p->name, p->addr, caps, OPEN_MS, text, len);
		if (ret != -ENOENT && ret != -ECONNREFUSED)
			break;
		usleep(100000);
	}
	if (ret) {
		set_reason(p, text);
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
	if (open_part(c, s, WSE_LINK_CAP_EXEC | WSE_LINK_CAP_REGION, text, len)) {
		up = false;
		goto out;
	}
	if (system_opened(c, i, text, len)) {
		/* It answers, but is not one the appliance can use: down, saying why. */
		drop_link(s);
		set_reason(s, text);
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
	pthread_mutex_unlock(&p->call_lock);
	return ret;
}

void coord_system_reset(struct coord *c, unsigned int i)
{
	pthread_mutex_lock(&c->parts_lock);
	drop_link(&c->sys[i]);
	pthread_mutex_unlock(&c->parts_lock);
}

/* A service's link let go of (a new user node, the appliance stopping). */
static void service_reset(struct coord_part *p)
{
	pthread_mutex_lock(&p->call_lock);
	drop_link(p);
	pthread_mutex_unlock(&p->call_lock);
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
	service_reset(&c->mx);
	service_reset(&c->sx);
	service_reset(&c->in);
}

/*
 * A service's state and counters. One that is up is asked for its
 * counters now, and is down if it does not answer them; one idle or down
 * is left so: asking connects nothing (a job does, as for a system). The
 * reason of one down in @why, naming it.
 */
static uint32_t service_state(struct coord_part *p, struct svc_stats *st, char *why, size_t len)
{
	char text[HOSTLINK_TEXT + 64] = "", bare[HOSTLINK_TEXT];
	uint32_t state;
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&p->call_lock);
	state = part_state(p, bare, sizeof(bare));
	if (state == WSE_LINK_PART_UP &&
	    (hostlink_call(&p->link, SVC_OP_STATS, Q_CTL, NULL, 0, st, sizeof(*st), &n,
			   STATS_MS, text, sizeof(text)) || n != sizeof(*st))) {
		if (!text[0])
			snprintf(text, sizeof(text), "%s answered STATS with %zu bytes", p->name, n);
		memset(st, 0, sizeof(*st));
		state = WSE_LINK_PART_DOWN;
	} else if (state == WSE_LINK_PART_DOWN) {
		snprintf(text, sizeof(text), "%s: %.190s", p->name, bare);
	}
	pthread_mutex_unlock(&p->call_lock);
	snprintf(why, len, "%s", text);
	return state;
}

size_t coord_parts_state(struct coord *c, void *buf, size_t cap)
{
	struct wse_link_appliance_state st = { 0 };
	struct svc_stats mx, sx, in;
	char mx_why[HOSTLINK_TEXT + 64], sx_why[HOSTLINK_TEXT + 64], in_why[HOSTLINK_TEXT + 64];
	char failure[sizeof(c->failure)];
	const char *reason;

	st.systems = c->nsys;
	st.memoryx_state = service_state(&c->mx, &mx, mx_why, sizeof(mx_why));
	st.swarmx_state = service_state(&c->sx, &sx, sx_why, sizeof(sx_why));
	st.input_state = service_state(&c->in, &in, in_why, sizeof(in_why));
	st.memoryx_capacity = mx.capacity ? mx.capacity : c->o.memoryx_capacity;
	st.memoryx_held = mx.held;
	st.memoryx_updates = mx.ops;
	st.swarmx_reduced = sx.bytes;
	st.input_samples = in.bytes;
	pthread_mutex_lock(&c->lock);
	st.job_systems = c->job.active ? c->job.n : 0;
	st.swarmx_broadcast = c->broadcast;
	snprintf(failure, sizeof(failure), "%s", c->failure);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&c->parts_lock);
	for (unsigned int i = 0; i < c->nsys; i++) {
		struct coord_part *s = &c->sys[i];
		struct wse_link_appliance_part_info *p = &st.part[i];
		char why[HOSTLINK_TEXT];

		p->device_id = s->dev.device_id;
		p->state = part_state(s, why, sizeof(why));
		snprintf(p->reason, sizeof(p->reason), "%.64s", why);
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
	/* A service down now, or else the last failure, which may have been a system's. */
	reason = mx_why[0] ? mx_why : sx_why[0] ? sx_why : in_why[0] ? in_why : failure;
	snprintf(st.reason, sizeof(st.reason), "%.127s", reason);
	return wse_link_appliance_state_encode(buf, cap, &st);
}

void coord_parts_restart(struct coord *c)
{
	/* Parts that answered become idle; one whose link had died stays down, saying why. */
	for (unsigned int i = 0; i < c->nsys; i++) {
		coord_system_reset(c, i);
		c->sys[i].steps = c->sys[i].samples = 0;
		c->sys[i].base_frames_tx = c->sys[i].base_frames_rx = 0;
		c->sys[i].base_bytes_tx = c->sys[i].base_bytes_rx = 0;
	}
	service_reset(&c->mx);
	service_reset(&c->sx);
	service_reset(&c->in);
	pthread_mutex_lock(&c->lock);
	c->broadcast = c->reduced = 0;
	c->failure[0] = 0;
	pthread_mutex_unlock(&c->lock);
}
