// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Output files written safely (wse/outfile.h): a regular file replaced
 * atomically, a device, FIFO or socket written through and never replaced,
 * a directory refused. Every tool's and library's output goes through here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wse/outfile.h"

/* As the kernel's own limit on links followed in one lookup. */
#define MAX_LINK_HOPS	40
/* Attempts at a temporary name no one else has taken. */
#define TMP_TRIES	64

static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -e;
}

static const char *kind_name(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

/* The directory part of @path ("." when it has none) into @buf. */
static void dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/*
 * @o->path with every symbolic link of its last component followed, into
 * @o->target; @st is what is there (st_mode 0: nothing).
 */
static int follow_links(struct wse_out *o, struct stat *st, char *err, size_t errlen)
{
	char link[PATH_MAX], dir[PATH_MAX];
	char *cur = o->target;

	snprintf(cur, sizeof(o->target), "%s", o->path);
	for (int hops = 0;; hops++) {
		ssize_t n;

		if (lstat(cur, st)) {
			if (errno != ENOENT)
				return fail(err, errlen, errno, "%s: %s", o->path, strerror(errno));
			st->st_mode = 0;
			return 0;
		}
		if (!S_ISLNK(st->st_mode))
			return 0;
		if (hops == MAX_LINK_HOPS)
			return fail(err, errlen, ELOOP, "%s: more than %d symbolic links in a row",
				    o->path, MAX_LINK_HOPS);
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return fail(err, errlen, errno, "%s: reading the link %s: %s", o->path, cur,
				    strerror(errno));
		link[n] = '\0';
		dir_of(cur, dir, sizeof(dir));
		if (link[0] != '/' && strcmp(dir, ".")) {
			if (snprintf(cur, sizeof(o->target), "%s/%s", dir, link) >=
			    (int)sizeof(o->target))
				return fail(err, errlen, ENAMETOOLONG, "%s: the file it links to has too long a path",
					    o->path);
		} else {
			snprintf(cur, sizeof(o->target), "%s", link);
		}
	}
}

/* A name for the temporary file no other writer picks: random, else time and pid. */
static unsigned int tmp_suffix(void)
{
	static unsigned int count;
	struct timespec ts;
	unsigned int v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned int)ts.tv_nsec ^ (unsigned int)getpid() << 16 ^
	       __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) * 2654435761U;
}

/* A regular file, or nothing: a hidden temporary file beside @o->target. */
static int open_replace(struct wse_out *o, const struct stat *st, char *err, size_t errlen)
{
	const char *base = strrchr(o->target, '/');
	char dir[PATH_MAX];

	base = base ? base + 1 : o->target;
	dir_of(o->target, dir, sizeof(dir));
	if (st->st_mode && faccessat(AT_FDCWD, o->target, W_OK, AT_EACCESS) &&
	    (errno == EACCES || errno == EROFS))
		return fail(err, errlen, errno, "%s: %s (mode %04o): it is left as it is; make it writable or name another file",
			    o->path, strerror(errno), (unsigned int)(st->st_mode & 07777));
	for (int i = 0; i < TMP_TRIES; i++) {
		/* Hidden, so that listings (wsereport's page, ls) do not show it. */
		if (snprintf(o->tmp, sizeof(o->tmp), "%s/.%.200s.%08x", dir, base, tmp_suffix()) >=
		    (int)sizeof(o->tmp))
			return fail(err, errlen, ENAMETOOLONG, "%s: path too long", o->path);
		o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		int e = errno;

		o->tmp[0] = '\0';
		return fail(err, errlen, e, "%s: cannot create a file in %s: %s", o->path, dir,
			    strerror(e));
	}
	/* The replacement keeps the permissions of the file it replaces. */
	if (st->st_mode)
		(void)fchmod(o->fd, st->st_mode & 0777);
	o->replace = true;
	o->regular = true;
	return 0;
}

/* A regular file written where it is (WSE_OUT_IN_PLACE, WSE_OUT_APPEND). */
static int open_in_place(struct wse_out *o, unsigned int flags, char *err, size_t errlen)
{
	int how = flags & WSE_OUT_APPEND ? O_APPEND : O_TRUNC;

	o->fd = open(o->target, O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC | how, 0666);
	if (o->fd < 0)
		return fail(err, errlen, errno, "%s: %s", o->path, strerror(errno));
	o->regular = true;
	return 0;
}

/* A Unix stream socket: connected to, and written through. */
static int open_socket(struct wse_out *o, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int e;

	if (strlen(o->target) >= sizeof(sun.sun_path))
		return fail(err, errlen, ENAMETOOLONG, "%s: a socket whose path is too long to connect to",
			    o->path);
	memcpy(sun.sun_path, o->target, strlen(o->target) + 1);
	o->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (o->fd < 0)
		return fail(err, errlen, errno, "%s: %s", o->path, strerror(errno));
	if (!connect(o->fd, (struct sockaddr *)&sun, sizeof(sun)))
		return 0;
	e = errno;
	close(o->fd);
	o->fd = -1;
	if (e == EPROTOTYPE)
		return fail(err, errlen, e, "%s: a socket that takes no stream connections: name a file, a FIFO or a stream socket",
			    o->path);
	return fail(err, errlen, e, "%s: connecting to the socket: %s", o->path, strerror(e));
}

