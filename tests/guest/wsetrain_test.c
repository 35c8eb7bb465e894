// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain end to end in the guest, through the driver, on Fashion-MNIST:
 * a short run whose loss falls and whose accuracy beats chance by far;
 * weight streaming on an appliance giving the same bits on 1, 2 (and 4)
 * of its systems and with its input workers reading the data; resume
 * after a system (pipelined) or an appliance's system (weight streaming)
 * is killed, reaching the weights of an uninterrupted run; and bad input
 * (dataset, model, devices) refused with a message that names it, leaving
 * the last checkpoint as it was.
 *
 * Firmware: the simulators and the appliance wsevm started on the host
 * (/wse/fw-addrs, one address per line, /wse/appliance-addr; run at native
 * speed) where there are enough, and simulators or an appliance inside the
 * guest where one must be killed.
 */
#include <dirent.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "wse/dataset.h"
#include "wse/wse.h"
#include "wse/crc32c.h"
#include "wse_guest.h"

#define FMNIST		"/usr/share/datasets/fashion-mnist"
#define OUT_MAX		(64 << 10)

FIXTURE(wsetrain) {
	struct wse_ctl *ctl;
	struct wse_dev_status dev[4];
	int attached;
	char devices[64];	/* "--devices 3,4" for the attached ones */
	char *out;
};

/* The share wsevm --runs made (tools/check looks at what run_directories leaves there). */
static char runs_share[256];

FIXTURE_SETUP(wsetrain)
{
	struct stat st;

	/* Only run_directories writes there, and says so: the other runs leave nothing. */
	if (getenv("WSETRAIN_RUNS"))
		snprintf(runs_share, sizeof(runs_share), "%s", getenv("WSETRAIN_RUNS"));
	unsetenv("WSETRAIN_RUNS");

	if (stat(FMNIST "/train-images-idx3-ubyte.gz", &st))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	self->attached = 0;
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
}

FIXTURE_TEARDOWN(wsetrain)
{
	for (int i = 0; i < self->attached; i++)
		wse_ctl_detach(self->ctl, self->dev[i].index);
	wse_ctl_close(self->ctl);
	free(self->out);
}

/* Attaches @n of the host's simulators; SKIPs the test when there are fewer. */
static int attach_host(struct __test_metadata *_metadata, FIXTURE_DATA(wsetrain) *self, int n)
{
	char addrs[4][160];
	int have = guest_host_firmware(addrs, 4), at = 0;

	if (have < n)
		return -1;
	for (int i = 0; i < n; i++) {
		if (guest_attach(self->ctl, addrs[i], 0, &self->dev[i]))
			return -2;
		self->attached++;
		at += snprintf(self->devices + at, sizeof(self->devices) - at, "%s%u",
			       i ? "," : "--devices ", self->dev[i].index);
	}
	(void)_metadata;
	return 0;
}

/* The train rows of a wsetrain CSV: the losses in order. */
static int csv_losses(const char *path, double *loss, int max)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long long step;
		unsigned int epoch;

		if (sscanf(line, "train,%llu,%u,%lf", &step, &epoch, &loss[n]) == 3)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

static double csv_test_accuracy(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	double loss, acc = -1;
	unsigned long long step;
	unsigned int epoch;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "test,%llu,%u,%lf,%lf", &step, &epoch, &loss, &acc) != 4)
			continue;
	if (f)
		fclose(f);
	return acc;
}

/* A few hundred steps on a slice: the loss falls, accuracy far above chance. */
TEST_F_TIMEOUT(wsetrain, short_run_learns, 600)
{
	double loss[64], acc;
	int n, st;

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	unlink("/tmp/short.csv");
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain models/fc-mnist --mode pipelined %s --train-limit 12800 --epochs 3 --steps 250 --test-limit 2000 --report 25 --csv /tmp/short.csv --tensorboard /tmp/short-tb",
		 self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	n = csv_losses("/tmp/short.csv", loss, 64);
	ASSERT_LE(8, n);
	EXPECT_LT(loss[n - 1], loss[0] * 0.6) TH_LOG("loss %.4f at first, %.4f at the end", loss[0],
						      loss[n - 1]);
	acc = csv_test_accuracy("/tmp/short.csv");
	/* Ten classes: chance is 0.1. */
	EXPECT_LT(0.6, acc) TH_LOG("test accuracy %.4f", acc);
	TH_LOG("loss %.4f -> %.4f, test accuracy %.4f", loss[0], loss[n - 1], acc);
	EXPECT_EQ(0, system("ls /tmp/short-tb/events.out.tfevents.* >/dev/null"));
}

/* The host's appliance (/wse/appliance-addr), attached as one device, self->dev[@slot]. */
static int attach_appliance(FIXTURE_DATA(wsetrain) *self, int slot)
{
	char addr[160] = "";
	FILE *f = fopen("/wse/appliance-addr", "r");

	if (!f)
		return -1;
	if (!fgets(addr, sizeof(addr), f))
		addr[0] = 0;
	fclose(f);
	addr[strcspn(addr, "\n")] = 0;
	if (!addr[0] || guest_attach(self->ctl, addr, 0, &self->dev[slot]))
		return -2;
	self->attached = slot + 1;
	snprintf(self->devices, sizeof(self->devices), "--devices %u", self->dev[slot].index);
	return 0;
}

static int checkpoint_crc(char *out, size_t len, const char *path, char crc[][16]);

