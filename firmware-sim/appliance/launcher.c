// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-appliance: starts an appliance and watches it. N systems (wsefwd,
 * on unix sockets in the run directory) or the systems a config file
 * names (on other machines too), MemoryX, SwarmX, an input worker and,
 * once they listen, the coordinator on --listen. A part that dies is
 * started again (the coordinator reconnects to it when a job next needs
 * it), and what each part is and its pid is kept in RUN_DIR/parts for
 * people and tests. SIGTERM or SIGINT stop them all.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wse/usage.h"
#include "../fwd_log.h"
#include "coord.h"
#include "memoryx_spill.h"
#include "roles.h"
#include "svc.h"
#include "wse/link_payloads.h"
#include "wse/link_region.h"
#include "wse/numparse.h"
#include "wse_version.h"

#define PARTS_MAX	(WSE_LINK_APPLIANCE_SYSTEMS_MAX + 4)
#define ARGS_MAX	64
#define START_MS	10000
#define RESTARTS_MAX	20	/* per part; beyond, it stays down */

struct part {
	char what[32];			/* "system 0", "memoryx" */
	char *argv[ARGS_MAX];
	int argc;
	char sock[PATH_MAX];		/* its unix socket, to wait for (empty: none) */
	pid_t pid;
	int restarts;
};

struct launcher {
	unsigned int systems;
	const char *listen, *port_file, *config, *data_root, *log_level;
	const char *remote[WSE_LINK_APPLIANCE_SYSTEMS_MAX];
	unsigned int nremote;
	const char *fw_args[ARGS_MAX];
	int nfw_args;
	uint64_t capacity, mx_ram;	/* mx_ram 0: all of the capacity */
	const char *mx_store;		/* --memoryx-store DIR */
	uint64_t max_program;		/* 0: the parts' own default */
	const char *leaves;		/* checked by the coordinator */
	bool restart, no_regions;
	char dir[PATH_MAX / 2];
	bool made_dir;
	char self[PATH_MAX], wsefwd[PATH_MAX];
	struct part part[PARTS_MAX];
	int nparts;
};

static void add_arg(struct part *p, const char *fmt, const char *s)
{
	char buf[PATH_MAX + 64];

	if (p->argc + 1 >= ARGS_MAX)
		return;
	snprintf(buf, sizeof(buf), fmt, s);
	p->argv[p->argc++] = strdup(buf);
	p->argv[p->argc] = NULL;
}

static struct part *new_part(struct launcher *l, const char *what, const char *binary)
{
	struct part *p = &l->part[l->nparts++];

	snprintf(p->what, sizeof(p->what), "%s", what);
	add_arg(p, "%s", binary);
	return p;
}

static void write_parts(struct launcher *l)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
	FILE *f;

	/*
	 * Not wse/outfile.h: RUN_DIR/parts is the launcher's own state file
	 * beside its sockets in the run directory it made or was given, not
	 * an output the user names a path for.
	 */
	snprintf(path, sizeof(path), "%s/parts", l->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (int i = 0; i < l->nparts; i++)
		fprintf(f, "%s %d\n", l->part[i].what, (int)l->part[i].pid);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

static pid_t start(struct part *p)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* Parts die with the launcher, however it ends. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execv(p->argv[0], p->argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", ROLE_PROG, p->argv[0], strerror(errno));
		_exit(127);
	}
	p->pid = pid;
	return pid;
}

/* Waits for @p's socket to appear (it listens), or for it to die. */
static int wait_listening(struct part *p)
{
	struct timespec nap = { 0, 20 * 1000000L };

	for (int t = 0; t < START_MS / 20; t++) {
		struct stat st;

		if (!p->sock[0] || stat(p->sock, &st) == 0)
			return 0;
		if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
			p->pid = 0;
			return -1;
		}
		nanosleep(&nap, NULL);
	}
	return -1;
}

/* Removes what a part created in /dev/shm and could not remove itself (killed). */
static void clean_shm(pid_t pid)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f /dev/shm/wse-%d-*", (int)pid);
	if (system(cmd)) {
		/* Nothing there: fine. */
	}
}

