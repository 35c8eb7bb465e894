// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checkpoints: everything a run needs to continue as if it had never
 * stopped. Layout (little-endian), version 1:
 *
 *   header, 160 bytes:
 *     magic "WSECKPT\0", u32 version, u32 header bytes,
 *     model name (32 bytes, NUL-padded), u64 fingerprint of the layers,
 *     optimizer and batch, u32 mode it was written in, u32 systems,
 *     u64 optimizer steps done, u32 epoch, u32 position in the epoch,
 *     u64 shuffle seed, u64 floats (W and b of every layer in the .wsep
 *     layout), u32 optimizer state arrays, u32 reserved (0),
 *     u32 CRC32C of the payload, u32 batch it was trained with, u64
 *     fingerprint of the input and layers alone, f64 learning rate it
 *     was trained with (the last three 0 in files from before them),
 *     u32 parameter names, u32 CRC32C of them (version 2; 0 in 1),
 *     20 reserved bytes (0), u32 CRC32C of the header before this field
 *   payload: the weights, then each optimizer state array (f32)
 *   version 2: the parameters' names, the .wsep param_names records of
 *     the program (Documentation/wsep-format.rst), so that the weights
 *     can go back to the model by name without the program
 *
 * A program with names gives a version 2 checkpoint, one without (format
 * 1.1 and older) a version 1 checkpoint as before: a wsetrain that reads
 * only version 1 then says which version it met rather than misreading.
 *
 * The weights layout is the one PARAMS_READ and MemoryX both use, so a
 * checkpoint taken in one execution mode resumes in the other. Writes go
 * to a temporary file in the same directory, are fsync()ed and renamed
 * over the old checkpoint, and the directory is fsync()ed: a crash
 * leaves the old checkpoint or the new one, never a torn file.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "train.h"
#include "wse/crc32c.h"

#define CKPT_MAGIC	"WSECKPT"
#define CKPT_VERSION	2U
#define CKPT_VERSION_1	1U	/* no names */
#define CKPT_HEADER	160U
#define CKPT_MAX_FLOATS	(1ULL << 32)	/* 16 GiB of weights: more is not a checkpoint of ours */

struct ckpt_header {
	char magic[8];
	uint32_t version, header_bytes;
	char model[WSEP_NAME_MAX];
	uint64_t fingerprint;
	uint32_t mode, systems;
	uint64_t step;
	uint32_t epoch, position;
	uint64_t shuffle_seed;
	uint64_t floats;
	uint32_t state_arrays, reserved0;
	uint32_t payload_crc;
	uint32_t batch;
	uint64_t shape_fingerprint;
	double lr;
	uint32_t names, names_crc;
	uint8_t reserved[20];
	uint32_t header_crc;
};

_Static_assert(sizeof(struct ckpt_header) == CKPT_HEADER, "checkpoint header is 160 bytes");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the layout is written as it lies");

/* The layers' shapes and activations into a running pair of CRCs. */
static void hash_layers(const struct wsep_program *p, uint32_t *lo, uint32_t *hi)
{
	for (uint32_t k = 0; k < p->num_layers; k++) {
		uint32_t l[4] = { p->layers[k].in, p->layers[k].out, p->layers[k].act,
				  p->layers[k].kind };

		*lo = wse_crc32c(*lo, l, sizeof(l));
		*hi = wse_crc32c(*hi, l, sizeof(l));
	}
}

uint64_t train_fingerprint_as(const struct wsep_program *p, double lr, uint32_t batch)
{
	struct {
		uint32_t input_dim, batch, layers, opt;
		double lr, momentum, beta1, beta2, eps, decay;
	} head = { p->input_dim, batch, p->num_layers, p->opt.kind, lr,
		   p->opt.momentum, p->opt.beta1, p->opt.beta2, p->opt.eps,
		   p->opt.weight_decay };
	uint32_t lo = wse_crc32c(0, &head, sizeof(head)), hi = ~lo;

	hash_layers(p, &lo, &hi);
	return (uint64_t)hi << 32 | lo;
}

