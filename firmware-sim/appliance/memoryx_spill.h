/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MemoryX's file-backed store (wse-appliance --memoryx-store DIR): the
 * part of a job's optimizer state beyond MemoryX's RAM budget lives in a
 * file in DIR that has no name (O_TMPFILE, or unlinked at once), so
 * nothing is left behind however MemoryX ends. The page cache holds what
 * fits; the kernel writes the rest back to the file instead of the
 * process being OOM-killed.
 */
#ifndef APPLIANCE_MEMORYX_SPILL_H
#define APPLIANCE_MEMORYX_SPILL_H

#include <stddef.h>
#include <stdint.h>

struct mx_spill {
	int fd;			/* the nameless file; -1: none, all in RAM */
	uint64_t ram;		/* bytes held in RAM at most */
	uint64_t limit;		/* bytes the file may take */
};

/*
 * The RAM budget of a MemoryX of @capacity bytes: *@ram, 0 meaning all of
 * it. 0, or -EINVAL with @text if it exceeds the capacity.
 */
int mx_spill_check(uint64_t capacity, uint64_t *ram, char *text, size_t len);
/*
 * Opens the file in @dir for @limit bytes, refusing (with @text) a
 * directory whose file system has fewer free bytes. 0 or a negative errno.
 */
int mx_spill_open(struct mx_spill *s, const char *dir, uint64_t ram, uint64_t limit,
		  char *text, size_t len);
void mx_spill_close(struct mx_spill *s);

/*
 * @bytes of zeroed memory, the first @ram_bytes of them (rounded down to
 * pages) anonymous and the rest the file from its start, reserved on disk
 * (fallocate); one contiguous range either way, @spilled bytes of it in
 * the file. NULL with @text if @s cannot hold them.
 */
void *mx_spill_map(const struct mx_spill *s, uint64_t bytes, uint64_t ram_bytes,
		   uint64_t *spilled, char *text, size_t len);
/* Unmaps what mx_spill_map() gave for @bytes. */
void mx_spill_unmap(void *p, uint64_t bytes);

#endif /* APPLIANCE_MEMORYX_SPILL_H */
