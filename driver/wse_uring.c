// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: io_uring commands on the accel file. A DRM_WSE_URING_CMD_JOB is a
 * job on ordinary user memory or a registered buffer: issued inline, in
 * the submitter's task, even when io_uring asks for a non-blocking issue
 * (the SQE payload is copied once, the data copied into the job, the
 * request queued on the link, which the link's transmit work sends: a
 * batch goes out together). Commands are therefore queued in the order
 * they are issued. Answered on the receive
 * thread, completed in the submitter's task, where the reply is copied out
 * and the CQE posted. A ring that goes away cancels what it still has in
 * flight.
 */

#include <drm/drm_file.h>
#include <linux/io_uring/cmd.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uio.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_job.h"
#include "wse_user_pages.h"

/* Bytes of an SQE128's command area, from sqe->cmd to the end. */
#define WSE_URING_CMD_AREA	(2 * sizeof(struct io_uring_sqe) - \
				 offsetof(struct io_uring_sqe, cmd))
static_assert(sizeof(struct drm_wse_uring_job) <= WSE_URING_CMD_AREA);

/* What the command keeps between issue and completion; it holds a
 * reference to the job until the completion is posted, so a cancel that
 * runs meanwhile finds the job even if it failed to start.
 */
struct wse_uring_pdu {
	struct wse_job *job;
	u64 addr;
	u32 length;
	bool receives;
};

static struct wse_uring_pdu *wse_uring_pdu(struct io_uring_cmd *cmd)
{
	return io_uring_cmd_to_pdu(cmd, struct wse_uring_pdu);
}

/* Copies @len bytes of reply to the user's buffer, plain or registered. */
static int wse_uring_copy_out(struct io_uring_cmd *cmd, const void *buf, u32 len)
{
	struct wse_uring_pdu *pdu = wse_uring_pdu(cmd);
	struct iov_iter iter;
	int ret;

	if (cmd->flags & IORING_URING_CMD_FIXED) {
		ret = io_uring_cmd_import_fixed(pdu->addr, pdu->length, ITER_DEST, &iter, cmd);
		if (ret)
			return ret;
		return copy_to_iter(buf, len, &iter) == len ? 0 : -EFAULT;
	}
	return wse_copy_to_user_pages(pdu->addr, buf, len);
}

/* In the submitter's task: copy the reply out, post the CQE. */
static void wse_uring_complete(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct wse_uring_pdu *pdu = wse_uring_pdu(cmd);
	struct wse_job *job = pdu->job;
	ssize_t res = job->status;

	if (!res && pdu->receives) {
		res = job->result_len;
		/* A task on its way out cannot take data any more. */
		if (issue_flags & IO_URING_F_TASK_DEAD)
			res = -ECANCELED;
		else if (res && wse_uring_copy_out(cmd, job->kbuf, job->result_len))
			res = -EFAULT;
	}
	/* The data goes with the job: the sender may still be sending it. */
	wse_job_collect(job);
	wse_job_put(job);	/* the request's, handed over by wse_uring_finished() */
	io_uring_cmd_done(cmd, res, 0, issue_flags);
	/* No cancel can find the command any more. */
	wse_job_put(job);
}

/* The job finished (any context the link finishes in): hand it to the task. */
static void wse_uring_finished(struct wse_job *job)
{
	io_uring_cmd_complete_in_task(job->ucmd, wse_uring_complete);
}

/* Copies the data to send into the job's kernel buffer. */
static int wse_uring_copy_in(struct io_uring_cmd *cmd, void *buf, u64 addr, u32 len)
{
	struct iov_iter iter;
	int ret;

	if (cmd->flags & IORING_URING_CMD_FIXED) {
		ret = io_uring_cmd_import_fixed(addr, len, ITER_SOURCE, &iter, cmd);
		if (ret)
			return ret;
		return copy_from_iter(buf, len, &iter) == len ? 0 : -EFAULT;
	}
	return wse_copy_from_user_pages(buf, addr, len);
}

