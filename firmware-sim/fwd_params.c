// SPDX-License-Identifier: GPL-2.0-only
/*
 * PARAMS_READ / PARAMS_WRITE on a pipelined program's resident parameters
 * (checkpoint and restore), and DEVICE_STATS.
 *
 * WSE_LINK_PARAMS_WEIGHTS addresses the .wsep weights layout: f32, layer
 * by layer at its weight_offset, W ([out][in]) then b. OPT_STATE addresses
 * the optimizer's state arrays, each in that same layout, one after
 * another (none for SGD; v for momentum; m then v for Adam), followed by
 * the optimizer's step count as a u64 (Adam's bias correction needs it).
 */
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_conn.h"
#include "fwd_device.h"
#include "fwd_exec.h"
#include "fwd_graph.h"
#include "fwd_ops.h"

void fwd_params_copy(struct fwd_program *p, int slot, uint64_t first, uint64_t n,
		     uint8_t *buf, bool to_device)
{
	const struct wsep_program *prog = p->prog;

	/* A graph program's arrays are in the weights layout already. */
	if (p->graph) {
		float *a = fwd_graph_array(p->graph, slot) + first;

		if (to_device)
			memcpy(a, buf, n * sizeof(float));
		else
			memcpy(buf, a, n * sizeof(float));
		return;
	}

	for (uint32_t k = 0; k < prog->num_layers && n; k++) {
		const struct wsep_layer *l = &prog->layers[k];
		struct engine_layer *el = &p->params->layer[k];
		uint64_t wn = (uint64_t)l->in * l->out;
		struct {
			float *base;
			uint64_t start, count;
		} seg[2] = {
			{ slot < 0 ? el->w : el->w_state[slot], l->weight_offset, wn },
			{ slot < 0 ? el->b : el->b_state[slot], l->weight_offset + wn, l->out },
		};

		for (int s = 0; s < 2; s++) {
			uint64_t lo = first > seg[s].start ? first : seg[s].start;
			uint64_t hi = first + n < seg[s].start + seg[s].count ?
				      first + n : seg[s].start + seg[s].count;

			if (lo >= hi)
				continue;
			if (to_device)
				memcpy(seg[s].base + (lo - seg[s].start), buf + (lo - first) * 4,
				       (hi - lo) * sizeof(float));
			else
				memcpy(buf + (lo - first) * 4, seg[s].base + (lo - seg[s].start),
				       (hi - lo) * sizeof(float));
		}
	}
}

/*
 * Checks a params request (lock held) and marks the program busy. Returns
 * the program, or NULL with a text; *@size gets the addressed region's size.
 */
static struct fwd_program *params_begin(struct fwd_exec *x, const struct wse_link_params_info *in,
					uint64_t *size, char *text, size_t len)
{
	struct fwd_program *p = fwd_program_get(x, in->program, text, len);
	uint64_t n;
	unsigned slots;

	if (!p)
		return NULL;
	if (!p->resident) {
		snprintf(text, len,
			 "program %u runs by weight streaming: its weights live off the wafer, with the host",
			 in->program);
		return NULL;
	}
	if (p->busy) {
		snprintf(text, len, "program %u is running; read or write its parameters between RUNs",
			 in->program);
		return NULL;
	}
	n = wsep_total_params(p->prog->layers, p->prog->num_layers) * 4;
	slots = engine_optim_state_arrays(p->opt.kind);
	if (in->which == WSE_LINK_PARAMS_WEIGHTS) {
		*size = n;
	} else if (in->which == WSE_LINK_PARAMS_OPT_STATE) {
		*size = slots * n + 8;
	} else {
		snprintf(text, len, "params kind %u is not weights (1) or optimizer state (2)",
			 in->which);
		return NULL;
	}
	if (in->offset % 4 || in->length % 4 || in->offset > *size ||
	    in->length > *size - in->offset) {
		snprintf(text, len,
			 "params range of %u bytes at offset %llu is not whole floats inside the %llu bytes of %s",
			 in->length, (unsigned long long)in->offset, (unsigned long long)*size,
			 in->which == WSE_LINK_PARAMS_WEIGHTS ? "weights" : "optimizer state");
		return NULL;
	}
	p->busy = true;
	return p;
}

