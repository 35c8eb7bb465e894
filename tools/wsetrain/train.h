/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wsetrain's parts: options, the program, device sessions, batches,
 * the step loop, checkpoints and metrics. Documentation/wsetrain.rst.
 */
#ifndef WSETRAIN_TRAIN_H
#define WSETRAIN_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wse/dataset.h"
#include "wse/memoryx.h"
#include "wse/swarmx.h"
#include "wse/wse.h"
#include "wse/wsep.h"

#define TRAIN_SLOT		1	/* the program slot on every device */
#define TRAIN_MAX_SYSTEMS	WSE_SWARMX_MAX
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
	double expect_accuracy;		/* exit 1 below it; < 0: no check */
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

/* The stream ids a training program must have. */
struct train_streams {
	int samples, labels, losses, predictions;
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
	uint64_t cycles, est_cycles;	/* summed over finished RUNs */
};

int train_system_open(struct train_system *s, const char *spec);
void train_system_close(struct train_system *s);
int train_system_load(struct train_system *s, const void *image, size_t len);
int train_run_submit(struct train_system *s, uint32_t kind, uint32_t steps, uint32_t batch);
int train_run_wait(struct train_system *s);
/* Pipelined checkpoints: the resident weights and optimizer state. */
int train_params_read(struct train_system *s, uint32_t which, void *buf, size_t len);
int train_params_write(struct train_system *s, uint32_t which, const void *buf, size_t len);
/* Which devices: @o->devices or the first @o->systems with a live link. */
int train_pick_devices(const struct train_opts *o, char specs[][16]);

/* batches.c: the order samples are taken in, epoch by epoch. */
struct train_order {
	uint32_t n;			/* samples used */
	uint32_t *perm;			/* this epoch's order */
	uint64_t seed;
	uint32_t epoch;			/* whose order perm holds */
};

int train_order_init(struct train_order *o, uint32_t n, uint64_t seed);
void train_order_epoch(struct train_order *o, uint32_t epoch);
void train_order_free(struct train_order *o);
/* Gathers samples [first, first + count) of the order (or of the data as it lies if @perm is NULL). */
void train_gather(const struct wse_dataset *ds, const uint32_t *perm, uint32_t first,
		  uint32_t count, uint8_t *x, int32_t *y);

/* checkpoint.c */
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

/* metrics.c */
struct train_metrics;
int train_metrics_open(const struct train_opts *o, struct train_metrics **out);
void train_metrics_train(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			 double accuracy, double samples_per_s);
void train_metrics_test(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			double accuracy);
int train_metrics_close(struct train_metrics *m);

/* loop.c: the whole run. */
int train_run(const struct train_opts *o);

double train_now(void);		/* CLOCK_MONOTONIC seconds */

#endif /* WSETRAIN_TRAIN_H */
