// SPDX-License-Identifier: GPL-2.0-only
/*
 * File kinds by their magic (wse/filekind.h). ONNX has none: a protobuf
 * ModelProto is recognised by its first fields parsing as ModelProto fields.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/filekind.h"

#define SNIFF_BYTES 4096

/* ModelProto's fields and their wire types (onnx.proto3). */
static bool onnx_model_field(uint64_t field, unsigned int wire)
{
	switch (field) {
	case 1: case 5:			/* ir_version, model_version */
		return wire == 0;
	case 2: case 3: case 4: case 6:	/* producer, version, domain, doc */
	case 7: case 8: case 14:	/* graph, opset_import, metadata_props */
	case 20: case 25:		/* training_info, functions */
		return wire == 2;
	default:
		return false;
	}
}

static bool read_varint(const uint8_t *b, size_t n, size_t *at, uint64_t *v)
{
	*v = 0;
	for (unsigned int shift = 0; shift < 64 && *at < n; shift += 7) {
		uint8_t c = b[(*at)++];

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/*
 * At least two ModelProto fields, or the whole (small) file, parse, and a
 * scalar field comes once: a TensorProto's repeated dims (also field 1,
 * a varint) are not taken for an ir_version.
 */
static bool looks_onnx(const uint8_t *b, size_t n, off_t size)
{
	uint32_t seen = 0;
	size_t at = 0;
	int fields = 0;

	while (at < n && fields < 4) {
		uint64_t tag, v;

		if (!read_varint(b, n, &at, &tag) || !onnx_model_field(tag >> 3, tag & 7))
			return false;
		if ((tag & 7) == 0 && (seen & 1u << (tag >> 3)))
			return false;
		seen |= 1u << (tag >> 3);
		if (!read_varint(b, n, &at, &v))
			return fields >= 2;
		if ((tag & 7) == 2) {
			if (v > (uint64_t)size)
				return false;
			at += v;	/* may run past the sniffed bytes: fine */
		}
		fields++;
	}
	return fields >= 2 || (fields >= 1 && at == (size_t)size);
}

/* torch.save's zip names its first entry ARCHIVE/data.pkl (or .data/version). */
static bool looks_torch_zip(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i++)
		if (!memcmp(b + i, "data.pkl", 8) || !memcmp(b + i, ".data/ve", 8))
			return true;
	return false;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* IDX: 0 0 TYPE NDIM, NDIM big-endian sizes, and exactly that much data after. */
static bool looks_idx(const uint8_t *b, size_t n, off_t size)
{
	unsigned int elem, ndim = n >= 4 ? b[3] : 0;
	uint64_t count = 1;

	if (n < 4 || b[0] || b[1] || ndim < 1 || ndim > 8 || n < 4 + 4 * (size_t)ndim)
		return false;
	switch (b[2]) {
	case 0x08: case 0x09: elem = 1; break;
	case 0x0b: elem = 2; break;
	case 0x0c: case 0x0d: elem = 4; break;
	case 0x0e: elem = 8; break;
	default: return false;
	}
	for (unsigned int i = 0; i < ndim; i++) {
		count *= be32(b + 4 + 4 * i);
		if (count > (uint64_t)size)
			return false;
	}
	return (uint64_t)size == 4 + 4 * (uint64_t)ndim + count * elem;
}

static bool looks_text(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] < 0x20 && b[i] != '\n' && b[i] != '\t' && b[i] != '\r')
			return false;
	return true;
}

