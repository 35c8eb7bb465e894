// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reading and writing .wsep programs as files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/outfile.h"
#include "wsep_internal.h"

/* Larger than any program we produce (fc-large's weights are ~150 MB). */
#define WSEP_FILE_LIMIT (1ULL << 30)

/* "@path: what errno @e says", and -@e. */
static int fail_errno(char *err, size_t errlen, int e, const char *path)
{
	wsep_fail(err, errlen, "%s: %s", path, strerror(e));
	return -e;
}

int wsep_read_file(const char *path, struct wsep_program **out, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(err, errlen, errno, path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > WSEP_FILE_LIMIT) {
		close(fd);
		return wsep_fail(err, errlen, "%s: not a regular file of at most %llu bytes", path,
				 WSEP_FILE_LIMIT);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return fail_errno(err, errlen, ENOMEM, path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	ret = wsep_read(buf, got, out, err, errlen);
	if (ret) {
		/* Say which file was bad. */
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", err ? err : "");
		wsep_fail(err, errlen, "%s: %s", path, msg);
	}
	free(buf);
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
