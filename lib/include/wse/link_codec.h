/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse/link_codec.h - userspace half of the wse link protocol (library
 * wselink): CRC32C, frame header encode/validate, payload helpers, frame I/O
 * on a blocking or non-blocking stream socket with a deadline, link
 * addresses, and a generator of malformed frames for fault injection.
 *
 * The wire format is uapi/wse_link.h; Documentation/link-protocol.rst is the
 * specification. Every function here works in host byte order on the
 * "decoded" structures and converts at the edge.
 */
#ifndef WSE_LINK_CODEC_H
#define WSE_LINK_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wse/crc32c.h"
#include "wse_link.h"

/* ------------------------------------------------------- frame header */

#define WSE_LINK_HDR_SIZE	((uint32_t)sizeof(struct wse_link_hdr))
#define WSE_LINK_HDR_CRC_LEN	((uint32_t)offsetof(struct wse_link_hdr, hdr_crc))

/* A frame header in host byte order (magic and hdr_crc are implied). */
struct wse_link_frame {
	uint8_t version;
	uint8_t opcode;
	uint16_t flags;
	uint16_t queue;
	uint32_t tag;
	uint32_t length;
	uint32_t data_crc;
};

/* Which receive check a frame failed, in the order they are applied. */
enum wse_link_check {
	WSE_LINK_CHECK_OK = 0,
	WSE_LINK_CHECK_MAGIC,
	WSE_LINK_CHECK_HDR_CRC,
	WSE_LINK_CHECK_VERSION,
	WSE_LINK_CHECK_FLAGS,
	WSE_LINK_CHECK_RESERVED,
	WSE_LINK_CHECK_LENGTH,
	WSE_LINK_CHECK_DATA_CRC,
	WSE_LINK_CHECK_PAYLOAD,		/* opcode-specific payload size/content */
	WSE_LINK_CHECK_IO,		/* the socket failed, closed or timed out */
};

/*
 * What went wrong: @code is an enum wse_link_status_code (E_PROTO or E_CRC
 * for a malformed frame), @check the failed check, @text a sentence for logs
 * and ERROR frames.
 */
struct wse_link_err {
	uint32_t code;
	enum wse_link_check check;
	char text[200];
};

/* What a receiver accepts: the header version and the largest payload. */
struct wse_link_rx_rules {
	uint8_t version;
	uint32_t max_payload;
};

/* Fills @raw from @f (magic, @f's fields, then hdr_crc). */
void wse_link_hdr_encode(struct wse_link_hdr *raw, const struct wse_link_frame *f);

/*
 * Validates @raw against @rules in the specified order (magic, header CRC,
 * version, flags, reserved, length) and decodes it into @f. Returns 0, or
 * WSE_LINK_E_PROTO / WSE_LINK_E_CRC with @err filled.
 */
int wse_link_hdr_decode(const struct wse_link_hdr *raw,
			const struct wse_link_rx_rules *rules,
			struct wse_link_frame *f, struct wse_link_err *err);

/* Compares the payload CRC @crc with @f->data_crc: 0 or WSE_LINK_E_CRC. */
int wse_link_check_data_crc(const struct wse_link_frame *f, uint32_t crc,
			    struct wse_link_err *err);

/* Sets @err and returns @code (for one-line error returns). */
int wse_link_err_set(struct wse_link_err *err, uint32_t code,
		     enum wse_link_check check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

const char *wse_link_op_name(unsigned int opcode);
const char *wse_link_status_name(unsigned int code);
const char *wse_link_check_name(enum wse_link_check check);

/* ------------------------------------------------------------ payloads */

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
 * [WSE_LINK_PAYLOAD_MIN, WSE_LINK_PAYLOAD_LIMIT]. Returns 0 or a status code.
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
 * reply data on success, a text on failure). Returns 0 or WSE_LINK_E_PROTO
 * if the payload is too short or the reserved field is set.
 */
int wse_link_status_decode(const void *buf, size_t len, uint32_t *status,
			   const uint8_t **rest, size_t *rest_len,
			   struct wse_link_err *err);

/* Writes an ERROR payload (code, text) into @buf; returns its length. */
size_t wse_link_error_encode(void *buf, size_t cap, uint32_t code, const char *text);
/* Decodes an ERROR payload; @text gets a NUL-terminated, printable copy. */
int wse_link_error_decode(const void *buf, size_t len, uint32_t *code,
			  char *text, size_t text_cap, struct wse_link_err *err);

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
};

