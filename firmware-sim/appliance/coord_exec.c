// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each request of the user node, on its queue's worker. A layer-pipelined
 * program lives on one system: its requests go to that system on the same
 * queue and its answers come back as they are, so it behaves as on a
 * system attached directly. A weight-streaming program is the appliance's
 * job (coord_job.c, coord_run.c). The appliance's own PARAMS (the job's
 * systems, where its input comes from, the state of its parts) go by slot
 * (appliance_params()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fwd_log.h"
#include "coord.h"
#include "svc_proto.h"
#include "wse/engine_wsep.h"

/* A system's answer is waited for in slices, watching for a stop or a CANCEL. */
#define FORWARD_SLICE_MS	100

static struct coord_slot *slot_of(struct coord *c, uint32_t slot)
{
	return slot && slot < COORD_SLOTS ? &c->slots[slot] : NULL;
}

/* The slot's program, or a refusal sent. */
static struct coord_slot *loaded(struct coord *c, struct coord_conn *conn,
				 const struct coord_request *r, uint32_t slot)
{
	struct coord_slot *s = slot_of(c, slot);

	if (!s) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "slot %u is outside 1..%u", slot,
				 COORD_SLOTS - 1);
		return NULL;
	}
	if (s->kind == SLOT_EMPTY) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "no program is loaded in slot %u", slot);
		return NULL;
	}
	return s;
}

/*
 * A pipelined program's request, forwarded to its system on the same queue
 * and answered with what the system answered. Waits as long as the system
 * does, watching for the user node's link going, and for the host
 * cancelling the request: the coordinator then cancels its own request
 * on the system's link, and relays the system's answer (E_CANCELED, or
 * the usual one if the system was past its waits).
 */
static void forward_one(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
			unsigned int sys, size_t reply_cap, struct feed_run *fed)
{
	struct coord_part *s = &c->sys[sys];
	struct iovec iov = { (void *)r->payload, r->len }, out;
	uint8_t *buf = coord_reply_buf();
	char text[512], fed_text[HOSTLINK_TEXT + 512];
	uint32_t tag, status;
	bool cancel_sent = false;
	size_t len = 0;
	int ret;

	if (!coord_system_ready(c, sys, text, sizeof(text))) {
		coord_feed_end(fed, fed_text, sizeof(fed_text));
		coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "%s", text);
		return;
	}
	ret = hostlink_submit(&s->link, r->f.opcode, r->f.queue, &iov, r->len ? 1 : 0, buf,
			      reply_cap, &tag);
	while (!ret) {
		bool going, cancelled;

		ret = hostlink_wait(&s->link, tag, FORWARD_SLICE_MS, &status, &len, text,
				    sizeof(text));
		if (ret != -ETIMEDOUT)
			break;
		ret = 0;
		pthread_mutex_lock(&c->lock);
		going = c->stopping;
		cancelled = coord_cancelled(c);
		pthread_mutex_unlock(&c->lock);
		if (going) {
			hostlink_forget(&s->link, tag);
			coord_feed_end(fed, fed_text, sizeof(fed_text));
			return;
		}
		if (cancelled && !cancel_sent) {
			cancel_sent = true;
			if (hostlink_cancel(&s->link, tag) == -EOPNOTSUPP) {
				/* Its queue stays held by the request: only the answer is ours to give. */
				fwd_warn("%s cannot cancel %s tag %u (no CANCEL capability)", s->name,
					 wse_link_op_name(r->f.opcode), tag);
				hostlink_forget(&s->link, tag);
				coord_feed_end(fed, fed_text, sizeof(fed_text));
				coord_reply_text(conn, &r->f, WSE_LINK_E_CANCELED,
						 "cancelled by the host (%s cannot cancel it and may still carry it out)",
						 s->name);
				return;
			}
		}
	}
	/* A fed RUN: the input workers' samples all went, or why not (unless the system refused). */
	if (fed && coord_feed_end(fed, fed_text, sizeof(fed_text)) && (ret || !status)) {
		pthread_mutex_lock(&c->lock);
		snprintf(c->failure, sizeof(c->failure), "%.255s", fed_text);
		pthread_mutex_unlock(&c->lock);
		coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL,
				 "%s (load the program again to go on)", fed_text);
		return;
	}
	if (ret) {
		hostlink_up(&s->link, text, sizeof(text));
		pthread_mutex_lock(&c->lock);
		snprintf(c->failure, sizeof(c->failure), "%s went away: %.180s", s->name, text);
		pthread_mutex_unlock(&c->lock);
		coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "%s went away: %s", s->name, text);
		return;
	}
	if (status) {
		coord_reply_text(conn, &r->f, status, "%s", text);
		return;
	}
	if (r->f.opcode == WSE_LINK_OP_RUN && len == sizeof(struct wse_link_run_result)) {
		struct wse_link_run_result_info res;
		struct wse_link_err err;

		if (!wse_link_run_result_decode(buf, len, &res, &err)) {
			s->steps += res.steps;
			s->samples += res.samples;
		}
	}
	out = (struct iovec){ buf, len };
	coord_reply(conn, &r->f, WSE_LINK_OK, &out, 1);
}

