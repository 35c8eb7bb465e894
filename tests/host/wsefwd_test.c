// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of wsefwd: the real daemon, started on a unix socket in a
 * temporary directory (one test uses 127.0.0.1), driven through libwselink.
 * The binary is $WSE_FWD, else build/bin/wsefwd (build/san-bin/wsefwd for
 * the sanitizer build of this test), relative to the repository root.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fwd_daemon.h"
#include "kselftest_harness.h"
#include "wse/link_io.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/link_malform.h"
#include "wse/splitmix64.h"

#define IO_MS		3000
#define START_MS	5000

static const char *self_path;

FIXTURE(fwd) {
	char dir[64];
	char spec[160];
	char log[160];
	pid_t pid;
};

FIXTURE_SETUP(fwd)
{
	strcpy(self->dir, "/tmp/wsefwd_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->spec, sizeof(self->spec), "unix:%s/fwd.sock", self->dir);
	snprintf(self->log, sizeof(self->log), "%s/fwd.log", self->dir);
	self->pid = 0;
}

static void dump_log(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return;
	while (n++ < 200 && fgets(line, sizeof(line), f))
		fprintf(stderr, "#   fwd: %s", line);
	fclose(f);
}

static void rm_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		/* A leftover temp dir is not worth failing a test for. */
	}
}

/* How many lines of the daemon's log contain @needle. */
static int count_in_log(const char *path, const char *needle)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Waits up to @ms for @pid; returns its wait status or -1. */
static int wait_exit(pid_t pid, int ms)
{
	int status;

	for (int i = 0; i < ms / 10; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		usleep(10000);
	}
	return -1;
}

FIXTURE_TEARDOWN(fwd)
{
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		wait_exit(self->pid, 2000);
	}
	if (!__test_passed(_metadata))
		dump_log(self->log);
	rm_dir(self->dir);
}

/* Starts wsefwd with --listen self->spec and the given NULL-terminated args. */
static pid_t start_fwd_argv(FIXTURE_DATA(fwd) *self, const char *const *extra)
{
	const char *argv[40];
	int n = 0;
	pid_t pid;

	argv[n++] = fwd_binary(self_path);
	argv[n++] = "--listen";
	argv[n++] = self->spec;
	argv[n++] = "--log-level";
	argv[n++] = "debug";
	while (*extra && n < 38)
		argv[n++] = *extra++;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int fd = open(self->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s (build it with make, or set WSE_FWD)\n",
			argv[0], strerror(errno));
		_exit(127);
	}
	self->pid = pid;
	return pid;
}

#define start_fwd(self, ...) \
	start_fwd_argv(self, (const char *const[]){ __VA_ARGS__, NULL })

/* Connects to the daemon, retrying while it starts up. */
static int connect_fwd(FIXTURE_DATA(fwd) *self)
{
	struct wse_link_addr addr;
	char err[256];
	int fd;

	if (wse_link_addr_parse(self->spec, &addr, err, sizeof(err)))
		return -1;
	for (int i = 0; i < START_MS / 20; i++) {
		fd = wse_link_connect(&addr, IO_MS, err, sizeof(err));
		if (fd >= 0)
			return fd;
		if (self->pid > 0 && waitpid(self->pid, NULL, WNOHANG) == self->pid) {
			self->pid = 0;
			return -1;
		}
		usleep(20000);
	}
	return -1;
}

static const struct wse_link_hello_info default_hello = {
	.version_min = 1, .version_max = 1, .caps = WSE_LINK_CAP_MEM,
	.max_payload = 1 << 20, .keepalive_ms = 0,
};

/* Connects and completes the handshake; returns the fd. */
static int open_link(struct __test_metadata *_metadata, FIXTURE_DATA(fwd) *self,
		     struct wse_link_client *cl, const struct wse_link_hello_info *hello)
{
	struct wse_link_err err;
	uint32_t status;
	char text[200];
	int fd = connect_fwd(self);
	int ret;

	if (fd < 0)
		return -1;
	ret = wse_link_client_hello(cl, fd, hello ? hello : &default_hello, IO_MS, &status,
				    text, sizeof(text), &err);
	if (ret || status) {
		TH_LOG("handshake: ret %d status %u: %s %s", ret, status, err.text, text);
		wse_link_client_free(cl);
		close(fd);
		return -1;
	}
	return fd;
}

/* Receives one frame with the negotiated rules of @cl (or v1 defaults). */
static int recv_frame(int fd, struct wse_link_frame *f, uint8_t *buf, size_t cap, int ms,
		      struct wse_link_err *err)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = WSE_LINK_PAYLOAD_LIMIT };

	return wse_link_recv(fd, &rules, f, buf, cap, ms, err);
}

/* True if the peer closes within @ms (EOF or reset), reading anything before. */
static bool closes_within(int fd, int ms)
{
	int64_t end = wse_link_now_ms() + ms;
	uint8_t sink[4096];

	while (wse_link_now_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)(end - wse_link_now_ms())) <= 0)
			return false;
		n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}

