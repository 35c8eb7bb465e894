// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench: in one run against one firmware process, stream bandwidth
 * host->device and device->host through io_uring (plain and registered
 * buffers), through ioctl, and through a raw userspace socket (the link's
 * own limit); then small-command rate and latency, io_uring versus ioctl,
 * at several queue depths. For the raw socket the device is detached (the
 * firmware serves one host at a time) and attached again afterwards.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wse/usage.h"
#include "wse_version.h"
#include "wsebench.h"
#include "wse/numparse.h"

enum { PATH_URING, PATH_FIXED, PATH_IOCTL, PATH_RAW, NPATHS };
static const char *const path_names[NPATHS] = { "uring", "uring-fixed", "ioctl", "raw-socket" };

/* Medians, per size, direction and path (MB/s); < 0: not measured. */
static double bw[BENCH_MAX_LIST][2][NPATHS];
static struct rate_result rates[BENCH_MAX_LIST][2];	/* [depth][0 uring, 1 ioctl] */

static void usage(FILE *f)
{
	fprintf(f,
"usage: wsebench [OPTIONS]\n"
"\n"
"Measure the wse stack against one firmware process: stream bandwidth in\n"
"both directions through io_uring (plain and registered buffers), through\n"
"SUBMIT/WAIT ioctls, and through a plain userspace socket to the same\n"
"firmware (the link's own limit); and the rate and latency of small\n"
"commands through io_uring and ioctl at several queue depths. Prints\n"
"medians over the repetitions and the ratios driver/raw and uring/ioctl.\n"
"\n"
"The raw-socket baseline detaches the device (CAP_NET_ADMIN), talks to\n"
"its firmware directly, and attaches it again (it may get a new index).\n"
"\n"
"options:\n"
"  -d, --device SPEC     device: index, /dev/accel/accelN or any (default any)\n"
"  -f, --fw ADDR         firmware address for the baseline, tcp:HOST:PORT or\n"
"                        unix:PATH (default: the device's own peer)\n"
"  -s, --sizes LIST      transfer sizes, e.g. 4K,64K,1M,16M,64M (the default)\n"
"  -q, --depths LIST     queue depths for small commands (default 1,2,4,8,16,32,64,128)\n"
"  -r, --reps N          repetitions of each measurement (default 3)\n"
"  -n, --cmds N          small commands per measurement (default 2000)\n"
"  -b, --small BYTES     bytes of a small command (default 64)\n"
"  -m, --min-bytes SIZE  bytes moved per bandwidth measurement, at least\n"
"                        (default 8M; one transfer when the size is larger)\n"
"  -i, --inflight N      pieces in flight for bandwidth, 1..32 (default 16)\n"
"  -t, --max-seconds S   cut one measurement short after S seconds (default 20)\n"
"      --no-baseline     skip the raw socket (no detach)\n"
"      --only WHAT       bandwidth or rate: run only that part\n"
"  -h, --help            this text\n"
"  -V, --version         the version of wsebench\n"
"\n"
"Exit status: 0 when every measurement ran, 1 when one failed, 2 for bad\n"
"usage. Documentation/wsebench.rst explains the method and the numbers.\n");
}

/* A comma-separated list of whole numbers in [1, @max] (sizes take K, M, G). */
static int parse_list(const char *opt, const char *arg, uint64_t max, enum wse_num_units units,
		      size_t *out, unsigned int *n)
{
	char buf[256], err[200], *tok, *save = NULL;
	uint64_t v;

	if (strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "wsebench: %s: the list is too long\n", opt);
		return -1;
	}
	strcpy(buf, arg);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == BENCH_MAX_LIST) {
			fprintf(stderr, "wsebench: %s: at most %d values\n", opt, BENCH_MAX_LIST);
			return -1;
		}
		if (wse_parse_u64(tok, 1, max, units, &v, err, sizeof(err))) {
			fprintf(stderr, "wsebench: %s: %s\n", opt, err);
			return -1;
		}
		out[(*n)++] = (size_t)v;
	}
	if (!*n) {
		fprintf(stderr, "wsebench: %s: an empty list\n", opt);
		return -1;
	}
	return 0;
}

