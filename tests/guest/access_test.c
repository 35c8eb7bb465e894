// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device access without root, as an installed system has it: the guest
 * image applies packaging/60-wse.rules (through busybox mdev, as udev
 * would) and has a user "wse" in the rule's group and "nobody" outside
 * it (tools/wsevm, Documentation/guest.rst). A member trains, in both
 * execution modes, on an appliance (pipelined on one of its systems;
 * training needs no raw device memory, which the driver keeps for
 * CAP_SYS_ADMIN); a non-member is told which group to join; a node the
 * rule never reached is named as such, with the rule to install.
 */
#include <grp.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse_guest.h"

#define OUT_MAX		(64 << 10)
#define FMNIST		"/usr/share/datasets/fashion-mnist"
#define TRAIN		"wsetrain models/fc-mnist --devices %u --steps 20 --train-limit 2560 " \
			"--test-limit 500 --report 10"

FIXTURE(access) {
	struct guest_peer fw;
	struct wse_ctl *ctl;
	struct wse_dev_status dev;
	char node[64];
	gid_t gid;
	char *out;
};

FIXTURE_SETUP(access)
{
	const struct group *gr = getgrnam(WSE_ACCESS_GROUP);
	int64_t until = guest_now_ms() + 5000;
	char addr[160];
	struct stat st;

	ASSERT_NE(NULL, gr) TH_LOG("no group '%s' in the guest's /etc/group", WSE_ACCESS_GROUP);
	self->gid = gr->gr_gid;
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	/* The appliance wsevm started on the host trains at native speed. */
	self->fw.pid = 0;
	if (!guest_host_appliance(addr)) {
		ASSERT_EQ(0, guest_peer_start(&self->fw, "wse-appliance", "--systems", "1",
					      "--fw-arg=--wafer=64x64", "--log-level", "warn",
					      NULL));
		snprintf(addr, sizeof(addr), "%s", self->fw.addr);
	}
	ASSERT_EQ(0, guest_attach(self->ctl, addr, 0, &self->dev));
	snprintf(self->node, sizeof(self->node), "/dev/accel/accel%d", self->dev.accel_minor);
	/* The rule is applied after the node appears, as udev does it. */
	while (!stat(self->node, &st) && st.st_gid != self->gid && guest_now_ms() < until)
		usleep(20000);
}

FIXTURE_TEARDOWN(access)
{
	wse_ctl_detach(self->ctl, self->dev.index);
	if (self->fw.pid > 0)
		guest_peer_stop(&self->fw, SIGKILL);
	wse_ctl_close(self->ctl);
	free(self->out);
}

TEST_F(access, the_rule_gives_the_node_to_the_group)
{
	struct stat st;

	ASSERT_EQ(0, stat(self->node, &st));
	EXPECT_EQ(self->gid, st.st_gid);
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	/* and leaves every other node as the kernel made it. */
	ASSERT_EQ(0, stat("/dev/null", &st));
	EXPECT_EQ(0666, st.st_mode & 07777);
}

TEST_F_TIMEOUT(access, a_member_of_the_group_trains, 300)
{
	static const char *const modes[] = { "pipelined", "weight_streaming" };
	struct stat st;
	int rc;

	if (stat(FMNIST "/train-images-idx3-ubyte.gz", &st))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	rc = guest_run(self->out, OUT_MAX, "su -s /bin/sh wse -c 'id -u'");
	ASSERT_EQ(0, rc) TH_LOG("%s", self->out);
	ASSERT_STREQ("1000\n", self->out);
	for (int i = 0; i < 2; i++) {
		rc = guest_run(self->out, OUT_MAX, "su -s /bin/sh wse -c '" TRAIN " --mode %s'",
			       self->dev.index, modes[i]);
		EXPECT_EQ(0, rc) TH_LOG("%s: %s", modes[i], self->out);
		EXPECT_NE(NULL, strstr(self->out, "trained to step 20")) TH_LOG("%s", self->out);
	}
}

TEST_F(access, a_non_member_is_told_which_group_to_join)
{
	int rc = guest_run(self->out, OUT_MAX, "su -s /bin/sh nobody -c '" TRAIN "'",
			   self->dev.index);

	EXPECT_EQ(1, rc) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "Permission denied")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "join it with 'sudo usermod -aG " WSE_ACCESS_GROUP
			       " nobody'")) TH_LOG("%s", self->out);
}

TEST_F(access, a_node_the_rule_missed_names_the_rule)
{
	int rc;

	/* As the driver leaves it when no rule applies: root's, 0600. */
	ASSERT_EQ(0, chown(self->node, 0, 0));
	ASSERT_EQ(0, chmod(self->node, 0600));
	rc = guest_run(self->out, OUT_MAX, "su -s /bin/sh wse -c '" TRAIN "'", self->dev.index);
	EXPECT_EQ(1, rc) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "is mode 0600, group 0: the udev rule"))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "60-wse.rules")) TH_LOG("%s", self->out);
	/* wse-hello, an example of the library, says the same. */
	rc = guest_run(self->out, OUT_MAX, "su -s /bin/sh wse -c 'wse-hello %u'",
		       self->dev.index);
	EXPECT_EQ(1, rc);
	EXPECT_NE(NULL, strstr(self->out, "60-wse.rules")) TH_LOG("%s", self->out);
}

/* What the control plane tells an ordinary user (1000): exit 0, or what failed. */
static int control_plane_as_a_user(void *p)
{
	const struct wse_dev_status *want = p;
	struct wse_dev_status d;
	struct wse_ctl *ctl;

	if (wse_ctl_open(&ctl))
		return 10;
	/* What the device is and whether its link is up: yes. */
	if (wse_ctl_get(ctl, want->index, false, &d) || d.link_state != want->link_state ||
	    d.wafer_width != want->wafer_width)
		return 11;
	/* Where its firmware is, and the counters that move with every job: no. */
	if (d.peer[0] || d.has_stats)
		return 12;
	if (wse_ctl_get(ctl, want->index, true, &d) || d.peer[0] || d.has_stats)
		return 13;
	/* The events (peers, reasons, timeouts) are the administrator's. */
	if (wse_ctl_subscribe(ctl) != -EPERM)
		return 14;
	wse_ctl_close(ctl);
	return 0;
}

/*
 * The generic netlink family: any local user lists the devices, but the
 * peer, the reason a link went down, the counters and the events are for
 * CAP_NET_ADMIN only (issue 25, item 5): they would let one user watch
 * another's jobs.
 */
TEST_F(access, the_control_plane_tells_a_user_only_what_a_device_is)
{
	struct wse_dev_status d;

	ASSERT_EQ(0, wse_ctl_get(self->ctl, self->dev.index, true, &d));
	EXPECT_NE(0, d.peer[0]);
	EXPECT_TRUE(d.has_stats);
	EXPECT_EQ(0, wse_ctl_subscribe(self->ctl));
	EXPECT_EQ(0, guest_as_user(1000, self->gid, 20000, control_plane_as_a_user, &d));
}

TEST_HARNESS_MAIN
