// SPDX-License-Identifier: GPL-2.0-only
/*
 * The appliance's link to a part (firmware-sim/appliance/hostlink.c)
 * against a fake system on a unix socket that answers as each case
 * says: a right answer is delivered to its waiter, even out of turn; an
 * answer on the wrong queue, to a tag nothing waits for, longer than the
 * room asked for, or a SHUTDOWN, ends the link with a reason that names
 * the part and what it did, and every waiter hears it; so does a system
 * that hangs up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "../../firmware-sim/appliance/hostlink.h"
#include "wse/link_io.h"
#include "wse/link_payloads.h"

enum fake_mode {
	FAKE_RIGHT,		/* each request answered as asked */
	FAKE_REVERSED,		/* two requests read, answered last first */
	FAKE_WRONG_QUEUE,	/* the answer carries the next queue */
	FAKE_UNKNOWN_TAG,	/* the answer carries a tag never sent */
	FAKE_TOO_LONG,		/* 64 bytes of answer for 8 asked */
	FAKE_SHUTDOWN,		/* a SHUTDOWN instead of an answer */
	FAKE_HANG_UP,		/* the connection closed instead of an answer */
};

struct fake_system {
	enum fake_mode mode;
	int listen_fd;
	char path[108];
	pthread_t thread;
	bool shutdown_answered;	/* the link answered our SHUTDOWN */
};

/* The answer's data: the request's tag, then its queue, in 8 bytes. */
static void answer(int fd, const struct wse_link_frame *req, uint16_t queue, uint32_t tag,
		   size_t extra)
{
	struct wse_link_frame f = *req;
	struct wse_link_status st;
	uint8_t data[64] = { 0 };
	struct iovec iov[2] = { { &st, sizeof(st) }, { data, 8 + extra } };
	struct wse_link_err err;

	memcpy(data, &req->tag, 4);
	memcpy(data + 4, &req->queue, 2);
	wse_link_status_encode(&st, WSE_LINK_OK);
	f.flags = WSE_LINK_F_RESPONSE;
	f.queue = queue;
	f.tag = tag;
	wse_link_send(fd, &f, iov, 2, 5000, &err);
}

static int next_request(int fd, struct wse_link_frame *f)
{
	struct wse_link_rx_rules rules = { .version = 1, .max_payload = 65536 };
	struct wse_link_err err;
	static __thread char buf[65536];

	return wse_link_recv(fd, &rules, f, buf, sizeof(buf), 10000, &err);
}

static void *fake_main(void *arg)
{
	struct fake_system *s = arg;
	struct wse_link_device_info d = {
		.version = 1, .caps = WSE_LINK_CAP_MEM, .max_payload = 65536,
		.version_min = 1, .version_max = 1, .device_id = 7, .wafer_width = 8,
		.wafer_height = 8, .sram_per_pe = 1024, .sram_total = 64 * 1024,
		.clock_khz = 1000, .num_queues = 4, .fw_version = "fake system",
	};
	struct wse_link_hello_reply reply;
	struct wse_link_status st;
	struct iovec iov[2] = { { &st, sizeof(st) }, { &reply, sizeof(reply) } };
	struct wse_link_frame f, g;
	struct wse_link_err err;
	int fd = accept(s->listen_fd, NULL, NULL);

	if (fd < 0)
		return NULL;
	if (next_request(fd, &f))
		goto out;
	wse_link_hello_reply_encode(&reply, &d);
	wse_link_status_encode(&st, WSE_LINK_OK);
	f.flags = WSE_LINK_F_RESPONSE;
	wse_link_send(fd, &f, iov, 2, 5000, &err);

	while (!next_request(fd, &f)) {
		if (f.flags & WSE_LINK_F_RESPONSE) {
			s->shutdown_answered = f.opcode == WSE_LINK_OP_SHUTDOWN;
			continue;
		}
		switch (s->mode) {
		case FAKE_RIGHT:
			answer(fd, &f, f.queue, f.tag, 0);
			break;
		case FAKE_REVERSED:
			if (next_request(fd, &g))
				goto out;
			answer(fd, &g, g.queue, g.tag, 0);
			answer(fd, &f, f.queue, f.tag, 0);
			break;
		case FAKE_WRONG_QUEUE:
			answer(fd, &f, f.queue + 1, f.tag, 0);
			break;
		case FAKE_UNKNOWN_TAG:
			answer(fd, &f, f.queue, f.tag + 100, 0);
			break;
		case FAKE_TOO_LONG:
			answer(fd, &f, f.queue, f.tag, 56);
			break;
		case FAKE_SHUTDOWN: {
			struct wse_link_frame sd = { .version = 1, .opcode = WSE_LINK_OP_SHUTDOWN };

			wse_link_send(fd, &sd, NULL, 0, 5000, &err);
			break;
		}
		case FAKE_HANG_UP:
			goto out;
		}
	}
out:
	close(fd);
	return NULL;
}

FIXTURE(hostlink) {
	struct fake_system sys;
	struct hostlink link;
	bool open;
	char text[256];
};

FIXTURE_SETUP(hostlink)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(self->sys.path, sizeof(self->sys.path), "/tmp/hostlink_test.%d.sock", getpid());
	memcpy(a.sun_path, self->sys.path, sizeof(self->sys.path));
	unlink(self->sys.path);
	self->sys.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, self->sys.listen_fd);
	ASSERT_EQ(0, bind(self->sys.listen_fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(self->sys.listen_fd, 1));
}

FIXTURE_TEARDOWN(hostlink)
{
	if (self->open) {
		hostlink_close(&self->link);
		pthread_join(self->sys.thread, NULL);
	}
	close(self->sys.listen_fd);
	unlink(self->sys.path);
}

