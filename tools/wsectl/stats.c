// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsectl stats: a device's link counters and the firmware's own, once, or
 * with -w SEC as rates every SEC seconds (one row per interval, as
 * vmstat(8) prints them; with --json one snapshot per line).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wse/numformat.h"
#include "wsectl.h"

static void show_counters(const struct wse_dev_status *d)
{
	const struct wse_link_counters *c = &d->stats;
	char a[WSE_NUMFORMAT_MAX], b[WSE_NUMFORMAT_MAX];

	printf("device %u: link %s, peer %s\n", d->index, wse_link_state_name(d->link_state),
	       d->peer);
	printf("  %-18s %" PRIu64 "\n", "frames sent", c->frames_tx);
	printf("  %-18s %" PRIu64 "\n", "frames received", c->frames_rx);
	printf("  %-18s %" PRIu64 " (%s)\n", "bytes sent", c->bytes_tx,
	       wse_format_bytes(c->bytes_tx, a, sizeof(a)));
	printf("  %-18s %" PRIu64 " (%s)\n", "bytes received", c->bytes_rx,
	       wse_format_bytes(c->bytes_rx, a, sizeof(a)));
	printf("  %-18s %" PRIu64 "\n", "CRC errors", c->crc_errors);
	printf("  %-18s %" PRIu64 "\n", "protocol errors", c->proto_errors);
	printf("  %-18s %" PRIu64 "\n", "timeouts", c->timeouts);
	printf("  %-18s %" PRIu64 "\n", "keepalives sent", c->keepalives);
	printf("  %-18s %" PRIu64 "\n", "stale responses", c->stale_responses);
	printf("  %-18s %" PRIu64 "\n", "in flight", c->inflight);
	printf("  %-18s %" PRIu64 "\n", "link downs", c->link_downs);
	if (!c->has_device)
		return;
	printf("device (from the firmware):\n");
	printf("  %-18s %" PRIu64 "\n", "programs loaded", c->dev_programs);
	printf("  %-18s %s\n", "SRAM used", wse_format_bytes(c->dev_sram_used, a, sizeof(a)));
	printf("  %-18s %" PRIu64 " (%" PRIu64 " samples)\n", "steps run", c->dev_steps,
	       c->dev_samples);
	printf("  %-18s %s in, %s out\n", "stream bytes",
	       wse_format_bytes(c->dev_stream_in, a, sizeof(a)),
	       wse_format_bytes(c->dev_stream_out, b, sizeof(b)));
	printf("  %-18s %" PRIu64 "\n", "modelled cycles", c->dev_cycles);
	printf("  %-18s %" PRIu64, "compiler estimate", c->dev_est_cycles);
	if (c->dev_est_cycles)
		printf(" (model / estimate = %.3f)",
		       (double)c->dev_cycles / (double)c->dev_est_cycles);
	printf("\n");
}

/* The driver gives counters only to CAP_NET_ADMIN: they move with every user's jobs. */
static int no_counters(const struct wse_dev_status *d)
{
	fprintf(stderr,
		"wsectl: device %u's counters are for administrators only (CAP_NET_ADMIN): run wsectl stats as root\n",
		d->index);
	return WSECTL_FAILED;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps until monotonic time @until, or a signal. */
static void sleep_until(double until)
{
	struct timespec ts = {
		.tv_sec = (time_t)until,
		.tv_nsec = (long)((until - (double)(time_t)until) * 1e9),
	};

	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

#define ROW_FORMAT	"%-8s %9s %9s %12s %12s %8s %10s %6s %8s\n"

/* @n per second over @dt, as a whole number or with one decimal below 10. */
static const char *per_s(char *buf, size_t len, uint64_t n, double dt)
{
	double r = (double)n / dt;

	snprintf(buf, len, r < 10 ? "%.1f" : "%.0f", r);
	return buf;
}

static const char *bytes_per_s(char *buf, size_t len, uint64_t n, double dt)
{
	char num[WSE_NUMFORMAT_MAX];

	snprintf(buf, len, "%s/s", wse_format_bytes((uint64_t)((double)n / dt), num, sizeof(num)));
	return buf;
}

static void show_rates(const struct wse_link_counters *p, const struct wse_link_counters *c,
		       double dt)
{
	char clock[16], ftx[24], frx[24], btx[32], brx[32], steps[24], samples[24];
	char errs[24], inflight[24];
	uint64_t errors = (c->crc_errors - p->crc_errors) + (c->proto_errors - p->proto_errors) +
			  (c->timeouts - p->timeouts) + (c->link_downs - p->link_downs);
	time_t t = time(NULL);
	struct tm tm;

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&t, &tm));
	snprintf(errs, sizeof(errs), "%" PRIu64, errors);
	snprintf(inflight, sizeof(inflight), "%" PRIu64, c->inflight);
	printf(ROW_FORMAT, clock,
	       per_s(ftx, sizeof(ftx), c->frames_tx - p->frames_tx, dt),
	       per_s(frx, sizeof(frx), c->frames_rx - p->frames_rx, dt),
	       bytes_per_s(btx, sizeof(btx), c->bytes_tx - p->bytes_tx, dt),
	       bytes_per_s(brx, sizeof(brx), c->bytes_rx - p->bytes_rx, dt),
	       per_s(steps, sizeof(steps), c->dev_steps - p->dev_steps, dt),
	       per_s(samples, sizeof(samples), c->dev_samples - p->dev_samples, dt),
	       errs, inflight);
}