uint64_t train_fingerprint(const struct wsep_program *p)
{
	return train_fingerprint_as(p, p->opt.lr, p->batch);
}

uint64_t train_shape_fingerprint(const struct wsep_program *p)
{
	uint32_t head[2] = { p->input_dim, p->num_layers };
	uint32_t lo = wse_crc32c(0, head, sizeof(head)), hi = ~lo;

	hash_layers(p, &lo, &hi);
	return (uint64_t)hi << 32 | lo;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t at)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		at += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The file is made at its full size and, where the filesystem can, mapped:
 * the payload is then put straight into its pages (a snapshot read from the
 * device lands there), and no write() copies it again, which under QEMU's
 * TCG is the slow part (copy_from_user() moves bytes with emulated string
 * instructions). A filesystem that cannot map the file for writing (9p
 * without a cache) gets a buffer and a write(), which 9p passes to the
 * host without a copy.
 */
_Static_assert(TRAIN_CKPT_PAYLOAD == CKPT_HEADER, "the payload follows the header");

int train_checkpoint_open_out(const char *path, uint64_t floats, uint32_t state_arrays,
			      bool by_device, struct train_ckpt_out *out)
{
	size_t wbytes = floats * sizeof(float), sbytes = (size_t)state_arrays * wbytes;
	char err[512];

	memset(out, 0, sizeof(*out));
	out->len = CKPT_HEADER + wbytes + sbytes;
	/* A regular file is replaced whole; a FIFO or device is written through. */
	if (wse_out_open(&out->file, path, 0, err, sizeof(err)))
		return train_fail("checkpoint %s", err);
	if (by_device)
		return 0;	/* the device writes the payload into it */
	if (out->file.replace && !ftruncate(out->file.fd, (off_t)out->len)) {
		out->map = mmap(NULL, out->len, PROT_READ | PROT_WRITE, MAP_SHARED, out->file.fd, 0);
		if (out->map == MAP_FAILED)
			out->map = NULL;
	}
	if (out->map) {
		out->weights = (float *)((uint8_t *)out->map + CKPT_HEADER);
	} else {
		out->weights = malloc(wbytes + sbytes);
		if (!out->weights) {
			train_checkpoint_abandon_out(out);
			return train_fail("out of memory for a checkpoint");
		}
	}
	out->state = out->weights + floats;
	return 0;
}

void train_checkpoint_abandon_out(struct train_ckpt_out *out)
{
	if (out->map)
		munmap(out->map, out->len);
	else
		free(out->weights);
	wse_out_abandon(&out->file);
	out->map = NULL;
	out->weights = NULL;
}

