// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: the link to a device's firmware.
 *
 * Once the handshake (wse_handshake.c) has negotiated a version, a
 * receive thread reads every frame, validates it (the peer is untrusted),
 * and hands responses to the requests waiting on them by tag. A keepalive
 * worker notices a silent peer. Any failure - EOF, a socket error, a missed
 * keepalive, a protocol violation - kills the link: every request in flight
 * fails with -ENOTCONN (or the cause), waiters wake, and an event goes out.
 *
 * Requests are sent in the order they are queued: wse_link_submit() builds
 * the frame and puts it on the link's transmit queue, and the submitter
 * then pushes it out (wse_link_push()). Only a holder of tx_lock takes
 * frames off the queue, one at a time, and a frame the socket took only
 * part of is finished before any other: the wire order is the queue order.
 * Submitters never wait for the socket, where a signal would cut a frame
 * short: what it does not take at once is left to the link's transmit
 * work, which takes no signals.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <linux/un.h>
#include <net/sock.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_frame.h"
#include "wse_genl.h"
#include "wse_link.h"

/* A send that makes no progress for this long kills the link. */
#define WSE_SEND_TIMEOUT	(10 * HZ)
/* Frames a sender sends before it lets others have tx_lock. */
#define WSE_TX_BUDGET		64

/* The first request tag of a link set up from now on; 0 counts as 1.
 * Root only: tests start near the top to see the tags wrap.
 */
static unsigned int first_tag = 1;
module_param(first_tag, uint, 0600);
MODULE_PARM_DESC(first_tag, "first request tag of new links (tests of tag wraparound; default 1)");

/* The highest tag of a link set up from now on. Root only: tests make the
 * tags come round in a few requests.
 */
static unsigned int tag_max = U32_MAX;
module_param(tag_max, uint, 0600);
MODULE_PARM_DESC(tag_max, "highest request tag of new links, 2 or more (tests of tag reuse; default 4294967295)");

/* The entry of &wse_link.pending for a request its owner gave up on. */
#define WSE_LINK_ABANDONED	1

/* Tells the request's owner it is finished, with @status. */
static void wse_link_req_hand_back(struct wse_link_req *req, int status)
{
	req->status = status;
	if (req->done)
		req->done(req);
	else
		complete(&req->wait);
}

/*
 * The firmware answered the request, or never will: hand it back to its
 * owner (unless the owner gave up on it) and let it go. Called once, by
 * whoever took it out of &wse_link.pending.
 */
static void wse_link_req_end(struct wse_link_req *req, int status, bool abandoned)
{
	if (abandoned)
		req->status = status;
	else
		wse_link_req_hand_back(req, status);
	req->retire(req);
}

/* Marks a request still waiting as given up on, in the table; whether it was. */
static bool wse_link_mark_abandoned(struct wse_link *link, struct wse_link_req *req)
{
	return req->tag &&
	       xa_cmpxchg(&link->pending, req->tag, req, xa_tag_pointer(req, WSE_LINK_ABANDONED),
			  0) == req;
}

/* A request of @link's pending table and whether its owner gave up on it. */
static struct wse_link_req *wse_link_entry_req(void *entry, bool *abandoned)
{
	*abandoned = xa_pointer_tag(entry) == WSE_LINK_ABANDONED;
	return xa_untag_pointer(entry);
}

static void wse_link_tx_work(struct work_struct *work);
static void wse_link_tx_kick(struct wse_link *link);

/* Sets up a device's link: no socket yet, nothing in flight. */
void wse_link_init(struct wse_link *link)
{
	link->state = WSE_LINK_STATE_NONE;
	link->tag_max = max(READ_ONCE(tag_max), 2U);
	link->next_tag = READ_ONCE(first_tag) ?: 1;
	mutex_init(&link->tx_lock);
	INIT_WORK(&link->tx_work, wse_link_tx_work);
	spin_lock_init(&link->lock);
	xa_init_flags(&link->pending, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&link->tx_queue);
}

/*
 * Lets go of what the link holds, with the last reference to its device.
 * The socket is released only here: a caller holding a reference may still
 * be about to send or shut down, and finds a shut-down socket, not a freed
 * one.
 */
void wse_link_destroy(struct wse_link *link)
{
	/* Every queued frame holds a reference to the device, through its job. */
	WARN_ON_ONCE(!list_empty(&link->tx_queue) || link->tx_cur);
	if (link->sock)
		sockfd_put(link->sock);
	xa_destroy(&link->pending);
	kvfree(link->rxbuf);
}

enum wse_link_state wse_link_state(struct wse_link *link, const char **reason)
{
	enum wse_link_state state;

	spin_lock(&link->lock);
	state = link->state;
	if (reason)
		*reason = link->dead_reason;
	spin_unlock(&link->lock);
	return state;
}

u32 wse_link_inflight(struct wse_link *link)
{
	struct wse_link_req *req;
	unsigned long tag;
	u32 n = 0;

	xa_lock(&link->pending);
	xa_for_each(&link->pending, tag, req)
		n++;
	xa_unlock(&link->pending);
	return n;
}

