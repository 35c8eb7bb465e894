// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-fuzz: random calls into the wse driver, syzkaller-style but seeded
 * and bounded: ioctls, io_uring commands, mmaps, control-plane queries,
 * closes and ring exits, made by several processes at once, each running
 * several threads on the same open files (and children that exit in the
 * middle of things), on every device the control plane lists. Arguments
 * are drawn near what is valid, and then, one time in eight, have a
 * random bit of the structure flipped. Threads of a process race each
 * other on the same objects; processes may run as two users, each of
 * whose data carries its canary, which the other must never read; real
 * programs are loaded, and requests the firmware blocks on are sent.
 *
 * This file is the parent: options, the devices' nodes for the users, a
 * watcher that keeps --keep-up devices attached and counts every link's
 * deaths, the kernel log (a report found stops the run with
 * --stop-on-report), and the report. The judge is the kernel's log (here
 * and in wsevm), the canaries and the links.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wse/ctl.h"
#include "wse/link_io.h"
#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse/wse.h"
#include "wse_fuzz.h"
#include "wse_genl.h"

#define MAX_PROCS	64
#define MAX_IMAGE	(64 << 20)

/*
 * What wsevm calls a bad kernel log, less the Call Trace lines of a
 * report; and SLUB's line before its "BUG <cache>", which says what byte
 * it found where.
 */
static const char kernel_report_re[] =
	"WARNING:|BUG:|Oops|KFENCE:|general protection fault|blocked for more than|UBSAN:|"
	"kernel BUG|refcount_t:|list_add corruption|list_del corruption|BUG [^ :]+ \\(|"
	"Poison overwritten|Redzone overwritten";

static volatile sig_atomic_t keeping = 1;

static void stop_keeping(int sig)
{
	(void)sig;
	keeping = 0;
}

/* Makes a device's node usable by the access group, as the udev rule does. */
static void node_for_group(const struct options *o, int minor)
{
	char path[64];
	struct stat st;
	int i;

	if (!o->nuids || minor < 0)
		return;
	snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
	/* The node may come a moment after the device. */
	for (i = 0; i < 50 && stat(path, &st); i++)
		usleep(20000);
	if (chown(path, 0, o->gid) || chmod(path, 0660))
		fprintf(stderr, "wse-fuzz: cannot give %s to group " WSE_ACCESS_GROUP ": %s\n", path,
			strerror(errno));
}

/* When the run began, for the times of link deaths. */
static int64_t run_start_ms;

/* Counts a death of link @w, with the reason the kernel gives. */
static void link_died(struct link_watch *w, const struct wse_dev_status *d)
{
	__atomic_fetch_add(&w->deaths, 1, __ATOMIC_RELAXED);
	w->death_ms = wse_link_now_ms() - run_start_ms;
	snprintf(w->reason, sizeof(w->reason), "%.79s", d && d->reason[0] ? d->reason : "device gone");
	w->up = false;
}

