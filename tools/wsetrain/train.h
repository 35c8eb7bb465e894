/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wsetrain's parts, one concern each (Documentation/wsetrain.rst):
 *
 *   options.c    the command line
 *   params.c     --params FILE as options
 *   hparams.c    the run's learning rate and schedule, params.yaml in the run directory
 *   program.c    the program: a .wsep, or a model compiled by wsecc
 *   session.c    the device (a system or an appliance): queues, rings, the program
 *   job.c        what a run holds fixed: data, systems, program, mode
 *   batches.c    the order samples are taken in
 *   text.c       a text corpus as the data (--text)
 *   sample.c     characters sampled from a checkpoint (--sample)
 *   export.c     a checkpoint's weights into the ONNX model (--export)
 *   steps.c      chunks of steps: RUNs, streams, tallies
 *   weights.c    where the weights live (the system, or the appliance's
 *                MemoryX): capture, restore and snapshots for checkpoints
 *   schedule.c   the run: epochs, chunks, report and checkpoint boundaries
 *   predict.c    inference from a checkpoint: evaluation, predictions
 *   state.c      checkpoint capture, resume and --init-from
 *   checkpoint.c the checkpoint file
 *   rundir.c     the run directory: run.json, the checkpoint series
 *   interrupt.c  Ctrl-C: a checkpoint, then exit 130 (inference: exit at once)
 *   report.c     progress bar and lines, test results, the summary
 *   eta.c        the time left
 *   metrics.c    CSV and TensorBoard
 */
#ifndef WSETRAIN_TRAIN_H
#define WSETRAIN_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wse/dataset.h"
#include "wse/outfile.h"
#include "wse/textdata.h"
#include "wse/wse.h"
#include "wse/wsep.h"

#define TRAIN_SLOT		1	/* the program slot on every device */
#define TRAIN_MAX_SYSTEMS	WSE_APPLIANCE_SYSTEMS_MAX
#define TRAIN_DEFAULT_DATA	"/usr/share/datasets/fashion-mnist"

/* Exit statuses. */
#define EXIT_TRAIN_FAILED	1	/* a device, the data or the model refused */
#define EXIT_USAGE		2
/* Interrupted by signal S: 128 + S (130 for Ctrl-C), as a shell reports it. */

/* What a run does (--mode, as in ModelZoo). */
enum train_task {
	TRAIN_TASK_TRAIN_AND_EVAL,	/* train, evaluate after every epoch (default) */
	TRAIN_TASK_TRAIN,		/* train only */
	TRAIN_TASK_EVAL,		/* evaluate a checkpoint on the test set */
	TRAIN_TASK_PREDICT,		/* a checkpoint's predictions for a data file */
};

/* How progress is shown (--progress). */
enum train_progress_style {
	TRAIN_PROGRESS_AUTO,		/* a bar on a terminal, lines otherwise */
	TRAIN_PROGRESS_BAR,
	TRAIN_PROGRESS_LINES,
};

/* What a run directory's run.json recorded of the model it trained. */
struct train_model_pin {
	bool set;
	uint64_t size;
	uint32_t crc;			/* CRC32C of the whole file */
	const char *run_json;		/* where it was recorded, for messages */
};

