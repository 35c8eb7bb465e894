/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/outfile.h - writing an output file a user named, without ever
 * replacing what is not a regular file (library wseout; libwsep and
 * libwselink carry the same object, so programs that link one of them need
 * nothing more). Documentation/conventions.rst, "Output files", is the
 * user's side of it.
 *
 * What the path names decides how it is written:
 *
 * - a regular file, or nothing yet: a temporary file beside it (a hidden
 *   ".NAME.XXXXXX" in the same directory) is written, fsync()ed and
 *   renamed over it, and the directory is synced; readers see the old
 *   file or the new one, never a part. A file that is there keeps its
 *   permission bits; one that is not writable is refused, as a shell's
 *   "> PATH" would refuse it.
 * - a symbolic link: followed to the end (several links, relative or
 *   absolute); the file it ends at is replaced as above, in that file's
 *   directory, and the links stay as they were. A link to nothing makes
 *   the file it names.
 * - a character or block device or a FIFO (or a link to one): opened
 *   write-only and written through, never truncated, replaced or
 *   unlinked (/dev/null stays /dev/null; a FIFO's reader gets the bytes).
 *   A Unix stream socket is connected to and written through.
 * - a directory, or anything else: refused with a message naming it.
 * - "-": standard output, where the caller allows it (WSE_OUT_STDOUT);
 *   refused otherwise, so no file named "-" appears by accident ("./-"
 *   names one).
 *
 * Functions return 0 or a negative errno and put a sentence naming the
 * path in @err, following the userspace error convention.
 */
#ifndef WSE_OUTFILE_H
#define WSE_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum wse_out_flags {
	/* "-" is standard output (for an output that is the tool's one stream). */
	WSE_OUT_STDOUT = 1 << 0,
	/*
	 * A regular file is written where it is, truncated at the open, not
	 * replaced at the end: for a log that is read while it grows (a
	 * metrics CSV). Devices, FIFOs and directories are as above.
	 */
	WSE_OUT_IN_PLACE = 1 << 1,
	/* As WSE_OUT_IN_PLACE, but what the file holds is kept and added to. */
	WSE_OUT_APPEND = 1 << 2,
};

/* An output being written; all fields are for reading. */
struct wse_out {
	int fd;			/* write here (O_RDWR for a temporary file) */
	FILE *stream;		/* wse_out_stream()'s, or NULL */
	bool replace;		/* @tmp is renamed over @target by wse_out_commit() */
	bool regular;		/* the bytes land in a regular file (fsync()ed at the end) */
	char path[PATH_MAX];	/* as the caller named it, for messages */
	char target[PATH_MAX];	/* what is written or replaced: @path with links followed */
	char tmp[PATH_MAX];	/* the temporary file while @replace, else "" */
};

/*
 * wse_out_open() - start writing @path (see above for what it may be) with
 * @flags (enum wse_out_flags). On failure nothing was created and @o->fd
 * is -1.
 */
int wse_out_open(struct wse_out *o, const char *path, unsigned int flags, char *err,
		 size_t errlen);

/* wse_out_stream() - a stdio stream on @o->fd (made once; closed by commit/abandon). */
FILE *wse_out_stream(struct wse_out *o, char *err, size_t errlen);

/* wse_out_write() - all of @buf to @o->fd (EINTR and short writes handled). */
int wse_out_write(struct wse_out *o, const void *buf, size_t len, char *err, size_t errlen);

/*
 * wse_out_name() - the name another program may open to write the output
 * (a child such as gnuplot): the temporary file while it is replaced, else
 * @o->target itself (a device or FIFO, or an in-place file).
 */
const char *wse_out_name(const struct wse_out *o);

/*
 * wse_out_commit() - finish: the stream flushed, a regular file fsync()ed,
 * the temporary file renamed over the target and the directory synced.
 * The descriptor is closed whatever the result; on failure the temporary
 * file is removed and what was at the path is as it was.
 */
int wse_out_commit(struct wse_out *o, char *err, size_t errlen);

/* wse_out_abandon() - close without finishing: the temporary file removed. */
void wse_out_abandon(struct wse_out *o);

/* wse_out_write_file() - @len bytes of @buf as the whole of @path: open, write, commit. */
int wse_out_write_file(const char *path, unsigned int flags, const void *buf, size_t len,
		       char *err, size_t errlen);

#endif /* WSE_OUTFILE_H */
