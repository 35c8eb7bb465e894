// SPDX-License-Identifier: GPL-2.0-only
/*
 * Graph programs on the real wsefwd, driven by wse-trainhost over the link
 * (no kernel, no guest), from the PyTorch exports of tests/corpus/onnx
 * compiled by wsecc. The device is an appliance (wse-appliance): a
 * pipelined program runs on one of its systems, a weight-streaming one is
 * its job, MemoryX holding the weights; its systems cut a pipelined batch
 * into the 8 micro-batches a weight-streaming RUN's leaves are, so the two
 * modes compute the same bits:
 *
 *  - the one-block GPT over the fortunes, by weight streaming and
 *    pipelined, with AdamW and a warm-up then cosine schedule: both modes
 *    print the same training losses and validation loss, and the graph
 *    executor on the host (wse-graphtrain) prints them too: the device
 *    computes what PyTorch's model computes (onnx_graph_test ties that
 *    executor to PyTorch);
 *  - the BERT-style encoder fed tokens and a padding mask, by masked LM,
 *    in both modes: the losses of the graph executor on the host; split
 *    across two systems, refused (the loss's count is the whole batch's);
 *  - the GPT by weight streaming on 1 and 2 systems of an appliance: the
 *    same losses, bit for bit (data parallel, SwarmX summing the shards);
 *  - the GPT with dropout by weight streaming with recompute forced on
 *    (wsecc --recompute on): the systems forget each unit's activations
 *    after its forward pass and recompute them, with the same dropout
 *    masks, before its backward pass; the losses are those of keeping
 *    everything (to 1e-6 relative), the modelled cycles more;
 *  - the small CNN on Fashion-MNIST in both modes, the loss falling;
 *  - a program whose graph the engine refuses (a convolution's kernel
 *    attribute not the weights' shape) refused at PROGRAM_LOAD, naming
 *    the node, the daemon still serving.
 *  - PREDICT of both programs, on a system alone (wsefwd) and in both
 *    modes on the appliance: a RUN of many steps whose logits the host
 *    reads (the device puts them on every PREDICT step), each class the
 *    argmax of its logits and the classes right exactly as often as the
 *    same samples' EVAL counts (wse-trainhost --predict).
 *
 * Run from the repository root; the appliance is build/bin/wse-appliance
 * and its wsefwd (or the sanitizer builds for the -san test), the tools
 * build/bin/.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fwd_daemon.h"
#include "kselftest_harness.h"
#include "test_files.h"
#include "wsep_sample.h"

#define FORTUNES "/usr/share/games/fortunes/fortunes"
#define FASHION "/usr/share/datasets/fashion-mnist"

static const char *self_path;

FIXTURE(graph)
{
	char dir[64];
	pid_t fwd;
	char out[16384];
};

/* An appliance of @systems systems on a 64x64 wafer, @micro micro-batches a pipelined batch. */
static void start_with(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
		       int systems, int micro, const char *extra)
{
	char spec[128], log[128], run_dir[128], n[16], mb[48];

	snprintf(spec, sizeof(spec), "unix:%s/fwd.sock", self->dir);
	snprintf(log, sizeof(log), "%s/appliance.log", self->dir);
	snprintf(run_dir, sizeof(run_dir), "%s/run", self->dir);
	snprintf(n, sizeof(n), "%d", systems);
	snprintf(mb, sizeof(mb), "--fw-arg=--micro-batches=%d", micro);
	self->fwd = fork();
	ASSERT_LE(0, self->fwd);
	if (self->fwd == 0) {
		if (!freopen(log, "w", stderr))
			_exit(127);
		execl(appliance_binary(self_path), appliance_binary(self_path), "--systems", n,
		      "--listen", spec, "--run-dir", run_dir, "--fw-arg=--wafer=64x64",
		      mb, extra, NULL);
		_exit(127);
	}
}

static void start_micro(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self, int systems,
			int micro)
{
	start_with(_metadata, self, systems, micro, NULL);
}

static void start(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self, int systems)
{
	start_micro(_metadata, self, systems, 8);
}

/* A system alone: wsefwd on a 64x64 wafer, 8 micro-batches a batch like the appliance's. */
static void start_system(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self)
{
	char spec[128], log[128];

	snprintf(spec, sizeof(spec), "unix:%s/fwd.sock", self->dir);
	snprintf(log, sizeof(log), "%s/wsefwd.log", self->dir);
	self->fwd = fork();
	ASSERT_LE(0, self->fwd);
	if (self->fwd == 0) {
		if (!freopen(log, "w", stderr))
			_exit(127);
		execl(fwd_binary(self_path), fwd_binary(self_path), "--listen", spec, "--wafer",
		      "64x64", "--micro-batches", "8", NULL);
		_exit(127);
	}
}

