// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-trainhost: a userspace host that trains a compiled program on a
 * device over the link itself, without the kernel driver: a layer
 * pipelined program on a system (wsefwd), or either kind on an appliance
 * (wse-appliance), where weight streaming is the appliance's business
 * (MemoryX, SwarmX) and the host only sends samples and reads losses.
 *
 * Data: a seeded synthetic problem (random inputs labelled by a random
 * linear teacher), IDX files such as Fashion-MNIST's, or a text corpus for
 * a graph program over tokens (the windows of models/gpt_data.py,
 * wse/textdata.h), whose validation loss is taken at the end. A program
 * fed tokens and a padding mask over WSE_MLM_VOCAB classes trains by
 * masked LM on the same windows (wse/textmlm.h, models/bert_mlm.py).
 *
 * --predict N then runs the trained weights over N samples twice, as EVAL
 * and as PREDICT, and prints how the two agree: the right answers EVAL
 * counts and those of PREDICT's classes, and (a program with a logits
 * stream) that each class is the argmax of its logits.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wse/dataset.h"
#include "wse/textdata.h"
#include "wse/textmlm.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse/wsep.h"
#include "wse/engine.h"

#define Q_RUN	WSE_LINK_Q_RUN
#define Q_IN	WSE_LINK_Q_IN
#define Q_OUT	WSE_LINK_Q_OUT
#define Q_CTL	WSE_LINK_Q_CTL
#define SLOT	1

struct opts {
	const char *connect, *program, *images, *labels;
	const char *text[WSE_TEXT_MAX_FILES];
	size_t n_text;
	uint32_t steps, report, run_steps, systems, predict;
	uint32_t loss_digits;	/* decimals of the reported loss */
	uint64_t seed;
	int timeout_ms;
	bool expect_falling, evaluate;
};

struct data {
	struct wse_dataset ds;	/* IDX images and labels, if given */
	uint32_t n, dim;
	uint8_t *x;		/* ds.images: n x dim */
	uint8_t *y;		/* ds.labels */
	float *teacher;		/* synthetic: classes x dim */
	struct engine_rng rng;
	uint32_t next;
	struct wse_text text;	/* --text */
	uint64_t drawn;		/* training windows taken */
	uint64_t seed;
	bool mlm;		/* --text for a masked-LM program: tokens and mask fed */
	uint64_t mlm_state;	/* the training windows' corruption */
};

/*
 * The text window at @offset as a sample's record and labels: its ids, or
 * for masked LM the corrupted ids then the padding mask's floats.
 */
static void text_sample(const struct data *d, uint32_t ctx, uint64_t offset, uint64_t *state,
			int32_t *rec, int32_t *y)
{
	if (d->mlm)
		wse_text_mlm_window(&d->text, offset, ctx, state, rec, (float *)(rec + ctx), y);
	else
		wse_text_window(&d->text, offset, ctx, rec, y);
}

/* Masked LM weighs each sample's loss (a mean) by its predicted rows. */
static uint32_t counted_rows(const struct data *d, const int32_t *y, uint32_t rows)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < rows; i++)
		k += !d->mlm || y[i] != WSE_MLM_IGNORE;
	return k;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wse-trainhost --connect ADDR --program FILE.wsep [options]\n"
