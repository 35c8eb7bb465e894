// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hostile peer against libwselink's host side: every connection must
 * end with the host detecting a violation, and the peer (run with
 * --expect-close) must see every link it spoiled closed. This checks both
 * the peer's frames and the host-side validation of the codec.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"

static const char *peer_binary(void)
{
	const char *env = getenv("WSE_HOSTILE_PEER");

	return env && *env ? env : "build/bin/wse-hostile-peer";
}

struct outcome {
	int connections;
	int detected;		/* a check failed, an ERROR came, or the frame was cut */
	int timed_out;		/* random bytes shorter than a header */
	int accepted;		/* the host took a bad frame as good: a failure */
};

/* One host session: handshake, one KEEPALIVE, classify what happened. */
static void one_session(const struct wse_link_addr *addr, struct outcome *out)
{
	struct wse_link_hello_info hello = {
		.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_MEM,
		.max_payload = 1 << 20,
	};
	struct wse_link_client cl;
	struct wse_link_err err;
	uint32_t status;
	size_t rest;
	char text[200], msg[200];
	int fd, ret;

	fd = wse_link_connect(addr, 2000, msg, sizeof(msg));
	if (fd < 0)
		return;
	out->connections++;
	ret = wse_link_client_hello(&cl, fd, &hello, 500, &status, text, sizeof(text), &err);
	if (!ret && status == WSE_LINK_OK)
		ret = wse_link_client_call(&cl, WSE_LINK_OP_KEEPALIVE, 0, NULL, 0, &status,
					   &rest, &err);
	if (ret == -ETIMEDOUT)
		out->timed_out++;
	else if (ret)
		out->detected++;
	else
		out->accepted++;
	wse_link_client_free(&cl);
	close(fd);
}

/*
 * Runs the peer with @mode, @frames and @seed plus @extra arguments, drives
 * it with @frames host sessions, and leaves the peer's output in @report.
 */
static void run_peer_args(struct __test_metadata *_metadata, const char *mode, int frames,
			  const char *seed, const char *const *extra, char *report,
			  size_t report_len)
{
	char dir[] = "/tmp/hostile_test.XXXXXX", spec[128], nframes[16], log[160], cmd[256];
	const char *argv[40];
	int argc = 0;
	FILE *f;
	struct wse_link_addr addr;
	struct outcome out = { 0 };
	char err[200];
	int status;
	pid_t pid;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(spec, sizeof(spec), "unix:%s/peer.sock", dir);
	snprintf(log, sizeof(log), "%s/peer.log", dir);
	snprintf(nframes, sizeof(nframes), "%d", frames);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		static const char *const fixed[] = {
			"--close-wait-ms", "1500", "--accept-timeout-ms", "3000",
			"--time-limit", "100", "--expect-close",
		};

		argv[argc++] = peer_binary();
		argv[argc++] = "--listen";
		argv[argc++] = spec;
		argv[argc++] = "--frames";
		argv[argc++] = nframes;
		argv[argc++] = "--connections";
		argv[argc++] = nframes;
		argv[argc++] = "--mode";
		argv[argc++] = mode;
		argv[argc++] = "--seed";
		argv[argc++] = seed;
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			argv[argc++] = fixed[i];
		while (extra && *extra && argc < 38)
			argv[argc++] = *extra++;
		argv[argc] = NULL;
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s (build it with make)\n", peer_binary(),
			strerror(errno));
		_exit(127);
	}
	ASSERT_EQ(0, wse_link_addr_parse(spec, &addr, err, sizeof(err)));
	for (int i = 0; i < 250 && access(addr.path, F_OK); i++)
		usleep(20000);
	for (int i = 0; i < frames; i++)
		one_session(&addr, &out);
	for (int i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) != pid; i++)
		usleep(10000);
	if (kill(pid, 0) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	report[0] = '\0';
	f = fopen(log, "r");
	if (f) {
		report[fread(report, 1, report_len - 1, f)] = '\0';
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "cat '%s' | tail -n 30 >&2; rm -rf '%s'", log, dir);
	TH_LOG("%s: %d connections, %d detected, %d timed out, %d accepted", mode,
	       out.connections, out.detected, out.timed_out, out.accepted);
	if (system(cmd)) {
		/* the log is only for reading */
	}
	EXPECT_EQ(frames, out.connections);
	EXPECT_EQ(0, out.accepted);
	EXPECT_GE(out.detected, frames * 9 / 10);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static void run_peer(struct __test_metadata *_metadata, const char *mode, int frames,
		     const char *seed)
{
	char report[8192];

	run_peer_args(_metadata, mode, frames, seed, NULL, report, sizeof(report));
}

/* Only the kinds asked for are sent. */
TEST(selected_kinds_only)
{
	static const char *const extra[] = {
		"--kinds", "unknown-tag,bad-data-crc", "--hello-kinds", "hello-wrong-tag,hello-generic",
		NULL,
	};
	char report[8192];
	const char *kinds[] = { "unknown-tag", "bad-data-crc", "hello-wrong-tag", "hello-generic" };
	const char *others[] = { "bad-magic", "random", "truncated", "hello-zero-queues" };

	run_peer_args(_metadata, "mixed", 100, "21", extra, report, sizeof(report));
	for (int i = 0; i < 4; i++) {
		EXPECT_NE(NULL, strstr(report, kinds[i])) TH_LOG("%s", kinds[i]);
		EXPECT_EQ(NULL, strstr(report, others[i])) TH_LOG("%s", others[i]);
	}
	EXPECT_NE(NULL, strstr(report, "100 bad frames over 100 connections"));
}

TEST(after_hello)
{
	run_peer(_metadata, "after-hello", 300, "11");
}

TEST(handshake)
{
	run_peer(_metadata, "handshake", 300, "12");
}

TEST(mixed)
{
	run_peer(_metadata, "mixed", 200, "13");
}

TEST_HARNESS_MAIN
