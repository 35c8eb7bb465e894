// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snapshots of a pipelined program's parameters (WSE_LINK_PARAMS_SNAPSHOT):
 * the host asks for one at a step (PARAMS_WRITE of a u64), the RUN takes
 * it at the end of that step, and the host reads it (PARAMS_READ) while
 * the next steps run. A checkpoint then costs the device a copy of its
 * parameters, not the time the host takes to read them: the RUN goes on.
 *
 * The region: the weights, each optimizer state array, the step count
 * (u64) and a CRC32C of the weights and state arrays as one run of bytes
 * (the checkpoint file's payload CRC), then 4 zero bytes; little-endian.
 * One snapshot at a time: taking a new one waits for its readers, and a
 * host asks for the next only once it has read the last.
 *
 * With storage shared with the host (--store), the device can instead save
 * the snapshot into a file there (WSE_LINK_PARAMS_SNAPSHOT_STORE): its bytes
 * then never cross the link. Only into a regular file the host made, under
 * the storage's directory (openat2 with RESOLVE_BENEATH: no "..", no
 * absolute path; and RESOLVE_NO_SYMLINKS: no symbolic link at all on the
 * way, so that a link one user leaves in their part of the shared storage
 * cannot lead the device to another user's file beneath it). The host
 * syncs the file when it has written its own part: the device does not
 * wait for the disk.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fwd_device.h"
#include "fwd_exec.h"
#include "wse/crc32c.h"

#define SNAP_TRAILER	16	/* step, CRC32C, zero */

static uint64_t weights_bytes(const struct fwd_program *p)
{
	return wsep_total_params(p->prog->layers, p->prog->num_layers) * 4;
}

uint64_t fwd_snapshot_size(const struct fwd_program *p)
{
	return weights_bytes(p) * (1 + engine_optim_state_arrays(p->opt.kind)) + SNAP_TRAILER;
}

/* Copies the parameters into p->snap (the caller set snap_filling; lock not held). */
static void take(struct fwd_program *p)
{
	uint64_t w = weights_bytes(p), floats = w / 4, body = fwd_snapshot_size(p) - SNAP_TRAILER;
	unsigned int slots = engine_optim_state_arrays(p->opt.kind);
	uint64_t step = htole64(p->step);
	uint32_t crc, zero = 0;

	fwd_params_copy(p, -1, 0, floats, p->snap, false);
	for (unsigned int s = 0; s < slots; s++)
		fwd_params_copy(p, (int)s, 0, floats, p->snap + (s + 1) * w, false);
	crc = htole32(wse_crc32c(0, p->snap, body));
	memcpy(p->snap + body, &step, 8);
	memcpy(p->snap + body + 8, &crc, 4);
	memcpy(p->snap + body + 12, &zero, 4);
}

/* Takes the snapshot now (lock held on entry and exit; dropped while copying). */
static void take_locked(struct fwd_exec *x, struct fwd_program *p)
{
	while (p->snap_readers)
		pthread_cond_wait(&x->changed, &x->lock);
	p->snap_asked = false;
	p->snap_taken = false;
	p->snap_filling = true;
	pthread_mutex_unlock(&x->lock);
	take(p);
	pthread_mutex_lock(&x->lock);
	p->snap_filling = false;
	p->snap_taken = true;
	pthread_cond_broadcast(&x->changed);
}

int fwd_snapshot_ask(struct fwd_exec *x, struct fwd_program *p, uint64_t step, char *text,
		     size_t len)
{
	if (!p->resident) {
		snprintf(text, len, "program %u runs by weight streaming: its weights live with the host",
			 p->slot);
		return -1;
	}
	if (step < p->step || (step == p->step && p->busy)) {
		snprintf(text, len, "a snapshot at step %llu: the program is at step %llu already",
			 (unsigned long long)step, (unsigned long long)p->step);
		return -1;
	}
	if (p->snap_filling || p->snap_readers) {
		snprintf(text, len, "the last snapshot is still being taken or read");
		return -1;
	}
	if (!p->snap) {
		p->snap = malloc(fwd_snapshot_size(p));
		if (!p->snap) {
			snprintf(text, len, "the simulator is out of memory for a snapshot");
			return -1;
		}
	}
	p->snap_at = step;
	p->snap_asked = true;
	p->snap_taken = false;
	/* Between RUNs at that very step: now, the program held busy meanwhile. */
	if (step == p->step && !p->busy) {
		p->busy = true;
		take_locked(x, p);
		p->busy = false;
	}
	return 0;
}

void fwd_snapshot_after_step(struct fwd_exec *x, struct fwd_program *p)
{
	pthread_mutex_lock(&x->lock);
	if (p->snap_asked && p->snap_at == p->step)
		take_locked(x, p);
	pthread_mutex_unlock(&x->lock);
}

int fwd_snapshot_hold(struct fwd_program *p, bool any, uint64_t step, char *text, size_t len)
{
	if (!p->snap_taken) {
		snprintf(text, len, p->snap_asked ?
			 "the snapshot asked for at step %llu is not taken yet (the program is at step %llu)" :
			 "no snapshot: ask for one with PARAMS_WRITE of WSE_LINK_PARAMS_SNAPSHOT first",
			 (unsigned long long)p->snap_at, (unsigned long long)p->step);
		return -1;
	}
	if (!any && p->snap_at != step) {
		snprintf(text, len, "the snapshot is of step %llu, not %llu",
			 (unsigned long long)p->snap_at, (unsigned long long)step);
		return -1;
	}
	p->snap_readers++;
	return 0;
}

void fwd_snapshot_release(struct fwd_exec *x, struct fwd_program *p)
{
	pthread_mutex_lock(&x->lock);
	p->snap_readers--;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
}

/* A name the host may give: relative, plain characters, no "..". */
static bool name_ok(const char *name)
{
	if (!name[0] || name[0] == '/' || strstr(name, ".."))
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("._-/", *c)))
			return false;
	return true;
}