/* Expects an ERROR frame with @code whose text contains @needle, then EOF. */
static void expect_error_and_close(struct __test_metadata *_metadata, int fd,
				   uint32_t code, const char *needle)
{
	uint8_t buf[4096];
	struct wse_link_frame f;
	struct wse_link_err err;
	char text[256];
	uint32_t got;

	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) {
		TH_LOG("%s", err.text);
	}
	ASSERT_EQ(WSE_LINK_OP_ERROR, f.opcode);
	EXPECT_EQ(0, f.flags);
	ASSERT_EQ(0, wse_link_error_decode(buf, f.length, &got, text, sizeof(text), &err));
	EXPECT_EQ(code, got) {
		TH_LOG("ERROR %s: %s", wse_link_status_name(got), text);
	}
	if (needle)
		EXPECT_NE(NULL, strstr(text, needle)) {
			TH_LOG("text: %s", text);
		}
	EXPECT_TRUE(closes_within(fd, IO_MS));
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = wse_splitmix64(&seed);

		memcpy(p + i, &r, n - i < 8 ? n - i : 8);
	}
}

TEST_F(fwd, handshake_reports_device_info)
{
	struct wse_link_client cl;
	int fd;

	/* Numbers are decimal: 077 is seventy-seven, not octal. */
	start_fwd(self, "--wafer", "64x48", "--sram-per-pe", "1K", "--device-id", "077",
		  "--clock-mhz", "1100", "--queues", "3", "--max-payload", "64K");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, cl.dev.version);
	EXPECT_EQ(1, cl.dev.version_min);
	EXPECT_EQ(1, cl.dev.version_max);
	EXPECT_EQ(77U, cl.dev.device_id);
	EXPECT_EQ(64U, cl.dev.wafer_width);
	EXPECT_EQ(48U, cl.dev.wafer_height);
	EXPECT_EQ(1024U, cl.dev.sram_per_pe);
	EXPECT_EQ(64ULL * 48 * 1024, cl.dev.sram_total);
	EXPECT_EQ(1100000U, cl.dev.clock_khz);
	EXPECT_EQ(3U, cl.dev.num_queues);
	EXPECT_EQ(65536U, cl.dev.max_payload);
	EXPECT_EQ(65536U, cl.rules.max_payload);	/* the smaller maximum */
	EXPECT_TRUE(cl.dev.caps & WSE_LINK_CAP_MEM);
	EXPECT_EQ(0, strncmp(cl.dev.fw_version, "wsefwd", 6));
	wse_link_client_free(&cl);
	close(fd);
}

/* The presets, and a TCP listener whose port is chosen by the kernel. */
TEST_F(fwd, presets_and_tcp_port_file)
{
	char port_file[200], port[16] = "";
	struct wse_link_client cl;
	FILE *f;
	int fd;

	snprintf(port_file, sizeof(port_file), "%s/port", self->dir);
	snprintf(self->spec, sizeof(self->spec), "tcp:127.0.0.1:0");
	start_fwd(self, "--wafer", "wse3", "--port-file", port_file);
	for (int i = 0; i < START_MS / 20 && access(port_file, R_OK); i++)
		usleep(20000);
	f = fopen(port_file, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(port, sizeof(port), f));
	fclose(f);
	port[strcspn(port, "\n")] = '\0';
	ASSERT_GT(atoi(port), 0);
	snprintf(self->spec, sizeof(self->spec), "tcp:127.0.0.1:%s", port);
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(772U, cl.dev.wafer_width);
	EXPECT_EQ(1023U, cl.dev.wafer_height);
	EXPECT_EQ(48U * 1024, cl.dev.sram_per_pe);
	EXPECT_EQ(772ULL * 1023 * 48 * 1024, cl.dev.sram_total);
	EXPECT_EQ(850000U, cl.dev.clock_khz);
	wse_link_client_free(&cl);
	close(fd);
}

/*
 * Whoever reads --port-file may stop the daemon at once: the SIGTERM
 * handler is in place before the file is written, so the stop is clean
 * (exit 0), not a kill (143) in the window before the main loop.
 */