/* Fails every request in flight with @err; the firmware answers none. */
static void wse_link_fail_pending(struct wse_link *link, int err)
{
	struct wse_link_req *req;
	unsigned long tag;
	bool abandoned;
	void *entry;

	xa_for_each(&link->pending, tag, entry) {
		entry = xa_erase(&link->pending, tag);
		if (!entry)
			continue;
		req = wse_link_entry_req(entry, &abandoned);
		wse_link_req_end(req, err, abandoned);
	}
}

/**
 * wse_link_fail() - kill the link
 * @link: the link
 * @err: the cause, a negative errno
 * @reason: a constant string saying why, for people
 *
 * Safe from any process context without the link's locks held; only the
 * first call has an effect. The socket is shut down so a receive or send
 * blocked on it returns; the socket itself is released at detach.
 */
void wse_link_fail(struct wse_link *link, int err, const char *reason)
{
	spin_lock(&link->lock);
	if (link->state != WSE_LINK_STATE_UP) {
		spin_unlock(&link->lock);
		return;
	}
	link->state = WSE_LINK_STATE_DEAD;
	link->dead_reason = reason;
	spin_unlock(&link->lock);

	atomic64_inc(&link->stats.link_downs);
	if (link->sock)
		kernel_sock_shutdown(link->sock, SHUT_RDWR);
	wse_link_fail_pending(link, -ENOTCONN);
	/* The frames still queued - a send that failed leaves those behind it -
	 * go back to their owners now: the transmit work sends nothing on a
	 * dead link, it drops.
	 */
	wse_link_tx_kick(link);
	pr_warn_ratelimited("wse %u: link to %s down: %s (%d)\n",
			    wse_link_device(link)->index, link->peer, reason, err);
	wse_genl_notify(wse_link_device(link), WSE_EVENT_LINK_DOWN, err, reason);
}

/*
 * Sends what is left of @msg. Blocking, it waits for room for as long as
 * the socket's send timeout; non-blocking, it returns -EAGAIN once the
 * socket is full, @msg advanced past what went out. @more: another frame
 * follows at once, so a short segment may wait for it. Returns 0, -EAGAIN
 * (only non-blocking) or another negative errno.
 */
static int wse_link_sendmsg(struct wse_link *link, struct msghdr *msg, bool more, bool block)
{
	int ret;

	while (msg_data_left(msg)) {
		msg->msg_flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0) | (block ? 0 : MSG_DONTWAIT);
		ret = sock_sendmsg(link->sock, msg);
		if (ret > 0)
			continue;
		if (ret == -EAGAIN)
			return block ? -ETIMEDOUT : -EAGAIN;
		return ret ?: -EPIPE;
	}
	return 0;
}

/* Sends one frame built here; the caller holds tx_lock, and no frame is
 * half sent. @block: wait for room in the socket; otherwise what does not
 * fit at once is not sent (-EAGAIN), which only a link about to be shut
 * down may afford.
 */
static int wse_link_send_locked(struct wse_link *link, u8 version, u8 opcode,
				u16 flags, u16 queue, u32 tag,
				const struct kvec *payload, unsigned int npayload, bool block)
{
	struct kvec vec[4];
	struct wse_link_hdr hdr;
	struct msghdr msg = { };
	size_t total = sizeof(hdr);
	unsigned int i;
	int ret;

	if (WARN_ON_ONCE(npayload > ARRAY_SIZE(vec) - 1))
		return -EINVAL;

	wse_frame_build(&hdr, version, opcode, flags, queue, tag, payload, npayload);
	vec[0].iov_base = &hdr;
	vec[0].iov_len = sizeof(hdr);
	for (i = 0; i < npayload; i++) {
		vec[i + 1] = payload[i];
		total += payload[i].iov_len;
	}

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, vec, npayload + 1, total);
	ret = wse_link_sendmsg(link, &msg, false, block);
	if (ret)
		return ret;
	atomic64_inc(&link->stats.frames_tx);
	atomic64_add(total, &link->stats.bytes_tx);
	return 0;
}

static size_t wse_link_req_frame_len(const struct wse_link_req *req)
{
	return sizeof(req->tx_hdr) + le32_to_cpu(req->tx_hdr.length);
}

/*
 * Sends the rest of the frame of &wse_link.tx_cur, if there is one; the
 * caller holds tx_lock. Once the frame is sent, or dropped (the link is
 * down, a send failed), the request goes on @done, for the caller to hand
 * back once tx_lock is released.
 *
 * Return: 0, -EAGAIN (not @block: the socket is full and the frame still
 * half sent), or the error a send failed with, which the caller must fail
 * the link with; every frame after it is dropped.
 */
static int wse_link_tx_continue(struct wse_link *link, struct list_head *done, bool block)
{
	struct wse_link_req *req = link->tx_cur;
	bool more, up;
	int ret = 0;

	lockdep_assert_held(&link->tx_lock);
	if (!req)
		return 0;
	spin_lock(&link->lock);
	more = !list_empty(&link->tx_queue);
	up = link->state == WSE_LINK_STATE_UP;
	spin_unlock(&link->lock);

	if (up && !link->tx_err) {
		ret = wse_link_sendmsg(link, &link->tx_msg, more, block);
		if (ret == -EAGAIN)
			return ret;
		if (ret) {
			link->tx_err = ret;
		} else {
			atomic64_inc(&link->stats.frames_tx);
			atomic64_add(wse_link_req_frame_len(req), &link->stats.bytes_tx);
		}
	}
	link->tx_cur = NULL;
	list_add_tail(&req->tx_node, done);
	return ret;
}