static int parse_uint(const char *opt, const char *arg, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return wse_opt_u64("wsebench", opt, arg, lo, hi, WSE_NUM_PLAIN, out) ? -1 : 0;
}

/* 0, or -1 (a value refused, said in one line) or -2 (a usage error, hint given). */
static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "fw", required_argument, NULL, 'f' },
		{ "sizes", required_argument, NULL, 's' },
		{ "depths", required_argument, NULL, 'q' },
		{ "reps", required_argument, NULL, 'r' },
		{ "cmds", required_argument, NULL, 'n' },
		{ "small", required_argument, NULL, 'b' },
		{ "min-bytes", required_argument, NULL, 'm' },
		{ "inflight", required_argument, NULL, 'i' },
		{ "max-seconds", required_argument, NULL, 't' },
		{ "no-baseline", no_argument, NULL, 'B' },
		{ "only", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	size_t list[BENCH_MAX_LIST];
	uint64_t v;
	unsigned int i;
	int c;

	*o = (struct bench_opts){
		.device = "any", .sizes = { 4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20 },
		.nsizes = 5, .depths = { 1, 2, 4, 8, 16, 32, 64, 128 }, .ndepths = 8,
		.reps = 3, .cmds = 2000, .small = 64, .min_bytes = 8 << 20, .inflight = 16,
		.max_seconds = 20, .baseline = true, .bandwidth = true, .rate = true,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:f:s:q:r:n:b:m:i:t:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'f':
			o->fw = optarg;
			break;
		case 's':
			if (parse_list("--sizes", optarg, 1u << 30, WSE_NUM_BINARY, o->sizes,
				       &o->nsizes))
				return -1;
			break;
		case 'q':
			if (parse_list("--depths", optarg, DRM_WSE_MAX_QUEUE_DEPTH, WSE_NUM_PLAIN, list,
				       &o->ndepths))
				return -1;
			for (i = 0; i < o->ndepths; i++)
				o->depths[i] = (unsigned int)list[i];
			break;
		case 'r':
			if (parse_uint("--reps", optarg, 1, 100, &v))
				return -1;
			o->reps = (unsigned int)v;
			break;
		case 'n':
			if (parse_uint("--cmds", optarg, 1, 1000000, &v))
				return -1;
			o->cmds = (unsigned int)v;
			break;
		case 'b':
			if (parse_uint("--small", optarg, 1, 65536, &v))
				return -1;
			o->small = (uint32_t)v;
			break;
		case 'm':
			if (wse_opt_u64("wsebench", "--min-bytes", optarg, 1, 1ULL << 32,
					WSE_NUM_BINARY, &v))
				return -1;
			o->min_bytes = (size_t)v;
			break;
		case 'i':
			if (parse_uint("--inflight", optarg, 1, WSE_LINK_CLIENT_MAX_PENDING, &v))
				return -1;
			o->inflight = (unsigned int)v;
			break;
		case 't':
			if (parse_uint("--max-seconds", optarg, 1, 3600, &v))
				return -1;
			o->max_seconds = (double)v;
			break;
		case 'B':
			o->baseline = false;
			break;
		case 'O':
			if (!strcmp(optarg, "bandwidth")) {
				o->rate = false;
			} else if (!strcmp(optarg, "rate")) {
				o->bandwidth = false;
			} else {
				fprintf(stderr, "wsebench: --only takes bandwidth or rate, not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			fputs(WSE_VERSION_LINE("wsebench"), stdout);
			exit(0);
		default:
			return wse_usage_bad_option("wsebench", argv, optind, optopt), -2;
		}
	}
	if (optind < argc) {
		return wse_usage_error("wsebench", "unexpected argument '%s'", argv[optind]), -2;
	}
	if (!o->bandwidth)
		o->baseline = false;
	return 0;
}

static const char *size_name(size_t s, char *buf, size_t len)
{
	if (s >= (1 << 20) && !(s % (1 << 20)))
		snprintf(buf, len, "%zuM", s >> 20);
	else if (s >= 1024 && !(s % 1024))
		snprintf(buf, len, "%zuK", s >> 10);
	else
		snprintf(buf, len, "%zu", s);
	return buf;
}

static size_t max_size(const struct bench_opts *o)
{
	size_t m = 0;
	unsigned int i;

	for (i = 0; i < o->nsizes; i++)
		m = o->sizes[i] > m ? o->sizes[i] : m;
	return m;
}

static void fill(uint8_t *p, size_t n)
{
	uint64_t s = 0x2545f4914f6cdd1dULL;
	size_t i;

	for (i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = (uint8_t)s;
	}
}

/* Buffers: what is written, and where reads land (registered for the fixed ring). */
struct bufs {
	uint8_t *w, *r;
	size_t len;
};

/* Checks that a read brought back what was written; says where not. */
static int check_read(const char *path, const uint8_t *got, const uint8_t *want, size_t size)
{
	if (!memcmp(got, want, size))
		return 0;
	fprintf(stderr, "wsebench: %s: data read back differs from what was written (%zu bytes)\n",
		path, size);
	return -EIO;
}

/* One bandwidth measurement of @path, median over the repetitions. */
static int measure_bw(const struct bench_opts *o, int path, enum bench_dir dir, size_t size,
		      struct wse_dev *dev, struct wse_ring *ring, uint32_t queue,
		      const struct wse_bo *bo, struct wse_link_client *cl, struct bufs *b,
		      double *median)
{
	double v[100];
	unsigned int k;
	uint8_t *buf = dir == BENCH_H2D ? b->w : b->r;
	int ret = 0;

	for (k = 0; k < o->reps && !ret; k++) {
		switch (path) {
		case PATH_URING:
		case PATH_FIXED:
			ret = bw_uring(ring, dir, buf, size, o->min_bytes, o->max_seconds, &v[k]);
			break;
		case PATH_IOCTL:
			ret = bw_ioctl(dev, queue, o->inflight, bo, dir, size, o->min_bytes,
				       o->max_seconds, &v[k]);
			break;
		default:
			ret = bw_raw(cl, o->inflight, dir, buf, size, o->min_bytes, o->max_seconds,
				     &v[k]);
			break;
		}
	}
	if (ret) {
		fprintf(stderr, "wsebench: %s %s of %zu bytes: %s\n", path_names[path],
			dir == BENCH_H2D ? "write" : "read", size, wse_strerror(ret));
		return ret;
	}
	if (dir == BENCH_D2H)
		ret = check_read(path_names[path], path == PATH_IOCTL ? bo->map : b->r, b->w, size);
	*median = bench_median(v, o->reps);
	return ret;
}

/* The driver's paths: io_uring plain and fixed, ioctl. */
static int driver_bandwidth(const struct bench_opts *o, struct wse_dev *dev, struct bufs *b)
{
	struct wse_ring_params rp = { .hw_queue = 0, .depth = o->inflight, .batch = o->inflight };
	struct wse_ring *plain = NULL, *fixed = NULL;
	struct iovec iov[2] = { { b->w, b->len }, { b->r, b->len } };
	struct wse_bo bo = { 0 };
	uint32_t queue = 0;
	unsigned int i, d;
	int ret, p;

	ret = wse_ring_open(dev, &rp, &plain);
	if (!ret)
		ret = wse_ring_open(dev, &rp, &fixed);
	if (!ret)
		ret = wse_ring_register(fixed, iov, 2);
	if (!ret)
		ret = wse_bo_alloc(dev, b->len, &bo);
	if (!ret)
		ret = wse_bo_map(dev, &bo);
	if (!ret)
		ret = wse_queue_create(dev, 1, o->inflight, 0, &queue);
	if (ret) {
		fprintf(stderr, "wsebench: setting up the driver paths: %s\n", wse_strerror(ret));
		goto out;
	}
	memcpy(bo.map, b->w, b->len);
	/*
	 * Warm up outside the timing: the firmware allocates device memory on
	 * first touch and io_uring starts its workers on first use; whichever
	 * path came first would pay for both.
	 */
	ret = wse_mem_write(plain, 0, b->w, b->len);
	if (!ret)
		ret = wse_mem_read(fixed, 0, b->r, b->len);
	if (ret) {
		fprintf(stderr, "wsebench: warming up: %s\n", wse_strerror(ret));
		goto out;
	}
	for (i = 0; i < o->nsizes && !ret; i++) {
		for (p = PATH_URING; p <= PATH_IOCTL && !ret; p++) {
			for (d = BENCH_H2D; d <= BENCH_D2H && !ret; d++) {
				if (d == BENCH_D2H)
					memset(p == PATH_IOCTL ? bo.map : b->r, 0, o->sizes[i]);
				ret = measure_bw(o, p, d, o->sizes[i], dev,
						 p == PATH_FIXED ? fixed : plain, queue, &bo, NULL, b,
						 &bw[i][d][p]);
			}
		}
		if (!ret) {
			char sz[32];

			fprintf(stderr, "wsebench: driver bandwidth at %s done\n",
				size_name(o->sizes[i], sz, sizeof(sz)));
		}
	}
out:
	if (queue)
		wse_queue_destroy(dev, queue);
	if (bo.handle)
		wse_bo_free(dev, &bo);
	wse_ring_close(fixed);
	wse_ring_close(plain);
	return ret;
}

static int raw_bandwidth(const struct bench_opts *o, const char *addr, struct bufs *b)
{
	struct wse_link_client cl;
	char err[256];
	unsigned int i, d;
	int ret;

	ret = raw_open(addr, &cl, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "wsebench: raw socket: %s\n", err);
		return ret;
	}
	for (i = 0; i < o->nsizes && !ret; i++) {
		for (d = BENCH_H2D; d <= BENCH_D2H && !ret; d++) {
			if (d == BENCH_D2H)
				memset(b->r, 0, o->sizes[i]);
			ret = measure_bw(o, PATH_RAW, d, o->sizes[i], NULL, NULL, 0, NULL, &cl, b,
					 &bw[i][d][PATH_RAW]);
		}
	}
	raw_close(&cl);
	return ret;
}