/* Step, epoch, loss and accuracy of a --csv file's training rows (not the rates after). */
static size_t csv_train_rows(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t len = 0;

	out[0] = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *end = line;

		for (int c = 0; c < 5 && end; c++)
			end = strchr(end + 1, ',');
		if (strncmp(line, "train,", 6) || !end)
			continue;
		*end = 0;
		if (len + strlen(line) + 2 < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s\n", line);
	}
	fclose(f);
	return len;
}

/*
 * Weight streaming on the appliance through the driver: 1 and 2 of its
 * systems (4 if it has them), and its input workers reading the dataset
 * instead of the guest sending samples, give the same losses and the
 * same weights and optimizer state bit for bit; wsectl info shows the
 * appliance's parts; asking for more systems than it has is refused.
 */
TEST_F_TIMEOUT(wsetrain, appliance_systems_agree, 900)
{
	static const int systems[] = { 1, 2, 4 };
	const char *common = "models/fc-mnist --mode weight_streaming --train-limit 2560 --steps 12 --report 3 --no-eval";
	char crc[4][2][16], csv[64];
	char losses[4][512];
	struct wse_ring_params rp = { .hw_queue = 3, .depth = 2, .timeout_ms = 10000 };
	struct wse_appliance a;
	struct wse_ring *ring;
	struct wse_dev *dev;
	char spec[16];
	int runs = 0, st;

	if (attach_appliance(self, 0))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 2)");
	snprintf(spec, sizeof(spec), "%u", self->dev[0].index);
	ASSERT_EQ(0, wse_open(spec, &dev));
	ASSERT_EQ(0, wse_ring_open(dev, &rp, &ring));
	st = wse_appliance_info(ring, &a);
	wse_ring_close(ring);
	wse_close(dev);
	ASSERT_EQ(0, st);
	ASSERT_LE(2, a.systems);
	for (int i = 0; i < 4; i++) {
		int n = i < 3 ? systems[i] : 2;
		const char *input = i < 3 ? "" : "--input appliance";

		if (n > (int)a.systems)
			continue;
		snprintf(csv, sizeof(csv), "/tmp/sys%d.csv", i);
		unlink(csv);
		unlink("/tmp/sys.ckpt");
		st = guest_run(self->out, OUT_MAX, "wsetrain %s %s --systems %d %s --csv %s --checkpoint /tmp/sys.ckpt",
			 common, self->devices, n, input, csv);
		ASSERT_EQ(0, st) TH_LOG("%d systems %s: %s", n, input, self->out);
		ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/sys.ckpt", crc[runs]));
		ASSERT_NE(0U, csv_train_rows(csv, losses[runs], sizeof(losses[runs])));
		if (runs) {
			EXPECT_STREQ(losses[0], losses[runs]) TH_LOG("%d systems %s", n, input);
			EXPECT_STREQ(crc[0][0], crc[runs][0]) TH_LOG("weights, %d systems %s", n, input);
			EXPECT_STREQ(crc[0][1], crc[runs][1]) TH_LOG("optimizer, %d systems %s", n, input);
		}
		TH_LOG("%d systems %s: weights %s, optimizer %s", n, input, crc[runs][0], crc[runs][1]);
		runs++;
	}

	/* Its parts, in wsectl's table and JSON. */
	st = guest_run(self->out, OUT_MAX, "wsectl info %u", self->dev[0].index);
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "MemoryX")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "SwarmX")) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX, "wsectl info %u --json", self->dev[0].index);
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\"memoryx\"")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\"swarmx\"")) TH_LOG("%s", self->out);

	/* More systems than it has. */
	st = guest_run(self->out, OUT_MAX, "wsetrain %s %s --systems %u", common, self->devices,
		       a.systems * 2);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "is an appliance of")) TH_LOG("%s", self->out);
}

/*
 * Layer-pipelined on one of the appliance's systems, through the driver:
 * its input workers feeding the system give the losses, weights and
 * optimizer state of the guest's samples, bit for bit.
 */
TEST_F_TIMEOUT(wsetrain, appliance_feeds_a_pipelined_program, 600)
{
	static const char *const inputs[] = { "", "--input appliance" };
	char crc[2][2][16], losses[2][512];
	int st;

	if (attach_appliance(self, 0))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 2)");
	for (int i = 0; i < 2; i++) {
		unlink("/tmp/pipe.csv");
		unlink("/tmp/pipe.ckpt");
		st = guest_run(self->out, OUT_MAX,
			       "wsetrain models/fc-mnist --execution-mode pipelined --train-limit 2560 --steps 12 --report 3 --mode train %s --systems 1 %s --csv /tmp/pipe.csv --checkpoint /tmp/pipe.ckpt",
			       self->devices, inputs[i]);
		ASSERT_EQ(0, st) TH_LOG("%s: %s", inputs[i], self->out);
		EXPECT_NE(NULL, strstr(self->out, "pipelined on 1 system")) TH_LOG("%s", self->out);
		ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/pipe.ckpt", crc[i]));
		ASSERT_NE(0U, csv_train_rows("/tmp/pipe.csv", losses[i], sizeof(losses[i])));
	}
	EXPECT_STREQ(losses[0], losses[1]);
	EXPECT_STREQ(crc[0][0], crc[1][0]);
	EXPECT_STREQ(crc[0][1], crc[1][1]);
}

/* A model small enough for a simulator inside the guest. */
static const char small_model[] =
	"model small\ninput 784 u8\ndense 784 32 relu\ndense 32 10 none\n"
	"loss softmax_xent\noptimizer adam lr=1e-3\nbatch 64\nseed 3\n";

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ret = f && fwrite(data, 1, len, f) == len ? 0 : -1;

	if (f && fclose(f))
		ret = -1;
	return ret;
}