"\n"
"Loads a compiled program into a wse device and trains it over the link:\n"
"samples and labels in, losses and predictions out. A weight-streaming\n"
"program needs an appliance (wse-appliance), which keeps the weights in\n"
"MemoryX; --systems spreads it over that many of the appliance's systems.\n"
"\n"
"  --connect ADDR      the device: tcp:HOST:PORT or unix:PATH\n"
"  --program FILE      a .wsep program (wsecc --compile-only)\n"
"  --steps N           training steps (default 200)\n"
"  --report N          print the mean loss and accuracy every N steps (default 50)\n"
"  --loss-digits N     decimals of the loss printed (1..9, default 4)\n"
"  --run-steps N       steps per RUN request (default: all in one RUN)\n"
"  --systems N         an appliance's systems the job uses (default: all)\n"
"  --images FILE       IDX images (u8, e.g. Fashion-MNIST train-images-idx3-ubyte)\n"
"  --labels FILE       IDX labels to go with them; default: synthetic data\n"
"  --text FILE         a text corpus for a program over tokens (repeat for more\n"
"                      files): the windows of models/gpt_data.py, seeded with\n"
"                      --seed, and the validation loss at the end; a program\n"
"                      fed tokens and a padding mask over 98 classes trains by\n"
"                      masked LM on them (models/bert_mlm.py's corruption)\n"
"  --seed N            seed of the synthetic data (default 1)\n"
"  --timeout-ms MS     per request (default 60000)\n"
"  --expect-falling    exit 1 unless the last report's loss is below the first's\n"
"  --evaluate          after training, one pass in eval mode (no dropout,\n"
"                      BatchNorm's running statistics) over the --images:\n"
"                      their mean loss and accuracy\n"
"  --predict N         then N samples (the validation windows, for --text) as\n"
"                      EVAL and as PREDICT: the right answers of each, and\n"
"                      whether every class is the argmax of its logits\n"
"  --help\n"
"\n"
"Exit status: 0 trained, 1 the device refused or the loss did not fall, 2 usage.\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("wse-trainhost: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static void batch_of(struct data *d, const struct wsep_program *p, uint32_t b, void *x,
		     int32_t *y)
{
	uint32_t classes = p->layers[p->num_layers - 1].out, dim = p->input_dim;
	uint32_t ctx = wsep_label_rows(p);

	for (uint32_t s = 0; d->text.ids && s < b; s++)
		text_sample(d, ctx, wse_text_train_offset(&d->text, d->seed, d->drawn++, ctx),
			    &d->mlm_state, (int32_t *)x + (size_t)s * dim, y + (size_t)s * ctx);
	for (uint32_t s = 0; !d->text.ids && s < b; s++) {
		float best = -1e30f, v;

		if (d->x) {
			const uint8_t *src = d->x + (size_t)d->next * dim;

			if (p->input_type == WSEP_ELEM_U8)
				memcpy((uint8_t *)x + (size_t)s * dim, src, dim);
			else
				for (uint32_t i = 0; i < dim; i++)
					((float *)x)[(size_t)s * dim + i] = src[i];
			y[s] = d->y[d->next];
			d->next = (d->next + 1) % d->n;
			continue;
		}
		for (uint32_t i = 0; i < dim; i++) {
			uint8_t byte = (uint8_t)(engine_rng_next(&d->rng) >> 56);

			if (p->input_type == WSEP_ELEM_U8)
				((uint8_t *)x)[(size_t)s * dim + i] = byte;
			else
				((float *)x)[(size_t)s * dim + i] = byte / 255.0f;
		}
		y[s] = 0;
		for (uint32_t c = 0; c < classes; c++) {
			v = 0;
			for (uint32_t i = 0; i < dim; i++) {
				float xi = p->input_type == WSEP_ELEM_U8 ?
					   ((uint8_t *)x)[(size_t)s * dim + i] / 255.0f :
					   ((float *)x)[(size_t)s * dim + i];

				v += d->teacher[(size_t)c * dim + i] * (xi - 0.5f);
			}
			if (v > best) {
				best = v;
				y[s] = (int32_t)c;
			}
		}
	}
}

/* A request whose failure is fatal for the tool. */
static int request(struct wse_link_client *cl, uint8_t op, uint16_t q, const void *hdr,
		   size_t hlen, const void *data, size_t dlen, size_t *rest)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)data, dlen } };
	struct wse_link_err err;
	uint32_t status;
	char text[256];

	if (wse_link_client_call(cl, op, q, iov, dlen ? 2 : (hlen ? 1 : 0), &status, rest, &err))
		return fail("%s: %s", wse_link_op_name(op), err.text);
	if (status) {
		wse_link_client_text(cl, *rest, text, sizeof(text));
		return fail("%s refused (%s): %s", wse_link_op_name(op),
			    wse_link_status_name(status), text);
	}
	return 0;
}

static int stream_read(struct wse_link_client *cl, uint32_t stream, void *out, uint32_t len)
{
	for (uint32_t got = 0, tries = 0; got < len; tries++) {
		struct wse_link_stream_info in = { SLOT, stream, len - got, 0 };
		struct wse_link_stream raw;
		size_t rest;

		if (tries > 100000)
			return fail("stream %u: no progress", stream);
		wse_link_stream_encode(&raw, &in);
		if (request(cl, WSE_LINK_OP_STREAM_READ, Q_OUT, &raw, sizeof(raw), NULL, 0, &rest))
			return -1;
		memcpy((uint8_t *)out + got, cl->buf + sizeof(struct wse_link_status), rest);
		got += (uint32_t)rest;
	}
	return 0;
}

static int load(struct wse_link_client *cl, const uint8_t *img, size_t len,
		struct wse_link_prog_info *info)
{
	size_t piece = cl->rules.max_payload - 64, rest = 0;
	struct wse_link_err err;

	for (size_t off = 0; off < len; off += piece) {
		struct wse_link_prog_load_info in = {
			.program = SLOT, .total = len, .offset = off,
			.flags = off + piece >= len ? WSE_LINK_PROG_LAST : 0,
		};
		struct wse_link_program_load raw;

		wse_link_prog_load_encode(&raw, &in);
		if (request(cl, WSE_LINK_OP_PROGRAM_LOAD, Q_CTL, &raw, sizeof(raw), img + off,
			    len - off < piece ? len - off : piece, &rest))
			return -1;
	}
	if (wse_link_prog_info_decode(cl->buf + sizeof(struct wse_link_status), rest, info, &err))
		return fail("PROGRAM_LOAD: %s", err.text);
	return 0;
}