TEST_F(fwd, sigterm_right_after_port_file_stops_cleanly)
{
	char port_file[200];
	int status;

	snprintf(port_file, sizeof(port_file), "%s/port", self->dir);
	snprintf(self->spec, sizeof(self->spec), "tcp:127.0.0.1:0");
	start_fwd(self, "--wafer", "8x8", "--port-file", port_file);
	for (int i = 0; i < START_MS && access(port_file, R_OK); i++)
		usleep(1000);
	ASSERT_EQ(0, access(port_file, R_OK));
	ASSERT_EQ(0, kill(self->pid, SIGTERM));
	status = wait_exit(self->pid, IO_MS);
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("wait status %#x: killed by the signal", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(fwd, version_mismatch_refused)
{
	struct wse_link_hello_info hello = default_hello;
	struct wse_link_client cl;
	struct wse_link_err err;
	uint32_t status;
	char text[200];
	int fd;

	start_fwd(self, "--wafer", "8x8");
	fd = connect_fwd(self);
	ASSERT_GE(fd, 0);
	hello.version_min = 2;
	hello.version_max = 3;
	ASSERT_EQ(0, wse_link_client_hello(&cl, fd, &hello, IO_MS, &status, text,
					   sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_VERSION, status);
	EXPECT_NE(NULL, strstr(text, "host speaks 2..3")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "device speaks 1..1")) TH_LOG("%s", text);
	EXPECT_TRUE(closes_within(fd, IO_MS));
	wse_link_client_free(&cl);
	close(fd);

	/* A HELLO with an unusable payload maximum is refused as invalid. */
	fd = connect_fwd(self);
	ASSERT_GE(fd, 0);
	hello = default_hello;
	hello.max_payload = 1024;
	ASSERT_EQ(0, wse_link_client_hello(&cl, fd, &hello, IO_MS, &status, text,
					   sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_INVAL, status);
	EXPECT_NE(NULL, strstr(text, "max_payload")) TH_LOG("%s", text);
	EXPECT_TRUE(closes_within(fd, IO_MS));
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, second_host_refused_busy)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	uint8_t out[5000], in[5000];
	uint32_t status;
	char text[200];
	int fd, fd2;

	start_fwd(self, "--wafer", "16x16");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	for (int round = 0; round < 3; round++) {
		fd2 = connect_fwd(self);
		ASSERT_GE(fd2, 0);
		expect_error_and_close(_metadata, fd2, WSE_LINK_E_BUSY,
				       "device already serves host");
		close(fd2);
	}
	/* The first host is unaffected. */
	fill(out, sizeof(out), 3);
	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, 100, out, sizeof(out), &status,
					       text, sizeof(text), &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_OK, status);
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, 100, in, sizeof(in), &status,
					      text, sizeof(text), &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));
	wse_link_client_free(&cl);
	close(fd);

	/* Once it has gone, the next host is served. */
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	wse_link_client_free(&cl);
	close(fd);
}

/* Writes and reads back checksummed data of several sizes at several
 * offsets, across chunk boundaries and up to the end of device memory.
 */
TEST_F(fwd, mem_round_trip_sizes_and_offsets)
{
	static const uint32_t sizes[] = { 1, 7, 4096, 65539, (1 << 20) + 17, (1 << 20) - 16 };
	const uint64_t cap = 64ULL * 64 * 4096;	/* 16 MiB */
	struct wse_link_hello_info hello = default_hello;
	uint64_t offsets[4];
	struct wse_link_client cl;
	struct wse_link_err err;
	uint8_t *out, *in;
	uint32_t status, max;
	char text[200];
	int fd, checked = 0;

	start_fwd(self, "--wafer", "64x64", "--sram-per-pe", "4K", "--max-payload", "2M");
	hello.max_payload = 2 << 20;
	fd = open_link(_metadata, self, &cl, &hello);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(cap, cl.dev.sram_total);
	max = cl.rules.max_payload - (uint32_t)sizeof(struct wse_link_mem);
	out = malloc(max);
	in = malloc(max);
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);

	/* Never-written memory reads as zeros. */
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, cap - 4096, in, 4096, &status, text,
					      sizeof(text), &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_OK, status);
	memset(out, 0, 4096);
	EXPECT_EQ(0, memcmp(out, in, 4096));

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s] > max ? max : sizes[s];

		offsets[0] = 0;
		offsets[1] = 12345;
		offsets[2] = (1 << 20) - 3;	/* straddles a backing chunk */
		offsets[3] = cap - n;		/* ends at the last byte */
		for (int o = 0; o < 4; o++) {
			uint32_t crc_out;

			fill(out, n, s * 10 + (uint64_t)o);
			crc_out = wse_crc32c(0, out, n);
			ASSERT_EQ(0, wse_link_client_mem_write(&cl, (uint16_t)(o % 4), offsets[o],
							       out, n, &status, text, sizeof(text),
							       &err)) TH_LOG("%s", err.text);
			ASSERT_EQ(WSE_LINK_OK, status) TH_LOG("%s", text);
			memset(in, 0xee, n);
			ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, offsets[o], in, n, &status,
							      text, sizeof(text), &err))
				TH_LOG("%s", err.text);
			ASSERT_EQ(WSE_LINK_OK, status) TH_LOG("%s", text);
			ASSERT_EQ(crc_out, wse_crc32c(0, in, n)) {
				TH_LOG("size %u at 0x%llx", n, (unsigned long long)offsets[o]);
			}
			checked++;
		}
	}
	/* A partial overwrite changes only its own bytes. */
	fill(out, 64, 99);
	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, 32, out, 64, &status, text,
					       sizeof(text), &err));
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, 0, in, 128, &status, text,
					      sizeof(text), &err));
	EXPECT_EQ(0, memcmp(in + 32, out, 64));
	fill(out, 128, 50);	/* offset 0 holds the last size's data: seed 5 * 10 + 0 */
	EXPECT_EQ(0, memcmp(in, out, 32));
	EXPECT_EQ(0, memcmp(in + 96, out + 96, 32));
	EXPECT_EQ(24, checked);
	free(out);
	free(in);
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, over_capacity_and_out_of_range_refused)
{
	const uint64_t cap = 4 * 4 * 1024;	/* 16 KiB */
	struct wse_link_client cl;
	struct wse_link_err err;
	uint8_t buf[20000] = { 0 };
	uint32_t status;
	char text[200];
	int fd;

	start_fwd(self, "--wafer", "4x4", "--sram-per-pe", "1K", "--max-payload", "64K");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(cap, cl.dev.sram_total);

	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, 0, buf, 20000, &status, text,
					       sizeof(text), &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_E_NOSPC, status);
	EXPECT_NE(NULL, strstr(text, "20000")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "16384")) TH_LOG("%s", text);

	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, cap - 15, buf, 16, &status, text,
					       sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_RANGE, status);
	EXPECT_NE(NULL, strstr(text, "0x3ff1")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "16 bytes")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "16384")) TH_LOG("%s", text);

	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, UINT64_MAX, buf, 1, &status, text,
					       sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_RANGE, status);
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, cap, buf, 1, &status, text,
					      sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_RANGE, status);
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, UINT64_MAX - 3, buf, 8, &status, text,
					      sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_RANGE, status);
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, 0, buf, 20000, &status, text,
					      sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_NOSPC, status);
	/* A queue the device does not have. */
	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 9, 0, buf, 16, &status, text,
					       sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_INVAL, status);
	EXPECT_NE(NULL, strstr(text, "queue 9")) TH_LOG("%s", text);

	/* The refusals left the link working: the last 16 bytes are usable. */
	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, cap - 16, buf, 16, &status, text,
					       sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_OK, status) TH_LOG("%s", text);
	wse_link_client_free(&cl);
	close(fd);
}

