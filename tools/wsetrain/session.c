// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device of a run, a system or an appliance: its accel device, a
 * queue for RUN jobs (hardware queue 0), a ring for what goes in (queue 1)
 * and one for what comes out (queue 2). A stream write and the RUN that
 * drains it never share a queue: the RUN would wait for data queued
 * behind itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "wse_link.h"
#include "wse_genl.h"
#include "wse/filekind.h"

#define RUN_TIMEOUT_MS		DRM_WSE_TIMEOUT_MS_MAX	/* a chunk of steps */
#define RING_DEPTH		32

int train_pick_device(const struct train_opts *o, char spec[16])
{
	struct wse_dev_status *st = NULL;
	struct wse_ctl *ctl = NULL;
	size_t count = 0;
	bool found = false;
	int ret;

	ret = wse_ctl_open(&ctl);
	if (!ret)
		ret = wse_ctl_list(ctl, &st, &count);
	wse_ctl_close(ctl);
	/*
	 * train_parse checked the syntax; here, that the device is there, when
	 * the list can be had (opening the device says why, otherwise).
	 */
	if (o->devices && ret && ret != -ENOENT) {
		snprintf(spec, 16, "%s", o->devices);
		return 0;
	}
	if (o->devices && !ret) {
		char *end;
		unsigned long want = strtoul(o->devices, &end, 10);

		for (size_t i = 0; i < count && !found; i++)
			found = *end || st[i].index == want;
		free(st);
		if (!found)
			return train_fail("--devices %s: there is no device %s ('wsectl list' lists them)",
					  o->devices, o->devices);
		snprintf(spec, 16, "%s", o->devices);
		return 0;
	}
	if (ret == -ENOENT)
		return train_fail("no wse devices: the wse kernel module is not loaded (insmod wse.ko; on a build machine run wsetrain in the guest: tools/wsevm --fw 1 -- wsetrain ...)");
	if (ret)
		return train_fail("cannot list the wse devices: %s", strerror(-ret));
	for (size_t i = 0; i < count && !found; i++) {
		if (st[i].link_state == WSE_LINK_STATE_UP && st[i].accel_minor >= 0) {
			snprintf(spec, 16, "%u", st[i].index);
			found = true;
		}
	}
	free(st);
	if (!found)
		return train_fail("no device with a live link: attach a system or an appliance with 'wsectl attach tcp:HOST:PORT' (see wsectl --help)");
	return 0;
}

int train_check_inputs(const struct train_opts *o)
{
	unsigned int models = WSE_FILE_BIT(WSE_FILE_WSEP) | WSE_FILE_BIT(WSE_FILE_ONNX) |
			      WSE_FILE_BIT(WSE_FILE_TEXT);
	const unsigned int ckpts = WSE_FILE_BIT(WSE_FILE_CHECKPOINT);
	size_t n = strlen(o->model);
	char spec[16];

	/* A damaged .onnx file is the importer's to explain. */
	if (n > 5 && !strcmp(o->model + n - 5, ".onnx"))
		models |= WSE_FILE_BIT(WSE_FILE_UNKNOWN);
	if (wse_file_expect("wsetrain", o->model, models,
			    "a model or program (.wsep, ONNX or model text)"))
		return -1;
	if (o->init_from && wse_file_expect("wsetrain", o->init_from, ckpts, "a checkpoint"))
		return -1;
	if (o->resume && wse_file_expect("wsetrain", o->resume, ckpts, "a checkpoint"))
		return -1;
	if (train_hparams_check_file(o))
		return -1;
	return train_pick_device(o, spec);
}

