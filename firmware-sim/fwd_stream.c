// SPDX-License-Identifier: GPL-2.0-only
/*
 * Streams: each declared stream has a bounded ring on the device.
 * STREAM_WRITE is answered once its data is in the ring (a full ring holds
 * the answer: backpressure); STREAM_READ once at least one record is
 * there. Per-sample streams move whole records (one sample's elements);
 * per-transfer streams (weights.K, grads.K) any whole number of f32
 * elements, the consumer taking whole transfers. The _REGION variants
 * take the data from, or put it into, a region the host mapped
 * (fwd_region.c). A wait ends when the host cancels its request: a
 * transfer moves all its bytes or none, so a cancelled one leaves the
 * stream as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_conn.h"
#include "fwd_device.h"
#include "fwd_exec.h"
#include "fwd_log.h"
#include "fwd_ops.h"
#include "fwd_ring.h"

static uint32_t elem_bytes(enum wsep_elem e)
{
	return e == WSEP_ELEM_U8 ? 1 : 4;
}

int fwd_stream_setup(struct fwd_program *p)
{
	const struct wsep_program *prog = p->prog;

	p->streams = calloc(prog->num_streams, sizeof(*p->streams));
	if (!p->streams)
		return -1;
	for (uint32_t i = 0; i < prog->num_streams; i++) {
		struct fwd_stream *s = &p->streams[i];
		const struct wsep_stream *d = &prog->streams[i];

		s->decl = d;
		s->record = d->elems * elem_bytes(d->elem);
		if (d->unit == WSEP_UNIT_PER_SAMPLE) {
			s->unit = (uint32_t)s->record;
			s->cap = (uint64_t)FWD_STREAM_BATCHES * prog->batch * s->record;
		} else {
			s->unit = elem_bytes(d->elem);
			s->cap = FWD_STREAM_TRANSFERS * s->record;
		}
		/* A pipelined program's weights are read with PARAMS_READ. */
		if (prog->mode == WSEP_MODE_PIPELINED && d->layer >= 0)
			s->cap = 0;
		if (s->cap) {
			s->buf = malloc(s->cap);
			if (!s->buf)
				return -1;
		}
		if (s->cap && d->layer >= 0 && d->dir == WSEP_DIR_HOST_TO_DEVICE &&
		    (uint32_t)d->layer < prog->num_layers &&
		    fwd_wire16_layout(prog, (uint32_t)d->layer, &s->wire))
			return -1;
	}
	return 0;
}

void fwd_stream_put(struct fwd_stream *s, const void *data, uint64_t n)
{
	fwd_ring_write(s->buf, s->cap, (s->head + s->len) % s->cap, data, n);
	s->len += n;
}

void fwd_stream_get(struct fwd_stream *s, void *data, uint64_t n)
{
	fwd_ring_read(s->buf, s->cap, s->head, data, n);
	s->head = (s->head + n) % s->cap;
	s->len -= n;
}

const void *fwd_stream_peek(const struct fwd_stream *s, uint64_t off, uint64_t n)
{
	uint64_t at = (s->head + off) % s->cap;

	if (s->nref)
		return n == s->record && off % s->record == 0 && off / s->record < s->nref ?
		       s->ref[off / s->record] : NULL;
	return off <= s->len && s->len - off >= n && at + n <= s->cap ? s->buf + at : NULL;
}

void fwd_stream_consume(struct fwd_stream *s, uint64_t n)
{
	if (s->nref) {
		uint32_t drop = (uint32_t)(n / s->record);

		s->nref -= drop;
		memmove(s->ref, s->ref + drop, s->nref * sizeof(s->ref[0]));
		memmove(s->ref_region, s->ref_region + drop, s->nref * sizeof(s->ref_region[0]));
		s->len -= n;
		return;
	}
	s->head = (s->head + n) % s->cap;
	s->len -= n;
}

void *fwd_stream_reserve(struct fwd_stream *s, uint64_t n)
{
	uint64_t tail = (s->head + s->len) % s->cap;

	return s->cap - s->len >= n && tail + n <= s->cap ? s->buf + tail : NULL;
}

void fwd_stream_commit(struct fwd_stream *s, uint64_t n)
{
	s->len += n;
}

/*
 * The stream a request names, checked for direction and size (lock held).
 * Returns NULL with a text when it is refused.
 */
