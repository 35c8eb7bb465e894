/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * wse control plane: the generic netlink family "wse".
 *
 * Devices are named by an index (WSE_A_DEV_INDEX), the same number as the
 * platform device "wse.N". ATTACH, DETACH and RESET need CAP_NET_ADMIN.
 * Events go to the multicast group "events" as WSE_CMD_EVENT messages.
 * Documentation/control-plane.rst describes every command.
 */
#ifndef __UAPI_WSE_GENL_H__
#define __UAPI_WSE_GENL_H__

#define WSE_GENL_NAME			"wse"
#define WSE_GENL_VERSION		1
#define WSE_GENL_MCGRP_EVENTS		"events"

/**
 * enum wse_genl_cmd - commands of the "wse" family
 * @WSE_CMD_UNSPEC: never used
 * @WSE_CMD_ATTACH: take a connected stream socket (WSE_A_SOCK_FD: TCP or
 *	AF_UNIX), negotiate the link protocol and create an accel device on
 *	it; replies with the device's attributes
 * @WSE_CMD_DETACH: shut a device's link down and remove the device
 *	(WSE_A_DEV_INDEX)
 * @WSE_CMD_GET: one device's attributes (WSE_A_DEV_INDEX); with
 *	NLM_F_DUMP, every device: this is LIST
 * @WSE_CMD_STATS: a device's link counters, in WSE_A_STATS
 * @WSE_CMD_RESET: abort what is in flight on a device's link and zero its
 *	counters
 * @WSE_CMD_EVENT: a notification in the "events" group (never a request)
 * @__WSE_CMD_MAX: one past the last command
 * @WSE_CMD_MAX: the last command
 */
enum wse_genl_cmd {
	WSE_CMD_UNSPEC,
	WSE_CMD_ATTACH,
	WSE_CMD_DETACH,
	WSE_CMD_GET,
	WSE_CMD_STATS,
	WSE_CMD_RESET,
	WSE_CMD_EVENT,

	__WSE_CMD_MAX,
	WSE_CMD_MAX = __WSE_CMD_MAX - 1
};

/**
 * enum wse_genl_attr - attributes of the "wse" family
 * @WSE_A_UNSPEC: never used
 * @WSE_A_PAD: alignment padding for 64-bit attributes
 * @WSE_A_SOCK_FD: u32, a connected stream socket (ATTACH)
 * @WSE_A_DEV_INDEX: u32, the device
 * @WSE_A_ACCEL_MINOR: u32, N of /dev/accel/accelN
 * @WSE_A_LINK_STATE: u32, an &enum wse_link_state
 * @WSE_A_PEER: string, the firmware's address
 * @WSE_A_FW_VERSION: string
 * @WSE_A_DEVICE_ID: u64, the id the firmware reports
 * @WSE_A_WAFER_WIDTH: u32, PEs per row
 * @WSE_A_WAFER_HEIGHT: u32, rows of PEs
 * @WSE_A_SRAM_PER_PE: u64, bytes
 * @WSE_A_SRAM_TOTAL: u64, bytes
 * @WSE_A_CLOCK_KHZ: u32
 * @WSE_A_NUM_QUEUES: u32
 * @WSE_A_PROTO_VERSION: u32, the negotiated link protocol version
 * @WSE_A_STATS: nested, &enum wse_genl_stat
 * @WSE_A_EVENT: u32, an &enum wse_genl_event
 * @WSE_A_REASON: string, why an event happened
 * @WSE_A_ERRNO: u32, the positive errno an event reports (0 if none)
 * @WSE_A_KEEPALIVE_MS: u32, ATTACH: keepalive interval (optional)
 * @__WSE_A_MAX: one past the last attribute
 * @WSE_A_MAX: the last attribute
 */
enum wse_genl_attr {
	WSE_A_UNSPEC,
	WSE_A_PAD,
	WSE_A_SOCK_FD,
	WSE_A_DEV_INDEX,
	WSE_A_ACCEL_MINOR,
	WSE_A_LINK_STATE,
	WSE_A_PEER,
	WSE_A_FW_VERSION,
	WSE_A_DEVICE_ID,
	WSE_A_WAFER_WIDTH,
	WSE_A_WAFER_HEIGHT,
	WSE_A_SRAM_PER_PE,
	WSE_A_SRAM_TOTAL,
	WSE_A_CLOCK_KHZ,
	WSE_A_NUM_QUEUES,
	WSE_A_PROTO_VERSION,
	WSE_A_STATS,
	WSE_A_EVENT,
	WSE_A_REASON,
	WSE_A_ERRNO,
	WSE_A_KEEPALIVE_MS,

