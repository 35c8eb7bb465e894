// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsefwd: the wse firmware simulator daemon. One process is one CS system:
 * it listens for the host's link, speaks the device side of the link
 * protocol and owns the wafer's device memory.
 */
#include <stdio.h>
#include <unistd.h>

#include "fwd_config.h"
#include "fwd_device.h"
#include "fwd_log.h"
#include "fwd_server.h"

int main(int argc, char **argv)
{
	struct fwd_config cfg;
	struct fwd_device dev = { .cfg = &cfg, .caps = WSE_LINK_CAP_MEM };
	int ret, fd;

	ret = fwd_options_parse(argc, argv, &cfg);
	if (ret)
		return ret > 0 ? 0 : 2;
	fwd_log_set_level(cfg.log_level);
	if (fwd_memory_init(&dev.mem, cfg.sram_total)) {
		fwd_err("cannot allocate the device memory table for %llu bytes",
			(unsigned long long)cfg.sram_total);
		return 1;
	}
	fd = fwd_server_listen(&cfg);
	if (fd < 0) {
		fwd_memory_free(&dev.mem);
		return 1;
	}
	fwd_info("device 0x%llx: wafer %ux%u PEs, %llu bytes SRAM per PE, %llu bytes total, %u kHz, %u queues, max payload %u",
		 (unsigned long long)cfg.device_id, cfg.wafer_width, cfg.wafer_height,
		 (unsigned long long)cfg.sram_per_pe, (unsigned long long)cfg.sram_total,
		 cfg.clock_khz, cfg.num_queues, cfg.max_payload);
	ret = fwd_server_run(&dev, fd);
	close(fd);
	if (cfg.listen.is_unix)
		unlink(cfg.listen.path);
	fwd_memory_free(&dev.mem);
	return ret;
}
