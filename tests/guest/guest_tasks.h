/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the project's tasks are, for a guest test that timed out: every
 * thread of every process whose name starts with "wse" (the tools, the
 * firmware simulators, the driver's receive threads) with its state, CPU
 * time, system call, wait channel and kernel stack. A hang then says where
 * it hung, in the test's own output, before the test kills what hangs.
 */
#ifndef GUEST_TASKS_H
#define GUEST_TASKS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* At most @max_lines of @path, each after @indent. */
static inline void guest_tasks_print_file(const char *path, const char *indent, int max_lines)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n;

	if (!f) {
		fprintf(stderr, "%s(%s: %s)\n", indent, path, strerror(errno));
		return;
	}
	for (n = 0; n < max_lines && fgets(line, sizeof(line), f); n++)
		fprintf(stderr, "%s%s%s", indent, line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

/* One thread: its name, state and ticks (from stat), call, wait and stack. */
static inline void guest_tasks_print_thread(const char *tdir)
{
	char path[400], stat[1024] = "", *p;
	unsigned long long ut = 0, st = 0;
	char state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "%.300s/stat", tdir);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(stat, sizeof(stat), f))
			stat[0] = 0;
		fclose(f);
	}
	/* After the name in parentheses: state, then utime and stime. */
	p = strrchr(stat, ')');
	if (p)
		sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &ut,
		       &st);
	fprintf(stderr, "  task %s: state %c, %llu user + %llu kernel ticks, %.*s\n", tdir, state,
		ut, st, p ? (int)(p - stat + 1) : 0, stat);
	snprintf(path, sizeof(path), "%.300s/syscall", tdir);
	guest_tasks_print_file(path, "    syscall: ", 1);
	snprintf(path, sizeof(path), "%.300s/wchan", tdir);
	guest_tasks_print_file(path, "    wchan: ", 1);
	snprintf(path, sizeof(path), "%.300s/stack", tdir);
	guest_tasks_print_file(path, "    ", 24);
}

/* Every thread of every "wse*" process, bounded in count. */
static inline void guest_tasks_dump(const char *why)
{
	char comm[64], path[64];
	struct dirent *e, *t;
	DIR *proc, *task;
	int procs = 0;
	FILE *f;

	fprintf(stderr, "guest: the project's tasks, %s:\n", why);
	guest_tasks_print_file("/proc/loadavg", "  load: ", 1);
	proc = opendir("/proc");
	while (proc && procs < 64 && (e = readdir(proc))) {
		int threads = 0;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.32s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		if (strncmp(comm, "wse", 3))
			continue;
		procs++;
		snprintf(path, sizeof(path), "/proc/%.32s/task", e->d_name);
		task = opendir(path);
		while (task && threads < 80 && (t = readdir(task))) {
			char tdir[128];

			if (t->d_name[0] == '.')
				continue;
			threads++;
			snprintf(tdir, sizeof(tdir), "%.63s/%.32s", path, t->d_name);
			guest_tasks_print_thread(tdir);
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
}

#endif /* GUEST_TASKS_H */