/*
 * Sends the queued frames in queue order, each to its end, behind the one
 * half sent; the caller holds tx_lock. Frames done with go on @done, as
 * in wse_link_tx_continue(), which says what the return values mean; 0
 * here means the queue is empty, and -EAGAIN also that WSE_TX_BUDGET
 * frames went out and more wait: the caller lets go of tx_lock, so that
 * detach, keepalives and answers to the firmware are not held up by a
 * queue that others keep filling.
 */
static int wse_link_tx_drain(struct wse_link *link, struct list_head *done, bool block)
{
	struct wse_link_req *req;
	unsigned int sent = 0;
	int ret;

	for (;;) {
		ret = wse_link_tx_continue(link, done, block);
		if (ret)
			return ret;
		if (++sent > WSE_TX_BUDGET)
			return -EAGAIN;
		spin_lock(&link->lock);
		req = list_first_entry_or_null(&link->tx_queue, struct wse_link_req, tx_node);
		if (req) {
			list_del_init(&req->tx_node);
			req->tx_queued = false;
			req->tx_started = true;
		}
		spin_unlock(&link->lock);
		if (!req)
			return 0;
		iov_iter_kvec(&link->tx_msg.msg_iter, ITER_SOURCE, req->tx_vec, req->tx_nvec,
			      wse_link_req_frame_len(req));
		link->tx_cur = req;
	}
}

/* Hands requests back whose frames are done with. After the last call
 * a request's link may be gone.
 */
static void wse_link_tx_finish(struct list_head *done)
{
	struct wse_link_req *req, *next;

	list_for_each_entry_safe(req, next, done, tx_node)
		req->tx_done(req);
}

/* Makes sure the transmit work runs after now; it holds a reference to
 * the device.
 */
static void wse_link_tx_kick(struct wse_link *link)
{
	struct wse_device *wdev = wse_link_device(link);

	wse_device_get(wdev);
	if (!queue_work(wse_wq, &link->tx_work))
		wse_device_put(wdev);
}

/**
 * wse_link_push() - send the frames queued on a link
 * @link: the link; the caller holds a reference
 * @nonblock: do not send here: leave it to the transmit work
 *
 * Without @nonblock, the caller sends what the socket takes at once, and
 * leaves the rest to the transmit work. With it, the transmit work sends
 * everything: a submitter queueing a batch of requests has them sent
 * together, once it waits (measured: faster than sending each inline from
 * the submitter).
 *
 * The caller never waits for the socket here: a signal (or io_uring's
 * task work, which looks like one) would cut a frame short, and the
 * stream with it. Only the transmit work, which takes no signals, waits.
 * A failed send kills the link. Process context, no locks held.
 */
void wse_link_push(struct wse_link *link, bool nonblock)
{
	LIST_HEAD(done);
	int ret;

	/* Someone else sending would make the caller wait: the work goes on
	 * after them.
	 */
	if (nonblock || !mutex_trylock(&link->tx_lock)) {
		wse_link_tx_kick(link);
		return;
	}
	ret = wse_link_tx_drain(link, &done, false);
	mutex_unlock(&link->tx_lock);
	if (ret == -EAGAIN)
		wse_link_tx_kick(link);
	else if (ret)
		wse_link_fail(link, ret, "sending a request failed");
	wse_link_tx_finish(&done);
}

static void wse_link_tx_work(struct work_struct *work)
{
	struct wse_link *link = container_of(work, struct wse_link, tx_work);
	LIST_HEAD(done);
	int ret;

	mutex_lock(&link->tx_lock);
	ret = wse_link_tx_drain(link, &done, true);
	mutex_unlock(&link->tx_lock);
	if (ret == -EAGAIN)
		wse_link_tx_kick(link);
	else if (ret)
		wse_link_fail(link, ret, "sending a request failed");
	wse_link_tx_finish(&done);
	wse_device_put(wse_link_device(link));
}

/* Drops every frame still queued on a dead link, handing each back. */
static void wse_link_tx_drop(struct wse_link *link)
{
	unsigned int rounds;
	int ret;

	/* Each round moves at most WSE_TX_BUDGET frames; submit refuses new ones. */
	for (rounds = 0; rounds < 1024; rounds++) {
		LIST_HEAD(done);

		mutex_lock(&link->tx_lock);
		ret = wse_link_tx_drain(link, &done, true);
		mutex_unlock(&link->tx_lock);
		wse_link_tx_finish(&done);
		if (ret != -EAGAIN)
			break;
	}
}

/* How wse_link_send() may wait. */
enum wse_link_send_mode {
	WSE_SEND_WAIT,		/* for tx_lock and for the socket */
	WSE_SEND_TRY,		/* -EBUSY if a sender is busy; then waits for the socket */
	WSE_SEND_NOWAIT,	/* -EBUSY if a sender is busy; -EAGAIN if the socket is full */
};

/* Sends a frame that is not a request (no tag of ours, no answer awaited)
 * between two queued frames. Waiting for the socket, only from threads
 * that take no signals, or where an interrupted send may kill the link.
 * A sender counts as busy while it holds tx_lock or a frame is half sent:
 * finishing that frame could take as long as the peer wants.
 */
