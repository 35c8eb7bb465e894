// SPDX-License-Identifier: GPL-2.0-only
/* MemoryX's file-backed store (memoryx_spill.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "memoryx_spill.h"

#define PAGE	4096ULL

static uint64_t page_up(uint64_t n)
{
	return (n + PAGE - 1) & ~(PAGE - 1);
}

/* A file in @dir without a name: O_TMPFILE, or one unlinked as soon as made. */
static int nameless_file(const char *dir)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	if (snprintf(path, sizeof(path), "%s/wse-memoryx-XXXXXX", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int mx_spill_check(uint64_t capacity, uint64_t *ram, char *text, size_t len)
{
	if (!*ram)
		*ram = capacity;
	if (*ram > capacity) {
		snprintf(text, len,
			 "--memoryx-ram %llu is more than --memoryx-capacity %llu, which counts RAM and the file store together",
			 (unsigned long long)*ram, (unsigned long long)capacity);
		return -EINVAL;
	}
	return 0;
}

int mx_spill_open(struct mx_spill *s, const char *dir, uint64_t ram, uint64_t limit,
		  char *text, size_t len)
{
	struct statvfs vfs;
	uint64_t free_bytes;
	int err;

	s->fd = -1;
	s->ram = ram;
	s->limit = limit;
	if (statvfs(dir, &vfs)) {
		err = -errno;
		snprintf(text, len, "--memoryx-store %s: %s", dir, strerror(errno));
		return err;
	}
	free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (free_bytes < limit) {
		snprintf(text, len,
			 "--memoryx-store %s has %llu bytes free; a file store of %llu bytes (--memoryx-capacity %llu minus --memoryx-ram %llu) does not fit",
			 dir, (unsigned long long)free_bytes, (unsigned long long)limit,
			 (unsigned long long)(ram + limit), (unsigned long long)ram);
		return -ENOSPC;
	}
	s->fd = nameless_file(dir);
	if (s->fd < 0) {
		err = -errno;
		snprintf(text, len, "--memoryx-store %s: cannot make a file there: %s", dir,
			 strerror(errno));
		return err;
	}
	return 0;
}

void mx_spill_close(struct mx_spill *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void *mx_spill_map(const struct mx_spill *s, uint64_t bytes, uint64_t ram_bytes,
		   uint64_t *spilled, char *text, size_t len)
{
	uint64_t size = page_up(bytes ? bytes : 1), in_ram = ram_bytes & ~(PAGE - 1), spill;
	uint8_t *p;
	int err;

	if (in_ram >= size)
		in_ram = size;
	spill = size - in_ram;
	*spilled = spill;
	if (spill && (s->fd < 0 || spill > s->limit)) {
		snprintf(text, len,
			 "MemoryX would spill %llu bytes beyond its RAM budget of %llu but its file store holds %llu (--memoryx-store, --memoryx-capacity)",
			 (unsigned long long)spill, (unsigned long long)s->ram,
			 (unsigned long long)(s->fd < 0 ? 0 : s->limit));
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(text, len, "MemoryX cannot map %llu bytes: %s", (unsigned long long)size,
			 strerror(errno));
		return NULL;
	}
	if (!spill)
		return p;
	/* A new job's file starts as zeros: cut it away, then reserve its blocks. */
	err = ftruncate(s->fd, 0) ? errno : posix_fallocate(s->fd, 0, (off_t)spill);
	if (err) {
		snprintf(text, len, "MemoryX cannot reserve %llu bytes in its file store: %s",
			 (unsigned long long)spill, strerror(err));
		munmap(p, size);
		return NULL;
	}
	if (mmap(p + in_ram, spill, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s->fd, 0) ==
	    MAP_FAILED) {
		snprintf(text, len, "MemoryX cannot map its file store: %s", strerror(errno));
		munmap(p, size);
		return NULL;
	}
	return p;
}

void mx_spill_unmap(void *p, uint64_t bytes)
{
	if (p)
		munmap(p, page_up(bytes ? bytes : 1));
}