struct train_opts {
	const char *model;		/* a model file or a .wsep program */
	struct train_model_pin model_pin;	/* model taken from a run directory */
	const char *data_dir;		/* IDX directory; for --predict, an images file */
	const char *exec_mode;		/* auto, pipelined, weight_streaming */
	enum train_task task;
	const char *devices;		/* "0,1" or NULL: the first N live ones */
	const char *checkpoint;		/* one file, rewritten */
	const char *resume;
	const char *init_from;		/* weights only (--init-from, --eval, --predict) */
	const char *model_dir;		/* the run directory (--model_dir, or made in --runs) */
	const char *runs;		/* where run directories are made */
	const char *runs_root;		/* --runs or $WSETRAIN_RUNS: storage the device may share */
	bool runs_from_env;		/* runs is $WSETRAIN_RUNS, not asked for on the command line */
	const char *csv;
	const char *tensorboard;
	const char *wsecc;		/* the compiler to run */
	const char *inspect;		/* print a checkpoint and exit */
	const char *export_ckpt;	/* --export: this checkpoint into the model, to -o */
	const char *pass_through;	/* --compile-only / --validate-only */
	const char *output;		/* -o for --compile-only and --predict */
	unsigned int systems;
	bool systems_set;		/* --systems given (else --devices counts them) */
	uint32_t epochs;
	uint64_t max_steps;		/* 0: every step of every epoch */
	uint32_t train_limit, test_limit;	/* 0: all samples */
	uint32_t report;		/* progress line every N steps */
	uint32_t checkpoint_every;	/* steps; 0: only at the end */
	uint32_t keep;			/* checkpoint_<step> files kept; 0: all */
	uint32_t chunk;			/* steps per RUN job */
	uint64_t seed;			/* shuffle seed; 0: the program's */
	bool seed_set;
	double lr;			/* overrides the model's learning rate */
	bool lr_set;
	/* The schedule at run time (hparams.c); unset: the program's. */
	uint64_t warmup, schedule_steps;
	double min_lr;
	bool warmup_set, schedule_steps_set, min_lr_set;
	const char *params;		/* --params FILE, handed to wsecc too */
	bool quiet;
	bool no_eval;			/* no evaluation after the epochs */
	enum train_progress_style progress;
	bool input_appliance;		/* the appliance's input workers read the samples */
	double expect_accuracy;		/* exit 1 below it; < 0: no check */
	int argc;			/* the command line, for run.json */
	char **argv;
	const char *text[WSE_TEXT_MAX_FILES];	/* --text: a corpus instead of IDX data */
	size_t n_text;
	uint32_t sample;		/* --sample N characters */
	const char *prompt;
	double temperature;
};

/* options.c: 0 run, 1 done (--help), -1 usage error (message printed). */
int train_parse(int argc, char **argv, struct train_opts *o);
void train_usage(FILE *f);

/*
 * params.c: --params FILE's settings as options before @argv's own into
 * *@out_argv (0, or -1 after a message); the file as read (NULL: none).
 */
int train_params_argv(int argc, char **argv, int *out_argc, char ***out_argv);
struct wse_hparams;
const struct wse_hparams *train_params_file(void);

/*
 * hparams.c: the run's learning rate and schedule into @j's program
 * before it is loaded, checked against what the program fixed; the
 * resolved set as DIR/params.yaml.
 */
struct train_job;
int train_hparams_apply(struct train_job *j);
/* Before the device or a run directory: a .wsep against the params file. */
int train_hparams_check_file(const struct train_opts *o);
int train_hparams_record(const struct train_job *j, const char *dir);

/* Messages: "wsetrain: ..." on stderr; returns -1. */
int train_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* program.c: the program for @o's model on a wafer like @dev's. */
int train_program(const struct train_opts *o, const struct drm_wse_device_info *dev,
		  void **image, size_t *len, struct wsep_program **prog);
/* A .wsep, taken as it is, by its name. */
bool train_is_program(const char *path);
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
/* A stream transfer's deadline: the firmware answers within it or the run fails. */
#define TRAIN_XFER_TIMEOUT_MS	120000
int train_run_submit(struct train_system *s, uint32_t kind, uint32_t steps, uint32_t batch);
/* "TRAIN", "EVAL" or "PREDICT", for messages. */
const char *train_run_kind_name(uint32_t kind);
int train_run_wait(struct train_system *s);
/* After a failure on an appliance: which of its parts went, as it says. */
void train_system_why(struct train_system *s);
/* Which device: the first of @o->devices, or the first with a live link. */
int train_pick_device(const struct train_opts *o, char spec[16]);
/* The model and checkpoint files are of the right kind and the device is there. */
int train_check_inputs(const struct train_opts *o);