static int wse_link_send(struct wse_link *link, enum wse_link_send_mode mode, u8 opcode,
			 u16 flags, u16 queue, u32 tag, const struct kvec *payload,
			 unsigned int npayload)
{
	LIST_HEAD(done);
	int ret;

	if (mode == WSE_SEND_WAIT)
		mutex_lock(&link->tx_lock);
	else if (!mutex_trylock(&link->tx_lock))
		return -EBUSY;
	if (mode != WSE_SEND_WAIT && link->tx_cur) {
		mutex_unlock(&link->tx_lock);
		return -EBUSY;
	}
	ret = wse_link_tx_continue(link, &done, true);
	if (!ret)
		ret = link->tx_err ?: wse_link_send_locked(link, link->version, opcode, flags,
							   queue, tag, payload, npayload,
							   mode != WSE_SEND_NOWAIT);
	mutex_unlock(&link->tx_lock);
	wse_link_tx_finish(&done);
	return ret;
}

/**
 * wse_link_withdraw() - take a request's frame back if no sender has
 * started on it
 * @link: the link
 * @req: a request wse_link_submit() accepted
 *
 * Return: true if it did: the frame will not be sent, and @req->tx_done
 * has run here. False if the frame is being or has been sent, or dropped.
 */
bool wse_link_withdraw(struct wse_link *link, struct wse_link_req *req)
{
	bool queued;

	spin_lock(&link->lock);
	queued = req->tx_queued;
	if (queued) {
		list_del_init(&req->tx_node);
		req->tx_queued = false;
	}
	spin_unlock(&link->lock);
	if (queued)
		req->tx_done(req);
	return queued;
}

/*
 * Reads exactly @len bytes, by @deadline (jiffies) if it is not 0: the
 * socket's receive timeout is set to what is left before each read, so a
 * peer that trickles bytes cannot stretch it. Returns 0, or -ECONNRESET
 * at EOF, -ETIMEDOUT when time is up, or the socket's error.
 */
static int wse_link_recv_full(struct wse_link *link, void *buf, size_t len,
			      unsigned long deadline)
{
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	struct sock *sk = link->sock->sk;
	int ret;

	iov_iter_kvec(&msg.msg_iter, ITER_DEST, &vec, 1, len);
	while (msg_data_left(&msg)) {
		if (deadline) {
			long left = (long)(deadline - jiffies);

			if (left <= 0)
				return -ETIMEDOUT;
			lock_sock(sk);
			sk->sk_rcvtimeo = left;
			release_sock(sk);
		}
		ret = sock_recvmsg(link->sock, &msg, MSG_WAITALL);
		if (ret == 0)
			return -ECONNRESET;
		if (ret == -EAGAIN)
			return -ETIMEDOUT;
		if (ret < 0)
			return ret;
	}
	atomic64_add(len, &link->stats.bytes_rx);
	return 0;
}

/**
 * wse_link_recv_frame() - read and check one frame from the peer
 * @link: the link
 * @hdr: where the header goes; the payload goes to &wse_link.rxbuf
 * @version: the version the frame must carry
 * @max_payload: the longest payload it may carry
 * @deadline: jiffies by which the whole frame must be in, or 0 for none
 * @why: set to a constant string saying what was wrong, on failure
 *
 * Only the receive thread, or the handshake before it starts, calls this.
 *
 * Return: 0; -EBADMSG (a digest) or -EPROTO (another check), both
 * counted; -ECONNRESET at EOF; -ETIMEDOUT at the deadline; or the
 * socket's error.
 */
int wse_link_recv_frame(struct wse_link *link, struct wse_link_hdr *hdr,
			u8 version, u32 max_payload, unsigned long deadline, const char **why)
{
	int ret;

	*why = "receive failed";
	ret = wse_link_recv_full(link, hdr, sizeof(*hdr), deadline);
	if (ret)
		return ret;
	ret = wse_frame_check_hdr(hdr, version, max_payload, why);
	if (ret)
		goto bad;
	ret = wse_link_recv_full(link, link->rxbuf, le32_to_cpu(hdr->length), deadline);
	if (ret)
		return ret;
	ret = wse_frame_check_data(hdr, link->rxbuf, why);
	if (ret)
		goto bad;
	atomic64_inc(&link->stats.frames_rx);
	WRITE_ONCE(link->last_rx, jiffies);
	return 0;
bad:
	if (ret == -EBADMSG)
		atomic64_inc(&link->stats.crc_errors);
	else
		atomic64_inc(&link->stats.proto_errors);
	return ret;
}

static void wse_link_describe_peer(struct wse_link *link, struct socket *sock)
{
	struct sockaddr_storage ss = {};
	int len;

	len = kernel_getpeername(sock, (struct sockaddr *)&ss);
	if (len < 0) {
		strscpy(link->peer, "(unknown)", sizeof(link->peer));
		return;
	}
	if (ss.ss_family == AF_UNIX) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&ss;
		int pathlen = len - (int)offsetof(struct sockaddr_un, sun_path);

		pathlen = clamp(pathlen, 0, (int)sizeof(sun->sun_path));
		/* Abstract names start with NUL; print them escaped. */
		snprintf(link->peer, sizeof(link->peer), "unix:%*pE",
			 (int)strnlen(sun->sun_path, pathlen) ?: pathlen, sun->sun_path);
	} else {
		snprintf(link->peer, sizeof(link->peer), "tcp:%pISpc", &ss);
	}
}