static void stop_all(struct launcher *l)
{
	/* The coordinator first: it tells the user node; then the rest. */
	for (int i = l->nparts - 1; i >= 0; i--)
		if (l->part[i].pid > 0)
			kill(l->part[i].pid, SIGTERM);
	for (int i = l->nparts - 1; i >= 0; i--) {
		struct part *p = &l->part[i];

		for (int t = 0; t < 200 && p->pid > 0; t++) {
			if (waitpid(p->pid, NULL, WNOHANG) == p->pid)
				break;
			usleep(10000);
		}
		if (p->pid > 0 && waitpid(p->pid, NULL, WNOHANG) != p->pid) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, NULL, 0);
		}
		if (p->pid > 0)
			clean_shm(p->pid);
		p->pid = 0;
	}
}

static int find_binaries(struct launcher *l)
{
	ssize_t n = readlink("/proc/self/exe", l->self, sizeof(l->self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	l->self[n] = 0;
	snprintf(l->wsefwd, sizeof(l->wsefwd), "%s", l->self);
	slash = strrchr(l->wsefwd, '/');
	if (!slash)
		return -1;
	snprintf(slash + 1, sizeof(l->wsefwd) - (size_t)(slash + 1 - l->wsefwd), "wsefwd");
	if (access(l->wsefwd, X_OK)) {
		fprintf(stderr, "%s: %s is missing: wsefwd is installed beside wse-appliance (run make)\n",
			ROLE_PROG, l->wsefwd);
		return -1;
	}
	return 0;
}

/*
 * The parts share their data through POSIX shared memory (/dev/shm): a
 * machine without it is told so now, not as a refused job later.
 */
static int check_shared_memory(void)
{
	struct wse_link_region r;
	char text[256];

	if (wse_link_region_create(&r, "probe", 4096, text, sizeof(text))) {
		fprintf(stderr, "%s: %s: the appliance's parts share memory through /dev/shm (mount a tmpfs there)\n",
			ROLE_PROG, text);
		return -1;
	}
	wse_link_region_destroy(&r);
	return 0;
}

/* A config file: "system ADDR" lines (in order), "#" comments. */
static int read_config(struct launcher *l)
{
	FILE *f = fopen(l->config, "r");
	char line[512];
	int n = 0;

	if (!f) {
		fprintf(stderr, "%s: --config %s: %s\n", ROLE_PROG, l->config, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char key[32], val[400];

		n++;
		if (line[0] == '#' || sscanf(line, "%31s", key) != 1)
			continue;
		if (sscanf(line, "%31s %399s", key, val) == 2 && !strcmp(key, "system") &&
		    l->nremote < WSE_LINK_APPLIANCE_SYSTEMS_MAX) {
			l->remote[l->nremote++] = strdup(val);
			continue;
		}
		fprintf(stderr, "%s: --config %s, line %d: expected 'system ADDR' (at most %u)\n",
			ROLE_PROG, l->config, n, WSE_LINK_APPLIANCE_SYSTEMS_MAX);
		fclose(f);
		return -1;
	}
	fclose(f);
	if (!l->nremote) {
		fprintf(stderr, "%s: --config %s names no system\n", ROLE_PROG, l->config);
		return -1;
	}
	return 0;
}

static void service(struct launcher *l, struct part *p, const char *role, const char *sock)
{
	snprintf(p->sock, sizeof(p->sock), "%s/%s", l->dir, sock);
	add_arg(p, "--role=%s", role);
	add_arg(p, "--listen=unix:%s", p->sock);
	if (l->log_level)
		add_arg(p, "--log-level=%s", l->log_level);
}

/* The parts, in the order they start: systems, services, the coordinator. */
static void plan(struct launcher *l)
{
	char what[32], buf[64], path[PATH_MAX];
	struct part *p, *co;

	for (unsigned int i = 0; !l->nremote && i < l->systems; i++) {
		snprintf(what, sizeof(what), "system-%u", i);
		p = new_part(l, what, l->wsefwd);
		snprintf(p->sock, sizeof(p->sock), "%s/system%u.sock", l->dir, i);
		add_arg(p, "--listen=unix:%s", p->sock);
		snprintf(buf, sizeof(buf), "%u", i + 1);
		add_arg(p, "--device-id=%s", buf);
		/* The user node's four and the coordinator's own (coord.h, Q_OWN). */
		add_arg(p, "--queues=%s", "5");
		if (l->log_level)
			add_arg(p, "--log-level=%s", l->log_level);
		if (l->max_program) {
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)l->max_program);
			add_arg(p, "--max-program=%s", buf);
		}
		for (int a = 0; a < l->nfw_args; a++)
			add_arg(p, "%s", l->fw_args[a]);
	}
	p = new_part(l, "memoryx", l->self);
	service(l, p, "memoryx", "memoryx.sock");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)l->capacity);
	add_arg(p, "--capacity=%s", buf);
	if (l->mx_store) {
		char ram[32];

		add_arg(p, "--store=%s", l->mx_store);
		snprintf(ram, sizeof(ram), "%llu", (unsigned long long)l->mx_ram);
		add_arg(p, "--ram=%s", ram);
	}
	p = new_part(l, "swarmx", l->self);
	service(l, p, "swarmx", "swarmx.sock");
	p = new_part(l, "input", l->self);
	service(l, p, "input", "input.sock");
	add_arg(p, "--data-root=%s", l->data_root);

	co = new_part(l, "coordinator", l->self);
	add_arg(co, "--role=%s", "coordinator");
	add_arg(co, "--listen=%s", l->listen);
	if (l->port_file)
		add_arg(co, "--port-file=%s", l->port_file);
	if (l->log_level)
		add_arg(co, "--log-level=%s", l->log_level);
	add_arg(co, "--memoryx-capacity=%s", buf);
	if (l->no_regions)
		add_arg(co, "%s", "--no-regions");
	if (l->leaves)
		add_arg(co, "--leaves=%s", l->leaves);
	if (l->max_program) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)l->max_program);
		add_arg(co, "--max-program=%s", buf);
	}
	for (unsigned int i = 0; i < (l->nremote ? l->nremote : l->systems); i++) {
		if (l->nremote) {
			add_arg(co, "--system=%s", l->remote[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/system%u.sock", l->dir, i);
		add_arg(co, "--system=unix:%s", path);
	}
	add_arg(co, "--memoryx=unix:%s", l->part[l->nparts - 4].sock);
	add_arg(co, "--swarmx=unix:%s", l->part[l->nparts - 3].sock);
	add_arg(co, "--input=unix:%s", l->part[l->nparts - 2].sock);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wse-appliance --systems N --listen ADDR [options]\n"
"       wse-appliance --config FILE --listen ADDR [options]\n"
"       wse-appliance --role coordinator|memoryx|swarmx|input ... (the parts)\n"
"\n"
"Starts a Wafer-Scale Cluster appliance and watches it: N systems (wsefwd)\n"
"or those FILE names ('system ADDR' lines), MemoryX, SwarmX, an input\n"
"worker and the coordinator, which listens on ADDR (tcp:HOST:PORT or\n"
"unix:PATH) for a user node: wsectl attach ADDR. A part that dies is\n"
"started again. SIGTERM or SIGINT stop the appliance.\n"
"\n"
"  --systems N             local systems, 1..16 (default 1)\n"
"  --config FILE           the systems to use instead, on any machine\n"
"  --listen ADDR           where the coordinator listens (required)\n"
"  --port-file FILE        the coordinator's TCP port, once it listens\n"
"  --run-dir DIR           sockets and the 'parts' file (pids); default a\n"
"                          new directory in /tmp, removed at exit\n"
"  --memoryx-capacity B    bytes MemoryX holds at most (K/M/G; default 4G)\n"
"  --memoryx-store DIR     keep what exceeds --memoryx-ram in a nameless\n"
"                          file in DIR (memory-mapped; none left behind)\n"
"  --memoryx-ram B         bytes of it in RAM with --memoryx-store (default:\n"
"                          the capacity); the file holds the rest\n"
"  --max-program B         largest program image (with its initial weights)\n"
"                          the coordinator and the local systems accept\n"
"                          (K/M/G; default 256M)\n"
"  --data-root DIR         the directory shared with the user node, where\n"
"                          datasets are (default /usr/share/datasets)\n"
"  --fw-arg ARG            pass ARG to every local wsefwd (repeatable)\n"
"  --no-restart            leave a part that dies down\n"
"  --no-regions            carry the systems' data in frames, as to systems on\n"
"                          other machines, instead of through shared memory\n"
"  --leaves N              cut a weight-streaming batch into at least N\n"
"                          micro-batches, 1..32, a power of two (default 8):\n"
"                          1 to N systems give the same bits; fewer are faster\n"
"  --log-level LEVEL       error, warn, info (default) or debug, for all parts\n"
"  --help, --version\n"
"\n"
"See Documentation/wse-appliance.rst.\n");
}

static int parse(int argc, char **argv, struct launcher *l)
{
	static const struct option lo[] = {
		{ "systems", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "port-file", required_argument, NULL, 'p' },
		{ "run-dir", required_argument, NULL, 'd' },
		{ "memoryx-capacity", required_argument, NULL, 'C' },
		{ "memoryx-store", required_argument, NULL, 'S' },
		{ "memoryx-ram", required_argument, NULL, 'M' },
		{ "max-program", required_argument, NULL, 'P' },
		{ "data-root", required_argument, NULL, 'D' },
		{ "fw-arg", required_argument, NULL, 'f' },
		{ "no-restart", no_argument, NULL, 'n' },
		{ "no-regions", no_argument, NULL, 'R' },
		{ "leaves", required_argument, NULL, 'E' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			if (wse_opt_u64(ROLE_PROG, "--systems", optarg, 1,
					WSE_LINK_APPLIANCE_SYSTEMS_MAX, WSE_NUM_PLAIN, &v))
				return -1;
			l->systems = (unsigned int)v;
			break;
		case 'c':
			l->config = optarg;
			break;
		case 'l':
			l->listen = optarg;
			break;
		case 'p':
			l->port_file = optarg;
			break;
		case 'd':
			snprintf(l->dir, sizeof(l->dir), "%s", optarg);
			break;
		case 'C':
			if (wse_opt_u64(ROLE_PROG, "--memoryx-capacity", optarg, 4096, 1ULL << 50,
					WSE_NUM_BINARY, &l->capacity))
				return -1;
			break;
		case 'S':
			l->mx_store = optarg;
			break;
		case 'M':
			if (wse_opt_u64(ROLE_PROG, "--memoryx-ram", optarg, 4096, 1ULL << 50,
					WSE_NUM_BINARY, &l->mx_ram))
				return -1;
			break;
		case 'P':
			if (wse_opt_u64(ROLE_PROG, "--max-program", optarg, 4096, 1ULL << 40,
					WSE_NUM_BINARY, &l->max_program))
				return -1;
			break;
		case 'D':
			l->data_root = optarg;
			break;
		case 'f':
			if (l->nfw_args < ARGS_MAX - 8)
				l->fw_args[l->nfw_args++] = optarg;
			break;
		case 'n':
			l->restart = false;
			break;
		case 'R':
			l->no_regions = true;
			break;
		case 'E':
			if (coord_leaves_parse(optarg, NULL))
				return -1;
			l->leaves = optarg;
			break;
		case 'L':
			if (fwd_log_parse_level(optarg) < 0) {
				fprintf(stderr, "%s: --log-level '%s': error, warn, info or debug\n",
					ROLE_PROG, optarg);
				return -1;
			}
			l->log_level = optarg;
			fwd_log_set_level(fwd_log_parse_level(optarg));
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			fputs(WSE_VERSION_LINE("wse-appliance"), stdout);
			return 1;
		default:
			wse_usage_bad_option(ROLE_PROG, argv, optind, optopt);
			return -1;
		}
	}
	if (optind < argc || !l->listen) {
		wse_usage_error(ROLE_PROG, "%s",
				optind < argc ? "unexpected arguments" : "--listen ADDR is required");
		return -1;
	}
	if (l->mx_ram && !l->mx_store) {
		wse_usage_error(ROLE_PROG, "%s",
				"--memoryx-ram needs --memoryx-store DIR, where what exceeds it goes");
		return -1;
	}
	return 0;
}

/* The file store fits its file system: said here, before any part starts. */
static int check_memoryx_store(struct launcher *l)
{
	struct mx_spill s;
	char text[512];

	if (!l->mx_store)
		return 0;
	if (mx_spill_check(l->capacity, &l->mx_ram, text, sizeof(text)) ||
	    mx_spill_open(&s, l->mx_store, l->mx_ram, l->capacity - l->mx_ram, text,
			  sizeof(text))) {
		fprintf(stderr, "%s: %s\n", ROLE_PROG, text);
		return -1;
	}
	mx_spill_close(&s);
	return 0;
}

/* Restarts what died, until a signal; returns the exit status. */
static int watch(struct launcher *l)
{
	while (!svc_stopping()) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0) {
			usleep(100000);
			continue;
		}
		for (int i = 0; i < l->nparts; i++) {
			struct part *p = &l->part[i];

			if (p->pid != pid)
				continue;
			if (WIFSIGNALED(status))
				fwd_warn("%s (pid %d) was killed by signal %d", p->what, (int)pid,
					 WTERMSIG(status));
			else
				fwd_warn("%s (pid %d) exited with status %d", p->what, (int)pid,
					 WEXITSTATUS(status));
			clean_shm(pid);
			p->pid = 0;
			if (!l->restart || ++p->restarts > RESTARTS_MAX) {
				fwd_warn("%s stays down", p->what);
			} else {
				if (p->sock[0])
					unlink(p->sock);
				start(p);
				fwd_info("%s started again (pid %d)", p->what, (int)p->pid);
			}
			write_parts(l);
		}
	}
	return 0;
}

