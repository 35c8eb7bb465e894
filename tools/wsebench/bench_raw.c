// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench raw socket: the firmware spoken to directly with libwselink's
 * client, offering what the kernel offers in HELLO, so both negotiate the
 * same frame size. The firmware serves one host at a time and may still be
 * closing the kernel's connection: a refusal is retried for a few seconds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wsebench.h"

#define RAW_TRIES	50
#define RAW_IO_MS	10000

int raw_open(const char *addr, struct wse_link_client *cl, char *err, size_t errlen)
{
	const struct wse_link_hello_info hello = {
		.version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.caps = WSE_LINK_CAP_MEM | WSE_LINK_CAP_EXEC,
		.max_payload = WSE_LINK_PAYLOAD_LIMIT,
	};
	struct wse_link_addr a;
	struct wse_link_err lerr;
	char text[200] = "";
	uint32_t status = 0;
	int fd, ret = -EIO, i;

	if (wse_link_addr_parse(addr, &a, err, errlen))
		return -EINVAL;
	for (i = 0; i < RAW_TRIES; i++) {
		if (i)
			usleep(100000);
		fd = wse_link_connect(&a, RAW_IO_MS, err, errlen);
		if (fd < 0) {
			ret = -ECONNREFUSED;
			continue;
		}
		wse_link_tune_socket(fd);
		memset(cl, 0, sizeof(*cl));
		ret = wse_link_client_hello(cl, fd, &hello, RAW_IO_MS, &status, text,
					    sizeof(text), &lerr);
		if (!ret && status == WSE_LINK_OK)
			return 0;
		if (ret)
			snprintf(err, errlen, "HELLO to %s: %s", addr,
				 ret < 0 ? strerror(-ret) : lerr.text);
		else
			snprintf(err, errlen, "HELLO to %s refused: %s (%s)", addr,
				 wse_link_status_name(status), text);
		ret = ret < 0 ? ret : -EPROTO;
		wse_link_client_free(cl);
		close(fd);
	}
	return ret;
}

void raw_close(struct wse_link_client *cl)
{
	int fd = cl->fd;

	wse_link_client_free(cl);
	close(fd);
}
