// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two users, two jobs on one appliance (issue 25): neither can read,
 * change, feed or stop the other's job through any ioctl or io_uring
 * command.
 *
 * User A (1000) runs the appliance's weight-streaming job, on one of its
 * two systems (its slot's JOB, written before the load); user B (1001) a
 * layer-pipelined program, which the coordinator puts on the other: a
 * system runs the job or pipelined programs, never both. B's is not a
 * second weight-streaming job because an appliance runs one at a time
 * (the coordinator refuses a second one: "the appliance runs one
 * weight-streaming job at a time").
 * Each trains three steps of its own synthetic data, keeping the losses
 * and the parameters after steps 1 and 2, and goes back to the
 * parameters of step 1.
 *
 * Then, both at once, each tries every operation of enum drm_wse_op (and
 * some that are none), every params `which` 0..8 (and two beyond), on
 * every slot 0..255 and a few beyond (256, 2^32 - 1, 2^32 and 2^32 plus
 * each loaded slot), by SUBMIT and by io_uring, from the file that holds
 * its own job and from a second file of its own (which holds none): each
 * must get the errno wse_job_check(), wse_job_slot_use(),
 * wse_job_check_data() and wse_slots_begin() give it, before the firmware
 * hears of it. Reaching the firmware are only what is anyone's (the
 * appliance's state, the device's counters), reads of the caller's own
 * parameters (which must be step 1's), and requests naming slot 0, which
 * the driver passes on and the firmware refuses (EINVAL: no program is
 * there). The file's fdinfo job counter must have counted exactly those.
 * Left out (and counted as such) are loads and a slot's own JOB into a
 * free slot, which would claim it, and what would change or wait on the
 * caller's own job. No refused call writes a byte into the caller's
 * buffers, nor changes what they send.
 *
 * Afterwards each job is as it was: its parameters are those of step 1
 * bit for bit, its next step gives the losses and parameters of step 2
 * bit for bit (so its input and systems are its own still), and the
 * appliance says its job's systems are as before. Last, each user's
 * file is closed while the other's RUN waits for its samples: the
 * other's step gives the bits it gave before.
 *
 * More cases go through what a user may do on its own slots: the input
 * workers, which feed one program at a time, are not taken from the
 * program they feed by another user naming a dataset; two users loading
 * a weight-streaming job at the same moment on two queues get one job
 * and one refusal, the appliance staying up; and B's RUN of its own
 * program, never fed, on hardware queue 0 (where the coordinator sends
 * a job's RUNs to its systems) or 3 (its loads, the job's weights, and
 * A's own RUNs) stops no step of A's job, which gives the bits it gave.
 *
 * Runs as root in the guest on the appliance of two systems tools/wsevm
 * --appliance 2 starts on the host (or one of its own in the guest).
 */
#include <poll.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "wse/engine_wsep.h"
#include "wse/link_payloads.h"
#include "wse_guest.h"
#include "wse_guest_uring.h"

#define IMAGE_WS	"/tmp/isolation-ws.wsep"
#define IMAGE_PL	"/tmp/isolation-pl.wsep"
#define UID_A		1000
#define UID_B		1001
#define SLOT_A		3
#define SLOT_B		7
/*
 * Hardware queues: the probes, stream writes, reads, RUNs and loads. The
 * driver unloads a closed file's programs on queue 0: RUNs go elsewhere,
 * so that the unload reaches the appliance while the other's RUN waits.
 */
#define HWQ_PROBE	0
#define HWQ_IN		1
#define HWQ_OUT		2
#define HWQ_RUN		3
/* The longest a user waits for its next order, and the root for an answer. */
#define PHASE_MS	120000
#define STEPS		3
/* Samples of a probe's STREAM_WRITE. */
#define PROBE_SAMPLES	16

#define ARENA		(64 << 10)
#define CANARY		0xa5
/* Where a probe's data lies in the send arena. */
#define OFF_IMAGE	0
#define OFF_SAMPLES	4096
#define OFF_WEIGHTS	20480
#define OFF_JOB		24576
#define OFF_INPUT	24832
#define OFF_STORE_MINE	25344
#define OFF_STORE_THEIRS 25856
#define OFF_SNAP	26368
#define OFF_SMALL	26624
#define SMALL		64

/* ------------------------------------------------------------ reports */

enum { PATH_SUBMIT, PATH_URING, PATHS };
enum { FILE_OWNER, FILE_SECOND, FILES };
/* The errnos a refusal may have. */
static const int errnos[] = { EINVAL, EPERM, EACCES, EBUSY, ENOENT };
#define NERRNOS		(sizeof(errnos) / sizeof(errnos[0]))

struct sweep_count {
	unsigned int tried, skipped, allowed, fw_refused, wrong;
	unsigned int refused[NERRNOS];
	long long fw_jobs;		/* what the file's fdinfo counted */
};

/* What a user's process tells the root, in memory they share. */
struct user_report {
	struct sweep_count sweep[FILES][PATHS];
	char why[512];			/* the first thing that went wrong */
	char wrong[4][200];		/* the first calls answered wrongly */
	unsigned int wrong_logged;
	uint32_t job_systems;
	int64_t probe_ms;
	int load_ret;			/* the last load's result */
	unsigned int unsettled;		/* loads whose slot was not usable at once */
};

/* What the root gives a user's process. */
struct user_cfg {
	char name;
	uid_t uid, other_uid;
	uint32_t slot, other_slot;
	uint32_t systems;		/* the weight-streaming job's; 0: pipelined */
	const void *image;
	size_t len;
	const struct wsep_program *prog;
	int minor;
	/* A pipelined program of the user's own besides (the input workers' test). */
	const void *aux_image;
	size_t aux_len;
	uint32_t aux_slot;
	uint32_t hwq_run;		/* the hardware queue of its RUNs and loads */
};

/* ----------------------------------------------------- a user's process */

struct user {
	const struct user_cfg *cfg;
	struct user_report *rep;
	struct wse_dev *dev;
	struct wse_ring *in, *out;
	struct wse_bo result;
	uint32_t q;
	uint64_t run_job;
	int next_step;
	struct wsep_train_streams ts;
	uint32_t batch, dim, classes;
	uint8_t *x;
	int32_t *y, *pred;
	float *loss;
	float *lref[STEPS + 1];		/* the losses of each step, as first trained */
	struct wse_params c1, c2, tmp;	/* after step 1, after step 2, read back */
	/* A RUN of its own program, never fed, on a queue of its own. */
	uint32_t stall_q;
	struct wse_bo stall_result;
	uint64_t stall_job;
};

static int fail(struct user *u, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct user *u, int code, const char *fmt, ...)
{
	va_list ap;

	if (!u->rep->why[0]) {
		int n = snprintf(u->rep->why, sizeof(u->rep->why), "user %c: ", u->cfg->name);

		va_start(ap, fmt);
		vsnprintf(u->rep->why + n, sizeof(u->rep->why) - n, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* The synthetic batch of @step: the same bits for the same user and step. */
static void batch_data(struct user *u, int step)
{
	uint64_t r = 0x9e3779b97f4a7c15ULL * (uint64_t)(u->cfg->name * 16 + step);

	for (size_t i = 0; i < (size_t)u->batch * u->dim + u->batch; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		if (i < (size_t)u->batch * u->dim)
			u->x[i] = (uint8_t)(r >> 40);
		else
			u->y[i - (size_t)u->batch * u->dim] = (int32_t)((r >> 33) % u->classes);
	}
}

static int params_alloc(struct user *u, struct wse_params *p)
{
	const struct wsep_program *w = u->cfg->prog;
	struct engine_optim opt;

	p->floats = wsep_total_params(w->layers, w->num_layers);
	p->state_arrays = engine_optim_from_wsep(&w->opt, &opt) ? 0 :
			  engine_optim_state_arrays(opt.kind);
	p->weights = malloc(p->floats * sizeof(float));
	p->state = malloc((p->state_arrays ? p->state_arrays : 1) * p->floats * sizeof(float));
	return p->weights && p->state ? 0 : -ENOMEM;
}

static bool params_same(const struct wse_params *a, const struct wse_params *b)
{
	return a->step == b->step &&
	       !memcmp(a->weights, b->weights, a->floats * sizeof(float)) &&
	       !memcmp(a->state, b->state, a->state_arrays * a->floats * sizeof(float));
}

/* Opens the device, its queue and rings; 0 or -errno. */
static int user_open(struct user *u)
{
	struct wse_ring_params rin = { .hw_queue = HWQ_IN, .depth = 16 };
	struct wse_ring_params rout = { .hw_queue = HWQ_OUT, .depth = 16 };
	char node[64];
	int ret;

	snprintf(node, sizeof(node), "/dev/accel/accel%d", u->cfg->minor);
	ret = wse_open(node, &u->dev);
	if (!ret)
		ret = wse_queue_create(u->dev, u->cfg->hwq_run, 16, 60000, &u->q);
	if (!ret)
		ret = wse_ring_open(u->dev, &rin, &u->in);
	if (!ret)
		ret = wse_ring_open(u->dev, &rout, &u->out);
	if (!ret)
		ret = wse_bo_alloc(u->dev, 4096, &u->result);
	if (!ret)
		ret = wse_bo_map(u->dev, &u->result);
	return ret;
}

static void user_close(struct user *u)
{
	wse_ring_close(u->in);
	wse_ring_close(u->out);
	u->in = u->out = NULL;
	if (u->dev)
		wse_bo_free(u->dev, &u->result);
	wse_close(u->dev);
	u->dev = NULL;
}

/*
 * Waits, bounded, until a program the firmware just confirmed can be used:
 * a PARAMS_READ of its first weight. The driver marks the slot loaded
 * only when it lets go of the last piece's request, just after the WAIT
 * for it returns (driver/wse_link.c, wse_link_req_end(): done, then
 * retire), so a use at once could find it loading still (ENOENT); each
 * time that happens is counted, and reported.
 */
static int settle(struct user *u, uint32_t slot)
{
	uint64_t args[4] = { slot, WSE_LINK_PARAMS_WEIGHTS, 0 }, job;
	int ret, status;

	for (int i = 0; i < 100; i++) {
		ret = guest_submit(wse_dev_fd(u->dev), u->q, DRM_WSE_OP_PARAMS_READ,
				   u->result.handle, 0, 4, args, &job);
		if (ret != -ENOENT)
			break;
		u->rep->unsettled++;
		usleep(10000);
	}
	if (ret)
		return ret;
	ret = guest_wait_job(wse_dev_fd(u->dev), u->q, job, 30000, &status, NULL);
	return ret ? ret : status;
}

/*
 * Loads the user's program into its slot (the weight-streaming job's
 * systems first, which claims the slot), retrying while the slot is still
 * being freed, and names the host as its input. 0 or -errno.
 */
static int user_load(struct user *u, const char **what)
{
	const struct user_cfg *c = u->cfg;
	struct wse_input input = { .dataset = false };
	struct wse_program_info info;
	int64_t end = guest_now_ms() + 20000;
	int ret;

	do {
		*what = "its job's systems";
		ret = c->systems ? wse_appliance_job_slot(u->out, c->slot, c->systems) : 0;
		if (!ret) {
			*what = "the program";
			ret = wse_program_load(u->dev, u->q, c->slot, c->image, c->len, &info);
		}
		if (ret != -EBUSY)
			break;
		usleep(100000);
	} while (guest_now_ms() < end);
	if (ret)
		return ret;
	if (info.mode != c->prog->mode)
		return -EPROTO;
	*what = "its first use";
	ret = settle(u, c->slot);
	if (ret)
		return ret;
	*what = "the host as its input";
	return wse_appliance_input(u->out, c->slot, &input);
}

/* Submits the RUN of one training step. */
static int step_submit(struct user *u)
{
	struct wse_run run = { u->cfg->slot, WSE_RUN_TRAIN, 1, u->batch };

	return wse_run_submit(u->dev, u->q, &u->result, &run, &u->run_job);
}

/* Feeds step @step's batch to the RUN submitted, reads its losses, waits for it. */
static int step_feed(struct user *u, int step)
{
	const struct wsep_program *w = u->cfg->prog;
	struct wse_stream_io io[] = {
		{ DRM_WSE_OP_STREAM_WRITE, w->streams[u->ts.samples].id, u->dim, u->x,
		  (size_t)u->batch * u->dim },
		{ DRM_WSE_OP_STREAM_WRITE, w->streams[u->ts.labels].id, 4, u->y, u->batch * 4 },
		{ DRM_WSE_OP_STREAM_READ, w->streams[u->ts.losses].id, 4, u->loss, u->batch * 4 },
		{ DRM_WSE_OP_STREAM_READ, w->streams[u->ts.predictions].id, 4, u->pred,
		  u->batch * 4 },
	};
	struct wse_run_result res;
	int ret;

	batch_data(u, step);
	ret = wse_stream_batch(u->in, u->out, u->cfg->slot, io, 4);
	if (!ret)
		ret = wse_run_wait(u->dev, u->q, u->run_job, &u->result, wse_deadline_ns(60000),
				   &res);
	if (!ret && res.steps != 1)
		ret = -EIO;
	return ret;
}

static int step(struct user *u, int step)
{
	return step_submit(u) ?: step_feed(u, step);
}

/* Step @n's losses are those it gave when first trained, bit for bit. */
static bool losses_as_before(struct user *u, int n)
{
	return !memcmp(u->loss, u->lref[n], u->batch * sizeof(float));
}

/*
 * Setup: load, train steps 1, 2 and 3 (keeping their losses and the
 * parameters after 1 and 2), then go back to the parameters of step 1.
 */
static int user_setup(struct user *u)
{
	struct wse_appliance app;
	const char *what;
	int ret, s;

	ret = user_open(u);
	if (ret)
		return fail(u, 10, "opening the device: %s", wse_strerror(ret));
	ret = user_load(u, &what);
	if (ret)
		return fail(u, 11, "loading into slot %u (%s): %s", u->cfg->slot, what,
			    wse_strerror(ret));
	for (s = 1; s <= STEPS; s++) {
		ret = step(u, s);
		if (ret)
			return fail(u, 12, "training step %d: %s", s, wse_strerror(ret));
		memcpy(u->lref[s], u->loss, u->batch * sizeof(float));
		if (!(u->loss[0] > 0.0f))
			return fail(u, 13, "step %d: loss %g", s, (double)u->loss[0]);
		if (s <= 2) {
			ret = wse_params_read(u->out, u->cfg->slot, s == 1 ? &u->c1 : &u->c2);
			if (ret)
				return fail(u, 14, "reading its parameters: %s", wse_strerror(ret));
		}
	}
	ret = wse_params_write(u->out, u->cfg->slot, &u->c1);
	if (!ret)
		ret = wse_params_read(u->out, u->cfg->slot, &u->tmp);
	if (ret)
		return fail(u, 15, "going back to step 1: %s", wse_strerror(ret));
	if (!params_same(&u->tmp, &u->c1))
		return fail(u, 16, "the parameters written back read back otherwise");
	ret = wse_appliance_info(u->out, &app);
	if (ret)
		return fail(u, 17, "the appliance's state: %s", wse_strerror(ret));
	u->rep->job_systems = app.job_systems;
	u->next_step = 2;
	return 0;
}

/* After the other's attempts: the job is as it was, and trains as it did. */
static int user_verify(struct user *u)
{
	struct wse_appliance app;
	int ret;

	ret = wse_params_read(u->out, u->cfg->slot, &u->tmp);
	if (ret)
		return fail(u, 20, "reading its parameters: %s", wse_strerror(ret));
	if (!params_same(&u->tmp, &u->c1))
		return fail(u, 21, "its parameters changed while the other user tried");
	ret = wse_appliance_info(u->out, &app);
	if (ret)
		return fail(u, 22, "the appliance's state: %s", wse_strerror(ret));
	if (app.job_systems != u->rep->job_systems)
		return fail(u, 23, "the job's systems went from %u to %u", u->rep->job_systems,
			    app.job_systems);
	/* Its input is still the host's, its systems its own: the same bits. */
	ret = step(u, 2);
	if (ret)
		return fail(u, 24, "training step 2 again: %s", wse_strerror(ret));
	if (!losses_as_before(u, 2))
		return fail(u, 25, "step 2 again: loss %.9g, first %.9g", (double)u->loss[0],
			    (double)u->lref[2][0]);
	ret = wse_params_read(u->out, u->cfg->slot, &u->tmp);
	if (ret)
		return fail(u, 26, "reading its parameters: %s", wse_strerror(ret));
	if (!params_same(&u->tmp, &u->c2))
		return fail(u, 27, "its parameters after step 2 differ from the first time");
	u->next_step = 3;
	return 0;
}

/* The file closed, the device opened again and the program loaded afresh: step 1's bits. */
static int user_reopen(struct user *u)
{
	const char *what;
	int ret;

	user_close(u);
	ret = user_open(u);
	if (ret)
		return fail(u, 30, "opening the device again: %s", wse_strerror(ret));
	ret = user_load(u, &what);
	if (ret)
		return fail(u, 31, "loading into slot %u again (%s): %s", u->cfg->slot, what,
			    wse_strerror(ret));
	ret = step(u, 1);
	if (ret)
		return fail(u, 32, "training step 1 again: %s", wse_strerror(ret));
	if (!losses_as_before(u, 1))
		return fail(u, 33, "step 1 afresh: loss %.9g, first %.9g", (double)u->loss[0],
			    (double)u->lref[1][0]);
	u->next_step = 2;
	return 0;
}

/* ------------------------------------------------------ input workers */

#define DATASET		"fashion-mnist"
#define DATASET_DIR	"/usr/share/datasets/" DATASET

/* The input workers read the dataset for the slot, from sample @first on. */
static int input_dataset(struct wse_ring *r, uint32_t slot, uint32_t first)
{
	struct wse_input in = { .dataset = true, .path = DATASET, .split = "train",
				.first = first };

	return wse_appliance_input(r, slot, &in);
}

/* A step of the program the input workers feed: RUN, then only its results. */
static int fed_step(struct user *u)
{
	const struct wsep_program *w = u->cfg->prog;
	struct wse_stream_io io[] = {
		{ DRM_WSE_OP_STREAM_READ, w->streams[u->ts.losses].id, 4, u->loss, u->batch * 4 },
		{ DRM_WSE_OP_STREAM_READ, w->streams[u->ts.predictions].id, 4, u->pred,
		  u->batch * 4 },
	};
	struct wse_run_result res;
	int ret;

	ret = step_submit(u);
	if (!ret)
		ret = wse_stream_batch(u->in, u->out, u->cfg->slot, io, 2);
	if (!ret)
		ret = wse_run_wait(u->dev, u->q, u->run_job, &u->result, wse_deadline_ns(60000),
				   &res);
	if (!ret && res.steps != 1)
		ret = -EIO;
	return ret;
}

/*
 * The input workers feed this user's program. Its bits for samples
 * 128..255 from its first parameters; then samples 0..127 go through, so
 * that the feed's buffers hold other samples than the next ones; then
 * back to the first parameters, the next samples 128..255.
 */
static int user_setup_fed(struct user *u)
{
	const char *what;
	int ret;

	ret = user_open(u);
	if (ret)
		return fail(u, 70, "opening the device: %s", wse_strerror(ret));
	ret = user_load(u, &what);
	if (ret)
		return fail(u, 71, "loading into slot %u (%s): %s", u->cfg->slot, what,
			    wse_strerror(ret));
	if (u->cfg->systems)
		return 0;
	ret = wse_params_read(u->out, u->cfg->slot, &u->c1);
	if (ret)
		return fail(u, 75, "reading its parameters: %s", wse_strerror(ret));
	for (uint32_t first = 128, i = 0; i < 2 && !ret; i++, first ^= 128) {
		ret = input_dataset(u->out, u->cfg->slot, first);
		if (ret)
			return fail(u, 72, "naming the dataset for slot %u: %s", u->cfg->slot,
				    wse_strerror(ret));
		ret = fed_step(u);
		if (ret)
			return fail(u, 73, "a step the input workers feed: %s", wse_strerror(ret));
		if (!i)
			memcpy(u->lref[1], u->loss, u->batch * sizeof(float));
		ret = wse_params_write(u->out, u->cfg->slot, &u->c1);
	}
	if (!ret)
		ret = input_dataset(u->out, u->cfg->slot, 128);
	return ret ? fail(u, 74, "going back to the first parameters: %s", wse_strerror(ret)) : 0;
}

/*
 * The input workers, reached through this user's own slots only: for its
 * own weight-streaming job, and for a pipelined program of its own, while
 * they feed the other user's. Refused (EINVAL): they feed one program.
 */
static int user_take_the_workers(struct user *u)
{
	const struct user_cfg *c = u->cfg;
	int ret;

	ret = input_dataset(u->out, c->slot, 0);
	if (ret != -EINVAL)
		return fail(u, 76, "its job took the input workers feeding the other's program: %s",
			    wse_strerror(ret));
	ret = wse_program_load(u->dev, u->q, c->aux_slot, c->aux_image, c->aux_len, NULL);
	if (!ret)
		ret = settle(u, c->aux_slot);
	if (ret)
		return fail(u, 77, "loading a pipelined program into slot %u: %s", c->aux_slot,
			    wse_strerror(ret));
	ret = input_dataset(u->out, c->aux_slot, 0);
	if (ret != -EINVAL)
		return fail(u, 78, "its pipelined program took the input workers feeding the other's: %s",
			    wse_strerror(ret));
	/* Its own job still takes the host's samples. */
	ret = step(u, 1);
	return ret ? fail(u, 79, "its job, fed by the host: %s", wse_strerror(ret)) : 0;
}

/* The next step of the fed program: the samples it was to get, the bits it gave. */
static int user_fed_as_before(struct user *u)
{
	int ret = fed_step(u);

	if (ret)
		return fail(u, 80, "a step the input workers feed: %s", wse_strerror(ret));
	if (!losses_as_before(u, 1))
		return fail(u, 81, "the input workers fed it other samples: loss %.9g, %.9g before",
			    (double)u->loss[0], (double)u->lref[1][0]);
	return 0;
}

/* --------------------------------------------------- two loads at once */

/*
 * Loads the user's weight-streaming job once, at the same time as the
 * other user loads one on another queue: the appliance takes one of them
 * and refuses the other (EINVAL: one job at a time). The one taken trains
 * a step and is unloaded.
 */
static int user_load_at_once(struct user *u)
{
	const struct user_cfg *c = u->cfg;
	int ret;

	ret = wse_appliance_job_slot(u->out, c->slot, c->systems);
	if (ret)
		return fail(u, 90, "the job of slot %u: %s", c->slot, wse_strerror(ret));
	ret = wse_program_load(u->dev, u->q, c->slot, c->image, c->len, NULL);
	u->rep->load_ret = ret;
	if (ret == -EINVAL)
		return 0;
	if (!ret)
		ret = settle(u, c->slot);
	if (ret)
		return fail(u, 91, "loading its job: %s", wse_strerror(ret));
	ret = step(u, 1);
	if (ret)
		return fail(u, 92, "a step of its job: %s", wse_strerror(ret));
	ret = wse_program_unload(u->dev, u->q, c->slot);
	return ret ? fail(u, 93, "unloading its job: %s", wse_strerror(ret)) : 0;
}

/* ------------------------------------------------------------- probes */

enum where { W_SKIP, W_DRIVER, W_FIRMWARE };
enum slot_kind { K_MINE, K_THEIRS, K_FREE, K_ZERO, K_OUTSIDE };
enum arena { A_NONE, A_SEND, A_RECV, A_OK };

struct want {
	enum where where;
	int err;			/* 0: carried out */
};

/* One call to try. */
struct probe {
	uint32_t op;
	uint64_t args[4];
	enum arena arena;
	uint32_t off, len;
	struct want want;
	enum slot_kind kind;
};

static const char *const kind_names[] = { "own", "other's", "free", "0", "outside" };

/*
 * What the driver does with a job that uses the slot it names (streams,
 * RUN, a program's parameters): another file's slot is refused, a free
 * one is empty, slot 0 and one outside 1..255 are refused. The caller's
 * own is left out: the calls would change or wait on its own job.
 */
static struct want slot_use(enum slot_kind k)
{
	switch (k) {
	case K_THEIRS:
		return (struct want){ W_DRIVER, EACCES };
	case K_FREE:
		return (struct want){ W_DRIVER, ENOENT };
	case K_ZERO:
	case K_OUTSIDE:
		return (struct want){ W_DRIVER, EINVAL };
	default:
		return (struct want){ W_SKIP, 0 };
	}
}

/*
 * The answer a non-privileged caller must get for @op (with params
 * @which; @theirs_name: a snapshot named in the other user's area) on a
 * slot of kind @k, from driver/wse_job.c (wse_job_check(),
 * wse_job_slot_use(), wse_job_check_data()) and driver/wse_slots.c.
 */
static struct want want_of(uint32_t op, uint64_t which, bool theirs_name, enum slot_kind k)
{
	const struct want einval = { W_DRIVER, EINVAL };

	switch (op) {
	case DRM_WSE_OP_MEM_WRITE:
	case DRM_WSE_OP_MEM_READ:
		/* Every opener's device memory: CAP_SYS_ADMIN only, whatever the address. */
		return (struct want){ W_DRIVER, EPERM };
	case DRM_WSE_OP_DEVICE_STATS:
		/* The counters are anyone's; the operation takes no slot. */
		return k == K_ZERO ? (struct want){ W_FIRMWARE, 0 } : einval;
	case DRM_WSE_OP_PROGRAM_LOAD:
		/* A load claims: the other's slot is taken; a free one (or one's own) left out. */
		if (k == K_THEIRS)
			return (struct want){ W_DRIVER, EBUSY };
		return k == K_MINE || k == K_FREE ? (struct want){ W_SKIP, 0 } : slot_use(k);
	case DRM_WSE_OP_PROGRAM_UNLOAD:
	case DRM_WSE_OP_STREAM_WRITE:
	case DRM_WSE_OP_STREAM_READ:
	case DRM_WSE_OP_RUN:
		return slot_use(k);
	case DRM_WSE_OP_PARAMS_READ:
		switch (which) {
		case WSE_LINK_PARAMS_WEIGHTS:
		case WSE_LINK_PARAMS_OPT_STATE:
			/* One's own parameters: read (and compared below). */
			return k == K_MINE ? (struct want){ W_FIRMWARE, 0 } : slot_use(k);
		case WSE_LINK_PARAMS_SNAPSHOT:
			return slot_use(k);
		case WSE_LINK_PARAMS_APPLIANCE:
			/* The parts' state: slot 0's, anyone's. */
			return k == K_ZERO ? (struct want){ W_FIRMWARE, 0 } : einval;
		default:
			/* Written only (3, 5, 7), or no kind at all. */
			return einval;
		}
	case DRM_WSE_OP_PARAMS_WRITE:
		switch (which) {
		case WSE_LINK_PARAMS_WEIGHTS:
		case WSE_LINK_PARAMS_OPT_STATE:
		case WSE_LINK_PARAMS_INPUT:
		case WSE_LINK_PARAMS_SNAPSHOT:
			return slot_use(k);
		case WSE_LINK_PARAMS_SNAPSHOT_STORE:
			/* Into another user's area: refused wherever the slot lets it through. */
			if (theirs_name && k == K_MINE)
				return (struct want){ W_DRIVER, EACCES };
			return slot_use(k);
		case WSE_LINK_PARAMS_JOB:
			/* Slot 0's is everyone's default (an administrator's); a slot's claims. */
			if (k == K_ZERO)
				return (struct want){ W_DRIVER, EPERM };
			if (k == K_THEIRS)
				return (struct want){ W_DRIVER, EBUSY };
			return k == K_OUTSIDE ? einval : (struct want){ W_SKIP, 0 };
		default:
			return einval;
		}
	default:
		/* No such operation. */
		return einval;
	}
}

/* Where a probe's data is, and how much, by operation and kind. */
static void probe_data(struct probe *p, uint64_t which, bool theirs_name)
{
	p->arena = A_NONE;
	p->off = 0;
	p->len = 0;
	switch (p->op) {
	case DRM_WSE_OP_MEM_WRITE:
		p->arena = A_SEND;
		p->off = OFF_SMALL;
		p->len = SMALL;
		break;
	case DRM_WSE_OP_PROGRAM_LOAD:
		/* A piece of an image (the reply of a last one would land there too). */
		p->arena = A_SEND;
		p->off = OFF_IMAGE;
		p->len = 4096;
		break;
	case DRM_WSE_OP_STREAM_WRITE:
		p->arena = A_SEND;
		p->off = OFF_SAMPLES;
		p->len = 0;	/* set by the caller: samples of the program */
		break;
	case DRM_WSE_OP_PARAMS_WRITE:
		p->arena = A_SEND;
		switch (which) {
		case WSE_LINK_PARAMS_WEIGHTS:
		case WSE_LINK_PARAMS_OPT_STATE:
			p->off = OFF_WEIGHTS;
			p->len = 4096;
			break;
		case WSE_LINK_PARAMS_JOB:
			p->off = OFF_JOB;
			p->len = sizeof(struct wse_link_job);
			break;
		case WSE_LINK_PARAMS_INPUT:
			p->off = OFF_INPUT;
			p->len = sizeof(struct wse_link_input);
			break;
		case WSE_LINK_PARAMS_SNAPSHOT:
			p->off = OFF_SNAP;
			p->len = 8;
			break;
		case WSE_LINK_PARAMS_SNAPSHOT_STORE:
			p->off = theirs_name ? OFF_STORE_THEIRS : OFF_STORE_MINE;
			p->len = sizeof(struct wse_link_snapshot_store);
			break;
		default:
			p->off = OFF_SMALL;
			p->len = SMALL;
		}
		break;
	case DRM_WSE_OP_PROGRAM_UNLOAD:
		break;
	case DRM_WSE_OP_MEM_READ:
		p->arena = A_RECV;
		p->len = SMALL;
		break;
	case DRM_WSE_OP_STREAM_READ:
		p->arena = A_RECV;
		p->len = 512;
		break;
	case DRM_WSE_OP_RUN:
		p->arena = A_RECV;
		p->len = 64;
		break;
	case DRM_WSE_OP_PARAMS_READ:
	case DRM_WSE_OP_DEVICE_STATS:
		p->arena = A_RECV;
		p->len = 4096;
		break;
	default:
		/* No such operation: one with data, so that only the op is wrong. */
		p->arena = A_SEND;
		p->off = OFF_SMALL;
		p->len = SMALL;
	}
}

struct sweep {
	struct user *u;
	int fd;
	uint32_t q;
	uint32_t own;			/* the file's own slot, or 0 */
	uint32_t handle[4];		/* BOs of the SUBMIT path, by arena */
	uint8_t *bo[4];
	uint8_t *mem[4];		/* plain memory of the io_uring path, by arena */
	uint8_t *pristine;		/* what the send arena holds */
	struct probe *probes;
	unsigned int n, ok_used;
	struct sweep_count *count;
	const char *path;
};

static enum slot_kind kind_of(const struct sweep *s, uint64_t slot)
{
	if (slot >= 256)
		return K_OUTSIDE;
	if (!slot)
		return K_ZERO;
	if (s->own && slot == s->own)
		return K_MINE;
	if (slot == s->u->cfg->slot || slot == s->u->cfg->other_slot)
		return K_THEIRS;
	return K_FREE;
}

static const uint32_t probe_ops[] = {
	0, DRM_WSE_OP_MEM_WRITE, DRM_WSE_OP_MEM_READ, DRM_WSE_OP_PROGRAM_LOAD,
	DRM_WSE_OP_PROGRAM_LOAD, DRM_WSE_OP_PROGRAM_UNLOAD, DRM_WSE_OP_STREAM_WRITE,
	DRM_WSE_OP_STREAM_READ, DRM_WSE_OP_RUN, DRM_WSE_OP_PARAMS_READ, DRM_WSE_OP_PARAMS_WRITE,
	DRM_WSE_OP_DEVICE_STATS, 11, 0xffffffffu,
};
/* Every kind of parameters, none, and one that is 1 in its low 32 bits. */
static const uint64_t probe_which[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 1000, (1ULL << 32) + 1 };

/* Every call the sweep tries, with the answer each must get. */
static int build_probes(struct sweep *s)
{
	const struct user_cfg *c = s->u->cfg;
	const struct wsep_program *w = c->prog;
	uint64_t slots[261];
	unsigned int ns = 0, max;

	for (uint64_t i = 0; i < 256; i++)
		slots[ns++] = i;
	slots[ns++] = 256;
	slots[ns++] = 0xffffffffULL;
	slots[ns++] = 1ULL << 32;
	slots[ns++] = (1ULL << 32) + c->other_slot;
	slots[ns++] = (1ULL << 32) + c->slot;
	max = ns * (sizeof(probe_ops) / sizeof(probe_ops[0])) *
	      (sizeof(probe_which) / sizeof(probe_which[0]) + 1);
	s->probes = calloc(max, sizeof(*s->probes));
	if (!s->probes)
		return -ENOMEM;
	s->n = 0;
	s->ok_used = 0;
	for (unsigned int i = 0; i < ns; i++) {
		enum slot_kind k = kind_of(s, slots[i]);

		for (unsigned int o = 0; o < sizeof(probe_ops) / sizeof(probe_ops[0]); o++) {
			uint32_t op = probe_ops[o];
			bool params = op == DRM_WSE_OP_PARAMS_READ || op == DRM_WSE_OP_PARAMS_WRITE;
			unsigned int nw = params ? sizeof(probe_which) / sizeof(probe_which[0]) : 1;

			for (unsigned int wi = 0; wi < nw; wi++) {
				uint64_t which = params ? probe_which[wi] : 0;
				/* A snapshot stored into the caller's area, and the other's. */
				int names = op == DRM_WSE_OP_PARAMS_WRITE &&
					    which == WSE_LINK_PARAMS_SNAPSHOT_STORE ? 2 : 1;

				for (int v = 0; v < names; v++) {
					struct probe *p = &s->probes[s->n];

					p->op = op;
					p->kind = k;
					p->want = want_of(op, which, v == 1, k);
					probe_data(p, which, v == 1);
					p->args[0] = slots[i];
					if (params)
						p->args[1] = which;
					if (op == DRM_WSE_OP_PROGRAM_LOAD) {
						/* The first piece of an image, then a last one. */
						bool last = o == 4;

						p->args[1] = last ? WSE_LINK_PROG_LAST : 0;
						p->args[2] = last ? 4096 : c->len;
					}
					if (op == DRM_WSE_OP_STREAM_WRITE) {
						p->args[1] = w->streams[s->u->ts.samples].id;
						p->len = PROBE_SAMPLES * s->u->dim;
					}
					if (op == DRM_WSE_OP_STREAM_READ)
						p->args[1] = w->streams[s->u->ts.losses].id;
					if (op == DRM_WSE_OP_RUN) {
						p->args[1] = WSE_RUN_TRAIN;
						p->args[2] = 1;
						p->args[3] = s->u->batch;
					}
					/* Each call carried out gets room of its own. */
					if (p->want.where == W_FIRMWARE && !p->want.err &&
					    p->arena == A_RECV) {
						p->arena = A_OK;
						p->off = 4096 * s->ok_used++;
						if (s->ok_used > ARENA / 4096)
							return -ENOSPC;
					}
					s->n++;
				}
			}
		}
	}
	return 0;
}

/* The drm-jobs-hwqN line of the file's fdinfo: jobs it sent toward the firmware there. */
static long long fdinfo_jobs(int fd, int hwq)
{
	char path[64], line[256], key[32];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "drm-jobs-hwq%d:", hwq);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtoll(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static const char *errname(int err)
{
	static char buf[16];

	switch (err) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EPROTO: return "EPROTO";
	case ETIME: return "ETIME";
	}
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

/*
 * Judges one answer: @err (0 or an errno), and @where it came from when
 * the path tells (W_SKIP: it does not). Counts it; logs the first wrong ones.
 */
static void judge(struct sweep *s, const struct probe *p, int err, enum where where,
		  const void *reply, uint32_t reply_len)
{
	struct user_report *rep = s->u->rep;
	struct sweep_count *c = s->count;
	bool right = err == p->want.err && (where == W_SKIP || where == p->want.where);

	c->tried++;
	/* One's own parameters, read while the other user tries: as they were. */
	if (right && !err && p->op == DRM_WSE_OP_PARAMS_READ && p->kind == K_MINE) {
		const struct wse_params *c1 = &s->u->c1;
		const void *want = p->args[1] == WSE_LINK_PARAMS_WEIGHTS ? (void *)c1->weights :
				   (void *)c1->state;
		uint64_t have = (p->args[1] == WSE_LINK_PARAMS_WEIGHTS ? 1 : c1->state_arrays) *
				c1->floats * sizeof(float);

		right = reply_len == (have < p->len ? have : p->len) &&
			!memcmp(reply, want, reply_len);
	} else if (right && !err) {
		right = reply_len > 0;
	}
	if (!right) {
		c->wrong++;
		if (rep->wrong_logged < sizeof(rep->wrong) / sizeof(rep->wrong[0]))
			snprintf(rep->wrong[rep->wrong_logged++], sizeof(rep->wrong[0]),
				 "user %c %s: op %u args %#llx %#llx on a slot %s: got %s%s, want %s%s",
				 s->u->cfg->name, s->path, p->op, (unsigned long long)p->args[0],
				 (unsigned long long)p->args[1], kind_names[p->kind], errname(err),
				 where == W_FIRMWARE ? " from the firmware" : "",
				 errname(p->want.err),
				 p->want.where == W_FIRMWARE ? " from the firmware" : "");
		return;
	}
	if (!err) {
		c->allowed++;
	} else if (p->want.where == W_FIRMWARE) {
		c->fw_refused++;
	} else {
		for (unsigned int i = 0; i < NERRNOS; i++)
			if (errnos[i] == err)
				c->refused[i]++;
	}
}

/* Every probe by SUBMIT, one at a time; those that reach the firmware are waited for. */
static int sweep_submit(struct sweep *s)
{
	for (unsigned int i = 0; i < s->n; i++) {
		const struct probe *p = &s->probes[i];
		struct drm_wse_submit sub = {
			.queue_id = s->q, .op = p->op, .timeout_ms = 10000,
			.handle = p->arena != A_NONE ? s->handle[p->arena] : 0,
			.bo_offset = p->off, .length = p->len,
		};
		int status = 0;
		uint32_t len = 0;

		if (p->want.where == W_SKIP) {
			s->count->skipped++;
			continue;
		}
		memcpy(sub.args, p->args, sizeof(sub.args));
		if (ioctl(s->fd, DRM_IOCTL_WSE_SUBMIT, &sub)) {
			judge(s, p, errno, W_DRIVER, NULL, 0);
			continue;
		}
		if (guest_wait_job(s->fd, s->q, sub.job_id, 15000, &status, &len))
			return fail(s->u, 40, "%s: op %u on slot %#llx: no answer in 15 s", s->path,
				    p->op, (unsigned long long)p->args[0]);
		judge(s, p, -status, W_FIRMWARE,
		      p->arena != A_NONE ? s->bo[p->arena] + p->off : NULL, len);
	}
	return 0;
}

/* Every probe by io_uring, in batches; the answers say only the errno. */
static int sweep_uring(struct sweep *s)
{
	struct io_uring ring;
	unsigned int next = 0, batch = 64;
	int ret;

	ret = io_uring_queue_init(128, &ring, IORING_SETUP_SQE128);
	if (ret)
		return fail(s->u, 41, "io_uring_queue_init: %s", strerror(-ret));
	while (next < s->n && !ret) {
		unsigned int sent = 0, reaped = 0;

		for (; next < s->n && sent < batch; next++) {
			const struct probe *p = &s->probes[next];
			struct drm_wse_uring_job j = {
				.queue_id = s->q, .op = p->op, .timeout_ms = 10000,
				.length = p->len,
				.addr = p->len ? (uintptr_t)(s->mem[p->arena] + p->off) : 0,
			};

			if (p->want.where == W_SKIP) {
				s->count->skipped++;
				continue;
			}
			memcpy(j.args, p->args, sizeof(j.args));
			guest_uring_prep(io_uring_get_sqe(&ring), s->fd, &j, next, -1);
			sent++;
		}
		if (sent && io_uring_submit(&ring) != (int)sent) {
			ret = fail(s->u, 42, "io_uring_submit did not take %u commands", sent);
			break;
		}
		while (reaped < sent) {
			struct __kernel_timespec ts = { .tv_sec = 15 };
			struct io_uring_cqe *cqe;
			const struct probe *p;

			if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts)) {
				ret = fail(s->u, 43, "%u io_uring commands unanswered after 15 s",
					   sent - reaped);
				break;
			}
			p = &s->probes[cqe->user_data];
			judge(s, p, cqe->res < 0 ? -cqe->res : 0, W_SKIP,
			      p->arena != A_NONE ? s->mem[p->arena] + p->off : NULL,
			      cqe->res > 0 ? (uint32_t)cqe->res : 0);
			io_uring_cqe_seen(&ring, cqe);
			reaped++;
		}
	}
	io_uring_queue_exit(&ring);
	return ret;
}

/* Fills the send arena with what each probe sends. */
static void send_arena(const struct sweep *s, uint8_t *a)
{
	const struct user_cfg *c = s->u->cfg;
	struct wse_link_input_info input = { .source = WSE_LINK_INPUT_DATASET };
	struct wse_link_job_info job = { .systems = 1 };
	struct wse_link_snapshot_store *st;
	float *f = (float *)(a + OFF_WEIGHTS);

	memset(a, 0x3c, ARENA);
	memcpy(a + OFF_IMAGE, c->image, c->len < 4096 ? c->len : 4096);
	for (unsigned int i = 0; i < 1024; i++)
		f[i] = 0.25f;
	wse_link_job_encode((struct wse_link_job *)(a + OFF_JOB), &job);
	/* Were it let through, the other's job would take the workers' samples. */
	snprintf(input.dataset, sizeof(input.dataset), "fashion-mnist");
	snprintf(input.split, sizeof(input.split), "train");
	wse_link_input_encode((struct wse_link_input *)(a + OFF_INPUT), &input);
	st = (struct wse_link_snapshot_store *)(a + OFF_STORE_MINE);
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "u%u/isolation", (unsigned int)c->uid);
	st = (struct wse_link_snapshot_store *)(a + OFF_STORE_THEIRS);
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "u%u/isolation", (unsigned int)c->other_uid);
	memset(a + OFF_SNAP, 0, 8);
}

/* No refused call wrote into the caller's buffers, nor into what it sent. */
static bool arenas_untouched(const struct sweep *s, uint8_t *const *a)
{
	for (size_t i = 0; i < ARENA; i++)
		if (a[A_RECV][i] != CANARY)
			return false;
	return !memcmp(a[A_SEND], s->pristine, ARENA);
}

/*
 * Both paths from file @fd (its own slot @own, or 0): SUBMIT, then
 * io_uring, each judged, counted, and checked against the fdinfo counter.
 */
static int sweep_file(struct user *u, int fd, uint32_t own, struct sweep_count *count)
{
	struct sweep s = { .u = u, .fd = fd, .own = own };
	unsigned int expect_fw = 0;
	long long before;
	int ret;

	ret = guest_queue_create(fd, HWQ_PROBE, 256, 10000, &s.q);
	if (ret)
		return fail(u, 44, "a probe queue: %s", strerror(-ret));
	for (int a = A_SEND; a <= A_OK; a++) {
		ret = guest_bo(fd, ARENA, &s.handle[a], (void **)&s.bo[a]);
		if (ret)
			return fail(u, 45, "a probe buffer object: %s", strerror(-ret));
		s.mem[a] = malloc(ARENA);
		if (!s.mem[a])
			return fail(u, 46, "out of memory");
	}
	s.pristine = malloc(ARENA);
	if (!s.pristine || build_probes(&s))
		return fail(u, 46, "out of memory");
	send_arena(&s, s.pristine);
	for (unsigned int i = 0; i < s.n; i++)
		expect_fw += s.probes[i].want.where == W_FIRMWARE;

	for (int path = PATH_SUBMIT; path < PATHS && !ret; path++) {
		uint8_t **a = path == PATH_SUBMIT ? s.bo : s.mem;

		memcpy(a[A_SEND], s.pristine, ARENA);
		memset(a[A_RECV], CANARY, ARENA);
		memset(a[A_OK], CANARY, ARENA);
		s.count = &count[path];
		s.path = path == PATH_SUBMIT ? "SUBMIT" : "io_uring";
		before = fdinfo_jobs(fd, HWQ_PROBE);
		ret = path == PATH_SUBMIT ? sweep_submit(&s) : sweep_uring(&s);
		s.count->fw_jobs = fdinfo_jobs(fd, HWQ_PROBE) - before;
		if (ret)
			break;
		if (!arenas_untouched(&s, a))
			ret = fail(u, 47, "%s: a refused call wrote into the caller's buffers", s.path);
		else if (before < 0 || s.count->fw_jobs != expect_fw)
			ret = fail(u, 48, "%s: %lld calls reached the firmware, %u should have",
				   s.path, s.count->fw_jobs, expect_fw);
		else if (s.count->wrong)
			ret = fail(u, 49, "%s: %u calls answered wrongly", s.path, s.count->wrong);
	}
	for (int a = A_SEND; a <= A_OK; a++) {
		struct drm_gem_close gc = { .handle = s.handle[a] };

		if (s.bo[a])
			munmap(s.bo[a], ARENA);
		if (s.handle[a])
			ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc);
		free(s.mem[a]);
	}
	ioctl(fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &(struct drm_wse_queue_destroy){ .queue_id = s.q });
	free(s.pristine);
	free(s.probes);
	return ret;
}

/* The sweep from the file that holds the job, then from a second file of the same user. */
static int user_probe(struct user *u)
{
	int64_t t0 = guest_now_ms();
	int fd, ret;

	ret = sweep_file(u, wse_dev_fd(u->dev), u->cfg->slot, u->rep->sweep[FILE_OWNER]);
	if (ret)
		return ret;
	/* A file is not its user: the same user's second file holds no slot. */
	fd = guest_open_accel(u->cfg->minor);
	if (fd < 0)
		return fail(u, 50, "a second file: %s", strerror(errno));
	ret = sweep_file(u, fd, 0, u->rep->sweep[FILE_SECOND]);
	close(fd);
	u->rep->probe_ms = guest_now_ms() - t0;
	return ret;
}

/* ---------------------------------------------- a RUN never fed */

/*
 * A RUN of one step of the user's own program on hardware queue @hwq, on
 * a queue of its own, which it never feeds: still waiting a moment later.
 */
static int user_run_unfed(struct user *u, uint32_t hwq)
{
	struct wse_run run = { u->cfg->slot, WSE_RUN_TRAIN, 1, u->batch };
	struct wse_run_result res;
	int ret;

	ret = wse_queue_create(u->dev, hwq, 4, PHASE_MS, &u->stall_q);
	if (!ret)
		ret = wse_bo_alloc(u->dev, 4096, &u->stall_result);
	if (!ret)
		ret = wse_bo_map(u->dev, &u->stall_result);
	if (!ret)
		ret = wse_run_submit(u->dev, u->stall_q, &u->stall_result, &run, &u->stall_job);
	if (ret)
		return fail(u, 100, "a RUN on hardware queue %u: %s", hwq, wse_strerror(ret));
	ret = wse_run_wait(u->dev, u->stall_q, u->stall_job, &u->stall_result,
			   wse_deadline_ns(500), &res);
	if (ret != -ETIME)
		return fail(u, 101, "a RUN never fed, on hardware queue %u, ended: %s", hwq,
			    wse_strerror(ret));
	return 0;
}

/*
 * The RUN never fed goes with its queue (the driver cancels it on the
 * link, the appliance on the system); the program is free a moment later.
 */
static int user_run_unfed_end(struct user *u)
{
	int ret = wse_queue_destroy(u->dev, u->stall_q);

	wse_bo_free(u->dev, &u->stall_result);
	if (ret)
		return fail(u, 102, "its queue of the RUN never fed: %s", wse_strerror(ret));
	usleep(500000);
	return 0;
}

/* Back to step 1's parameters, then user_verify(): step 2's bits again. */
static int user_again(struct user *u)
{
	int ret = wse_params_write(u->out, u->cfg->slot, &u->c1);

	if (ret)
		return fail(u, 103, "going back to step 1: %s", wse_strerror(ret));
	return user_verify(u);
}

/* ------------------------------------------------ a user's order loop */

static int user_do(struct user *u, char order)
{
	int ret;

	switch (order) {
	case 's':
		return user_setup(u);
	case 'p':
		return user_probe(u);
	case 'v':
		return user_verify(u);
	case 'r':
		/* A RUN in flight while the other's file closes. */
		ret = step_submit(u);
		return ret ? fail(u, 60, "a RUN: %s", wse_strerror(ret)) : 0;
	case 'f':
		ret = step_feed(u, u->next_step);
		if (ret)
			return fail(u, 61, "step %d, the other's file closed meanwhile: %s",
				    u->next_step, wse_strerror(ret));
		if (!losses_as_before(u, u->next_step))
			return fail(u, 62, "step %d, the other's file closed meanwhile: loss %.9g, first %.9g",
				    u->next_step, (double)u->loss[0],
				    (double)u->lref[u->next_step][0]);
		u->next_step++;
		return 0;
	case 'c':
		user_close(u);
		return 0;
	case 'o':
		return user_reopen(u);
	case 'S':
		return user_setup_fed(u);
	case 'T':
		return user_take_the_workers(u);
	case 'F':
		return user_fed_as_before(u);
	case 'O':
		ret = user_open(u);
		return ret ? fail(u, 64, "opening the device: %s", wse_strerror(ret)) : 0;
	case 'J':
		return user_load_at_once(u);
	case 'w':
		return user_run_unfed(u, HWQ_PROBE);
	case 'W':
		return user_run_unfed(u, HWQ_RUN);
	case 'x':
		return user_run_unfed_end(u);
	case 'a':
		return user_again(u);
	}
	return fail(u, 63, "no such order '%c'", order);
}

/* A user's process: orders from @cmd, answers ('k' or 'f') on @ack. */
static int user_main(const struct user_cfg *cfg, struct user_report *rep, int cmd, int ack)
{
	const struct wsep_program *w = cfg->prog;
	struct user u = { .cfg = cfg, .rep = rep };
	char err[256], order;

	if (wsep_train_streams(w, &u.ts, err, sizeof(err)))
		return fail(&u, 2, "%s", err);
	u.batch = w->batch;
	u.dim = w->input_dim;
	u.classes = w->layers[w->num_layers - 1].out;
	u.x = malloc((size_t)u.batch * u.dim);
	u.y = malloc(u.batch * 4);
	u.pred = malloc(u.batch * 4);
	u.loss = malloc(u.batch * 4);
	for (int s = 1; s <= STEPS; s++)
		u.lref[s] = malloc(u.batch * 4);
	if (!u.x || !u.y || !u.pred || !u.loss || !u.lref[1] || !u.lref[2] || !u.lref[3] ||
	    params_alloc(&u, &u.c1) || params_alloc(&u, &u.c2) || params_alloc(&u, &u.tmp))
		return fail(&u, 3, "out of memory");
	for (;;) {
		struct pollfd p = { .fd = cmd, .events = POLLIN };
		char answer;
		int ret;

		if (poll(&p, 1, PHASE_MS) != 1 || read(cmd, &order, 1) != 1)
			return fail(&u, 4, "no order from the root within %d s", PHASE_MS / 1000);
		if (order == 'q')
			break;
		ret = user_do(&u, order);
		answer = ret ? 'f' : 'k';
		if (write(ack, &answer, 1) != 1 || ret)
			return ret ? ret : 5;
	}
	user_close(&u);
	return 0;
}

/* ---------------------------------------------------------- the root */

struct child {
	pid_t pid;
	int cmd, ack;
};

FIXTURE(isolation) {
	struct wse_ctl *ctl;
	struct guest_peer appliance;
	struct wse_dev_status dev;
	bool attached;
	gid_t gid;
	struct wsep_program *ws, *pl;
	void *ws_image, *pl_image;
	size_t ws_len, pl_len;
	struct user_report *rep;	/* [2], shared with the users */
	struct child child[2];
};

FIXTURE_SETUP(isolation)
{
	char err[256], addr[160];

	self->attached = false;
	self->appliance.pid = 0;
	self->ws = self->pl = NULL;
	self->ws_image = self->pl_image = NULL;
	self->child[0].pid = self->child[1].pid = 0;
	self->rep = mmap(NULL, 2 * sizeof(*self->rep), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->rep);
	memset(self->rep, 0, 2 * sizeof(*self->rep));
	ASSERT_EQ(0, guest_compile_fc_mnist(IMAGE_WS, "weight_streaming", &self->ws_image,
					    &self->ws_len, &self->ws, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, guest_compile_fc_mnist(IMAGE_PL, "pipelined", &self->pl_image,
					    &self->pl_len, &self->pl, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(WSEP_MODE_WEIGHT_STREAMING, self->ws->mode);
	ASSERT_EQ(WSEP_MODE_PIPELINED, self->pl->mode);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	/* The appliance wsevm started on the host, or one of our own. */
	if (!guest_host_appliance(addr)) {
		ASSERT_EQ(0, guest_peer_start(&self->appliance, "wse-appliance", "--systems", "2",
					      "--fw-arg=--wafer=64x64", "--log-level", "warn",
					      NULL));
		snprintf(addr, sizeof(addr), "%s", self->appliance.addr);
	}
	ASSERT_EQ(0, guest_attach(self->ctl, addr, 0, &self->dev));
	self->attached = true;
	ASSERT_EQ(0, guest_share_node(self->dev.accel_minor, &self->gid));
}

FIXTURE_TEARDOWN(isolation)
{
	for (int i = 0; i < 2; i++) {
		if (self->child[i].pid > 0) {
			kill(self->child[i].pid, SIGKILL);
			waitpid(self->child[i].pid, NULL, 0);
		}
	}
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	if (self->appliance.pid > 0)
		guest_peer_stop(&self->appliance, SIGTERM);
	wse_ctl_close(self->ctl);
	wsep_program_free(self->ws);
	wsep_program_free(self->pl);
	free(self->ws_image);
	free(self->pl_image);
	unlink(IMAGE_WS);
	unlink(IMAGE_PL);
	munmap(self->rep, 2 * sizeof(*self->rep));
}

/* Starts a user's process, as @cfg->uid in the accel group. */
static int child_start(struct child *ch, const struct user_cfg *cfg, struct user_report *rep,
		       gid_t gid)
{
	int cmd[2], ack[2];

	if (pipe(cmd) || pipe(ack))
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		_exit(guest_become(cfg->uid, gid, true) ? 1 : user_main(cfg, rep, cmd[0], ack[1]));
	}
	close(cmd[0]);
	close(ack[1]);
	ch->cmd = cmd[1];
	ch->ack = ack[0];
	return 0;
}

static int child_order(struct child *ch, char order)
{
	return write(ch->cmd, &order, 1) == 1 ? 0 : -1;
}

/* The user's answer to its last order: 0 done, -1 failed or silent. */
static int child_answer(struct child *ch)
{
	struct pollfd p = { .fd = ch->ack, .events = POLLIN };
	char answer;

	if (poll(&p, 1, PHASE_MS) != 1 || read(ch->ack, &answer, 1) != 1)
		return -1;
	return answer == 'k' ? 0 : -1;
}

static int child_do(struct child *ch, char order)
{
	return child_order(ch, order) ?: child_answer(ch);
}

/*
 * A: the weight-streaming job on one system (and a pipelined program
 * besides, for the input workers' case); B: a pipelined program, which
 * goes on the other system.
 */
static void users(FIXTURE_DATA(isolation) *self, struct user_cfg cfg[2])
{
	cfg[0] = (struct user_cfg){
		.name = 'A', .uid = UID_A, .other_uid = UID_B, .slot = SLOT_A,
		.other_slot = SLOT_B, .systems = 1, .image = self->ws_image, .len = self->ws_len,
		.prog = self->ws, .minor = self->dev.accel_minor, .aux_image = self->pl_image,
		.aux_len = self->pl_len, .aux_slot = SLOT_A + 1, .hwq_run = HWQ_RUN,
	};
	cfg[1] = (struct user_cfg){
		.name = 'B', .uid = UID_B, .other_uid = UID_A, .slot = SLOT_B,
		.other_slot = SLOT_A, .image = self->pl_image, .len = self->pl_len,
		.prog = self->pl, .minor = self->dev.accel_minor, .hwq_run = HWQ_RUN,
	};
}

/* Both users told to quit, and reaped: each must end well. */
static void end_users(struct __test_metadata *_metadata, FIXTURE_DATA(isolation) *self,
		      const struct user_cfg cfg[2])
{
	int status;

	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, child_order(&self->child[i], 'q'));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(self->child[i].pid, waitpid(self->child[i].pid, &status, 0));
		self->child[i].pid = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("user %c: %s", cfg[i].name, self->rep[i].why);
		if (self->rep[i].unsettled)
			TH_LOG("user %c: %u time(s) a slot whose load had just ended was not usable yet (ENOENT)",
			       cfg[i].name, self->rep[i].unsettled);
	}
}

/* After a failure: the kernel log's last lines (the firmware's refusals, the link's state). */
static const char *kernel_log(void)
{
	static char out[4096];

	out[0] = '\n';
	if (guest_run(out + 1, sizeof(out) - 1, "dmesg | tail -n 12") < 0)
		out[0] = 0;
	return out;
}

static void log_counts(struct __test_metadata *_metadata, const struct user_report *r, char name)
{
	static const char *const files[] = { "the job's file", "a second file" };
	static const char *const paths[] = { "SUBMIT", "io_uring" };

	for (int f = 0; f < FILES; f++) {
		for (int p = 0; p < PATHS; p++) {
			const struct sweep_count *c = &r->sweep[f][p];

			TH_LOG("user %c, %s, %s: %u calls: %u refused by the driver (EINVAL %u, EPERM %u, EACCES %u, EBUSY %u, ENOENT %u), %u refused by the firmware (slot 0), %u carried out; %lld reached the firmware; %u left out; %u wrong",
			       name, files[f], paths[p], c->tried,
			       c->tried - c->allowed - c->fw_refused - c->wrong, c->refused[0],
			       c->refused[1], c->refused[2], c->refused[3], c->refused[4],
			       c->fw_refused, c->allowed, c->fw_jobs, c->skipped, c->wrong);
		}
	}
	for (unsigned int i = 0; i < r->wrong_logged; i++)
		TH_LOG("%s", r->wrong[i]);
}

TEST_F_TIMEOUT(isolation, neither_user_reaches_the_others_job, 600)
{
	struct user_cfg cfg[2];
	struct child *a = &self->child[0], *b = &self->child[1];
	int64_t t0 = guest_now_ms();
	int ra, rb;

	users(self, cfg);
	ASSERT_EQ(0, child_start(a, &cfg[0], &self->rep[0], self->gid));
	ASSERT_EQ(0, child_start(b, &cfg[1], &self->rep[1], self->gid));

	/* A's job on one system, then B's program on the other. */
	ASSERT_EQ(0, child_do(a, 's')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 's')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	EXPECT_EQ(1, self->rep[0].job_systems);
	EXPECT_EQ(1, self->rep[1].job_systems);
	TH_LOG("both jobs loaded and trained 3 steps after %lld ms",
	       (long long)(guest_now_ms() - t0));

	/* Both try everything at once. */
	ASSERT_EQ(0, child_order(a, 'p'));
	ASSERT_EQ(0, child_order(b, 'p'));
	ra = child_answer(a);
	rb = child_answer(b);
	log_counts(_metadata, &self->rep[0], 'A');
	log_counts(_metadata, &self->rep[1], 'B');
	TH_LOG("the attempts took %lld ms (A) and %lld ms (B)", (long long)self->rep[0].probe_ms,
	       (long long)self->rep[1].probe_ms);
	ASSERT_EQ(0, ra) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, rb) TH_LOG("%s%s", self->rep[1].why, kernel_log());

	/* Each job as it was: its parameters, its next step's bits, its systems. */
	ASSERT_EQ(0, child_do(a, 'v')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'v')) TH_LOG("%s%s", self->rep[1].why, kernel_log());

	/* B's file closes while A's RUN waits for its samples: A's step 3 as before. */
	ASSERT_EQ(0, child_do(a, 'r')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'c')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	ASSERT_EQ(0, child_do(a, 'f')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	/* B loads afresh (once its old slot is free), then A's file closes under B's RUN. */
	ASSERT_EQ(0, child_do(b, 'o')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'r')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	ASSERT_EQ(0, child_do(a, 'c')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'f')) TH_LOG("%s%s", self->rep[1].why, kernel_log());

	end_users(_metadata, self, cfg);
	TH_LOG("done in %lld ms", (long long)(guest_now_ms() - t0));
}

