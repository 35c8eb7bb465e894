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
#include "fwd_timing_setup.h"
#include "wse/numformat.h"

int main(int argc, char **argv)
{
	char per_pe[WSE_NUMFORMAT_MAX], total[WSE_NUMFORMAT_MAX], clock[WSE_NUMFORMAT_MAX];
	char payload[WSE_NUMFORMAT_MAX];
	struct fwd_config cfg;
	static struct fwd_device dev;
	int ret, fd;

	/* Before anything else: OpenBLAS picks its kernels when it loads. */
	engine_blas_reexec("/proc/self/exe", argv);
	ret = fwd_options_parse(argc, argv, &cfg);
	if (ret)
		return ret > 0 ? 0 : 2;
	fwd_log_set_level(cfg.log_level);
	dev.cfg = &cfg;
	dev.caps = WSE_LINK_CAP_MEM | WSE_LINK_CAP_EXEC | WSE_LINK_CAP_REGION | WSE_LINK_CAP_CANCEL;
	if (!cfg.no_wire16)
		dev.caps |= WSE_LINK_CAP_WIRE16;
	if (fwd_exec_init(&dev.exec, &dev) || fwd_timing_setup(&cfg, &dev.exec.timing)) {
		fwd_err("cannot set up the executor");
		return 1;
	}
	dev.exec.max_program = cfg.max_program;
	engine_set_threads(cfg.threads);
	fwd_info("engine: OpenBLAS %s, kernels %s, %d thread(s)", engine_blas_threading(),
		 engine_blas_core(), engine_threads());
	if (fwd_memory_init(&dev.mem, cfg.sram_total)) {
		fwd_err("cannot allocate the device memory table for %llu bytes",
			(unsigned long long)cfg.sram_total);
		fwd_exec_destroy(&dev.exec);
		return 1;
	}
	fwd_server_catch_signals();
	fd = fwd_server_listen(&cfg);
	if (fd < 0) {
		fwd_memory_free(&dev.mem);
		fwd_exec_destroy(&dev.exec);
		return 1;
	}
	fwd_info("device 0x%llx: wafer %ux%u PEs, %s SRAM per PE, %s in total, %s, %u queues, max payload %s",
		 (unsigned long long)cfg.device_id, cfg.wafer_width, cfg.wafer_height,
		 wse_format_bytes(cfg.sram_per_pe, per_pe, sizeof(per_pe)),
		 wse_format_bytes(cfg.sram_total, total, sizeof(total)),
		 wse_format_hz((uint64_t)cfg.clock_khz * 1000, clock, sizeof(clock)),
		 cfg.num_queues, wse_format_bytes(cfg.max_payload, payload, sizeof(payload)));
	ret = fwd_server_run(&dev, fd);
	close(fd);
	if (cfg.listen.is_unix)
		unlink(cfg.listen.path);
	fwd_exec_destroy(&dev.exec);
	fwd_memory_free(&dev.mem);
	return ret;
}
