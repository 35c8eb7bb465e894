// SPDX-License-Identifier: GPL-2.0-only
/*
 * The layouts of the libwse structures the Python package reads through
 * ctypes (python/wse/_libwse.py), from the headers themselves: every
 * struct's size and every field's offset and size, in the lines
 * wse._libwse.layouts() prints. python_test.sh builds this against the
 * headers make install installs and compares the two.
 */
#include <stddef.h>
#include <stdio.h>

#include "wse/ctl.h"
#include "wse/wse.h"

#define SIZE(s)		printf(#s " size %zu\n", sizeof(struct s))
#define FIELD(s, f)	printf(#s "." #f " %zu %zu\n", offsetof(struct s, f), \
			       sizeof(((struct s *)0)->f))

int main(void)
{
	SIZE(wse_link_counters);
	FIELD(wse_link_counters, frames_tx);
	FIELD(wse_link_counters, frames_rx);
	FIELD(wse_link_counters, bytes_tx);
	FIELD(wse_link_counters, bytes_rx);
	FIELD(wse_link_counters, crc_errors);
	FIELD(wse_link_counters, proto_errors);
	FIELD(wse_link_counters, timeouts);
	FIELD(wse_link_counters, keepalives);
	FIELD(wse_link_counters, stale_responses);
	FIELD(wse_link_counters, inflight);
	FIELD(wse_link_counters, link_downs);
	FIELD(wse_link_counters, has_device);
	FIELD(wse_link_counters, dev_cycles);
	FIELD(wse_link_counters, dev_est_cycles);
	FIELD(wse_link_counters, dev_steps);
	FIELD(wse_link_counters, dev_samples);
	FIELD(wse_link_counters, dev_sram_used);
	FIELD(wse_link_counters, dev_stream_in);
	FIELD(wse_link_counters, dev_stream_out);
	FIELD(wse_link_counters, dev_programs);

	SIZE(wse_dev_status);
	FIELD(wse_dev_status, index);
	FIELD(wse_dev_status, accel_minor);
	FIELD(wse_dev_status, link_state);
	FIELD(wse_dev_status, peer);
	FIELD(wse_dev_status, fw_version);
	FIELD(wse_dev_status, reason);
	FIELD(wse_dev_status, device_id);
	FIELD(wse_dev_status, wafer_width);
	FIELD(wse_dev_status, wafer_height);
	FIELD(wse_dev_status, sram_per_pe);
	FIELD(wse_dev_status, sram_total);
	FIELD(wse_dev_status, clock_khz);
	FIELD(wse_dev_status, num_queues);
	FIELD(wse_dev_status, proto_version);
	FIELD(wse_dev_status, keepalive_ms);
	FIELD(wse_dev_status, has_stats);
	FIELD(wse_dev_status, stats);

	SIZE(wse_appliance_system);
	FIELD(wse_appliance_system, device_id);
	FIELD(wse_appliance_system, state);
	FIELD(wse_appliance_system, frames_tx);
	FIELD(wse_appliance_system, frames_rx);
	FIELD(wse_appliance_system, bytes_tx);
	FIELD(wse_appliance_system, bytes_rx);
	FIELD(wse_appliance_system, steps);
	FIELD(wse_appliance_system, samples);
	FIELD(wse_appliance_system, address);
	FIELD(wse_appliance_system, reason);

	SIZE(wse_appliance);
	FIELD(wse_appliance, systems);
	FIELD(wse_appliance, job_systems);
	FIELD(wse_appliance, memoryx_state);
	FIELD(wse_appliance, swarmx_state);
	FIELD(wse_appliance, input_state);
	FIELD(wse_appliance, memoryx_capacity);
	FIELD(wse_appliance, memoryx_held);
	FIELD(wse_appliance, memoryx_updates);
	FIELD(wse_appliance, swarmx_broadcast);
	FIELD(wse_appliance, swarmx_reduced);
	FIELD(wse_appliance, input_samples);
	FIELD(wse_appliance, reason);
	FIELD(wse_appliance, system);

	SIZE(wse_ring_params);
	FIELD(wse_ring_params, hw_queue);
	FIELD(wse_ring_params, depth);
	FIELD(wse_ring_params, batch);
	FIELD(wse_ring_params, piece);
	FIELD(wse_ring_params, timeout_ms);
	return 0;
}