static struct fwd_stream *lookup(struct fwd_exec *x, const struct wse_link_stream_info *in,
				 enum wsep_direction dir, struct fwd_program **prog, char *text,
				 size_t len)
{
	struct fwd_program *p = fwd_program_get(x, in->program, text, len);
	struct fwd_stream *s;
	const char *verb = dir == WSEP_DIR_HOST_TO_DEVICE ? "write" : "read";

	if (!p)
		return NULL;
	if (in->stream >= p->prog->num_streams) {
		snprintf(text, len, "program %u has no stream %u (its streams are 0..%u)",
			 in->program, in->stream, p->prog->num_streams - 1);
		return NULL;
	}
	s = &p->streams[in->stream];
	*prog = p;
	if (s->decl->dir != dir) {
		snprintf(text, len, "stream %u '%s' flows %s: the host cannot %s it", in->stream,
			 s->decl->name, wsep_direction_name(s->decl->dir), verb);
		return NULL;
	}
	if (!s->cap) {
		snprintf(text, len,
			 "stream %u '%s' of a pipelined program is not streamed: read the weights with PARAMS_READ",
			 in->stream, s->decl->name);
		return NULL;
	}
	if (in->length % s->unit || (dir == WSEP_DIR_DEVICE_TO_HOST && !in->length)) {
		snprintf(text, len, "%s of %u bytes on stream '%s' is not a whole number of %u-byte %s",
			 verb, in->length, s->decl->name, s->unit,
			 s->decl->unit == WSEP_UNIT_PER_SAMPLE ? "records" : "elements");
		return NULL;
	}
	/* A read may ask for more than the buffer holds; it gets what is there. */
	if (dir == WSEP_DIR_HOST_TO_DEVICE && in->length > s->cap) {
		snprintf(text, len,
			 "%s of %u bytes on stream '%s' exceeds its buffer of %llu bytes; send it in pieces",
			 verb, in->length, s->decl->name, (unsigned long long)s->cap);
		return NULL;
	}
	return s;
}

static int read_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
		       struct wse_link_err *err)
{
	return wse_link_stream_decode(payload, len, &a->stream, err);
}

static int write_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			struct wse_link_err *err)
{
	int ret = wse_link_stream_decode(payload, len, &a->stream, err);

	return ret ? ret : fwd_data_announced(a->stream.length, len - sizeof(struct wse_link_stream),
					      "STREAM_WRITE", err);
}

/*
 * Copies @n bytes between @buf and stream @s's ring at byte @at (from the
 * ring's start), in one or two pieces, with the lock dropped: the caller
 * marked the stream and its program in use, so the ring stays where it is
 * and nobody else moves its data meanwhile.
 */
static void copy_unlocked(struct fwd_exec *x, struct fwd_stream *s, uint64_t at, void *buf,
			  uint64_t n, bool into_ring)
{
	pthread_mutex_unlock(&x->lock);
	if (into_ring)
		fwd_ring_write(s->buf, s->cap, at, buf, n);
	else
		fwd_ring_read(s->buf, s->cap, at, buf, n);
	pthread_mutex_lock(&x->lock);
}

/*
 * A whole transfer of a layer's weights from a region is held by
 * reference, not copied: the device reads it where it lies when the layer
 * computes, so the host leaves those bytes alone until the layer's
 * gradients are out (as an appliance's coordinator does).
 */
static bool by_reference(const struct fwd_stream *s, const struct wse_link_region_ref_info *ref,
			 uint32_t length)
{
	return ref && s->decl->unit == WSEP_UNIT_PER_TRANSFER && s->decl->layer >= 0 &&
	       length == s->record && s->len == (uint64_t)s->nref * s->record &&
	       s->nref < FWD_STREAM_TRANSFERS;
}

/*
 * STREAM_WRITE's data is @data; STREAM_WRITE_REGION's (@ref) is in a
 * region the host mapped, found when the ring has room for it (a layer's
 * weights are held by reference instead: by_reference()). The copy
 * runs without the lock (a weight transfer is a megabyte): the stream is
 * marked as being written, which holds off other writers, and its
 * program and the regions as in use, which holds off their removal.
 */
