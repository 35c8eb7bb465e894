// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain end to end in the guest, through the driver, on Fashion-MNIST:
 * a short run whose loss falls and whose accuracy beats chance by far;
 * weight streaming on 1, 2 and 4 systems giving the same losses; resume
 * after the firmware is killed reaching the weights of an uninterrupted
 * run; and bad input (dataset, model, devices) refused with a message
 * that names it, leaving the last checkpoint as it was.
 *
 * Firmware: the simulators wsevm started on the host (/wse/fw-addrs, one
 * address per line, run at native speed) where there are enough, and
 * simulators inside the guest where one must be killed.
 */
#include <math.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
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

FIXTURE_SETUP(wsetrain)
{
	struct stat st;

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

/* Weight streaming data-parallel: the same losses on 1, 2 and 4 systems. */
TEST_F_TIMEOUT(wsetrain, systems_1_2_4_agree, 900)
{
	static const int systems[] = { 1, 2, 4 };
	double loss[3][16];
	int n[3], st;
	char csv[64], devs[64];

	if (attach_host(_metadata, self, 4))
		SKIP(return, "needs 4 firmwares on the host (tools/wsevm --fw 4 --fw-no-attach)");
	for (int i = 0; i < 3; i++) {
		/* The first N of the attached devices. */
		snprintf(devs, sizeof(devs), "%s", self->devices);
		for (int c = 0, k = 0; devs[k]; k++)
			if (devs[k] == ',' && ++c == systems[i])
				devs[k] = 0;
		snprintf(csv, sizeof(csv), "/tmp/sys%d.csv", systems[i]);
		unlink(csv);
		st = guest_run(self->out, OUT_MAX,
			 "wsetrain models/fc-mnist --mode weight_streaming --systems %d %s --train-limit 2560 --steps 12 --report 3 --no-eval --csv %s",
			 systems[i], devs, csv);
		ASSERT_EQ(0, st) TH_LOG("%d systems: %s", systems[i], self->out);
		n[i] = csv_losses(csv, loss[i], 16);
		ASSERT_EQ(4, n[i]);
	}
	for (int i = 1; i < 3; i++) {
		for (int k = 0; k < 4; k++) {
			EXPECT_GT(1e-4 * loss[0][k], fabs(loss[i][k] - loss[0][k])) {
				TH_LOG("report %d: %.6f on 1 system, %.6f on %d", k, loss[0][k],
				       loss[i][k], systems[i]);
			}
		}
	}
	/* And it learns. */
	EXPECT_LT(loss[2][3], loss[2][0]);
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

/*
 * The firmware is SIGKILLed after a checkpoint: wsetrain fails with the
 * device named, the checkpoint is intact, and a resumed run on a new
 * firmware ends with the weights of a run that was never interrupted.
 */
TEST_F_TIMEOUT(wsetrain, resume_after_firmware_killed, 900)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	const char *common = "/tmp/small.model --train-limit 1280 --epochs 2 --no-eval -q";

	ASSERT_EQ(0, write_file("/tmp/small.model", small_model, sizeof(small_model) - 1));
	for (int i = 0; i < 2; i++) {
		char crc_full[2][16], crc_resumed[2][16];
		struct guest_peer fw;
		struct wse_dev_status d;
		pid_t pid;
		int st, step = -1;
		int64_t until;

		/* Uninterrupted. */
		ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", "--log-level", "warn", NULL));
		ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
		unlink("/tmp/full.ckpt");
		st = guest_run(self->out, OUT_MAX, "wsetrain %s --mode %s --devices %u --checkpoint /tmp/full.ckpt",
			 common, modes[i], d.index);
		ASSERT_EQ(0, st) TH_LOG("%s", self->out);
		ASSERT_EQ(0, checkpoint_crc(self->out, OUT_MAX, "/tmp/full.ckpt", crc_full));
		wse_ctl_detach(self->ctl, d.index);
		guest_peer_stop(&fw, SIGKILL);

		/* Interrupted: the firmware dies once a checkpoint exists. */
		ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", "--log-level", "warn", NULL));
		ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
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
		guest_peer_stop(&fw, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_LE(5, step);
		guest_run(self->out, OUT_MAX, "cat /tmp/part.out");
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "device")) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "--resume /tmp/part.ckpt")) TH_LOG("%s", self->out);
		/* Intact, and at one of its checkpoints. */
		step = checkpoint_step(self->out, OUT_MAX, "/tmp/part.ckpt");
		EXPECT_EQ(0, step % 5) TH_LOG("checkpoint at step %d", step);
		wse_ctl_detach(self->ctl, d.index);

		/* Resumed on a new firmware. */
		ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", "--log-level", "warn", NULL));
		ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
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
	EXPECT_NE(NULL, strstr(self->out, "28x28")) TH_LOG("%s", self->out);

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
		uint32_t zero = 0, crc;

		ASSERT_NE(NULL, ck);
		ASSERT_LT(160, n);
		memcpy(&floats, ck + 88, 8);
		ASSERT_EQ(160 + 3 * floats * 4, n);		/* Adam: two state arrays */
		memcpy(ck + 96, &zero, 4);			/* state_arrays */
		crc = wse_crc32c(0, ck + 160, floats * 4);
		memcpy(ck + 104, &crc, 4);			/* payload_crc */
		crc = wse_crc32c(0, ck, 156);
		memcpy(ck + 156, &crc, 4);			/* header_crc */
		ASSERT_EQ(0, write_file("/tmp/nostate.ckpt", ck, 160 + floats * 4));
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

/* A wafer too small for the model: the refusal gives its size in units. */
TEST_F(wsetrain, compiler_refusal_names_the_wafer_in_units)
{
	struct guest_peer fw;
	struct wse_dev_status d;
	int st;

	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "4x4", "--clock-mhz", "850",
				      "--log-level", "warn", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, fw.addr, 0, &d));
	st = guest_run(self->out, OUT_MAX, "wsetrain models/fc-mnist --devices %u --no-eval",
		       d.index);
	EXPECT_EQ(1, st);
	EXPECT_NE(NULL, strstr(self->out, "(4x4 PEs, 48 KiB SRAM per PE, 850 MHz; exit 1)"))
		TH_LOG("%s", self->out);
	wse_ctl_detach(self->ctl, d.index);
	guest_peer_stop(&fw, SIGKILL);
}

TEST_HARNESS_MAIN
