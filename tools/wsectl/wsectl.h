/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wsectl internals: the options every command sees, the commands, and the
 * helpers they share. wsectl.c parses the command line; one file per
 * command group (devices.c, stats.c, link.c, monitor.c); the JSON form of
 * what they print is json.c, the errors and their advice are advice.c.
 */
#ifndef WSECTL_H
#define WSECTL_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "wse/ctl.h"

/* Exit statuses (Documentation/wsectl.rst, "Exit status"). */
#define WSECTL_OK	0
#define WSECTL_FAILED	1
#define WSECTL_USAGE	2

/* The command line: global options and those of the command given. */
struct wsectl_opts {
	bool json;		/* -j, --json */
	uint64_t keepalive_ms;	/* attach --keepalive-ms; 0: the driver's default */
	long count;		/* monitor and stats --count; -1: no limit */
	long timeout_ms;	/* monitor --timeout-ms; -1: none */
	double watch_s;		/* stats -w; 0: print once */
};

/* Commands: their positional arguments in @argv (argv[0] is the first). */
int wsectl_list(const struct wsectl_opts *o, int argc, char **argv);
int wsectl_info(const struct wsectl_opts *o, int argc, char **argv);
int wsectl_stats(const struct wsectl_opts *o, int argc, char **argv);
int wsectl_attach(const struct wsectl_opts *o, int argc, char **argv);
int wsectl_detach(const struct wsectl_opts *o, int argc, char **argv);
int wsectl_reset(const struct wsectl_opts *o, int argc, char **argv);
int wsectl_monitor(const struct wsectl_opts *o, int argc, char **argv);

/* advice.c: prints what failed, why, and what to do; returns WSECTL_FAILED. */
int wsectl_fail(struct wse_ctl *ctl, const char *what, int err);
/* Opens the control interface, or says why not. 0 or WSECTL_FAILED. */
int wsectl_open(struct wse_ctl **ctl);
/* A device index as 'wsectl list' shows it. 0 or WSECTL_USAGE. */
int wsectl_parse_dev(const char *s, uint32_t *index);

/* json.c: the JSON form of the kernel's answers (device_id a string). */
struct json_object *wsectl_json_device(const struct wse_dev_status *d);
struct json_object *wsectl_json_event(const struct wse_event *ev);
/* Prints @obj on one line and drops the reference. */
void wsectl_json_print(struct json_object *obj);

/* devices.c: one device in full, as text (info, attach). */
void wsectl_show_device(const struct wse_dev_status *d);

/*
 * appliance.c: an appliance's parts, asked of device @index itself: 0,
 * -EINVAL when it is a single system, or why it could not be asked.
 */
struct wse_appliance;
int wsectl_appliance(uint32_t index, struct wse_appliance *a);
void wsectl_show_appliance(const struct wse_appliance *a);
struct json_object *wsectl_json_appliance(const struct wse_appliance *a);

#endif /* WSECTL_H */