/*
 * forward_one(), once fewer than COORD_FORWARDS of the programs' requests
 * wait on the system: each lane forwards one at a time, but the lanes of
 * many programs on one system could take every place its link has for
 * requests in flight (HOSTLINK_PENDING), and the coordinator's own (a
 * load, an unload, the feed's writes) would wait for one without end.
 */
static void forward(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		    unsigned int sys, size_t reply_cap, struct feed_run *fed)
{
	struct coord_part *s = &c->sys[sys];
	char text[HOSTLINK_TEXT + 512];
	bool cancelled;

	pthread_mutex_lock(&c->lock);
	while (s->forwarding >= COORD_FORWARDS && coord_wait(c, 500))
		;
	if (s->forwarding >= COORD_FORWARDS) {
		cancelled = coord_cancelled(c);
		pthread_mutex_unlock(&c->lock);
		coord_feed_end(fed, text, sizeof(text));
		if (cancelled)
			coord_reply_text(conn, &r->f, WSE_LINK_E_CANCELED,
					 "cancelled by the host before it went to %s", s->name);
		return;
	}
	s->forwarding++;
	pthread_mutex_unlock(&c->lock);
	forward_one(c, conn, r, sys, reply_cap, fed);
	pthread_mutex_lock(&c->lock);
	s->forwarding--;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
}

int coord_load_image(struct coord *c, unsigned int sys, uint32_t slot, const uint8_t *img,
		     uint64_t len, struct wse_link_prog_info *info, uint32_t *status, char *text,
		     size_t textlen)
{
	struct coord_part *s = &c->sys[sys];
	uint8_t reply[64];
	size_t piece = s->link.rules.max_payload - 64, n = 0;
	struct wse_link_err err;

	for (uint64_t off = 0; off < len; off += piece) {
		struct wse_link_prog_load_info in = {
			.program = slot, .total = len, .offset = off,
			.flags = off + piece >= len ? WSE_LINK_PROG_LAST : 0,
		};
		struct wse_link_program_load raw;
		struct iovec iov[2] = { { &raw, sizeof(raw) },
					{ (void *)(img + off), len - off < piece ? len - off : piece } };
		uint32_t tag;
		int ret;

		wse_link_prog_load_encode(&raw, &in);
		ret = hostlink_submit(&s->link, WSE_LINK_OP_PROGRAM_LOAD, coord_own_queue(s), iov, 2, reply,
				      sizeof(reply), &tag);
		if (!ret)
			ret = hostlink_wait(&s->link, tag, COORD_PART_MS, status, &n, text, textlen);
		if (ret)
			return ret;
		if (*status)
			return 0;
	}
	if (wse_link_prog_info_decode(reply, n, info, &err)) {
		snprintf(text, textlen, "%s: %s", s->name, err.text);
		return -EPROTO;
	}
	return 0;
}

/*
 * Asks slot @slot's system to unload it: the system's status (E_BUSY while
 * a RUN of it goes on), or OK when the system is gone, and the program
 * with it.
 */