/* The "weights ... crc32c X" line of wsetrain --inspect. */
static int checkpoint_crc(char *out, size_t len, const char *path, char crc[][16])
{
	char *p;

	if (guest_run(out, len, "wsetrain --inspect %s", path))
		return -1;
	p = strstr(out, "crc32c ");
	if (!p || sscanf(p, "crc32c %15s", crc[0]) != 1)
		return -1;
	p = strstr(p + 1, "crc32c ");
	if (!p || sscanf(p, "crc32c %15s", crc[1]) != 1)
		return -1;
	return 0;
}

static int checkpoint_step(char *out, size_t len, const char *path)
{
	char *p;
	int step;

	if (guest_run(out, len, "wsetrain --inspect %s", path))
		return -1;
	p = strstr(out, "steps done");
	return p && sscanf(p, "steps done %d", &step) == 1 ? step : -1;
}

/* The pid of an appliance's part ("system-0") from its run directory's parts file. */
static pid_t part_pid(const char *parts, const char *name)
{
	FILE *f = fopen(parts, "r");
	char line[128], what[64];
	int pid = -1, p;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d", what, &p) == 2 && !strcmp(what, name))
			pid = p;
	if (f)
		fclose(f);
	return pid;
}

/* A system (pipelined) or an appliance of one system (weight streaming) in the guest. */
static int start_device(struct guest_peer *fw, bool appliance)
{
	if (appliance)
		return guest_peer_start(fw, "wse-appliance", "--systems", "1", "--run-dir", "/tmp/apl",
					"--fw-arg=--wafer=64x64", "--log-level", "warn", NULL);
	return guest_peer_start(fw, "wsefwd", "--wafer", "64x64", "--log-level", "warn", NULL);
}

/*
 * Killed after a checkpoint: the firmware of a system (pipelined), or an
 * appliance's system (weight streaming). wsetrain fails naming the device
 * (and the appliance the part), the checkpoint is intact, and a resumed
 * run (on a new firmware; on the same appliance, which started its system
 * again) ends with the weights and optimizer state of a run that was never
 * interrupted.
 */
TEST_F_TIMEOUT(wsetrain, resume_after_firmware_killed, 900)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	const char *common = "/tmp/small.model --train-limit 1280 --epochs 2 --no-eval -q";

	ASSERT_EQ(0, write_file("/tmp/small.model", small_model, sizeof(small_model) - 1));
	for (int i = 0; i < 2; i++) {
		bool appliance = i == 1;
		char crc_full[2][16], crc_resumed[2][16];
		struct guest_peer fw;
		struct wse_dev_status d;
		pid_t pid;
		int st, step = -1;
		int64_t until;

		/* Uninterrupted. */
		ASSERT_EQ(0, start_device(&fw, appliance));
		ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
		unlink("/tmp/full.ckpt");
		st = guest_run(self->out, OUT_MAX, "wsetrain %s --mode %s --devices %u --checkpoint /tmp/full.ckpt",
			 common, modes[i], d.index);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/full.ckpt", crc_full));
		if (!appliance) {
			wse_ctl_detach(self->ctl, d.index);
			guest_peer_stop(&fw, SIGKILL);
			/* Interrupted: the firmware dies once a checkpoint exists. */
			ASSERT_EQ(0, start_device(&fw, appliance));
			ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
		}
		unlink("/tmp/part.ckpt");
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			char cmd[512];

			snprintf(cmd, sizeof(cmd),
				 "exec wsetrain %s --mode %s --devices %u --checkpoint /tmp/part.ckpt --checkpoint-every 5 >/tmp/part.out 2>&1",
				 common, modes[i], d.index);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		until = guest_now_ms() + 300000;
		while (guest_now_ms() < until && (step = checkpoint_step(self->out, OUT_MAX,
									"/tmp/part.ckpt")) < 5)
			usleep(50000);
		if (appliance) {
			pid_t sys = part_pid("/tmp/apl/parts", "system-0");

			ASSERT_LT(0, sys);
			kill(sys, SIGKILL);
		} else {
			guest_peer_stop(&fw, SIGKILL);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_LE(5, step);
		guest_run(self->out, OUT_MAX, "cat /tmp/part.out");
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "device")) TH_LOG("%s", self->out);
		if (appliance)
			EXPECT_NE(NULL, strstr(self->out, "system 0")) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "--resume /tmp/part.ckpt")) TH_LOG("%s", self->out);
		/* Intact, and at one of its checkpoints. */
		step = checkpoint_step(self->out, OUT_MAX, "/tmp/part.ckpt");
		EXPECT_EQ(0, step % 5) TH_LOG("checkpoint at step %d", step);

		if (!appliance) {
			/* Resumed on a new firmware. */
			wse_ctl_detach(self->ctl, d.index);
			ASSERT_EQ(0, start_device(&fw, appliance));
			ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
		}
		st = guest_run(self->out, OUT_MAX,
			 "wsetrain %s --mode %s --devices %u --resume /tmp/part.ckpt --checkpoint /tmp/part.ckpt",
			 common, modes[i], d.index);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/part.ckpt", crc_resumed));
		EXPECT_STREQ(crc_full[0], crc_resumed[0]);
		EXPECT_STREQ(crc_full[1], crc_resumed[1]);
		TH_LOG("%s: killed at step %d; weights %s/%s, optimizer %s/%s", modes[i], step,
		       crc_full[0], crc_resumed[0], crc_full[1], crc_resumed[1]);
		wse_ctl_detach(self->ctl, d.index);
		guest_peer_stop(&fw, SIGKILL);
	}
}