static void stop(FIXTURE_DATA(graph) *self)
{
	if (self->fwd > 0) {
		kill(self->fwd, SIGTERM);
		waitpid(self->fwd, NULL, 0);
		self->fwd = 0;
	}
}

FIXTURE_SETUP(graph)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/wsefwd_graph.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->fwd = 0;
}

FIXTURE_TEARDOWN(graph)
{
	char cmd[128];

	stop(self);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd)) {
		/* A leftover temp dir is not worth failing for. */
	}
}

/* wse-trainhost on the appliance (retrying while it starts or the last host leaves); its output in self->out. */
static int trainhost(FIXTURE_DATA(graph) *self, const char *program, const char *args)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "for i in 1 2 3 4 5 6 7 8 9 10; do build/bin/wse-trainhost --connect unix:%s/fwd.sock --program %s %s 2>&1 && exit 0; sleep 0.3; done; exit 1",
		 self->dir, program, args);
	return run_cmd(cmd, self->out, sizeof(self->out));
}

/* The lines of @out that start with @prefix, without what follows @cut on each. */
static void lines(const char *out, const char *prefix, const char *cut, char *dst, size_t cap)
{
	size_t n = 0, plen = strlen(prefix);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n'), *c;

		if (strncmp(l, prefix, plen))
			continue;
		if (!end)
			end = l + strlen(l);
		c = cut ? strstr(l, cut) : NULL;
		if (c && c < end)
			end = c;
		n += (size_t)snprintf(dst + n, cap - n, "%.*s\n", (int)(end - l), l);
		if (n >= cap)
			break;
	}
	if (n >= cap)
		n = cap - 1;
	dst[n] = '\0';
}

/* A number after @key in @out, -1 if none. */
static double after(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	return p ? atof(p + strlen(key)) : -1.0;
}

/*
 * The GPT tests/corpus/onnx/@model.onnx in both modes on the appliance:
 * the same losses; returns the validation loss.
 */
static double gpt_both_modes(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
			     const char *model, char loss[2][2048])
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	char cmd[1024], prog[128], val[2][128];

	for (int m = 0; m < 2; m++) {
		snprintf(prog, sizeof(prog), "%s/%s-%s.wsep", self->dir, model, modes[m]);
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc tests/corpus/onnx/%s.onnx --batch 8 --wafer 64x64 --mode %s --optimizer adamw --lr 0.01 --warmup 5 --steps 30 -q -o %s 2>&1",
			 model, modes[m], prog);
		EXPECT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
		EXPECT_EQ(0, trainhost(self, prog, "--steps 30 --report 10 --text " FORTUNES))
			TH_LOG("%s", self->out);
		TH_LOG("%s:\n%s", modes[m], self->out);
		lines(self->out, "step ", "  cycles", loss[m], sizeof(loss[m]));
		lines(self->out, "validation loss", NULL, val[m], sizeof(val[m]));
	}
	EXPECT_NE(0U, strlen(loss[0]));
	EXPECT_STREQ(loss[0], loss[1]);
	EXPECT_STREQ(val[0], val[1]);
	return after(val[0], "validation loss ");
}

/*
 * 16-bit weights on the wire for a graph program: the bf16 GPT by weight
 * streaming on 2 systems that read MemoryX's f32 masters in place, and on
 * 2 that get their weights in frames (--no-regions), where its MatMul
 * weights travel in 16 bits and its embeddings (also gathered), norms and
 * biases in f32: the same losses to 9 digits and the same validation
 * loss, in fewer bytes, though not half (the f32 part stays).
 */
TEST_F(graph, gpt_weights_in_16_bits_on_the_wire_change_no_loss)
{
	char prog[128], cmd[1024], loss[2][2048], val[2][128];
	double bytes[2];

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (apt-get install fortunes)", FORTUNES);
	snprintf(prog, sizeof(prog), "%s/gpt-bf16.wsep", self->dir);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --mode weight_streaming --optimizer adamw --lr 0.01 --warmup 5 --steps 20 --precision bf16 -q -o %s 2>&1",
		 prog);
	ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	for (int v = 0; v < 2; v++) {
		start_with(_metadata, self, 2, 8, v ? "--no-regions" : NULL);
		ASSERT_EQ(0, trainhost(self, prog,
				       "--steps 6 --report 1 --loss-digits 9 --systems 2 --text " FORTUNES))
			TH_LOG("%s", self->out);
		lines(self->out, "step ", "  cycles", loss[v], sizeof(loss[v]));
		lines(self->out, "validation loss", NULL, val[v], sizeof(val[v]));
		bytes[v] = after(self->out, "traffic: ");
		stop(self);
	}
	EXPECT_NE(0U, strlen(loss[0]));
	EXPECT_STREQ(loss[0], loss[1]);
	EXPECT_STREQ(val[0], val[1]);
	TH_LOG("weight bytes broadcast: %.0f in f32, %.0f with 16-bit MatMul weights", bytes[0],
	       bytes[1]);
	EXPECT_LT(bytes[1], bytes[0]);
	EXPECT_LE(bytes[0] / 2, bytes[1]);
}