static uint32_t unload_on_system(struct coord *c, uint32_t slot)
{
	struct coord_part *p = &c->sys[c->slots[slot].system];
	struct wse_link_program_ref ref;
	struct iovec iov = { &ref, sizeof(ref) };
	uint32_t tag, status = WSE_LINK_OK;
	char text[256];
	size_t n;

	if (!p->opened || !hostlink_up(&p->link, NULL, 0))
		return WSE_LINK_OK;
	wse_link_prog_ref_encode(&ref, slot);
	if (hostlink_submit(&p->link, WSE_LINK_OP_PROGRAM_UNLOAD, coord_own_queue(p), &iov, 1, NULL,
			    0, &tag))
		return WSE_LINK_OK;
	if (hostlink_wait(&p->link, tag, COORD_PART_MS, &status, &n, text, sizeof(text))) {
		hostlink_forget(&p->link, tag);
		return WSE_LINK_OK;
	}
	return status;
}

/* Empties a slot whose program its system has let go of: the job closed,
 * the input workers' feed of it stopped.
 */
static void forget_slot(struct coord *c, uint32_t slot)
{
	struct coord_slot *s = &c->slots[slot];

	if (s->kind == SLOT_JOB)
		coord_job_close(c);
	if (c->feed.slot == slot)
		c->feed.active = false;
	s->kind = SLOT_EMPTY;
}

/* Frees a slot: its program unloaded from its system, or the job closed. */
static void unload_slot(struct coord *c, uint32_t slot)
{
	if (c->slots[slot].kind == SLOT_SYSTEM)
		unload_on_system(c, slot);
	forget_slot(c, slot);
}

/*
 * Forgets what a slot's next user must not inherit (lock not held): an
 * image being loaded into it, and its own JOB setting. Whether there was
 * any.
 */
static bool drop_slot_setup(struct coord *c, struct coord_slot *s)
{
	bool had = s->image || s->job_systems;

	c->assembling -= s->image ? s->total : 0;
	free(s->image);
	s->image = NULL;
	s->total = s->got = 0;
	s->job_systems = 0;
	return had;
}

/*
 * PROGRAM_UNLOAD: E_BUSY while the program runs, as a system says it (the
 * driver frees a closed file's slot only once the device calls it empty).
 * The slot's image being loaded and its JOB setting go too: a slot that
 * held only those is answered OK, an empty one E_INVAL.
 */
static void program_unload(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	struct wse_link_err err;
	struct coord_slot *s;
	uint32_t slot, status = WSE_LINK_OK;
	bool running;

	if (wse_link_prog_ref_decode(r->payload, r->len, &slot, &err)) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO, "%s", err.text);
		return;
	}
	s = slot_of(c, slot);
	if (s && drop_slot_setup(c, s) && s->kind == SLOT_EMPTY) {
		coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
		return;
	}
	s = loaded(c, conn, r, slot);
	if (!s)
		return;
	pthread_mutex_lock(&c->lock);
	running = s->kind == SLOT_JOB && c->job.run;
	pthread_mutex_unlock(&c->lock);
	if (!running && s->kind == SLOT_SYSTEM)
		status = unload_on_system(c, slot);
	if (running || status == WSE_LINK_E_BUSY) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
				 "program %u is running; unload it when its RUN ends", slot);
		return;
	}
	/* A system's program is gone already. */
	forget_slot(c, slot);
	coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
}

/*
 * Systems are the job's or the pipelined programs', never both at once
 * (setup_lock held): a system's queues then carry either the job's
 * requests or the pipelined programs' (which their users send on the
 * queues they choose, and which may wait there for ever), so that no user
 * holds up another's job by a RUN it never feeds.
 */
bool coord_in_job(struct coord *c, unsigned int i)
{
	for (unsigned int m = 0; c->job.active && m < c->job.n; m++)
		if (c->job.sys[m] == i)
			return true;
	return false;
}

unsigned int coord_programs_on(struct coord *c, unsigned int i, uint32_t except)
{
	unsigned int n = 0;

	for (uint32_t slot = 1; slot < COORD_SLOTS; slot++)
		n += slot != except && c->slots[slot].kind == SLOT_SYSTEM &&
		     c->slots[slot].system == i;
	return n;
}

/*
 * The systems that are not free and the slots holding them: "system 0
 * holds the layer-pipelined programs of slots 7 and 9; ...".
 */