/* job.c: what a run holds fixed. */
struct train_job {
	const struct train_opts *o;
	struct wsep_program *p;
	void *image;
	size_t image_len;
	struct train_streams ids;
	unsigned int n;			/* systems the job runs on */
	/* The one device: a system, or an appliance of several behind it. */
	struct train_system sys[1];
	bool appliance;
	struct wse_dataset train, test;	/* --text: their counts of windows only */
	struct wse_text text;		/* --text */
	bool tokens;			/* the data is text */
	/* --text for a program fed tokens and a padding mask: masked LM (wse/textmlm.h) */
	bool mlm;
	uint64_t mlm_train, mlm_val;	/* the corruption's generators */
	uint32_t batch;			/* samples per step */
	uint32_t record;		/* bytes of one sample */
	uint32_t rows;			/* labels (and predictions) per sample */
	uint32_t used;			/* training samples used (--train-limit) */
	bool streaming;			/* weight streaming: MemoryX holds and updates the weights */
};

/* Loads the data, opens the device, loads the program. */
int train_job_open(struct train_job *j, const struct train_opts *o);
void train_job_close(struct train_job *j);

/*
 * weights.c: the weights, optimizer state and step count into @p (its
 * arrays sized by the program) and back, by PARAMS_READ and PARAMS_WRITE
 * of the device (the system, or MemoryX); for checkpoints.
 */
int train_weights_capture(const struct train_job *j, struct wse_params *p);
int train_weights_restore(const struct train_job *j, const struct wse_params *p);
/*
 * Whether the device keeps the state at the end of a step aside while
 * training goes on (a layer-pipelined system does; MemoryX does not), and
 * those snapshots, on @ring, another thread's: asked for, read back
 * (*@crc: CRC32C of the weights and state), or saved by the device into
 * @name of the storage it shares with this host, the weights at byte
 * @offset (-EINVAL when it shares none or cannot see the file). These
 * return the errno alone, for the checkpoint writer to say what it does.
 */
bool train_weights_snapshots(const struct train_job *j);
int train_weights_snapshot_at(struct wse_ring *ring, uint64_t step);
int train_weights_read_snapshot(struct wse_ring *ring, struct wse_params *p, uint32_t *crc);
int train_weights_store_snapshot(const struct train_job *j, struct wse_ring *ring, uint64_t step,
				 uint64_t offset, const char *name, uint32_t *crc);

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
void train_text_gather(struct train_job *j, bool validation, const uint32_t *perm,
		       uint32_t first, uint32_t count, uint8_t *x, int32_t *y);
/* Masked LM: the rows of a sample's labels @y the loss counts (not -100). */
uint32_t train_text_counted(const struct train_job *j, const int32_t *y);

/* export.c: --export: a checkpoint's weights into the ONNX model, by name, to -o. */
int train_export(const struct train_opts *o);

/* sample.c: --sample: characters from a checkpoint's weights. */
int train_sample(struct train_opts *o);

/* steps.c: chunks of steps on the device. */
struct train_steps;

/* What the steps of a chunk came to. */
struct train_tally {
	double loss;			/* summed over the samples */
	double right;			/* correct predictions (of tokens: each sample's share) */
	/*
	 * Masked LM: the samples' weights, each its counted rows over its rows,
	 * which loss and right are summed in; 0 otherwise (each sample weighs 1).
	 */
	double weight;
	int32_t *predictions;		/* if set: each sample's classes (one a row), in order */
	float *logits;			/* if set (PREDICT): each sample's rows x classes logits */
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
 * @steps steps (WSE_RUN_TRAIN, WSE_RUN_EVAL or WSE_RUN_PREDICT) of @b
 * samples of @ds, from sample @first of @order's (NULL: as the data
 * lies), one RUN job; their losses and right answers are added to @tally
 * (PREDICT: no labels, no losses; the classes go to @tally->predictions,
 * the logits of a program with a logits stream to @tally->logits).
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
	uint64_t shape_fingerprint;	/* of the input and layers alone; 0: not recorded */
	double lr;			/* trained with; 0: not recorded */
	uint32_t batch;			/* trained with; 0: not recorded */
	float *weights;
	float *state;			/* state_arrays * floats */
	bool crc_known;			/* payload_crc is the payload's (the device computed it) */
	uint32_t payload_crc;
	/* The parameters' names (version 2): the program's, or names_owned when loaded. */
	uint32_t num_names;
	const struct wsep_param_name *names;
	struct wsep_param_name *names_owned;
};

