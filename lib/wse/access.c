// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Why an accel node refused to open, and what to do about it. The
 * installed udev rule (60-wse.rules) gives /dev/accel/accel* of this
 * driver to group "render", mode 0660 (Documentation/libwse.rst, "Device
 * access"); a node still root's and 0600 means the rule, or its group, is
 * missing. A node of the right group that a user still cannot open means
 * the user is not in that group, or joined it after logging in.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse_internal.h"

/* Is the calling process in group @gid now (primary or supplementary)? */
static bool in_group_now(gid_t gid)
{
	gid_t groups[256];
	int n;

	if (getegid() == gid)
		return true;
	n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* Does the group database list @user in @gr (as a later login would see)? */
static bool listed_in(const struct group *gr, const char *user)
{
	for (char **m = gr->gr_mem; m && *m; m++)
		if (!strcmp(*m, user))
			return true;
	return false;
}

/* What to do when the node has no group that may open it: the rule is missing. */
static void rule_missing(char *buf, size_t len, const char *path, const struct stat *st)
{
	const char *has_group = getgrnam(WSE_ACCESS_GROUP) ? "" :
		"; the group does not exist either: 'systemd-sysusers' creates it from "
		"/usr/lib/sysusers.d/wse.conf (or 'groupadd --system " WSE_ACCESS_GROUP "')";

	snprintf(buf, len,
		 "%s is mode %04o, group %u: the udev rule that gives it to group '"
		 WSE_ACCESS_GROUP "' (60-wse.rules, which 'make install' puts in "
		 "/usr/lib/udev/rules.d) is not applied%s; install it, run "
		 "'udevadm trigger --subsystem-match=accel', and join the group",
		 path, (unsigned int)(st->st_mode & 07777), (unsigned int)st->st_gid, has_group);
}

int wse_access_hint(const char *spec, char *buf, size_t len)
{
	char path[WSE_NODE_PATH_MAX];
	const struct passwd *pw = getpwuid(geteuid());
	const char *user = pw ? pw->pw_name : "you";
	const struct group *gr;
	struct stat st;
	int index, ret;

	if (!len)
		return -EINVAL;
	buf[0] = 0;
	ret = wse_node_path(spec, path, sizeof(path), &index);
	if (ret)
		return ret;
	if (stat(path, &st))
		return -errno;
	gr = getgrgid(st.st_gid);
	if (st.st_gid == 0 || !(st.st_mode & 0060) || !gr) {
		rule_missing(buf, len, path, &st);
		return 0;
	}
	if (!in_group_now(st.st_gid) && listed_in(gr, user)) {
		snprintf(buf, len,
			 "%s belongs to group '%s', which %s joined after this session began: "
			 "log in again (or run 'newgrp %s')", path, gr->gr_name, user, gr->gr_name);
		return 0;
	}
	if (!in_group_now(st.st_gid)) {
		snprintf(buf, len,
			 "%s belongs to group '%s' (mode %04o): join it with 'sudo usermod -aG %s %s', "
			 "then log in again", path, gr->gr_name, (unsigned int)(st.st_mode & 07777),
			 gr->gr_name, user);
		return 0;
	}
	snprintf(buf, len,
		 "%s is mode %04o, group '%s', and %s is in that group: the group may not "
		 "write it, or a security module refused; 'ls -l %s' and the system log say more",
		 path, (unsigned int)(st.st_mode & 07777), gr->gr_name, user, path);
	return 0;
}