static void write_from(struct fwd_exec *x, const struct wse_link_frame *f,
		       const struct wse_link_stream_info *in,
		       const struct wse_link_region_ref_info *ref, const void *data,
		       uint32_t wire_len)
{
	struct fwd_program *p = NULL;
	struct fwd_stream *s;
	char text[256];

	pthread_mutex_lock(&x->lock);
	for (;;) {
		/* Looked up again after every wait: the program may have gone. */
		s = lookup(x, in, WSEP_DIR_HOST_TO_DEVICE, &p, text, sizeof(text));
		if (!s)
			break;
		/* Transfers held by reference and bytes in the ring do not mix. */
		if (!s->writing && s->cap - s->len >= in->length &&
		    (!s->nref || by_reference(s, ref, in->length))) {
			const void *src = ref ? fwd_region_at(x, ref, in->length, text, sizeof(text)) :
						data;

			if (!src) {
				s = NULL;
				break;
			}
			if (by_reference(s, ref, in->length)) {
				s->ref[s->nref] = src;
				s->ref_region[s->nref++] = ref->region;
				s->len += in->length;
				x->stats.bytes_in += wire_len;
				pthread_cond_broadcast(&x->changed);
				break;
			}
			s->writing = true;
			p->io++;
			x->region_users++;
			copy_unlocked(x, s, (s->head + s->len) % s->cap, (void *)src, in->length, true);
			x->region_users--;
			p->io--;
			s->writing = false;
			s->len += in->length;
			x->stats.bytes_in += wire_len;
			pthread_cond_broadcast(&x->changed);
			break;
		}
		if (!fwd_exec_wait(x)) {
			bool cancelled = fwd_exec_cancelled(x);

			pthread_mutex_unlock(&x->lock);
			/* Nothing of it went in; while the link goes, nobody is answered. */
			if (cancelled)
				fwd_conn_reply_text(x->conn, f, WSE_LINK_E_CANCELED,
						    "cancelled by the host while it waited for room in stream %u of program %u",
						    in->stream, in->program);
			return;
		}
	}
	pthread_mutex_unlock(&x->lock);
	if (!s)
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
	else
		fwd_conn_reply(x->conn, f, WSE_LINK_OK, NULL, 0);
}

/*
 * A STREAM_WRITE flagged WSE_LINK_STREAM_WIRE16: widened to f32 outside
 * the lock (its program held in use), from the float of the layer's
 * transfer where the ring's partial transfer stands (transfers come in
 * order on their queue, and the system takes whole ones), then written as
 * any other. The device's stream bytes count what came on the wire.
 */
static void write_wire16(struct fwd_exec *x, const struct wse_link_frame *f,
			 const struct wse_link_stream_info *in, const uint8_t *data)
{
	struct wse_link_stream_info wide = *in;
	struct fwd_program *p;
	struct fwd_stream *s = NULL;
	float *buf = NULL;
	uint64_t e0 = 0, n = 0;
	char text[256];

	pthread_mutex_lock(&x->lock);
	p = fwd_program_get(x, in->program, text, sizeof(text));
	if (p && in->stream < p->prog->num_streams)
		s = &p->streams[in->stream];
	if (p && !(x->dev->caps & WSE_LINK_CAP_WIRE16)) {
		snprintf(text, sizeof(text),
			 "this device does not offer 16-bit weights on the wire (wsefwd --no-wire16): send the weights as f32");
		p = NULL;
	} else if (s && s->wire.elems && s->wire.precision != ENGINE_FP32 && !s->nref) {
		e0 = s->len % s->record / 4;
		p->io++;
	} else if (p) {
		snprintf(text, sizeof(text),
			 "stream %u of program %u does not take 16-bit weights (WSE_LINK_STREAM_WIRE16 is for a layer's weights of an fp16 or bf16 weight-streaming program, sent in frames)",
			 in->stream, in->program);
		p = NULL;
	}
	pthread_mutex_unlock(&x->lock);
	if (!p) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return;
	}
	buf = malloc((size_t)in->length * 2 + 4);
	if (buf)
		n = fwd_wire16_widen(&s->wire, e0, data, in->length, buf);
	pthread_mutex_lock(&x->lock);
	p->io--;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
	if (!buf)
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_NOSPC,
				    "the simulator is out of memory for %u bytes of 16-bit weights",
				    in->length);
	else if (!n)
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL,
				    "16-bit weights of %u bytes from float %llu of stream %u do not end on a whole value inside the layer's %llu floats",
				    in->length, (unsigned long long)e0, in->stream,
				    (unsigned long long)s->wire.elems);
	if (!n) {
		free(buf);
		return;
	}
	wide.length = (uint32_t)(n * 4);
	wide.flags = 0;
	/* The device's counters count what the wire carried. */
	write_from(x, f, &wide, NULL, buf, in->length);
	free(buf);
}

static void write_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	if (r->args.stream.flags & WSE_LINK_STREAM_WIRE16)
		write_wire16(x, &r->f, &r->args.stream, r->data);
	else
		write_from(x, &r->f, &r->args.stream, NULL, r->data, r->args.stream.length);
}

static void write_region_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	const struct wse_link_stream_info *in = &r->args.region_stream.stream;

	/* A region on this machine is read in place: nothing to narrow. */
	if (in->flags)
		fwd_conn_reply_text(x->conn, &r->f, WSE_LINK_E_INVAL,
				    "STREAM_WRITE_REGION takes no stream flags (0x%x): 16-bit weights come in STREAM_WRITE frames",
				    in->flags);
	else
		write_from(x, &r->f, in, &r->args.region_stream.ref, NULL, in->length);
}