enum wse_file_kind wse_file_kind(const char *path, int *err)
{
	uint8_t b[SNIFF_BYTES];
	struct stat st;
	ssize_t got;
	size_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		if (err)
			*err = errno;
		if (fd >= 0)
			close(fd);
		return WSE_FILE_MISSING;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return WSE_FILE_DIRECTORY;
	}
	/* A FIFO or device is read by its consumer, not here. */
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return WSE_FILE_UNKNOWN;
	}
	got = read(fd, b, sizeof(b));
	close(fd);
	if (got < 0) {
		if (err)
			*err = errno;
		return WSE_FILE_MISSING;
	}
	n = (size_t)got;
	if (n == 0)
		return WSE_FILE_EMPTY;
	if (n >= 4 && !memcmp(b, "WSEP", 4))
		return WSE_FILE_WSEP;
	if (n >= 8 && !memcmp(b, "WSECKPT", 8))
		return WSE_FILE_CHECKPOINT;
	if (n >= 4 && !memcmp(b, "PK\3\4", 4))
		return looks_torch_zip(b, n) ? WSE_FILE_TORCH_ZIP : WSE_FILE_ZIP;
	if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
		return WSE_FILE_PICKLE;
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return WSE_FILE_GZIP;
	if (looks_idx(b, n, st.st_size))
		return WSE_FILE_IDX;
	if (looks_text(b, n))
		return WSE_FILE_TEXT;
	if (looks_onnx(b, n, st.st_size))
		return WSE_FILE_ONNX;
	return WSE_FILE_UNKNOWN;
}

const char *wse_file_kind_name(enum wse_file_kind k)
{
	switch (k) {
	case WSE_FILE_MISSING: return "missing";
	case WSE_FILE_DIRECTORY: return "a directory";
	case WSE_FILE_EMPTY: return "empty";
	case WSE_FILE_WSEP: return "a wse program (.wsep)";
	case WSE_FILE_CHECKPOINT: return "a wsetrain checkpoint";
	case WSE_FILE_ONNX: return "an ONNX model";
	case WSE_FILE_TORCH_ZIP: return "a PyTorch checkpoint (zip)";
	case WSE_FILE_PICKLE: return "a Python pickle (an old-style PyTorch checkpoint?)";
	case WSE_FILE_ZIP: return "a zip archive";
	case WSE_FILE_IDX: return "an IDX dataset file";
	case WSE_FILE_GZIP: return "gzip-compressed";
	case WSE_FILE_TEXT: return "a text file";
	case WSE_FILE_UNKNOWN: break;
	}
	return "of no kind wse knows";
}

const char *wse_file_kind_advice(enum wse_file_kind k)
{
	switch (k) {
	case WSE_FILE_WSEP:
		return "train it with 'wsetrain PROGRAM.wsep'; wsecc takes the model it was compiled from (.onnx or model text)";
	case WSE_FILE_CHECKPOINT:
		return "resume from it with 'wsetrain --init-from FILE', look inside with 'wsetrain --inspect FILE', or turn it into ONNX with 'wsetrain --export FILE'";
	case WSE_FILE_ONNX:
		return "compile it with 'wsecc MODEL.onnx -o PROGRAM.wsep', or hand it to wsetrain, which compiles it";
	case WSE_FILE_TORCH_ZIP:
	case WSE_FILE_PICKLE:
		return "export the model to ONNX with torch.onnx.export, see Documentation/onnx-import.rst";
	case WSE_FILE_ZIP:
		return "unpack it and give the file inside";
	case WSE_FILE_IDX:
	case WSE_FILE_GZIP:
		return "datasets go to wsetrain's dataset options (see wsetrain --help), not where a model or program is expected";
	case WSE_FILE_TEXT:
		return "a model text file goes to wsecc or wsetrain (Documentation/model-format.rst)";
	case WSE_FILE_DIRECTORY:
		return "give a file inside it";
	case WSE_FILE_EMPTY:
		return "it holds nothing: was it written completely?";
	case WSE_FILE_MISSING:
	case WSE_FILE_UNKNOWN:
		break;
	}
	return "give an ONNX model, a model text file or a .wsep program";
}

int wse_file_expect(const char *tool, const char *path, unsigned int accepted,
		    const char *wanted)
{
	int err = 0;
	enum wse_file_kind k = wse_file_kind(path, &err);

	if (accepted & WSE_FILE_BIT(k))
		return 0;
	if (k == WSE_FILE_MISSING) {
		fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(err));
		return err ? -err : -ENOENT;
	}
	fprintf(stderr, "%s: %s is %s, not %s: %s\n", tool, path, wse_file_kind_name(k), wanted,
		wse_file_kind_advice(k));
	return -EINVAL;
}