/* An appliance's weight traffic: what SwarmX broadcast and reduced, and the frames to the systems. */
static void print_traffic(struct wse_link_client *cl)
{
	struct wse_link_params_info in = { 0, WSE_LINK_PARAMS_APPLIANCE, 0, 65536 };
	static struct wse_link_appliance_state st;
	struct wse_link_params raw;
	struct wse_link_err err;
	uint64_t tx = 0;
	size_t rest;

	wse_link_params_encode(&raw, &in);
	if (request(cl, WSE_LINK_OP_PARAMS_READ, Q_CTL, &raw, sizeof(raw), NULL, 0, &rest) ||
	    wse_link_appliance_state_decode(cl->buf + sizeof(struct wse_link_status), rest, &st,
					    &err))
		return;
	for (uint32_t i = 0; i < st.systems; i++)
		tx += st.part[i].bytes_tx;
	printf("traffic: %llu weight bytes broadcast, %llu gradient bytes reduced, %llu bytes in frames to the systems\n",
	       (unsigned long long)st.swarmx_broadcast, (unsigned long long)st.swarmx_reduced,
	       (unsigned long long)tx);
}

/* An appliance: the job's systems (WSE_LINK_PARAMS_JOB), before the program loads. */
static int set_systems(struct wse_link_client *cl, uint32_t systems)
{
	struct wse_link_params_info in = { 0, WSE_LINK_PARAMS_JOB, 0, sizeof(struct wse_link_job) };
	struct wse_link_job_info job = { systems };
	struct wse_link_params raw;
	struct wse_link_job body;
	size_t rest;

	wse_link_params_encode(&raw, &in);
	wse_link_job_encode(&body, &job);
	return request(cl, WSE_LINK_OP_PARAMS_WRITE, Q_CTL, &raw, sizeof(raw), &body, sizeof(body),
		       &rest);
}

/* The id of the stream at index @at of @p (the protocol names streams by id). */
static int sid(const struct wsep_program *p, int at)
{
	return (int)p->streams[at].id;
}

/*
 * The training loop keeps the device busy: one RUN of many steps (or
 * --run-steps at a time, two RUNs queued) and samples and labels written
 * AHEAD steps before they are used. Requests are submitted without
 * waiting; their answers are collected in the order the device gives
 * them.
 */
#define AHEAD		2	/* batches written ahead of the device (its rings hold 4) */
#define WRITES_KEPT	16	/* write answers left pending before collecting */

struct trainer {
	struct wse_link_client *cl;
	const struct opts *o;
	const struct wsep_program *p;
	struct data *d;
	uint32_t b, elem, steps_per_run, rows;
	int samples, labels, losses, preds, logits;	/* stream ids (logits: -1 if none) */
	void *x;
	int32_t *y[AHEAD + 1];		/* labels of the steps in flight, by step % (AHEAD + 1) */
	int32_t *pred;
	float *loss;
	uint32_t writes[WSE_LINK_CLIENT_MAX_PENDING], nwrites;	/* tags, oldest first */
	uint32_t runs[2], run_end[2], nruns;	/* RUN tags and their last steps, oldest first */
	uint32_t fed, run_through;	/* steps fed; steps covered by RUNs submitted */
	uint64_t cycles, est;
};

/* Waits for the answer to @tag and checks it; the payload is at cl->buf + 8. */
static int finish(struct wse_link_client *cl, uint32_t tag, uint8_t op, size_t *rest)
{
	struct wse_link_err err;
	uint32_t status;
	char text[256];

	if (wse_link_client_wait(cl, tag, -1, &status, rest, &err))
		return fail("%s: %s", wse_link_op_name(op), err.text);
	if (status) {
		wse_link_client_text(cl, *rest, text, sizeof(text));
		return fail("%s refused (%s): %s", wse_link_op_name(op),
			    wse_link_status_name(status), text);
	}
	return 0;
}

static int submit(struct wse_link_client *cl, uint8_t op, uint16_t q, const void *hdr, size_t hlen,
		  const void *data, size_t dlen, uint32_t *tag)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)data, dlen } };
	struct wse_link_err err;

	if (wse_link_client_submit(cl, op, q, iov, dlen ? 2 : 1, tag, &err))
		return fail("%s: %s", wse_link_op_name(op), err.text);
	return 0;
}

/* Collects write answers until at most @keep are pending. */
static int reap_writes(struct trainer *t, uint32_t keep)
{
	size_t rest;

	while (t->nwrites > keep) {
		if (finish(t->cl, t->writes[0], WSE_LINK_OP_STREAM_WRITE, &rest))
			return -1;
		memmove(t->writes, t->writes + 1, --t->nwrites * sizeof(t->writes[0]));
	}
	return 0;
}

/* A STREAM_WRITE whose answer is collected later (the data is sent before this returns). */
static int write_async(struct trainer *t, int stream, const void *data, uint32_t len)
{
	struct wse_link_stream_info in = { SLOT, (uint32_t)stream, len, 0 };
	struct wse_link_stream raw;

	if (reap_writes(t, WRITES_KEPT))
		return -1;
	wse_link_stream_encode(&raw, &in);
	if (submit(t->cl, WSE_LINK_OP_STREAM_WRITE, Q_IN, &raw, sizeof(raw), data, len,
		   &t->writes[t->nwrites]))
		return -1;
	t->nwrites++;
	return 0;
}