/*
 * STREAM_READ answers with the data; STREAM_READ_REGION (@ref) puts it in
 * a region the host mapped, which must have room for all that was asked,
 * and answers with its length. The copy runs without the lock, as a
 * write's does.
 */
static void read_into(struct fwd_exec *x, const struct wse_link_frame *f,
		      const struct wse_link_stream_info *in,
		      const struct wse_link_region_ref_info *ref)
{
	struct wse_link_region_done done;
	struct fwd_program *p = NULL;
	struct fwd_stream *s;
	uint8_t *data = NULL;
	uint64_t n = 0;
	char text[256];
	struct iovec iov;

	if (in->flags) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL,
				    "a stream read takes no flags (0x%x)", in->flags);
		return;
	}
	if (!ref && !fwd_conn_reply_fits(x->conn, f, in->length))
		return;
	pthread_mutex_lock(&x->lock);
	for (;;) {
		s = lookup(x, in, WSEP_DIR_DEVICE_TO_HOST, &p, text, sizeof(text));
		if (!s)
			break;
		if (!s->reading && s->len >= s->unit) {
			n = s->len < in->length ? s->len : in->length;
			n -= n % s->unit;
			data = ref ? fwd_region_at(x, ref, in->length, text, sizeof(text)) : malloc(n);
			if (!data) {
				if (!ref)
					snprintf(text, sizeof(text), "the simulator is out of memory");
				s = NULL;
				break;
			}
			s->reading = true;
			p->io++;
			x->region_users++;
			copy_unlocked(x, s, s->head, data, n, false);
			x->region_users--;
			p->io--;
			s->reading = false;
			fwd_stream_consume(s, n);
			x->stats.bytes_out += n;
			pthread_cond_broadcast(&x->changed);
			break;
		}
		if (!fwd_exec_wait(x)) {
			bool cancelled = fwd_exec_cancelled(x);

			pthread_mutex_unlock(&x->lock);
			if (cancelled)
				fwd_conn_reply_text(x->conn, f, WSE_LINK_E_CANCELED,
						    "cancelled by the host while it waited for data on stream %u of program %u",
						    in->stream, in->program);
			return;
		}
	}
	pthread_mutex_unlock(&x->lock);
	if (!s) {
		fwd_conn_reply_text(x->conn, f, WSE_LINK_E_INVAL, "%s", text);
		return;
	}
	if (ref) {
		wse_link_region_done_encode(&done, (uint32_t)n);
		iov.iov_base = &done;
		iov.iov_len = sizeof(done);
	} else {
		iov.iov_base = data;
		iov.iov_len = n;
	}
	fwd_conn_reply(x->conn, f, WSE_LINK_OK, &iov, 1);
	if (!ref)
		free(data);
}

static void read_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	read_into(x, &r->f, &r->args.stream, NULL);
}

static void read_region_execute(struct fwd_exec *x, const struct fwd_request *r)
{
	read_into(x, &r->f, &r->args.region_stream.stream, &r->args.region_stream.ref);
}

static int region_decode(const uint8_t *payload, uint32_t len, union fwd_args *a,
			 struct wse_link_err *err)
{
	int ret = wse_link_stream_decode(payload, len, &a->region_stream.stream, err);

	return ret ? ret : wse_link_region_ref_decode(payload + sizeof(struct wse_link_stream),
						      len - sizeof(struct wse_link_stream),
						      &a->region_stream.ref, err);
}

const struct fwd_op fwd_op_stream_write = {
	.opcode = WSE_LINK_OP_STREAM_WRITE,
	.min_len = sizeof(struct wse_link_stream),
	.decode = write_decode,
	.execute = write_execute,
};

const struct fwd_op fwd_op_stream_read = {
	.opcode = WSE_LINK_OP_STREAM_READ,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_stream),
	.decode = read_decode,
	.execute = read_execute,
};

const struct fwd_op fwd_op_stream_write_region = {
	.opcode = WSE_LINK_OP_STREAM_WRITE_REGION,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_stream) + sizeof(struct wse_link_region_ref),
	.decode = region_decode,
	.execute = write_region_execute,
};

const struct fwd_op fwd_op_stream_read_region = {
	.opcode = WSE_LINK_OP_STREAM_READ_REGION,
	.exact_len = true,
	.min_len = sizeof(struct wse_link_stream) + sizeof(struct wse_link_region_ref),
	.decode = region_decode,
	.execute = read_region_execute,
};