/**
 * wse_link_bind() - give a new link its socket
 * @link: a link that has none, not started
 * @sock: a connected stream socket; the link keeps the caller's reference
 *	until wse_link_unbind() or the device goes
 * @keepalive_ms: the keepalive interval the link will use
 * @rcvtimeo: how long a receive may wait, in jiffies, until the link starts
 *
 * Return: 0 or -ENOMEM.
 */
int wse_link_bind(struct wse_link *link, struct socket *sock, u32 keepalive_ms,
		  long rcvtimeo)
{
	link->rxbuf = kvmalloc(WSE_LINK_PAYLOAD_LIMIT, GFP_KERNEL);
	if (!link->rxbuf)
		return -ENOMEM;
	link->sock = sock;
	link->keepalive_ms = keepalive_ms;
	wse_link_describe_peer(link, sock);
	lock_sock(sock->sk);
	sock->sk->sk_rcvtimeo = rcvtimeo;
	sock->sk->sk_sndtimeo = WSE_SEND_TIMEOUT;
	release_sock(sock->sk);
	return 0;
}

/* Hands the socket back to the binder, whose reference it is again. */
void wse_link_unbind(struct wse_link *link)
{
	link->sock = NULL;
}

/**
 * wse_link_send_frame() - send one frame that is not a queued request
 * @link: a bound link
 * @version: the version the header carries
 * @opcode: the frame's opcode; flags, queue and tag are 0
 * @payload: the payload
 * @npayload: entries in @payload (at most 3)
 *
 * Waits for the socket, up to its send timeout. For the handshake, before
 * anything else uses the link.
 *
 * Return: 0 or a negative errno.
 */
int wse_link_send_frame(struct wse_link *link, u8 version, u8 opcode,
			const struct kvec *payload, unsigned int npayload)
{
	int ret;

	mutex_lock(&link->tx_lock);
	ret = wse_link_send_locked(link, version, opcode, 0, 0, 0, payload, npayload, true);
	mutex_unlock(&link->tx_lock);
	return ret;
}

/* Answers a request the firmware made of the host. */
static int wse_link_answer(struct wse_link *link, const struct wse_link_hdr *hdr,
			   u32 status)
{
	struct wse_link_status st = { .status = cpu_to_le32(status) };
	struct kvec vec = { .iov_base = &st, .iov_len = sizeof(st) };

	return wse_link_send(link, WSE_SEND_WAIT, hdr->opcode, WSE_LINK_F_RESPONSE,
			     le16_to_cpu(hdr->queue), le32_to_cpu(hdr->tag), &vec, 1);
}

/* A response: hand it to the request with its tag. */
static int wse_link_rx_response(struct wse_link *link, const struct wse_link_hdr *hdr,
				const char **why)
{
	u32 tag = le32_to_cpu(hdr->tag);
	u32 len = le32_to_cpu(hdr->length);
	const struct wse_link_status *st = link->rxbuf;
	XA_STATE(xas, &link->pending, tag);
	struct wse_link_req *req;
	bool unasked, unsent, abandoned;
	void *entry;
	int status;

	if (len < sizeof(*st) || st->reserved) {
		*why = "response without a valid status";
		return -EPROTO;
	}
	if (hdr->opcode == WSE_LINK_OP_KEEPALIVE && tag == 0) {
		/* Liveness is all it carries, if it answers a keepalive sent:
		 * answers nobody asked for would keep a peer alive that never
		 * reads.
		 */
		spin_lock(&link->lock);
		unasked = !link->keepalives_unanswered;
		if (!unasked)
			link->keepalives_unanswered--;
		spin_unlock(&link->lock);
		if (unasked) {
			*why = "keepalive answer to no keepalive";
			return -EPROTO;
		}
		return 0;
	}

	/*
	 * Every request the firmware may answer is in the table until it
	 * does, those their owners gave up on too: a tag that is not there
	 * was never handed out or was answered already, and an answer to it
	 * is a lie. So is one to a tag reserved by a submission under way.
	 */
	xas_lock(&xas);
	entry = xas_load(&xas);
	if (entry && !xa_is_zero(entry))
		xas_store(&xas, NULL);
	xas_unlock(&xas);
	if (!entry || xa_is_zero(entry)) {
		*why = entry ? "response to a request not yet sent" :
			       "response to a request never made or answered already";
		return -EPROTO;
	}
	req = wse_link_entry_req(entry, &abandoned);
	if (req->opcode != hdr->opcode) {
		wse_link_req_end(req, -EPROTO, abandoned);
		*why = "response opcode differs from the request's";
		return -EPROTO;
	}
	if (req->queue != le16_to_cpu(hdr->queue)) {
		wse_link_req_end(req, -EPROTO, abandoned);
		*why = "response queue differs from the request's";
		return -EPROTO;
	}
	/* Tags are easy to guess; a frame no byte of which has left cannot
	 * have been read.
	 */
	spin_lock(&link->lock);
	unsent = req->tx_queued;
	spin_unlock(&link->lock);
	if (unsent) {
		wse_link_req_end(req, -EPROTO, abandoned);
		*why = "response to a request not yet sent";
		return -EPROTO;
	}

	status = wse_frame_status_errno(le32_to_cpu(st->status));
	if (abandoned) {
		/* Its owner gave up waiting; the answer only lets it go. */
		atomic64_inc(&link->stats.stale_responses);
		wse_link_req_end(req, status, true);
		return 0;
	}
	if (!status) {
		req->resp_len = len - sizeof(*st);
		/* The frame was whole and its digests good: the stream is
		 * intact, so only this request fails.
		 */
		if (req->resp_len > req->resp_cap) {
			atomic64_inc(&link->stats.proto_errors);
			pr_info_ratelimited("wse %u: firmware answered opcode %#x with %zu bytes, %zu allowed\n",
					    wse_link_device(link)->index, hdr->opcode,
					    req->resp_len, req->resp_cap);
			req->resp_len = 0;
			status = -EPROTO;
		} else if (req->resp_len) {
			memcpy(req->resp, st + 1, req->resp_len);
		}
	} else {
		pr_info_ratelimited("wse %u: firmware refused opcode %#x: %*pE\n",
				    wse_link_device(link)->index, hdr->opcode,
				    (int)min_t(u32, len - sizeof(*st), 120), st + 1);
	}
	wse_link_req_end(req, status, false);
	return 0;
}