static int wse_uring_issue(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct drm_file *file = cmd->file->private_data;
	struct wse_uring_pdu *pdu = wse_uring_pdu(cmd);
	const struct drm_wse_uring_job *sqe_job;
	struct drm_wse_uring_job args;
	const struct wse_op_desc *d;
	struct wse_queue *queue;
	struct wse_job *job;
	struct kvec vec[2];
	unsigned int nvec;
	u64 job_id;
	int ret;

	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;	/* the payload does not fit a 64-byte SQE */
	if (cmd->flags & ~IORING_URING_CMD_FIXED)
		return -EINVAL;
	/*
	 * Issued inline even with IO_URING_F_NONBLOCK, as ublk and nvme do:
	 * allocating and copying user memory may sleep briefly, but nothing
	 * below waits for the socket or the firmware. Handing the command to
	 * an io-wq worker instead (-EAGAIN) would let workers running in
	 * parallel reorder commands submitted together.
	 */

	/* The SQE is valid only now: one copy, then only the copy is used. */
	sqe_job = io_uring_sqe_cmd(cmd->sqe);
	memcpy(&args, sqe_job, sizeof(args));
	/* What the command does not use must be 0, to mean something later. */
	if (READ_ONCE(cmd->sqe->addr) || READ_ONCE(cmd->sqe->len) ||
	    memchr_inv((const u8 *)sqe_job + sizeof(args), 0,
		       WSE_URING_CMD_AREA - sizeof(args)))
		return -EINVAL;

	d = wse_job_op(args.op);
	if (!d || args.reserved || args.timeout_ms > 600000)
		return -EINVAL;
	queue = wse_queue_lookup(file, args.queue_id);
	if (!queue)
		return -ENOENT;
	ret = wse_job_check(args.args, args.length, args.length, d,
			    queue->wdev->link.max_payload);
	if (!ret && !!args.length != !!args.addr)
		ret = -EINVAL;
	if (ret) {
		wse_queue_put(queue);
		return ret;
	}
	job = wse_job_new(queue, args.op);
	if (!job)
		return -ENOMEM;
	ret = wse_job_admit(job, file->driver_priv, d, args.args, args.length);
	if (ret)
		goto discard;
	if (args.length) {
		ret = wse_job_alloc_kbuf(job, args.length);
		if (ret)
			goto discard;
	}
	if (d->sends) {
		ret = wse_uring_copy_in(cmd, job->kbuf, args.addr, args.length);
		if (!ret)
			ret = wse_job_check_data(file->driver_priv, args.args, args.op, job->kbuf,
						 args.length);
		if (ret)
			goto discard;
	}
	if (d->receives) {
		job->req.resp = job->kbuf;
		job->req.resp_cap = args.length;
	}
	ret = wse_job_request(d, args.op, args.args, args.length, &job->hdr, job->kbuf, vec,
			      &nvec);
	if (ret)
		goto discard;

	pdu->job = job;
	pdu->addr = args.addr;
	pdu->length = args.length;
	pdu->receives = d->receives;
	job->ucmd = cmd;
	job->on_finish = wse_uring_finished;
	/* Before the request is out: the answer may come at once. */
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
	/* On success the reference wse_job_start() leaves is the command's. */
	ret = wse_job_start(job, args.timeout_ms, vec, nvec, true, &job_id);
	/* A failed start posts no completion of its own: post it here, which
	 * also takes the command off the cancelable list; only then may the
	 * job go, since a cancel until then can still find it.
	 */
	if (ret) {
		io_uring_cmd_done(cmd, ret, 0, issue_flags);
		if (job->id)
			wse_job_put(job);
		else
			wse_job_discard(job);
	}
	return -EIOCBQUEUED;

discard:
	wse_job_discard(job);
	return ret;
}

/* The ring is going away: take the job back if it has not been answered. */
static int wse_uring_cancel(struct io_uring_cmd *cmd)
{
	struct wse_job *job = wse_uring_pdu(cmd)->job;

	if (wse_link_abandon(&job->queue->wdev->link, &job->req))
		wse_job_finish(job, -ECANCELED, 0);
	return 0;
}

int wse_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	if (issue_flags & IO_URING_F_CANCEL)
		return wse_uring_cancel(cmd);
	switch (cmd->cmd_op) {
	case DRM_WSE_URING_CMD_JOB:
		return wse_uring_issue(cmd, issue_flags);
	default:
		return -EOPNOTSUPP;
	}
}