/* Writes all of @buf at @off of @fd; 0 or -errno. */
static int write_at(int fd, const uint8_t *buf, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int fwd_snapshot_store(struct fwd_exec *x, struct fwd_program *p,
		       const struct wse_link_snapshot_store *req, char *text, size_t len)
{
	/* Held: the snapshot stays as it is, and the program stays loaded. */
	const char *store = x->dev->cfg->store;
	struct open_how how = { .flags = O_WRONLY | O_CLOEXEC | O_NOCTTY,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	uint64_t off = le64toh(req->offset);
	uint64_t body = fwd_snapshot_size(p) - SNAP_TRAILER;
	char name[sizeof(req->name)];
	struct stat st;
	int dir, fd, ret;

	memcpy(name, req->name, sizeof(name));
	if (!store) {
		snprintf(text, len, "this device has no storage shared with its hosts (wsefwd --store)");
		return -1;
	}
	if (!memchr(name, 0, sizeof(name)) || !name_ok(name)) {
		snprintf(text, len, "the file's name is not a plain relative path of letters, digits, '.', '_', '-' and '/'");
		return -1;
	}
	if (off > (1ULL << 40)) {
		snprintf(text, len, "offset %llu is beyond any checkpoint file", (unsigned long long)off);
		return -1;
	}
	ret = -1;
	dir = open(store, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = dir < 0 ? -1 : (int)syscall(SYS_openat2, dir, name, &how, sizeof(how));
	if (fd < 0 && errno == ELOOP)
		snprintf(text, len, "%s in the shared storage: a symbolic link is on its path (the device follows none)",
			 name);
	else if (fd < 0)
		snprintf(text, len, "%s in the shared storage: %s (the host makes the file first)",
			 name, strerror(errno));
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		snprintf(text, len, "%s in the shared storage is not a regular file", name);
	else if ((ret = write_at(fd, p->snap, body, off)))
		snprintf(text, len, "%s in the shared storage: %s", name, strerror(-ret));
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	return ret ? -1 : 0;
}