/* One frame from the firmware. A non-zero return kills the link. */
static int wse_link_rx_dispatch(struct wse_link *link, const struct wse_link_hdr *hdr,
				const char **why)
{
	u16 flags = le16_to_cpu(hdr->flags);
	u32 len = le32_to_cpu(hdr->length);
	int ret;

	if (flags & WSE_LINK_F_RESPONSE)
		return wse_link_rx_response(link, hdr, why);

	switch (hdr->opcode) {
	case WSE_LINK_OP_KEEPALIVE:
		if (len) {
			*why = "keepalive with a payload";
			return -EPROTO;
		}
		return wse_link_answer(link, hdr, WSE_LINK_OK);
	case WSE_LINK_OP_SHUTDOWN:
		ret = wse_link_answer(link, hdr, WSE_LINK_OK);
		*why = "firmware shut the link down";
		return ret ?: -ESHUTDOWN;
	case WSE_LINK_OP_ERROR: {
		const struct wse_link_error *e = link->rxbuf;

		if (len < sizeof(*e)) {
			*why = "error frame too short";
			return -EPROTO;
		}
		pr_warn_ratelimited("wse %u: firmware error %u: %*pE\n",
				    wse_link_device(link)->index,
				    le32_to_cpu(e->code),
				    (int)min_t(u32, len - sizeof(*e), 120), e + 1);
		wse_genl_notify(wse_link_device(link), WSE_EVENT_FW_ERROR, EIO,
				"firmware sent an error");
		*why = "firmware reported an error";
		return -EIO;
	}
	default:
		*why = "unexpected request opcode from firmware";
		return -EPROTO;
	}
}

static int wse_link_rx_thread(void *data)
{
	struct wse_link *link = data;
	struct wse_link_hdr hdr;
	const char *why;
	int ret;

	while (!kthread_should_stop()) {
		if (wse_link_state(link, NULL) != WSE_LINK_STATE_UP) {
			/* Dead: wait to be stopped by detach. */
			set_current_state(TASK_INTERRUPTIBLE);
			if (!kthread_should_stop())
				schedule();
			__set_current_state(TASK_RUNNING);
			continue;
		}
		why = "receive failed";
		/* Header and digest failures are counted where they are found. */
		ret = wse_link_recv_frame(link, &hdr, link->version, link->max_payload, 0, &why);
		if (!ret) {
			ret = wse_link_rx_dispatch(link, &hdr, &why);
			if (ret == -EPROTO)
				atomic64_inc(&link->stats.proto_errors);
		}
		if (ret == -ECONNRESET)
			why = "firmware closed the connection";
		if (ret)
			wse_link_fail(link, ret, why);
	}
	return 0;
}

static void wse_link_keepalive(struct work_struct *work)
{
	struct wse_link *link = container_of(to_delayed_work(work), struct wse_link,
					     keepalive_work);
	unsigned long interval = msecs_to_jiffies(link->keepalive_ms);
	int ret;

	if (wse_link_state(link, NULL) != WSE_LINK_STATE_UP)
		return;

	if (time_after(jiffies, READ_ONCE(link->last_rx) + WSE_KEEPALIVE_MISSES * interval)) {
		atomic64_inc(&link->stats.timeouts);
		wse_genl_notify(wse_link_device(link), WSE_EVENT_TIMEOUT, ETIMEDOUT,
				"keepalive expired");
		wse_link_fail(link, -ETIMEDOUT, "firmware stopped answering keepalives");
		return;
	}

	/*
	 * Tag 0 is never a request's: its answer only proves liveness. A
	 * sender waiting for the socket holds tx_lock; waiting behind it
	 * would stop this check from running, so skip the keepalive: the
	 * answers to the frames it sends prove liveness as well.
	 */
	spin_lock(&link->lock);
	link->keepalives_unanswered++;
	spin_unlock(&link->lock);
	ret = wse_link_send(link, WSE_SEND_TRY, WSE_LINK_OP_KEEPALIVE, 0, 0, 0, NULL, 0);
	if (ret == -EBUSY) {
		spin_lock(&link->lock);
		link->keepalives_unanswered--;
		spin_unlock(&link->lock);
		queue_delayed_work(wse_wq, &link->keepalive_work, interval);
		return;
	}
	if (ret) {
		wse_link_fail(link, ret, "sending a keepalive failed");
		return;
	}
	atomic64_inc(&link->stats.keepalives);
	queue_delayed_work(wse_wq, &link->keepalive_work, interval);
}

