/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * wse link protocol: what crosses the network between the host's driver and
 * a WSE (the firmware, here wsefwd). Documentation/link-protocol.rst is the
 * specification; this header is its machine-readable half.
 *
 * Everything is little-endian. A frame is a 32-byte header followed by
 * @length payload bytes. The header carries two CRC32C digests (Castagnoli,
 * initial value ~0, final xor ~0, as crc32c() in Linux and iSCSI/NVMe-TCP):
 * @hdr_crc over the first 28 header bytes, checked before @length is
 * trusted, and @data_crc over the payload.
 *
 * A request is answered by a frame with the same opcode and @tag and
 * WSE_LINK_F_RESPONSE set, whose payload starts with struct wse_link_status;
 * after it come the opcode's reply data on success or, on failure, a text
 * saying what was wrong (not NUL-terminated; its length is what remains).
 */
#ifndef __UAPI_WSE_LINK_H__
#define __UAPI_WSE_LINK_H__

#include <linux/types.h>

#define WSE_LINK_MAGIC			0x31455357	/* "WSE1" on the wire */

/* Protocol versions this header describes. */
#define WSE_LINK_VERSION_MIN		1
#define WSE_LINK_VERSION_MAX		1

/* No frame may carry more payload than this, whatever was negotiated. */
#define WSE_LINK_PAYLOAD_LIMIT		(16U << 20)
/* The payload size both sides must accept before negotiation (HELLO). */
#define WSE_LINK_PAYLOAD_MIN		4096U

/**
 * enum wse_link_op - frame opcodes
 * @WSE_LINK_OP_HELLO: host opens the link: &struct wse_link_hello; the
 *	response carries &struct wse_link_hello_reply. It must be the first
 *	frame; the device answers nothing else before it.
 * @WSE_LINK_OP_KEEPALIVE: either side; the peer answers with an empty
 *	response. A side that hears nothing for three keepalive intervals
 *	declares the link dead.
 * @WSE_LINK_OP_SHUTDOWN: orderly close; the peer answers, then both close.
 * @WSE_LINK_OP_ERROR: unsolicited and fatal: &struct wse_link_error, then
 *	the sender closes (e.g. a second host refused, a protocol violation).
 * @WSE_LINK_OP_CANCEL: host, to a device that offers WSE_LINK_CAP_CANCEL:
 *	&struct wse_link_cancel names an earlier request by its tag. If that
 *	request is still unanswered, the device drops it if it has not
 *	started, or ends its wait (stream room, stream data, a RUN's input or
 *	output room) if it waits, and answers it with WSE_LINK_E_CANCELED; a
 *	request past its waits is answered as usual. CANCEL is link-level,
 *	served as it arrives (never queued behind other requests), and
 *	answered at once with an empty OK whether or not it found the request.
 *	The cancelled request's tag stays in use until its answer comes.
 * @WSE_LINK_OP_MEM_WRITE: host writes device memory: &struct wse_link_mem
 *	(length = bytes that follow it), then the data. Empty response.
 * @WSE_LINK_OP_MEM_READ: host reads device memory: &struct wse_link_mem;
 *	the response carries the data.
 * @WSE_LINK_OP_PROGRAM_LOAD: host sends a .wsep program image in pieces:
 *	&struct wse_link_program_load, then the piece. The device validates
 *	the whole image when the piece flagged WSE_LINK_PROG_LAST arrives,
 *	places it (SRAM capacity enforced) and answers that piece with
 *	&struct wse_link_program_info; earlier pieces get empty responses.
 * @WSE_LINK_OP_PROGRAM_UNLOAD: &struct wse_link_program_ref; frees the
 *	program's SRAM and streams. Empty response.
 * @WSE_LINK_OP_STREAM_WRITE: host feeds an input stream:
 *	&struct wse_link_stream (length = data bytes), then the data. The
 *	response comes when the device has taken the data in; a device whose
 *	stream buffer is full holds the response (backpressure).
 * @WSE_LINK_OP_STREAM_READ: host takes from an output stream:
 *	&struct wse_link_stream (length = the most it wants, a whole number
 *	of records). The response carries the data once some is produced.
 * @WSE_LINK_OP_RUN: &struct wse_link_run; the device runs the program for
 *	a number of steps, taking its input streams and filling its output
 *	streams. Answered with &struct wse_link_run_result when the run ends.
 * @WSE_LINK_OP_PARAMS_READ: &struct wse_link_params; the response carries
 *	the program's parameters (or optimizer state) from the offset.
 * @WSE_LINK_OP_PARAMS_WRITE: &struct wse_link_params, then the data.
 * @WSE_LINK_OP_DEVICE_STATS: empty; answered with &struct wse_link_dev_stats.
 * @WSE_LINK_OP_REGION_MAP: a host on the device's machine names a
 *	shared-memory region: &struct wse_link_region_map. Empty response,
 *	or E_UNSUPPORTED when the device cannot map it (another machine).
 * @WSE_LINK_OP_STREAM_WRITE_REGION: as STREAM_WRITE, the data taken from
 *	a mapped region: &struct wse_link_stream, &struct wse_link_region_ref.
 * @WSE_LINK_OP_STREAM_READ_REGION: as STREAM_READ, the data put into a
 *	mapped region; answered with &struct wse_link_region_done.
 *
 * Ordering: requests on one queue (the header's @queue) are carried out in
 * the order they arrive; requests on different queues are independent, so
 * a STREAM_READ waiting for data on one queue does not hold up writes on
 * another. Responses come in completion order; the tag pairs them up.
 *
 * Read-ahead: a device takes at least WSE_LINK_QUEUED_REQS queued requests,
 * and WSE_LINK_QUEUED_BYTES of their payloads, from their arrival to their
 * answer. A request beyond either bound is answered WSE_LINK_E_BUSY at
 * once; the device never stops reading the link for queued work, so
 * keepalives and CANCEL always get through. Queued requests are all but
 * the link-level ones (HELLO, KEEPALIVE, SHUTDOWN, ERROR, CANCEL), the
 * memory accesses (MEM_READ, MEM_WRITE) and REGION_MAP, which a device
 * serves as they arrive.
 */