/* A read that cannot fit one response is invalid, not truncated. */
TEST_F(fwd, oversized_read_refused)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	uint32_t status;
	char text[200];
	uint8_t *buf = malloc(1 << 20);
	int fd;

	ASSERT_NE(NULL, buf);
	start_fwd(self, "--wafer", "64x64");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, 0, buf, cl.rules.max_payload - 7,
					      &status, text, sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_E_INVAL, status);
	EXPECT_NE(NULL, strstr(text, "does not fit")) TH_LOG("%s", text);
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, 0, buf, cl.rules.max_payload - 8,
					      &status, text, sizeof(text), &err));
	EXPECT_EQ(WSE_LINK_OK, status);
	free(buf);
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, keepalive_answered_and_silent_host_dropped)
{
	struct wse_link_hello_info hello = default_hello;
	struct wse_link_client cl;
	struct wse_link_err err;
	uint32_t status;
	size_t rest;
	int fd;
	int64_t t0;

	start_fwd(self, "--wafer", "8x8");
	hello.keepalive_ms = 300;
	fd = open_link(_metadata, self, &cl, &hello);
	ASSERT_GE(fd, 0);
	/* Answered, and keeping the link alive past three intervals. */
	for (int i = 0; i < 6; i++) {
		ASSERT_EQ(0, wse_link_client_call(&cl, WSE_LINK_OP_KEEPALIVE, 0, NULL, 0,
						  &status, &rest, &err)) TH_LOG("%s", err.text);
		EXPECT_EQ(WSE_LINK_OK, status);
		EXPECT_EQ(0U, rest);
		usleep(200000);
	}
	/* Then silence: three intervals (900 ms) later the device gives up. */
	t0 = wse_link_now_ms();
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "nothing heard");
	EXPECT_GE(wse_link_now_ms() - t0, 500);
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, hello_timeout)
{
	int fd;

	start_fwd(self, "--hello-timeout-ms", "300");
	fd = connect_fwd(self);
	ASSERT_GE(fd, 0);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "no HELLO");
	close(fd);
}

/* Raw frames: what the device does with each malformed input. */
enum breakage {
	BREAK_NONE, BREAK_MAGIC, BREAK_HDR_CRC, BREAK_VERSION, BREAK_FLAGS, BREAK_RESERVED,
	BREAK_LENGTH, BREAK_DATA_CRC,
};

