// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-soak: does the driver give back all it takes? It measures the
 * kernel's slab and a memory cgroup's kernel memory, makes many processes
 * submit many jobs (ioctls and io_uring, some timing out, some on queues
 * destroyed under them), measures again, then attaches and detaches a
 * device many times with jobs in flight, and measures a third time. The
 * jobs' memory is charged to the cgroup the processes run in
 * (__GFP_ACCOUNT), so what a leak keeps shows there even after they exit.
 * Run as root in the test guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drm/wse_accel.h"
#include "wse/ctl.h"
#include "wse/link_io.h"
#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse/splitmix64.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP		CGROUP_ROOT "/wse-soak"
#define JOB_BYTES	65536
/* How long a worker waits for one io_uring completion before it reports it lost. */
#define CQE_WAIT_S	60

struct options {
	const char *fw;			/* the firmware to attach */
	uint64_t procs, submissions, cycles, seed;
	uint64_t max_slab_kb, max_cgroup_kb;
};

/* What is measured. */
struct sample {
	long slab_kb, sunreclaim_kb;	/* /proc/meminfo */
	long cg_kernel_kb, cg_slab_kb;	/* the cgroup's memory.stat */
};

static long meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	size_t n = strlen(key);
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static long cgroup_stat_kb(const char *key)
{
	FILE *f = fopen(CGROUP "/memory.stat", "r");
	char name[64];
	long long v;
	long kb = -1;

	while (f && fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key))
			kb = (long)(v / 1024);
	if (f)
		fclose(f);
	return kb;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* A cgroup of its own with the memory controller, for the workers. */