/* A model whose input is not a 28x28 image. */
static const char wide_model[] =
	"model wide\ninput 100 u8\ndense 100 10 none\nloss softmax_xent\n"
	"optimizer sgd lr=0.1\nbatch 32\nseed 1\n";

/* Bad input: clear errors, exit 1 (2 for usage), the checkpoint untouched. */
TEST_F_TIMEOUT(wsetrain, bad_input, 600)
{
	static const uint8_t junk[64] = "this is not an IDX file";
	char before[2][16], after[2][16];
	struct wse_dev_status d;
	struct guest_peer fw;
	int st;

	ASSERT_EQ(0, write_file("/tmp/small.model", small_model, sizeof(small_model) - 1));
	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", "--log-level", "warn", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
	self->dev[0] = d;
	self->attached = 1;
	snprintf(self->devices, sizeof(self->devices), "--devices %u", d.index);

	/* A good checkpoint first. */
	unlink("/tmp/keep.ckpt");
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model %s --train-limit 640 --no-eval -q --checkpoint /tmp/keep.ckpt",
		 self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/keep.ckpt", before));

	/* No dataset there. */
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model %s --data /tmp/no-such-dir --checkpoint /tmp/keep.ckpt",
		 self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "/tmp/no-such-dir")) TH_LOG("%s", self->out);

	/* Corrupt dataset files. */
	mkdir("/tmp/junkdata", 0755);
	ASSERT_EQ(0, write_file("/tmp/junkdata/train-images-idx3-ubyte", junk, sizeof(junk)));
	ASSERT_EQ(0, write_file("/tmp/junkdata/train-labels-idx1-ubyte", junk, sizeof(junk)));
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model %s --data /tmp/junkdata --no-eval --checkpoint /tmp/keep.ckpt",
		 self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "train-images-idx3-ubyte")) TH_LOG("%s", self->out);

	/* Images of the wrong size for the model. */
	ASSERT_EQ(0, write_file("/tmp/wide.model", wide_model, sizeof(wide_model) - 1));
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/wide.model %s --no-eval", self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "the data's samples are 28x28, the program's input is 100"))
		TH_LOG("%s", self->out);

	/* CIFAR-10 batches, read from their directory, and of the wrong shape for the model. */
	{
		static uint8_t rec[2 * 3073];

		mkdir("/tmp/cifar", 0755);
		rec[0] = 1;
		rec[3073] = 9;
		ASSERT_EQ(0, write_file("/tmp/cifar/data_batch_1.bin", rec, sizeof(rec)));
		st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model %s --data /tmp/cifar --no-eval",
			       self->devices);
		EXPECT_EQ(1, st);
		EXPECT_NE(NULL, strstr(self->out, "the data's samples are 3x32x32, the program's input is 784"))
			TH_LOG("%s", self->out);
	}

	/* A corrupt checkpoint to resume from. */
	ASSERT_EQ(0, write_file("/tmp/junk.ckpt", junk, sizeof(junk)));
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model %s --resume /tmp/junk.ckpt", self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "/tmp/junk.ckpt")) TH_LOG("%s", self->out);

	/* A checkpoint made consistent (both CRCs) but without the optimizer
	 * state this Adam model keeps: refused, not read past its end.
	 */
	{
		size_t n = 0;
		uint8_t *ck = guest_read_file("/tmp/keep.ckpt", &n);
		uint64_t floats;
		uint32_t zero = 0, crc, names;

		ASSERT_NE(NULL, ck);
		ASSERT_LT(160, n);
		memcpy(&floats, ck + 88, 8);
		memcpy(&names, ck + 128, 4);			/* version 2: the parameters' names */
		ASSERT_EQ(4, names);				/* two layers' W and b */
		/* Adam: two state arrays; then the names. */
		ASSERT_EQ(160 + 3 * floats * 4 + names * WSEP_PARAM_NAME_RECORD, n);
		memcpy(ck + 96, &zero, 4);			/* state_arrays */
		crc = wse_crc32c(0, ck + 160, floats * 4);
		memcpy(ck + 104, &crc, 4);			/* payload_crc */
		crc = wse_crc32c(0, ck, 156);
		memcpy(ck + 156, &crc, 4);			/* header_crc */
		memmove(ck + 160 + floats * 4, ck + 160 + 3 * floats * 4,
			names * WSEP_PARAM_NAME_RECORD);	/* the names follow the weights */
		ASSERT_EQ(0, write_file("/tmp/nostate.ckpt", ck,
					160 + floats * 4 + names * WSEP_PARAM_NAME_RECORD));
		free(ck);
	}
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model %s --resume /tmp/nostate.ckpt", self->devices);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "optimizer")) TH_LOG("%s", self->out);

	/* No such device; then no device with a link at all. */
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model --devices 97 --no-eval");
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "device 97")) TH_LOG("%s", self->out);
	wse_ctl_detach(self->ctl, d.index);
	self->attached = 0;
	guest_peer_stop(&fw, SIGKILL);
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model --systems 4 --no-eval");
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "wsectl attach")) TH_LOG("%s", self->out);

	/* Usage errors. */
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsetrain"));
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --epochs 0"));
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --systems 2 --mode pipelined"));

	/* Through all of it the checkpoint stayed as it was. */
	ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/keep.ckpt", after));
	EXPECT_STREQ(before[0], after[0]);
	EXPECT_STREQ(before[1], after[1]);
}