/* Starts the receive thread and keepalives on a negotiated link. */
int wse_link_start(struct wse_link *link)
{
	struct task_struct *t;

	spin_lock(&link->lock);
	link->state = WSE_LINK_STATE_UP;
	spin_unlock(&link->lock);
	WRITE_ONCE(link->last_rx, jiffies);

	/* From here on the receive thread blocks until data, shutdown or EOF;
	 * the keepalive worker catches a peer that goes silent.
	 */
	lock_sock(link->sock->sk);
	link->sock->sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;
	release_sock(link->sock->sk);

	t = kthread_run(wse_link_rx_thread, link, "wse%u-rx", wse_link_device(link)->index);
	if (IS_ERR(t)) {
		spin_lock(&link->lock);
		link->state = WSE_LINK_STATE_NONE;
		spin_unlock(&link->lock);
		return PTR_ERR(t);
	}
	link->rx_thread = t;
	INIT_DELAYED_WORK(&link->keepalive_work, wse_link_keepalive);
	queue_delayed_work(wse_wq, &link->keepalive_work, msecs_to_jiffies(link->keepalive_ms));
	return 0;
}

/**
 * wse_link_stop() - close the link for detach
 * @link: the link
 *
 * Says goodbye if that costs no wait, kills the link (the socket is shut
 * down, which ends any send or receive blocked on it), stops the receive
 * thread and the keepalives, and waits for the transmit work to drop
 * what is still queued. A peer that stopped reading holds none of it up.
 * The socket itself goes with the device. Called with the device set lock
 * held and never concurrently for one link.
 */
void wse_link_stop(struct wse_link *link)
{
	if (!link->sock)
		return;

	if (wse_link_state(link, NULL) == WSE_LINK_STATE_UP) {
		/* Best effort: the firmware sees the goodbye or the close. */
		wse_link_send(link, WSE_SEND_NOWAIT, WSE_LINK_OP_SHUTDOWN, 0, 0, 0, NULL, 0);
		wse_link_fail(link, -ESHUTDOWN, "detached");
	}
	if (link->rx_thread) {
		kthread_stop(link->rx_thread);
		link->rx_thread = NULL;
		cancel_delayed_work_sync(&link->keepalive_work);
	}
	flush_work(&link->tx_work);
	/* Whatever no sender got to is handed back before the device can go. */
	wse_link_tx_drop(link);
}

/* A CANCEL the link sends for a request whose owner gave up on it. */
struct wse_link_cancel_req {
	struct wse_link_req req;
	struct wse_link_cancel body;
	/* The link until it retires the request, the sender until the frame is done. */
	refcount_t users;
};

/* Answered at once whether or not it found the request: nothing waits for it. */
static void wse_link_cancel_put(struct wse_link_req *req)
{
	struct wse_link_cancel_req *c = container_of(req, struct wse_link_cancel_req, req);

	if (refcount_dec_and_test(&c->users))
		kfree(c);
}

/*
 * Asks the firmware to drop request @tag, or end its wait, so that it
 * answers (E_CANCELED) soon rather than hold its queue and its place.
 * Best effort: without the capability, memory or a live link the request
 * is simply answered when the firmware gets to it.
 */
static void wse_link_send_cancel(struct wse_link *link, u32 tag)
{
	struct wse_link_cancel_req *c;
	struct kvec vec;

	if (!(link->fw_caps & WSE_LINK_CAP_CANCEL))
		return;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return;
	c->body.tag = cpu_to_le32(tag);
	c->req.opcode = WSE_LINK_OP_CANCEL;
	c->req.retire = wse_link_cancel_put;
	c->req.tx_done = wse_link_cancel_put;
	refcount_set(&c->users, 2);
	vec.iov_base = &c->body;
	vec.iov_len = sizeof(c->body);
	if (wse_link_submit(link, &c->req, &vec, 1)) {
		kfree(c);
		return;
	}
	wse_link_push(link, true);
}

/*
 * The request was just marked abandoned in the table: if no sender took
 * its frame (it is taken back here, or was before), the firmware never
 * sees it and will not answer it; otherwise the firmware is asked to let
 * it go.
 */
static void wse_link_let_go(struct wse_link *link, struct wse_link_req *req)
{
	void *entry = xa_tag_pointer(req, WSE_LINK_ABANDONED);
	u32 tag = req->tag;
	bool started;

	wse_link_withdraw(link, req);
	spin_lock(&link->lock);
	started = req->tx_started;
	spin_unlock(&link->lock);
	if (started) {
		wse_link_send_cancel(link, tag);
		return;
	}
	/* Unless a link failure took it out first. */
	if (xa_cmpxchg(&link->pending, tag, entry, NULL, 0) == entry)
		wse_link_req_end(req, -ECANCELED, true);
}

/**
 * wse_link_reset() - abort what is in flight and zero the counters
 * @link: the link
 *
 * Every request waiting for an answer is finished with -ECANCELED for its
 * owner; the firmware is asked to drop it, and the link holds it until
 * the firmware has answered, as if its owner had given up on it.
 */
