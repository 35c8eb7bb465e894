/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wse: the link to a device's firmware, over a stream socket.
 */
#ifndef __WSE_LINK_H__
#define __WSE_LINK_H__

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "../uapi/wse_genl.h"
#include "../uapi/wse_link.h"

#define WSE_KEEPALIVE_MS_DEFAULT	5000
#define WSE_KEEPALIVE_MS_MIN		100
#define WSE_KEEPALIVE_MS_MAX		60000
/* Missed keepalive intervals before the link is declared dead. */
#define WSE_KEEPALIVE_MISSES		3

struct wse_link_stats {
	atomic64_t frames_tx;
	atomic64_t frames_rx;
	atomic64_t bytes_tx;
	atomic64_t bytes_rx;
	atomic64_t crc_errors;
	atomic64_t proto_errors;
	atomic64_t timeouts;
	atomic64_t keepalives;
	atomic64_t stale_responses;
	atomic64_t link_downs;
};

/**
 * struct wse_link - the link to a device's firmware: the socket, what
 * goes out on it and comes back, the requests waiting for answers, and
 * the keepalive. It is part of its device (&struct wse_device.link) and
 * lives as long as the device record; a test device's link has no socket
 * and stays in &WSE_LINK_STATE_NONE.
 *
 * Set by the handshake and immutable once the device is published:
 * @version, @max_payload, @fw_caps, @keepalive_ms, @peer.
 */
struct wse_link {
	/** @version: negotiated protocol version. */
	u8 version;
	/** @max_payload: largest payload either side may send. */
	u32 max_payload;
	/** @fw_caps: WSE_LINK_CAP_* the firmware offered. */
	u32 fw_caps;
	/** @keepalive_ms: interval of keepalive requests. */
	u32 keepalive_ms;
	/** @peer: the firmware's address, for people. */
	char peer[80];

	/**
	 * @sock: the socket; NULL for a test device. Set by the handshake,
	 * shut down when the link dies, released with the device.
	 */
	struct socket *sock;
	/**
	 * @tx_lock: serialises frames sent on @sock, and is held by whoever
	 * takes requests off @tx_queue (a sender), so frames leave in the
	 * order they were queued. Never taken under @lock.
	 */
	struct mutex tx_lock;
	/** @tx_err: a send failed: queued frames are dropped; @tx_lock. */
	int tx_err;
	/**
	 * @tx_cur: the request whose frame is off @tx_queue and partly sent,
	 * or NULL; @tx_lock. Its rest goes before any other frame.
	 */
	struct wse_link_req *tx_cur;
	/** @tx_msg: what is left to send of @tx_cur's frame; @tx_lock. */
	struct msghdr tx_msg;
	/** @tx_work: sends what submitters that may not block queued. */
	struct work_struct tx_work;
	/** @rx_thread: reads and dispatches every frame after the handshake. */
	struct task_struct *rx_thread;
	/** @rxbuf: payload buffer, used only by whoever receives (@rx_thread). */
	void *rxbuf;
	/** @keepalive_work: sends keepalives, declares a silent peer dead. */
	struct delayed_work keepalive_work;
	/** @last_rx: jiffies of the last frame received (READ/WRITE_ONCE). */
	unsigned long last_rx;

	/**
	 * @lock: protects @state, @dead_reason, @tx_queue and
	 * @keepalives_unanswered. Taken outside @pending's lock, never inside.
	 */
	spinlock_t lock;
	/** @state: an &enum wse_link_state. */
	enum wse_link_state state;
	/** @dead_reason: why the link died, for sysfs and events. */
	const char *dead_reason;
	/**
	 * @next_tag: where the search for the next free tag starts; @pending's
	 * lock. Tags are 1..@tag_max; one still in @pending is never reused.
	 */
	u32 next_tag;
	/** @tag_max: the highest tag, U32_MAX but in tests; set at init. */
	u32 tag_max;
	/** @keepalives_unanswered: keepalives sent whose answer has not come. */
	u32 keepalives_unanswered;
	/**
	 * @pending: tag -> every request the firmware may still answer: one
	 * waiting for its answer (the &struct wse_link_req), one its owner
	 * gave up on (the request tagged WSE_LINK_ABANDONED: the link keeps
	 * it, and its tag, until the firmware answers), or a tag reserved by
	 * a submission under way (a zero entry). Its own lock guards it.
	 */
	struct xarray pending;
	/**
	 * @tx_queue: requests whose frames wait to be sent, oldest first.
	 * Added to under @lock (once the link is down, only to be dropped);
	 * taken off only by a holder of @tx_lock, under @lock too.
	 */
	struct list_head tx_queue;