static int small_commands(const struct bench_opts *o, struct wse_dev *dev)
{
	struct rate_result r[100];
	double per_s[100], p50[100], p99[100];
	unsigned int i, k, m;
	int ret = 0;

	for (i = 0; i < o->ndepths && !ret; i++) {
		for (m = 0; m < 2 && !ret; m++) {
			for (k = 0; k < o->reps && !ret; k++) {
				ret = m == 0 ? rate_uring(dev, o->depths[i], o->small, o->cmds,
							  o->max_seconds, &r[k])
					     : rate_ioctl(dev, o->depths[i], o->small, o->cmds,
							  o->max_seconds, &r[k]);
				per_s[k] = r[k].per_s;
				p50[k] = r[k].p50_us;
				p99[k] = r[k].p99_us;
			}
			if (ret) {
				fprintf(stderr, "wsebench: %s commands at depth %u: %s\n",
					m ? "ioctl" : "uring", o->depths[i], wse_strerror(ret));
				break;
			}
			rates[i][m].per_s = bench_median(per_s, o->reps);
			rates[i][m].p50_us = bench_median(p50, o->reps);
			rates[i][m].p99_us = bench_median(p99, o->reps);
		}
	}
	return ret;
}

static void print_ratio(double a, double b)
{
	if (a >= 0 && b > 0)
		printf("  %10.2f", a / b);
	else
		printf("  %10s", "-");
}

