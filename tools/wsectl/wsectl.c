// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsectl: devices, links and health of the virtual WSE, over the "wse"
 * generic netlink family. See Documentation/wsectl.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wse/ctl.h"
#include "wse/numparse.h"

static bool json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wsectl [--json] COMMAND [ARGS]\n"
		"\n"
		"Devices, links and health of the virtual Wafer-Scale Engine.\n"
		"\n"
		"commands:\n"
		"  list                 every device: index, accel node, link, peer, wafer\n"
		"  info DEV             one device in full\n"
		"  attach ADDR [--keepalive-ms MS]\n"
		"                       connect to a firmware at ADDR (tcp:HOST:PORT or\n"
		"                       unix:PATH) and create a device on that link\n"
		"  detach DEV           shut the device's link down and remove it\n"
		"  stats DEV            link counters\n"
		"  reset DEV            abort what is in flight and zero the counters\n"
		"  monitor [--count N] [--timeout-ms MS]\n"
		"                       print events (link up/down, firmware error,\n"
		"                       timeout, reset) as they arrive\n"
		"\n"
		"options:\n"
		"  --json               machine-readable output\n"
		"  -h, --help           this text\n"
		"\n"
		"DEV is the device index that 'wsectl list' shows. attach, detach and\n"
		"reset need CAP_NET_ADMIN.\n");
}

/* Turns an errno into advice; @what names the operation. */
static int fail(struct wse_ctl *ctl, const char *what, int err)
{
	const char *kmsg = ctl ? wse_ctl_error(ctl) : NULL;

	fprintf(stderr, "wsectl: %s: %s", what, strerror(-err));
	if (kmsg)
		fprintf(stderr, ": %s", kmsg);
	fputc('\n', stderr);
	switch (-err) {
	case ENOENT:
		if (!ctl)
			fprintf(stderr, "wsectl: the wse module is not loaded: load it with 'insmod wse.ko' (or modprobe wse)\n");
		break;
	case EPERM:
		fprintf(stderr, "wsectl: this needs CAP_NET_ADMIN: run it as root\n");
		break;
	case ENODEV:
		fprintf(stderr, "wsectl: no such device: 'wsectl list' shows the devices\n");
		break;
	case EPROTONOSUPPORT:
		fprintf(stderr, "wsectl: the firmware and the driver share no protocol version: update one of them\n");
		break;
	case ETIMEDOUT:
		fprintf(stderr, "wsectl: the firmware did not answer: is it running and healthy?\n");
		break;
	case EBUSY:
		fprintf(stderr, "wsectl: the firmware already serves another host: detach that one first\n");
		break;
	default:
		break;
	}
	return 1;
}

static int open_ctl(struct wse_ctl **ctl)
{
	int ret = wse_ctl_open(ctl);

	if (ret)
		return fail(NULL, "opening the wse control interface", ret);
	return 0;
}

static int parse_dev(const char *s, uint32_t *index)
{
	uint64_t v;
	char err[160];

	if (wse_parse_u64(s, 0, INT32_MAX, WSE_NUM_PLAIN, &v, err, sizeof(err))) {
		fprintf(stderr, "wsectl: device %s; 'wsectl list' shows the indexes\n", err);
		return -1;
	}
	*index = (uint32_t)v;
	return 0;
}

static void human_bytes(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;
	double d = (double)v;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", d, unit[u]);
}