static int printed_accuracy(const char *out, char *acc, size_t len);

/* An MLP over CIFAR-10's 3x32x32 samples, flat. */
static const char cifar_model[] =
	"model cifar\ninput 3072 u8\ndense 3072 16 relu\ndense 16 10 none\n"
	"loss softmax_xent\noptimizer adam lr=1e-2\nbatch 32\nseed 5\n";

/*
 * A CIFAR-10 batch of @n records at @path: label i % 10, and an image of
 * dim noise with a bright stripe whose place (across the three planes)
 * tells the class.
 */
static int write_cifar10(const char *path, uint32_t n, uint32_t seed)
{
	uint8_t *buf = malloc((size_t)n * 3073);
	int ret;

	if (!buf)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *r = buf + (size_t)i * 3073;

		r[0] = (uint8_t)(i % 10);
		for (uint32_t j = 0; j < 3072; j++) {
			seed = seed * 1103515245U + 12345U;
			r[1 + j] = j / 307 == r[0] ? (uint8_t)(200 + (seed >> 28)) : (uint8_t)(seed >> 27);
		}
	}
	ret = write_file(path, buf, (size_t)n * 3073);
	free(buf);
	return ret;
}

/* A directory of generated CIFAR-10 batches trains and evaluates through the driver. */
TEST_F_TIMEOUT(wsetrain, cifar10_batches_train, 600)
{
	char acc[32];
	int st;

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	mkdir("/tmp/cifar-gen", 0755);
	ASSERT_EQ(0, write_cifar10("/tmp/cifar-gen/data_batch_1.bin", 320, 1));
	ASSERT_EQ(0, write_cifar10("/tmp/cifar-gen/data_batch_2.bin", 320, 2));
	ASSERT_EQ(0, write_cifar10("/tmp/cifar-gen/test_batch.bin", 160, 3));
	ASSERT_EQ(0, write_file("/tmp/cifar.model", cifar_model, sizeof(cifar_model) - 1));
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/cifar.model --execution-mode pipelined %s --data /tmp/cifar-gen --epochs 3 --checkpoint /tmp/cifar.ckpt",
		       self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, printed_accuracy(self->out, acc, sizeof(acc))) TH_LOG("%s", self->out);
	/* Ten classes told apart by where the stripe is: far above chance (0.1). */
	EXPECT_LT(0.8, atof(acc)) TH_LOG("%s", self->out);
	TH_LOG("640 generated 3x32x32 samples, 3 epochs: test accuracy %s", acc);

	/* --predict takes a batch file; its classes are the test set's labels. */
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/cifar.model %s --predict /tmp/cifar.ckpt --data /tmp/cifar-gen/test_batch.bin -o /tmp/cifar-pred.csv",
		       self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	{
		FILE *f = fopen("/tmp/cifar-pred.csv", "r");
		unsigned int sample, class, rows = 0, right = 0;
		char line[128];

		ASSERT_NE(NULL, f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%u,%u", &sample, &class) == 2) {
				rows++;
				right += class == sample % 10;
			}
		fclose(f);
		EXPECT_EQ(160, rows);
		EXPECT_LT(128, right) TH_LOG("%u of %u predictions right", right, rows);
	}
}

/* The value after the last "| Eval ... Accuracy=" of a run's output, as printed. */
static int printed_accuracy(const char *out, char *acc, size_t len)
{
	const char *p = NULL, *q = out;

	while ((q = strstr(q, "| Eval ")))
		p = q++;
	if (!p || !(p = strstr(p, "Accuracy=")))
		return -1;
	snprintf(acc, len, "%.*s", (int)strcspn(p + 9, ","), p + 9);
	return 0;
}