static void describe_held(struct coord *c, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < c->nsys && at < len; i++) {
		unsigned int n = coord_programs_on(c, i, 0), k = 0;

		if (!n)
			continue;
		at += snprintf(buf + at, len - at, "%ssystem %u holds the layer-pipelined program%s of slot%s",
			       at ? "; " : "", i, n == 1 ? "" : "s", n == 1 ? "" : "s");
		for (uint32_t slot = 1; slot < COORD_SLOTS && at < len; slot++) {
			if (c->slots[slot].kind != SLOT_SYSTEM || c->slots[slot].system != i)
				continue;
			k++;
			at += snprintf(buf + at, len - at, "%s%u", k == 1 ? " " : k == n ? " and " : ", ",
				       slot);
		}
	}
}

/*
 * A layer-pipelined program: on a system outside the weight-streaming job,
 * where it was if it is loaded again, else on the one that holds fewest
 * programs (the lowest of those). A job in the slot itself goes first (as
 * a load replaces a slot's program); if every system is the job's, the
 * load is refused (E_BUSY).
 */
static void load_pipelined(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
			   uint32_t slot, struct coord_slot *s, const struct wsep_program *prog,
			   unsigned int systems)
{
	struct wse_link_prog_info info;
	struct wse_link_program_info raw;
	struct iovec iov = { &raw, sizeof(raw) };
	char text[512] = "", first[512] = "";
	unsigned int order[COORD_SYSTEMS_MAX], key[COORD_SYSTEMS_MAX], n = 0;
	uint32_t status = 0;
	bool running;

	if (systems > 1) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "a layer-pipelined program runs on one system; the job asks for %u (weight streaming spreads a program over systems)",
				 systems);
		return;
	}
	if (s->kind == SLOT_JOB) {
		pthread_mutex_lock(&c->lock);
		running = c->job.run != NULL;
		pthread_mutex_unlock(&c->lock);
		if (running) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
					 "program %u is running; load it again when its RUN ends", slot);
			return;
		}
		/* Its systems are let go of: the new program may take one. */
		forget_slot(c, slot);
	}
	/* By key: the slot's own system first, then by programs held, then by index. */
	for (unsigned int i = 0; i < c->nsys; i++) {
		unsigned int at = n;

		if (coord_in_job(c, i))
			continue;
		key[i] = (s->kind == SLOT_SYSTEM && s->system == i ? 0 : COORD_SLOTS) +
			 coord_programs_on(c, i, slot);
		while (at > 0 && key[order[at - 1]] > key[i])
			at--;
		memmove(order + at + 1, order + at, (n - at) * sizeof(order[0]));
		order[at] = i;
		n++;
	}
	if (!n) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
				 "every system of the appliance runs the weight-streaming job of slot %u (%u system%s), and a system runs the job or layer-pipelined programs, not both: load the job on fewer systems (WSE_LINK_PARAMS_JOB), or this program once the job is unloaded",
				 c->job.slot, c->job.n, c->job.n == 1 ? "" : "s");
		return;
	}
	for (unsigned int k = 0; k < n; k++) {
		unsigned int i = order[k];

		if (!coord_system_ready(c, i, text, sizeof(text))) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s", text);
			continue;
		}
		if (coord_load_image(c, i, slot, s->image, s->total, &info, &status, text,
				   sizeof(text))) {
			snprintf(first, sizeof(first), "%s", text);
			continue;
		}
		if (status) {
			coord_reply_text(conn, &r->f, status, "%s", text);
			return;
		}
		/* What the slot held goes, unless the system just replaced it. */
		if (s->kind != SLOT_SYSTEM || s->system != i)
			unload_slot(c, slot);
		else if (c->feed.slot == slot)
			c->feed.active = false;
		s->kind = SLOT_SYSTEM;
		s->system = i;
		coord_feed_note(s, prog);
		wse_link_prog_info_encode(&raw, &info);
		coord_reply(conn, &r->f, WSE_LINK_OK, &iov, 1);
		return;
	}
	coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL,
			 "no system of the appliance outside the weight-streaming job answers: %s", first);
}

/*
 * How many systems a weight-streaming program in @slot gets: its slot's
 * JOB, else slot 0's, else every free one (a system that holds no
 * layer-pipelined program: all of them when none is loaded). 0 with a
 * refusal sent when fewer are free than asked for (E_BUSY: the programs
 * holding them may go). A pipelined program in the slot itself goes
 * first, as a load replaces a slot's program (E_BUSY while it runs).
 */