static void send_raw(struct __test_metadata *_metadata, int fd, uint8_t opcode,
		     uint16_t flags, uint16_t queue, uint32_t tag, const void *payload,
		     uint32_t len, enum breakage how)
{
	struct wse_link_frame f = {
		.version = 1, .opcode = opcode, .flags = flags, .queue = queue, .tag = tag,
		.length = len, .data_crc = wse_crc32c(0, payload, len),
	};
	struct wse_link_hdr raw;
	struct iovec iov[2];
	struct wse_link_err err;

	if (how == BREAK_DATA_CRC)
		f.data_crc ^= 4;
	if (how == BREAK_VERSION)
		f.version = 7;
	if (how == BREAK_FLAGS)
		f.flags |= 0x100;
	if (how == BREAK_LENGTH)
		f.length = (1 << 20) + 1;
	wse_link_hdr_encode(&raw, &f);
	if (how == BREAK_MAGIC) {
		raw.magic = htole32(0x12345678);
		raw.hdr_crc = htole32(wse_crc32c(0, &raw, WSE_LINK_HDR_CRC_LEN));
	}
	if (how == BREAK_HDR_CRC)
		raw.hdr_crc ^= htole32(1);
	if (how == BREAK_RESERVED) {
		raw.reserved = htole16(1);
		raw.hdr_crc = htole32(wse_crc32c(0, &raw, WSE_LINK_HDR_CRC_LEN));
	}
	iov[0] = (struct iovec){ &raw, sizeof(raw) };
	iov[1] = (struct iovec){ (void *)payload, how == BREAK_LENGTH ? 0 : len };
	ASSERT_EQ(0, wse_link_write_all(fd, iov, 2, wse_link_now_ms() + IO_MS, &err));
}

TEST_F(fwd, first_frame_must_be_hello)
{
	int fd;

	start_fwd(self, "--wafer", "8x8");
	fd = connect_fwd(self);
	ASSERT_GE(fd, 0);
	send_raw(_metadata, fd, WSE_LINK_OP_KEEPALIVE, 0, 0, 1, NULL, 0, BREAK_NONE);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "first frame must be HELLO");
	close(fd);
}

TEST_F(fwd, malformed_frames_get_error_and_close)
{
	static const struct {
		enum breakage how;
		uint32_t code;
		const char *needle;
	} cases[] = {
		{ BREAK_MAGIC, WSE_LINK_E_PROTO, "magic" },
		{ BREAK_HDR_CRC, WSE_LINK_E_CRC, "header CRC" },
		{ BREAK_VERSION, WSE_LINK_E_PROTO, "version" },
		{ BREAK_FLAGS, WSE_LINK_E_PROTO, "flags" },
		{ BREAK_RESERVED, WSE_LINK_E_PROTO, "reserved" },
		{ BREAK_LENGTH, WSE_LINK_E_PROTO, "exceeds the link maximum" },
	};
	uint8_t mem[16 + 32] = { 0 };

	start_fwd(self, "--wafer", "8x8");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wse_link_client cl;
		int fd = open_link(_metadata, self, &cl, NULL);

		ASSERT_GE(fd, 0);
		mem[8] = 32;	/* wse_link_mem.length */
		send_raw(_metadata, fd, WSE_LINK_OP_MEM_WRITE, 0, 0, 5, mem, sizeof(mem),
			 cases[i].how);
		expect_error_and_close(_metadata, fd, cases[i].code, cases[i].needle);
		wse_link_client_free(&cl);
		close(fd);
	}
}

/* Before the handshake nothing is trusted: a HELLO whose data fails its
 * digest ends the link, where a request after it only fails itself.
 */
TEST_F(fwd, data_crc_before_hello_closes)
{
	struct wse_link_hello_info in = {
		.version_min = 1, .version_max = 1, .max_payload = 65536, .keepalive_ms = 5000,
	};
	struct wse_link_hello hello;
	int fd;

	start_fwd(self, "--wafer", "8x8");
	fd = connect_fwd(self);
	ASSERT_GE(fd, 0);
	wse_link_hello_encode(&hello, &in);
	send_raw(_metadata, fd, WSE_LINK_OP_HELLO, 0, 0, 1, &hello, sizeof(hello),
		 BREAK_DATA_CRC);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_CRC, "data CRC");
	close(fd);
}