static void print_bandwidth(const struct bench_opts *o)
{
	static const char *const dirs[2] = { "h2d", "d2h" };
	unsigned int i, d, p;
	char sz[32];

	printf("\nstream bandwidth, MB/s (10^6 B/s), median of %u\n", o->reps);
	printf("%-6s %-4s", "size", "dir");
	for (p = 0; p < NPATHS; p++)
		printf("  %11s", path_names[p]);
	printf("  %10s  %10s  %10s\n", "uring/raw", "fixed/raw", "uring/ioctl");
	for (i = 0; i < o->nsizes; i++) {
		for (d = 0; d < 2; d++) {
			printf("%-6s %-4s", size_name(o->sizes[i], sz, sizeof(sz)), dirs[d]);
			for (p = 0; p < NPATHS; p++) {
				if (bw[i][d][p] >= 0)
					printf("  %11.1f", bw[i][d][p]);
				else
					printf("  %11s", "-");
			}
			print_ratio(bw[i][d][PATH_URING], bw[i][d][PATH_RAW]);
			print_ratio(bw[i][d][PATH_FIXED], bw[i][d][PATH_RAW]);
			print_ratio(bw[i][d][PATH_URING], bw[i][d][PATH_IOCTL]);
			printf("\n");
		}
	}
}