static unsigned int job_systems(struct coord *c, struct coord_conn *conn,
				const struct coord_request *r, uint32_t slot, struct coord_slot *s)
{
	unsigned int asked = s->job_systems ? s->job_systems : c->job_systems, free_n = 0;
	char held[400];

	if (s->kind == SLOT_SYSTEM) {
		if (unload_on_system(c, slot) == WSE_LINK_E_BUSY) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
					 "program %u is running; load it again when its RUN ends", slot);
			return 0;
		}
		forget_slot(c, slot);
	}
	for (unsigned int i = 0; i < c->nsys; i++)
		free_n += !coord_programs_on(c, i, 0);
	if (free_n && asked <= free_n)
		return asked ? asked : free_n;
	describe_held(c, held, sizeof(held));
	if (!free_n)
		coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
				 "no system of the appliance is free for the weight-streaming job (a system runs the job or layer-pipelined programs, not both): %s; load it once they are unloaded",
				 held);
	else
		coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
				 "the job asks for %u systems; %u of the appliance's %u %s free (a system runs the job or layer-pipelined programs, not both): %s; ask for fewer (WSE_LINK_PARAMS_JOB) or load it once they are unloaded",
				 asked, free_n, c->nsys, free_n == 1 ? "is" : "are", held);
	return 0;
}

static void program_load(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	struct wse_link_prog_load_info in;
	struct wse_link_err err;
	struct coord_slot *s;
	struct wsep_program *prog;
	size_t n = r->len - sizeof(struct wse_link_program_load);
	unsigned int systems;
	char text[512];

	if (wse_link_prog_load_decode(r->payload, r->len, &in, &err)) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO, "%s", err.text);
		return;
	}
	s = slot_of(c, in.program);
	if (!s) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "slot %u is outside 1..%u", in.program,
				 COORD_SLOTS - 1);
		return;
	}
	if (!in.offset) {
		c->assembling -= s->image ? s->total : 0;
		free(s->image);
		s->image = NULL;
		if (in.total > c->o.max_program - c->assembling) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_NOSPC,
					 "a program of %llu bytes exceeds the %llu the appliance accepts",
					 (unsigned long long)in.total,
					 (unsigned long long)c->o.max_program);
			return;
		}
		s->image = malloc(in.total ? in.total : 1);
		if (!s->image) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_NOSPC, "the coordinator is out of memory");
			return;
		}
		s->total = in.total;
		s->got = 0;
		c->assembling += in.total;
	}
	if (!s->image || in.total != s->total || in.offset != s->got || n > s->total - s->got) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "piece at offset %llu does not continue the image of slot %u",
				 (unsigned long long)in.offset, in.program);
		return;
	}
	memcpy(s->image + s->got, r->payload + sizeof(struct wse_link_program_load), n);
	s->got += n;
	if (!(in.flags & WSE_LINK_PROG_LAST)) {
		coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
		return;
	}
	/* The slot's own JOB, else the default of slot 0. */
	systems = s->job_systems ? s->job_systems : c->job_systems;
	if (s->got != s->total) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "the image ends after %llu of %llu bytes",
				 (unsigned long long)s->got, (unsigned long long)s->total);
	} else if (wsep_read(s->image, s->total, &prog, text, sizeof(text))) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "invalid program: %s", text);
	} else if (prog->mode == WSEP_MODE_PIPELINED) {
		load_pipelined(c, conn, r, in.program, s, prog, systems);
		wsep_program_free(prog);
	} else {
		struct wse_link_prog_info info;
		struct wse_link_program_info raw;
		struct iovec iov = { &raw, sizeof(raw) };
		uint32_t status;

		bool running;

		pthread_mutex_lock(&c->lock);
		running = c->job.active && c->job.run;
		pthread_mutex_unlock(&c->lock);
		if (c->job.active && c->job.slot != in.program) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
					 "the appliance runs one weight-streaming job at a time; slot %u holds one",
					 c->job.slot);
			wsep_program_free(prog);
		} else if (running) {
			/* Its MemoryX and systems are in use: replaced only between RUNs. */
			coord_reply_text(conn, &r->f, WSE_LINK_E_BUSY,
					 "program %u is running; load it again when its RUN ends",
					 in.program);
			wsep_program_free(prog);
		} else if (!(systems = job_systems(c, conn, r, in.program, s))) {
			wsep_program_free(prog);
		} else {
			/* The job in the slot goes only when the new one is taken. */
			status = coord_job_open(c, in.program, prog, systems, s->image, s->total, &info,
						text, sizeof(text));
			if (status) {
				coord_reply_text(conn, &r->f, status, "%s", text);
				if (s->kind == SLOT_JOB && !c->job.active)
					s->kind = SLOT_EMPTY;
			} else {
				s->kind = SLOT_JOB;
				wse_link_prog_info_encode(&raw, &info);
				coord_reply(conn, &r->f, WSE_LINK_OK, &iov, 1);
			}
		}
	}
	c->assembling -= s->total;
	free(s->image);
	s->image = NULL;
}