static int submit_read(struct trainer *t, int stream, uint32_t len, uint32_t *tag)
{
	struct wse_link_stream_info in = { SLOT, (uint32_t)stream, len, 0 };
	struct wse_link_stream raw;

	wse_link_stream_encode(&raw, &in);
	return submit(t->cl, WSE_LINK_OP_STREAM_READ, Q_OUT, &raw, sizeof(raw), NULL, 0, tag);
}

/* The answer to a submitted read of @len bytes; what it lacked is read at once. */
static int finish_read(struct trainer *t, uint32_t tag, int stream, void *out, uint32_t len)
{
	size_t rest;

	if (finish(t->cl, tag, WSE_LINK_OP_STREAM_READ, &rest))
		return -1;
	if (rest > len)
		return fail("stream %d: %zu bytes read, %u asked for", stream, rest, len);
	memcpy(out, t->cl->buf + sizeof(struct wse_link_status), rest);
	return rest < len ? stream_read(t->cl, (uint32_t)stream, (uint8_t *)out + rest,
					len - (uint32_t)rest) : 0;
}

/* Submits RUNs until two are queued or every step is covered. */
static int queue_runs(struct trainer *t)
{
	while (t->nruns < 2 && t->run_through < t->o->steps) {
		uint32_t n = t->o->steps - t->run_through;
		struct wse_link_run_info in;
		struct wse_link_run raw;

		if (n > t->steps_per_run)
			n = t->steps_per_run;
		in = (struct wse_link_run_info){ .program = SLOT, .kind = WSE_LINK_RUN_TRAIN,
						 .steps = n, .batch = t->b };
		wse_link_run_encode(&raw, &in);
		if (submit(t->cl, WSE_LINK_OP_RUN, Q_RUN, &raw, sizeof(raw), NULL, 0,
			   &t->runs[t->nruns]))
			return -1;
		t->run_through += n;
		t->run_end[t->nruns++] = t->run_through;
	}
	return 0;
}

/* The oldest RUN's answer: its modelled and estimated cycles. */
static int finish_run(struct trainer *t)
{
	struct wse_link_run_result_info res;
	struct wse_link_err err;
	size_t rest;

	if (finish(t->cl, t->runs[0], WSE_LINK_OP_RUN, &rest))
		return -1;
	if (wse_link_run_result_decode(t->cl->buf + sizeof(struct wse_link_status), rest, &res,
				       &err))
		return fail("RUN: %s", err.text);
	t->cycles += res.cycles;
	t->est += res.est_cycles;
	t->runs[0] = t->runs[1];
	t->run_end[0] = t->run_end[1];
	t->nruns--;
	return 0;
}

/* Samples and labels of the next step not yet fed. */
static int feed(struct trainer *t)
{
	int32_t *y = t->y[++t->fed % (AHEAD + 1)];

	batch_of(t->d, t->p, t->b, t->x, y);
	return write_async(t, t->samples, t->x, t->b * t->p->input_dim * t->elem) ||
	       write_async(t, t->labels, y, t->b * t->rows * 4);
}

static int trainer_setup(struct trainer *t)
{
	const struct wsep_program *p = t->p;
	struct wsep_train_streams ts;
	char why[256];

	t->b = p->batch;
	t->rows = wsep_label_rows(p);
	t->elem = p->input_type == WSEP_ELEM_U8 ? 1 : 4;
	t->steps_per_run = t->o->run_steps ? t->o->run_steps : t->o->steps;
	if (wsep_train_streams(p, &ts, why, sizeof(why)))
		return fail("%s", why);
	t->samples = sid(p, ts.samples);
	t->labels = sid(p, ts.labels);
	t->losses = sid(p, ts.losses);
	t->preds = sid(p, ts.predictions);
	t->logits = ts.logits < 0 ? -1 : sid(p, ts.logits);
	t->x = malloc((size_t)t->b * p->input_dim * t->elem);
	t->pred = malloc((size_t)t->b * t->rows * 4);
	t->loss = malloc(t->b * 4);
	for (int i = 0; i <= AHEAD; i++)
		t->y[i] = malloc((size_t)t->b * t->rows * 4);
	if (!t->x || !t->pred || !t->loss || !t->y[0] || !t->y[1] || !t->y[2])
		return fail("out of memory");
	return 0;
}

static void trainer_free(struct trainer *t)
{
	free(t->x);
	free(t->pred);
	free(t->loss);
	for (int i = 0; i <= AHEAD; i++)
		free(t->y[i]);
}

