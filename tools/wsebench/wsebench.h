/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wsebench: stream bandwidth and small-command rate of the wse stack,
 * through io_uring, ioctl and a raw socket to the same firmware process.
 */
#ifndef WSEBENCH_H
#define WSEBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wse/link_client.h"
#include "wse/wse.h"

#define BENCH_MAX_LIST	16
#define BENCH_WAIT_MS	30000	/* longest wait for one completion */

struct bench_opts {
	const char *device;
	const char *fw;			/* raw-socket address; NULL: the device's peer */
	size_t sizes[BENCH_MAX_LIST];
	unsigned int nsizes;
	unsigned int depths[BENCH_MAX_LIST];
	unsigned int ndepths;
	unsigned int reps;
	unsigned int cmds;		/* small commands per measurement */
	uint32_t small;			/* bytes of a small command */
	size_t min_bytes;		/* bytes moved per bandwidth measurement, at least */
	unsigned int inflight;		/* pieces in flight for bandwidth */
	double max_seconds;		/* per measurement */
	bool baseline;
	bool bandwidth, rate;
};

enum bench_dir { BENCH_H2D, BENCH_D2H };

/* Time and statistics (bench_stats.c). */
double bench_now(void);
double bench_median(const double *v, size_t n);
/* The @p-th percentile (0..100) of @v, nearest rank; sorts a copy. */
double bench_percentile(const double *v, size_t n, double p);

/*
 * Bandwidth (bench_bw.c): moves @total bytes (at least one transfer) in
 * transfers of @size bytes at device address 0, one transfer after the
 * other, and gives MB/s (10^6 bytes per second). 0 or a negative errno.
 */
int bw_uring(struct wse_ring *ring, enum bench_dir dir, uint8_t *buf, size_t size,
	     size_t total, double max_s, double *mbps);
int bw_ioctl(struct wse_dev *dev, uint32_t queue, unsigned int inflight, const struct wse_bo *bo,
	     enum bench_dir dir, size_t size, size_t total, double max_s, double *mbps);
int bw_raw(struct wse_link_client *cl, unsigned int inflight, enum bench_dir dir, uint8_t *buf,
	   size_t size, size_t total, double max_s, double *mbps);

/* Small commands (bench_rate.c): @n commands of @bytes, @depth in flight. */
struct rate_result {
	double per_s;			/* commands completed per second */
	double p50_us, p99_us;		/* submit-to-completion latency */
};

int rate_uring(struct wse_dev *dev, unsigned int depth, uint32_t bytes, unsigned int n,
	       double max_s, struct rate_result *res);
int rate_ioctl(struct wse_dev *dev, unsigned int depth, uint32_t bytes, unsigned int n,
	       double max_s, struct rate_result *res);

/* The raw-socket client (bench_raw.c): connect and handshake, with retries
 * while the firmware still finishes with the kernel's connection.
 */
int raw_open(const char *addr, struct wse_link_client *cl, char *err, size_t errlen);
void raw_close(struct wse_link_client *cl);

#endif /* WSEBENCH_H */
