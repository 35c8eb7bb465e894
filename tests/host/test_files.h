/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_files.h - reading a whole file in the host tests. It reads until
 * the end rather than by the file's size, so a FIFO, a pipe or a file
 * still being written works too, and ends what it read with a NUL, so a
 * text file can be used as a string. And removing a test's own directory
 * tree, without a shell and without following symbolic links out of it.
 */
#ifndef WSE_TEST_FILES_H
#define WSE_TEST_FILES_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* All of @fd up to its end (malloc()ed, NUL-ended; @len its bytes, may be NULL), or NULL. */
static inline void *test_read_fd(int fd, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	ssize_t got;

	for (;;) {
		if (cap - n < 2) {
			char *p = realloc(buf, cap = cap * 2 + 65536);

			if (!p) {
				free(buf);
				return NULL;
			}
			buf = p;
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return NULL;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* All of @path (see test_read_fd()), or NULL when it cannot be opened or read. */
static inline void *test_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *buf;

	if (fd < 0)
		return NULL;
	buf = test_read_fd(fd, len);
	close(fd);
	return buf;
}

static inline int test_remove_one(const char *path, const struct stat *st, int type,
				  struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* Removes @dir and everything under it (links themselves, never what they name); 0 or -1. */
static inline int test_remove_dir(const char *dir)
{
	return nftw(dir, test_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