int train_system_open(struct train_system *s, const char *spec)
{
	struct wse_ring_params in = { .hw_queue = WSE_LINK_Q_IN, .depth = RING_DEPTH,
				      .timeout_ms = TRAIN_XFER_TIMEOUT_MS };
	struct wse_ring_params out = { .hw_queue = WSE_LINK_Q_OUT, .depth = RING_DEPTH,
				       .timeout_ms = TRAIN_XFER_TIMEOUT_MS };
	int ret;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "device %s", spec);
	ret = wse_open(spec, &s->dev);
	if (ret == -EACCES || ret == -EPERM) {
		char hint[512];

		if (!wse_access_hint(spec, hint, sizeof(hint)))
			return train_fail("%s: cannot open it: %s: %s", s->name, wse_strerror(ret),
					  hint);
	}
	if (ret)
		return train_fail("%s: cannot open it: %s", s->name, wse_strerror(ret));
	ret = wse_info(s->dev, &s->info);
	if (!ret && (!(s->info.caps & DRM_WSE_CAP_JOBS) || !s->info.max_job_bytes))
		ret = -ENOTCONN;
	if (ret)
		return train_fail("%s: %s (attach a firmware to it: wsectl attach)", s->name,
				  wse_strerror(ret));
	if (s->info.dev.num_queues <= WSE_LINK_Q_OUT)
		return train_fail("%s has %u hardware queues; training needs %u", s->name,
				  s->info.dev.num_queues, WSE_LINK_Q_OUT + 1);
	ret = wse_queue_create(s->dev, WSE_LINK_Q_RUN, 4, RUN_TIMEOUT_MS, &s->run_queue);
	if (!ret)
		ret = wse_bo_alloc(s->dev, WSE_RUN_RESULT_BYTES, &s->result);
	if (!ret)
		ret = wse_bo_map(s->dev, &s->result);
	if (!ret)
		ret = wse_ring_open(s->dev, &in, &s->in);
	if (!ret)
		ret = wse_ring_open(s->dev, &out, &s->out);
	if (ret)
		return train_fail("%s: cannot set up its queues: %s", s->name, wse_strerror(ret));
	return 0;
}

void train_system_close(struct train_system *s)
{
	if (!s->dev)
		return;
	if (s->run_pending)
		wse_wait(s->dev, s->run_queue, s->run_job, wse_deadline_ns(1000), NULL, NULL);
	wse_ring_close(s->in);
	wse_ring_close(s->out);
	if (s->result.handle)
		wse_bo_free(s->dev, &s->result);
	wse_program_unload(s->dev, s->run_queue, TRAIN_SLOT);
	wse_close(s->dev);
	s->dev = NULL;
}

int train_system_load(struct train_system *s, const void *image, size_t len)
{
	struct wse_program_info info;
	int ret, unload = 0;

	ret = wse_program_load(s->dev, s->run_queue, TRAIN_SLOT, image, len, &info);
	if (ret == -EBUSY || ret == -EEXIST || ret == -EINVAL) {
		/*
		 * Perhaps a slot left loaded by a run that died: ours to replace.
		 * Not an appliance's E_BUSY (too few systems free): the unload
		 * dropped the slot's JOB, and a load again would take the default.
		 */
		unload = wse_program_unload(s->dev, s->run_queue, TRAIN_SLOT);
		if (!unload && !(ret == -EBUSY && s->appliance))
			ret = wse_program_load(s->dev, s->run_queue, TRAIN_SLOT, image, len, &info);
	}
	/* Not the slot, another file's (EACCES to unload): the appliance's systems. */
	if (ret == -EBUSY && s->appliance && unload != -EACCES)
		return train_fail("%s refused the program: too few of its systems are free (a system runs the weight-streaming job or layer-pipelined programs, never both: ask for fewer with --systems, or load once the others are unloaded; the kernel log has the appliance's text)",
				  s->name);
	if (ret)
		return train_fail("%s refused the program: %s", s->name, wse_strerror(ret));
	return 0;
}

const char *train_run_kind_name(uint32_t kind)
{
	return kind == WSE_RUN_TRAIN ? "TRAIN" : kind == WSE_RUN_EVAL ? "EVAL" :
	       kind == WSE_RUN_PREDICT ? "PREDICT" : "RUN";
}

int train_run_submit(struct train_system *s, uint32_t kind, uint32_t steps, uint32_t batch)
{
	const struct wse_run run = { TRAIN_SLOT, kind, steps, batch };
	int ret = wse_run_submit(s->dev, s->run_queue, &s->result, &run, &s->run_job);

	if (ret)
		return train_fail("%s: RUN of %u steps: %s", s->name, steps, wse_strerror(ret));
	s->run_pending = true;
	return 0;
}

int train_run_wait(struct train_system *s)
{
	struct wse_run_result r;
	int ret;

	s->run_pending = false;
	ret = wse_run_wait(s->dev, s->run_queue, s->run_job, &s->result,
			   wse_deadline_ns(RUN_TIMEOUT_MS + 10000), &r);
	if (ret) {
		train_fail("%s: the RUN failed: %s", s->name, wse_strerror(ret));
		train_system_why(s);
		return -1;
	}
	s->cycles += r.cycles;
	s->est_cycles += r.est_cycles;
	return 0;
}

/*
 * The kernel passes a RUN's failure on as an errno; the appliance keeps
 * the text (which part went, and why), so it is asked, if it still answers.
 */
void train_system_why(struct train_system *s)
{
	struct wse_appliance a;

	if (s->appliance && !wse_appliance_info(s->out, &a) && a.reason[0])
		fprintf(stderr, "wsetrain: %s says: %s\n", s->name, a.reason);
}