/*
 * The appliance's own parameters, by slot (Documentation/link-protocol.rst,
 * "Appliances"): JOB, written on slot 0 for every later program, or on a
 * slot for its own next program; APPLIANCE, the parts' state, read on slot
 * 0; INPUT, written on the slot of a loaded program (the job's, or a
 * pipelined one's). A user may reach only its own slots: nothing here
 * touches another slot's program. Returns false if @in is none of them.
 */
static bool appliance_params(struct coord *c, struct coord_conn *conn,
			     const struct coord_request *r, const struct wse_link_params_info *in)
{
	const uint8_t *data = r->payload + sizeof(struct wse_link_params);
	size_t n = r->len - sizeof(struct wse_link_params);
	bool write = r->f.opcode == WSE_LINK_OP_PARAMS_WRITE;
	struct coord_slot *s = slot_of(c, in->program);
	struct wse_link_input_info input;
	struct wse_link_job_info job;
	struct wse_link_err err;

	switch (in->which) {
	case WSE_LINK_PARAMS_APPLIANCE:
		if (write || in->program) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
					 "the appliance's state is read (PARAMS_READ) on slot 0");
		} else {
			uint8_t *buf = coord_reply_buf();
			size_t len = coord_parts_state(c, buf, WSE_LINK_PAYLOAD_LIMIT);
			struct iovec iov = { buf, len };

			if (in->offset || in->length < len)
				coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
						 "the appliance's state is %zu bytes, read at offset 0",
						 len);
			else
				coord_reply(conn, &r->f, WSE_LINK_OK, &iov, 1);
		}
		return true;
	case WSE_LINK_PARAMS_JOB:
		if (!write || (in->program && !s)) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
					 "a job is written (PARAMS_WRITE), on slot 0 for every later program or on a slot 1..%u for its own",
					 COORD_SLOTS - 1);
		} else if (wse_link_job_decode(data, n, &job, &err)) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "%s", err.text);
		} else if (job.systems > c->nsys) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
					 "the job asks for %u systems; this appliance has %u (start it with wse-appliance --systems %u)",
					 job.systems, c->nsys, job.systems);
		} else {
			/* Slot 0: the default; a slot: its next PROGRAM_LOAD's, until unloaded. */
			if (s)
				s->job_systems = job.systems;
			else
				c->job_systems = job.systems;
			coord_reply(conn, &r->f, WSE_LINK_OK, NULL, 0);
		}
		return true;
	case WSE_LINK_PARAMS_INPUT:
		if (!write || !s || s->kind == SLOT_EMPTY ||
		    (s->kind == SLOT_JOB && (!c->job.active || c->job.slot != in->program))) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
					 "the input is written (PARAMS_WRITE) on the slot of a loaded program; slot %u holds none",
					 in->program);
		} else if (wse_link_input_decode(data, n, &input, &err)) {
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "%s", err.text);
		} else if (s->kind == SLOT_SYSTEM) {
			coord_feed_input(c, conn, r, in->program, &input);
		} else {
			coord_job_input(c, conn, r, &input);
		}
		return true;
	}
	return false;
}