enum wse_link_op {
	WSE_LINK_OP_HELLO = 0x01,
	WSE_LINK_OP_KEEPALIVE = 0x02,
	WSE_LINK_OP_SHUTDOWN = 0x03,
	WSE_LINK_OP_ERROR = 0x04,
	WSE_LINK_OP_CANCEL = 0x05,
	WSE_LINK_OP_MEM_WRITE = 0x10,
	WSE_LINK_OP_MEM_READ = 0x11,
	WSE_LINK_OP_PROGRAM_LOAD = 0x20,
	WSE_LINK_OP_PROGRAM_UNLOAD = 0x21,
	WSE_LINK_OP_STREAM_WRITE = 0x22,
	WSE_LINK_OP_STREAM_READ = 0x23,
	WSE_LINK_OP_RUN = 0x24,
	WSE_LINK_OP_PARAMS_READ = 0x25,
	WSE_LINK_OP_PARAMS_WRITE = 0x26,
	WSE_LINK_OP_DEVICE_STATS = 0x27,
	WSE_LINK_OP_REGION_MAP = 0x28,
	WSE_LINK_OP_STREAM_WRITE_REGION = 0x29,
	WSE_LINK_OP_STREAM_READ_REGION = 0x2a,
};

/* Frame flags. Unknown flags are a protocol violation. */
#define WSE_LINK_F_RESPONSE		0x0001
#define WSE_LINK_F_KNOWN		(WSE_LINK_F_RESPONSE)