int launcher_main(int argc, char **argv)
{
	static struct launcher l = { .systems = 1, .capacity = 4ULL << 30, .restart = true,
				     .data_root = "/usr/share/datasets" };
	int ret;

	fwd_log_set_name(ROLE_PROG);
	ret = parse(argc, argv, &l);
	if (ret)
		return ret > 0 ? 0 : 2;
	if ((l.config && read_config(&l)) || find_binaries(&l) || check_shared_memory() ||
	    check_memoryx_store(&l))
		return 1;
	if (!l.dir[0]) {
		snprintf(l.dir, sizeof(l.dir), "/tmp/wse-appliance.XXXXXX");
		if (!mkdtemp(l.dir)) {
			fprintf(stderr, "%s: cannot make a run directory: %s\n", ROLE_PROG,
				strerror(errno));
			return 1;
		}
		l.made_dir = true;
	} else if (mkdir(l.dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "%s: --run-dir %s: %s\n", ROLE_PROG, l.dir, strerror(errno));
		return 1;
	}
	svc_catch_signals();
	plan(&l);
	ret = 0;
	for (int i = 0; i < l.nparts && !ret; i++) {
		struct part *p = &l.part[i];

		if (p->sock[0])
			unlink(p->sock);
		start(p);
		if (i + 1 < l.nparts && wait_listening(p)) {
			fwd_err("%s did not start (its messages are above)", p->what);
			ret = 1;
		}
	}
	write_parts(&l);
	if (!ret) {
		fwd_info("%u system%s, MemoryX, SwarmX, input and the coordinator on %s; parts in %s/parts",
			 l.nremote ? l.nremote : l.systems,
			 (l.nremote ? l.nremote : l.systems) == 1 ? "" : "s", l.listen, l.dir);
		ret = watch(&l);
	}
	stop_all(&l);
	if (l.made_dir) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", l.dir);
		if (system(cmd)) {
			/* A leftover directory in /tmp is not worth an error. */
		}
	}
	return ret;
}