/*
 * @model on the device in both modes, against the graph executor on the
 * host, whose losses onnx_graph_test ties to PyTorch's.
 */
static void gpt_device_as_host(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
			       const char *model, double below)
{
	char loss[2][2048], host[8192], cmd[512];
	double dev, ref;

	start(_metadata, self, 1);
	dev = gpt_both_modes(_metadata, self, model, loss);
	EXPECT_GT(dev, 0);
	EXPECT_LT(dev, below);
	snprintf(cmd, sizeof(cmd), "build/bin/wse-graphtrain tests/corpus/onnx/%s.onnx --text " FORTUNES
		 " --batch 8 --steps 30 --optimizer adamw --lr 0.01 --warmup 5 --eval-every 0 --log-every 10 2>&1",
		 model);
	ASSERT_EQ(0, run_cmd(cmd, host, sizeof(host)));
	ref = after(strstr(host, "step 30 val_loss"), "val_loss ");
	TH_LOG("%s: device %.4f, host %.4f", model, dev, ref);
	/* Both print four decimals: the same computation. */
	EXPECT_LT(fabs(dev - ref), 1.5e-4);
	EXPECT_NE(NULL, strstr(loss[0], "step    30  loss"));
	EXPECT_LT(fabs(after(strstr(host, "step 30 loss"), "loss ") -
		       after(strstr(loss[0], "step    30"), "loss ")), 1.5e-4);
}

TEST_F(graph, gpt_trains_alike_in_both_modes_and_as_on_the_host)
{
	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	/* The loss falls from ln(96) = 4.56. */
	gpt_device_as_host(_metadata, self, "gpt-tiny", 3.6);
}

/*
 * The GPT whose head shares the token embedding: tied by wsecc, one
 * parameter read by the Gather and, through a Transpose, by the head, on
 * one unit in weight streaming (a parameter streams with one unit).
 */
TEST_F(graph, tied_gpt_trains_alike_in_both_modes_and_as_on_the_host)
{
	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	/* The shared N(0, 1) embedding as the head starts it near 14: 4.24 measured. */
	gpt_device_as_host(_metadata, self, "gpt-tied-tiny", 4.5);
}

/*
 * The BERT-style encoder (models/bert_mlm.py) fed its tokens and padding
 * mask, by masked LM: both modes on one system print the training and
 * validation losses of the graph executor on the host, whose masked-LM
 * loss onnx_graph_test ties to PyTorch. Split across two systems, a batch
 * with unpredicted rows is refused: no system sees the others' counts.
 */
TEST_F(graph, bert_masked_lm_trains_as_on_the_host_and_is_refused_split)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	char cmd[1024], prog[2][128], loss[2][2048], val[2][128], host[8192];
	double ref;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	start(_metadata, self, 2);
	for (int m = 0; m < 2; m++) {
		snprintf(prog[m], sizeof(prog[m]), "%s/bert-%s.wsep", self->dir, modes[m]);
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc tests/corpus/onnx/bert-tiny.onnx --batch 8 --wafer 64x64 --mode %s --optimizer adam --lr 0.01 --warmup 5 --steps 30 -q -o %s 2>&1",
			 modes[m], prog[m]);
		ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
		EXPECT_EQ(0, trainhost(self, prog[m], "--steps 30 --report 10 --systems 1 --text " FORTUNES))
			TH_LOG("%s", self->out);
		TH_LOG("%s:\n%s", modes[m], self->out);
		lines(self->out, "step ", "  accuracy", loss[m], sizeof(loss[m]));
		lines(self->out, "validation loss", NULL, val[m], sizeof(val[m]));
	}
	EXPECT_NE(0U, strlen(loss[0]));
	EXPECT_STREQ(loss[0], loss[1]);
	EXPECT_STREQ(val[0], val[1]);
	ASSERT_EQ(0, run_cmd("build/bin/wse-graphtrain tests/corpus/onnx/bert-tiny.onnx --mlm --text " FORTUNES
			     " --batch 8 --steps 30 --optimizer adam --lr 0.01 --warmup 5 --eval-every 0 --log-every 10 2>&1",
			     host, sizeof(host)));
	ref = after(strstr(host, "step 30 val_loss"), "val_loss ");
	TH_LOG("device %.4f, host %.4f", after(val[0], "validation loss "), ref);
	/* Both print four decimals: the same computation. */
	EXPECT_LT(fabs(after(val[0], "validation loss ") - ref), 1.5e-4);
	EXPECT_LT(fabs(after(strstr(host, "step 30 loss"), "loss ") -
		       after(strstr(loss[0], "step    30"), "loss ")), 1.5e-4);
	/*
	 * Masked positions are about 15% of the real ones: every batch has
	 * rows not counted, and each system refuses its share. The
	 * coordinator hands the refusal on to the host, well inside the
	 * host's wait (a RUN left waiting would end in "stuck" instead).
	 */
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wse-trainhost --connect unix:%s/fwd.sock --program %s --steps 2 --systems 2 --timeout-ms 60000 --text " FORTUNES " 2>&1",
		 self->dir, prog[1]);
	EXPECT_NE(0, run_cmd(cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "labels of -100 (rows not counted) in a batch split across systems"))
		TH_LOG("%s", self->out);
}