/**
 * enum wse_link_status_code - outcome of a request, and error codes
 * @WSE_LINK_OK: success
 * @WSE_LINK_E_VERSION: no protocol version in common
 * @WSE_LINK_E_BUSY: the device already serves a host
 * @WSE_LINK_E_PROTO: a malformed or unexpected frame
 * @WSE_LINK_E_NOSPC: device memory (SRAM) capacity exceeded
 * @WSE_LINK_E_RANGE: an address or length outside device memory
 * @WSE_LINK_E_INVAL: a well-formed request with invalid arguments
 * @WSE_LINK_E_UNSUPPORTED: an opcode or capability the device lacks
 * @WSE_LINK_E_INTERNAL: the device failed
 * @WSE_LINK_E_CRC: a digest did not match (in an ERROR frame: fatal)
 * @WSE_LINK_E_DATA_CRC: a request's payload did not match its data
 *	digest; its header did, so the framing holds: the request is not
 *	carried out (a MEM_WRITE's range may hold part of the data) and the
 *	link goes on. Sent as the request's status, never in ERROR.
 * @WSE_LINK_E_CANCELED: the host cancelled the request (WSE_LINK_OP_CANCEL)
 *	before it was carried out, or while it waited. Status only.
 */
enum wse_link_status_code {
	WSE_LINK_OK = 0,
	WSE_LINK_E_VERSION = 1,
	WSE_LINK_E_BUSY = 2,
	WSE_LINK_E_PROTO = 3,
	WSE_LINK_E_NOSPC = 4,
	WSE_LINK_E_RANGE = 5,
	WSE_LINK_E_INVAL = 6,
	WSE_LINK_E_UNSUPPORTED = 7,
	WSE_LINK_E_INTERNAL = 8,
	WSE_LINK_E_CRC = 9,
	WSE_LINK_E_DATA_CRC = 10,
	WSE_LINK_E_CANCELED = 11,
};

/**
 * struct wse_link_hdr - the fixed frame header (32 bytes)
 * @magic: WSE_LINK_MAGIC
 * @version: the negotiated version; HELLO and its response carry
 *	WSE_LINK_VERSION_MIN of the sender's header, i.e. 1
 * @opcode: an &enum wse_link_op
 * @flags: WSE_LINK_F_*
 * @queue: the device queue a frame belongs to; 0 for link-level frames
 * @reserved: must be 0
 * @tag: chosen by the requester, echoed in the response
 * @length: payload bytes after the header, at most the negotiated maximum
 * @reserved2: must be 0
 * @data_crc: CRC32C of the payload (0 when @length is 0)
 * @hdr_crc: CRC32C of the 28 bytes before it
 */
struct wse_link_hdr {
	__le32 magic;
	__u8 version;
	__u8 opcode;
	__le16 flags;
	__le16 queue;
	__le16 reserved;
	__le32 tag;
	__le32 length;
	__le32 reserved2;
	__le32 data_crc;
	__le32 hdr_crc;
};

/**
 * struct wse_link_status - first bytes of every response payload
 * @status: an &enum wse_link_status_code
 * @reserved: must be 0
 */
struct wse_link_status {
	__le32 status;
	__le32 reserved;
};

/* Capability bits exchanged in HELLO. */
#define WSE_LINK_CAP_MEM		0x00000001	/* MEM_READ / MEM_WRITE */
#define WSE_LINK_CAP_EXEC		0x00000002	/* programs, streams, RUN, params, stats */
/* An appliance: systems, MemoryX and SwarmX behind one device (HELLO appendix). */
#define WSE_LINK_CAP_APPLIANCE		0x00000004
/* Shared-memory regions: REGION_MAP, STREAM_WRITE_REGION, STREAM_READ_REGION. */
#define WSE_LINK_CAP_REGION		0x00000008
/* WSE_LINK_OP_CANCEL: a host may take back a request the device still holds. */
#define WSE_LINK_CAP_CANCEL		0x00000010
/*
 * 16-bit weights on the wire: the device widens a weight transfer flagged
 * WSE_LINK_STREAM_WIRE16 (struct wse_link_stream). A host sends the flag
 * only to a device that offers this bit.
 */