int train_checkpoint_finish_out(struct train_ckpt_out *out, const struct train_checkpoint *c)
{
	size_t wbytes = c->floats * sizeof(float);
	size_t sbytes = (size_t)c->state_arrays * wbytes;
	struct ckpt_header h = { 0 };
	uint8_t *names = NULL;
	char err[512];
	int ret;

	memcpy(h.magic, CKPT_MAGIC, sizeof(CKPT_MAGIC));
	h.header_bytes = CKPT_HEADER;
	snprintf(h.model, sizeof(h.model), "%s", c->model);
	h.fingerprint = c->fingerprint;
	h.mode = c->mode;
	h.systems = c->systems;
	h.step = c->step;
	h.epoch = c->epoch;
	h.position = c->position;
	h.shuffle_seed = c->shuffle_seed;
	h.floats = c->floats;
	h.state_arrays = c->state_arrays;
	h.shape_fingerprint = c->shape_fingerprint;
	h.lr = c->lr;
	h.batch = c->batch;
	h.version = c->num_names ? CKPT_VERSION : CKPT_VERSION_1;
	h.names = c->num_names;
	if (c->num_names) {
		names = malloc((size_t)c->num_names * WSEP_PARAM_NAME_RECORD);
		if (!names) {
			train_checkpoint_abandon_out(out);
			return train_fail("checkpoint %s: out of memory for its names",
					  out->file.path);
		}
		wsep_param_names_encode(c->names, c->num_names, names);
		h.names_crc = wse_crc32c(0, names, (size_t)c->num_names * WSEP_PARAM_NAME_RECORD);
	}
	/* The device's CRC, when it computed one: the link checked every byte since. */
	if (!c->crc_known && !out->weights) {
		train_checkpoint_abandon_out(out);
		return train_fail("checkpoint %s: the device wrote it but gave no CRC",
				  out->file.path);
	}
	h.payload_crc = c->crc_known ? c->payload_crc :
		wse_crc32c(0, out->weights, wbytes + sbytes);
	h.header_crc = wse_crc32c(0, &h, offsetof(struct ckpt_header, header_crc));

	err[0] = '\0';
	if (out->map) {
		memcpy(out->map, &h, sizeof(h));
		ret = msync(out->map, out->len, MS_SYNC) ? -errno : 0;
		if (ret)
			snprintf(err, sizeof(err), "%.400s: %s", out->file.path, strerror(-ret));
	} else {
		ret = wse_out_write(&out->file, &h, sizeof(h), err, sizeof(err));
		if (!ret && out->weights)
			ret = wse_out_write(&out->file, out->weights, wbytes + sbytes, err,
					    sizeof(err));
	}
	/*
	 * The names follow the payload, wherever the payload came from: in a
	 * file replaced whole at their offset (the device may have written
	 * the payload), else (a FIFO, a device) after what was written.
	 */
	if (!ret && names) {
		size_t nbytes = (size_t)c->num_names * WSEP_PARAM_NAME_RECORD;

		if (out->file.replace) {
			ret = pwrite_all(out->file.fd, names, nbytes,
					 (off_t)(CKPT_HEADER + wbytes + sbytes));
			if (ret)
				snprintf(err, sizeof(err), "%.400s: %s", out->file.path,
					 strerror(-ret));
		} else {
			ret = wse_out_write(&out->file, names, nbytes, err, sizeof(err));
		}
	}
	free(names);
	if (out->map)
		munmap(out->map, out->len);
	else
		free(out->weights);
	out->map = NULL;
	out->weights = NULL;
	if (ret) {
		wse_out_abandon(&out->file);
		return train_fail("checkpoint not written: %s (the previous one, if any, is intact)",
				  err);
	}
	/* fsync, rename over the old one and sync the directory; or write through. */
	if (wse_out_commit(&out->file, err, sizeof(err)))
		return train_fail("checkpoint not written: %s", err);
	return 0;
}

int train_checkpoint_save(const char *path, const struct train_checkpoint *c)
{
	size_t wbytes = c->floats * sizeof(float);
	struct train_ckpt_out out;

	if (train_checkpoint_open_out(path, c->floats, c->state_arrays, false, &out))
		return -1;
	memcpy(out.weights, c->weights, wbytes);
	memcpy(out.state, c->state, (size_t)c->state_arrays * wbytes);
	return train_checkpoint_finish_out(&out, c);
}

static int bad(char *err, size_t len, const char *path, const char *what)
{
	snprintf(err, len, "%s: %s", path, what);
	return -EINVAL;
}

/*
 * The names after the payload: their CRC, and that they lay out the
 * checkpoint's weights one after another, each its shape's elements.
 */
static int read_names(FILE *f, const char *path, const struct ckpt_header *h, size_t nbytes,
		      struct train_checkpoint *c, char *err, size_t len)
{
	uint8_t *buf = malloc(nbytes);
	char why[256];
	uint64_t at = 0;