	/** @stats: the link's counters; reset by WSE_CMD_RESET. */
	struct wse_link_stats stats;
};

/**
 * struct wse_link_req - a request to the firmware and its answer
 * @opcode: what is asked; the response must carry the same
 * @queue: the device queue it goes to
 * @tag: set by wse_link_submit()
 * @status: 0 or a negative errno, once finished
 * @resp: where the reply data (after &struct wse_link_status) goes
 * @resp_cap: room at @resp; a longer reply fails the request with -EPROTO
 * @resp_len: reply bytes written
 * @done: called when the request is finished, or NULL to complete @wait;
 *	not called for a request its owner took back (wse_link_abandon())
 * @wait: completed when finished, if @done is NULL
 * @retire: called once for every request wse_link_submit() accepted,
 *	after @done (or instead of it, if taken back), when the firmware has
 *	answered it or never will (the link failed, or the frame was never
 *	sent): the link no longer holds it. @status is the firmware's answer
 *	then, or why none will come. Process context, no link lock held.
 * @tx_done: called once the frame is sent or dropped: the sender no
 *	longer uses the request, @tx_vec or what it points to. Process
 *	context, none of the link's locks held.
 * @tx_node: on &wse_link.tx_queue
 * @tx_queued: on &wse_link.tx_queue, no sender has taken it; &wse_link.lock
 * @tx_started: a sender took its frame (some of it may be out); &wse_link.lock
 * @tx_hdr: the frame header, built when the request is queued
 * @tx_vec: the frame: @tx_hdr, then the payload
 * @tx_nvec: entries in @tx_vec
 *
 * Ownership: whoever takes the request out of &wse_link.pending (the
 * receiver, a link failure) finishes it; wse_link_abandon() hands it back
 * to its owner while the link keeps holding it. The frame is the sender's
 * until @tx_done runs, which may be after the answer, and the link's until
 * @retire: the request must outlive both.
 */
struct wse_link_req {
	u8 opcode;
	u16 queue;
	u32 tag;
	int status;
	void *resp;
	size_t resp_cap;
	size_t resp_len;
	void (*done)(struct wse_link_req *req);
	struct completion wait;
	void (*retire)(struct wse_link_req *req);
	void (*tx_done)(struct wse_link_req *req);
	struct list_head tx_node;
	bool tx_queued;
	bool tx_started;
	struct wse_link_hdr tx_hdr;
	struct kvec tx_vec[4];
	unsigned int tx_nvec;
};

void wse_link_init(struct wse_link *link);
void wse_link_destroy(struct wse_link *link);

int wse_link_bind(struct wse_link *link, struct socket *sock, u32 keepalive_ms,
		  long rcvtimeo);
void wse_link_unbind(struct wse_link *link);
int wse_link_send_frame(struct wse_link *link, u8 version, u8 opcode,
			const struct kvec *payload, unsigned int npayload);
int wse_link_recv_frame(struct wse_link *link, struct wse_link_hdr *hdr,
			u8 version, u32 max_payload, unsigned long deadline, const char **why);
int wse_link_start(struct wse_link *link);
void wse_link_stop(struct wse_link *link);
void wse_link_fail(struct wse_link *link, int err, const char *reason);
void wse_link_reset(struct wse_link *link);
enum wse_link_state wse_link_state(struct wse_link *link, const char **reason);
u32 wse_link_inflight(struct wse_link *link);

int wse_link_submit(struct wse_link *link, struct wse_link_req *req,
		    const struct kvec *vec, unsigned int nvec);
void wse_link_push(struct wse_link *link, bool nonblock);
bool wse_link_abandon(struct wse_link *link, struct wse_link_req *req);
bool wse_link_withdraw(struct wse_link *link, struct wse_link_req *req);

#endif /* __WSE_LINK_H__ */