TEST_F(graph, gpt_on_1_and_2_systems_agrees)
{
	char cmd[1024], prog[128], loss[2][2048], val[2][128];

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	start(_metadata, self, 2);
	snprintf(prog, sizeof(prog), "%s/gpt.wsep", self->dir);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --mode weight_streaming --optimizer adamw --lr 0.01 --warmup 5 --steps 20 -q -o %s 2>&1",
		 prog);
	ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	for (int n = 1; n <= 2; n++) {
		snprintf(cmd, sizeof(cmd), "--steps 20 --report 5 --systems %d --text " FORTUNES, n);
		EXPECT_EQ(0, trainhost(self, prog, cmd)) TH_LOG("%s", self->out);
		lines(self->out, "step ", "  cycles", loss[n - 1], sizeof(loss[n - 1]));
		lines(self->out, "validation loss", NULL, val[n - 1], sizeof(val[n - 1]));
	}
	EXPECT_NE(0U, strlen(loss[0]));
	EXPECT_STREQ(loss[0], loss[1]);
	EXPECT_STREQ(val[0], val[1]);
}

/* Step @n's loss in @out ("step     n  loss X"), -1 if none. */
static double step_loss(const char *out, int n)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "step %5d  loss ", n);
	p = strstr(out, key);
	return p ? atof(p + strlen(key)) : -1.0;
}

TEST_F(graph, gpt_recomputing_trains_as_keeping_every_activation)
{
	static const char *const when[] = { "off", "on" };
	char cmd[1024], prog[2][128], out[2][16384], err[256];
	struct wsep_program *p;
	double cycles[2];

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	start(_metadata, self, 2);
	for (int r = 0; r < 2; r++) {
		snprintf(prog[r], sizeof(prog[r]), "%s/gpt-recompute-%s.wsep", self->dir, when[r]);
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc tests/corpus/onnx/gpt-drop-tiny.onnx --batch 8 --wafer 64x64 --mode weight_streaming --recompute %s --optimizer adamw --lr 0.01 -q -o %s 2>&1",
			 when[r], prog[r]);
		ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
		ASSERT_EQ(0, wsep_read_file(prog[r], &p, err, sizeof(err))) TH_LOG("%s", err);
		EXPECT_EQ(r ? WSEP_EXEC_RECOMPUTE : 0U, p->exec_flags & WSEP_EXEC_RECOMPUTE);
		EXPECT_EQ(r ? WSEP_FEATURE_RECOMPUTE : 0U, p->features & WSEP_FEATURE_RECOMPUTE);
		wsep_program_free(p);
		EXPECT_EQ(0, trainhost(self, prog[r],
				       "--steps 8 --report 1 --loss-digits 9 --text " FORTUNES))
			TH_LOG("%s", self->out);
		TH_LOG("recompute %s:\n%s", when[r], self->out);
		memcpy(out[r], self->out, sizeof(out[r]));
		cycles[r] = after(out[r], "samples, ");
	}
	for (int step = 1; step <= 8; step++) {
		double a = step_loss(out[0], step), b = step_loss(out[1], step);

		EXPECT_GT(a, 0) TH_LOG("step %d", step);
		EXPECT_LE(fabs(a - b), 1e-6 * a) TH_LOG("step %d: %.9f kept, %.9f recomputed",
							step, a, b);
	}
	/* Dropout is on: the masks recomputed are the forward pass's. */
	EXPECT_LT(step_loss(out[1], 8), step_loss(out[1], 1));
	/* The backward passes of units 0 and 1 run their forward passes again. */
	EXPECT_GT(cycles[1], cycles[0]) TH_LOG("%.0f cycles kept, %.0f recomputed", cycles[0],
					       cycles[1]);
}

