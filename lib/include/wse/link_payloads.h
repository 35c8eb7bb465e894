/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/link_payloads.h - every payload of the link protocol mirrored in
 * host byte order (struct wse_link_*_info), with an encoder for the sender
 * and a decoder for the receiver, which checks sizes, reserved fields and
 * ranges and trusts nothing (library wselink).
 */
#ifndef WSE_LINK_PAYLOADS_H
#define WSE_LINK_PAYLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "wse/link_frame.h"

/* HELLO, decoded. */
struct wse_link_hello_info {
	uint16_t version_min;
	uint16_t version_max;
	uint32_t caps;
	uint32_t max_payload;
	uint32_t keepalive_ms;
};

/* HELLO response body (after the status), decoded. */
struct wse_link_device_info {
	uint16_t version;
	uint32_t caps;
	uint32_t max_payload;
	uint16_t version_min;
	uint16_t version_max;
	uint64_t device_id;
	uint32_t wafer_width;
	uint32_t wafer_height;
	uint64_t sram_per_pe;
	uint64_t sram_total;
	uint32_t clock_khz;
	uint32_t num_queues;
	char fw_version[sizeof(((struct wse_link_hello_reply *)0)->fw_version) + 1];
};

void wse_link_hello_encode(struct wse_link_hello *raw,
			   const struct wse_link_hello_info *in);
/*
 * Decodes a HELLO payload of @len bytes. Checks size (at least the v1
 * structure; longer is allowed for later versions), reserved zero,
 * version_min <= version_max, and max_payload within
 * [WSE_LINK_PAYLOAD_MIN, WSE_LINK_PAYLOAD_LIMIT]. Returns 0, -EPROTO for a
 * malformed HELLO, or -EINVAL (err->code E_INVAL) for one the device
 * refuses with a response.
 */
int wse_link_hello_decode(const void *buf, size_t len,
			  struct wse_link_hello_info *out, struct wse_link_err *err);

void wse_link_hello_reply_encode(struct wse_link_hello_reply *raw,
				 const struct wse_link_device_info *in);
/*
 * Decodes the reply body (the bytes after struct wse_link_status) and checks
 * it is sane: exact size, reserved zero, version within the device's range,
 * max_payload within limits, at least one queue, a non-empty wafer and
 * sram_total == width * height * sram_per_pe.
 */
int wse_link_hello_reply_decode(const void *buf, size_t len,
				struct wse_link_device_info *out,
				struct wse_link_err *err);

void wse_link_status_encode(struct wse_link_status *raw, uint32_t status);
/*
 * Splits a response payload into status and the rest (@rest, @rest_len:
 * reply data on success, a text on failure). Returns 0 or -EPROTO if the
 * payload is too short or the reserved field is set.
 */
int wse_link_status_decode(const void *buf, size_t len, uint32_t *status,
			   const uint8_t **rest, size_t *rest_len,
			   struct wse_link_err *err);

/* Writes an ERROR payload (code, text) into @buf; returns its length. */
size_t wse_link_error_encode(void *buf, size_t cap, uint32_t code, const char *text);
/* Decodes an ERROR payload; @text gets a NUL-terminated, printable copy. */
int wse_link_error_decode(const void *buf, size_t len, uint32_t *code,
			  char *text, size_t text_cap, struct wse_link_err *err);

/* CANCEL of the request with tag @tag. */
void wse_link_cancel_encode(struct wse_link_cancel *raw, uint32_t tag);
/* Decodes a CANCEL payload: exactly 8 bytes, reserved zero. */
int wse_link_cancel_decode(const void *buf, size_t len, uint32_t *tag, struct wse_link_err *err);

void wse_link_mem_encode(struct wse_link_mem *raw, uint64_t addr, uint32_t length);
/* Decodes the first sizeof(struct wse_link_mem) bytes; checks reserved. */
int wse_link_mem_decode(const void *buf, size_t len, uint64_t *addr,
			uint32_t *length, struct wse_link_err *err);

/* ------------------------------------------------- execution payloads */

/* The execution opcodes' structures in host byte order (uapi/wse_link.h). */
struct wse_link_prog_load_info {
	uint32_t program;
	uint32_t flags;		/* WSE_LINK_PROG_LAST */
	uint64_t total;
	uint64_t offset;
};

struct wse_link_prog_info {
	uint32_t program;
	uint32_t mode;
	uint32_t num_layers;
	uint32_t num_streams;
	uint32_t batch;
	uint64_t sram_bytes;
	uint64_t est_cycles_per_step;
};