/*
 * The appliance's input workers feed one program at a time. While they
 * feed B's pipelined program, A names a dataset for its own job and for a
 * pipelined program of its own: both are refused, and B's next step gets
 * the samples it was to get (the same bits as before).
 */
TEST_F_TIMEOUT(isolation, the_input_workers_stay_with_the_program_they_feed, 300)
{
	struct user_cfg cfg[2];
	struct child *a = &self->child[0], *b = &self->child[1];
	struct stat st;

	users(self, cfg);

	if (stat(DATASET_DIR "/train-images-idx3-ubyte.gz", &st))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	ASSERT_EQ(0, child_start(a, &cfg[0], &self->rep[0], self->gid));
	ASSERT_EQ(0, child_start(b, &cfg[1], &self->rep[1], self->gid));
	ASSERT_EQ(0, child_do(a, 'S')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'S')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	ASSERT_EQ(0, child_do(a, 'T')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'F')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	end_users(_metadata, self, cfg);
}

/*
 * Both users load a weight-streaming job at the same moment, on two
 * hardware queues (which the appliance carries out in parallel): one is
 * taken, the other refused, and the appliance stays up. Five rounds.
 */
TEST_F_TIMEOUT(isolation, two_jobs_loaded_at_once_leave_one, 300)
{
	struct user_cfg cfg[2];
	struct child *a = &self->child[0], *b = &self->child[1];
	int ra, rb;

	users(self, cfg);
	cfg[1].systems = 1;
	cfg[1].image = self->ws_image;
	cfg[1].len = self->ws_len;
	cfg[1].prog = self->ws;
	cfg[1].hwq_run = HWQ_PROBE;
	ASSERT_EQ(0, child_start(a, &cfg[0], &self->rep[0], self->gid));
	ASSERT_EQ(0, child_start(b, &cfg[1], &self->rep[1], self->gid));
	ASSERT_EQ(0, child_do(a, 'O')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 'O')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	for (int round = 0; round < 5; round++) {
		self->rep[0].load_ret = self->rep[1].load_ret = 1;
		ASSERT_EQ(0, child_order(a, 'J'));
		ASSERT_EQ(0, child_order(b, 'J'));
		ra = child_answer(a);
		rb = child_answer(b);
		ASSERT_EQ(0, ra) TH_LOG("round %d: %s%s", round, self->rep[0].why, kernel_log());
		ASSERT_EQ(0, rb) TH_LOG("round %d: %s%s", round, self->rep[1].why, kernel_log());
		/* One taken, the other refused (or both, one after the other). */
		EXPECT_TRUE(!self->rep[0].load_ret || !self->rep[1].load_ret)
			TH_LOG("round %d: neither job was taken", round);
	}
	end_users(_metadata, self, cfg);
}

