// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsectl list and info: what the kernel knows of each device, and for an
 * appliance what its coordinator says of its parts (appliance.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "wse/numformat.h"
#include "wse/wse.h"
#include "wse_genl.h"
#include "wsectl.h"

void wsectl_show_device(const struct wse_dev_status *d)
{
	char per[WSE_NUMFORMAT_MAX], total[WSE_NUMFORMAT_MAX], clock[WSE_NUMFORMAT_MAX];

	printf("device %u\n", d->index);
	if (d->accel_minor >= 0)
		printf("  accel node    /dev/accel/accel%d\n", d->accel_minor);
	printf("  link          %s%s%s%s\n", wse_link_state_name(d->link_state),
	       d->reason[0] ? " (" : "", d->reason, d->reason[0] ? ")" : "");
	/* Only an administrator is told where a device's firmware is. */
	printf("  peer          %s\n", d->peer[0] ? d->peer : "- (shown to CAP_NET_ADMIN)");
	printf("  firmware      %s\n", d->fw_version);
	printf("  device id     %" PRIu64 "\n", d->device_id);
	printf("  wafer         %u x %u PEs (%" PRIu64 " PEs)\n", d->wafer_width,
	       d->wafer_height, (uint64_t)d->wafer_width * d->wafer_height);
	printf("  SRAM          %s per PE, %s in total\n",
	       wse_format_bytes(d->sram_per_pe, per, sizeof(per)),
	       wse_format_bytes(d->sram_total, total, sizeof(total)));
	printf("  clock         %s\n",
	       wse_format_hz((uint64_t)d->clock_khz * 1000, clock, sizeof(clock)));
	printf("  queues        %u\n", d->num_queues);
	if (d->proto_version)
		printf("  protocol      version %u, keepalive %u ms\n", d->proto_version,
		       d->keepalive_ms);
}

static void show_table(const struct wse_dev_status *devs, size_t n)
{
	printf("%-4s %-18s %-5s %-28s %-12s %-10s %s\n", "DEV", "ACCEL", "LINK",
	       "PEER", "WAFER", "SRAM", "FIRMWARE");
	for (size_t i = 0; i < n; i++) {
		char node[32] = "-", wafer[32], sram[WSE_NUMFORMAT_MAX];

		if (devs[i].accel_minor >= 0)
			snprintf(node, sizeof(node), "/dev/accel/accel%d", devs[i].accel_minor);
		snprintf(wafer, sizeof(wafer), "%ux%u", devs[i].wafer_width,
			 devs[i].wafer_height);
		printf("%-4u %-18s %-5s %-28s %-12s %-10s %s\n", devs[i].index, node,
		       wse_link_state_name(devs[i].link_state), devs[i].peer[0] ? devs[i].peer : "-",
		       wafer,
		       wse_format_bytes(devs[i].sram_total, sram, sizeof(sram)),
		       devs[i].fw_version);
	}
}

int wsectl_list(const struct wsectl_opts *o, int argc, char **argv)
{
	struct wse_dev_status *devs;
	struct wse_ctl *ctl;
	size_t n;
	int ret;

	(void)argc;
	(void)argv;
	if (wsectl_open(&ctl))
		return WSECTL_FAILED;
	ret = wse_ctl_list(ctl, &devs, &n);
	if (ret) {
		ret = wsectl_fail(ctl, "listing devices", ret);
		wse_ctl_close(ctl);
		return ret;
	}
	wse_ctl_close(ctl);
	if (o->json) {
		struct json_object *arr = json_object_new_array();

		for (size_t i = 0; i < n; i++)
			json_object_array_add(arr, wsectl_json_device(&devs[i]));
		wsectl_json_print(arr);
	} else if (!n) {
		printf("no devices: attach one with 'wsectl attach tcp:HOST:PORT'\n");
	} else {
		show_table(devs, n);
	}
	free(devs);
	return WSECTL_OK;
}

int wsectl_info(const struct wsectl_opts *o, int argc, char **argv)
{
	struct wse_appliance a;
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	uint32_t index;
	bool appliance;
	int ret;

	(void)argc;
	if (wsectl_parse_dev(argv[0], &index))
		return WSECTL_USAGE;
	if (wsectl_open(&ctl))
		return WSECTL_FAILED;
	ret = wse_ctl_get(ctl, index, false, &d);
	if (ret)
		ret = wsectl_fail(ctl, "reading device", ret);
	wse_ctl_close(ctl);
	if (ret)
		return ret;
	/* An appliance says what it holds; a dead link says nothing more. */
	appliance = d.link_state == WSE_LINK_STATE_UP && d.accel_minor >= 0 &&
		    !wsectl_appliance(index, &a);
	if (o->json) {
		struct json_object *obj = wsectl_json_device(&d);

		if (appliance)
			json_object_object_add(obj, "appliance", wsectl_json_appliance(&a));
		wsectl_json_print(obj);
	} else {
		wsectl_show_device(&d);
		if (appliance)
			wsectl_show_appliance(&a);
	}
	return WSECTL_OK;
}