void wse_link_reset(struct wse_link *link)
{
	struct wse_link_stats *s = &link->stats;
	struct wse_link_req *req;
	unsigned long tag;
	bool abandoned;
	void *entry;

	xa_for_each(&link->pending, tag, entry) {
		req = wse_link_entry_req(entry, &abandoned);
		/* A CANCEL is answered at once, and cancels nothing of its own. */
		if (abandoned || req->opcode == WSE_LINK_OP_CANCEL ||
		    !wse_link_mark_abandoned(link, req))
			continue;
		wse_link_req_hand_back(req, -ECANCELED);
		wse_link_let_go(link, req);
	}
	atomic64_set(&s->frames_tx, 0);
	atomic64_set(&s->frames_rx, 0);
	atomic64_set(&s->bytes_tx, 0);
	atomic64_set(&s->bytes_rx, 0);
	atomic64_set(&s->crc_errors, 0);
	atomic64_set(&s->proto_errors, 0);
	atomic64_set(&s->timeouts, 0);
	atomic64_set(&s->keepalives, 0);
	atomic64_set(&s->stale_responses, 0);
	atomic64_set(&s->link_downs, 0);
}

/**
 * wse_link_submit() - queue a request whose answer comes later
 * @link: the link
 * @req: the request: @opcode, @queue, @resp, @resp_cap, @done (or NULL,
 *	to wait on @wait), @retire and @tx_done set by the caller
 * @vec: the request payload; it must stay put until @tx_done runs
 * @nvec: entries in @vec (at most 3)
 *
 * Builds the frame and queues it behind those queued before; it goes out
 * at the caller's wse_link_push(), or at an earlier one.
 *
 * On success the request is finished exactly once - answered, refused,
 * failed with the link, or failed with -ECANCELED by a reset - unless
 * wse_link_abandon() takes it back first; @retire runs once, when the
 * link lets go of it; and @tx_done runs once. @done and @retire run in
 * process context with none of the link's locks held, and must not sleep
 * for long: they run on the receive thread.
 *
 * Return: 0, or -ENOTCONN (the link is down) or another negative errno,
 * in which case nothing was queued and none of the three will run.
 */
int wse_link_submit(struct wse_link *link, struct wse_link_req *req,
		    const struct kvec *vec, unsigned int nvec)
{
	unsigned int i;
	bool up;
	u32 tag;
	int ret;

	if (WARN_ON_ONCE(nvec > ARRAY_SIZE(req->tx_vec) - 1 || !req->tx_done || !req->retire))
		return -EINVAL;
	init_completion(&req->wait);
	req->resp_len = 0;
	if (wse_link_state(link, NULL) != WSE_LINK_STATE_UP)
		return -ENOTCONN;

	/*
	 * The tag is reserved first (a zero entry: an answer to it is a lie)
	 * and skips every tag still held, by a request waiting for its answer
	 * or one given up on that the firmware may yet answer: no late answer
	 * can land in a newer request.
	 */
	ret = xa_alloc_cyclic(&link->pending, &tag, NULL, XA_LIMIT(1, link->tag_max),
			      &link->next_tag, GFP_KERNEL);
	if (ret < 0)
		return ret == -EBUSY ? -EAGAIN : ret;
	req->tag = tag;

	/* The digests are computed here, by the submitter. */
	wse_frame_build(&req->tx_hdr, link->version, req->opcode, 0, req->queue, req->tag,
			vec, nvec);
	req->tx_vec[0].iov_base = &req->tx_hdr;
	req->tx_vec[0].iov_len = sizeof(req->tx_hdr);
	for (i = 0; i < nvec; i++)
		req->tx_vec[i + 1] = vec[i];
	req->tx_nvec = nvec + 1;

	/*
	 * Queued and published together, under the lock a failure takes to
	 * kill the link and a sender takes to dequeue: a failure after this
	 * finds it in the table, and no byte of it leaves before it is there.
	 */
	spin_lock(&link->lock);
	up = link->state == WSE_LINK_STATE_UP;
	if (up) {
		list_add_tail(&req->tx_node, &link->tx_queue);
		req->tx_queued = true;
		req->tx_started = false;
		/* Into the reserved slot: nothing is allocated. */
		xa_store(&link->pending, tag, req, GFP_NOWAIT);
	}
	spin_unlock(&link->lock);
	if (!up) {
		xa_erase(&link->pending, tag);
		return -ENOTCONN;
	}
	return 0;
}

/**
 * wse_link_abandon() - take back a request that has not been answered
 * @link: the link
 * @req: a request wse_link_submit() accepted
 *
 * The link keeps holding the request, and its tag, until the firmware
 * answers it (then @req->retire runs with the answer's status, and the
 * answer's data goes nowhere); a frame that has not started is not sent,
 * and the request is retired at once. A firmware that offers it is sent a
 * CANCEL, so that it answers soon.
 *
 * Return: true if the request was taken back: its @done will not run and
 * its owner finishes it as it likes. False if it is being or has been
 * finished.
 */
bool wse_link_abandon(struct wse_link *link, struct wse_link_req *req)
{
	/* Only if it is this request, still waiting. */
	if (!wse_link_mark_abandoned(link, req))
		return false;
	wse_link_let_go(link, req);
	return true;
}