#define WSE_LINK_CAP_WIRE16		0x00000020

/* What a device takes read ahead of execution without refusing (E_BUSY). */
#define WSE_LINK_QUEUED_REQS		256U
#define WSE_LINK_QUEUED_BYTES		(256U << 20)

/*
 * The queues' roles, by convention of every host in this tree (a host may
 * choose others; an appliance's coordinator uses these on its systems):
 * RUN, input streams, output streams, and loads, params and stats, so that
 * no wait holds up the request that would end it (see Ordering above).
 */
#define WSE_LINK_Q_RUN			0
#define WSE_LINK_Q_IN			1
#define WSE_LINK_Q_OUT			2
#define WSE_LINK_Q_CTL			3
#define WSE_LINK_Q_ROLES		4

/*
 * How long a side waits for its peer to take one frame off the socket
 * before it counts the link as lost: a peer never stops reading for longer.
 */
#define WSE_LINK_SEND_MS		30000

/**
 * struct wse_link_hello - host's opening offer
 * @version_min: lowest protocol version the host speaks
 * @version_max: highest protocol version the host speaks
 * @caps: WSE_LINK_CAP_* the host uses
 * @max_payload: largest payload the host accepts (>= WSE_LINK_PAYLOAD_MIN)
 * @keepalive_ms: the host's keepalive interval
 * @reserved: must be 0
 */
struct wse_link_hello {
	__le16 version_min;
	__le16 version_max;
	__le32 caps;
	__le32 max_payload;
	__le32 keepalive_ms;
	__le64 reserved;
};

/**
 * struct wse_link_hello_reply - the device's answer and identity
 * @version: the version chosen, within both ranges
 * @reserved0: must be 0
 * @caps: WSE_LINK_CAP_* the device offers
 * @max_payload: largest payload the device accepts; each side sends at
 *	most the smaller of the two maxima
 * @version_min: lowest version the device speaks (for error messages)
 * @version_max: highest version the device speaks
 * @device_id: identifies this device (unique per firmware instance)
 * @wafer_width: PEs per row of the mesh
 * @wafer_height: rows of PEs
 * @sram_per_pe: bytes of SRAM per PE
 * @sram_total: bytes of SRAM on the wafer (device memory size)
 * @clock_khz: modelled clock
 * @num_queues: hardware queues the device serves (>= 1)
 * @fw_version: NUL-padded text; the receiver must not assume a NUL
 */
struct wse_link_hello_reply {
	__le16 version;
	__le16 reserved0;
	__le32 caps;
	__le32 max_payload;
	__le16 version_min;
	__le16 version_max;
	__le64 device_id;
	__le32 wafer_width;
	__le32 wafer_height;
	__le64 sram_per_pe;
	__le64 sram_total;
	__le32 clock_khz;
	__le32 num_queues;
	char fw_version[32];
};

/**
 * struct wse_link_error - payload of WSE_LINK_OP_ERROR
 * @code: an &enum wse_link_status_code
 * @reserved: must be 0
 *
 * A text follows, up to the end of the payload.
 */
struct wse_link_error {
	__le32 code;
	__le32 reserved;
};

/**
 * struct wse_link_cancel - payload of WSE_LINK_OP_CANCEL
 * @tag: the tag of the host's request to cancel
 * @reserved: must be 0
 */
struct wse_link_cancel {
	__le32 tag;
	__le32 reserved;
};

/**
 * struct wse_link_mem - a device-memory access
 * @addr: byte address in device memory, 0 .. sram_total - 1
 * @length: bytes to read; for a write, must equal the data that follows
 * @reserved: must be 0
 */
struct wse_link_mem {
	__le64 addr;
	__le32 length;
	__le32 reserved;
};

/* Flags of &struct wse_link_program_load. */
#define WSE_LINK_PROG_LAST		0x00000001

