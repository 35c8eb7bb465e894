// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain --predict and --eval of graph programs through the driver
 * (Documentation/wsetrain.rst, "What to do" and "Ctrl-C"), on the
 * appliance wsevm started on the host:
 *
 *  - the small CNN export, layer-pipelined on one of the appliance's
 *    systems and by weight streaming on all of them: the predictions file
 *    has a line for every test image, each class the argmax of the logits
 *    beside it, and the accuracy computed from it against the labels is
 *    the one --eval prints for the same checkpoint;
 *  - the one-block GPT export in both modes: --predict --text writes
 *    every validation window's next token at each position, and their
 *    share that match the corpus is --eval's accuracy;
 *  - SIGTERM while --predict or --eval runs ends it within PROMPT_S (5 s), exit 143,
 *    saying what stopped and no checkpoint, no -o file left behind; the
 *    device serves the next run;
 *  - a firmware that falls silent mid-predict (a wsefwd in the guest,
 *    stopped) fails it within a minute, naming the PREDICT RUN;
 *  - Ctrl-C during a training run's evaluation of its epoch stops it
 *    between chunks: a checkpoint and exit 130 within PROMPT_S, and the
 *    resumed run evaluates that epoch again.
 *
 * A graph program's PREDICT puts its logits on a stream of their own;
 * wsetrain once left them there and the prediction stalled after four
 * batches, hanging for minutes and deaf to SIGTERM.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "wse/dataset.h"
#include "wse/textdata.h"
#include "wse/wse.h"
#include "wse_guest.h"

/*
 * "At once": 0.01-0.5 s on a quiet machine, 2.5 s seen under a load
 * average of 5; what the run would take to finish is 10 s and more (60,000
 * samples). The messages and the missing outputs are what show it stopped.
 */
#define PROMPT_S 5.0

#define FMNIST		"/usr/share/datasets/fashion-mnist"
#define FORTUNES	"/usr/share/games/fortunes/fortunes"
#define OUT_MAX		(64 << 10)
#define CLASSES		10
#define GPT_CONTEXT	8	/* tests/corpus/onnx/gpt-tiny.onnx's */

FIXTURE(predict) {
	struct wse_ctl *ctl;
	struct wse_dev_status dev;
	bool attached;
	char devices[32];
	char *out;
};

FIXTURE_SETUP(predict)
{
	char addr[160];

	/*
	 * These runs are about their outputs, not their run directories:
	 * none in the shared runs that rundir_test judges as training runs.
	 */
	unsetenv("WSETRAIN_RUNS");

	self->attached = false;
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	if (!guest_host_appliance(addr))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 1)");
	ASSERT_EQ(0, guest_attach(self->ctl, addr, 0, &self->dev));
	self->attached = true;
	snprintf(self->devices, sizeof(self->devices), "--devices %u", self->dev.index);
}

FIXTURE_TEARDOWN(predict)
{
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	wse_ctl_close(self->ctl);
	free(self->out);
}

/* "accuracy X" of --eval's line as printed (4 decimals), "" if none. */
static void eval_accuracy(const char *out, char acc[16])
{
	const char *p = strstr(out, "eval: ");

	acc[0] = 0;
	p = p ? strstr(p, "accuracy ") : NULL;
	if (p)
		snprintf(acc, 16, "%.6s", p + strlen("accuracy "));
}

/*
 * The predictions CSV of a classifier with logits: the lines read into
 * *@lines, those whose class is their label into *@right and whose class
 * is the argmax of their logits into *@argmax. -1 if it is malformed.
 */
static int read_class_csv(const char *path, const struct wse_dataset *ds, uint32_t *lines,
			  uint32_t *right, uint32_t *argmax)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int ret = 0;

	*lines = *right = *argmax = 0;
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "sample,class,logit_0,", 21))
		ret = -1;
	while (!ret && fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		long sample = strtol(p, &end, 10), cls;
		float z[CLASSES];
		uint32_t best = 0;

		if (*end != ',' || sample != (long)*lines || sample >= (long)ds->count)
			return fclose(f), -1;
		cls = strtol(end + 1, &end, 10);
		for (int c = 0; c < CLASSES; c++) {
			if (*end != ',')
				return fclose(f), -1;
			z[c] = strtof(end + 1, &end);
			if (z[c] > z[best])
				best = (uint32_t)c;
		}
		*right += cls == ds->labels[sample];
		*argmax += cls == (long)best;
		(*lines)++;
	}
	fclose(f);
	return ret;
}

/*
 * The predictions CSV of a program over characters: every validation
 * window's next token at each position; the rows that match the corpus
 * into *@right, of *@rows. -1 if it is malformed.
 */