static int train_steps(struct trainer *t)
{
	const struct opts *o = t->o;
	uint32_t b = t->b;
	float first = -1, window = 0;
	uint64_t right = 0, scored = 0;	/* right of the rows scored (masked LM: predicted) */

	if (queue_runs(t))
		return -1;
	while (t->fed < o->steps && t->fed < AHEAD)
		if (feed(t))
			return -1;
	for (uint32_t step = 1; step <= o->steps; step++) {
		const int32_t *y = t->y[step % (AHEAD + 1)];
		uint32_t tl, tp;

		if (submit_read(t, t->losses, b * 4, &tl) ||
		    submit_read(t, t->preds, b * t->rows * 4, &tp) ||
		    finish_read(t, tl, t->losses, t->loss, b * 4) ||
		    finish_read(t, tp, t->preds, t->pred, b * t->rows * 4))
			return -1;
		if (t->fed < o->steps && feed(t))
			return -1;
		/* The RUN that ended with this step has answered, or is about to. */
		if (t->nruns && step == t->run_end[0] && (finish_run(t) || queue_runs(t)))
			return -1;
		{
			double sum = 0;
			uint64_t k = 0;

			for (uint32_t i = 0; i < b; i++) {
				uint32_t ki = counted_rows(t->d, y + (size_t)i * t->rows, t->rows);

				sum += (double)t->loss[i] * ki;
				k += ki;
			}
			window += k ? sum / (double)k : 0;
			scored += k;
		}
		for (uint32_t i = 0; i < b * t->rows; i++)
			right += t->pred[i] == y[i];
		if (step % o->report == 0 || step == o->steps) {
			uint32_t n = step % o->report ? step % o->report : o->report;

			printf("step %5u  loss %.*f  accuracy %.3f  cycles %llu (compiler %llu)\n",
			       step, (int)o->loss_digits, window / n, scored ? (double)right / (double)scored : 0,
			       (unsigned long long)t->cycles, (unsigned long long)t->est);
			fflush(stdout);
			if (first < 0)
				first = window / n;
			else if (step == o->steps && o->expect_falling && !(window / n < first))
				return fail("the loss did not fall: %.4f at first, %.4f at the end",
					    first, window / n);
			window = 0;
			right = 0;
			scored = 0;
		}
	}
	return reap_writes(t, 0);
}

/* One EVAL RUN of the samples in t->x and labels in @y: losses and predictions. */
static int eval_run(struct trainer *t, uint32_t cnt, const int32_t *y)
{
	struct wse_link_run_info in = { SLOT, WSE_LINK_RUN_EVAL, 1, cnt, 0, 0 };
	struct wse_link_run raw;
	uint32_t tag, tl, tp;
	size_t rest;

	wse_link_run_encode(&raw, &in);
	return submit(t->cl, WSE_LINK_OP_RUN, Q_RUN, &raw, sizeof(raw), NULL, 0, &tag) ||
	       write_async(t, t->samples, t->x, (size_t)cnt * t->p->input_dim * t->elem) ||
	       write_async(t, t->labels, y, (size_t)cnt * t->rows * 4) ||
	       submit_read(t, t->losses, cnt * 4, &tl) ||
	       submit_read(t, t->preds, cnt * t->rows * 4, &tp) ||
	       finish_read(t, tl, t->losses, t->loss, cnt * 4) ||
	       finish_read(t, tp, t->preds, t->pred, cnt * t->rows * 4) ||
	       finish(t->cl, tag, WSE_LINK_OP_RUN, &rest) || reap_writes(t, 0) ? -1 : 0;
}

/*
 * --evaluate: every image once in eval mode, a batch per EVAL RUN (the
 * last one shorter), in order.
 */
static int evaluate_images(struct trainer *t)
{
	const struct data *d = t->d;
	uint32_t dim = t->p->input_dim;
	uint64_t correct = 0;
	double total = 0;
	int32_t *y = t->y[0];

	for (uint32_t at = 0; at < d->n; at += t->b) {
		uint32_t cnt = d->n - at < t->b ? d->n - at : t->b;

		for (uint32_t i = 0; i < cnt; i++) {
			const uint8_t *src = d->x + (size_t)(at + i) * dim;

			if (t->elem == 1)
				memcpy((uint8_t *)t->x + (size_t)i * dim, src, dim);
			else
				for (uint32_t k = 0; k < dim; k++)
					((float *)t->x)[(size_t)i * dim + k] = src[k];
			y[i] = d->y[at + i];
		}
		if (eval_run(t, cnt, y))
			return -1;
		for (uint32_t i = 0; i < cnt; i++) {
			total += t->loss[i];
			correct += t->pred[i] == y[i];
		}
	}
	printf("evaluation loss %.4f accuracy %.4f over %u images\n", total / d->n,
	       (double)correct / d->n, d->n);
	return 0;
}

/*
 * The validation loss of a text program: every validation window once,
 * a batch per EVAL RUN (the last one shorter); weight streaming, the
 * appliance's MemoryX sends the weights.
 */
static int evaluate_text(struct trainer *t)
{
	const struct wse_text *tx = &t->d->text;
	uint32_t ctx = t->rows, dim = t->p->input_dim;
	uint64_t n = wse_text_val_windows(tx, ctx), counted = 0, state = WSE_MLM_VAL_STREAM;
	double total = 0;
	int32_t *y = t->y[0];

	for (uint64_t at = 0; at < n; at += t->b) {
		uint32_t cnt = n - at < t->b ? (uint32_t)(n - at) : t->b;

		for (uint32_t i = 0; i < cnt; i++)
			text_sample(t->d, ctx, wse_text_val_offset(tx, at + i, ctx), &state,
				    (int32_t *)t->x + (size_t)i * dim, y + (size_t)i * ctx);
		if (eval_run(t, cnt, y))
			return -1;
		/* Masked LM: over every predicted position, as models/compare_bert.py. */
		for (uint32_t i = 0; i < cnt; i++) {
			uint32_t k = counted_rows(t->d, y + (size_t)i * ctx, ctx);

			total += (double)t->loss[i] * (t->d->mlm ? k : 1);
			counted += t->d->mlm ? k : 1;
		}
	}
	printf("validation loss %.4f over %llu windows\n", counted ? total / (double)counted : 0,
	       (unsigned long long)n);
	return 0;
}