/* The accuracy "wsetrain --mode eval" printed ("eval: ... accuracy X (...)"). */
static int eval_accuracy(const char *out, char *acc, size_t len)
{
	const char *p = strstr(out, "eval: ");

	if (!p || !(p = strstr(p, "accuracy ")))
		return -1;
	snprintf(acc, len, "%.*s", (int)strcspn(p + 9, " "), p + 9);
	return 0;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The newest checkpoint_<step>.ckpt in @dir: its step, or -1. */
static int newest_step(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int best = -1, step;

	while (d && (e = readdir(d)))
		if (sscanf(e->d_name, "checkpoint_%d.ckpt", &step) == 1 && step > best)
			best = step;
	if (d)
		closedir(d);
	return best;
}

/*
 * ModelZoo's flags: --mode train_and_eval with --execution-mode, a
 * --model_dir of checkpoint_<step> files pruned to --keep, --lr recorded
 * in the checkpoint, Rate= and GlobalRate=; then --mode eval --init-from
 * and --eval (in the other execution mode, the model found in the run
 * directory) print the accuracy the run printed, and --predict's classes
 * score the same against the labels.
 */
TEST_F_TIMEOUT(wsetrain, modelzoo_train_eval_predict, 600)
{
	char acc[32], again[32], line[256];
	struct wse_dataset test;
	uint32_t right = 0, n = 0;
	unsigned int dev;
	int st, idx, cls;
	FILE *f;

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	dev = self->dev[0].index;
	ASSERT_EQ(0, system("rm -rf /tmp/mz"));
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain models/fc-mnist --mode train_and_eval --execution-mode pipelined --devices %u --train-limit 6400 --epochs 2 --test-limit 2000 --report 10 --model_dir /tmp/mz --checkpoint-every 10 --keep 2 --lr 0.002 --progress lines",
		 dev);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "Rate=")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "GlobalRate=")) TH_LOG("%s", self->out);
	ASSERT_EQ(0, printed_accuracy(self->out, acc, sizeof(acc))) TH_LOG("%s", self->out);
	/* 50 steps an epoch: the last two of every tenth step kept. */
	EXPECT_EQ(100, newest_step("/tmp/mz"));
	EXPECT_TRUE(exists("/tmp/mz/checkpoint_90.ckpt"));
	EXPECT_FALSE(exists("/tmp/mz/checkpoint_80.ckpt"));
	EXPECT_TRUE(exists("/tmp/mz/run.json") && exists("/tmp/mz/metrics.csv") &&
		    exists("/tmp/mz/wafer.svg"));
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsetrain --inspect /tmp/mz/checkpoint_100.ckpt"));
	EXPECT_NE(NULL, strstr(self->out, "batch 128, lr 0.002")) TH_LOG("%s", self->out);

	/* The same accuracy from the checkpoint, pipelined... */
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain models/fc-mnist --mode eval --init-from /tmp/mz/checkpoint_100.ckpt --test-limit 2000 --devices %u",
		 dev);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, eval_accuracy(self->out, again, sizeof(again))) TH_LOG("%s", self->out);
	EXPECT_STREQ(acc, again);
	/* ...and by weight streaming on the appliance, the model taken from the run directory. */
	if (attach_appliance(self, 1))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 2)");
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain --eval /tmp/mz/checkpoint_100.ckpt --execution-mode weight_streaming --test-limit 2000 %s",
		 self->devices);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, eval_accuracy(self->out, again, sizeof(again))) TH_LOG("%s", self->out);
	EXPECT_STREQ(acc, again);
	TH_LOG("the run printed accuracy %s; --eval in both modes: %s", acc, again);

	/* Predictions: a class for each of the 10000 images, as right as the evaluation. */
	unlink("/tmp/p.csv");
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain --predict /tmp/mz/checkpoint_100.ckpt --data " FMNIST "/t10k-images-idx3-ubyte.gz -o /tmp/p.csv --devices %u",
		 dev);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, wse_dataset_load_dir(FMNIST, "t10k", &test, NULL, 0));
	f = fopen("/tmp/p.csv", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_STREQ("sample,class\n", line);
	while (fscanf(f, "%d,%d\n", &idx, &cls) == 2) {
		ASSERT_EQ((int)n, idx);
		ASSERT_TRUE(cls >= 0 && cls < 10);
		if (n < 2000)
			right += (uint32_t)cls == test.labels[n];
		n++;
	}
	fclose(f);
	wse_dataset_free(&test);
	EXPECT_EQ(10000, n);
	snprintf(again, sizeof(again), "%.4f", right / 2000.0);
	EXPECT_STREQ(acc, again);
}

/*
 * The older and the ModelZoo spellings; --devices alone naming the
 * systems; --init-from with another batch (a fresh optimizer at step 0);
 * --resume at another learning rate.
 */
TEST_F_TIMEOUT(wsetrain, spellings_init_from_resume_lr, 600)
{
	char batch64[4096], *p;
	size_t len = 0;
	unsigned int a, b;
	int st;

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	if (attach_appliance(self, 1))
		SKIP(return, "needs an appliance of 2 systems on the host (tools/wsevm --appliance 2)");
	a = self->dev[0].index;
	b = self->dev[1].index;	/* the appliance */
	st = guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --mode pipelined --devices %u --max_steps 2 --no-eval",
		 a);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "note: --mode pipelined is the execution mode")) {
		TH_LOG("%s", self->out);
	}
	/* An appliance: --num_csx of its systems, or, named alone, all of them. */
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain models/fc-mnist --num_csx 1 --devices %u --max_steps 2 --mode train --execution-mode weight_streaming",
		       b);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "on 1 system ")) TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain models/fc-mnist --devices %u --max_steps 2 --mode train --execution-mode weight_streaming",
		       b);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "on 2 systems")) TH_LOG("%s", self->out);
	unlink("/tmp/c.wsep");
	EXPECT_EQ(0, guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --compile_only -o /tmp/c.wsep"));
	EXPECT_TRUE(exists("/tmp/c.wsep"));
	EXPECT_EQ(0, guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --validate_only"));
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --mode bogus"));
	EXPECT_NE(NULL, strstr(self->out, "train, eval or train_and_eval")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --systems 3 --execution-mode pipelined"));

	/* A checkpoint to start from. */
	ASSERT_EQ(0, system("rm -rf /tmp/lr"));
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain models/fc-mnist --execution-mode pipelined --devices %u --train-limit 2560 --epochs 2 --mode train --model_dir /tmp/lr --checkpoint-every 10 --lr 0.002 -q",
		 a);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);

	/* The weights alone into a model with batches of 64. */
	p = guest_read_file("models/fc-mnist", &len);
	ASSERT_NE(NULL, p);
	ASSERT_LT(len, sizeof(batch64) - 1);
	memcpy(batch64, p, len);
	batch64[len] = 0;
	free(p);
	p = strstr(batch64, "\nbatch 128");
	ASSERT_NE(NULL, p);
	p++;
	memcpy(p, "batch  64", 9);
	ASSERT_EQ(0, write_file("/tmp/b64.model", batch64, len));
	unlink("/tmp/b64.ckpt");
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain /tmp/b64.model --init-from /tmp/lr/checkpoint_40.ckpt --devices %u --max_steps 3 --mode train --checkpoint /tmp/b64.ckpt",
		 a);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_EQ(3, checkpoint_step(self->out, OUT_MAX, "/tmp/b64.ckpt"));
	EXPECT_NE(NULL, strstr(self->out, "batch 64, lr 0.001")) TH_LOG("%s", self->out);
	/* A resume may change the batch too: said. */
	st = guest_run(self->out, OUT_MAX, "wsetrain /tmp/b64.model --resume /tmp/lr/checkpoint_40.ckpt --devices %u --train-limit 2560 --epochs 3 --max_steps 50 --mode train",
		 a);
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "trained with batches of 128; continuing with 64")) {
		TH_LOG("%s", self->out);
	}

	/* Resumed at half the learning rate: said, and recorded. */
	unlink("/tmp/r.ckpt");
	st = guest_run(self->out, OUT_MAX,
		 "wsetrain models/fc-mnist --resume /tmp/lr/checkpoint_30.ckpt --train-limit 2560 --epochs 2 --lr 0.001 --mode train --checkpoint /tmp/r.ckpt --devices %u",
		 a);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "trained at learning rate 0.002; continuing at 0.001")) {
		TH_LOG("%s", self->out);
	}
	EXPECT_EQ(40, checkpoint_step(self->out, OUT_MAX, "/tmp/r.ckpt"));
	/* Another model's layers are refused, resume or weights alone. */
	ASSERT_EQ(0, write_file("/tmp/small.model", small_model, sizeof(small_model) - 1));
	EXPECT_EQ(1, guest_run(self->out, OUT_MAX, "wsetrain /tmp/small.model --init-from /tmp/r.ckpt --devices %u --max_steps 2",
			 a));
	EXPECT_NE(NULL, strstr(self->out, "whose layers are not")) TH_LOG("%s", self->out);
}