static void print_rates(const struct bench_opts *o)
{
	unsigned int i;

	printf("\nsmall commands (%u-byte MEM_WRITE), %u per measurement, median of %u\n",
	       o->small, o->cmds, o->reps);
	printf("%5s  %12s %9s %9s  %12s %9s %9s  %11s\n", "depth", "uring cmd/s", "p50 us",
	       "p99 us", "ioctl cmd/s", "p50 us", "p99 us", "uring/ioctl");
	for (i = 0; i < o->ndepths; i++)
		printf("%5u  %12.0f %9.0f %9.0f  %12.0f %9.0f %9.0f  %11.2f\n", o->depths[i],
		       rates[i][0].per_s, rates[i][0].p50_us, rates[i][0].p99_us,
		       rates[i][1].per_s, rates[i][1].p50_us, rates[i][1].p99_us,
		       rates[i][1].per_s > 0 ? rates[i][0].per_s / rates[i][1].per_s : 0);
}

/* The targets of issue 4, stated against what was measured. */
static void print_targets(const struct bench_opts *o)
{
	unsigned int i, big = 0;
	static const char *const dirs[2] = { "h2d", "d2h" };
	unsigned int d;
	char sz[32];

	printf("\ntargets:\n");
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > o->sizes[big])
			big = i;
	for (d = 0; o->bandwidth && d < 2; d++) {
		double raw = bw[big][d][PATH_RAW], u = bw[big][d][PATH_URING];
		double f = bw[big][d][PATH_FIXED];

		if (raw > 0)
			printf("  %s %s: driver/raw %.2f (uring), %.2f (fixed); target >= 0.90: %s\n",
			       size_name(o->sizes[big], sz, sizeof(sz)), dirs[d], u / raw, f / raw,
			       (u > f ? u : f) / raw >= 0.9 ? "met" : "NOT met");
		else
			printf("  %s %s: no raw-socket baseline measured\n",
			       size_name(o->sizes[big], sz, sizeof(sz)), dirs[d]);
	}
	for (i = 0; o->rate && i < o->ndepths; i++) {
		if (o->depths[i] == 32 && rates[i][1].per_s > 0)
			printf("  depth 32: uring/ioctl command rate %.2f; target >= 2: %s\n",
			       rates[i][0].per_s / rates[i][1].per_s,
			       rates[i][0].per_s / rates[i][1].per_s >= 2 ? "met" : "NOT met");
	}
}

/* Detaches device @index, measures the raw socket, attaches the firmware again. */
static int baseline(const struct bench_opts *o, int index, const char *addr, struct bufs *b)
{
	struct wse_dev_status st;
	struct wse_ctl *ctl;
	char err[256];
	int ret, ret2, fd, i;

	ret = wse_ctl_open(&ctl);
	if (ret)
		return ret;
	ret = wse_ctl_detach(ctl, (uint32_t)index);
	if (ret) {
		fprintf(stderr, "wsebench: detaching device %d for the baseline: %s%s\n", index,
			wse_strerror(ret), ret == -EPERM ? " (run as root, or use --no-baseline)" : "");
		wse_ctl_close(ctl);
		return ret;
	}
	fprintf(stderr, "wsebench: device %d detached; raw socket to %s\n", index, addr);
	ret = raw_bandwidth(o, addr, b);

	/* Attach again, retrying while the firmware lets go of our socket. */
	ret2 = -EIO;
	for (i = 0; i < 50 && ret2; i++) {
		if (i)
			usleep(100000);
		ret2 = wse_ctl_connect(addr, &fd, err, sizeof(err));
		if (ret2)
			continue;
		ret2 = wse_ctl_attach_fd(ctl, fd, 0, &st);
		close(fd);
	}
	if (ret2)
		fprintf(stderr, "wsebench: attaching %s again failed: %s; attach it with "
			"'wsectl attach %s'\n", addr, wse_strerror(ret2), addr);
	else
		fprintf(stderr, "wsebench: %s attached again as device %u\n", addr, st.index);
	wse_ctl_close(ctl);
	return ret ? ret : ret2;
}

