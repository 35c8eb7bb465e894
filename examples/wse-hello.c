// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * wse-hello: the smallest complete libwse program. Opens a device ("any"
 * by default), prints what it is, writes a buffer to device memory through
 * io_uring, reads it back and checks it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/wse.h"

#define HELLO_BYTES	(1u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wse-hello [DEVICE]\n"
		"\n"
		"Open a wse device (an index, /dev/accel/accelN, or \"any\": the\n"
		"default), print its information, write 1 MiB to device memory\n"
		"through io_uring, read it back and compare. Exits 0 when the data\n"
		"came back intact.\n");
}

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "any";
	struct wse_ring *ring;
	struct wse_info info;
	struct wse_dev *dev;
	uint8_t *out, *in;
	uint32_t i;
	int ret;

	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
		usage(argc > 2 ? stderr : stdout);
		return argc > 2 ? 2 : 0;
	}
	ret = wse_open(spec, &dev);
	if (ret) {
		char hint[512];

		fprintf(stderr, "wse-hello: cannot open device '%s': %s\n", spec, wse_strerror(ret));
		/* Permission: which group to join, or which rule is missing. */
		if ((ret == -EACCES || ret == -EPERM) && !wse_access_hint(spec, hint, sizeof(hint)))
			fprintf(stderr, "  (%s)\n", hint);
		else
			fprintf(stderr, "  (is a device attached? see 'wsectl list')\n");
		return 1;
	}
	ret = wse_info(dev, &info);
	if (ret) {
		fprintf(stderr, "wse-hello: device info: %s\n", wse_strerror(ret));
		goto fail_dev;
	}
	printf("device %d: %ux%u PEs, %" PRIu64 " bytes SRAM, %u queues, firmware %s\n",
	       wse_dev_index(dev), info.dev.wafer_width, info.dev.wafer_height,
	       (uint64_t)info.dev.sram_total, info.dev.num_queues, info.dev.fw_version);
	printf("max job %" PRIu64 " bytes, max buffer object %" PRIu64 " bytes\n",
	       info.max_job_bytes, info.max_bo_size);

	ret = wse_ring_open(dev, NULL, &ring);
	if (ret) {
		fprintf(stderr, "wse-hello: io_uring: %s\n", wse_strerror(ret));
		goto fail_dev;
	}
	out = malloc(HELLO_BYTES);
	in = calloc(1, HELLO_BYTES);
	if (!out || !in) {
		fprintf(stderr, "wse-hello: out of memory\n");
		ret = 1;
		goto fail_ring;
	}
	for (i = 0; i < HELLO_BYTES; i++)
		out[i] = (uint8_t)(i * 7 + (i >> 8));
	ret = wse_mem_write(ring, 0, out, HELLO_BYTES);
	if (!ret)
		ret = wse_mem_read(ring, 0, in, HELLO_BYTES);
	if (ret) {
		fprintf(stderr, "wse-hello: transfer: %s\n", wse_strerror(ret));
		/* Raw device memory is shared by every opener: root's alone. */
		if (ret == -EPERM)
			fprintf(stderr, "  (device memory is for CAP_SYS_ADMIN only; training "
				"needs none of it: see Documentation/uapi.rst, Ownership)\n");
	} else if (memcmp(out, in, HELLO_BYTES)) {
		fprintf(stderr, "wse-hello: the data read back differs from what was written\n");
		ret = 1;
	} else {
		printf("wrote and read back %u bytes through io_uring: identical\n", HELLO_BYTES);
	}
fail_ring:
	free(out);
	free(in);
	wse_ring_close(ring);
fail_dev:
	wse_close(dev);
	return ret ? 1 : 0;
}