/**
 * struct wse_link_program_load - one piece of a program image
 * @program: the slot the host loads into, 1 .. 255; loading into a slot
 *	that holds a program replaces it once the new one is valid
 * @flags: WSE_LINK_PROG_LAST on the final piece
 * @total: bytes in the whole image (the same in every piece)
 * @offset: where this piece goes in the image; pieces arrive in order
 */
struct wse_link_program_load {
	__le32 program;
	__le32 flags;
	__le64 total;
	__le64 offset;
};

/**
 * struct wse_link_program_info - a loaded program, as the device placed it
 * @program: the slot
 * @mode: 1 layer-pipelined, 2 weight streaming (the .wsep mode)
 * @num_layers: layers
 * @num_streams: streams (their ids are the .wsep stream ids)
 * @batch: samples per step
 * @reserved: must be 0
 * @sram_bytes: SRAM the program holds on the wafer
 * @est_cycles_per_step: the compiler's estimate, from the image
 */
struct wse_link_program_info {
	__le32 program;
	__le32 mode;
	__le32 num_layers;
	__le32 num_streams;
	__le32 batch;
	__le32 reserved;
	__le64 sram_bytes;
	__le64 est_cycles_per_step;
};

/**
 * struct wse_link_program_ref - names a loaded program
 * @program: the slot
 * @reserved: must be 0
 */
struct wse_link_program_ref {
	__le32 program;
	__le32 reserved;
};

/**
 * struct wse_link_stream - a stream transfer
 * @program: the slot
 * @stream: the stream id, as in the program
 * @length: data bytes (write) or the most wanted (read); with
 *	WSE_LINK_STREAM_WIRE16, the bytes on the wire
 * @flags: WSE_LINK_STREAM_*; 0 on reads and on every stream but a layer's
 *	weights
 */
struct wse_link_stream {
	__le32 program;
	__le32 stream;
	__le32 length;
	__le32 flags;
};

/*
 * A STREAM_WRITE of a layer's weights of an fp16 or bf16 program, to a
 * device that offers WSE_LINK_CAP_WIRE16: the floats that the program
 * uses only as matrix-product inputs travel as 16-bit values of its
 * precision (little-endian), the rest as f32, in the layer's order; the
 * device widens them to f32. A piece of a transfer ends on a whole value.
 * (Documentation/link-protocol.rst, "16-bit weights")
 */
#define WSE_LINK_STREAM_WIRE16		0x00000001
#define WSE_LINK_STREAM_FLAGS		(WSE_LINK_STREAM_WIRE16)

/* What RUN does. */
#define WSE_LINK_RUN_TRAIN		1	/* forward, loss, backward, update */
#define WSE_LINK_RUN_EVAL		2	/* forward and loss; no update */
#define WSE_LINK_RUN_PREDICT		3	/* forward only; predictions out */
/* RUN kind's bits 0..15 are the kind, bits 16..31 these flags. */
#define WSE_LINK_RUN_KIND_MASK		0x0000ffff
/* Weight streaming: a layer's forward weights serve its backward pass too;
 * the host sends them once a step.
 */
#define WSE_LINK_RUN_RETAIN		0x00010000
/* fp16 weight streaming: a struct wse_link_run_scale follows the RUN, and
 * the step's loss gradient is multiplied by its scale (the host unscales).
 */
#define WSE_LINK_RUN_SCALED		0x00020000

/**
 * struct wse_link_run - run a loaded program
 * @program: the slot
 * @kind: WSE_LINK_RUN_* in bits 0..15, WSE_LINK_RUN_RETAIN and
 *	WSE_LINK_RUN_SCALED in bits 16..31
 * @steps: batches to process (each takes one batch from every input stream)
 * @batch: samples in each step, 1 .. the program's batch (a short last batch)
 * @leaf: samples per micro-batch, 1 .. @batch, each a leaf of the fixed
 *	tree the step's weight gradients are summed in; 0: the device
 *	chooses. A data-parallel host fixes it so that every system's shard
 *	is the same micro-batches, a subtree of the same sum
 *	(Documentation/link-protocol.rst, "RUN")
 * @norm: the batch the loss is averaged over, @batch .. 2^24; 0: @batch.
 *	A system training a shard of a larger batch is given the whole
 *	batch, so its gradients need no rescaling
 */