uint64_t train_fingerprint(const struct wsep_program *p);
/* The same with another learning rate and batch: what a resume may change. */
uint64_t train_fingerprint_as(const struct wsep_program *p, double lr, uint32_t batch);
/* Of the input and the layers alone: whether the weights fit (--init-from). */
uint64_t train_shape_fingerprint(const struct wsep_program *p);
/* Writes @c to @path atomically (a temporary file, fsync, rename, fsync of the directory). */
int train_checkpoint_save(const char *path, const struct train_checkpoint *c);
/*
 * The same in two halves, for a payload that is to arrive in the file
 * itself: open_out() makes the temporary file and says where the weights
 * and state go (the file's own pages where it can be mapped); then
 * finish_out() writes the header of @c (its payload CRC computed unless
 * @c->crc_known), syncs and renames; abandon_out() drops it all.
 */
struct train_ckpt_out {
	struct wse_out file;		/* the path as given, and the temporary file or device */
	void *map;			/* the whole file, or NULL: weights is a buffer */
	size_t len;
	float *weights, *state;		/* where the payload goes; NULL: the device puts it */
};
/* With @by_device, the payload is left to the device (it writes the file itself). */
int train_checkpoint_open_out(const char *path, uint64_t floats, uint32_t state_arrays,
			      bool by_device, struct train_ckpt_out *out);
/* Where the payload starts in the file. */
#define TRAIN_CKPT_PAYLOAD	160U
int train_checkpoint_finish_out(struct train_ckpt_out *out, const struct train_checkpoint *c);
void train_checkpoint_abandon_out(struct train_ckpt_out *out);
/* Reads and checks a checkpoint; on error a message in @err. */
int train_checkpoint_load(const char *path, struct train_checkpoint *c, char *err, size_t len);
void train_checkpoint_free(struct train_checkpoint *c);
int train_checkpoint_inspect(const char *path);

/* state.c: the run's state to and from a checkpoint. */
/* Everything of @c but its arrays: the program, where the run is at @at. */
void train_state_describe(const struct train_job *j, const struct train_progress *at,
			  struct train_checkpoint *c);
/* train_state_describe() and the arrays allocated (not filled). */
int train_state_new(const struct train_job *j, const struct train_progress *at,
		    struct train_checkpoint *c);
/* The weights, optimizer state and progress of @at into @c (allocated here). */
int train_state_capture(struct train_job *j, const struct train_progress *at,
			struct train_checkpoint *c);
/* Where the checkpoint of step @step goes: --checkpoint, or the run directory's series. */
void train_state_destination(const struct train_opts *o, uint64_t step, char *path, size_t len);
/* Writes @c there (and prunes the series to --keep); the path in @path. */
int train_state_write(const struct train_opts *o, const struct train_checkpoint *c,
		      char *path, size_t len);
/* After a checkpoint is written: the series pruned to --keep. */
void train_state_written(const struct train_opts *o);
/* Capture and write, on the spot. */
int train_state_save(struct train_job *j, const struct train_progress *at, char *path,
		     size_t len);
/* Restores --resume into the devices (or MemoryX) and @at. */
int train_state_resume(struct train_job *j, struct train_progress *at);
/* Loads only the weights of @path (named by option @opt in messages); a fresh optimizer. */
int train_state_init_from(struct train_job *j, const char *opt, const char *path);

/* saver.c: checkpoints written by a thread of their own, off the training path. */
struct train_saver;

int train_saver_open(struct train_job *j, struct train_saver **out);
/* Waits for the writer to be done with the last; has step @step's state kept aside. */
int train_saver_due(struct train_saver *s, uint64_t step);
/* The run is at the checkpoint's step: the writer takes it from here. */
int train_saver_take(struct train_saver *s, const struct train_progress *at);
/* Says what the writer finished; 0, or -1 if it failed (it said why). */
int train_saver_poll(struct train_saver *s);
/* Waits until the writer is idle, then polls. */
int train_saver_flush(struct train_saver *s);
/* A summary line: how many, the writer's time, the time the run waited for it. */
void train_saver_summary(struct train_saver *s);
/* The last checkpoint written: its step (0: none) and path. */
uint64_t train_saver_last(const struct train_saver *s, const char **path);
void train_saver_close(struct train_saver *s);