TEST_F(graph, cnn_trains_in_both_modes)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	char cmd[1024], prog[128], loss[2][2048];

	if (access(FASHION, R_OK))
		SKIP(return, "no %s (tools/install-deps installs dataset-fashion-mnist)", FASHION);
	start(_metadata, self, 1);
	for (int m = 0; m < 2; m++) {
		snprintf(prog, sizeof(prog), "%s/cnn-%s.wsep", self->dir, modes[m]);
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc tests/corpus/onnx/cnn-tiny.onnx --batch 64 --wafer 64x64 --mode %s --lr 0.01 -q -o %s 2>&1",
			 modes[m], prog);
		EXPECT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
		EXPECT_EQ(0, trainhost(self, prog,
				       "--steps 150 --report 50 --expect-falling --images " FASHION
				       "/train-images-idx3-ubyte.gz --labels " FASHION
				       "/train-labels-idx1-ubyte.gz"))
			TH_LOG("%s", self->out);
		lines(self->out, "step ", "  cycles", loss[m], sizeof(loss[m]));
	}
	EXPECT_NE(0U, strlen(loss[0]));
	EXPECT_STREQ(loss[0], loss[1]);
	/* Far above chance (0.1) after 150 steps. */
	EXPECT_GT(after(strstr(loss[0], "step   150"), "accuracy "), 0.45) TH_LOG("%s", loss[0]);
}

/*
 * BatchNorm2d in training mode: layer-pipelined, its running statistics
 * updated in the device's resident weights; weight streaming is refused at
 * compile time (MemoryX would never see them).
 */
TEST_F(graph, batchnorm_cnn_trains_pipelined_and_is_refused_streamed)
{
	char prog[128], cmd[1024], loss[2048];

	if (access(FASHION, R_OK))
		SKIP(return, "no %s (tools/install-deps installs dataset-fashion-mnist)", FASHION);
	snprintf(prog, sizeof(prog), "%s/bn.wsep", self->dir);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/bn-tiny.onnx --batch 64 --wafer 64x64 --mode weight_streaming -q -o %s 2>&1",
		 prog);
	EXPECT_EQ(1, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "--execution-mode pipelined")) TH_LOG("%s", self->out);
	start(_metadata, self, 1);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/bn-tiny.onnx --batch 64 --wafer 64x64 --mode pipelined --lr 0.05 -q -o %s 2>&1",
		 prog);
	EXPECT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	EXPECT_EQ(0, trainhost(self, prog,
			       "--steps 150 --report 50 --expect-falling --images " FASHION
			       "/train-images-idx3-ubyte.gz --labels " FASHION
			       "/train-labels-idx1-ubyte.gz"))
		TH_LOG("%s", self->out);
	lines(self->out, "step ", "  cycles", loss, sizeof(loss));
	/* Far above chance (0.1) after 150 steps (0.55 measured). */
	EXPECT_GT(after(strstr(loss, "step   150"), "accuracy "), 0.4) TH_LOG("%s", loss);
}

/*
 * bn-tiny's batch as IDX files, the whole batch one micro-batch: the
 * device's first three SGD steps give PyTorch's losses (to the 4 decimals
 * wse-trainhost prints), batch statistics and all, and the evaluation
 * after them PyTorch's eval-mode loss: the running statistics the device
 * kept in its resident weights are PyTorch's.
 */