/*
 * @steps steps of @kind (EVAL or PREDICT) in one RUN, over the samples and
 * labels in @x and @y, a batch each: their classes into @pred and, for
 * PREDICT of a program with logits, their logits into @z. Each step's
 * samples go in, then its results are read: the device's rings never
 * hold more than a batch, whatever the RUN's length.
 */
static int infer(struct trainer *t, uint32_t kind, uint32_t steps, const uint8_t *x,
		 const int32_t *y, int32_t *pred, float *z)
{
	uint32_t b = t->b, xbytes = b * t->p->input_dim * t->elem, rows = t->rows;
	uint32_t zbytes = rows * wsep_classes(t->p) * 4, tag, tl, tp, tz;
	struct wse_link_run_info in = { SLOT, kind, steps, b, 0, 0 };
	bool predict = kind == WSE_LINK_RUN_PREDICT;
	struct wse_link_run raw;
	size_t rest;

	wse_link_run_encode(&raw, &in);
	if (submit(t->cl, WSE_LINK_OP_RUN, Q_RUN, &raw, sizeof(raw), NULL, 0, &tag))
		return -1;
	for (uint32_t s = 0; s < steps; s++) {
		if (write_async(t, t->samples, x + (size_t)s * xbytes, xbytes) ||
		    (!predict && write_async(t, t->labels, y + (size_t)s * b * rows, b * rows * 4)))
			return -1;
		if ((!predict && submit_read(t, t->losses, b * 4, &tl)) ||
		    submit_read(t, t->preds, b * rows * 4, &tp) ||
		    (predict && t->logits >= 0 && submit_read(t, t->logits, b * zbytes, &tz)))
			return -1;
		if ((!predict && finish_read(t, tl, t->losses, t->loss, b * 4)) ||
		    finish_read(t, tp, t->preds, pred + (size_t)s * b * rows, b * rows * 4) ||
		    (predict && t->logits >= 0 &&
		     finish_read(t, tz, t->logits, (uint8_t *)z + (size_t)s * b * zbytes, b * zbytes)))
			return -1;
	}
	return finish(t->cl, tag, WSE_LINK_OP_RUN, &rest) || reap_writes(t, 0) ? -1 : 0;
}

/* The index of @z's largest of @n (the first of equals). */
static uint32_t argmax(const float *z, uint32_t n)
{
	uint32_t best = 0;

	for (uint32_t c = 1; c < n; c++)
		if (z[c] > z[best])
			best = c;
	return best;
}

/*
 * --predict N: N samples (whole batches) run as EVAL and as PREDICT; the
 * right answers each gives, and whether PREDICT's classes are the argmax
 * of its logits.
 */
static int predict_check(struct trainer *t)
{
	uint32_t b = t->b, rows = t->rows, classes = wsep_classes(t->p), dim = t->p->input_dim;
	uint32_t steps = (t->o->predict + b - 1) / b, n = steps * b;
	uint8_t *x = malloc((size_t)n * dim * t->elem);
	int32_t *y = malloc((size_t)n * rows * 4), *pe = malloc((size_t)n * rows * 4);
	int32_t *pp = malloc((size_t)n * rows * 4);
	float *z = malloc((size_t)n * rows * classes * sizeof(float));
	uint64_t right_eval = 0, right_pred = 0, agree = 0, checked = 0;
	int ret = -1;

	if (!x || !y || !pe || !pp || !z) {
		fail("out of memory");
		goto out;
	}
	for (uint64_t i = 0, state = WSE_MLM_VAL_STREAM; i < n && t->d->text.ids; i++) {
		const struct wse_text *tx = &t->d->text;
		uint64_t w = i % wse_text_val_windows(tx, rows);

		text_sample(t->d, rows, wse_text_val_offset(tx, w, rows), &state,
			    (int32_t *)x + (size_t)i * dim, y + (size_t)i * rows);
	}
	for (uint32_t s = 0; s < steps && !t->d->text.ids; s++)
		batch_of(t->d, t->p, b, x + (size_t)s * b * dim * t->elem, y + (size_t)s * b);
	if (infer(t, WSE_LINK_RUN_EVAL, steps, x, y, pe, NULL) ||
	    infer(t, WSE_LINK_RUN_PREDICT, steps, x, y, pp, z))
		goto out;
	for (uint64_t r = 0; r < (uint64_t)n * rows; r++) {
		right_eval += pe[r] == y[r];
		right_pred += pp[r] == y[r];
		if (t->logits >= 0) {
			agree += (uint32_t)pp[r] == argmax(z + r * classes, classes);
			checked++;
		}
	}
	printf("predict: %u samples x %u rows: eval right %llu, predict right %llu, argmax of the logits %llu of %llu\n",
	       n, rows, (unsigned long long)right_eval, (unsigned long long)right_pred,
	       (unsigned long long)agree, (unsigned long long)checked);
	ret = 0;
out:
	free(x);
	free(y);
	free(pe);
	free(pp);
	free(z);
	return ret;
}