	if (!buf || fread(buf, 1, nbytes, f) != nbytes) {
		free(buf);
		snprintf(err, len, "%s: cannot read its parameter names", path);
		return -1;
	}
	if (h->names_crc != wse_crc32c(0, buf, nbytes)) {
		free(buf);
		return bad(err, len, path, "the parameter names' checksum does not match: the file is damaged");
	}
	if (wsep_param_names_decode(buf, WSEP_PARAM_NAME_RECORD, h->names, &c->names_owned, why,
				    sizeof(why))) {
		free(buf);
		snprintf(err, len, "%s: %s", path, why);
		return -1;
	}
	free(buf);
	c->names = c->names_owned;
	c->num_names = h->names;
	for (uint32_t i = 0; i < c->num_names; i++) {
		const struct wsep_param_name *e = &c->names[i];
		uint64_t elems = 1;

		for (uint32_t d = 0; d < e->rank && d < WSEP_GRAPH_MAX_RANK; d++)
			if (__builtin_mul_overflow(elems, e->dims[d], &elems))
				elems = UINT64_MAX;
		if (e->rank > WSEP_GRAPH_MAX_RANK || e->offset != at || e->elems != elems ||
		    e->elems > h->floats - at)
			return bad(err, len, path, "its parameter names do not lay out its weights: the file is damaged");
		at += e->elems;
	}
	if (at != h->floats)
		return bad(err, len, path, "its parameter names do not cover its weights: the file is damaged");
	return 0;
}