/* -w: until a signal or o->count lines. */
static int watch(const struct wsectl_opts *o, struct wse_ctl *ctl, uint32_t index)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct wse_dev_status prev, cur;
	double t_prev, t_cur, next;
	long lines = 0;
	int ret;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = wse_ctl_get(ctl, index, true, &prev);
	if (ret)
		return wsectl_fail(ctl, "reading statistics", ret);
	if (!prev.has_stats)
		return no_counters(&prev);
	t_prev = now(CLOCK_MONOTONIC);
	next = t_prev;
	if (o->json) {
		struct json_object *obj = wsectl_json_device(&prev);

		json_object_object_add(obj, "time", json_object_new_double(now(CLOCK_REALTIME)));
		wsectl_json_print(obj);
		lines++;
	} else {
		printf("device %u: link %s, peer %s; rates every %g s\n", prev.index,
		       wse_link_state_name(prev.link_state), prev.peer, o->watch_s);
		printf(ROW_FORMAT, "TIME", "FRM-TX/s", "FRM-RX/s", "BYTES-TX/s", "BYTES-RX/s",
		       "STEPS/s", "SAMPLES/s", "ERRORS", "INFLIGHT");
	}
	fflush(stdout);
	while (!stop && (o->count < 0 || lines < o->count)) {
		next += o->watch_s;
		sleep_until(next);
		if (stop)
			break;
		ret = wse_ctl_get(ctl, index, true, &cur);
		if (ret)
			return wsectl_fail(ctl, "reading statistics", ret);
		t_cur = now(CLOCK_MONOTONIC);
		if (o->json) {
			struct json_object *obj = wsectl_json_device(&cur);

			json_object_object_add(obj, "time",
					       json_object_new_double(now(CLOCK_REALTIME)));
			wsectl_json_print(obj);
		} else {
			show_rates(&prev.stats, &cur.stats, t_cur - t_prev);
		}
		fflush(stdout);
		lines++;
		prev = cur;
		t_prev = t_cur;
	}
	return WSECTL_OK;
}

int wsectl_stats(const struct wsectl_opts *o, int argc, char **argv)
{
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	uint32_t index;
	int ret;

	(void)argc;
	if (wsectl_parse_dev(argv[0], &index))
		return WSECTL_USAGE;
	if (wsectl_open(&ctl))
		return WSECTL_FAILED;
	if (o->watch_s) {
		ret = watch(o, ctl, index);
		wse_ctl_close(ctl);
		return ret;
	}
	ret = wse_ctl_get(ctl, index, true, &d);
	if (ret)
		ret = wsectl_fail(ctl, "reading statistics", ret);
	wse_ctl_close(ctl);
	if (ret)
		return ret;
	if (!d.has_stats)
		return no_counters(&d);
	if (o->json)
		wsectl_json_print(wsectl_json_device(&d));
	else
		show_counters(&d);
	return WSECTL_OK;
}
