// SPDX-License-Identifier: GPL-2.0-only
/* wsectl attach, detach and reset: a device's link to its firmware. */
#include <stdio.h>
#include <unistd.h>

#include "wse/numformat.h"
#include "wsectl.h"

int wsectl_attach(const struct wsectl_opts *o, int argc, char **argv)
{
	char err[256], sram[WSE_NUMFORMAT_MAX], clock[WSE_NUMFORMAT_MAX];
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	int fd, ret;

	(void)argc;
	if (wsectl_open(&ctl))
		return WSECTL_FAILED;
	ret = wse_ctl_connect(argv[0], &fd, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "wsectl: cannot reach firmware at %s: %s\n", argv[0], err);
		fprintf(stderr, "wsectl: is a firmware simulator (wsefwd --listen ...) running there?\n");
		wse_ctl_close(ctl);
		return WSECTL_FAILED;
	}
	ret = wse_ctl_attach_fd(ctl, fd, (uint32_t)o->keepalive_ms, &d);
	/* The kernel holds its own reference to the socket. */
	close(fd);
	if (ret)
		ret = wsectl_fail(ctl, "attach", ret);
	wse_ctl_close(ctl);
	if (ret)
		return ret;
	if (o->json)
		wsectl_json_print(wsectl_json_device(&d));
	else
		printf("attached device %u (/dev/accel/accel%d) to %s: %ux%u PEs, %s SRAM per PE, %s, firmware %s\n",
		       d.index, d.accel_minor, d.peer, d.wafer_width, d.wafer_height,
		       wse_format_bytes(d.sram_per_pe, sram, sizeof(sram)),
		       wse_format_hz((uint64_t)d.clock_khz * 1000, clock, sizeof(clock)),
		       d.fw_version);
	return WSECTL_OK;
}

/* detach and reset: one device, no answer but success. */
static int device_op(const struct wsectl_opts *o, const char *dev, bool detach)
{
	struct wse_ctl *ctl;
	uint32_t index;
	int ret;

	if (wsectl_parse_dev(dev, &index))
		return WSECTL_USAGE;
	if (wsectl_open(&ctl))
		return WSECTL_FAILED;
	ret = detach ? wse_ctl_detach(ctl, index) : wse_ctl_reset(ctl, index);
	if (ret) {
		ret = wsectl_fail(ctl, detach ? "detach" : "reset", ret);
	} else if (o->json) {
		struct json_object *obj = json_object_new_object();

		json_object_object_add(obj, "index", json_object_new_uint64(index));
		json_object_object_add(obj, detach ? "detached" : "reset",
				       json_object_new_boolean(1));
		wsectl_json_print(obj);
	} else {
		printf("%s device %u\n", detach ? "detached" : "reset", index);
	}
	wse_ctl_close(ctl);
	return ret;
}

int wsectl_detach(const struct wsectl_opts *o, int argc, char **argv)
{
	(void)argc;
	return device_op(o, argv[0], true);
}

int wsectl_reset(const struct wsectl_opts *o, int argc, char **argv)
{
	(void)argc;
	return device_op(o, argv[0], false);
}