struct wse_link_stream_info {
	uint32_t program;
	uint32_t stream;
	uint32_t length;
	uint32_t flags;		/* WSE_LINK_STREAM_* */
};

struct wse_link_run_info {
	uint32_t program;
	uint32_t kind;		/* WSE_LINK_RUN_*, flags included (WSE_LINK_RUN_RETAIN) */
	uint32_t steps;
	uint32_t batch;
	uint32_t leaf;		/* samples per micro-batch, a leaf of the gradient sum; 0: any */
	uint32_t norm;		/* the batch the loss is averaged over; 0: batch */
};

struct wse_link_run_result_info {
	uint32_t steps;
	uint32_t samples;
	uint64_t cycles;
	uint64_t est_cycles;
	uint64_t host_ns;
};

struct wse_link_params_info {
	uint32_t program;
	uint32_t which;		/* WSE_LINK_PARAMS_* */
	uint64_t offset;
	uint32_t length;
};

struct wse_link_dev_stats_info {
	uint64_t cycles;
	uint64_t est_cycles;
	uint64_t steps;
	uint64_t samples;
	uint64_t sram_used;
	uint64_t stream_bytes_in;
	uint64_t stream_bytes_out;
	uint32_t programs;
};

/*
 * Encoders fill the wire structure (reserved fields zero). Decoders read
 * the fixed part at the start of @buf (@len bytes available; requests may
 * carry data after it), check reserved fields and known flags, and return
 * 0 or -EPROTO with @err set (E_PROTO). Replies (program info, run result,
 * device stats) must have their exact size.
 */
void wse_link_prog_load_encode(struct wse_link_program_load *raw,
			       const struct wse_link_prog_load_info *in);
int wse_link_prog_load_decode(const void *buf, size_t len, struct wse_link_prog_load_info *out,
			      struct wse_link_err *err);
void wse_link_prog_info_encode(struct wse_link_program_info *raw,
			       const struct wse_link_prog_info *in);
int wse_link_prog_info_decode(const void *buf, size_t len, struct wse_link_prog_info *out,
			      struct wse_link_err *err);
void wse_link_prog_ref_encode(struct wse_link_program_ref *raw, uint32_t program);
int wse_link_prog_ref_decode(const void *buf, size_t len, uint32_t *program,
			     struct wse_link_err *err);
void wse_link_stream_encode(struct wse_link_stream *raw, const struct wse_link_stream_info *in);
int wse_link_stream_decode(const void *buf, size_t len, struct wse_link_stream_info *out,
			   struct wse_link_err *err);
void wse_link_run_encode(struct wse_link_run *raw, const struct wse_link_run_info *in);
/* The loss scale that follows a RUN of kind WSE_LINK_RUN_SCALED. */
void wse_link_run_scale_encode(struct wse_link_run_scale *raw, float loss_scale);
/*
 * The loss scale of RUN payload @buf (the whole of it) into *@scale: 0
 * without WSE_LINK_RUN_SCALED in its kind. -1 with @err unless the
 * payload is exactly the RUN (and the scale with the flag), or if the
 * scale's reserved field is not 0.
 */
int wse_link_run_scale_decode(const void *buf, size_t len, float *scale,
			      struct wse_link_err *err);
int wse_link_run_decode(const void *buf, size_t len, struct wse_link_run_info *out,
			struct wse_link_err *err);
void wse_link_run_result_encode(struct wse_link_run_result *raw,
				const struct wse_link_run_result_info *in);
int wse_link_run_result_decode(const void *buf, size_t len, struct wse_link_run_result_info *out,
			       struct wse_link_err *err);
void wse_link_params_encode(struct wse_link_params *raw, const struct wse_link_params_info *in);
int wse_link_params_decode(const void *buf, size_t len, struct wse_link_params_info *out,
			   struct wse_link_err *err);
void wse_link_dev_stats_encode(struct wse_link_dev_stats *raw,
			       const struct wse_link_dev_stats_info *in);
int wse_link_dev_stats_decode(const void *buf, size_t len, struct wse_link_dev_stats_info *out,
			      struct wse_link_err *err);

/* ------------------------------------------ shared-memory regions */

struct wse_link_region_map_info {
	uint32_t region;
	uint64_t size;
	uint64_t nonce;
	char name[sizeof(((struct wse_link_region_map *)0)->name) + 1];
};

struct wse_link_region_ref_info {
	uint32_t region;
	uint64_t offset;
};