static void params_end(struct fwd_exec *x, struct fwd_program *p)
{
	pthread_mutex_lock(&x->lock);
	p->busy = false;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
}

/* Moves [offset, offset + length) of the addressed region to or from @buf. */
static void transfer(struct fwd_program *p, const struct wse_link_params_info *in,
		     uint8_t *buf, bool to_device)
{
	uint64_t per_slot = wsep_total_params(p->prog->layers, p->prog->num_layers) * 4;
	uint64_t off = in->offset, end = in->offset + in->length;
	unsigned slots = in->which == WSE_LINK_PARAMS_WEIGHTS ? 1 :
			 engine_optim_state_arrays(p->opt.kind);

	for (unsigned s = 0; s < slots && off < end; s++) {
		uint64_t lo = s * per_slot, hi = lo + per_slot;

		if (off >= hi)
			continue;
		hi = end < hi ? end : hi;
		fwd_params_copy(p, in->which == WSE_LINK_PARAMS_WEIGHTS ? -1 : (int)s, (off - lo) / 4,
			    (hi - off) / 4, buf + (off - in->offset), to_device);
		off = hi;
	}
	if (off < end) {
		/* The step count, stored little-endian after the state arrays. */
		uint8_t count[8];
		uint64_t le = htole64(p->step), at = off - slots * per_slot;

		memcpy(count, &le, 8);
		if (to_device) {
			memcpy(count + at, buf + (off - in->offset), end - off);
			memcpy(&le, count, 8);
			p->step = le64toh(le);
		} else {
			memcpy(buf + (off - in->offset), count + at, end - off);
		}
	}
}

static int read_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
		       struct wse_link_err *err)
{
	return wse_link_params_decode(payload, len, &a->params, err);
}

static int write_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			struct wse_link_err *err)
{
	int ret = wse_link_params_decode(payload, len, &a->params, err);

	return ret ? ret : fwd_data_announced(a->params.length, len - sizeof(struct wse_link_params),
					      "PARAMS_WRITE", err);
}

/*
 * WSE_LINK_PARAMS_SNAPSHOT (fwd_snapshot.c), which goes on while the
 * program runs: a read of the copy, or a write of the step to take it at.
 * Replies; returns true if @r was one.
 */
static bool snapshot_execute(struct fwd_exec *x, const struct fwd_request *r, bool write)
{
	const struct wse_link_params_info in = r->args.params;
	const struct wse_link_frame *f = &r->f;
	struct wse_link_snapshot_store req;
	bool store = in.which == WSE_LINK_PARAMS_SNAPSHOT_STORE;
	struct fwd_program *p;
	char text[256];
	uint64_t size, step;
	uint8_t *buf = NULL;
	struct iovec iov;
	int ret;

	if (in.which != WSE_LINK_PARAMS_SNAPSHOT && !(write && store))
		return false;
	if (store) {
		if (in.offset || in.length != sizeof(req)) {
			fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL,
					    "a snapshot is saved with a struct wse_link_snapshot_store (%zu bytes) at offset 0",
					    sizeof(req));
			return true;
		}
		memcpy(&req, r->data, sizeof(req));
	}
	if (!write && !(buf = malloc(in.length ? in.length : 1))) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INTERNAL, "the simulator is out of memory");
		return true;
	}
	pthread_mutex_lock(&x->lock);
	p = fwd_program_get(x, in.program, text, sizeof(text));
	ret = p ? 0 : -1;
	if (p && !p->resident) {
		snprintf(text, sizeof(text),
			 "program %u runs by weight streaming: its weights live with the host",
			 in.program);
		ret = -1;
	}
	size = p ? fwd_snapshot_size(p) : 0;
	if (!ret && write && !store && (in.offset || in.length != 8)) {
		snprintf(text, sizeof(text), "a snapshot is asked for with the 8 bytes of a step at offset 0");
		ret = -1;
	} else if (!ret && !write && (in.offset % 4 || in.length % 4 || in.offset > size ||
				      in.length > size - in.offset)) {
		snprintf(text, sizeof(text),
			 "params range of %u bytes at offset %llu is not whole floats inside the %llu bytes of the snapshot",
			 in.length, (unsigned long long)in.offset, (unsigned long long)size);
		ret = -1;
	}
	if (!ret && write && !store) {
		memcpy(&step, r->data, 8);
		ret = fwd_snapshot_ask(x, p, le64toh(step), text, sizeof(text));
	} else if (!ret) {
		/* Held, the snapshot and its program stay while they are copied out. */
		ret = fwd_snapshot_hold(p, !store, store ? le64toh(req.step) : 0, text, sizeof(text));
	}
	pthread_mutex_unlock(&x->lock);
	if (!ret && !write) {
		memcpy(buf, p->snap + in.offset, in.length);
		fwd_snapshot_release(x, p);
	} else if (!ret && store) {
		ret = fwd_snapshot_store(x, p, &req, text, sizeof(text));
		fwd_snapshot_release(x, p);
	}
	if (ret) {
		free(buf);
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return true;
	}
	iov.iov_base = buf;
	iov.iov_len = write ? 0 : in.length;
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, &iov, write ? 0 : 1);
	free(buf);
	return true;
}

