// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Shared-memory regions (wse/link_region.h) on POSIX shared memory: a
 * file in /dev/shm that the creator sizes and both sides map shared.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/link_region.h"

static atomic_uint region_counter;

int wse_link_region_create(struct wse_link_region *r, const char *tag, uint64_t data_bytes,
			   char *text, size_t textlen)
{
	uint64_t size = WSE_LINK_REGION_HEADER + ((data_bytes + 4095) & ~4095ULL);
	void *base;
	int fd, err;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "/wse-%d-%.12s-%u", (int)getpid(), tag,
		 atomic_fetch_add(&region_counter, 1));
	if (getrandom(&r->nonce, sizeof(r->nonce), 0) != sizeof(r->nonce))
		r->nonce = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)r;
	r->nonce |= 1;	/* never 0, which a fresh region reads as */
	fd = shm_open(r->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		err = -errno;
		snprintf(text, textlen, "shared memory %s: %s", r->name, strerror(errno));
		return err;
	}
	if (ftruncate(fd, (off_t)size)) {
		err = -errno;
		snprintf(text, textlen, "shared memory %s of %llu bytes: %s", r->name,
			 (unsigned long long)size, strerror(errno));
		close(fd);
		shm_unlink(r->name);
		return err;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = -errno;
	close(fd);
	if (base == MAP_FAILED) {
		snprintf(text, textlen, "mapping shared memory %s: %s", r->name, strerror(-err));
		shm_unlink(r->name);
		return err;
	}
	r->base = base;
	r->size = size;
	r->owner = true;
	memcpy(r->base, &r->nonce, sizeof(r->nonce));
	return 0;
}

int wse_link_region_map(struct wse_link_region *r, const struct wse_link_region_map_info *in,
			char *text, size_t textlen)
{
	struct stat st;
	uint64_t nonce;
	void *base;
	int fd, err;

	memset(r, 0, sizeof(*r));
	fd = shm_open(in->name, O_RDWR, 0);
	if (fd < 0) {
		err = -errno;
		snprintf(text, textlen, "no shared memory %s here: %s", in->name, strerror(errno));
		return err;
	}
	if (fstat(fd, &st) || (uint64_t)st.st_size < in->size) {
		snprintf(text, textlen, "shared memory %s is smaller than the %llu bytes announced",
			 in->name, (unsigned long long)in->size);
		close(fd);
		return -EINVAL;
	}
	base = mmap(NULL, in->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = -errno;
	close(fd);
	if (base == MAP_FAILED) {
		snprintf(text, textlen, "mapping shared memory %s: %s", in->name, strerror(-err));
		return err;
	}
	memcpy(&nonce, base, sizeof(nonce));
	if (nonce != in->nonce) {
		munmap(base, in->size);
		snprintf(text, textlen, "shared memory %s is not the region announced (another machine's?)",
			 in->name);
		return -ENOENT;
	}
	r->base = base;
	r->size = in->size;
	r->nonce = in->nonce;
	snprintf(r->name, sizeof(r->name), "%.39s", in->name);
	return 0;
}

void wse_link_region_destroy(struct wse_link_region *r)
{
	if (r->base)
		munmap(r->base, r->size);
	if (r->owner)
		shm_unlink(r->name);
	memset(r, 0, sizeof(*r));
}

void *wse_link_region_at(const struct wse_link_region *r, uint64_t off, uint64_t len)
{
	if (!r->base || off < WSE_LINK_REGION_HEADER || off > r->size || len > r->size - off)
		return NULL;
	return r->base + off;
}

void wse_link_region_describe(const struct wse_link_region *r, uint32_t id,
			      struct wse_link_region_map_info *out)
{
	memset(out, 0, sizeof(*out));
	out->region = id;
	out->size = r->size;
	out->nonce = r->nonce;
	snprintf(out->name, sizeof(out->name), "%s", r->name);
}
