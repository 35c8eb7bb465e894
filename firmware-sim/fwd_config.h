/* SPDX-License-Identifier: GPL-2.0-only */
/* wsefwd's configuration, as set on the command line. */
#ifndef FWD_CONFIG_H
#define FWD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "wse/link_addr.h"
#include "wse/link_malform.h"

/* Fault knobs for tests; a count of -1 means off. */
struct fwd_fault_config {
	int64_t drop_after;	/* close the link on receiving frame N */
	int64_t silent_after;	/* answer nothing after frame N */
	int64_t malformed_after; /* replace replies after frame N by broken frames */
	int64_t corrupt_frame;	/* flip a bit in the Nth frame sent */
	uint32_t delay_ms;	/* delay every reply */
	int malformed_kind;	/* enum wse_link_malform, or -1: cycle through all */
	uint64_t seed;		/* for random choices in malformed frames */
	int64_t stage_error;	/* pipeline stage (layer) whose forward pass fails */
};

/*
 * A batch is cut into --micro-batches micro-batches (fewer for a short
 * batch). By default into up to FWD_MICRO_BATCHES_DEFAULT, but none smaller
 * than FWD_MICRO_MIN_SAMPLES: sgemm on fewer rows loses more to packing
 * than the stages gain on two cores (Documentation/engine.rst).
 */
#define FWD_MICRO_BATCHES_DEFAULT	4
#define FWD_MICRO_MIN_SAMPLES		64
#define FWD_MICRO_BATCHES_MAX		32
/* The largest batch a RUN may average its loss over (RUN's norm). */
#define FWD_RUN_NORM_MAX		(1U << 24)
/* Threads that run a program's steps (fwd_pipeline.c). */
#define FWD_WORKERS_MAX			64

struct fwd_config {
	const char *listen_spec;
	struct wse_link_addr listen;
	const char *port_file;
	const char *wafer_spec;	/* as given to --wafer */
	uint32_t wafer_width;
	uint32_t wafer_height;
	uint64_t sram_per_pe;
	uint64_t sram_total;
	uint64_t device_id;
	uint32_t clock_khz;
	bool clock_given;	/* --clock-mhz; else the timing file's clock */
	uint32_t num_queues;
	uint32_t max_payload;
	uint32_t hello_timeout_ms;
	uint32_t send_timeout_ms;
	int log_level;
	int threads;		/* OpenBLAS threads */
	uint32_t micro_batches;	/* per batch; 0: the default rule above */
	uint32_t workers;	/* step worker threads */
	uint64_t max_program;	/* largest program image accepted */
	const char *timing_path; /* NULL: the default file */
	const char *store;	/* storage shared with the hosts (--store), or NULL */
	bool once;
	bool no_wire16;		/* --no-wire16: WSE_LINK_CAP_WIRE16 not offered */
	struct fwd_fault_config fault;
};

/*
 * Fills @cfg from the command line. Returns 0 to run, 1 when --help or
 * --version was printed, -1 after printing an error on stderr.
 */
int fwd_options_parse(int argc, char **argv, struct fwd_config *cfg);

#endif /* FWD_CONFIG_H */