static int train(struct wse_link_client *cl, const struct opts *o, const struct wsep_program *p,
		 struct data *d)
{
	struct trainer t = { .cl = cl, .o = o, .p = p, .d = d };
	double t0, wall;
	int ret = -1;

	if (!trainer_setup(&t)) {
		t0 = now_s();
		ret = train_steps(&t);
		wall = now_s() - t0;
		if (!ret)
			printf("trained: %s, %llu samples in %.3f s, %.0f samples/s\n",
			       wsep_mode_name(p->mode), (unsigned long long)o->steps * t.b, wall,
			       (double)o->steps * t.b / wall);
		/* The timing model's view of the same RUNs, at the device's clock. */
		if (!ret && t.cycles && cl->dev.clock_khz)
			printf("modelled: %.0f samples/s (%llu cycles at %u kHz)\n",
			       (double)o->steps * t.b * cl->dev.clock_khz * 1000.0 / (double)t.cycles,
			       (unsigned long long)t.cycles, cl->dev.clock_khz);
		if (!ret && d->text.ids)
			ret = evaluate_text(&t);
		else if (!ret && o->evaluate)
			ret = evaluate_images(&t);
		if (!ret && o->predict)
			ret = predict_check(&t);
	}
	trainer_free(&t);
	return ret;
}

