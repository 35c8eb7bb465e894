// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-fuzz's canaries: sixteen bytes that say which uid sent them, put
 * into everything a worker sends (buffer objects, its buffer, stream and
 * parameter writes, the weights of its program image), and looked for in
 * everything it gets back. A worker that finds another uid's canary read
 * that user's data: the driver let it through.
 *
 * The four words are finite floats, so that a program image whose weights
 * are canaries is still a valid one: "ZFWE", "ACAN", then 0x42 and the
 * uid's low 16 bits, then 0x43 and a hash of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/wsep.h"
#include "wse_fuzz.h"

#define CANARY_W0	0x4557465aU
#define CANARY_W1	0x4e414341U

static void canary_words(uid_t uid, uint32_t w[4])
{
	uint32_t u = (uint32_t)uid & 0xffff;

	w[0] = CANARY_W0;
	w[1] = CANARY_W1;
	w[2] = 0x42000000U | u;
	w[3] = 0x43000000U | ((u * 2654435761U) >> 16 & 0xffff);
}

void canary_fill(void *dst, size_t len, uid_t uid)
{
	uint8_t c[CANARY_LEN], *d = dst;
	uint32_t w[4];
	size_t i;

	canary_words(uid, w);
	memcpy(c, w, sizeof(c));
	for (i = 0; i + CANARY_LEN <= len; i += CANARY_LEN)
		memcpy(d + i, c, CANARY_LEN);
	memcpy(d + i, c, len - i);
}

/* The uid of a whole canary at @p (16 bytes readable), or -1. */
static long canary_uid(const uint8_t *p)
{
	uint32_t w[4], want[4];

	memcpy(w, p, sizeof(w));
	if (w[0] != CANARY_W0 || w[1] != CANARY_W1 || (w[2] & 0xffff0000U) != 0x42000000U)
		return -1;
	canary_words(w[2] & 0xffff, want);
	return w[3] == want[3] ? (long)(w[2] & 0xffff) : -1;
}

bool canary_check(struct thr *t, const struct fref *r, const void *data, size_t len,
		  const char *how)
{
	static const uint8_t magic[8] = { 0x5a, 0x46, 0x57, 0x45, 0x41, 0x43, 0x41, 0x4e };
	struct proc *p = t->p;
	const uint8_t *d = data, *hit;
	size_t off = 0;
	bool hostile = false;
	int minor = -1;
	long uid = -1;

	__atomic_fetch_add(&p->sh->canary_checks, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->sh->canary_bytes, len, __ATOMIC_RELAXED);
	/* Bounded: each step moves past a hit, and there are len bytes. */
	while (off + CANARY_LEN <= len && (hit = memmem(d + off, len - off, magic, sizeof(magic)))) {
		off = (size_t)(hit - d);
		if (off + CANARY_LEN > len)
			break;
		uid = canary_uid(hit);
		if (uid >= 0 && uid != (long)(p->uid & 0xffff))
			break;
		uid = -1;
		off++;
	}
	if (uid < 0)
		return false;
	if (r) {
		struct dev_file *f;

		proc_lock(t);
		f = file_of(t, r);
		if (f) {
			hostile = f->hostile;
			minor = f->minor;
		}
		proc_unlock(t);
	}
	if (hostile) {
		/* A lying device may answer one user with another's data: it has both. */
		__atomic_fetch_add(&p->sh->hostile_violations, 1, __ATOMIC_RELAXED);
		return true;
	}
	__atomic_fetch_add(&p->sh->violations, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&p->violations_told, 1, __ATOMIC_RELAXED) < 8)
		fprintf(stderr,
			"wse-fuzz: CANARY VIOLATION: uid %u read uid %ld's canary at byte %zu of %zu through %s on accel%d\n",
			(unsigned int)p->uid, uid, off, len, how, minor);
	return true;
}

static uint64_t elem_bytes(enum wsep_elem e)
{
	switch (e) {
	case WSEP_ELEM_U8: return 1;
	case WSEP_ELEM_I64: return 8;
	default: return 4;
	}
}

int image_make(const uint8_t *src, size_t len, uid_t uid, struct fuzz_image *img,
	       char *err, size_t errlen)
{
	struct wsep_program *prog = NULL;
	void *out = NULL;
	size_t out_len = 0;
	uint32_t i;
	int ret;

	memset(img, 0, sizeof(*img));
	ret = wsep_read(src, len, &prog, err, errlen);
	if (ret)
		return ret;
	img->batch = prog->batch;
	for (i = 0; i < prog->num_streams && img->nstreams < MAX_STREAMS; i++) {
		const struct wsep_stream *s = &prog->streams[i];
		uint64_t record = s->elems * elem_bytes(s->elem);

		if (!record)
			record = 4;
		img->streams[img->nstreams].id = s->id;
		img->streams[img->nstreams].out = s->dir == WSEP_DIR_DEVICE_TO_HOST;
		img->streams[img->nstreams].record = record;
		img->streams[img->nstreams].batch_bytes =
			s->unit == WSEP_UNIT_PER_SAMPLE ? record * prog->batch : record;
		img->nstreams++;
	}
	/* The initial weights become this uid's canaries, if the image has them. */
	if (prog->weights && prog->num_weights >= CANARY_LEN / sizeof(float)) {
		canary_fill(prog->weights, prog->num_weights * sizeof(float), uid);
		ret = wsep_write(prog, &out, &out_len, err, errlen);
		if (ret)
			goto out;
		img->bytes = out;
		img->len = out_len;
		img->canary_weights = true;
	} else {
		img->bytes = malloc(len);
		ret = img->bytes ? 0 : -ENOMEM;
		if (!ret)
			memcpy(img->bytes, src, len);
		img->len = len;
	}
out:
	wsep_program_free(prog);
	return ret;
}

void image_free(struct fuzz_image *img)
{
	free(img->bytes);
	memset(img, 0, sizeof(*img));
}
