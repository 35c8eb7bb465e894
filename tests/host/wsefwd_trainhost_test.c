// SPDX-License-Identifier: GPL-2.0-only
/*
 * fc-mnist (models/fc-mnist, compiled by wsecc) trained by wse-trainhost in
 * both execution modes on a real appliance of one system (wse-appliance and
 * its wsefwd): the pipelined program runs on the system as it is, the
 * weight-streaming one is the coordinator's, MemoryX's and the system's.
 * The loss must fall, and the two modes must print the same losses: the
 * system cuts a pipelined batch into the 8 micro-batches a weight-streaming
 * RUN's leaves are, and both sum their gradients in the same tree.
 * Run from the repository root; the appliance is build/bin/wse-appliance
 * (or the sanitizer build for the -san test), the tools build/bin/.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fwd_daemon.h"
#include "kselftest_harness.h"

static const char *self_path;

/* The loss lines only ("step N  loss L  accuracy A"), without the cycles. */
static void losses_of(const char *out, char *dst, size_t cap)
{
	size_t n = 0;

	for (const char *l = strstr(out, "step "); l && n + 64 < cap; l = strstr(l + 1, "\nstep ")) {
		const char *c = strstr(l, "  cycles");

		if (*l == '\n')
			l++;
		if (!c)
			break;
		n += (size_t)snprintf(dst + n, cap - n, "%.*s\n", (int)(c - l), l);
	}
	dst[n] = '\0';
}

TEST(fc_mnist_trains_in_both_modes)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	char dir[] = "/tmp/wse_trainhost.XXXXXX", cmd[1024], out[2][8192], loss[2][4096];
	pid_t pid;

	ASSERT_NE(NULL, mkdtemp(dir));
	pid = fork();
	if (pid == 0) {
		char spec[128], log[128], run_dir[128];

		snprintf(spec, sizeof(spec), "unix:%s/appliance.sock", dir);
		snprintf(log, sizeof(log), "%s/appliance.log", dir);
		snprintf(run_dir, sizeof(run_dir), "%s/run", dir);
		if (!freopen(log, "w", stderr))
			_exit(127);
		execl(appliance_binary(self_path), appliance_binary(self_path), "--systems", "1",
		      "--listen", spec, "--run-dir", run_dir, "--fw-arg=--wafer=64x64",
		      "--fw-arg=--micro-batches=8", NULL);
		_exit(127);
	}
	for (int m = 0; m < 2; m++) {
		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc models/fc-mnist --wafer 64x64 --mode %s --compile-only -q -o %s/%s.wsep 2>&1",
			 modes[m], dir, modes[m]);
		ASSERT_EQ(0, run_cmd(cmd, out[m], sizeof(out[m]))) TH_LOG("%s", out[m]);
		/* One host at a time: retry while it starts or the last one leaves. */
		snprintf(cmd, sizeof(cmd),
			 "for i in 1 2 3 4 5 6 7 8 9 10; do build/bin/wse-trainhost --connect unix:%s/appliance.sock --program %s/%s.wsep --steps 200 --report 50 --expect-falling 2>&1 && exit 0; sleep 0.3; done; exit 1",
			 dir, dir, modes[m]);
		EXPECT_EQ(0, run_cmd(cmd, out[m], sizeof(out[m]))) TH_LOG("%s", out[m]);
		TH_LOG("%s:\n%s", modes[m], out[m]);
		EXPECT_NE(NULL, strstr(out[m], "device: 200 steps, 25600 samples"));
		losses_of(out[m], loss[m], sizeof(loss[m]));
	}
	EXPECT_NE(0U, strlen(loss[0]));
	EXPECT_STREQ(loss[0], loss[1]);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		/* A leftover temp dir is not worth failing for. */
	}
}

/*
 * A layer program's learning-rate schedule is the firmware's to follow, as
 * a graph program's and MemoryX's are: fc-mnist with a long warm-up (the
 * rate near 0 for the first steps) learns less in 30 steps than at its
 * constant rate, and the two print different losses after the first step.
 */
TEST(pipelined_follows_the_schedule)
{
	static const char *const sched[] = { "", "--warmup 1000 --steps 2000" };
	char dir[] = "/tmp/wse_trainhost.XXXXXX", cmd[1024], out[2][8192], loss[2][4096];
	double last[2];
	pid_t pid;

	ASSERT_NE(NULL, mkdtemp(dir));
	pid = fork();
	if (pid == 0) {
		char spec[128], log[128], run_dir[128];

		snprintf(spec, sizeof(spec), "unix:%s/appliance.sock", dir);
		snprintf(log, sizeof(log), "%s/appliance.log", dir);
		snprintf(run_dir, sizeof(run_dir), "%s/run", dir);
		if (!freopen(log, "w", stderr))
			_exit(127);
		execl(appliance_binary(self_path), appliance_binary(self_path), "--systems", "1",
		      "--listen", spec, "--run-dir", run_dir, "--fw-arg=--wafer=64x64", NULL);
		_exit(127);
	}
	for (int m = 0; m < 2; m++) {
		const char *l;

		snprintf(cmd, sizeof(cmd),
			 "build/bin/wsecc models/fc-mnist --wafer 64x64 --execution-mode pipelined %s --compile-only -q -o %s/p%d.wsep 2>&1",
			 sched[m], dir, m);
		ASSERT_EQ(0, run_cmd(cmd, out[m], sizeof(out[m]))) TH_LOG("%s", out[m]);
		snprintf(cmd, sizeof(cmd),
			 "for i in 1 2 3 4 5 6 7 8 9 10; do build/bin/wse-trainhost --connect unix:%s/appliance.sock --program %s/p%d.wsep --steps 30 --report 10 2>&1 && exit 0; sleep 0.3; done; exit 1",
			 dir, dir, m);
		EXPECT_EQ(0, run_cmd(cmd, out[m], sizeof(out[m]))) TH_LOG("%s", out[m]);
		losses_of(out[m], loss[m], sizeof(loss[m]));
		/* The last line's loss: step 30's. */
		l = NULL;
		for (const char *p = strstr(loss[m], "loss "); p; p = strstr(p + 1, "loss "))
			l = p;
		ASSERT_NE(NULL, l) TH_LOG("%s", out[m]);
		last[m] = atof(l + 5);
	}
	TH_LOG("constant rate:\n%swarm-up:\n%s", loss[0], loss[1]);
	EXPECT_STRNE(loss[0], loss[1]);
	EXPECT_LT(last[0], last[1]);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		/* A leftover temp dir is not worth failing for. */
	}
}

TEST(trainhost_usage)
{
	char out[4096];

	EXPECT_EQ(0, run_cmd("build/bin/wse-trainhost --help", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--program FILE"));
	EXPECT_EQ(2, run_cmd("build/bin/wse-trainhost --steps 0 --connect unix:/x --program y 2>&1",
			 out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--steps '0'")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd("build/bin/wse-trainhost 2>&1", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "required")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd("build/bin/wse-trainhost --connect unix:/x --program /nonexistent 2>&1",
			 out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot read /nonexistent")) TH_LOG("%s", out);
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
