/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wsetrain's parts, one concern each (Documentation/wsetrain.rst):
 *
 *   options.c    the command line
 *   program.c    the program: a .wsep, or a model compiled by wsecc
 *   session.c    the device (a system or an appliance): queues, rings, the program
 *   job.c        what a run holds fixed: data, systems, program, mode
 *   batches.c    the order samples are taken in
 *   text.c       a text corpus as the data (--text)
 *   sample.c     characters sampled from a checkpoint (--sample)
 *   steps.c      chunks of steps: RUNs, streams, tallies
 *   mode.h       where the weights live: mode_pipelined.c (the system),
 *                mode_streaming.c (the appliance's MemoryX)
 *   schedule.c   the run: epochs, chunks, report and checkpoint boundaries
 *   state.c      checkpoint capture and resume
 *   checkpoint.c the checkpoint file
 *   report.c     progress lines, ETA, test results, the summary
 *   metrics.c    CSV and TensorBoard
 */
#ifndef WSETRAIN_TRAIN_H
#define WSETRAIN_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wse/dataset.h"
#include "wse/textdata.h"
#include "wse/wse.h"
#include "wse/wsep.h"

#define TRAIN_SLOT		1	/* the program slot on every device */
#define TRAIN_MAX_SYSTEMS	WSE_APPLIANCE_SYSTEMS_MAX
#define TRAIN_DEFAULT_DATA	"/usr/share/datasets/fashion-mnist"

/* Exit statuses. */
#define EXIT_TRAIN_FAILED	1	/* a device, the data or the model refused */
#define EXIT_USAGE		2

struct train_opts {
	const char *model;		/* a model file or a .wsep program */
	const char *data_dir;
	const char *mode;		/* auto, pipelined, weight_streaming */
	const char *devices;		/* "0,1" or NULL: the first N live ones */
	const char *checkpoint;
	const char *resume;
	const char *csv;
	const char *tensorboard;
	const char *wsecc;		/* the compiler to run */
	const char *inspect;		/* print a checkpoint and exit */
	const char *pass_through;	/* --compile-only / --validate-only */
	const char *output;		/* -o for --compile-only */
	unsigned int systems;
	uint32_t epochs;
	uint64_t max_steps;		/* 0: every step of every epoch */
	uint32_t train_limit, test_limit;	/* 0: all samples */
	uint32_t report;		/* progress line every N steps */
	uint32_t checkpoint_every;	/* steps; 0: only at the end */
	uint32_t chunk;			/* steps per RUN job */
	uint64_t seed;			/* shuffle seed; 0: the program's */
	bool seed_set;
	bool quiet;
	bool no_eval;
	bool input_appliance;		/* the appliance's input workers read the samples */
	double expect_accuracy;		/* exit 1 below it; < 0: no check */
	const char *text[WSE_TEXT_MAX_FILES];	/* --text: a corpus instead of IDX data */
	size_t n_text;
	uint32_t sample;		/* --sample N characters */
	const char *prompt;
	double temperature;
};

/* options.c: 0 run, 1 done (--help), -1 usage error (message printed). */
int train_parse(int argc, char **argv, struct train_opts *o);
void train_usage(FILE *f);

/* Messages: "wsetrain: ..." on stderr; returns -1. */
int train_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* program.c: the program for @o's model on a wafer like @dev's. */
int train_program(const struct train_opts *o, const struct drm_wse_device_info *dev,
		  void **image, size_t *len, struct wsep_program **prog);
/* Runs the compiler for --compile-only / --validate-only; returns its exit status. */
int train_pass_through(const struct train_opts *o);

/* The stream ids a training program has (-1: none). */
struct train_streams {
	int samples, labels, losses, predictions, logits;	/* logits: graph programs */
	int weights[WSEP_MAX_LAYERS], grads[WSEP_MAX_LAYERS];	/* weight streaming */
};
int train_find_streams(const struct wsep_program *p, struct train_streams *s);

/* session.c: one system: its device, queues, rings and the loaded program. */
struct train_system {
	struct wse_dev *dev;
	char name[64];			/* "device 0 (/dev/accel/accel0)" */
	struct wse_info info;
	uint32_t run_queue;
	struct wse_ring *in, *out;
	struct wse_bo result;		/* RUN results land here */
	uint64_t run_job;
	bool run_pending;
	bool appliance;			/* it answers for parts (wse_appliance_info) */
	uint64_t cycles, est_cycles;	/* summed over finished RUNs */
};

int train_system_open(struct train_system *s, const char *spec);
void train_system_close(struct train_system *s);
int train_system_load(struct train_system *s, const void *image, size_t len);
int train_run_submit(struct train_system *s, uint32_t kind, uint32_t steps, uint32_t batch);
int train_run_wait(struct train_system *s);
/* After a failure on an appliance: which of its parts went, as it says. */
void train_system_why(struct train_system *s);
/* Which device: the first of @o->devices, or the first with a live link. */
int train_pick_device(const struct train_opts *o, char spec[16]);

/* job.c: what a run holds fixed. */
struct train_mode;

struct train_job {
	const struct train_opts *o;
	struct wsep_program *p;
	void *image;
	size_t image_len;
	struct train_streams ids;
	unsigned int n;			/* systems the job runs on */
	/* The device: a system, or an appliance of several (sys[0]; the rest zero). */
	struct train_system sys[TRAIN_MAX_SYSTEMS];
	bool appliance;
	struct wse_dataset train, test;	/* --text: their counts of windows only */
	struct wse_text text;		/* --text */
	bool tokens;			/* the data is text */
	uint32_t batch;			/* samples per step */
	uint32_t record;		/* bytes of one sample */
	uint32_t rows;			/* labels (and predictions) per sample */
	uint32_t used;			/* training samples used (--train-limit) */
	const struct train_mode *mode;
	void *mode_state;
};

/* Loads the data, opens the device, loads the program, sets the mode up. */
int train_job_open(struct train_job *j, const struct train_opts *o);
void train_job_close(struct train_job *j);

/* batches.c: the order samples are taken in, epoch by epoch. */
struct train_order {
	uint32_t n;			/* samples used */
	uint32_t *perm;			/* this epoch's order */
	uint64_t seed;
	uint32_t epoch;			/* whose order perm holds */
	/* Text: the windows' offsets as drawn, not a shuffle (train_order_text()). */
	const struct wse_text *text;
	uint32_t context;
};

int train_order_init(struct train_order *o, uint32_t n, uint64_t seed);
void train_order_epoch(struct train_order *o, uint32_t epoch);
void train_order_free(struct train_order *o);
/* The order is @t's training windows of @context: epoch e takes draws e * n ... */
void train_order_text(struct train_order *o, const struct wse_text *t, uint32_t context);
/* Gathers samples [first, first + count) of the order (or of the data as it lies if @perm is NULL). */
void train_gather(const struct wse_dataset *ds, const uint32_t *perm, uint32_t first,
		  uint32_t count, uint8_t *x, int32_t *y);

/* text.c: --text as the job's data; the windows of samples [first, first + count). */
int train_text_open(struct train_job *j);
void train_text_gather(const struct train_job *j, bool validation, const uint32_t *perm,
		       uint32_t first, uint32_t count, uint8_t *x, int32_t *y);

/* sample.c: --sample: characters from a checkpoint's weights. */
int train_sample(const struct train_opts *o);

/* steps.c: chunks of steps on the device. */
struct train_steps;

/* What the steps of a chunk came to. */
struct train_tally {
	double loss;			/* summed over the samples */
	double right;			/* correct predictions (of tokens: each sample's share) */
};

/* Where the host's time went, and what it trained. */
struct train_step_times {
	double io;			/* in the steps' transfers */
	double update;			/* in the mode's work after a step */
	uint64_t trained;		/* samples trained in this process */
};

int train_steps_open(struct train_job *j, struct train_steps **out);
void train_steps_close(struct train_steps *s);
/*
 * @steps steps (WSE_RUN_TRAIN or WSE_RUN_EVAL) of @b samples of @ds,
 * from sample @first of @order's (NULL: as the data lies), one RUN job;
 * their losses and right answers are added to @tally.
 */
int train_steps_run(struct train_steps *s, uint32_t kind, const struct wse_dataset *ds,
		    const struct train_order *order, uint32_t first, uint32_t steps, uint32_t b,
		    struct train_tally *tally);
const struct train_step_times *train_steps_times(const struct train_steps *s);

/* Where the run is (schedule.c; state.c saves and restores it). */
struct train_progress {
	uint64_t step;			/* optimizer steps done */
	uint32_t epoch;			/* the epoch the next step belongs to */
	uint32_t position;		/* samples of it already used */
	struct train_order order;
};

/* checkpoint.c: the file. */
struct train_checkpoint {
	char model[WSEP_NAME_MAX];
	uint32_t mode;			/* enum wsep_mode it was written in */
	uint32_t systems;
	uint64_t fingerprint;		/* of the layers, optimizer and batch */
	uint64_t step;			/* optimizer steps done (global) */
	uint32_t epoch;			/* the epoch the next step belongs to (0-based) */
	uint32_t position;		/* samples of that epoch already used */
	uint64_t shuffle_seed;
	uint64_t floats;		/* weights */
	uint32_t state_arrays;
	float *weights;
	float *state;			/* state_arrays * floats */
};

uint64_t train_fingerprint(const struct wsep_program *p);
/* Writes @c to @path atomically (a temporary file, fsync, rename, fsync of the directory). */
int train_checkpoint_save(const char *path, const struct train_checkpoint *c);
/* Reads and checks a checkpoint; on error a message in @err. */
int train_checkpoint_load(const char *path, struct train_checkpoint *c, char *err, size_t len);
void train_checkpoint_free(struct train_checkpoint *c);
int train_checkpoint_inspect(const char *path);

/* state.c: the run's state to and from a checkpoint. */
int train_state_save(struct train_job *j, const struct train_progress *at);
/* Restores --resume into the devices (or MemoryX) and @at. */
int train_state_resume(struct train_job *j, struct train_progress *at);
/* Restores --resume's weights and optimizer state only (for --sample). */
int train_state_weights(struct train_job *j);

/* report.c: what the user sees. */
struct train_report;

/* Opens the metrics and says what is about to be trained. */
int train_report_open(const struct train_job *j, struct train_report **out);
/* The clock of samples/s and of the summary starts (after any resume). */
void train_report_start(struct train_report *r);
/* Closes the metrics; 0 or their write error. */
int train_report_close(struct train_report *r);
/* Adds a training chunk's samples to the current progress window. */
void train_report_add(struct train_report *r, const struct train_tally *t, uint64_t samples);
/* The progress line of the window, at @at; starts a new window. */
void train_report_progress(struct train_report *r, const struct train_progress *at,
			   uint64_t steps_total, uint32_t steps_per_epoch);
/* A test-set evaluation of @samples samples that took @seconds. */
void train_report_test(struct train_report *r, const struct train_progress *at,
		       const struct train_tally *t, uint32_t samples, double seconds);
/* The last test accuracy; false if none was measured. */
bool train_report_accuracy(const struct train_report *r, double *accuracy);
void train_report_summary(struct train_report *r, const struct train_progress *at,
			  const struct train_step_times *times);

/* metrics.c */
struct train_metrics;
int train_metrics_open(const struct train_opts *o, struct train_metrics **out);
void train_metrics_train(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			 double accuracy, double samples_per_s);
void train_metrics_test(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			double accuracy);
int train_metrics_close(struct train_metrics *m);

/* schedule.c: the whole run. */
int train_run(const struct train_opts *o);

double train_now(void);		/* CLOCK_MONOTONIC seconds */

#endif /* WSETRAIN_TRAIN_H */