static int cgroup_setup(void)
{
	struct stat st;

	if (stat(CGROUP_ROOT "/cgroup.controllers", &st)) {
		mkdir(CGROUP_ROOT, 0755);
		if (mount("none", CGROUP_ROOT, "cgroup2", 0, NULL))
			return -errno;
	}
	if (write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		return -EIO;
	if (mkdir(CGROUP, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static void measure(struct sample *s)
{
	/* Freed objects go back through RCU and per-CPU caches: let them. */
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
	usleep(500000);
	s->slab_kb = meminfo_kb("Slab");
	s->sunreclaim_kb = meminfo_kb("SUnreclaim");
	s->cg_kernel_kb = cgroup_stat_kb("kernel");
	s->cg_slab_kb = cgroup_stat_kb("slab");
}

static void print_sample(const char *when, const struct sample *s)
{
	printf("wse-soak: %-28s slab %ld KiB (unreclaimable %ld), cgroup kernel %ld KiB, cgroup slab %ld KiB\n",
	       when, s->slab_kb, s->sunreclaim_kb, s->cg_kernel_kb, s->cg_slab_kb);
}

static int queue_create(int fd, uint32_t hw, uint32_t depth, uint32_t timeout_ms, uint32_t *id)
{
	struct drm_wse_queue_create q = { .hw_queue = hw, .depth = depth, .timeout_ms = timeout_ms };

	if (ioctl(fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q))
		return -errno;
	*id = q.queue_id;
	return 0;
}

static int bo(int fd, uint64_t size, uint32_t *handle)
{
	struct drm_wse_bo_create c = { .size = size };

	if (ioctl(fd, DRM_IOCTL_WSE_BO_CREATE, &c))
		return -errno;
	*handle = c.handle;
	return 0;
}

static void prep(struct io_uring_sqe *sqe, int fd, uint32_t queue, uint32_t op, void *buf,
		 uint32_t len, uint32_t timeout_ms, uint64_t addr)
{
	struct drm_wse_uring_job j = {
		.queue_id = queue, .op = op, .addr = (uintptr_t)buf, .length = len,
		.timeout_ms = timeout_ms, .args = { addr },
	};

	if (!sqe)
		abort();	/* one command at a time: there is always room */
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = DRM_WSE_URING_CMD_JOB;
	memcpy(sqe->cmd, &j, sizeof(j));
}

/*
 * One worker: @n submissions, half through SUBMIT and WAIT, half through
 * io_uring; one in eight with a 1 ms timeout; now and then its queue is
 * destroyed with jobs on it. Returns 0 or a step number.
 */
static int worker(const char *node, uint64_t n, uint64_t seed)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct __kernel_timespec cqe_wait = { .tv_sec = CQE_WAIT_S };
	uint64_t rng = seed, i;
	uint32_t q = 0, h = 0;
	void *buf = calloc(1, JOB_BYTES);
	int ret;
	int fd = open(node, O_RDWR | O_CLOEXEC);

	if (fd < 0 || !buf || queue_create(fd, 1, 16, 0, &q) || bo(fd, JOB_BYTES, &h) ||
	    io_uring_queue_init_params(16, &ring, &p))
		return 10;
	for (i = 0; i < n; i++) {
		uint64_t r = wse_splitmix64(&rng);
		uint32_t op = r & 1 ? DRM_WSE_OP_MEM_READ : DRM_WSE_OP_MEM_WRITE;
		uint32_t timeout = r % 8 ? 0 : 1;

		if (r % 64 == 7) {
			/* Destroyed with a job on it, and made again. */
			struct drm_wse_submit s = {
				.queue_id = q, .op = op, .handle = h, .length = JOB_BYTES,
			};
			struct drm_wse_queue_destroy d = { .queue_id = q };

			ioctl(fd, DRM_IOCTL_WSE_SUBMIT, &s);
			if (ioctl(fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &d) ||
			    queue_create(fd, 1, 16, 0, &q))
				return 11;
		} else if (r & 2) {
			struct drm_wse_submit s = {
				.queue_id = q, .op = op, .handle = h, .length = JOB_BYTES,
				.timeout_ms = timeout, .args = { (r >> 8) % 1024 * JOB_BYTES },
			};
			struct drm_wse_wait w = { .queue_id = q };
			struct timespec ts;

			if (ioctl(fd, DRM_IOCTL_WSE_SUBMIT, &s))
				return 12;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			w.job_id = s.job_id;
			w.timeout_ns = (int64_t)(ts.tv_sec + 30) * 1000000000 + ts.tv_nsec;
			if (ioctl(fd, DRM_IOCTL_WSE_WAIT, &w))
				return 13;
		} else {
			prep(io_uring_get_sqe(&ring), fd, q, op, buf, JOB_BYTES, timeout,
			     (r >> 8) % 1024 * JOB_BYTES);
			if (io_uring_submit(&ring) != 1)
				return 14;
			/* A completion that never comes is a failure to report, not a hang. */
			ret = io_uring_wait_cqe_timeout(&ring, &cqe, &cqe_wait);
			if (ret) {
				fprintf(stderr,
					"wse-soak: job %llu of pid %d on queue %u: no completion in %lld s (%s)\n",
					(unsigned long long)i, (int)getpid(), q,
					(long long)cqe_wait.tv_sec, strerror(-ret));
				return 15;
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return 0;
}

/* Runs @fn's workers in the cgroup and waits for them; 0 or failures. */
static int run_workers(const struct options *o, const char *node)
{
	char pid[32];
	unsigned int failed = 0;
	uint64_t i;
	int status;

	for (i = 0; i < o->procs; i++) {
		pid_t c = fork();

		if (c == 0) {
			snprintf(pid, sizeof(pid), "%d", getpid());
			if (write_file(CGROUP "/cgroup.procs", pid))
				_exit(9);
			_exit(worker(node, o->submissions, o->seed + i * 0x9e3779b97f4a7c15ULL));
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "wse-soak: a worker failed (status %#x)\n", status);
			failed++;
		}
	return (int)failed;
}

/* One attach, jobs left in flight on a slow device, detach; in the cgroup. */
static int cycle(struct wse_ctl *ctl, const char *fw)
{
	struct wse_dev_status d;
	char node[64], err[256];
	uint32_t q = 0, h = 0;
	int sock, fd, i;

	if (wse_ctl_connect(fw, &sock, err, sizeof(err)))
		return 20;
	i = wse_ctl_attach_fd(ctl, sock, 0, &d);
	close(sock);
	if (i)
		return 21;
	snprintf(node, sizeof(node), "/dev/accel/accel%d", d.accel_minor);
	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0 || queue_create(fd, 1, 16, 0, &q) || bo(fd, 1 << 20, &h))
		return 22;
	for (i = 0; i < 8; i++) {
		struct drm_wse_submit s = {
			.queue_id = q, .op = i & 1 ? DRM_WSE_OP_MEM_READ : DRM_WSE_OP_MEM_WRITE,
			.handle = h, .length = 1 << 20,
		};

		ioctl(fd, DRM_IOCTL_WSE_SUBMIT, &s);
	}
	if (wse_ctl_detach(ctl, d.index))
		return 23;
	close(fd);
	return 0;
}

static int run_cycles(const struct options *o)
{
	char pid[32];
	int status;
	pid_t c = fork();

	if (c == 0) {
		struct wse_ctl *ctl;
		uint64_t i;
		int ret;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (write_file(CGROUP "/cgroup.procs", pid) || wse_ctl_open(&ctl))
			_exit(9);
		for (i = 0; i < o->cycles; i++) {
			ret = cycle(ctl, o->fw);
			if (ret) {
				fprintf(stderr, "wse-soak: cycle %llu failed at step %d\n",
					(unsigned long long)i, ret);
				_exit(ret);
			}
		}
		wse_ctl_close(ctl);
		_exit(0);
	}
	if (c < 0 || waitpid(c, &status, 0) != c)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

static void usage(FILE *out)
{
	fprintf(out,
"usage: wse-soak --fw ADDR [options]\n"
"\n"
"Measures the kernel's slab and a memory cgroup's kernel memory, makes\n"
"processes submit jobs to a device attached to the firmware at ADDR, measures\n"
"again, attaches and detaches that firmware many times with jobs in flight,\n"
"and measures a third time. Root, in the test guest.\n"
"\n"
"  --fw ADDR            the firmware (a wsefwd's --listen address)\n"
"  --procs N            submitting processes (default 16)\n"
"  --submissions N      jobs each submits (default 10000)\n"
"  --cycles N           attach/detach cycles (default 1000)\n"
"  --seed N             seed (default 1)\n"
"  --max-slab-kb N      most the slab may grow over the run (default 4096)\n"
"  --max-cgroup-kb N    most kernel memory the cgroup may still hold once\n"
"                       its processes have exited (default 512)\n"
"  --help\n"
"\n"
"Exit status: 0 nothing leaked; 1 a limit was passed or a step failed;\n"
"2 usage.\n");
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "fw", required_argument, NULL, 'f' },
		{ "procs", required_argument, NULL, 'p' },
		{ "submissions", required_argument, NULL, 's' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' },
		{ "max-slab-kb", required_argument, NULL, 'm' },
		{ "max-cgroup-kb", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct options){ .procs = 16, .submissions = 10000, .cycles = 1000, .seed = 1,
			       .max_slab_kb = 4096, .max_cgroup_kb = 512 };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		uint64_t *v = c == 'p' ? &o->procs : c == 's' ? &o->submissions :
			      c == 'c' ? &o->cycles : c == 'S' ? &o->seed :
			      c == 'm' ? &o->max_slab_kb : c == 'M' ? &o->max_cgroup_kb : NULL;

		if (c == 'f') {
			o->fw = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return 1;
		} else if (v) {
			if (wse_opt_u64("wse-soak", argv[optind - 1], optarg, 0,
					c == 'p' ? 256 : UINT64_MAX, WSE_NUM_PLAIN, v))
				return -1;
		} else {
			fprintf(stderr, "wse-soak: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (!o->fw || optind < argc) {
		fprintf(stderr, "wse-soak: give --fw ADDR and no other arguments (see --help)\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sample before, after_jobs, after_cycles;
	struct wse_dev_status d;
	struct wse_ctl *ctl;
	struct options o;
	char node[64], err[256];
	int ret, sock, bad = 0;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	/* Each line as it comes: a long run in the guest shows its progress. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = cgroup_setup();
	if (ret) {
		fprintf(stderr, "wse-soak: no memory cgroup under %s: %s\n", CGROUP_ROOT,
			strerror(-ret));
		return 1;
	}
	if (wse_ctl_open(&ctl) || wse_ctl_connect(o.fw, &sock, err, sizeof(err))) {
		fprintf(stderr, "wse-soak: cannot reach the control plane or %s\n", o.fw);
		return 1;
	}
	ret = wse_ctl_attach_fd(ctl, sock, 0, &d);
	close(sock);
	if (ret) {
		fprintf(stderr, "wse-soak: attaching %s failed: %s\n", o.fw, strerror(-ret));
		return 1;
	}
	snprintf(node, sizeof(node), "/dev/accel/accel%d", d.accel_minor);

	measure(&before);
	print_sample("before", &before);
	if (run_workers(&o, node))
		bad = 1;
	measure(&after_jobs);
	printf("wse-soak: %llu processes x %llu submissions done\n",
	       (unsigned long long)o.procs, (unsigned long long)o.submissions);
	print_sample("after the submissions", &after_jobs);
	wse_ctl_detach(ctl, d.index);
	wse_ctl_close(ctl);

	if (run_cycles(&o))
		bad = 1;
	measure(&after_cycles);
	printf("wse-soak: %llu attach/detach cycles with jobs in flight done\n",
	       (unsigned long long)o.cycles);
	print_sample("after the cycles", &after_cycles);

	printf("wse-soak: slab grew %ld KiB (limit %llu); the cgroup holds %ld KiB of kernel memory, %ld of slab (limit %llu)\n",
	       after_cycles.slab_kb - before.slab_kb, (unsigned long long)o.max_slab_kb,
	       after_cycles.cg_kernel_kb, after_cycles.cg_slab_kb,
	       (unsigned long long)o.max_cgroup_kb);
	if (after_cycles.slab_kb - before.slab_kb > (long)o.max_slab_kb ||
	    after_cycles.cg_kernel_kb > (long)o.max_cgroup_kb) {
		fprintf(stderr, "wse-soak: kernel memory was not given back\n");
		bad = 1;
	}
	rmdir(CGROUP);
	return bad;
}