struct wse_link_run {
	__le32 program;
	__le32 kind;
	__le32 steps;
	__le32 batch;
	__le32 leaf;
	__le32 norm;
};

/**
 * struct wse_link_run_scale - after a RUN whose kind has WSE_LINK_RUN_SCALED
 * @loss_scale: IEEE-754 binary32 bits of the loss scale, finite and above 0
 * @reserved: must be 0
 */
struct wse_link_run_scale {
	__le32 loss_scale;
	__le32 reserved;
};

/**
 * struct wse_link_run_result - how a run went
 * @steps: steps completed
 * @samples: samples processed
 * @cycles: modelled device cycles the run took
 * @est_cycles: the compiler's estimate for the same work
 * @host_ns: wall time the simulator spent
 */
struct wse_link_run_result {
	__le32 steps;
	__le32 samples;
	__le64 cycles;
	__le64 est_cycles;
	__le64 host_ns;
};

/* What PARAMS_READ / PARAMS_WRITE address. */
#define WSE_LINK_PARAMS_WEIGHTS		1	/* every layer's W then b, as in the .wsep */
#define WSE_LINK_PARAMS_OPT_STATE	2	/* optimizer state, same layout per slot */
/*
 * Appliance only (Documentation/link-protocol.rst, "Appliances"). JOB on
 * slot 0 is the default of every later job; on a slot 1..255, that slot's
 * next program's own.
 */
#define WSE_LINK_PARAMS_JOB		3	/* write: &struct wse_link_job, before loading */
#define WSE_LINK_PARAMS_APPLIANCE	4	/* read: &struct wse_link_appliance_info, parts */
#define WSE_LINK_PARAMS_INPUT		5	/* write: &struct wse_link_input, before a RUN */
/*
 * A copy of both and the step count, kept aside at a step boundary so that
 * the host reads it while training goes on: a write of a u64 step asks for
 * it, a read gives weights, state arrays, the u64 step and a u32 CRC32C of
 * weights and state (then 4 zero bytes). Documentation/link-protocol.rst.
 */
#define WSE_LINK_PARAMS_SNAPSHOT	6
/*
 * A write of &struct wse_link_snapshot_store: the snapshot of that step
 * saved by the device into a file of the storage it shares with the host
 * (wsefwd --store), which the host made there (and syncs).
 */
#define WSE_LINK_PARAMS_SNAPSHOT_STORE	7

/**
 * struct wse_link_snapshot_store - where the device saves a snapshot
 * @step: the snapshot's step (it must be the one taken)
 * @offset: byte offset in the file of the weights; the state arrays follow
 * @name: the file, relative to the shared storage, NUL-terminated: letters,
 *	digits, '.', '_', '-' and '/', no ".." and not absolute; it must exist
 *	and be a regular file
 */
struct wse_link_snapshot_store {
	__le64 step;
	__le64 offset;
	char name[256];
};

/**
 * struct wse_link_params - a range of a program's parameters
 * @program: the slot
 * @which: WSE_LINK_PARAMS_*
 * @offset: byte offset
 * @length: bytes to read, or that follow (write)
 * @reserved: must be 0
 */
struct wse_link_params {
	__le32 program;
	__le32 which;
	__le64 offset;
	__le32 length;
	__le32 reserved;
};