static void read_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	const struct wse_link_params_info in = r->args.params;
	const struct wse_link_frame *f = &r->f;
	struct fwd_program *p;
	uint64_t size;
	char text[256];
	uint8_t *buf;
	struct iovec iov;

	if (!fwd_conn_reply_fits(x->conn, f, in.length) || snapshot_execute(x, r, false))
		return;
	buf = malloc(in.length ? in.length : 1);
	if (!buf) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INTERNAL, "the simulator is out of memory");
		return;
	}
	pthread_mutex_lock(&x->lock);
	p = params_begin(x, &in, &size, text, sizeof(text));
	pthread_mutex_unlock(&x->lock);
	if (!p) {
		free(buf);
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return;
	}
	transfer(p, &in, buf, false);
	params_end(x, p);
	iov.iov_base = buf;
	iov.iov_len = in.length;
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, &iov, 1);
	free(buf);
}

static void write_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	const struct wse_link_params_info in = r->args.params;
	const struct wse_link_frame *f = &r->f;
	const uint8_t *data = r->data;
	struct fwd_program *p;
	uint64_t size;
	char text[256];

	if (snapshot_execute(x, r, true))
		return;
	/* Untrusted values: a weight that is not a number is refused. */
	for (uint32_t i = 0; in.which == WSE_LINK_PARAMS_WEIGHTS && i + 4 <= in.length; i += 4) {
		float v;

		memcpy(&v, data + i, 4);
		if (!isfinite(v)) {
			fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL,
					    "float %u of the data (offset %llu) is not finite", i / 4,
					    (unsigned long long)(in.offset + i));
			return;
		}
	}
	pthread_mutex_lock(&x->lock);
	p = params_begin(x, &in, &size, text, sizeof(text));
	pthread_mutex_unlock(&x->lock);
	if (!p) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return;
	}
	transfer(p, &in, (uint8_t *)data, true);
	params_end(x, p);
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, NULL, 0);
}

static void stats_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	struct wse_link_dev_stats_info s;
	struct wse_link_dev_stats raw;
	struct iovec iov = { &raw, sizeof(raw) };

	pthread_mutex_lock(&x->lock);
	s = (struct wse_link_dev_stats_info){
		.cycles = x->stats.cycles,
		.est_cycles = x->stats.est_cycles,
		.steps = x->stats.steps,
		.samples = x->stats.samples,
		.sram_used = x->sram_used,
		.stream_bytes_in = x->stats.bytes_in,
		.stream_bytes_out = x->stats.bytes_out,
		.programs = x->programs,
	};
	pthread_mutex_unlock(&x->lock);
	wse_link_dev_stats_encode(&raw, &s);
	fwd_conn_reply(x->conn, &r->f, WSE_LINK_OK, &iov, 1);
}

const struct fwd_op fwd_op_params_read = {
	.opcode = WSE_LINK_OP_PARAMS_READ,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_params),
	.decode = read_decode,
	.execute = read_execute,
};

const struct fwd_op fwd_op_params_write = {
	.opcode = WSE_LINK_OP_PARAMS_WRITE,
	.min_len = sizeof(struct wse_link_params),
	.decode = write_decode,
	.execute = write_execute,
};

const struct fwd_op fwd_op_device_stats = {
	.opcode = WSE_LINK_OP_DEVICE_STATS,
	.exact_len = true,
	.min_len = 0,
	.execute = stats_execute,
};