/*
 * REGION_MAP: the decoder checks flags and reserved zero, the id in
 * 1..WSE_LINK_REGIONS_MAX, the size a non-zero multiple of 4096 up to 2^40
 * and the name a POSIX shared-memory name ("/" then [A-Za-z0-9._-]).
 */
void wse_link_region_map_encode(struct wse_link_region_map *raw,
				const struct wse_link_region_map_info *in);
int wse_link_region_map_decode(const void *buf, size_t len,
			       struct wse_link_region_map_info *out, struct wse_link_err *err);
void wse_link_region_ref_encode(struct wse_link_region_ref *raw,
				const struct wse_link_region_ref_info *in);
int wse_link_region_ref_decode(const void *buf, size_t len,
			       struct wse_link_region_ref_info *out, struct wse_link_err *err);
void wse_link_region_done_encode(struct wse_link_region_done *raw, uint32_t length);
int wse_link_region_done_decode(const void *buf, size_t len, uint32_t *length,
				struct wse_link_err *err);

/* ------------------------------------------------------- appliances */

struct wse_link_appliance_system_info {
	uint64_t device_id;
	uint32_t wafer_width, wafer_height;
	uint64_t sram_per_pe;
	uint32_t clock_khz;
};

/* The HELLO appendix of an appliance, decoded. */
struct wse_link_appliance_id {
	uint32_t systems;
	uint64_t memoryx_capacity;
	struct wse_link_appliance_system_info system[WSE_LINK_APPLIANCE_SYSTEMS_MAX];
};

/* Writes the appendix into @buf (@cap bytes); returns its length, 0 if it does not fit. */
size_t wse_link_appliance_id_encode(void *buf, size_t cap, const struct wse_link_appliance_id *in);
/* Decodes an appendix of exactly @len bytes: 1..16 systems, each a sane wafer. */
int wse_link_appliance_id_decode(const void *buf, size_t len, struct wse_link_appliance_id *out,
				 struct wse_link_err *err);

struct wse_link_job_info {
	uint32_t systems;
};

void wse_link_job_encode(struct wse_link_job *raw, const struct wse_link_job_info *in);
/* Exactly the structure; flags and reserved zero, systems at least 1. */
int wse_link_job_decode(const void *buf, size_t len, struct wse_link_job_info *out,
			struct wse_link_err *err);

struct wse_link_input_info {
	uint32_t source;	/* WSE_LINK_INPUT_STREAM or _DATASET */
	uint32_t flags;		/* WSE_LINK_INPUT_SHUFFLE */
	uint64_t seed;
	uint32_t epoch, first, count;
	char dataset[sizeof(((struct wse_link_input *)0)->dataset) + 1];
	char split[sizeof(((struct wse_link_input *)0)->split) + 1];
};

void wse_link_input_encode(struct wse_link_input *raw, const struct wse_link_input_info *in);
/*
 * Exactly the structure; a known source and flags, reserved zero; for a
 * dataset, a relative path without "." or ".." components and a split
 * of [A-Za-z0-9._-]. The texts come back NUL-terminated.
 */
int wse_link_input_decode(const void *buf, size_t len, struct wse_link_input_info *out,
			  struct wse_link_err *err);

struct wse_link_appliance_part_info {
	uint64_t device_id;
	uint32_t state;		/* WSE_LINK_PART_* */
	uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx;
	uint64_t steps, samples;
	char address[sizeof(((struct wse_link_appliance_part *)0)->address) + 1];
	char reason[sizeof(((struct wse_link_appliance_part *)0)->reason) + 1];
};

struct wse_link_appliance_state {
	uint32_t systems, job_systems;
	uint32_t memoryx_state, swarmx_state, input_state;
	uint64_t memoryx_capacity, memoryx_held, memoryx_updates;
	uint64_t swarmx_broadcast, swarmx_reduced, input_samples;
	char reason[sizeof(((struct wse_link_appliance_info *)0)->reason) + 1];
	struct wse_link_appliance_part_info part[WSE_LINK_APPLIANCE_SYSTEMS_MAX];
};

/* The PARAMS_READ reply: the info and one part per system. */
size_t wse_link_appliance_state_encode(void *buf, size_t cap,
				       const struct wse_link_appliance_state *in);
int wse_link_appliance_state_decode(const void *buf, size_t len,
				    struct wse_link_appliance_state *out, struct wse_link_err *err);
/* The bytes of a reply for @systems systems. */
size_t wse_link_appliance_state_size(uint32_t systems);

#endif /* WSE_LINK_PAYLOADS_H */