/**
 * struct wse_link_dev_stats - device counters (DEVICE_STATS)
 * @cycles: modelled cycles of every run since the link came up
 * @est_cycles: the compiler's estimate for the same runs
 * @steps: steps run
 * @samples: samples processed
 * @sram_used: SRAM held by loaded programs
 * @stream_bytes_in: bytes taken from the host on streams
 * @stream_bytes_out: bytes sent to the host on streams
 * @programs: programs loaded now
 * @reserved: must be 0
 */
struct wse_link_dev_stats {
	__le64 cycles;
	__le64 est_cycles;
	__le64 steps;
	__le64 samples;
	__le64 sram_used;
	__le64 stream_bytes_in;
	__le64 stream_bytes_out;
	__le32 programs;
	__le32 reserved;
};

/**
 * struct wse_link_region_map - a shared-memory region (REGION_MAP)
 * @region: the id requests name it by, 1 .. WSE_LINK_REGIONS_MAX; mapping
 *	an id again replaces the mapping
 * @flags: must be 0
 * @size: bytes of the region, a multiple of 4096, at most 2^40
 * @nonce: must equal the first 8 bytes of the region, which its creator
 *	wrote there: a region of the same name on another machine does not
 *	match
 * @name: the POSIX shared-memory name, "/" and then [A-Za-z0-9._-],
 *	NUL-padded
 */
struct wse_link_region_map {
	__le32 region;
	__le32 flags;
	__le64 size;
	__le64 nonce;
	char name[40];
};

#define WSE_LINK_REGIONS_MAX		16

/**
 * struct wse_link_region_ref - where in a mapped region a transfer's data is
 * @region: a region id mapped on this link
 * @reserved: must be 0
 * @offset: byte offset of the data; with the transfer's length inside
 *	the region, past its first 4096 bytes (the creator's header)
 */
struct wse_link_region_ref {
	__le32 region;
	__le32 reserved;
	__le64 offset;
};

/**
 * struct wse_link_region_done - STREAM_READ_REGION's reply
 * @length: bytes the device put at the region reference
 * @reserved: must be 0
 */
struct wse_link_region_done {
	__le32 length;
	__le32 reserved;
};

/**
 * struct wse_link_appliance_hello - HELLO reply appendix of an appliance
 * @systems: CS systems the appliance holds, 1 .. WSE_LINK_APPLIANCE_SYSTEMS_MAX;
 *	&struct wse_link_appliance_system of each follows
 * @reserved: must be 0
 * @memoryx_capacity: bytes of weights and optimizer state MemoryX holds at most
 *
 * Sent after &struct wse_link_hello_reply only to a host whose HELLO
 * offered WSE_LINK_CAP_APPLIANCE, by a device that offers it too.
 */
struct wse_link_appliance_hello {
	__le32 systems;
	__le32 reserved;
	__le64 memoryx_capacity;
};

#define WSE_LINK_APPLIANCE_SYSTEMS_MAX	16

/**
 * struct wse_link_appliance_system - one system of an appliance, as HELLO says
 * @device_id: the system's own device id
 * @wafer_width: PEs per row of its mesh
 * @wafer_height: rows of PEs
 * @sram_per_pe: bytes of SRAM per PE
 * @clock_khz: its modelled clock
 * @reserved: must be 0
 */
struct wse_link_appliance_system {
	__le64 device_id;
	__le32 wafer_width;
	__le32 wafer_height;
	__le64 sram_per_pe;
	__le32 clock_khz;
	__le32 reserved;
};

/**
 * struct wse_link_job - what the next program on an appliance runs on
 * (PARAMS_WRITE, WSE_LINK_PARAMS_JOB; slot 0: every slot's default, or the
 * slot whose next PROGRAM_LOAD it is for)
 * @systems: systems it is spread over, 1 .. the appliance's; a layer
 *	pipelined program runs on one
 * @flags: must be 0
 * @reserved: must be 0
 */
struct wse_link_job {
	__le32 systems;
	__le32 flags;
	__le64 reserved;
};