/* rundir.c: the run directory. */
struct train_rundir;

/* What a run came to, for run.json. */
struct train_final {
	uint64_t step, samples;
	double seconds, samples_per_s;
	bool have_test;
	double test_loss, test_accuracy;
	char checkpoint[4096];		/* the last written, or "" */
};

/*
 * Makes the run directory (in --runs, or --model_dir itself), points
 * --csv and --tensorboard into it unless given, and starts run.json with
 * the model file's path (never a copy of it).
 */
int train_rundir_open(struct train_opts *o, struct train_rundir **out);
/* Adds what the job is (model, mode, devices, versions) to run.json. */
int train_rundir_started(struct train_rundir *rd, const struct train_job *j);
/* Ends run.json: "done", "interrupted" or "failed", and the final figures (@f may be NULL). */
int train_rundir_finish(struct train_rundir *rd, const char *status, const struct train_final *f);
/*
 * A run refused before it started (its data, program or device) leaves
 * nothing behind: removes the directory --runs made for it, with the
 * files written into it so far. -1 (and nothing removed) for --model_dir,
 * which the user named, or a directory holding anything else.
 */
int train_rundir_withdraw(struct train_rundir *rd);
void train_rundir_close(struct train_rundir *rd);
void train_rundir_checkpoint_path(const char *dir, uint64_t step, char *buf, size_t len);
/* The newest checkpoint_<step>.ckpt in @dir; -ENOENT if none. */
int train_rundir_newest(const char *dir, char *buf, size_t len);
/* Removes all but the @keep newest checkpoint_<step>.ckpt files (0: keeps all). */
void train_rundir_prune(const char *dir, uint32_t keep);
/*
 * The model file run.json names in the run directory that holds
 * @checkpoint, in @buf, and what it recorded of it in @pin: -ENOENT if it
 * names none, -EINVAL (after a message) if the file is gone or changed.
 */
int train_rundir_model_of(const char *checkpoint, char *buf, size_t len,
			  struct train_model_pin *pin);
/* With no model named: the one the run of --init-from's or --resume's checkpoint trained, in @buf. */
int train_rundir_find_model(struct train_opts *o, char *buf, size_t len);
/* 0 if @crc is the CRC32C @pin recorded of the model (or it recorded none); else -1, said. */
int train_model_pin_check(const struct train_model_pin *pin, const char *path, uint32_t crc);

/* interrupt.c: SIGINT and SIGTERM, taken by a thread of their own. */
/* Call first, before any thread: blocks the signals everywhere else. */
int train_interrupt_start(void);
/* The signal that asked the run to stop, or 0. */
int train_interrupted(void);
/*
 * From now on a signal ends the process at once with 128 + the signal,
 * saying "interrupted (SIGNAL): @what" (@what outlives the call; NULL: back
 * to stopping between chunks). For evaluation and prediction.
 */
void train_interrupt_exit_saying(const char *what);
#define TRAIN_PREDICT_STOPPED	"the prediction stopped; no predictions were written"
#define TRAIN_EVAL_STOPPED	"the evaluation stopped before its loss and accuracy"
#define TRAIN_SAMPLE_STOPPED	"the sampling stopped"
/* Training: whether a signal's stop writes a checkpoint, for what it says. */
void train_interrupt_checkpoints(bool any);
/*
 * A file (a temporary one being written) that a signal ending the process
 * at once removes first; @path outlives the call. NULL: none.
 */
void train_interrupt_remove_on_exit(const char *path);
/* In a child about to exec: the signals as they were. */
void train_interrupt_child(void);

/* report.c: what the user sees. */
struct train_report;