/* One look at every watched link; --keep-up ones are attached again. */
static void watch_links(const struct options *o, struct shared *sh, struct wse_ctl *ctl,
			bool attach)
{
	struct wse_dev_status d;
	unsigned int i;

	for (i = 0; i < sh->nlinks; i++) {
		struct link_watch *w = &sh->links[i];
		char err[256];
		int fd, ret;

		if (w->up) {
			ret = wse_ctl_get(ctl, w->index, false, &d);
			if (!ret && d.link_state == WSE_LINK_STATE_UP)
				continue;
			link_died(w, ret ? NULL : &d);
			if (w->kept)
				wse_ctl_detach(ctl, w->index);
		}
		if (!w->kept || !attach)
			continue;
		if (wse_ctl_connect(w->addr, &fd, err, sizeof(err))) {
			__atomic_fetch_add(&w->attach_failures, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (!wse_ctl_attach_fd(ctl, fd, 0, &d)) {
			w->index = d.index;
			w->up = true;
			node_for_group(o, d.accel_minor);
			__atomic_fetch_add(&sh->reattached, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add(&w->attach_failures, 1, __ATOMIC_RELAXED);
		}
		close(fd);
	}
}

/*
 * The watcher: every 100 ms until told to stop (SIGTERM) or @end_ms, looks
 * at each watched link, counts its deaths and attaches --keep-up devices
 * again; at the end detaches those.
 */
static void watcher(const struct options *o, struct shared *sh, int64_t end_ms)
{
	struct wse_ctl *ctl;
	unsigned int i;

	signal(SIGTERM, stop_keeping);
	if (wse_ctl_open(&ctl))
		return;
	watch_links(o, sh, ctl, true);
	__atomic_store_n(&sh->watcher_ready, 1, __ATOMIC_RELEASE);
	while (keeping && wse_link_now_ms() < end_ms && getppid() != 1) {
		usleep(100000);
		watch_links(o, sh, ctl, true);
	}
	/* A death in the last moments counts too; then the kept ones go. */
	watch_links(o, sh, ctl, false);
	for (i = 0; i < sh->nlinks; i++)
		if (sh->links[i].kept && sh->links[i].up)
			wse_ctl_detach(ctl, sh->links[i].index);
	wse_ctl_close(ctl);
}

/* The kernel log, from where it was when the run began. */
struct kmsg {
	int fd;
	regex_t re;
	uint64_t reports;
	unsigned int context;	/* lines still to print after a report */
	int64_t first_ms;
	uint64_t first_calls;
};

static uint64_t total_calls(const struct shared *sh)
{
	uint64_t n = 0;

	for (int i = 0; i < A_COUNT; i++)
		n += __atomic_load_n(&sh->calls[i], __ATOMIC_RELAXED);
	return n;
}

static void kmsg_open(struct kmsg *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0 && lseek(k->fd, 0, SEEK_END) < 0) {
		close(k->fd);
		k->fd = -1;
	}
	if (k->fd >= 0 && regcomp(&k->re, kernel_report_re, REG_EXTENDED | REG_NOSUB)) {
		close(k->fd);
		k->fd = -1;
	}
}

/* Reads what the kernel logged since the last look; reports are counted,
 * the first one printed with the lines after it.
 */
static void kmsg_poll(struct kmsg *k, struct shared *sh, const struct options *o, int64_t start)
{
	char rec[2048];
	int n;

	for (n = 0; k->fd >= 0 && n < 4096; n++) {
		ssize_t len = read(k->fd, rec, sizeof(rec) - 1);
		unsigned long long us = 0;
		char *msg, *nl;

		if (len < 0 && errno == EPIPE)
			continue;	/* overwritten before we read it: go on */
		if (len <= 0)
			break;
		rec[len] = 0;
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		*msg++ = 0;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		sscanf(rec, "%*u,%*u,%llu", &us);
		if (!regexec(&k->re, msg, 0, NULL, 0)) {
			if (!k->reports++) {
				k->first_ms = wse_link_now_ms() - start;
				k->first_calls = total_calls(sh);
				printf("wse-fuzz: KERNEL REPORT after %llu calls, %.1f s into the run:\n",
				       (unsigned long long)k->first_calls,
				       (double)k->first_ms / 1000.0);
				k->context = 16;
				if (o->stop_on_report)
					__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
			}
		}
		if (k->context) {
			/* The kernel escapes a newline inside a record as \x0a. */
			char *esc = strstr(msg, "\\x0a");

			if (esc && !esc[4])
				*esc = 0;
			k->context--;
			printf("  [%5llu.%06llu] %s\n", us / 1000000, us % 1000000, msg);
		}
	}
}

static void usage(FILE *out)
{
	fprintf(out,
"usage: wse-fuzz [options]\n"
"\n"
"Random, seeded calls into the wse driver: ioctls, io_uring commands, mmaps,\n"
"control-plane queries, closes, ring exits and children that exit mid-call,\n"
"on every device the control plane lists, from --procs processes of\n"
"--threads threads each. The threads of a process share its open files and\n"
"everything on them, and race each other on the same objects. Run it in the\n"
"test guest; the kernel log is the verdict (tools/wsevm fails the run on any\n"
"WARN, BUG, KFENCE or SLUB report or hung task, and wse-fuzz watches it too).\n"
"\n"
"  --calls N          calls in all (default 10000)\n"
"  --procs N          processes making them at once (default 4)\n"
"  --threads N        threads per process, sharing its files (default 4);\n"
"                     1 is the process-only fuzzing of before\n"
"  --seed N           seed (default 1); the same seed draws the same calls\n"
"                     (the threads' interleaving is the kernel's)\n"
"  --time-limit SEC   stop drawing after SEC seconds (default 600)\n"
"  --race-ms MS       a race (threads of a process running two calls against\n"
"                     each other on one file) lasts up to MS ms (default 1500)\n"
"  --keep-up ADDR     keep a device attached to the firmware at ADDR,\n"
"                     attaching it again whenever its link dies (root)\n"
"  --hostile ADDR     as --keep-up, for a peer that lies (wse-hostile-peer):\n"
"                     its link deaths are expected, and another user's data\n"
"                     read from it is reported but does not fail the run\n"
"  --require-link-up ADDR\n"
"                     fail if the link of the device at ADDR (a --keep-up\n"
"                     address, or the peer of a device attached before the\n"
"                     run, as wsectl shows it) dies during the run\n"
"  --uids U1,U2...    run the processes as these users in turn (root; each\n"
"                     1..65535), in group " WSE_ACCESS_GROUP ", whose devices' nodes\n"
"                     become root:" WSE_ACCESS_GROUP " 0660; each puts its canary into\n"
"                     everything it sends and fails the run if it reads\n"
"                     another's (up to %d)\n"
"  --program FILE     a .wsep program (e.g. models/fc-mnist compiled for the\n"
"                     device's wafer) the processes load into slots 1..%d,\n"
"                     its weights made their canaries; without it, loads are\n"
"                     only random bytes\n"
"  --stop-on-report   stop the run at the first kernel report\n"
"  --help\n"
"\n"
"--keep-up and --hostile take up to %d addresses together.\n"
"\n"
"Exit status: 0 done and clean; 1 a process did not finish in time (a call\n"
"hung), could not start or died of a signal, a canary of another user was\n"
"read, the kernel log showed a report, or a --require-link-up link died;\n"
"2 usage.\n", MAX_UIDS, FUZZ_SLOTS, MAX_ADDRS);
}

static int parse_uids(const char *s, struct options *o)
{
	const char *p = s;
	char one[16];
	uint64_t v;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (o->nuids == MAX_UIDS || !n || n >= sizeof(one)) {
			fprintf(stderr, "wse-fuzz: --uids '%s': up to %d uids, comma-separated\n", s,
				MAX_UIDS);
			return -1;
		}
		memcpy(one, p, n);
		one[n] = 0;
		if (wse_opt_u64("wse-fuzz", "--uids", one, 1, 65535, WSE_NUM_PLAIN, &v))
			return -1;
		o->uids[o->nuids++] = (uid_t)v;
		p += n + (p[n] == ',');
	}
	return o->nuids ? 0 : -1;
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "calls", required_argument, NULL, 'c' },
		{ "procs", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'T' },
		{ "seed", required_argument, NULL, 's' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "race-ms", required_argument, NULL, 'r' },
		{ "keep-up", required_argument, NULL, 'k' },
		{ "hostile", required_argument, NULL, 'H' },
		{ "require-link-up", required_argument, NULL, 'R' },
		{ "uids", required_argument, NULL, 'u' },
		{ "program", required_argument, NULL, 'P' },
		{ "stop-on-report", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	*o = (struct options){ .calls = 10000, .seed = 1, .procs = 4, .threads = 4,
			       .time_limit_s = 600, .race_ms = 1500 };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (wse_opt_u64("wse-fuzz", "--calls", optarg, 1, 100000000, WSE_NUM_PLAIN,
					&o->calls))
				return -1;
			break;
		case 'p':
			if (wse_opt_u64("wse-fuzz", "--procs", optarg, 1, MAX_PROCS, WSE_NUM_PLAIN, &v))
				return -1;
			o->procs = (unsigned int)v;
			break;
		case 'T':
			if (wse_opt_u64("wse-fuzz", "--threads", optarg, 1, MAX_THREADS, WSE_NUM_PLAIN,
					&v))
				return -1;
			o->threads = (unsigned int)v;
			break;
		case 's':
			if (wse_opt_u64("wse-fuzz", "--seed", optarg, 0, UINT64_MAX, WSE_NUM_PLAIN,
					&o->seed))
				return -1;
			break;
		case 't':
			if (wse_opt_u64("wse-fuzz", "--time-limit", optarg, 1, 86400, WSE_NUM_PLAIN,
					&v))
				return -1;
			o->time_limit_s = (int)v;
			break;
		case 'r':
			if (wse_opt_u64("wse-fuzz", "--race-ms", optarg, 1, 60000, WSE_NUM_PLAIN, &v))
				return -1;
			o->race_ms = (unsigned int)v;
			break;
		case 'k':
		case 'H':
			if (o->nkeep_up == MAX_ADDRS) {
				fprintf(stderr, "wse-fuzz: at most %d --keep-up and --hostile addresses\n",
					MAX_ADDRS);
				return -1;
			}
			o->keep_hostile[o->nkeep_up] = c == 'H';
			o->keep_up[o->nkeep_up++] = optarg;
			break;
		case 'R':
			if (o->nrequire_up == MAX_ADDRS) {
				fprintf(stderr, "wse-fuzz: at most %d --require-link-up addresses\n",
					MAX_ADDRS);
				return -1;
			}
			o->require_up[o->nrequire_up++] = optarg;
			break;
		case 'u':
			if (parse_uids(optarg, o))
				return -1;
			break;
		case 'P':
			o->program = optarg;
			break;
		case 'S':
			o->stop_on_report = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "wse-fuzz: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wse-fuzz: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* The whole of --program, read as root before anyone drops privileges. */
static uint8_t *read_program(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && n <= MAX_IMAGE &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/*
 * The links to watch: the --keep-up ones, and every device up before the
 * run (not ours to attach again: its deaths are only counted).
 */
static int links_setup(const struct options *o, struct shared *sh)
{
	struct wse_dev_status *list = NULL;
	struct wse_ctl *ctl;
	size_t n = 0, i;
	unsigned int k, r;

	for (k = 0; k < o->nkeep_up; k++) {
		struct link_watch *w = &sh->links[sh->nlinks++];

		snprintf(w->addr, sizeof(w->addr), "%s", o->keep_up[k]);
		w->kept = true;
		w->hostile = o->keep_hostile[k];
	}
	if (!wse_ctl_open(&ctl)) {
		if (!wse_ctl_list(ctl, &list, &n)) {
			for (i = 0; i < n && sh->nlinks < MAX_LINKS; i++) {
				struct link_watch *w = &sh->links[sh->nlinks];

				node_for_group(o, list[i].accel_minor);
				if (list[i].link_state != WSE_LINK_STATE_UP)
					continue;
				snprintf(w->addr, sizeof(w->addr), "%s", list[i].peer);
				w->index = list[i].index;
				w->up = true;
				sh->nlinks++;
			}
			free(list);
		}
		wse_ctl_close(ctl);
	}
	for (r = 0; r < o->nrequire_up; r++) {
		for (k = 0; k < sh->nlinks && strcmp(sh->links[k].addr, o->require_up[r]); k++)
			;
		if (k == sh->nlinks) {
			fprintf(stderr,
				"wse-fuzz: --require-link-up %s: neither a --keep-up address nor the peer of an attached device\n",
				o->require_up[r]);
			return -1;
		}
		sh->links[k].required = true;
	}
	return 0;
}

/* Prints one line of a /proc file, or its whole (bounded) text. */
static void print_proc_file(const char *path, const char *prefix)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int n;

	for (n = 0; f && n < 40 && fgets(line, sizeof(line), f); n++)
		fprintf(stderr, "%s%s%s", prefix, line, strchr(line, '\n') ? "" : "\n");
	if (f)
		fclose(f);
}

/* A process's state and number of threads, from its status. */
static void status_lines(pid_t pid, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int n;

	for (n = 0; f && n < 100 && fgets(line, sizeof(line), f); n++)
		if (!strncmp(line, "State:", 6) || !strncmp(line, "Threads:", 8))
			fprintf(stderr, "wse-fuzz: process %d: %s", (int)pid, line);
	if (f)
		fclose(f);
}

/* A thread's state and CPU ticks in user and kernel mode, from its stat. */
static void thread_times(const char *dir, char *state, unsigned long long *ut,
			 unsigned long long *st)
{
	char path[192], buf[1024], *p;
	FILE *f;

	*state = '?';
	*ut = *st = 0;
	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	/* After the name in parentheses: state, then the 11th and 12th fields on. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, ut,
		       st);
	fclose(f);
}

/*
 * Where each thread of a hung worker is (root only): its state, whether
 * it spends a second in user or kernel mode, its system call, where it
 * sleeps and its kernel stack. One second is sampled for all threads at
 * once, so that the report comes before whoever runs us gives up.
 */
static void where_it_waits(pid_t pid)
{
	enum { MAX_SEEN = MAX_THREADS + 16 };
	static char tids[MAX_SEEN][16];
	unsigned long long ut[MAX_SEEN][2], st[MAX_SEEN][2];
	char path[192], dir[64], tdir[128], state[MAX_SEEN][2];
	struct dirent *e;
	int i, n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status_lines(pid, path);
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "wse-fuzz: process %d: %s: %s\n", (int)pid, dir, strerror(errno));
		return;
	}
	while (n < MAX_SEEN && (e = readdir(d)))
		if (e->d_name[0] != '.')
			snprintf(tids[n++], sizeof(tids[0]), "%.15s", e->d_name);
	closedir(d);
	for (i = 0; i < n; i++) {
		snprintf(tdir, sizeof(tdir), "%.63s/%.15s", dir, tids[i]);
		thread_times(tdir, &state[i][0], &ut[i][0], &st[i][0]);
	}
	sleep(1);
	for (i = 0; i < n; i++) {
		snprintf(tdir, sizeof(tdir), "%.63s/%.15s", dir, tids[i]);
		thread_times(tdir, &state[i][1], &ut[i][1], &st[i][1]);
		/* Its name: an io_uring worker (iou-wrk-PID) is a thread too. */
		fprintf(stderr, "wse-fuzz: process %d, thread %s is ", (int)pid, tids[i]);
		snprintf(path, sizeof(path), "%s/comm", tdir);
		print_proc_file(path, "");
		fprintf(stderr,
			"wse-fuzz: process %d, thread %s: state %c, in a second %llu ticks in user mode and %llu in the kernel; system call: ",
			(int)pid, tids[i], state[i][1], ut[i][1] - ut[i][0], st[i][1] - st[i][0]);
		snprintf(path, sizeof(path), "%s/syscall", tdir);
		print_proc_file(path, "");
		fprintf(stderr, "    sleeps in: ");
		snprintf(path, sizeof(path), "%s/wchan", tdir);
		print_proc_file(path, "");
		snprintf(path, sizeof(path), "%s/stack", tdir);
		print_proc_file(path, "    ");
	}
}

/* The report's lines about the links; the number of required ones that died. */
static unsigned int report_links(const struct shared *sh)
{
	unsigned int i, bad = 0;

	for (i = 0; i < sh->nlinks; i++) {
		const struct link_watch *w = &sh->links[i];

		char last[128] = "";

		if (w->deaths)
			snprintf(last, sizeof(last), ", the last %.1f s in: %s",
				 (double)w->death_ms / 1000.0, w->reason);
		printf("  link %-28s %-24s %llu deaths%s%s%s\n", w->addr,
		       w->hostile ? "(hostile, kept up)" : w->kept ? "(real firmware, kept up)" :
		       "(attached before the run)",
		       (unsigned long long)w->deaths, last, w->required ? " [required up]" : "",
		       w->attach_failures ? " (attaches failed)" : "");
		if (w->required && w->deaths) {
			fprintf(stderr, "wse-fuzz: the link to %s died %llu times%s\n",
				w->addr, (unsigned long long)w->deaths, last);
			bad++;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct shared *sh;
	struct options o;
	struct kmsg km;
	pid_t pids[MAX_PROCS], keeper = 0;
	bool finished[MAX_PROCS] = { false };
	uint8_t *image = NULL;
	size_t image_len = 0;
	int64_t start, end, grace;
	bool stopped = false;
	unsigned int i, done = 0, failed = 0, dead_links;
	uint64_t total;
	int ret, status;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	/* Each line as it comes: a long run in the guest shows its progress. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (o.nuids) {
		const struct group *gr = getgrnam(WSE_ACCESS_GROUP);

		if (geteuid() || !gr) {
			fprintf(stderr, "wse-fuzz: --uids needs root and a group '%s'\n",
				WSE_ACCESS_GROUP);
			return 2;
		}
		o.gid = gr->gr_gid;
	}
	if (o.program && !(image = read_program(o.program, &image_len))) {
		fprintf(stderr, "wse-fuzz: cannot read the program %s\n", o.program);
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	if (links_setup(&o, sh))
		return 2;
	kmsg_open(&km);
	start = wse_link_now_ms();
	run_start_ms = start;
	end = start + (int64_t)o.time_limit_s * 1000;
	if (sh->nlinks) {
		keeper = fork();
		if (keeper == 0) {
			watcher(&o, sh, end + 60000);
			_exit(0);
		}
		/* The first attaches, before anyone lists the devices. */
		for (i = 0; i < 100 && keeper > 0 && !__atomic_load_n(&sh->watcher_ready,
								       __ATOMIC_ACQUIRE); i++)
			usleep(50000);
	}
	for (i = 0; i < o.procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker(i, &o, sh, image, image_len, end));
	}
	/* Every process must end soon after the time limit: a call that does not is hung. */
	grace = end + 60000;
	while (done < o.procs && wse_link_now_ms() < grace) {
		pid_t pid = waitpid(-1, &status, WNOHANG);

		kmsg_poll(&km, sh, &o, start);
		/* Stopped at a report: every call ends within seconds, or hangs. */
		if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) && !stopped) {
			stopped = true;
			if (grace > wse_link_now_ms() + 15000)
				grace = wse_link_now_ms() + 15000;
		}
		if (pid <= 0) {
			usleep(100000);
			continue;
		}
		for (i = 0; i < o.procs; i++) {
			if (pids[i] != pid)
				continue;
			finished[i] = true;
			done++;
			if (WIFSIGNALED(status))
				fprintf(stderr, "wse-fuzz: process %u died of signal %d (%s)\n", i,
					WTERMSIG(status), strsignal(WTERMSIG(status)));
			else if (WEXITSTATUS(status))
				fprintf(stderr, "wse-fuzz: process %u could not start\n", i);
			failed += !WIFEXITED(status) || WEXITSTATUS(status);
		}
	}
	/* Where a hung process waits, before the detaches below free it. */
	for (i = 0; i < o.procs && done < o.procs; i++)
		if (!finished[i])
			where_it_waits(pids[i]);
	if (keeper > 0) {
		kill(keeper, SIGTERM);
		waitpid(keeper, NULL, 0);
	}
	/* What the last calls and the detaches made the kernel say. */
	usleep(200000);
	kmsg_poll(&km, sh, &o, start);
	total = total_calls(sh);
	printf("wse-fuzz: %llu calls by %u processes x %u threads per file table in %.1f s (seed %llu), %llu with a flipped bit, %llu attaches\n",
	       (unsigned long long)total, o.procs, o.threads,
	       (double)(wse_link_now_ms() - start) / 1000.0, (unsigned long long)o.seed,
	       (unsigned long long)sh->mutated, (unsigned long long)sh->reattached);
	for (i = 0; i < A_COUNT; i++)
		printf("  %-14s %llu\n", action_names[i], (unsigned long long)sh->calls[i]);
	printf("  threads per fd: %u (at most %llu inside calls on one file at once); %llu races, %llu calls in them\n",
	       o.threads, (unsigned long long)sh->max_users, (unsigned long long)sh->races,
	       (unsigned long long)sh->race_calls);
	printf("  uids:");
	if (!o.nuids)
		printf(" %u (all processes)", (unsigned int)getuid());
	for (i = 0; i < o.nuids; i++)
		printf(" %u", (unsigned int)o.uids[i]);
	printf("; program %s: %llu loads (%llu completed, %llu closed early), %llu canary weight writes, %llu slots claimed by probes, %llu blocking requests\n",
	       o.program ? o.program : "(none)", (unsigned long long)sh->loads,
	       (unsigned long long)sh->loads_done, (unsigned long long)sh->early_closes,
	       (unsigned long long)sh->params_canary, (unsigned long long)sh->claims,
	       (unsigned long long)sh->blocking);
	printf("  canary checks: %llu (%llu bytes), violations: %llu (and %llu on hostile devices, not counted)\n",
	       (unsigned long long)sh->canary_checks, (unsigned long long)sh->canary_bytes,
	       (unsigned long long)sh->violations, (unsigned long long)sh->hostile_violations);
	dead_links = report_links(sh);
	if (km.fd >= 0)
		printf("  kernel log: %llu lines of reports%s\n", (unsigned long long)km.reports,
		       km.reports ? " (the first printed above)" : "");
	else
		printf("  kernel log: not watched (/dev/kmsg cannot be read)\n");
	if (done < o.procs) {
		fprintf(stderr, "wse-fuzz: %u of %u processes still running %s: a call hangs\n",
			o.procs - done, o.procs,
			stopped ? "15 s after the stop at the kernel report" :
			"a minute after the time limit");
		for (i = 0; i < o.procs; i++)
			if (!finished[i] && waitpid(pids[i], &status, WNOHANG) == 0)
				kill(pids[i], SIGKILL);
			else if (!finished[i])
				fprintf(stderr, "wse-fuzz: process %u ended once the devices were detached\n",
					i);
		return 1;
	}
	if (failed)
		fprintf(stderr, "wse-fuzz: %u of %u processes failed\n", failed, o.procs);
	if (sh->violations)
		fprintf(stderr, "wse-fuzz: %llu reads of another user's canary\n",
			(unsigned long long)sh->violations);
	if (km.reports)
		fprintf(stderr, "wse-fuzz: the kernel log shows %llu lines of reports\n",
			(unsigned long long)km.reports);
	free(image);
	return failed || sh->violations || km.reports || dead_links ? 1 : 0;
}
