// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ONNX external data (Documentation/onnx-import.rst, "External data"): an
 * initializer whose values are in a side file names it with the keys
 * location (relative to the model's directory), offset and length. Each
 * side file is memory-mapped once, read-only and private, and the tensors
 * point into the mapping: nothing is read until a value is touched, and a
 * compiler that only copies each weight once can drop its pages after the
 * copy (wsecc_tensor_evict()). A 175 B parameter model's 700 GB are never
 * in memory at once; with --no-weights they are never touched at all.
 *
 * The model file is untrusted: a location must stay inside the model's
 * directory (no absolute path, no ".." component), and the range must lie
 * inside the side file and hold exactly the tensor's elements.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler_onnx_internal.h"

struct wsecc_mapped {
	char *path;
	void *addr;
	size_t len;
};

/* A location inside the model's directory: relative, no ".." component. */
static const char *location_problem(const char *loc)
{
	const char *p = loc;

	if (!loc[0])
		return "is empty";
	if (loc[0] == '/')
		return "is an absolute path (it must be relative to the model's directory)";
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return "leaves the model's directory through '..'";
		if (!p[n])
			return NULL;
		p += n + 1;
	}
}

/* The side file @path mapped (once per graph); NULL with @err. */
static const struct wsecc_mapped *map_file(struct octx *c, const char *path, const char *what)
{
	struct wsecc_graph *g = c->g;
	struct wsecc_mapped *m;
	struct stat st;
	void *addr = NULL;
	char *copy;
	int fd;

	for (size_t i = 0; i < g->n_mapped; i++)
		if (!strcmp(g->mapped[i].path, path))
			return &g->mapped[i];
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		wsecc_fail(c->err, g->file, 0, 0, "%s: its external data file %s: %s", what, path,
			   strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		wsecc_fail(c->err, g->file, 0, 0, "%s: its external data %s is not a regular file",
			   what, path);
		return NULL;
	}
	if (st.st_size > 0) {
		addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (addr == MAP_FAILED) {
			wsecc_fail(c->err, g->file, 0, 0, "%s: cannot map %s: %s", what, path,
				   strerror(errno));
			close(fd);
			return NULL;
		}
	}
	close(fd);
	m = realloc(g->mapped, (g->n_mapped + 1) * sizeof(*m));
	if (m)
		g->mapped = m;
	copy = m ? strdup(path) : NULL;
	if (!copy) {
		if (addr)
			munmap(addr, (size_t)st.st_size);
		wsecc_fail(c->err, g->file, 0, 0, "out of memory");
		return NULL;
	}
	m = &g->mapped[g->n_mapped++];
	*m = (struct wsecc_mapped){ .path = copy, .addr = addr, .len = (size_t)st.st_size };
	return m;
}

/* A decimal u64 value of key @key; -EINVAL when it is not one. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !s[0] || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int onnx_external_values(struct octx *c, const Onnx__TensorProto *tp, struct wsecc_tensor *t,
			 const char *what)
{
	const char *file = c->g->file, *loc = NULL, *slash, *problem;
	uint64_t offset = 0, length = UINT64_MAX, n = wsecc_tensor_numel(t);
	size_t esz = wsecc_dtype_size(t->dtype), raw_esz;
	const struct wsecc_mapped *m;
	char path[2 * WSECC_PATH_MAX];
	const uint8_t *src;

	raw_esz = tp->data_type == WSECC_DT_I32 ? 4 : esz;
	for (size_t k = 0; k < tp->n_external_data; k++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[k];
		const char *key = e->key ? e->key : "";

		if (!strcmp(key, "location")) {
			loc = e->value ? e->value : "";
		} else if (!strcmp(key, "offset") || !strcmp(key, "length")) {
			if (parse_u64(e->value, key[0] == 'o' ? &offset : &length))
				return wsecc_fail(c->err, file, 0, 0,
						  "%s: external data %s '%.40s' is not a number of bytes",
						  what, key, e->value ? e->value : "");
		} else if (strcmp(key, "checksum") && strcmp(key, "basepath")) {
			return wsecc_fail(c->err, file, 0, 0, "%s: unknown external data key '%.40s'",
					  what, key);
		}
	}
	if (!loc)
		return wsecc_fail(c->err, file, 0, 0, "%s: its external data has no location", what);
	problem = location_problem(loc);
	if (problem)
		return wsecc_fail(c->err, file, 0, 0, "%s: external data location '%.100s' %s",
				  what, loc, problem);
	if (length == UINT64_MAX)
		length = n * raw_esz;
	if (length != n * raw_esz)
		return wsecc_fail(c->err, file, 0, 0,
				  "%s: external data of %llu bytes for %llu elements of %s", what,
				  (unsigned long long)length, (unsigned long long)n,
				  wsecc_dtype_name((enum wsecc_dtype)tp->data_type));
	slash = strrchr(file, '/');
	if ((size_t)snprintf(path, sizeof(path), "%.*s%s", slash ? (int)(slash - file + 1) : 0,
			     file, loc) >= sizeof(path))
		return wsecc_fail(c->err, file, 0, 0, "%s: external data location too long", what);
	m = map_file(c, path, what);
	if (!m)
		return -EINVAL;
	if (offset > m->len || length > m->len - offset)
		return wsecc_fail(c->err, file, 0, 0,
				  "%s: external data bytes %llu..%llu lie outside %s (%zu bytes)", what,
				  (unsigned long long)offset, (unsigned long long)(offset + length),
				  path, m->len);
	src = (const uint8_t *)m->addr + offset;
	if (!n)
		return 0;
	/* In place when the elements are as kept and aligned; else a copy. */
	if (raw_esz == esz && offset % esz == 0) {
		t->data = (void *)src;
		t->data_mapped = true;
		return 0;
	}
	t->data = malloc(n * esz);
	if (!t->data)
		return wsecc_fail(c->err, file, 0, 0, "%s: out of memory", what);
	if (raw_esz == esz) {
		memcpy(t->data, src, n * esz);
	} else {
		for (uint64_t k = 0; k < n; k++) {
			int32_t v;

			memcpy(&v, src + 4 * k, 4);
			((int64_t *)t->data)[k] = v;
		}
	}
	return 0;
}

void wsecc_tensor_evict(const struct wsecc_tensor *t)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a, b;

	if (!t->data_mapped || !t->data || page <= 0)
		return;
	/* The whole pages inside the tensor: its neighbours keep theirs. */
	a = ((uintptr_t)t->data + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	b = ((uintptr_t)t->data + wsecc_tensor_numel(t) * wsecc_dtype_size(t->dtype)) &
	    ~((uintptr_t)page - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

void wsecc_graph_unmap(struct wsecc_graph *g)
{
	for (size_t i = 0; i < g->n_mapped; i++) {
		if (g->mapped[i].addr)
			munmap(g->mapped[i].addr, g->mapped[i].len);
		free(g->mapped[i].path);
	}
	free(g->mapped);
	g->mapped = NULL;
	g->n_mapped = 0;
}