struct wse_link_run_info {
	uint32_t program;
	uint32_t kind;		/* WSE_LINK_RUN_* */
	uint32_t steps;
	uint32_t batch;
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
 * 0 or WSE_LINK_E_PROTO with @err set. Replies (program info, run result,
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

/* ----------------------------------------------------------- frame I/O */

/* CLOCK_MONOTONIC in milliseconds. */
int64_t wse_link_now_ms(void);

/*
 * Writes all of @iov to @fd (blocking or non-blocking) before the absolute
 * deadline @deadline_ms (wse_link_now_ms() time; < 0 waits for ever).
 * Returns 0 or a negative errno (-ETIMEDOUT, -EPIPE, ...), with @err set.
 */
int wse_link_write_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms,
		       struct wse_link_err *err);
/* Reads exactly @len bytes; -EPIPE when the peer closed first. */
int wse_link_read_all(int fd, void *buf, size_t len, int64_t deadline_ms,
		      struct wse_link_err *err);

/*
 * Sends one frame: computes @f->length and @f->data_crc from the payload
 * @iov (may be NULL/0), encodes the header and writes everything within
 * @timeout_ms. Returns 0 or a negative errno.
 */
int wse_link_send(int fd, struct wse_link_frame *f, const struct iovec *iov,
		  int iovcnt, int timeout_ms, struct wse_link_err *err);

/*
 * Receives one frame into @f and its payload into @buf (@cap bytes; a
 * payload larger than @cap but within @rules is an E_PROTO error), checking
 * header and data CRC. Returns 0, a negative errno for I/O trouble, or a
 * positive status code (E_PROTO/E_CRC) for a malformed frame.
 */
int wse_link_recv(int fd, const struct wse_link_rx_rules *rules,
		  struct wse_link_frame *f, void *buf, size_t cap,
		  int timeout_ms, struct wse_link_err *err);

/* ------------------------------------------------------------ addresses */

/* "tcp:HOST:PORT" (HOST may be [v6]) or "unix:PATH". */
struct wse_link_addr {
	bool is_unix;
	char host[256];
	char port[8];
	char path[108];
};

/* Returns 0, or -1 with a sentence in @err. */
int wse_link_addr_parse(const char *spec, struct wse_link_addr *addr,
			char *err, size_t errlen);
/*
 * Opens a listening socket (close-on-exec, non-blocking accept). For unix
 * addresses a stale socket file with nobody listening is replaced; a live
 * one is refused. Returns the fd or -1 with @err set.
 */
int wse_link_listen(const struct wse_link_addr *addr, char *err, size_t errlen);
/* Connects within @timeout_ms; returns a blocking fd or -1 with @err set. */
int wse_link_connect(const struct wse_link_addr *addr, int timeout_ms,
		     char *err, size_t errlen);
/* The local TCP port of a bound socket, or -1. */
int wse_link_local_port(int fd);
/* Large buffers and no Nagle delay: the link carries bulk and small frames. */
void wse_link_tune_socket(int fd);
/* "127.0.0.1:40000", "[::1]:40000" or "unix peer pid N" for @fd's peer. */
void wse_link_peer_name(int fd, char *buf, size_t len);

/* ---------------------------------------------------------- host client */

/* Requests a client may have in flight at once (wse_link_client_submit). */
#define WSE_LINK_CLIENT_MAX_PENDING	32

/* A submitted request, and its response once it arrived out of turn. */
struct wse_link_client_pending {
	uint32_t tag;
	uint8_t opcode;
	uint16_t queue;
	bool arrived;
	uint8_t *payload;	/* the whole response payload (malloc) */
	size_t len;
};

/*
 * A minimal host side of the link, for tools, tests and benchmarks.
 * wse_link_client_call() has one request in flight; submit/wait have up
 * to WSE_LINK_CLIENT_MAX_PENDING, answered in any order (the device
 * answers in completion order). (The kernel driver is the real host.)
 */
struct wse_link_client {
	int fd;
	int timeout_ms;			/* per request */
	struct wse_link_rx_rules rules;	/* after HELLO: negotiated */
	uint32_t next_tag;
	struct wse_link_device_info dev;	/* from the HELLO reply */
	uint32_t peer_error;		/* code of an ERROR frame received, 0: none */
	bool peer_shutdown;		/* the device sent SHUTDOWN (answered) */
	uint8_t *buf;			/* response payloads */
	size_t cap;
	struct wse_link_client_pending pending[WSE_LINK_CLIENT_MAX_PENDING];
	unsigned int npending;
};

/*
 * Binds @cl to connected @fd and performs the handshake. Returns 0 with
 * *@status the HELLO status (on failure @text holds the device's reason),
 * a negative errno for I/O, or a positive code for a protocol violation by
 * the device (or an ERROR frame: cl->peer_error is then set). The caller
 * closes @fd; wse_link_client_free() releases the buffer.
 */
int wse_link_client_hello(struct wse_link_client *cl, int fd,
			  const struct wse_link_hello_info *hello, int timeout_ms,
			  uint32_t *status, char *text, size_t textlen,
			  struct wse_link_err *err);
void wse_link_client_free(struct wse_link_client *cl);

/*
 * Sends request @opcode on @queue with payload @iov and waits for its
 * response, answering device KEEPALIVEs meanwhile. On return 0, *@status is
 * the response status and the rest of the payload is at cl->buf + 8 with
 * *@rest_len bytes. Errors as for wse_link_client_hello(); a SHUTDOWN
 * from the device is answered and gives -ESHUTDOWN.
 */
int wse_link_client_call(struct wse_link_client *cl, uint8_t opcode, uint16_t queue,
			 const struct iovec *iov, int iovcnt, uint32_t *status,
			 size_t *rest_len, struct wse_link_err *err);

/*
 * Sends request @opcode on @queue without waiting for its response;
 * *@tag identifies it for wse_link_client_wait(). -EBUSY when
 * WSE_LINK_CLIENT_MAX_PENDING requests are already in flight.
 */
int wse_link_client_submit(struct wse_link_client *cl, uint8_t opcode, uint16_t queue,
			   const struct iovec *iov, int iovcnt, uint32_t *tag,
			   struct wse_link_err *err);
/*
 * Waits up to @timeout_ms (< 0: cl->timeout_ms per frame, for ever in
 * total) for the response to @tag, keeping responses to other submitted
 * requests that arrive meanwhile. Returns as wse_link_client_call() (the
 * payload after the status at cl->buf + 8), or -ETIMEDOUT, with the
 * request still pending, when nothing came in time.
 */
int wse_link_client_wait(struct wse_link_client *cl, uint32_t tag, int timeout_ms,
			 uint32_t *status, size_t *rest_len, struct wse_link_err *err);

/* The text of a failure response, as left in cl->buf by call or wait. */
void wse_link_client_text(const struct wse_link_client *cl, size_t rest_len,
			  char *text, size_t textlen);

/* MEM_WRITE / MEM_READ of @len bytes at @addr via wse_link_client_call();
 * a failure status leaves its text in @text.
 */
int wse_link_client_mem_write(struct wse_link_client *cl, uint16_t queue, uint64_t addr,
			      const void *data, uint32_t len, uint32_t *status,
			      char *text, size_t textlen, struct wse_link_err *err);
int wse_link_client_mem_read(struct wse_link_client *cl, uint16_t queue, uint64_t addr,
			     void *data, uint32_t len, uint32_t *status,
			     char *text, size_t textlen, struct wse_link_err *err);

/* ----------------------------------------------------- malformed frames */

/* Kinds of broken frame, for fault injection and the hostile peer. */
enum wse_link_malform {
	WSE_LINK_MAL_BAD_MAGIC,
	WSE_LINK_MAL_BAD_HDR_CRC,
	WSE_LINK_MAL_BAD_VERSION,
	WSE_LINK_MAL_BAD_FLAGS,
	WSE_LINK_MAL_BAD_RESERVED,
	WSE_LINK_MAL_HUGE_LENGTH,
	WSE_LINK_MAL_BAD_DATA_CRC,
	WSE_LINK_MAL_UNKNOWN_OPCODE,
	WSE_LINK_MAL_UNKNOWN_TAG,
	WSE_LINK_MAL_SHORT_STATUS,
	WSE_LINK_MAL_TRUNCATED,
	WSE_LINK_MAL_RANDOM,
	WSE_LINK_MAL_COUNT
};

/* Name of a kind ("bad-magic", ...), and back (-1 if unknown). */
const char *wse_link_malform_name(enum wse_link_malform kind);
int wse_link_malform_parse(const char *name);

/* Buffer size that always holds a generated frame. */
#define WSE_LINK_MALFORM_MAX	(WSE_LINK_HDR_SIZE + 512U)

/*
 * Builds one broken frame of @kind into @buf (WSE_LINK_MALFORM_MAX bytes) as
 * if it were a response to a request with @opcode and @tag (a frame that
 * is only broken in one way otherwise looks legitimate). @rng is a
 * wse_splitmix64() state. Returns the byte count; *@close_after is set when
 * the frame is deliberately cut short and the sender must close the stream
 * after it for the receiver to see the truncation.
 */
size_t wse_link_malform_build(enum wse_link_malform kind, uint64_t *rng,
			      uint8_t version, uint8_t opcode, uint32_t tag,
			      uint8_t *buf, bool *close_after);

#endif /* WSE_LINK_CODEC_H */