	__WSE_A_MAX,
	WSE_A_MAX = __WSE_A_MAX - 1
};

/**
 * enum wse_genl_stat - counters nested in WSE_A_STATS (all u64)
 * @WSE_STAT_UNSPEC: never used
 * @WSE_STAT_PAD: alignment padding
 * @WSE_STAT_FRAMES_TX: frames sent
 * @WSE_STAT_FRAMES_RX: frames received and accepted
 * @WSE_STAT_BYTES_TX: bytes sent, headers included
 * @WSE_STAT_BYTES_RX: bytes received, headers included
 * @WSE_STAT_CRC_ERRORS: frames whose header or data digest was wrong
 * @WSE_STAT_PROTO_ERRORS: other protocol violations by the peer
 * @WSE_STAT_TIMEOUTS: requests that got no answer in time, and
 *	keepalive expiries
 * @WSE_STAT_KEEPALIVES: keepalive requests sent
 * @WSE_STAT_STALE_RESPONSES: answers to requests that had already timed out
 * @WSE_STAT_INFLIGHT: requests waiting for an answer now
 * @WSE_STAT_LINK_DOWNS: times the link died
 * @WSE_STAT_DEV_CYCLES: modelled device cycles of every run (from the
 *	firmware; absent when it cannot be asked)
 * @WSE_STAT_DEV_EST_CYCLES: the compiler's estimate for the same runs
 * @WSE_STAT_DEV_STEPS: steps the device ran
 * @WSE_STAT_DEV_SAMPLES: samples the device processed
 * @WSE_STAT_DEV_SRAM_USED: SRAM bytes held by loaded programs
 * @WSE_STAT_DEV_STREAM_BYTES_IN: bytes the device took from streams
 * @WSE_STAT_DEV_STREAM_BYTES_OUT: bytes the device gave on streams
 * @WSE_STAT_DEV_PROGRAMS: programs loaded
 * @__WSE_STAT_MAX: one past the last counter
 * @WSE_STAT_MAX: the last counter
 */
enum wse_genl_stat {
	WSE_STAT_UNSPEC,
	WSE_STAT_PAD,
	WSE_STAT_FRAMES_TX,
	WSE_STAT_FRAMES_RX,
	WSE_STAT_BYTES_TX,
	WSE_STAT_BYTES_RX,
	WSE_STAT_CRC_ERRORS,
	WSE_STAT_PROTO_ERRORS,
	WSE_STAT_TIMEOUTS,
	WSE_STAT_KEEPALIVES,
	WSE_STAT_STALE_RESPONSES,
	WSE_STAT_INFLIGHT,
	WSE_STAT_LINK_DOWNS,
	WSE_STAT_DEV_CYCLES,
	WSE_STAT_DEV_EST_CYCLES,
	WSE_STAT_DEV_STEPS,
	WSE_STAT_DEV_SAMPLES,
	WSE_STAT_DEV_SRAM_USED,
	WSE_STAT_DEV_STREAM_BYTES_IN,
	WSE_STAT_DEV_STREAM_BYTES_OUT,
	WSE_STAT_DEV_PROGRAMS,

	__WSE_STAT_MAX,
	WSE_STAT_MAX = __WSE_STAT_MAX - 1
};

/**
 * enum wse_link_state - WSE_A_LINK_STATE values
 * @WSE_LINK_STATE_NONE: a test device with no link
 * @WSE_LINK_STATE_UP: negotiated and answering
 * @WSE_LINK_STATE_DEAD: lost (EOF, error, keepalive expiry, violation);
 *	the device stays until DETACH
 */
enum wse_link_state {
	WSE_LINK_STATE_NONE,
	WSE_LINK_STATE_UP,
	WSE_LINK_STATE_DEAD,
};

/**
 * enum wse_genl_event - WSE_A_EVENT values
 * @WSE_EVENT_LINK_UP: a device was attached
 * @WSE_EVENT_LINK_DOWN: a link died or was detached (WSE_A_REASON says why)
 * @WSE_EVENT_FW_ERROR: the firmware sent an ERROR frame
 * @WSE_EVENT_TIMEOUT: a request or the keepalive timed out
 * @WSE_EVENT_RESET: a device was reset
 */
enum wse_genl_event {
	WSE_EVENT_LINK_UP = 1,
	WSE_EVENT_LINK_DOWN,
	WSE_EVENT_FW_ERROR,
	WSE_EVENT_TIMEOUT,
	WSE_EVENT_RESET,
};

#endif /* __UAPI_WSE_GENL_H__ */