TEST_F(graph, batchnorm_cnn_first_steps_match_pytorch_on_the_device)
{
	char prog[128], cmd[1024], want[4][32], *at;
	static const char eval[] = "evaluation loss ";
	double steps[4];
	FILE *f = fopen("tests/corpus/onnx/bn-tiny.steps", "r");

	ASSERT_NE(NULL, f);
	ASSERT_EQ(4, fscanf(f, "%lf %lf %lf %lf", &steps[0], &steps[1], &steps[2], &steps[3]));
	fclose(f);
	start_micro(_metadata, self, 1, 1);
	snprintf(prog, sizeof(prog), "%s/bn4.wsep", self->dir);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/bn-tiny.onnx --batch 4 --wafer 64x64 --mode pipelined --optimizer sgd --lr 0.1 -q -o %s 2>&1",
		 prog);
	ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, trainhost(self, prog,
			       "--steps 3 --report 1 --evaluate --images tests/corpus/onnx/bn-tiny.images.idx"
			       " --labels tests/corpus/onnx/bn-tiny.labels.idx"))
		TH_LOG("%s", self->out);
	for (int t = 0; t < 3; t++) {
		snprintf(want[t], sizeof(want[t]), "step %5d  loss ", t + 1);
		at = strstr(self->out, want[t]);
		ASSERT_NE(NULL, at) TH_LOG("%s", self->out);
		EXPECT_LT(fabs(strtod(at + strlen(want[t]), NULL) - steps[t]), 1.01e-4)
			TH_LOG("step %d: PyTorch %.7f; %s", t + 1, steps[t], self->out);
	}
	at = strstr(self->out, eval);
	ASSERT_NE(NULL, at) TH_LOG("%s", self->out);
	EXPECT_LT(fabs(strtod(at + strlen(eval), NULL) - steps[3]), 1.01e-4)
		TH_LOG("eval: PyTorch %.7f; %s", steps[3], self->out);
}

/*
 * Mixed precision on the device (tests/corpus/onnx/cnn-mp, make-corpus
 * --precision): the CNN's 20 SGD steps on one batch of 8, compiled for
 * bf16 and fp16 in both modes (weight streaming on 2 systems: fp16 with
 * MemoryX holding each step's updates until every layer's gradient is
 * checked), each step's loss within 2% of PyTorch's at that precision.
 */
static void precision_run(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
			  const char *prec, const char *mode)
{
	char prog[128], cmd[1024], name[16], key[32], *at;
	double want[20], worst = 0.0;
	FILE *f = fopen("tests/corpus/onnx/cnn-mp.precision", "r");
	int found = 0;

	ASSERT_NE(NULL, f);
	while (!found && fscanf(f, "%15s", name) == 1) {
		found = !strcmp(name, prec);
		for (int t = 0; t < 20; t++)
			if (fscanf(f, "%lf", &want[t]) != 1)
				break;
	}
	fclose(f);
	ASSERT_TRUE(found);
	snprintf(prog, sizeof(prog), "%s/cnn-%s-%s.wsep", self->dir, prec, mode);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/cnn-mp.onnx --batch 8 --wafer 64x64 --mode %s --optimizer sgd --lr 0.05 --precision %s -q -o %s 2>&1",
		 mode, prec, prog);
	ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, trainhost(self, prog,
			       "--steps 20 --report 1 --images tests/corpus/onnx/cnn-mp.images.idx"
			       " --labels tests/corpus/onnx/cnn-mp.labels.idx"))
		TH_LOG("%s", self->out);
	for (int t = 0; t < 20; t++) {
		snprintf(key, sizeof(key), "step %5d  loss ", t + 1);
		at = strstr(self->out, key);
		ASSERT_NE(NULL, at) TH_LOG("%s", self->out);
		worst = fmax(worst, fabs(strtod(at + strlen(key), NULL) - want[t]) / want[t]);
	}
	TH_LOG("%s %s: step 20 loss %.4f, PyTorch %.4f; worst step %.2g of PyTorch's", prec, mode,
	       strtod(at + strlen(key), NULL), want[19], worst);
	EXPECT_LT(worst, 0.02) TH_LOG("%s", self->out);
}

TEST_F(graph, mixed_precision_trains_like_pytorch_on_the_device)
{
	start_micro(_metadata, self, 2, 1);
	precision_run(_metadata, self, "bf16", "pipelined");
	precision_run(_metadata, self, "fp16", "pipelined");
	precision_run(_metadata, self, "bf16", "weight_streaming");
	precision_run(_metadata, self, "fp16", "weight_streaming");
}

/*
 * The CNN at lr 50 in fp16 for 8 steps in @mode: its losses into @loss[1
 * .. 8], and in @skipped[t] whether the appliance's log says step t was
 * skipped (@ws: the coordinator's message for the job's 2 systems; else
 * the device's). Both runs log into the same file: each message names its
 * mode.
 */