int train_checkpoint_load(const char *path, struct train_checkpoint *c, char *err, size_t len)
{
	struct ckpt_header h;
	size_t wbytes, sbytes, nbytes;
	FILE *f;
	long size;
	int ret = -EINVAL;

	memset(c, 0, sizeof(*c));
	f = fopen(path, "rb");
	if (!f) {
		ret = -errno;
		snprintf(err, len, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	if (fread(&h, 1, sizeof(h), f) != sizeof(h)) {
		ret = bad(err, len, path, "shorter than a checkpoint header: not a wsetrain checkpoint");
		goto out;
	}
	if (memcmp(h.magic, CKPT_MAGIC, sizeof(CKPT_MAGIC))) {
		ret = bad(err, len, path, "not a wsetrain checkpoint (bad magic)");
		goto out;
	}
	if (h.header_crc != wse_crc32c(0, &h, offsetof(struct ckpt_header, header_crc))) {
		ret = bad(err, len, path, "the header's checksum does not match: the file is damaged");
		goto out;
	}
	if ((h.version != CKPT_VERSION && h.version != CKPT_VERSION_1) ||
	    h.header_bytes != CKPT_HEADER) {
		snprintf(err, len, "%s: checkpoint version %u; this wsetrain reads versions %u and %u",
			 path, h.version, CKPT_VERSION_1, CKPT_VERSION);
		goto out;
	}
	if (h.version == CKPT_VERSION_1 ? h.names || h.names_crc :
	    !h.names || h.names > WSEP_GRAPH_MAX_VALUES) {
		ret = bad(err, len, path, "its count of parameter names is out of range: the file is damaged");
		goto out;
	}
	if (!h.floats || h.floats > CKPT_MAX_FLOATS || h.state_arrays > 2 ||
	    !memchr(h.model, 0, sizeof(h.model))) {
		ret = bad(err, len, path, "the header's sizes are out of range: the file is damaged");
		goto out;
	}
	wbytes = h.floats * sizeof(float);
	sbytes = (size_t)h.state_arrays * wbytes;
	nbytes = (size_t)h.names * WSEP_PARAM_NAME_RECORD;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    (uint64_t)size != CKPT_HEADER + wbytes + sbytes + nbytes) {
		ret = bad(err, len, path, "its length does not match its header: truncated or damaged");
		goto out;
	}
	fseek(f, CKPT_HEADER, SEEK_SET);
	c->weights = malloc(wbytes);
	c->state = malloc(sbytes ? sbytes : 1);
	if (!c->weights || !c->state) {
		ret = -ENOMEM;
		snprintf(err, len, "%s: out of memory", path);
		goto out;
	}
	if (fread(c->weights, 1, wbytes, f) != wbytes ||
	    fread(c->state, 1, sbytes, f) != sbytes) {
		ret = -EIO;
		snprintf(err, len, "%s: read error", path);
		goto out;
	}
	if (h.payload_crc != wse_crc32c(wse_crc32c(0, c->weights, wbytes), c->state, sbytes)) {
		ret = bad(err, len, path, "the weights' checksum does not match: the file is damaged");
		goto out;
	}
	if (nbytes && read_names(f, path, &h, nbytes, c, err, len)) {
		ret = -EINVAL;
		goto out;
	}
	memcpy(c->model, h.model, sizeof(c->model));
	c->fingerprint = h.fingerprint;
	c->mode = h.mode;
	c->systems = h.systems;
	c->step = h.step;
	c->epoch = h.epoch;
	c->position = h.position;
	c->shuffle_seed = h.shuffle_seed;
	c->floats = h.floats;
	c->state_arrays = h.state_arrays;
	c->shape_fingerprint = h.shape_fingerprint;
	c->lr = isfinite(h.lr) && h.lr > 0 ? h.lr : 0;
	c->batch = h.batch;
	ret = 0;
out:
	fclose(f);
	if (ret)
		train_checkpoint_free(c);
	return ret;
}

void train_checkpoint_free(struct train_checkpoint *c)
{
	free(c->weights);
	free(c->state);
	free(c->names_owned);
	c->weights = NULL;
	c->state = NULL;
	c->names_owned = NULL;
	c->names = NULL;
	c->num_names = 0;
}

int train_checkpoint_inspect(const char *path)
{
	struct train_checkpoint c;
	char err[512];
	double sum = 0;

	if (train_checkpoint_load(path, &c, err, sizeof(err)))
		return train_fail("%s", err);
	for (uint64_t i = 0; i < c.floats; i++)
		sum += fabs(c.weights[i]);
	printf("checkpoint %s\n", path);
	printf("  model         %s (fingerprint %016llx)\n", c.model,
	       (unsigned long long)c.fingerprint);
	printf("  written in    %s on %u system%s\n", wsep_mode_name(c.mode), c.systems,
	       c.systems == 1 ? "" : "s");
	printf("  steps done    %llu (the next starts at sample %u of epoch %u)\n",
	       (unsigned long long)c.step, c.position, c.epoch + 1);
	printf("  shuffle seed  %llu\n", (unsigned long long)c.shuffle_seed);
	if (c.batch)
		printf("  trained with  batch %u, lr %g\n", c.batch, c.lr);
	printf("  weights       %llu floats, sum |w| %.6f, crc32c %08x\n",
	       (unsigned long long)c.floats, sum,
	       wse_crc32c(0, c.weights, c.floats * sizeof(float)));
	printf("  optimizer     %u state array%s, crc32c %08x\n", c.state_arrays,
	       c.state_arrays == 1 ? "" : "s",
	       wse_crc32c(0, c.state, (size_t)c.state_arrays * c.floats * sizeof(float)));
	if (!c.num_names)
		printf("  names         none (a checkpoint of a program without parameter names)\n");
	for (uint32_t i = 0; i < c.num_names; i++) {
		const struct wsep_param_name *e = &c.names[i];

		printf("  %-13s %s", i ? "" : "names", e->name);
		if (e->torch_name[0] && strcmp(e->torch_name, e->name))
			printf(" (state_dict %s%s)", e->torch_name,
			       e->flags & WSEP_PARAM_TORCH_TRANSPOSED ? ", transposed" : "");
		printf(" [");
		for (uint32_t d = 0; d < e->rank; d++)
			printf("%s%llu", d ? "," : "", (unsigned long long)e->dims[d]);
		printf("] at %llu\n", (unsigned long long)e->offset);
	}
	train_checkpoint_free(&c);
	return 0;
}