/* Where the samples of the next RUN come from (&struct wse_link_input). */
#define WSE_LINK_INPUT_STREAM		0	/* the host's STREAM_WRITEs */
#define WSE_LINK_INPUT_DATASET		1	/* the appliance's input workers */
#define WSE_LINK_INPUT_SHUFFLE		0x1	/* a fresh shuffle of the epoch */

/**
 * struct wse_link_input - the samples of a program's next RUNs (PARAMS_WRITE,
 * WSE_LINK_PARAMS_INPUT)
 * @source: WSE_LINK_INPUT_*
 * @flags: WSE_LINK_INPUT_SHUFFLE or 0
 * @seed: the shuffle seed
 * @epoch: the epoch whose order is taken (0-based)
 * @first: the first position in that order
 * @count: samples of the dataset used (its first @count), 0: all
 * @reserved: must be 0
 * @dataset: IDX files' directory, relative to the appliance's shared
 *	directory, NUL-padded
 * @split: the files' prefix ("train", "t10k"), NUL-padded
 *
 * With WSE_LINK_INPUT_DATASET the input workers read the samples and labels
 * of the following RUNs from the dataset, batch after batch from position
 * @first of the order, and the host writes none.
 */
struct wse_link_input {
	__le32 source;
	__le32 flags;
	__le64 seed;
	__le32 epoch;
	__le32 first;
	__le32 count;
	__le32 reserved;
	char dataset[192];
	char split[32];
};

/* States of an appliance's parts (&struct wse_link_appliance_info). */
#define WSE_LINK_PART_UP		1	/* connected and answering */
#define WSE_LINK_PART_DOWN		2	/* lost; reason says why */
#define WSE_LINK_PART_IDLE		3	/* not connected: no job uses it yet */

/**
 * struct wse_link_appliance_info - an appliance's parts and counters
 * (PARAMS_READ, WSE_LINK_PARAMS_APPLIANCE, slot 0)
 * @systems: systems; &struct wse_link_appliance_part of each follows
 * @job_systems: systems the current program runs on (0: none loaded)
 * @memoryx_state: WSE_LINK_PART_*
 * @swarmx_state: WSE_LINK_PART_*
 * @memoryx_capacity: bytes MemoryX may hold
 * @memoryx_held: bytes of weights and optimizer state it holds
 * @memoryx_updates: layer updates it has applied
 * @swarmx_broadcast: weight bytes sent to the systems
 * @swarmx_reduced: gradient bytes summed
 * @input_samples: samples the input workers read
 * @input_state: WSE_LINK_PART_*
 * @reserved: must be 0
 * @reason: why the last part that went down went, NUL-padded
 */
struct wse_link_appliance_info {
	__le32 systems;
	__le32 job_systems;
	__le32 memoryx_state;
	__le32 swarmx_state;
	__le64 memoryx_capacity;
	__le64 memoryx_held;
	__le64 memoryx_updates;
	__le64 swarmx_broadcast;
	__le64 swarmx_reduced;
	__le64 input_samples;
	__le32 input_state;
	__le32 reserved;
	char reason[128];
};

/**
 * struct wse_link_appliance_part - one system in &struct wse_link_appliance_info
 * @device_id: its device id
 * @state: WSE_LINK_PART_*
 * @reserved: must be 0
 * @frames_tx: frames the appliance sent it
 * @frames_rx: frames it answered with
 * @bytes_tx: bytes sent to it, headers included
 * @bytes_rx: bytes received from it
 * @steps: steps it ran
 * @samples: samples it processed
 * @address: its link address, NUL-padded
 * @reason: why it went down, NUL-padded
 */
struct wse_link_appliance_part {
	__le64 device_id;
	__le32 state;
	__le32 reserved;
	__le64 frames_tx;
	__le64 frames_rx;
	__le64 bytes_tx;
	__le64 bytes_rx;
	__le64 steps;
	__le64 samples;
	char address[64];
	char reason[64];
};

#endif /* __UAPI_WSE_LINK_H__ */
