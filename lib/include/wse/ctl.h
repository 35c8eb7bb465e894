/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libwse control plane: the "wse" generic netlink family, from userspace.
 *
 * Every function returns 0 or a negative errno; wse_ctl_error() gives the
 * kernel's own explanation of the last failure when it sent one.
 */
#ifndef WSE_CTL_H
#define WSE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wse_ctl;

/** Link counters (WSE_CMD_STATS). */
struct wse_link_counters {
	uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx;
	uint64_t crc_errors, proto_errors, timeouts, keepalives;
	uint64_t stale_responses, inflight, link_downs;
	/* The firmware's own counters, when it answered (has_device). */
	bool has_device;
	uint64_t dev_cycles, dev_est_cycles, dev_steps, dev_samples;
	uint64_t dev_sram_used, dev_stream_in, dev_stream_out, dev_programs;
};

/** What the kernel says about one device. */
struct wse_dev_status {
	uint32_t index;
	int32_t accel_minor;		/* -1 if none */
	uint32_t link_state;		/* enum wse_link_state */
	char peer[80];
	char fw_version[32];
	char reason[80];		/* why the link died, if it did */
	uint64_t device_id;
	uint32_t wafer_width, wafer_height;
	uint64_t sram_per_pe, sram_total;
	uint32_t clock_khz, num_queues, proto_version, keepalive_ms;
	bool has_stats;
	struct wse_link_counters stats;
};

/** One notification from the "events" group. */
struct wse_event {
	uint32_t index;
	uint32_t event;			/* enum wse_genl_event */
	uint32_t err;			/* positive errno, or 0 */
	char reason[80];
	char peer[80];
};

int wse_ctl_open(struct wse_ctl **out);
void wse_ctl_close(struct wse_ctl *ctl);
const char *wse_ctl_error(const struct wse_ctl *ctl);

int wse_ctl_connect(const char *addr, int *fd, char *err, size_t errlen);
int wse_ctl_attach_fd(struct wse_ctl *ctl, int fd, uint32_t keepalive_ms,
		      struct wse_dev_status *out);
int wse_ctl_detach(struct wse_ctl *ctl, uint32_t index);
int wse_ctl_reset(struct wse_ctl *ctl, uint32_t index);
int wse_ctl_get(struct wse_ctl *ctl, uint32_t index, bool stats, struct wse_dev_status *out);
int wse_ctl_list(struct wse_ctl *ctl, struct wse_dev_status **out, size_t *n);

int wse_ctl_subscribe(struct wse_ctl *ctl);
int wse_ctl_next_event(struct wse_ctl *ctl, int timeout_ms, struct wse_event *ev);

const char *wse_link_state_name(uint32_t state);
const char *wse_event_name(uint32_t event);

#endif /* WSE_CTL_H */