static int read_token_csv(const char *path, const struct wse_text *t, uint32_t *windows,
			  uint64_t *right, uint64_t *rows)
{
	FILE *f = fopen(path, "r");
	int32_t x[GPT_CONTEXT], y[GPT_CONTEXT];
	char line[1024];

	*windows = 0;
	*right = *rows = 0;
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "sample,next_0,next_1,", 21))
		return fclose(f), -1;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long w = strtol(line, &end, 10);

		if (w != (long)*windows || (uint64_t)w >= wse_text_val_windows(t, GPT_CONTEXT))
			return fclose(f), -1;
		wse_text_window(t, wse_text_val_offset(t, (uint64_t)w, GPT_CONTEXT), GPT_CONTEXT, x, y);
		for (int r = 0; r < GPT_CONTEXT; r++) {
			if (*end != ',')
				return fclose(f), -1;
			*right += strtol(end + 1, &end, 10) == y[r];
			(*rows)++;
		}
		(*windows)++;
	}
	fclose(f);
	return 0;
}

static void compile_cnn(struct __test_metadata *_metadata, FIXTURE_DATA(predict) *self,
			const char *mode, const char *prog)
{
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX,
			       "wsecc tests/corpus/onnx/cnn-tiny.onnx --batch 64 --lr 0.01 --mode %s -q -o %s",
			       mode, prog))
		TH_LOG("%s", self->out);
}

TEST_F_TIMEOUT(predict, cnn_predictions_score_as_eval_in_both_modes, 600)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	struct wse_dataset ds;
	char err[256], acc[16], mine[16];

	if (access(FMNIST "/t10k-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	ASSERT_EQ(0, wse_dataset_load(FMNIST "/t10k-images-idx3-ubyte.gz",
				      FMNIST "/t10k-labels-idx1-ubyte.gz", &ds, err, sizeof(err)))
		TH_LOG("%s", err);
	for (int m = 0; m < 2; m++) {
		uint32_t lines, right, argmax;
		int st;

		compile_cnn(_metadata, self, modes[m], "/tmp/cnn.wsep");
		unlink("/tmp/cnn.ckpt");
		unlink("/tmp/cnn.csv");
		st = guest_run(self->out, OUT_MAX,
			       "wsetrain /tmp/cnn.wsep %s --steps 60 --no-eval -q --checkpoint /tmp/cnn.ckpt",
			       self->devices);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/cnn.wsep %s --eval /tmp/cnn.ckpt",
			       self->devices);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		TH_LOG("%s: %s", modes[m], self->out);
		eval_accuracy(self->out, acc);
		EXPECT_NE(NULL, strstr(self->out, "on 10000 test samples"));
		st = guest_run(self->out, OUT_MAX,
			       "wsetrain /tmp/cnn.wsep %s --predict /tmp/cnn.ckpt --data " FMNIST
			       "/t10k-images-idx3-ubyte.gz -o /tmp/cnn.csv",
			       self->devices);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "10000 predictions -> /tmp/cnn.csv"));
		ASSERT_EQ(0, read_class_csv("/tmp/cnn.csv", &ds, &lines, &right, &argmax));
		EXPECT_EQ(ds.count, lines);
		EXPECT_EQ(lines, argmax);
		snprintf(mine, sizeof(mine), "%.4f", (double)right / ds.count);
		TH_LOG("%s: eval accuracy %s, from the predictions %s (%u right)", modes[m], acc,
		       mine, right);
		EXPECT_STREQ(acc, mine);
		/* Far above chance after 60 steps. */
		EXPECT_GT(right, 3000U);
	}
	wse_dataset_free(&ds);
}