/* Prints a JSON string with the escapes JSON needs. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_device_json(const struct wse_dev_status *d)
{
	printf("{\"index\":%u,\"accel\":", d->index);
	if (d->accel_minor >= 0)
		printf("\"/dev/accel/accel%d\"", d->accel_minor);
	else
		printf("null");
	printf(",\"link\":\"%s\",\"peer\":", wse_link_state_name(d->link_state));
	json_str(d->peer);
	printf(",\"reason\":");
	json_str(d->reason);
	printf(",\"fw_version\":");
	json_str(d->fw_version);
	printf(",\"device_id\":%" PRIu64 ",\"wafer_width\":%u,\"wafer_height\":%u"
	       ",\"sram_per_pe\":%" PRIu64 ",\"sram_total\":%" PRIu64
	       ",\"clock_khz\":%u,\"queues\":%u,\"protocol\":%u,\"keepalive_ms\":%u",
	       d->device_id, d->wafer_width, d->wafer_height, d->sram_per_pe,
	       d->sram_total, d->clock_khz, d->num_queues, d->proto_version, d->keepalive_ms);
	if (d->has_stats) {
		const struct wse_link_counters *c = &d->stats;

		printf(",\"stats\":{\"frames_tx\":%" PRIu64 ",\"frames_rx\":%" PRIu64
		       ",\"bytes_tx\":%" PRIu64 ",\"bytes_rx\":%" PRIu64
		       ",\"crc_errors\":%" PRIu64 ",\"proto_errors\":%" PRIu64
		       ",\"timeouts\":%" PRIu64 ",\"keepalives\":%" PRIu64
		       ",\"stale_responses\":%" PRIu64 ",\"inflight\":%" PRIu64
		       ",\"link_downs\":%" PRIu64 "}",
		       c->frames_tx, c->frames_rx, c->bytes_tx, c->bytes_rx, c->crc_errors,
		       c->proto_errors, c->timeouts, c->keepalives, c->stale_responses,
		       c->inflight, c->link_downs);
		if (c->has_device)
			printf(",\"device\":{\"cycles\":%" PRIu64 ",\"estimated_cycles\":%" PRIu64
			       ",\"steps\":%" PRIu64 ",\"samples\":%" PRIu64
			       ",\"sram_used\":%" PRIu64 ",\"stream_bytes_in\":%" PRIu64
			       ",\"stream_bytes_out\":%" PRIu64 ",\"programs\":%" PRIu64 "}",
			       c->dev_cycles, c->dev_est_cycles, c->dev_steps, c->dev_samples,
			       c->dev_sram_used, c->dev_stream_in, c->dev_stream_out,
			       c->dev_programs);
	}
	putchar('}');
}

static void print_info(const struct wse_dev_status *d)
{
	char per[32], total[32];

	if (json) {
		print_device_json(d);
		putchar('\n');
		return;
	}
	human_bytes(per, sizeof(per), d->sram_per_pe);
	human_bytes(total, sizeof(total), d->sram_total);
	printf("device %u\n", d->index);
	if (d->accel_minor >= 0)
		printf("  accel node    /dev/accel/accel%d\n", d->accel_minor);
	printf("  link          %s%s%s%s\n", wse_link_state_name(d->link_state),
	       d->reason[0] ? " (" : "", d->reason, d->reason[0] ? ")" : "");
	printf("  peer          %s\n", d->peer);
	printf("  firmware      %s\n", d->fw_version);
	printf("  device id     %" PRIu64 "\n", d->device_id);
	printf("  wafer         %u x %u PEs (%" PRIu64 " PEs)\n", d->wafer_width,
	       d->wafer_height, (uint64_t)d->wafer_width * d->wafer_height);
	printf("  SRAM          %s per PE, %s in total\n", per, total);
	printf("  clock         %.1f MHz\n", d->clock_khz / 1000.0);
	printf("  queues        %u\n", d->num_queues);
	if (d->proto_version)
		printf("  protocol      version %u, keepalive %u ms\n", d->proto_version,
		       d->keepalive_ms);
}

static int cmd_list(void)
{
	struct wse_dev_status *devs;
	struct wse_ctl *ctl;
	size_t n, i;
	int ret;

	if (open_ctl(&ctl))
		return 1;
	ret = wse_ctl_list(ctl, &devs, &n);
	if (ret) {
		ret = fail(ctl, "listing devices", ret);
		wse_ctl_close(ctl);
		return ret;
	}
	if (json) {
		putchar('[');
		for (i = 0; i < n; i++) {
			if (i)
				putchar(',');
			print_device_json(&devs[i]);
		}
		printf("]\n");
	} else if (!n) {
		printf("no devices: attach one with 'wsectl attach tcp:HOST:PORT'\n");
	} else {
		printf("%-4s %-18s %-5s %-28s %-12s %-10s %s\n", "DEV", "ACCEL", "LINK",
		       "PEER", "WAFER", "SRAM", "FIRMWARE");
		for (i = 0; i < n; i++) {
			char node[32] = "-", wafer[32], sram[32];

			if (devs[i].accel_minor >= 0)
				snprintf(node, sizeof(node), "/dev/accel/accel%d",
					 devs[i].accel_minor);
			snprintf(wafer, sizeof(wafer), "%ux%u", devs[i].wafer_width,
				 devs[i].wafer_height);
			human_bytes(sram, sizeof(sram), devs[i].sram_total);
			printf("%-4u %-18s %-5s %-28s %-12s %-10s %s\n", devs[i].index, node,
			       wse_link_state_name(devs[i].link_state), devs[i].peer, wafer,
			       sram, devs[i].fw_version);
		}
	}
	free(devs);
	wse_ctl_close(ctl);
	return 0;
}

static int cmd_get(const char *dev, bool stats)
{
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	uint32_t index;
	int ret;

	if (parse_dev(dev, &index))
		return 2;
	if (open_ctl(&ctl))
		return 1;
	ret = wse_ctl_get(ctl, index, stats, &d);
	if (ret) {
		ret = fail(ctl, stats ? "reading statistics" : "reading device", ret);
		wse_ctl_close(ctl);
		return ret;
	}
	wse_ctl_close(ctl);
	if (!stats || json) {
		print_info(&d);
		return 0;
	}
	printf("device %u: link %s, peer %s\n", d.index, wse_link_state_name(d.link_state),
	       d.peer);
	printf("  %-18s %" PRIu64 "\n", "frames sent", d.stats.frames_tx);
	printf("  %-18s %" PRIu64 "\n", "frames received", d.stats.frames_rx);
	printf("  %-18s %" PRIu64 "\n", "bytes sent", d.stats.bytes_tx);
	printf("  %-18s %" PRIu64 "\n", "bytes received", d.stats.bytes_rx);
	printf("  %-18s %" PRIu64 "\n", "CRC errors", d.stats.crc_errors);
	printf("  %-18s %" PRIu64 "\n", "protocol errors", d.stats.proto_errors);
	printf("  %-18s %" PRIu64 "\n", "timeouts", d.stats.timeouts);
	printf("  %-18s %" PRIu64 "\n", "keepalives sent", d.stats.keepalives);
	printf("  %-18s %" PRIu64 "\n", "stale responses", d.stats.stale_responses);
	printf("  %-18s %" PRIu64 "\n", "in flight", d.stats.inflight);
	printf("  %-18s %" PRIu64 "\n", "link downs", d.stats.link_downs);
	if (d.stats.has_device) {
		const struct wse_link_counters *c = &d.stats;

		printf("device (from the firmware):\n");
		printf("  %-18s %" PRIu64 "\n", "programs loaded", c->dev_programs);
		printf("  %-18s %" PRIu64 " bytes\n", "SRAM used", c->dev_sram_used);
		printf("  %-18s %" PRIu64 " (%" PRIu64 " samples)\n", "steps run", c->dev_steps,
		       c->dev_samples);
		printf("  %-18s %" PRIu64 " in, %" PRIu64 " out\n", "stream bytes",
		       c->dev_stream_in, c->dev_stream_out);
		printf("  %-18s %" PRIu64 "\n", "modelled cycles", c->dev_cycles);
		printf("  %-18s %" PRIu64, "compiler estimate", c->dev_est_cycles);
		if (c->dev_est_cycles)
			printf(" (model / estimate = %.3f)",
			       (double)c->dev_cycles / (double)c->dev_est_cycles);
		printf("\n");
	}
	return 0;
}

static int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keepalive-ms", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	uint64_t keepalive = 0;
	char err[256];
	int fd, ret, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'k' ||
		    wse_opt_u64("wsectl", "--keepalive-ms", optarg, 100, 60000, WSE_NUM_PLAIN,
				&keepalive))
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "wsectl: attach needs one address, e.g. tcp:10.0.2.2:7000 or unix:/run/wsefwd.sock\n");
		return 2;
	}
	if (open_ctl(&ctl))
		return 1;
	ret = wse_ctl_connect(argv[optind], &fd, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "wsectl: cannot reach firmware at %s: %s\n", argv[optind], err);
		fprintf(stderr, "wsectl: is a firmware simulator (wsefwd --listen ...) running there?\n");
		wse_ctl_close(ctl);
		return 1;
	}
	ret = wse_ctl_attach_fd(ctl, fd, (uint32_t)keepalive, &d);
	/* The kernel holds its own reference to the socket. */
	close(fd);
	if (ret) {
		ret = fail(ctl, "attach", ret);
		wse_ctl_close(ctl);
		return ret;
	}
	wse_ctl_close(ctl);
	if (json) {
		print_info(&d);
	} else {
		printf("attached device %u (/dev/accel/accel%d) to %s: %ux%u PEs, firmware %s\n",
		       d.index, d.accel_minor, d.peer, d.wafer_width, d.wafer_height,
		       d.fw_version);
	}
	return 0;
}

