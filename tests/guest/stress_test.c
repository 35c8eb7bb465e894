// SPDX-License-Identifier: GPL-2.0-only
/*
 * Small, bounded runs of the driver's stress programs, for make check:
 * wse-fuzz (random calls from several processes of several threads, as
 * two users, on a device of a real wsefwd and on one behind the semantic
 * hostile peer) and wse-soak
 * (kernel memory before and after many jobs and attach/detach cycles).
 * The full runs are `make fuzz` and `make soak` (tools/stress). The guest's
 * kernel log is judged by wsevm: any WARN, BUG or KFENCE report fails.
 */
#include "kselftest_harness.h"
#include "guest_tasks.h"
#include "wse_guest.h"

#define FUZZ_PROGRAM "/tmp/fuzz-fc-mnist.wsep"

/* Runs build/bin/@prog with the arguments (NULL-terminated); its exit
 * status, or -1 if it did not end within @timeout_s: then where every task
 * of ours was is printed before it is killed.
 */
static int run(int timeout_s, const char *prog, ...)
{
	const char *argv[32];
	char bin[160];
	va_list ap;
	int argc = 0, status;
	int64_t end = guest_now_ms() + timeout_s * 1000LL;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/%s", WSE_GUEST_BIN, prog);
	argv[argc++] = bin;
	va_start(ap, prog);
	while (argc < 31 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	while (guest_now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(50000);
	}
	fprintf(stderr, "stress_test: %s did not end within %d s\n", prog, timeout_s);
	guest_tasks_dump("when it was given up on");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * wse-fuzz as make check runs it: two processes, one of uid 1000 and one
 * of 1001, of four threads each sharing their files; fc-mnist loaded into
 * slots with canary weights; on a device of a real wsefwd and on one
 * behind the semantic hostile peer; 90 s at most. It stops at the first
 * kernel report. WSE_FUZZ_SEED and WSE_FUZZ_THREADS in the environment
 * change the seed (16) and the threads per process (4), for experiments.
 */
FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(fuzz)
{
}

/* The harness's default of 30 s is too short for a fuzz run of 90 s. */
TEST_F_TIMEOUT(fuzz, fuzz_small, 300)
{
	struct guest_peer fw1 = { 0 }, fw2 = { 0 }, proxy = { 0 };
	struct wsep_program *prog = NULL;
	void *image = NULL;
	size_t len = 0;
	char err[256];

	ASSERT_EQ(0, guest_compile_fc_mnist(FUZZ_PROGRAM, NULL, &image, &len, &prog, err,
					    sizeof(err))) TH_LOG("%s", err);
	free(image);
	wsep_program_free(prog);
	ASSERT_EQ(0, guest_peer_start(&fw1, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_peer_start(&fw2, "wsefwd", "--wafer", "64x64", NULL));
	ASSERT_EQ(0, guest_peer_start(&proxy, "wse-hostile-peer", "--mode", "semantic",
				      "--upstream", fw2.addr, "--mutate-every", "16",
				      "--connections", "100000", "--time-limit", "300",
				      "--accept-timeout-ms", "300000", NULL));
	EXPECT_EQ(0, run(240, "wse-fuzz", "--calls", "5000000", "--procs", "2", "--threads",
			 getenv("WSE_FUZZ_THREADS") ? getenv("WSE_FUZZ_THREADS") : "4",
			 "--seed", getenv("WSE_FUZZ_SEED") ? getenv("WSE_FUZZ_SEED") : "16",
			 "--time-limit", "90", "--uids", "1000,1001", "--program", FUZZ_PROGRAM,
			 "--keep-up", fw1.addr, "--hostile", proxy.addr, "--stop-on-report", NULL));
	guest_peer_stop(&proxy, SIGTERM);
	guest_peer_stop(&fw2, SIGKILL);
	guest_peer_stop(&fw1, SIGKILL);
	unlink(FUZZ_PROGRAM);
}

FIXTURE(soak) {
	int unused;
};

FIXTURE_SETUP(soak)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(soak)
{
}

/* Attach/detach cycles take long on a loaded host: the harness's 30 s are
 * too few, and run() bounds them at 240 s.
 */
TEST_F_TIMEOUT(soak, soak_small, 300)
{
	struct guest_peer fw = { 0 };

	ASSERT_EQ(0, guest_peer_start(&fw, "wsefwd", "--wafer", "64x64", NULL));
	EXPECT_EQ(0, run(240, "wse-soak", "--fw", fw.addr, "--procs", "4", "--submissions", "300",
			 "--cycles", "20", NULL));
	guest_peer_stop(&fw, SIGKILL);
}

TEST_HARNESS_MAIN