static int peer_of(int index, char *addr, size_t len)
{
	struct wse_dev_status st;
	struct wse_ctl *ctl = NULL;
	int ret = wse_ctl_open(&ctl);

	if (!ret)
		ret = wse_ctl_get(ctl, (uint32_t)index, false, &st);
	if (!ret)
		snprintf(addr, len, "%s", st.peer);
	if (ctl)
		wse_ctl_close(ctl);
	return ret;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct wse_info info;
	struct wse_dev *dev;
	struct bufs b = { 0 };
	char addr[160] = "";
	unsigned int i, d, p;
	int index, ret;

	ret = parse_args(argc, argv, &o);
	/* -2: the hint is out already; -1: a value was refused in one line. */
	if (ret == -1)
		fputs("Try 'wsebench --help' for more information.\n", stderr);
	if (ret)
		return 2;
	for (i = 0; i < BENCH_MAX_LIST; i++)
		for (d = 0; d < 2; d++)
			for (p = 0; p < NPATHS; p++)
				bw[i][d][p] = -1;
	ret = wse_open(o.device, &dev);
	if (ret) {
		char hint[512];

		if ((ret == -EACCES || ret == -EPERM) &&
		    !wse_access_hint(o.device, hint, sizeof(hint)))
			fprintf(stderr, "wsebench: cannot open device '%s': %s: %s\n", o.device,
				wse_strerror(ret), hint);
		else
			fprintf(stderr, "wsebench: cannot open device '%s': %s (see 'wsectl list')\n",
				o.device, wse_strerror(ret));
		return 1;
	}
	ret = wse_info(dev, &info);
	if (ret || !info.max_job_bytes) {
		fprintf(stderr, "wsebench: device '%s' %s\n", o.device,
			ret ? wse_strerror(ret) : "has no firmware link");
		wse_close(dev);
		return 1;
	}
	index = wse_dev_index(dev);
	if (o.fw)
		snprintf(addr, sizeof(addr), "%s", o.fw);
	else if (index >= 0)
		peer_of(index, addr, sizeof(addr));	/* "tcp:HOST:PORT" or "unix:PATH" */
	if (o.baseline && !o.fw && strncmp(addr, "tcp:", 4) && strncmp(addr, "unix:", 5)) {
		fprintf(stderr, "wsebench: cannot tell the firmware's address (peer '%s'): "
			"give --fw ADDR or --no-baseline\n", addr);
		wse_close(dev);
		return 2;
	}
	printf("wsebench: device %d, firmware %s at %s, max job %" PRIu64 " bytes\n", index,
	       info.dev.fw_version, addr[0] ? addr : "?", info.max_job_bytes);

	if (o.bandwidth) {
		b.len = max_size(&o);
		b.w = mmap(NULL, 2 * b.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (b.w == MAP_FAILED) {
			fprintf(stderr, "wsebench: no memory for 2 x %zu bytes of buffers\n", b.len);
			wse_close(dev);
			return 1;
		}
		b.r = b.w + b.len;
		fill(b.w, b.len);
		ret = driver_bandwidth(&o, dev, &b);
	}
	if (!ret && o.rate)
		ret = small_commands(&o, dev);
	wse_close(dev);
	if (!ret && o.baseline)
		ret = baseline(&o, index, addr, &b);

	if (o.bandwidth)
		print_bandwidth(&o);
	if (o.rate)
		print_rates(&o);
	print_targets(&o);
	if (b.w && b.w != MAP_FAILED)
		munmap(b.w, 2 * b.len);
	return ret ? 1 : 0;
}
