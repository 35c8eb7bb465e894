// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reading and writing .wsep programs as files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/outfile.h"
#include "wsep_internal.h"

/*
 * The largest program the format can carry: 2^32 - 1 fp32 weights and as
 * many constant bytes (wsep-format.rst), with room for the graph. A larger
 * file is not a program, and is refused before anything is mapped.
 */
#define WSEP_FILE_LIMIT (24ULL << 30)

/* "@path: what errno @e says", and -@e. */
static int fail_errno(char *err, size_t errlen, int e, const char *path)
{
	wsep_fail(err, errlen, "%s: %s", path, strerror(e));
	return -e;
}

/*
 * The file is mapped, not read into memory: wsep_read() copies what it
 * keeps, so a 1.5 GB program costs its weights once, not twice, and the
 * mapping's pages are the page cache's.
 */
int wsep_read_file(const char *path, struct wsep_program **out, char *err, size_t errlen)
{
	static const uint8_t empty[1];
	struct stat st;
	const void *buf = empty;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(err, errlen, errno, path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return wsep_fail(err, errlen, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > WSEP_FILE_LIMIT) {
		close(fd);
		return wsep_fail(err, errlen,
				 "%s: %llu bytes, more than the largest program the format carries (%llu bytes): not a .wsep program",
				 path, (unsigned long long)st.st_size, WSEP_FILE_LIMIT);
	}
	if (st.st_size > 0) {
		buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (buf == MAP_FAILED) {
			ret = errno;
			close(fd);
			return fail_errno(err, errlen, ret, path);
		}
	}
	close(fd);
	ret = wsep_read(buf, (size_t)st.st_size, out, err, errlen);
	if (st.st_size > 0)
		munmap((void *)buf, (size_t)st.st_size);
	if (ret) {
		/* Say which file was bad. */
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", err ? err : "");
		wsep_fail(err, errlen, "%s: %s", path, msg);
	}
	return ret;
}

int wsep_write_file(const struct wsep_program *p, const char *path, char *err, size_t errlen)
{
	void *buf;
	size_t len;
	int ret;

	ret = wsep_write(p, &buf, &len, err, errlen);
	if (ret)
		return ret;
	/* Never a rename over a device or FIFO: wsecc -o /dev/null once replaced it. */
	ret = wse_out_write_file(path, WSE_OUT_STDOUT, buf, len, err, errlen);
	free(buf);
	return ret;
}
