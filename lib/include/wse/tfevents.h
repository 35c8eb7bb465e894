/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/tfevents.h: TensorBoard event files (library libwsemetrics, with
 * protobuf-c). A writer appends scalar summaries - (tag, step, wall time, value)
 * - to DIR/events.out.tfevents.<unix seconds>.<hostname>.<pid>, which
 * `tensorboard --logdir DIR` reads. Documentation/tfevents.rst gives the
 * byte layout.
 *
 * A writer is not thread-safe: use one per thread or lock around calls.
 */
#ifndef WSE_TFEVENTS_H
#define WSE_TFEVENTS_H

#include <stddef.h>
#include <stdint.h>

/* Longest tag accepted, in bytes. */
#define WSE_TFEVENTS_TAG_MAX	1024U

struct wse_tfevents;

/*
 * Creates @dir if needed (one level: its parent must exist) and a new event
 * file in it, and writes the file_version record ("brain.Event:2"). If the
 * name is taken (two writers in one second), ".1", ".2", ... is appended.
 * Returns 0 with *@out set, or a negative errno with a message naming the
 * directory or file and what failed in @err (may be NULL).
 */
int wse_tfevents_open(const char *dir, struct wse_tfevents **out, char *err, size_t errlen);

/*
 * Appends one event holding one scalar. @tag is non-empty UTF-8 without
 * control characters, at most WSE_TFEVENTS_TAG_MAX bytes ("loss",
 * "eval/accuracy"); @wall_time is in seconds since the epoch
 * (wse_tfevents_now()). Written through a stdio buffer: call
 * wse_tfevents_flush() for TensorBoard to see it.
 *
 * Returns 0; -EINVAL for a bad tag (nothing written, the writer is still
 * usable); or the negative errno of a failed write. A failed write may
 * leave a partial record, so the error sticks: every later call returns it.
 */
int wse_tfevents_scalar(struct wse_tfevents *w, const char *tag, int64_t step,
			double wall_time, float value);

/* fflush and fsync. 0 or a negative errno (sticky, as above). */
int wse_tfevents_flush(struct wse_tfevents *w);

/*
 * Flushes, fsyncs and closes the file, and frees @w (NULL is ignored).
 * Returns 0 or the negative errno of the first error the writer met, so a
 * caller that ignored the others learns here that the file is incomplete.
 */
int wse_tfevents_close(struct wse_tfevents *w);

/* The event file's path, valid until wse_tfevents_close(). */
const char *wse_tfevents_path(const struct wse_tfevents *w);

/* The current time as TensorBoard wants it: seconds since the epoch. */
double wse_tfevents_now(void);

#endif /* WSE_TFEVENTS_H */