/*
 * Ctrl-C during training: exit 130 after a checkpoint at a chunk's end;
 * the same command again continues from it (the newest in --model_dir)
 * and ends with the weights of a run that was never interrupted.
 */
TEST_F_TIMEOUT(wsetrain, ctrl_c_leaves_resumable_checkpoint, 600)
{
	char crc_full[2][16], crc_resumed[2][16], common[512];
	int st, step = -1;
	int64_t until;
	pid_t pid;

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	snprintf(common, sizeof(common),
		 "wsetrain models/fc-mnist --execution-mode pipelined --devices %u --train-limit 6400 --epochs 3 --mode train --chunk 5 --checkpoint-every 5 -q",
		 self->dev[0].index);
	ASSERT_EQ(0, system("rm -rf /tmp/full /tmp/part"));
	st = guest_run(self->out, OUT_MAX, "%s --model_dir /tmp/full", common);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/full/checkpoint_150.ckpt", crc_full));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "exec %s --model_dir /tmp/part >/tmp/part.out 2>&1", common);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	until = guest_now_ms() + 120000;
	while (guest_now_ms() < until && newest_step("/tmp/part") < 10)
		usleep(10000);
	kill(pid, SIGINT);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	guest_run(self->out, OUT_MAX, "cat /tmp/part.out");
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("%s", self->out);
	ASSERT_EQ(130, WEXITSTATUS(st)) TH_LOG("%s", self->out);
	step = newest_step("/tmp/part");
	EXPECT_TRUE(step >= 10 && step < 150 && step % 5 == 0) TH_LOG("checkpoint at step %d", step);
	EXPECT_NE(NULL, strstr(self->out, "--resume /tmp/part/checkpoint_")) TH_LOG("%s", self->out);

	st = guest_run(self->out, OUT_MAX, "%s --model_dir /tmp/part", common);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/part/checkpoint_150.ckpt", crc_resumed));
	EXPECT_STREQ(crc_full[0], crc_resumed[0]);
	EXPECT_STREQ(crc_full[1], crc_resumed[1]);
	TH_LOG("interrupted at step %d; weights %s/%s, optimizer %s/%s", step, crc_full[0],
	       crc_resumed[0], crc_full[1], crc_resumed[1]);
}

/*
 * Run directories in --runs (the host's, through wsevm --runs, when make
 * check shares one: tests/host/rundir_test looks at them there), one for
 * each execution mode, with everything a run leaves.
 */
TEST_F_TIMEOUT(wsetrain, run_directories, 600)
{
	static const char *const files[] = { "run.json", "metrics.csv", "wafer.svg",
					      "compile-report.txt" };
	static const char *const runs[] = {
		"--execution-mode pipelined --train-limit 12800 --epochs 3 --test-limit 2000 --report 20 --checkpoint-every 50",
		"--execution-mode weight_streaming --train-limit 1280 --epochs 2 --test-limit 1000 --report 2",
	};
	const char *where = runs_share[0] ? runs_share : "/tmp/runs";

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	/* Weight streaming runs on the appliance. */
	if (attach_appliance(self, 1))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 2)");
	for (int i = 0; i < 2; i++) {
		char dir[512], path[600], *p;
		int st = guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --runs %s --devices %u %s",
			     where, self->dev[i].index, runs[i]);

		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		/* The host's share is the simulators' --store: they write the checkpoints. */
		if (i == 0 && runs_share[0])
			EXPECT_NE(NULL, strstr(self->out, "saved into the shared storage by the device")) {
				TH_LOG("%s", self->out);
			}
		p = strstr(self->out, "run directory: ");
		ASSERT_NE(NULL, p) TH_LOG("%s", self->out);
		snprintf(dir, sizeof(dir), "%.*s", (int)strcspn(p + 15, "\n"), p + 15);
		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[k]);
			EXPECT_TRUE(exists(path)) TH_LOG("%s is missing", path);
		}
		EXPECT_LT(0, newest_step(dir));
		snprintf(path, sizeof(path), "ls %s/events.out.tfevents.* >/dev/null", dir);
		EXPECT_EQ(0, system(path));
		/* A checkpoint from the middle of the run reads back whole (its CRCs hold). */
		if (i == 0) {
			snprintf(path, sizeof(path), "%s/checkpoint_250.ckpt", dir);
			EXPECT_EQ(250, checkpoint_step(self->out, OUT_MAX, path));
		}
		TH_LOG("%s", dir);
	}
}