TEST_F_TIMEOUT(predict, gpt_predictions_score_as_eval_in_both_modes, 600)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	const char *const files[] = { FORTUNES };
	struct wse_text t;
	char err[256];

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	ASSERT_EQ(0, wse_text_load(files, 1, &t, err, sizeof(err))) TH_LOG("%s", err);
	for (int m = 0; m < 2; m++) {
		char acc[16], mine[16];
		uint64_t right, rows;
		uint32_t windows;
		int st;

		st = guest_run(self->out, OUT_MAX,
			       "wsecc tests/corpus/onnx/gpt-tiny.onnx --batch 8 --lr 0.01 --mode %s -q -o /tmp/gptp.wsep",
			       modes[m]);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		unlink("/tmp/gptp.ckpt");
		unlink("/tmp/gpt.csv");
		st = guest_run(self->out, OUT_MAX,
			       "wsetrain /tmp/gptp.wsep %s --text " FORTUNES " --steps 40 --no-eval -q --checkpoint /tmp/gptp.ckpt",
			       self->devices);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		st = guest_run(self->out, OUT_MAX,
			       "wsetrain /tmp/gptp.wsep %s --text " FORTUNES " --eval /tmp/gptp.ckpt",
			       self->devices);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		eval_accuracy(self->out, acc);
		st = guest_run(self->out, OUT_MAX,
			       "wsetrain /tmp/gptp.wsep %s --text " FORTUNES " --predict /tmp/gptp.ckpt -o /tmp/gpt.csv",
			       self->devices);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		ASSERT_EQ(0, read_token_csv("/tmp/gpt.csv", &t, &windows, &right, &rows));
		EXPECT_EQ(wse_text_val_windows(&t, GPT_CONTEXT), windows);
		snprintf(mine, sizeof(mine), "%.4f", (double)right / (double)rows);
		TH_LOG("%s: eval accuracy %s, from the predictions %s (%llu of %llu tokens)",
		       modes[m], acc, mine, (unsigned long long)right, (unsigned long long)rows);
		EXPECT_STREQ(acc, mine);
		EXPECT_GT(right, 0U);
	}
	wse_text_free(&t);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Starts @cmd (exec'd by sh, so the pid is wsetrain's) with its output in
 * @log and, once it says @when, sends @sig to @target (0: wsetrain
 * itself). Returns its exit status, *@secs the time from the signal to its
 * end, its output in @out.
 */
static int signalled(struct __test_metadata *_metadata, const char *cmd, const char *log,
		     const char *when, pid_t target, int sig, double *secs, char *out,
		     size_t outlen)
{
	char line[2048];
	double t0, sent;
	pid_t pid;
	int st = -1;
	FILE *f;

	snprintf(line, sizeof(line), "exec %s >%s 2>&1", cmd, log);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	EXPECT_LT(0, pid);
	if (pid < 0)
		return -1;
	t0 = now_s();
	while (now_s() - t0 < 120) {
		size_t n = 0;

		f = fopen(log, "r");
		if (f) {
			n = fread(out, 1, outlen - 1, f);
			fclose(f);
		}
		out[n] = 0;
		if (strstr(out, when))
			break;
		usleep(20000);
	}
	EXPECT_NE(NULL, strstr(out, when)) TH_LOG("%s", out);
	sent = now_s();
	kill(target ? target : pid, sig);
	waitpid(pid, &st, 0);
	*secs = now_s() - sent;
	f = fopen(log, "r");
	if (f) {
		out[fread(out, 1, outlen - 1, f)] = 0;
		fclose(f);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* /tmp/big: Fashion-MNIST with the 60,000 training images as the test set too, for a long evaluation. */
static int big_test_set(char *out)
{
	static const char *const split[] = { "train", "t10k" };
	int st = 0;

	for (int i = 0; i < 2 && !st; i++)
		st = guest_run(out, OUT_MAX,
			       "mkdir -p /tmp/big && ln -sf " FMNIST "/train-images-idx3-ubyte.gz /tmp/big/%s-images-idx3-ubyte.gz && ln -sf " FMNIST "/train-labels-idx1-ubyte.gz /tmp/big/%s-labels-idx1-ubyte.gz",
			       split[i], split[i]);
	return st;
}

TEST_F_TIMEOUT(predict, sigterm_ends_predict_and_eval_at_once, 600)
{
	char cmd[1024];
	double secs;
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	compile_cnn(_metadata, self, "pipelined", "/tmp/cnns.wsep");
	unlink("/tmp/cnns.ckpt");
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/cnns.wsep %s --steps 20 --no-eval -q --checkpoint /tmp/cnns.ckpt",
		       self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	/* The 60,000 training images: seconds of predicting, cut short. */
	unlink("/tmp/cnns.csv");
	snprintf(cmd, sizeof(cmd),
		 "wsetrain /tmp/cnns.wsep %s --predict /tmp/cnns.ckpt --data " FMNIST
		 "/train-images-idx3-ubyte.gz -o /tmp/cnns.csv",
		 self->devices);
	st = signalled(_metadata, cmd, "/tmp/predict.log", "weights from", 0, SIGTERM, &secs,
		       self->out, OUT_MAX);
	TH_LOG("predict: exit %d %.2f s after SIGTERM: %s", st, secs, self->out);
	EXPECT_EQ(143, st);
	EXPECT_LT(secs, PROMPT_S);
	EXPECT_NE(NULL, strstr(self->out,
			       "interrupted (Terminated): the prediction stopped; no predictions were written"));
	EXPECT_EQ(NULL, strstr(self->out, "checkpoint"));
	EXPECT_NE(0, access("/tmp/cnns.csv", F_OK));
	ASSERT_EQ(0, big_test_set(self->out));
	snprintf(cmd, sizeof(cmd), "wsetrain /tmp/cnns.wsep %s --eval /tmp/cnns.ckpt --data /tmp/big",
		 self->devices);
	st = signalled(_metadata, cmd, "/tmp/eval.log", "weights from", 0, SIGTERM, &secs,
		       self->out, OUT_MAX);
	TH_LOG("eval: exit %d %.2f s after SIGTERM: %s", st, secs, self->out);
	EXPECT_EQ(143, st);
	EXPECT_LT(secs, PROMPT_S);
	EXPECT_NE(NULL, strstr(self->out,
			       "interrupted (Terminated): the evaluation stopped before its loss and accuracy"));
	EXPECT_EQ(NULL, strstr(self->out, "checkpoint"));
	/* The device serves the next run: the abandoned RUN went with the file. */
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/cnns.wsep %s --eval /tmp/cnns.ckpt --test-limit 640",
		       self->devices);
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "on 640 test samples"));
}