/* Starts the fake system in @mode and opens the link to it. */
static void start(struct __test_metadata *_metadata, FIXTURE_DATA(hostlink) *self,
		  enum fake_mode mode)
{
	char addr[128];

	self->sys.mode = mode;
	ASSERT_EQ(0, pthread_create(&self->sys.thread, NULL, fake_main, &self->sys));
	snprintf(addr, sizeof(addr), "unix:%s", self->sys.path);
	ASSERT_EQ(0, hostlink_open(&self->link, "system 3", addr, 0, 5000, self->text,
				   sizeof(self->text))) TH_LOG("%s", self->text);
	self->open = true;
}

/* One MEM_READ on @queue with 8 bytes of room; its result. */
static int call(FIXTURE_DATA(hostlink) *self, uint16_t queue, uint8_t out[8], size_t *len)
{
	uint64_t args[2] = { 0, 8 };
	struct iovec iov = { args, sizeof(args) };

	return hostlink_call(&self->link, WSE_LINK_OP_MEM_READ, queue, &iov, 1, out, 8, len,
			     5000, self->text, sizeof(self->text));
}

/*
 * Against a system in @mode, a call on @queue fails with @err, and the
 * link is down with a reason that holds @what; the waiter's text names
 * the part.
 */
static void expect_call_ends_link(struct __test_metadata *_metadata,
				  FIXTURE_DATA(hostlink) *self, enum fake_mode mode,
				  uint16_t queue, int err, const char *what)
{
	char why[HOSTLINK_TEXT];
	uint8_t out[8];
	size_t len;

	start(_metadata, self, mode);
	EXPECT_EQ(err, call(self, queue, out, &len)) TH_LOG("%s", self->text);
	EXPECT_FALSE(hostlink_up(&self->link, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, what)) TH_LOG("reason: %s", why);
	EXPECT_NE(NULL, strstr(self->text, "system 3")) TH_LOG("text: %s", self->text);
	/* Nothing more goes out on it. */
	EXPECT_NE(0, call(self, queue, out, &len));
}

TEST_F(hostlink, an_answer_reaches_its_waiter)
{
	uint8_t out[8];
	uint32_t tag;
	uint16_t queue;
	size_t len = 0;

	start(_metadata, self, FAKE_RIGHT);
	ASSERT_EQ(0, call(self, 2, out, &len)) TH_LOG("%s", self->text);
	EXPECT_EQ(8, len);
	memcpy(&tag, out, 4);
	memcpy(&queue, out + 4, 2);
	EXPECT_EQ(2, queue);
	EXPECT_NE(0, tag);
	EXPECT_TRUE(hostlink_up(&self->link, NULL, 0));
}

TEST_F(hostlink, answers_out_of_turn_reach_their_own_waiters)
{
	uint64_t args[2] = { 0, 8 };
	struct iovec iov = { args, sizeof(args) };
	uint8_t out1[8], out2[8];
	uint32_t t1, t2, status, got;
	size_t len;

	start(_metadata, self, FAKE_REVERSED);
	ASSERT_EQ(0, hostlink_submit(&self->link, WSE_LINK_OP_MEM_READ, 1, &iov, 1, out1, 8, &t1));
	ASSERT_EQ(0, hostlink_submit(&self->link, WSE_LINK_OP_MEM_READ, 3, &iov, 1, out2, 8, &t2));
	ASSERT_EQ(0, hostlink_wait(&self->link, t1, 5000, &status, &len, self->text,
				   sizeof(self->text))) TH_LOG("%s", self->text);
	memcpy(&got, out1, 4);
	EXPECT_EQ(t1, got);
	ASSERT_EQ(0, hostlink_wait(&self->link, t2, 5000, &status, &len, self->text,
				   sizeof(self->text))) TH_LOG("%s", self->text);
	memcpy(&got, out2, 4);
	EXPECT_EQ(t2, got);
	EXPECT_TRUE(hostlink_up(&self->link, NULL, 0));
}

/* An answer must come on the queue the request went on: one that does
 * not is the system's fault, and its link is refused, not believed.
 */
TEST_F(hostlink, an_answer_on_the_wrong_queue_ends_the_link)
{
	expect_call_ends_link(_metadata, self, FAKE_WRONG_QUEUE, 2, -EPROTO,
			      "on queue 3, not the request's 0x11 on queue 2");
}

TEST_F(hostlink, an_answer_to_a_tag_never_sent_ends_the_link)
{
	expect_call_ends_link(_metadata, self, FAKE_UNKNOWN_TAG, 0, -EPROTO,
			      "which nothing waits for");
}

TEST_F(hostlink, an_answer_longer_than_asked_ends_the_link)
{
	expect_call_ends_link(_metadata, self, FAKE_TOO_LONG, 1, -EPROTO,
			      "64 bytes exceeds the 8 asked for");
}

/* A part that dies (its process gone) fails its waiter, not hangs it. */
TEST_F(hostlink, a_system_that_hangs_up_fails_its_waiter)
{
	expect_call_ends_link(_metadata, self, FAKE_HANG_UP, 1, -EPIPE, "the connection closed");
}

TEST_F(hostlink, a_shutdown_is_answered_and_ends_the_link)
{
	expect_call_ends_link(_metadata, self, FAKE_SHUTDOWN, 1, -ESHUTDOWN, "shut the link down");
	hostlink_close(&self->link);
	self->open = false;
	pthread_join(self->sys.thread, NULL);
	EXPECT_TRUE(self->sys.shutdown_answered);
}

TEST_HARNESS_MAIN
