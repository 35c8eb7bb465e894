/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A request decoded once (fwd_ops.h): what the connection thread hands
 * to an op's handler, directly or through its queue (fwd_exec.h).
 */
#ifndef FWD_REQUEST_H
#define FWD_REQUEST_H

#include <stdint.h>

#include "wse/link_payloads.h"

struct fwd_op;

/* A request's fixed part, decoded: one member per kind of request. */
union fwd_args {
	struct wse_link_prog_load_info load;	/* PROGRAM_LOAD */
	uint32_t program;			/* PROGRAM_UNLOAD */
	struct wse_link_stream_info stream;	/* STREAM_WRITE, STREAM_READ */
	struct {
		struct wse_link_stream_info stream;
		struct wse_link_region_ref_info ref;
	} region_stream;			/* STREAM_*_REGION */
	struct wse_link_region_map_info region;	/* REGION_MAP */
	struct {
		struct wse_link_run_info in;
		float loss_scale;		/* WSE_LINK_RUN_SCALED; else 0 */
	} run;					/* RUN */
	struct wse_link_params_info params;	/* PARAMS_READ, PARAMS_WRITE */
	struct {
		uint64_t addr;
		uint32_t length;
	} mem;					/* MEM_READ */
	struct {
		uint32_t code;
		char text[200];
	} error;				/* ERROR */
	uint32_t cancel;			/* CANCEL: the tag */
};

/* A request as its handler sees it. */
struct fwd_request {
	const struct fwd_op *op;
	struct wse_link_frame f;
	union fwd_args args;
	const uint8_t *data;	/* what follows the fixed part (all of it without .decode) */
	uint32_t len;
};

#endif /* FWD_REQUEST_H */
