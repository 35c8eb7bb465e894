// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * TensorBoard event file writer. The file is a sequence of TFRecords
 * (tfrecord.c: length, masked CRC32C, data, masked CRC32C), each holding
 * one tensorflow.Event (lib/metrics/tfevent.proto), packed by protobuf-c:
 *
 *   record 0   Event { wall_time, file_version: "brain.Event:2" }
 *   record 1.. Event { wall_time, step, summary { value { tag, simple_value } } }
 *
 * TensorBoard finds files by the "tfevents" in their name and reads the
 * records in order; the "brain.Event:2" version tells it these are
 * TF2-style events. Documentation/tfevents.rst.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wse/tfevents.h"
#include "metrics.h"
#include "tfevent.pb-c.h"

#define FILE_VERSION	"brain.Event:2"
#define NAME_TRIES	100	/* suffixes tried when the name is taken */

struct wse_tfevents {
	FILE *file;
	char *path;
	uint8_t *event;		/* one packed event */
	size_t event_cap;	/* bytes at event */
	int error;		/* first failed write's negative errno, sticky */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Packs @ev and writes it as one record. 0 or a negative errno. */
static int write_event(struct wse_tfevents *w, const Tensorflow__Event *ev)
{
	size_t len = tensorflow__event__get_packed_size(ev);

	if (len > w->event_cap) {
		uint8_t *p = realloc(w->event, len);

		if (!p)
			return -ENOMEM;
		w->event = p;
		w->event_cap = len;
	}
	tensorflow__event__pack(ev, w->event);
	return tfrecord_write(w->file, w->event, len);
}

double wse_tfevents_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Creates @dir unless it is already a directory. */
static int make_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	if (!*dir) {
		set_err(err, errlen, "empty directory name for the event file");
		return -EINVAL;
	}
	if (mkdir(dir, 0777) == 0)
		return 0;
	ret = -errno;
	if (ret != -EEXIST) {
		set_err(err, errlen, "%s: cannot create directory: %s", dir, strerror(-ret));
		return ret;
	}
	if (stat(dir, &st) != 0) {
		ret = -errno;
		set_err(err, errlen, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "%s: exists and is not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

/* The host name as a file name component: no '/', never empty. */
static void file_hostname(char *buf, size_t len)
{
	if (gethostname(buf, len) != 0 || !buf[0])
		snprintf(buf, len, "localhost");
	buf[len - 1] = 0;
	for (char *p = buf; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
			*p = '_';
}

/* Opens a new, not yet existing DIR/events.out.tfevents.* for writing. */
static int create_file(const char *dir, char **path, int *fd, char *err, size_t errlen)
{
	char host[256];
	long long now = (long long)time(NULL);
	int ret = -EEXIST;

	file_hostname(host, sizeof(host));
	for (int i = 0; i < NAME_TRIES && ret == -EEXIST; i++) {
		char *p;
		int n;

		if (i == 0)
			n = asprintf(&p, "%s/events.out.tfevents.%lld.%s.%d", dir, now, host,
				     (int)getpid());
		else
			n = asprintf(&p, "%s/events.out.tfevents.%lld.%s.%d.%d", dir, now, host,
				     (int)getpid(), i);
		if (n < 0) {
			set_err(err, errlen, "%s: out of memory", dir);
			return -ENOMEM;
		}
		/*
		 * Not wse/outfile.h: a new name of the writer's own in the
		 * directory, made with O_EXCL, never replaces or opens
		 * anything that is there, and is written as the run goes.
		 */
		*fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (*fd >= 0) {
			*path = p;
			return 0;
		}
		ret = -errno;
		if (ret != -EEXIST)
			set_err(err, errlen, "%s: cannot create: %s", p, strerror(-ret));
		else if (i == NAME_TRIES - 1)
			set_err(err, errlen, "%s: exists, as do %d other names tried", p, i);
		free(p);
	}
	return ret;
}

int wse_tfevents_open(const char *dir, struct wse_tfevents **out, char *err, size_t errlen)
{
	Tensorflow__Event version = TENSORFLOW__EVENT__INIT;
	struct wse_tfevents *w;
	int fd, ret;

	*out = NULL;
	ret = make_dir(dir, err, errlen);
	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, errlen, "%s: out of memory", dir);
		return -ENOMEM;
	}
	ret = create_file(dir, &w->path, &fd, err, errlen);
	if (ret) {
		free(w);
		return ret;
	}
	w->file = fdopen(fd, "wb");
	if (!w->file) {
		ret = -errno;
		close(fd);
		goto fail;
	}
	version.wall_time = wse_tfevents_now();
	version.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
	version.file_version = (char *)FILE_VERSION;
	ret = write_event(w, &version);
	if (!ret && fflush(w->file) != 0)
		ret = -errno;
	if (ret) {
		fclose(w->file);
		goto fail;
	}
	*out = w;
	return 0;

fail:
	set_err(err, errlen, "%s: cannot write: %s", w->path, strerror(-ret));
	unlink(w->path);
	free(w->path);
	free(w->event);
	free(w);
	return ret;
}

/* Non-empty UTF-8 (shortest forms, no surrogates) without control characters. */
static int tag_ok(const char *tag, size_t len)
{
	const uint8_t *p = (const uint8_t *)tag, *end = p + len;

	if (!len || len > WSE_TFEVENTS_TAG_MAX)
		return 0;
	while (p < end) {
		uint32_t c = *p++;
		int more;
		uint32_t min;

		if (c < 0x20 || c == 0x7f)
			return 0;
		if (c < 0x80)
			continue;
		if ((c & 0xe0) == 0xc0) {
			more = 1, min = 0x80, c &= 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			more = 2, min = 0x800, c &= 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			more = 3, min = 0x10000, c &= 0x07;
		} else {
			return 0;
		}
		if (end - p < more)
			return 0;
		while (more--) {
			if ((*p & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (*p++ & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;
	}
	return 1;
}

int wse_tfevents_scalar(struct wse_tfevents *w, const char *tag, int64_t step,
			double wall_time, float value)
{
	Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
	Tensorflow__Summary__Value *values[1] = { &v };
	Tensorflow__Summary summary = TENSORFLOW__SUMMARY__INIT;
	Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;

	if (w->error)
		return w->error;
	if (!tag || !tag_ok(tag, strnlen(tag, WSE_TFEVENTS_TAG_MAX + 1)))
		return -EINVAL;
	v.tag = (char *)tag;
	v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
	v.simple_value = value;
	summary.n_value = 1;
	summary.value = values;
	ev.wall_time = wall_time;
	ev.step = step;
	ev.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
	ev.summary = &summary;
	w->error = write_event(w, &ev);
	return w->error;
}

int wse_tfevents_flush(struct wse_tfevents *w)
{
	if (w->error)
		return w->error;
	errno = 0;
	if (fflush(w->file) != 0 || fsync(fileno(w->file)) != 0)
		w->error = errno ? -errno : -EIO;
	return w->error;
}

int wse_tfevents_close(struct wse_tfevents *w)
{
	int ret;

	if (!w)
		return 0;
	ret = wse_tfevents_flush(w);
	if (fclose(w->file) != 0 && !ret)
		ret = -errno;
	free(w->path);
	free(w->event);
	free(w);
	return ret;
}

const char *wse_tfevents_path(const struct wse_tfevents *w)
{
	return w->path;
}