TEST_F(fwd, bad_requests_after_hello)
{
	struct wse_link_client cl;
	struct wse_link_frame f;
	struct wse_link_err err;
	uint8_t buf[512], mem[16 + 8] = { 0 };
	uint32_t status;
	const uint8_t *rest;
	size_t rest_len;
	int fd;

	start_fwd(self, "--wafer", "8x8");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	/* An unknown opcode is answered E_UNSUPPORTED; the link stays up. */
	send_raw(_metadata, fd, 0x7e, 0, 0, 42, NULL, 0, BREAK_NONE);
	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(0x7e, f.opcode);
	EXPECT_EQ(WSE_LINK_F_RESPONSE, f.flags);
	EXPECT_EQ(42U, f.tag);
	ASSERT_EQ(0, wse_link_status_decode(buf, f.length, &status, &rest, &rest_len, &err));
	EXPECT_EQ(WSE_LINK_E_UNSUPPORTED, status);
	/* A request whose data fails its digest is refused; the link stays up. */
	mem[8] = 8;	/* wse_link_mem.length */
	send_raw(_metadata, fd, WSE_LINK_OP_MEM_WRITE, 0, 0, 44, mem, sizeof(mem), BREAK_DATA_CRC);
	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_OP_MEM_WRITE, f.opcode);
	EXPECT_EQ(44U, f.tag);
	ASSERT_EQ(0, wse_link_status_decode(buf, f.length, &status, &rest, &rest_len, &err));
	EXPECT_EQ(WSE_LINK_E_DATA_CRC, status);
	send_raw(_metadata, fd, WSE_LINK_OP_MEM_WRITE, 0, 0, 45, mem, sizeof(mem), BREAK_NONE);
	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(45U, f.tag);
	ASSERT_EQ(0, wse_link_status_decode(buf, f.length, &status, &rest, &rest_len, &err));
	EXPECT_EQ(WSE_LINK_OK, status);
	/* A link-level frame on a data queue is a violation. */
	send_raw(_metadata, fd, WSE_LINK_OP_KEEPALIVE, 0, 2, 43, NULL, 0, BREAK_NONE);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "queue 2");
	wse_link_client_free(&cl);
	close(fd);

	/* A write whose header disagrees with its data. */
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	mem[8] = 9;
	send_raw(_metadata, fd, WSE_LINK_OP_MEM_WRITE, 0, 0, 5, mem, sizeof(mem), BREAK_NONE);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "announces 9 bytes but carries 8");
	wse_link_client_free(&cl);
	close(fd);

	/* A response to nothing the device asked. */
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	memset(buf, 0, 8);
	send_raw(_metadata, fd, WSE_LINK_OP_KEEPALIVE, WSE_LINK_F_RESPONSE, 0, 1234, buf, 8,
		 BREAK_NONE);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "tag 1234");
	wse_link_client_free(&cl);
	close(fd);

	/* A second HELLO; a short MEM_READ. */
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	struct wse_link_hello h;

	wse_link_hello_encode(&h, &default_hello);
	send_raw(_metadata, fd, WSE_LINK_OP_HELLO, 0, 0, 9, &h, sizeof(h), BREAK_NONE);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "HELLO after");
	wse_link_client_free(&cl);
	close(fd);
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	send_raw(_metadata, fd, WSE_LINK_OP_MEM_READ, 0, 0, 9, mem, 12, BREAK_NONE);
	expect_error_and_close(_metadata, fd, WSE_LINK_E_PROTO, "MEM_READ payload is 12 bytes");
	wse_link_client_free(&cl);
	close(fd);
}

/* Three keepalive calls; returns how many were answered before a failure. */
static int keepalives(struct wse_link_client *cl, int n, struct wse_link_err *err, int *ret)
{
	uint32_t status;
	size_t rest;

	for (int i = 0; i < n; i++) {
		*ret = wse_link_client_call(cl, WSE_LINK_OP_KEEPALIVE, 0, NULL, 0, &status,
					    &rest, err);
		if (*ret)
			return i;
	}
	return n;
}

TEST_F(fwd, fault_drop_after)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	int fd, ret;

	start_fwd(self, "--wafer", "8x8", "--fault-drop-after", "3");
	fd = open_link(_metadata, self, &cl, NULL);	/* frame 1 */
	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, keepalives(&cl, 5, &err, &ret));	/* frame 2 answered, 3 dropped */
	EXPECT_EQ(-EPIPE, ret) TH_LOG("%d: %s", ret, err.text);
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, fault_drop_at_accept)
{
	int fd;

	start_fwd(self, "--wafer", "8x8", "--fault-drop-after", "0");
	fd = connect_fwd(self);
	ASSERT_GE(fd, 0);
	EXPECT_TRUE(closes_within(fd, IO_MS));
	close(fd);
}

TEST_F(fwd, fault_delay)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	int fd, ret;
	int64_t t0;

	start_fwd(self, "--wafer", "8x8", "--fault-delay-ms", "250");
	t0 = wse_link_now_ms();
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(2, keepalives(&cl, 2, &err, &ret));
	EXPECT_GE(wse_link_now_ms() - t0, 750);	/* three delayed replies */
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, fault_corrupt_frame)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	int fd, ret;

	start_fwd(self, "--wafer", "8x8", "--fault-corrupt-frame", "3");
	fd = open_link(_metadata, self, &cl, NULL);	/* sent frame 1 */
	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, keepalives(&cl, 3, &err, &ret));	/* 2 fine, 3 corrupt */
	EXPECT_EQ(-EBADMSG, ret);
	EXPECT_EQ(WSE_LINK_CHECK_DATA_CRC, err.check) TH_LOG("%s", err.text);
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, fault_silent_after)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	int fd, ret;

	start_fwd(self, "--wafer", "8x8", "--fault-silent-after", "2");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	cl.timeout_ms = 400;
	EXPECT_EQ(1, keepalives(&cl, 2, &err, &ret));
	EXPECT_EQ(-ETIMEDOUT, ret) TH_LOG("%d: %s", ret, err.text);
	/* Silent, not gone: the socket stays open. */
	EXPECT_FALSE(closes_within(fd, 300));
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, fault_malformed_after)
{
	static const struct {
		const char *kind;
		enum wse_link_check check;
	} cases[] = {
		{ "bad-magic", WSE_LINK_CHECK_MAGIC },
		{ "bad-hdr-crc", WSE_LINK_CHECK_HDR_CRC },
		{ "bad-flags", WSE_LINK_CHECK_FLAGS },
		{ "bad-data-crc", WSE_LINK_CHECK_DATA_CRC },
		{ "unknown-tag", WSE_LINK_CHECK_PAYLOAD },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wse_link_client cl;
		struct wse_link_err err;
		int fd, ret;

		snprintf(self->spec, sizeof(self->spec), "unix:%s/fwd%zu.sock", self->dir, i);
		start_fwd(self, "--wafer", "8x8", "--fault-malformed-after", "2",
			  "--fault-malformed-kind", cases[i].kind, "--once");
		fd = open_link(_metadata, self, &cl, NULL);
		ASSERT_GE(fd, 0);
		EXPECT_EQ(1, keepalives(&cl, 3, &err, &ret));
		EXPECT_TRUE(ret == -EPROTO || ret == -EBADMSG) TH_LOG("%s: %d", cases[i].kind, ret);
		EXPECT_EQ(cases[i].check, err.check) TH_LOG("%s: %s", cases[i].kind, err.text);
		wse_link_client_free(&cl);
		close(fd);
		EXPECT_EQ(0, wait_exit(self->pid, IO_MS));
		self->pid = 0;
	}
}