/* Weights and optimizer state of the job: MemoryX's, between RUNs. */
static void job_params(struct coord *c, struct coord_conn *conn, const struct coord_request *r,
		       const struct wse_link_params_info *in)
{
	bool write = r->f.opcode == WSE_LINK_OP_PARAMS_WRITE;
	struct iovec iov = { (void *)r->payload, r->len }, out;
	uint8_t *buf = coord_reply_buf();
	char text[512];
	size_t len = 0;
	bool busy;
	int ret;

	pthread_mutex_lock(&c->lock);
	busy = c->job.run != NULL;
	pthread_mutex_unlock(&c->lock);
	if (busy) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "program %u is running; read or write its parameters between RUNs",
				 in->program);
		return;
	}
	ret = coord_service_call(c, &c->mx, r->f.opcode, &iov, 1, buf, WSE_LINK_PAYLOAD_LIMIT, &len,
				 text, sizeof(text));
	if (ret) {
		coord_reply_text(conn, &r->f, ret == -EIO ? WSE_LINK_E_INVAL : WSE_LINK_E_INTERNAL,
				 "%s", text);
		return;
	}
	if (write && in->which == WSE_LINK_PARAMS_OPT_STATE)
		coord_job_sync_step(c);
	out = (struct iovec){ buf, len };
	coord_reply(conn, &r->f, WSE_LINK_OK, &out, write ? 0 : 1);
}

static void params(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	struct wse_link_params_info in;
	struct wse_link_err err;
	struct coord_slot *s;
	bool done;

	if (wse_link_params_decode(r->payload, r->len, &in, &err)) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO, "%s", err.text);
		return;
	}
	if (r->f.opcode == WSE_LINK_OP_PARAMS_WRITE &&
	    r->len - sizeof(struct wse_link_params) != in.length) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO,
				 "PARAMS_WRITE announces %u bytes but carries %zu", in.length,
				 r->len - sizeof(struct wse_link_params));
		return;
	}
	pthread_mutex_lock(&c->setup_lock);
	done = appliance_params(c, conn, r, &in);
	pthread_mutex_unlock(&c->setup_lock);
	if (done)
		return;
	s = loaded(c, conn, r, in.program);
	if (!s)
		return;
	/* A system's program: the system judges its params, as if attached directly. */
	if (s->kind == SLOT_SYSTEM)
		forward(c, conn, r, s->system, r->f.opcode == WSE_LINK_OP_PARAMS_READ ? in.length : 0,
			NULL);
	else if (in.which == WSE_LINK_PARAMS_WEIGHTS || in.which == WSE_LINK_PARAMS_OPT_STATE)
		job_params(c, conn, r, &in);
	else
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "params kind %u of the weight-streaming job in slot %u: its weights (1) and optimizer state (2) are MemoryX's; the appliance's own are the job (write 3), its state (read 4) and the input (write 5)",
				 in.which, in.program);
}

static void stream(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	struct wse_link_stream_info in;
	struct wse_link_err err;
	struct coord_slot *s;

	if (wse_link_stream_decode(r->payload, r->len, &in, &err)) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO, "%s", err.text);
		return;
	}
	if (in.flags) {
		/* 16-bit weights are the coordinator's to send, not the host's. */
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "stream flags 0x%x: the appliance takes none (it does not offer WSE_LINK_CAP_WIRE16)",
				 in.flags);
		return;
	}
	if (r->f.opcode == WSE_LINK_OP_STREAM_WRITE &&
	    in.length != r->len - sizeof(struct wse_link_stream)) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO,
				 "STREAM_WRITE announces %u bytes but carries %zu", in.length,
				 r->len - sizeof(struct wse_link_stream));
		return;
	}
	s = loaded(c, conn, r, in.program);
	if (!s)
		return;
	if (s->kind == SLOT_SYSTEM && r->f.opcode == WSE_LINK_OP_STREAM_WRITE &&
	    coord_feed_takes(c, in.program, in.stream))
		coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL,
				 "program %u takes its samples and labels from the appliance's input workers (WSE_LINK_PARAMS_INPUT): the host writes none",
				 in.program);
	else if (s->kind == SLOT_SYSTEM)
		forward(c, conn, r, s->system,
			r->f.opcode == WSE_LINK_OP_STREAM_READ ? in.length : 0, NULL);
	else if (r->f.opcode == WSE_LINK_OP_STREAM_WRITE)
		coord_job_write(c, conn, r, &in);
	else
		coord_job_read(c, conn, r, &in);
}

static void run(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	struct wse_link_run_info in;
	struct wse_link_err err;
	struct coord_slot *s;

	if (wse_link_run_decode(r->payload, r->len, &in, &err)) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_PROTO, "%s", err.text);
		return;
	}
	s = loaded(c, conn, r, in.program);
	if (!s)
		return;
	if (s->kind == SLOT_SYSTEM) {
		struct feed_run *fed;
		char text[256];

		if (coord_feed_start(c, &in, &fed, text, sizeof(text)))
			coord_reply_text(conn, &r->f, WSE_LINK_E_INVAL, "%s", text);
		else
			forward(c, conn, r, s->system, sizeof(struct wse_link_run_result), fed);
	} else
		coord_run_execute(c, conn, r, &in);
}

