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
#include "wse/link_codec.h"

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

static void run_peer(struct __test_metadata *_metadata, const char *mode, int frames,
		     const char *seed)
{
	char dir[] = "/tmp/hostile_test.XXXXXX", spec[128], nframes[16], log[160], cmd[256];
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
		execl(peer_binary(), peer_binary(), "--listen", spec, "--frames", nframes,
		      "--connections", nframes, "--mode", mode, "--seed", seed,
		      "--close-wait-ms", "1500", "--accept-timeout-ms", "3000",
		      "--time-limit", "100", "--expect-close", (char *)NULL);
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