TEST_F(fwd, sigterm_sends_shutdown_and_exits_zero)
{
	struct wse_link_client cl;
	struct wse_link_frame f, r;
	struct wse_link_err err;
	struct wse_link_status st;
	struct iovec iov = { &st, sizeof(st) };
	uint8_t buf[64];
	int fd, status;

	start_fwd(self, "--wafer", "8x8");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, kill(self->pid, SIGTERM));
	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_OP_SHUTDOWN, f.opcode);
	EXPECT_EQ(0, f.flags);
	EXPECT_EQ(0U, f.length);
	r = (struct wse_link_frame){ .version = 1, .opcode = WSE_LINK_OP_SHUTDOWN,
				     .flags = WSE_LINK_F_RESPONSE, .tag = f.tag };
	wse_link_status_encode(&st, WSE_LINK_OK);
	ASSERT_EQ(0, wse_link_send(fd, &r, &iov, 1, IO_MS, &err));
	EXPECT_TRUE(closes_within(fd, IO_MS));
	status = wait_exit(self->pid, IO_MS);
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status 0x%x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, host_shutdown_answered_and_crossing_shutdowns)
{
	struct wse_link_client cl;
	struct wse_link_frame f;
	struct wse_link_err err;
	uint8_t buf[64];
	uint32_t status;
	size_t rest;
	int fd, wstatus;

	start_fwd(self, "--wafer", "8x8");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, wse_link_client_call(&cl, WSE_LINK_OP_SHUTDOWN, 0, NULL, 0, &status,
					  &rest, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_OK, status);
	EXPECT_TRUE(closes_within(fd, IO_MS));
	wse_link_client_free(&cl);
	close(fd);

	/* The device's SHUTDOWN (on SIGTERM) and the host's cross: the
	 * device answers the host's and both close.
	 */
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, kill(self->pid, SIGTERM));
	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) TH_LOG("%s", err.text);
	ASSERT_EQ(WSE_LINK_OP_SHUTDOWN, f.opcode);
	f = (struct wse_link_frame){ .version = 1, .opcode = WSE_LINK_OP_SHUTDOWN, .tag = 77 };
	ASSERT_EQ(0, wse_link_send(fd, &f, NULL, 0, IO_MS, &err));
	ASSERT_EQ(0, recv_frame(fd, &f, buf, sizeof(buf), IO_MS, &err)) TH_LOG("%s", err.text);
	EXPECT_EQ(WSE_LINK_OP_SHUTDOWN, f.opcode);
	EXPECT_EQ(WSE_LINK_F_RESPONSE, f.flags);
	EXPECT_EQ(77U, f.tag);
	EXPECT_TRUE(closes_within(fd, IO_MS));
	wstatus = wait_exit(self->pid, IO_MS);
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(wstatus));
	EXPECT_EQ(0, WEXITSTATUS(wstatus));
	wse_link_client_free(&cl);
	close(fd);
}