/* The systems' counters, summed. */
static void device_stats(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	struct wse_link_dev_stats_info sum = { 0 };
	struct wse_link_dev_stats raw;
	struct iovec iov = { &raw, sizeof(raw) };

	for (unsigned int i = 0; i < c->nsys; i++) {
		struct wse_link_dev_stats_info one;
		struct wse_link_err err;
		char text[256];
		size_t n = 0;

		if (!c->sys[i].opened || !hostlink_up(&c->sys[i].link, NULL, 0) ||
		    hostlink_call(&c->sys[i].link, WSE_LINK_OP_DEVICE_STATS, coord_own_queue(&c->sys[i]),
				  NULL, 0, &raw, sizeof(raw), &n, COORD_PART_MS, text, sizeof(text)) ||
		    wse_link_dev_stats_decode(&raw, n, &one, &err))
			continue;
		sum.cycles += one.cycles;
		sum.est_cycles += one.est_cycles;
		sum.steps += one.steps;
		sum.samples += one.samples;
		sum.sram_used += one.sram_used;
		sum.stream_bytes_in += one.stream_bytes_in;
		sum.stream_bytes_out += one.stream_bytes_out;
		sum.programs += one.programs;
	}
	wse_link_dev_stats_encode(&raw, &sum);
	coord_reply(conn, &r->f, WSE_LINK_OK, &iov, 1);
}

void coord_execute(struct coord *c, struct coord_conn *conn, const struct coord_request *r)
{
	if (!coord_reply_buf()) {
		coord_reply_text(conn, &r->f, WSE_LINK_E_INTERNAL, "the coordinator is out of memory");
		return;
	}
	switch (r->f.opcode) {
	case WSE_LINK_OP_PROGRAM_LOAD:
		pthread_mutex_lock(&c->setup_lock);
		program_load(c, conn, r);
		pthread_mutex_unlock(&c->setup_lock);
		return;
	case WSE_LINK_OP_PROGRAM_UNLOAD:
		pthread_mutex_lock(&c->setup_lock);
		program_unload(c, conn, r);
		pthread_mutex_unlock(&c->setup_lock);
		return;
	case WSE_LINK_OP_STREAM_WRITE:
	case WSE_LINK_OP_STREAM_READ:
		stream(c, conn, r);
		return;
	case WSE_LINK_OP_RUN:
		run(c, conn, r);
		return;
	case WSE_LINK_OP_PARAMS_READ:
	case WSE_LINK_OP_PARAMS_WRITE:
		params(c, conn, r);
		return;
	case WSE_LINK_OP_DEVICE_STATS:
		device_stats(c, conn, r);
		return;
	}
	coord_reply_text(conn, &r->f, WSE_LINK_E_UNSUPPORTED, "the appliance does not serve opcode 0x%02x",
			 r->f.opcode);
}

bool coord_serves(uint8_t opcode)
{
	switch (opcode) {
	case WSE_LINK_OP_PROGRAM_LOAD:
	case WSE_LINK_OP_PROGRAM_UNLOAD:
	case WSE_LINK_OP_STREAM_WRITE:
	case WSE_LINK_OP_STREAM_READ:
	case WSE_LINK_OP_RUN:
	case WSE_LINK_OP_PARAMS_READ:
	case WSE_LINK_OP_PARAMS_WRITE:
	case WSE_LINK_OP_DEVICE_STATS:
		return true;
	}
	return false;
}

void coord_host_gone(struct coord *c)
{
	for (uint32_t slot = 1; slot < COORD_SLOTS; slot++) {
		struct coord_slot *s = &c->slots[slot];

		free(s->image);
		s->image = NULL;
		s->job_systems = 0;
		if (s->kind != SLOT_EMPTY)
			unload_slot(c, slot);
	}
	c->assembling = 0;
	c->job_systems = 0;
	memset(&c->input, 0, sizeof(c->input));
	coord_feed_close(c);
	coord_parts_restart(c);
}