/* A device or a FIFO: opened write-only, never truncated, replaced or unlinked. */
static int open_through(struct wse_out *o, const struct stat *st, unsigned int flags, char *err,
			size_t errlen)
{
	struct stat now;

	if (S_ISSOCK(st->st_mode))
		return open_socket(o, err, errlen);
	o->fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC |
		     (flags & WSE_OUT_APPEND ? O_APPEND : 0));
	if (o->fd < 0)
		return fail(err, errlen, errno, "%s (%s): %s", o->path, kind_name(st->st_mode),
			    strerror(errno));
	/* Whatever it is now, it was opened without O_CREAT or O_TRUNC. */
	if (!fstat(o->fd, &now))
		o->regular = S_ISREG(now.st_mode);
	return 0;
}

int wse_out_open(struct wse_out *o, const char *path, unsigned int flags, char *err,
		 size_t errlen)
{
	struct stat st;
	size_t n = strlen(path);
	int ret;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (n >= sizeof(o->path))
		return fail(err, errlen, ENAMETOOLONG, "%.64s...: path too long", path);
	memcpy(o->path, path, n + 1);
	if (!n)
		return fail(err, errlen, EINVAL, "an empty path: name a file");
	if (!strcmp(path, "-")) {
		if (!(flags & WSE_OUT_STDOUT))
			return fail(err, errlen, EINVAL, "'-' (standard output) cannot take this output: name a file ('./-' for one called -)");
		snprintf(o->target, sizeof(o->target), "standard output");
		/* A copy: the caller's stdout stays open after the commit. */
		o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (o->fd < 0)
			return fail(err, errlen, errno, "standard output: %s", strerror(errno));
		if (!fstat(o->fd, &st))
			o->regular = S_ISREG(st.st_mode);
		return 0;
	}
	if (path[n - 1] == '/')
		return fail(err, errlen, EISDIR, "%s: ends in '/', a directory: name a file in it", path);
	ret = follow_links(o, &st, err, errlen);
	if (ret)
		return ret;
	if (S_ISDIR(st.st_mode))
		return fail(err, errlen, EISDIR, "%s: is a directory: name a file in it (%s/NAME)",
			    path, path);
	if (!st.st_mode || S_ISREG(st.st_mode))
		return flags & (WSE_OUT_IN_PLACE | WSE_OUT_APPEND) ?
		       open_in_place(o, flags, err, errlen) : open_replace(o, &st, err, errlen);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode))
		return open_through(o, &st, flags, err, errlen);
	return fail(err, errlen, EINVAL, "%s: %s, which cannot take an output", path,
		    kind_name(st.st_mode));
}

FILE *wse_out_stream(struct wse_out *o, char *err, size_t errlen)
{
	if (!o->stream) {
		o->stream = fdopen(o->fd, "w");
		if (!o->stream)
			fail(err, errlen, errno, "%s: %s", o->path, strerror(errno));
	}
	return o->stream;
}

int wse_out_write(struct wse_out *o, const void *buf, size_t len, char *err, size_t errlen)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(o->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			return fail(err, errlen, e, "%s: writing: %s", o->path, strerror(e));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *wse_out_name(const struct wse_out *o)
{
	return o->replace ? o->tmp : o->target;
}

/* The descriptor (and stream) closed; the first error, or 0. */
static int close_out(struct wse_out *o)
{
	int e = 0;

	if (o->stream) {
		if (fflush(o->stream))
			e = errno ? errno : EIO;
		if (ferror(o->stream) && !e)
			e = EIO;
		if (fclose(o->stream) && !e)
			e = errno;
	} else if (o->fd >= 0 && close(o->fd)) {
		e = errno;
	}
	o->stream = NULL;
	o->fd = -1;
	return e;
}

static int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, e = 0;

	dir_of(path, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fsync(fd) && errno != EINVAL)
		e = errno;
	close(fd);
	return e;
}

int wse_out_commit(struct wse_out *o, char *err, size_t errlen)
{
	struct stat st;
	int e = 0, c;

	if (o->stream && fflush(o->stream))
		e = errno ? errno : EIO;
	/* A FIFO or a device has nothing to sync; a file must be on disk before it is renamed. */
	if (!e && o->regular && fsync(o->fd) && errno != EINVAL)
		e = errno;
	c = close_out(o);
	if (c && !e)
		e = c;
	if (!o->replace) {
		if (e)
			return fail(err, errlen, e, "%s: writing: %s", o->path, strerror(e));
		return 0;
	}
	o->replace = false;
	if (e) {
		unlink(o->tmp);
		return fail(err, errlen, e, "%s: writing: %s (what was there is left as it was)",
			    o->path, strerror(e));
	}
	/* Checked again: what became a device or FIFO meanwhile is not replaced either. */
	if (!lstat(o->target, &st) && !S_ISREG(st.st_mode)) {
		unlink(o->tmp);
		return fail(err, errlen, EEXIST, "%s: became %s while it was written: left as it is, nothing written",
			    o->path, kind_name(st.st_mode));
	}
	if (rename(o->tmp, o->target)) {
		e = errno;
		unlink(o->tmp);
		return fail(err, errlen, e, "%s: %s (what was there is left as it was)", o->path,
			    strerror(e));
	}
	e = sync_dir(o->target);
	if (e)
		return fail(err, errlen, e, "%s: written, but syncing its directory failed: %s",
			    o->path, strerror(e));
	return 0;
}

void wse_out_abandon(struct wse_out *o)
{
	close_out(o);
	if (o->replace)
		unlink(o->tmp);
	o->replace = false;
}

int wse_out_write_file(const char *path, unsigned int flags, const void *buf, size_t len,
		       char *err, size_t errlen)
{
	struct wse_out o;
	int ret;

	ret = wse_out_open(&o, path, flags, err, errlen);
	if (ret)
		return ret;
	ret = wse_out_write(&o, buf, len, err, errlen);
	if (ret) {
		wse_out_abandon(&o);
		return ret;
	}
	return wse_out_commit(&o, err, errlen);
}