static int cmd_simple(const char *dev, bool detach)
{
	struct wse_ctl *ctl;
	uint32_t index;
	int ret;

	if (parse_dev(dev, &index))
		return 2;
	if (open_ctl(&ctl))
		return 1;
	ret = detach ? wse_ctl_detach(ctl, index) : wse_ctl_reset(ctl, index);
	if (ret)
		ret = fail(ctl, detach ? "detach" : "reset", ret);
	else if (!json)
		printf("%s device %u\n", detach ? "detached" : "reset", index);
	wse_ctl_close(ctl);
	return ret;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	long count = -1, timeout = -1, seen = 0;
	struct wse_event ev;
	struct wse_ctl *ctl;
	uint64_t v;
	int ret, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'c' && !wse_opt_u64("wsectl", "--count", optarg, 1, INT32_MAX,
					     WSE_NUM_PLAIN, &v))
			count = (long)v;
		else if (c == 't' && !wse_opt_u64("wsectl", "--timeout-ms", optarg, 0, INT32_MAX,
						  WSE_NUM_PLAIN, &v))
			timeout = (long)v;
		else
			return 2;
	}
	if (open_ctl(&ctl))
		return 1;
	ret = wse_ctl_subscribe(ctl);
	if (ret) {
		ret = fail(ctl, "subscribing to events", ret);
		wse_ctl_close(ctl);
		return ret;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Tell a script waiting on our output that events will be seen. */
	if (!json)
		printf("monitoring wse events\n");
	fflush(stdout);
	while (!stop && (count < 0 || seen < count)) {
		ret = wse_ctl_next_event(ctl, (int)timeout, &ev);
		if (ret == -EINTR)
			continue;
		if (ret == -ETIMEDOUT)
			break;
		if (ret) {
			ret = fail(ctl, "reading events", ret);
			wse_ctl_close(ctl);
			return ret;
		}
		seen++;
		if (json) {
			printf("{\"device\":%u,\"event\":\"%s\",\"errno\":%u,\"reason\":", ev.index,
			       wse_event_name(ev.event), ev.err);
			json_str(ev.reason);
			printf(",\"peer\":");
			json_str(ev.peer);
			printf("}\n");
		} else {
			printf("device %u: %s: %s%s%s (peer %s)\n", ev.index,
			       wse_event_name(ev.event), ev.reason, ev.err ? ": " : "",
			       ev.err ? strerror((int)ev.err) : "", ev.peer);
		}
		fflush(stdout);
	}
	wse_ctl_close(ctl);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "wsectl: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[i];
	argc -= i;
	argv += i;

	if (!strcmp(cmd, "list") && argc == 1)
		return cmd_list();
	if (!strcmp(cmd, "info") && argc == 2)
		return cmd_get(argv[1], false);
	if (!strcmp(cmd, "stats") && argc == 2)
		return cmd_get(argv[1], true);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc, argv);
	if (!strcmp(cmd, "detach") && argc == 2)
		return cmd_simple(argv[1], true);
	if (!strcmp(cmd, "reset") && argc == 2)
		return cmd_simple(argv[1], false);
	if (!strcmp(cmd, "monitor"))
		return cmd_monitor(argc, argv);

	fprintf(stderr, "wsectl: unknown command or wrong arguments: '%s'\n", cmd);
	usage(stderr);
	return 2;
}