TEST_F(fwd, sigterm_without_host_and_once)
{
	struct wse_link_client cl;
	int fd, status;

	start_fwd(self, "--wafer", "8x8");
	fd = connect_fwd(self);	/* wait until it listens */
	ASSERT_GE(fd, 0);
	close(fd);
	usleep(100000);
	ASSERT_EQ(0, kill(self->pid, SIGTERM));
	status = wait_exit(self->pid, IO_MS);
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* --once: the first host leaving ends the daemon. */
	start_fwd(self, "--wafer", "8x8", "--once");
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	wse_link_client_free(&cl);
	close(fd);
	status = wait_exit(self->pid, IO_MS);
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Bad command lines exit 2 with a message naming the problem. */
TEST_F(fwd, bad_options_rejected)
{
	static const char *const bad[][3] = {
		{ "--wafer", "0x5", "wafer" },
		{ "--sram-per-pe", "12Q", "--sram-per-pe" },
		{ "--queues", "0", "--queues" },
		{ "--queues", "3abc", "'abc' follows" },
		{ "--max-payload", "100", "--max-payload" },
		{ "--log-level", "loud", "--log-level" },
		{ "--fault-malformed-kind", "nope", "--fault-malformed-kind" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[4096] = "";
		FILE *f;
		int status;

		unlink(self->log);
		start_fwd(self, bad[i][0], bad[i][1]);
		status = wait_exit(self->pid, IO_MS);
		self->pid = 0;
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(2, WEXITSTATUS(status));
		f = fopen(self->log, "r");
		ASSERT_NE(NULL, f);
		text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
		fclose(f);
		EXPECT_NE(NULL, strstr(text, bad[i][2])) TH_LOG("%s", text);
	}
}

/*
 * Seeded, bounded fuzz of the daemon's receive path: hundreds of hosts send
 * malformed, mutated and random frames (some after a good HELLO), then end
 * their stream. The daemon must survive all of it (the sanitizer build runs
 * under ASan/UBSan) and then serve a well-behaved host normally.
 */
TEST_F(fwd, fuzz_daemon_survives_hostile_hosts)
{
	struct wse_link_client cl;
	struct wse_link_err err;
	uint64_t rng = 0xf00d;
	uint8_t out[256], in[256];
	uint32_t status;
	char text[200];
	int fd;

	start_fwd(self, "--wafer", "16x16", "--max-payload", "64K");
	for (int i = 0; i < 300; i++) {
		uint8_t buf[WSE_LINK_MALFORM_MAX + 64];
		uint64_t r = wse_splitmix64(&rng);
		struct wse_link_hdr raw;
		struct iovec iov;
		bool close_after;
		size_t n;

		if (r & 1) {
			fd = open_link(_metadata, self, &cl, NULL);
			ASSERT_GE(fd, 0);
			wse_link_client_free(&cl);
		} else {
			fd = connect_fwd(self);
			ASSERT_GE(fd, 0);
		}
		if ((r >> 1) % 3 == 0) {
			/* A valid MEM_WRITE header with one random byte mutated. */
			struct wse_link_frame f = {
				.version = 1, .opcode = WSE_LINK_OP_MEM_WRITE, .tag = i,
				.length = 16 + 32,
			};
			struct wse_link_mem mem;

			wse_link_mem_encode(&mem, (r >> 8) % 70000, 32);
			memset(buf, 0, sizeof(buf));
			memcpy(buf + sizeof(raw), &mem, sizeof(mem));
			f.data_crc = wse_crc32c(0, buf + sizeof(raw), f.length);
			wse_link_hdr_encode(&raw, &f);
			memcpy(buf, &raw, sizeof(raw));
			buf[(r >> 20) % (sizeof(raw) + f.length)] ^= (uint8_t)(1 + (r >> 40) % 255);
			n = sizeof(raw) + f.length;
		} else {
			n = wse_link_malform_build((r >> 8) % WSE_LINK_MAL_COUNT, &rng, 1,
						   (uint8_t)(r >> 16), (uint32_t)(r >> 24), buf,
						   &close_after);
			/* Half of them as requests rather than responses. */
			if ((r >> 4) & 1 && n >= sizeof(raw)) {
				memcpy(&raw, buf, sizeof(raw));
				raw.flags = 0;
				raw.hdr_crc = htole32(wse_crc32c(0, &raw, WSE_LINK_HDR_CRC_LEN));
				memcpy(buf, &raw, sizeof(raw));
			}
		}
		iov = (struct iovec){ buf, n };
		wse_link_write_all(fd, &iov, 1, wse_link_now_ms() + IO_MS, &err);
		shutdown(fd, SHUT_WR);
		EXPECT_TRUE(closes_within(fd, IO_MS)) TH_LOG("iteration %d", i);
		close(fd);
		ASSERT_EQ(0, waitpid(self->pid, NULL, WNOHANG)) TH_LOG("daemon died at %d", i);
	}
	fd = open_link(_metadata, self, &cl, NULL);
	ASSERT_GE(fd, 0);
	fill(out, sizeof(out), 8);
	ASSERT_EQ(0, wse_link_client_mem_write(&cl, 0, 4096, out, sizeof(out), &status, text,
					       sizeof(text), &err));
	ASSERT_EQ(0, wse_link_client_mem_read(&cl, 0, 4096, in, sizeof(in), &status, text,
					      sizeof(text), &err));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));
	wse_link_client_free(&cl);
	close(fd);
	/* Every hostile host was really served (and the daemon logged why it
	 * dropped each).
	 */
	EXPECT_GE(count_in_log(self->log, "connected"), 301);
	TH_LOG("%d links closed on ERROR, %d closed mid-frame",
	       count_in_log(self->log, "sending ERROR"),
	       count_in_log(self->log, "in the middle of a frame"));
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