/*
 * A run directory names the program it trained (path, size, CRC32C in
 * run.json) instead of holding a copy: a big program on a slow share took
 * longer to copy than to train. --resume with no model takes the one
 * named, and refuses it, saying why, once it has changed or is gone.
 */
TEST_F_TIMEOUT(wsetrain, run_directory_names_its_program, 600)
{
	char want[64], *json, *prog;
	size_t len = 0, jlen = 0;
	unsigned int dev;
	int st;

	if (attach_host(_metadata, self, 1))
		SKIP(return, "needs a firmware on the host (tools/wsevm --fw 1 --fw-no-attach)");
	dev = self->dev[0].index;
	ASSERT_EQ(0, system("rm -rf /tmp/rdm /tmp/rd.wsep"));
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX,
			       "wsetrain models/fc-mnist --execution-mode pipelined --compile_only -o /tmp/rd.wsep"))
		TH_LOG("%s", self->out);
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain /tmp/rd.wsep --devices %u --train-limit 1280 --epochs 1 --mode train --model_dir /tmp/rdm --checkpoint-every 5 -q",
		       dev);
	ASSERT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_FALSE(exists("/tmp/rdm/rd.wsep"));
	prog = guest_read_file("/tmp/rd.wsep", &len);
	json = guest_read_file("/tmp/rdm/run.json", &jlen);
	ASSERT_NE(NULL, prog);
	ASSERT_NE(NULL, json);
	EXPECT_NE(NULL, strstr(json, "\"model_file\":\"/tmp/rd.wsep\"")) TH_LOG("%s", json);
	snprintf(want, sizeof(want), "\"model_size\":%zu", len);
	EXPECT_NE(NULL, strstr(json, want)) TH_LOG("%s in %s", want, json);
	snprintf(want, sizeof(want), "\"model_crc32c\":\"%08x\"", wse_crc32c(0, prog, len));
	EXPECT_NE(NULL, strstr(json, want)) TH_LOG("%s in %s", want, json);
	free(json);

	/* Resumed with no model named: the program run.json names. */
	st = guest_run(self->out, OUT_MAX,
		       "wsetrain --resume /tmp/rdm/checkpoint_5.ckpt --devices %u --train-limit 1280 --epochs 1 --mode train --checkpoint /tmp/rd.ckpt -q",
		       dev);
	EXPECT_EQ(0, st) TH_LOG("%s", self->out);
	EXPECT_EQ(10, checkpoint_step(self->out, OUT_MAX, "/tmp/rd.ckpt"));

	/* One byte changed, the size the same: the CRC says so. */
	prog[len - 1] ^= 1;
	ASSERT_EQ(0, write_file("/tmp/rd.wsep", prog, len));
	st = guest_run(self->out, OUT_MAX, "wsetrain --resume /tmp/rdm/checkpoint_5.ckpt --devices %u -q",
		       dev);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "/tmp/rd.wsep has changed since the run in /tmp/rdm/run.json trained it"))
		TH_LOG("%s", self->out);
	/* Another size. */
	ASSERT_EQ(0, write_file("/tmp/rd.wsep", prog, len - 1));
	st = guest_run(self->out, OUT_MAX, "wsetrain --resume /tmp/rdm/checkpoint_5.ckpt --devices %u -q",
		       dev);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "is not the model the run in /tmp/rdm/run.json trained"))
		TH_LOG("%s", self->out);
	/* Gone. */
	unlink("/tmp/rd.wsep");
	st = guest_run(self->out, OUT_MAX, "wsetrain --resume /tmp/rdm/checkpoint_5.ckpt --devices %u -q",
		       dev);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "names the model /tmp/rd.wsep, which is gone"))
		TH_LOG("%s", self->out);
	free(prog);
}

/*
 * A wafer too small for the model (even one sample's activations do not
 * fit it, in any micro-batch): the refusal gives its size in units.
 */
TEST_F(wsetrain, compiler_refusal_names_the_wafer_in_units)
{
	struct guest_peer fw;
	struct wse_dev_status d;
	int st;

	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "2x2", "--sram-per-pe", "4K",
				      "--clock-mhz", "850", "--log-level", "warn", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
	st = guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --devices %u --no-eval",
		       d.index);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "(2x2 PEs, 4 KiB SRAM per PE, 850 MHz; exit 1)"))
		TH_LOG("%s", self->out);
	wse_ctl_detach(self->ctl, d.index);
	guest_peer_stop(&fw, SIGKILL);
}

TEST_HARNESS_MAIN