static int setup_data(const struct opts *o, const struct wsep_program *p, struct data *d)
{
	uint32_t classes = p->layers[p->num_layers - 1].out;
	char err[512];

	engine_rng_seed(&d->rng, o->seed);
	d->seed = o->seed;
	if (o->n_text) {
		/* Tokens and a padding mask, a row each, over the masked-LM vocabulary. */
		d->mlm = p->graph && wsep_graph_n_inputs(p->graph) == 2 &&
			 p->graph->values[wsep_graph_input_id(p->graph, 1)].dtype == WSEP_ELEM_F32 &&
			 wsep_classes(p) == WSE_MLM_VOCAB && p->input_dim == 2 * wsep_label_rows(p);
		d->mlm_state = WSE_MLM_TRAIN_STREAM(o->seed);
		if (p->input_type != WSEP_ELEM_I32 ||
		    (!d->mlm && (wsep_classes(p) != WSE_TEXT_VOCAB || p->input_dim != wsep_label_rows(p))))
			return fail("--text needs a program over tokens (i32 input) with %u classes, or tokens and a padding mask with %u (masked LM)",
				    WSE_TEXT_VOCAB, WSE_MLM_VOCAB);
		if (wse_text_load(o->text, o->n_text, &d->text, err, sizeof(err)) ||
		    wse_text_check(&d->text, wsep_label_rows(p), err, sizeof(err)))
			return fail("%s", err);
		return 0;
	}
	if (o->images) {
		if (wse_dataset_load(o->images, o->labels, &d->ds, err, sizeof(err)))
			return fail("%s", err);
		d->x = d->ds.images;
		d->y = d->ds.labels;
		d->n = d->ds.count;
		d->dim = d->ds.item;
		if (d->dim != p->input_dim || !d->n)
			return fail("%u images of %u values do not fit a program with %u inputs",
				    d->n, d->dim, p->input_dim);
		for (uint32_t i = 0; i < d->n; i++)
			if (d->y[i] >= classes)
				return fail("label %u of %s is %u; the program has %u classes", i,
					    o->labels, d->y[i], classes);
		return 0;
	}
	d->teacher = malloc((size_t)classes * p->input_dim * sizeof(float));
	if (!d->teacher)
		return fail("out of memory");
	for (size_t i = 0; i < (size_t)classes * p->input_dim; i++)
		d->teacher[i] = engine_rng_uniform(&d->rng) - 0.5f;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "connect", required_argument, NULL, 'c' }, { "program", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 's' }, { "report", required_argument, NULL, 'r' },
		{ "images", required_argument, NULL, 'i' }, { "labels", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 'S' }, { "timeout-ms", required_argument, NULL, 't' },
		{ "expect-falling", no_argument, NULL, 'e' }, { "help", no_argument, NULL, 'h' },
		{ "run-steps", required_argument, NULL, 'R' },
		{ "systems", required_argument, NULL, 'N' },
		{ "loss-digits", required_argument, NULL, 'D' },
		{ "text", required_argument, NULL, 'T' },
		{ "evaluate", no_argument, NULL, 'E' },
		{ "predict", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	*o = (struct opts){ .steps = 200, .report = 50, .seed = 1, .timeout_ms = 60000,
			    .loss_digits = 4 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == '?') {
			fail("unknown option or missing value '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
		if (c == 'T') {
			if (o->n_text == WSE_TEXT_MAX_FILES) {
				fail("at most %u --text files", WSE_TEXT_MAX_FILES);
				return -1;
			}
			o->text[o->n_text++] = optarg;
			continue;
		}
		if (c == 'E') {
			o->evaluate = true;
			continue;
		}
		if (c == 'c' || c == 'p' || c == 'i' || c == 'l' || c == 'e') {
			if (c == 'c')
				o->connect = optarg;
			else if (c == 'p')
				o->program = optarg;
			else if (c == 'i')
				o->images = optarg;
			else if (c == 'l')
				o->labels = optarg;
			else
				o->expect_falling = true;
			continue;
		}
		if (wse_opt_u64("wse-trainhost", argv[optind - 2], optarg, 1, 100000000,
				WSE_NUM_PLAIN, &v))
			return -1;
		if (c == 's')
			o->steps = (uint32_t)v;
		else if (c == 'r')
			o->report = (uint32_t)v;
		else if (c == 'S')
			o->seed = v;
		else if (c == 'R')
			o->run_steps = (uint32_t)v;
		else if (c == 'N')
			o->systems = (uint32_t)v;
		else if (c == 'P')
			o->predict = (uint32_t)v;
		else if (c == 'D')
			o->loss_digits = (uint32_t)v;
		else
			o->timeout_ms = (int)v;
	}
	if (o->loss_digits > 9) {
		fail("--loss-digits %u: expected 1..9", o->loss_digits);
		return -1;
	}
	if (!o->connect || !o->program) {
		fail("--connect and --program are required (see --help)");
		return -1;
	}
	if (!o->images != !o->labels) {
		fail("--images and --labels go together");
		return -1;
	}
	if (o->evaluate && !o->images) {
		fail("--evaluate evaluates the --images: give them, with their --labels");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct wse_link_hello_info hello = {
		.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_EXEC | WSE_LINK_CAP_APPLIANCE,
		.max_payload = 4 << 20,
	};
	struct wse_link_prog_info info;
	struct wse_link_dev_stats_info ds;
	struct wsep_program *p = NULL;
	struct wse_link_client cl;
	struct wse_link_addr addr;
	struct wse_link_err err;
	struct data d = { 0 };
	struct opts o;
	char text[512];
	uint8_t *img;
	size_t len = 0, rest;
	uint32_t status;
	int fd, ret;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	img = read_file(o.program, &len);
	if (!img)
		return fail("cannot read %s", o.program), 1;
	if (wsep_read(img, len, &p, text, sizeof(text)))
		return fail("%s: %s", o.program, text), 1;
	if (setup_data(&o, p, &d))
		return 1;
	if (wse_link_addr_parse(o.connect, &addr, text, sizeof(text)))
		return fail("--connect %s", text), 2;
	fd = wse_link_connect(&addr, o.timeout_ms, text, sizeof(text));
	if (fd < 0)
		return fail("%s", text), 1;
	if (wse_link_client_hello(&cl, fd, &hello, o.timeout_ms, &status, text, sizeof(text), &err) ||
	    status)
		return fail("handshake: %s%s", err.text, text), 1;
	if (!(cl.dev.caps & WSE_LINK_CAP_EXEC))
		return fail("the device does not execute programs (no EXEC capability)"), 1;
	if (cl.appliance.systems) {
		printf("appliance: %u system%s, MemoryX holds up to %llu bytes\n", cl.appliance.systems,
		       cl.appliance.systems == 1 ? "" : "s",
		       (unsigned long long)cl.appliance.memoryx_capacity);
		if (o.systems && set_systems(&cl, o.systems))
			return 1;
	} else if (p->mode == WSEP_MODE_WEIGHT_STREAMING) {
		return fail("weight streaming runs on an appliance (wse-appliance --systems N --listen ADDR); %s is a single system",
			    o.connect), 1;
	} else if (o.systems > 1) {
		return fail("--systems %u: %s is a single system", o.systems, o.connect), 1;
	}
	if (load(&cl, img, len, &info))
		return 1;
	printf("program %s: %s, %u layers, batch %u, %llu bytes of SRAM, %llu cycles per step estimated\n",
	       p->model_name, wsep_mode_name(info.mode), info.num_layers, info.batch,
	       (unsigned long long)info.sram_bytes, (unsigned long long)info.est_cycles_per_step);
	ret = train(&cl, &o, p, &d);
	if (!ret && !request(&cl, WSE_LINK_OP_DEVICE_STATS, Q_CTL, NULL, 0, NULL, 0, &rest) &&
	    !wse_link_dev_stats_decode(cl.buf + sizeof(struct wse_link_status), rest, &ds, &err))
		printf("device: %llu steps, %llu samples, %llu cycles modelled, %llu estimated by the compiler (x%.3f)\n",
		       (unsigned long long)ds.steps, (unsigned long long)ds.samples,
		       (unsigned long long)ds.cycles, (unsigned long long)ds.est_cycles,
		       ds.est_cycles ? (double)ds.cycles / (double)ds.est_cycles : 0.0);
	if (!ret && cl.appliance.systems)
		print_traffic(&cl);
	wse_link_client_free(&cl);
	close(fd);
	wsep_program_free(p);
	free(img);
	wse_dataset_free(&d.ds);
	wse_text_free(&d.text);
	free(d.teacher);
	return ret ? 1 : 0;
}