static void overflow_run(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
			 const char *mode, double *loss, bool *skipped)
{
	const char *tail = strcmp(mode, "pipelined") ? "the step is skipped on all 2 systems" :
						       "the step is skipped, the scale";
	char prog[128], cmd[1024], path[128], key[32], *log, *at;

	snprintf(prog, sizeof(prog), "%s/fp16-%s.wsep", self->dir, mode);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/cnn-mp.onnx --batch 8 --wafer 64x64 --mode %s --optimizer sgd --lr 50 --precision fp16 -q -o %s 2>&1",
		 mode, prog);
	ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, trainhost(self, prog,
			       "--steps 8 --report 1 --images tests/corpus/onnx/cnn-mp.images.idx"
			       " --labels tests/corpus/onnx/cnn-mp.labels.idx"))
		TH_LOG("%s", self->out);
	for (int t = 1; t <= 8; t++) {
		snprintf(key, sizeof(key), "step %5d  loss ", t);
		at = strstr(self->out, key);
		ASSERT_NE(NULL, at) TH_LOG("%s", self->out);
		loss[t] = strtod(at + strlen(key), NULL);
	}
	snprintf(path, sizeof(path), "%s/appliance.log", self->dir);
	log = test_read_file(path, NULL);
	ASSERT_NE(NULL, log);
	for (int t = 1; t <= 8; t++) {
		skipped[t] = false;
		snprintf(key, sizeof(key), "step %d: fp16", t);
		for (at = strstr(log, key); at; at = strstr(at + 1, key)) {
			const char *end = strchr(at, '\n'), *m = strstr(at, tail);

			skipped[t] |= m && (!end || m < end);
		}
	}
	free(log);
}

/*
 * fp16 loss scaling on the device and by weight streaming on 2 systems: at
 * lr 50 the CNN's gradients soon overflow fp16 where the backward
 * products round them. Each such step is skipped (the next step's loss is
 * the same: no weight moved on either system) and the scale halved from
 * 65536, as the device (pipelined) and the coordinator (weight streaming:
 * MemoryX applied none of the step's layers) log. Both modes cut the batch
 * into the same 8 micro-batches, so they skip the same steps and compute
 * the same losses, bit for bit.
 */
TEST_F(graph, fp16_overflow_skips_the_step_and_halves_the_scale_on_the_device)
{
	double pipe[9] = { 0 }, ws[9] = { 0 };
	bool pipe_skip[9], ws_skip[9];
	char path[128], *log;
	int skips = 0;

	start_micro(_metadata, self, 2, 8);
	overflow_run(_metadata, self, "pipelined", pipe, pipe_skip);
	overflow_run(_metadata, self, "weight_streaming", ws, ws_skip);
	snprintf(path, sizeof(path), "%s/appliance.log", self->dir);
	log = test_read_file(path, NULL);
	ASSERT_NE(NULL, log);
	EXPECT_NE(NULL, strstr(log, "fp16 gradients overflowed at loss scale 65536: the step is skipped, the scale is now 32768 (1 skipped)"))
		TH_LOG("%s", log);
	EXPECT_NE(NULL, strstr(log, "fp16 gradients overflowed at loss scale 65536: the step is skipped on all 2 systems, the scale is now 32768 (1 skipped)"))
		TH_LOG("%s", log);
	free(log);
	for (int t = 1; t <= 8; t++) {
		EXPECT_EQ(pipe_skip[t], ws_skip[t]) TH_LOG("step %d", t);
		EXPECT_EQ(pipe[t], ws[t]) TH_LOG("step %d: pipelined %.9g, weight streaming %.9g", t,
						 pipe[t], ws[t]);
		if (t == 8 || !ws_skip[t])
			continue;
		skips++;
		EXPECT_EQ(pipe[t], pipe[t + 1]) TH_LOG("step %d was skipped pipelined", t);
		EXPECT_EQ(ws[t], ws[t + 1]) TH_LOG("step %d was skipped weight streaming", t);
	}
	TH_LOG("%d of the first 7 steps skipped; losses %.6g .. %.6g", skips, ws[1], ws[8]);
	EXPECT_LT(0, skips);
}

TEST_F(graph, a_graph_the_engine_refuses_is_refused_at_load)
{
	char cmd[1024], prog[128];
	uint8_t *buf;
	size_t len;
	FILE *f;

	start(_metadata, self, 1);
	snprintf(prog, sizeof(prog), "%s/bad.wsep", self->dir);
	snprintf(cmd, sizeof(cmd),
		 "build/bin/wsecc tests/corpus/onnx/cnn-tiny.onnx --batch 4 --wafer 64x64 -q -o %s 2>&1",
		 prog);
	ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	/* Node 0's kernel_shape[0] (the nodes section is type 11): 5, its weights are 3x3. */
	f = fopen(prog, "r+b");
	ASSERT_NE(NULL, f);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	rewind(f);
	ASSERT_EQ(len, fread(buf, 1, len, f));
	for (uint32_t i = 0; i < buf[12]; i++) {
		uint8_t *e = buf + 64 + 32 * i;

		if (e[0] == 11) {
			uint64_t off = 0;

			memcpy(&off, e + 16, 8);
			buf[off + 80] = 5;
		}
	}
	wsep_sample_reseal(buf, len);
	rewind(f);
	ASSERT_EQ(len, fwrite(buf, 1, len, f));
	fclose(f);
	free(buf);
	EXPECT_EQ(1, trainhost(self, prog, "--steps 1"));
	/* At the micro-batch's size: 8 micro-batches a batch on the appliance's system. */
	EXPECT_NE(NULL, strstr(self->out, "invalid program: the graph at 1 samples: node 0 (conv2d): kernel_shape differs from the weights' shape"))
		TH_LOG("%s", self->out);
}

