// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsectl's errors: what failed, the kernel's own explanation when it gave
 * one, and what to do about it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wse/numparse.h"
#include "wsectl.h"

int wsectl_fail(struct wse_ctl *ctl, const char *what, int err)
{
	const char *kmsg = ctl ? wse_ctl_error(ctl) : NULL;

	fprintf(stderr, "wsectl: %s: %s", what, strerror(-err));
	if (kmsg)
		fprintf(stderr, ": %s", kmsg);
	fputc('\n', stderr);
	switch (-err) {
	case ENOENT:
		if (!ctl)
			fprintf(stderr, "wsectl: the wse module is not loaded: load it with 'modprobe wse' (or 'insmod wse.ko')\n");
		break;
	case EPERM:
	case EACCES:
		fprintf(stderr, "wsectl: this needs CAP_NET_ADMIN: run it as root (sudo wsectl ...)\n");
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
	return WSECTL_FAILED;
}

int wsectl_open(struct wse_ctl **ctl)
{
	int ret = wse_ctl_open(ctl);

	if (ret)
		return wsectl_fail(NULL, "opening the wse control interface", ret);
	return WSECTL_OK;
}

int wsectl_parse_dev(const char *s, uint32_t *index)
{
	uint64_t v;
	char err[160];

	if (wse_parse_u64(s, 0, INT32_MAX, WSE_NUM_PLAIN, &v, err, sizeof(err))) {
		fprintf(stderr, "wsectl: device %s; 'wsectl list' shows the indexes\n", err);
		return WSECTL_USAGE;
	}
	*index = (uint32_t)v;
	return WSECTL_OK;
}