/*
 * A firmware that stops answering mid-predict (a wsefwd in the guest,
 * SIGSTOPped): wsetrain fails in bounded time saying which RUN and what
 * went, instead of hanging.
 */
TEST_F_TIMEOUT(predict, a_firmware_gone_silent_fails_predict_in_bounded_time, 600)
{
	struct wse_dev_status d;
	struct guest_peer fw;
	char cmd[1024];
	double secs;
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	compile_cnn(_metadata, self, "pipelined", "/tmp/cnnq.wsep");
	unlink("/tmp/cnnq.ckpt");
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/cnnq.wsep %s --steps 10 --no-eval -q --checkpoint /tmp/cnnq.ckpt",
		       self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	/* The wafer wsecc compiled for by default, the appliance's systems'. */
	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--log-level", "warn", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
	snprintf(cmd, sizeof(cmd),
		 "wsetrain /tmp/cnnq.wsep --devices %u --predict /tmp/cnnq.ckpt --data " FMNIST
		 "/train-images-idx3-ubyte.gz -o /tmp/cnnq.csv",
		 d.index);
	st = signalled(_metadata, cmd, "/tmp/silent.log", "weights from", fw.pid, SIGSTOP, &secs,
		       self->out, OUT_MAX);
	TH_LOG("exit %d %.1f s after the firmware stopped: %s", st, secs, self->out);
	kill(fw.pid, SIGCONT);
	wse_ctl_detach(self->ctl, d.index);
	guest_peer_stop(&fw, SIGKILL);
	EXPECT_EQ(1, st);
	EXPECT_LT(secs, 60.0);
	snprintf(cmd, sizeof(cmd), "device %u: RUN PREDICT: a step's samples or results: ", d.index);
	EXPECT_NE(NULL, strstr(self->out, cmd));
	EXPECT_NE(0, access("/tmp/cnnq.csv", F_OK));
}

/*
 * Ctrl-C while a training run evaluates its epoch: the evaluation stops
 * between chunks, the checkpoint is of the epoch's end, and the resumed
 * run evaluates that epoch again.
 */
TEST_F_TIMEOUT(predict, sigint_cuts_a_training_runs_evaluation_short, 600)
{
	char cmd[1024];
	double secs;
	int st;

	if (access(FMNIST "/train-images-idx3-ubyte.gz", R_OK))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	compile_cnn(_metadata, self, "pipelined", "/tmp/cnni.wsep");
	ASSERT_EQ(0, big_test_set(self->out)) TH_LOG("%s", self->out);
	unlink("/tmp/cnni.ckpt");
	snprintf(cmd, sizeof(cmd),
		 "wsetrain /tmp/cnni.wsep %s --data /tmp/big --train-limit 640 --epochs 2 --progress lines --report 5 --checkpoint /tmp/cnni.ckpt",
		 self->devices);
	/* The report at the epoch's last step; its evaluation of 60,000 images follows. */
	st = signalled(_metadata, cmd, "/tmp/train.log", "Train Epoch=1/2, Step=10/", 0, SIGINT,
		       &secs, self->out, OUT_MAX);
	TH_LOG("exit %d %.2f s after SIGINT: %s", st, secs, self->out);
	EXPECT_EQ(130, st);
	EXPECT_LT(secs, PROMPT_S);
	EXPECT_NE(NULL, strstr(self->out, "interrupted at step 10; continue with --resume /tmp/cnni.ckpt"));
	EXPECT_EQ(NULL, strstr(self->out, "| Eval "));
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/cnni.wsep %s --data /tmp/big --train-limit 640 --epochs 2 --progress lines --test-limit 640 --resume /tmp/cnni.ckpt",
		       self->devices);
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "| Eval Epoch=1/2, Step=10,")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "| Eval Epoch=2/2, Step=20,")) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