/*
 * wse-trainhost --predict's line: @samples x @rows predicted, as many
 * right as EVAL counted (and more than none), every class the argmax of
 * its logits. Returns PREDICT's right answers.
 */
static long predicted_as_evaluated(struct __test_metadata *_metadata, const char *out,
				   unsigned int samples, unsigned int rows)
{
	const char *line = strstr(out, "predict: ");
	unsigned int n = 0, r = 0;
	long eval = -1, pred = -2, agree = -3, checked = -4;

	EXPECT_NE(NULL, line) TH_LOG("%s", out);
	if (!line)
		return -1;
	EXPECT_EQ(6, sscanf(line,
			    "predict: %u samples x %u rows: eval right %ld, predict right %ld, argmax of the logits %ld of %ld",
			    &n, &r, &eval, &pred, &agree, &checked))
		TH_LOG("%s", line);
	EXPECT_EQ(samples, n);
	EXPECT_EQ(rows, r);
	EXPECT_GT(eval, 0);
	EXPECT_EQ(eval, pred);
	EXPECT_EQ((long)samples * rows, checked);
	EXPECT_EQ(checked, agree);
	return pred;
}

TEST_F(graph, predict_agrees_with_eval_on_a_system_and_in_both_modes)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	char cmd[1024], cnn_prog[2][128], gpt_prog[2][128];
	long cnn[3], gpt[3];

	if (access(FASHION, R_OK) || access(FORTUNES, R_OK))
		SKIP(return, "no %s or %s (tools/install-deps installs them)", FASHION, FORTUNES);
	for (int m = 0; m < 2; m++) {
		snprintf(cnn_prog[m], sizeof(cnn_prog[m]), "%s/cnn-%s.wsep", self->dir, modes[m]);
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc tests/corpus/onnx/cnn-tiny.onnx --batch 64 --wafer 64x64 --mode %s --lr 0.01 -q -o %s 2>&1",
			 modes[m], cnn_prog[m]);
		ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
		snprintf(gpt_prog[m], sizeof(gpt_prog[m]), "%s/gpt-%s.wsep", self->dir, modes[m]);
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --mode %s --optimizer adamw --lr 0.01 --warmup 5 --steps 30 -q -o %s 2>&1",
			 modes[m], gpt_prog[m]);
		ASSERT_EQ(0, run_cmd(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	}
	/*
	 * The system alone, then the appliance: pipelined, then weight
	 * streaming. 40 steps of 64 samples predicted in one RUN: the device's
	 * rings hold 4 batches, so a host that left the logits would stall it.
	 */
	for (int at = 0; at < 3; at++) {
		int m = at == 2;

		if (at == 0)
			start_system(_metadata, self);
		else if (at == 1)
			start(_metadata, self, 1);
		EXPECT_EQ(0, trainhost(self, cnn_prog[m],
				       "--steps 100 --report 100 --predict 2560 --images " FASHION
				       "/train-images-idx3-ubyte.gz --labels " FASHION
				       "/train-labels-idx1-ubyte.gz"))
			TH_LOG("%s", self->out);
		cnn[at] = predicted_as_evaluated(_metadata, self->out, 2560, 1);
		EXPECT_EQ(0, trainhost(self, gpt_prog[m],
				       "--steps 30 --report 30 --predict 64 --text " FORTUNES))
			TH_LOG("%s", self->out);
		gpt[at] = predicted_as_evaluated(_metadata, self->out, 64, 8);
		if (at != 1)
			stop(self);
	}
	/* The same bits everywhere: the right answers agree to the sample. */
	EXPECT_EQ(cnn[0], cnn[1]);
	EXPECT_EQ(cnn[0], cnn[2]);
	EXPECT_EQ(gpt[0], gpt[1]);
	EXPECT_EQ(gpt[0], gpt[2]);
	/* Far above chance (256 of 2560) after 100 steps. */
	EXPECT_GT(cnn[0], 1000);
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