/*
 * B starts a RUN of its own program and never feeds it, on hardware
 * queue 0 and then on 3, the queues the coordinator drove A's job on when
 * the two shared a system: each time A's next step succeeds with the bits
 * it gave before, and B's RUN, cancelled with its queue, leaves B's
 * program training as it did.
 */
TEST_F_TIMEOUT(isolation, an_unfed_run_stops_no_other_users_job, 300)
{
	static const char hwq[2] = { 'w', 'W' };
	struct user_cfg cfg[2];
	struct child *a = &self->child[0], *b = &self->child[1];

	users(self, cfg);
	ASSERT_EQ(0, child_start(a, &cfg[0], &self->rep[0], self->gid));
	ASSERT_EQ(0, child_start(b, &cfg[1], &self->rep[1], self->gid));
	ASSERT_EQ(0, child_do(a, 's')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
	ASSERT_EQ(0, child_do(b, 's')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	EXPECT_EQ(1, self->rep[0].job_systems);
	for (int i = 0; i < 2; i++) {
		int64_t t0;

		TH_LOG("B's RUN never fed on hardware queue %d", hwq[i] == 'w' ? HWQ_PROBE : HWQ_RUN);
		ASSERT_EQ(0, child_do(b, hwq[i])) TH_LOG("%s%s", self->rep[1].why, kernel_log());
		t0 = guest_now_ms();
		ASSERT_EQ(0, child_do(a, 'a')) TH_LOG("%s%s", self->rep[0].why, kernel_log());
		TH_LOG("A's step 2 again beside it: %lld ms", (long long)(guest_now_ms() - t0));
		ASSERT_EQ(0, child_do(b, 'x')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	}
	ASSERT_EQ(0, child_do(b, 'v')) TH_LOG("%s%s", self->rep[1].why, kernel_log());
	end_users(_metadata, self, cfg);
}

TEST_HARNESS_MAIN