/* Opens the metrics and says what is about to be trained. */
int train_report_open(const struct train_job *j, struct train_report **out);
/*
 * The clock of samples/s and of the summary starts (after any resume);
 * the ETA is of @steps_total steps, @evals_left evaluations of
 * @eval_samples samples.
 */
void train_report_start(struct train_report *r, uint64_t steps_total, uint32_t steps_per_epoch,
			uint32_t evals_left, uint64_t eval_samples);
/* Closes the metrics; 0 or their write error. */
int train_report_close(struct train_report *r);
/* A training chunk's samples, now at @at: the window grows, the bar moves. */
void train_report_add(struct train_report *r, const struct train_progress *at,
		      const struct train_tally *t, uint64_t samples);
/* The progress line and metrics row of the window, at @at; starts a new window. */
void train_report_progress(struct train_report *r, const struct train_progress *at);
/* A test-set evaluation of @samples samples that took @seconds. */
void train_report_test(struct train_report *r, const struct train_progress *at,
		       const struct train_tally *t, uint32_t samples, double seconds);
/* The last test accuracy; false if none was measured. */
bool train_report_accuracy(const struct train_report *r, double *accuracy);
/* The summary lines; the figures into @f. */
void train_report_summary(struct train_report *r, const struct train_progress *at,
			  const struct train_step_times *times, struct train_final *f);
/* A line of its own (the bar, if any, is cleared first). */
void train_report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* eta.c: the time left, from the run's training and evaluation so far. */
struct train_eta {
	uint32_t updates;		/* train_eta_train() calls */
	uint64_t train_samples;
	double train_s;			/* wall time training, checkpoints included */
	uint64_t eval_samples;
	double eval_s;
};

void train_eta_train(struct train_eta *e, uint64_t samples, double seconds);
void train_eta_eval(struct train_eta *e, uint64_t samples, double seconds);
/*
 * Seconds left for @train_left samples and @evals_left evaluations of
 * @eval_samples each; < 0 while too little is measured to say.
 */
double train_eta_left(const struct train_eta *e, uint64_t train_left, uint32_t evals_left,
		      uint64_t eval_samples);
/* One place the ETA is shown (the bar, the progress lines): what it showed last. */
struct train_eta_shown {
	double last;			/* <= 0: nothing yet */
};
/* What to show now for @estimate (< 0: none): it rises slowly and falls at once. */
double train_eta_show(struct train_eta_shown *s, double estimate);

/*
 * placement.c: the program's placement and timing model into the run
 * directory @dir: timing.json, and wafer.svg unless wsecc drew it.
 */
int train_placement_record(const struct wsep_program *p, const char *dir);

/* metrics.c */
struct train_metrics;
int train_metrics_open(const struct train_opts *o, struct train_metrics **out);
/*
 * A training report: Rate, GlobalRate, the ETA (< 0: none yet) and the
 * learning rate of step @step beside loss and accuracy.
 */
void train_metrics_train(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			 double accuracy, double rate, double global_rate, double eta_s, double lr);
void train_metrics_test(struct train_metrics *m, uint64_t step, uint32_t epoch, double loss,
			double accuracy);
int train_metrics_close(struct train_metrics *m);

/* schedule.c: the whole run; returns the exit status. */
int train_run(struct train_opts *o);
/*
 * The optimizer steps the run takes: --steps, or the epochs over the
 * samples used, whichever ends first; *@per_epoch (if not NULL) an epoch's.
 */
uint64_t train_steps_total(const struct train_job *j, uint32_t *per_epoch);

/*
 * predict.c: inference with the weights @j was given: the test set's loss
 * and accuracy; 1 (no figures) when a signal stopped it between chunks.
 */
int train_evaluate(struct train_job *j, struct train_steps *steps, uint32_t limit,
		   struct train_tally *t, uint32_t *samples);
/*
 * --predict: the class of every sample of j->test (with its logits, for a
 * program that has them; of a program over tokens, every row's), as CSV
 * to -o or stdout.
 */
int train_predict(struct train_job *j, struct train_steps *steps);

double train_now(void);		/* CLOCK_MONOTONIC seconds */

#endif /* WSETRAIN_TRAIN_H */
