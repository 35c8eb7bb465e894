// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsebench-kernels: how much the firmware engine's dense layers cost over
 * the bare OpenBLAS GEMMs they are built on, and how fast a whole training
 * step runs. See Documentation/engine.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "wse_version.h"
#include "wse/engine.h"
#include "wse/numparse.h"
#include "wse/usage.h"

#define TARGET_RATIO 1.25

struct options {
	long reps;
	long inner;
	long threads;
	long batch;
	long steps;
	size_t widths[ENGINE_MAX_LAYERS + 1];
	size_t layers;
	bool check;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wsebench-kernels [OPTIONS]\n"
		"\n"
		"Times the firmware engine's dense layers (forward with bias and ReLU,\n"
		"backward with ReLU mask, input and weight gradients, bias gradient)\n"
		"against the bare cblas_sgemm calls they contain (1 forward, 2 backward\n"
		"per layer) on the same shapes, and prints the ratio engine / sgemm\n"
		"(target <= %.2f). Then times whole training steps (forward, softmax\n"
		"cross-entropy, backward, SGD with momentum) with one OpenBLAS thread.\n"
		"\n"
		"  -l, --layers W0,W1,...  layer widths (default 784,256,256,10)\n"
		"  -b, --batch N           samples per batch (default 128)\n"
		"  -r, --reps N            timed repetitions; the median is shown (default 51)\n"
		"  -i, --inner N           calls per repetition (default 10)\n"
		"  -t, --threads N         OpenBLAS threads for the layer table (default 1)\n"
		"  -s, --steps N           training steps per repetition (default 10)\n"
		"  -c, --check             exit 1 if the ratio misses the target\n"
		"  -h, --help              show this help\n"
		"  -V, --version           the version of wsebench-kernels\n"
		"\n"
		"When OpenBLAS does not recognise the CPU and falls back to generic\n"
		"kernels, the program sets OPENBLAS_CORETYPE and runs itself again; set\n"
		"OPENBLAS_CORETYPE yourself to choose the kernels.\n",
		TARGET_RATIO);
}

static int parse_long(const char *opt, const char *arg, long lo, long hi, long *out)
{
	uint64_t v;

	if (wse_opt_u64("wsebench-kernels", opt, arg, (uint64_t)lo, (uint64_t)hi, WSE_NUM_PLAIN,
			&v))
		return -1;
	*out = (long)v;
	return 0;
}

static int parse_layers(const char *arg, struct options *o)
{
	const char *p = arg;
	char err[200];
	size_t n = 0;
	uint64_t v;
	int ret;

	while (*p) {
		if (n > ENGINE_MAX_LAYERS) {
			fprintf(stderr, "wsebench-kernels: --layers takes at most %d widths; got '%s'\n",
				ENGINE_MAX_LAYERS + 1, arg);
			return -1;
		}
		ret = wse_parse_u64_at(&p, 1, 65536, WSE_NUM_PLAIN, &v, err, sizeof(err));
		if (!ret && *p && *p != ',') {
			snprintf(err, sizeof(err), "at '%s': expected a comma", p);
			ret = -EINVAL;
		}
		if (ret) {
			fprintf(stderr, "wsebench-kernels: --layers '%s': %s; give comma-separated widths 1..65536, e.g. 784,256,256,10\n",
				arg, err);
			return -1;
		}
		o->widths[n++] = (size_t)v;
		p += *p == ',';
	}
	if (n < 2 || o->widths[n - 1] > 256) {
		fprintf(stderr, "wsebench-kernels: --layers needs at least an input and an output width, and at most 256 classes; got '%s'\n",
			arg);
		return -1;
	}
	o->layers = n - 1;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "layers", required_argument, NULL, 'l' },
		{ "batch", required_argument, NULL, 'b' },
		{ "reps", required_argument, NULL, 'r' },
		{ "inner", required_argument, NULL, 'i' },
		{ "threads", required_argument, NULL, 't' },
		{ "steps", required_argument, NULL, 's' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	*o = (struct options){ .reps = 51, .inner = 10, .threads = 1,
			       .batch = 128, .steps = 10 };
	if (parse_layers("784,256,256,10", o))
		return -1;
	while ((c = getopt_long(argc, argv, "l:b:r:i:t:s:chV", longopts, NULL)) != -1) {
		int err = 0;

		switch (c) {
		case 'l':
			err = parse_layers(optarg, o);
			break;
		case 'b':
			err = parse_long("--batch", optarg, 1, 65536, &o->batch);
			break;
		case 'r':
			err = parse_long("--reps", optarg, 1, 100000, &o->reps);
			break;
		case 'i':
			err = parse_long("--inner", optarg, 1, 100000, &o->inner);
			break;
		case 't':
			err = parse_long("--threads", optarg, 1, 1024, &o->threads);
			break;
		case 's':
			err = parse_long("--steps", optarg, 1, 100000, &o->steps);
			break;
		case 'c':
			o->check = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			fputs(WSE_VERSION_LINE("wsebench-kernels"), stdout);
			exit(0);
		default:
			fprintf(stderr, "wsebench-kernels: try --help\n");
			return -1;
		}
		if (err)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "wsebench-kernels: unexpected argument '%s'; try --help\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float *random_floats(struct engine_rng *rng, size_t n, float scale)
{
	float *p = malloc(n * sizeof(float));

	if (!p) {
		fprintf(stderr, "wsebench-kernels: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (2.0f * engine_rng_uniform(rng) - 1.0f) * scale;
	return p;
}

/* One layer's operands, shared by the engine and the bare GEMMs. */
struct layer_bufs {
	size_t in, out;
	bool relu;
	float *x, *w, *b, *y, *dy, *dx, *dw, *db;
};

static void layer_bufs_init(struct layer_bufs *l, struct engine_rng *rng,
			    size_t batch, size_t in, size_t out, bool relu)
{
	l->in = in, l->out = out, l->relu = relu;
	l->x = random_floats(rng, batch * in, 1.0f);
	l->w = random_floats(rng, out * in, 0.05f);
	l->b = random_floats(rng, out, 0.05f);
	l->y = random_floats(rng, batch * out, 1.0f);
	l->dy = random_floats(rng, batch * out, 0.01f);
	l->dx = random_floats(rng, batch * in, 1.0f);
	l->dw = random_floats(rng, out * in, 1.0f);
	l->db = random_floats(rng, out, 1.0f);
}

static void layer_bufs_free(struct layer_bufs *l)
{
	free(l->x), free(l->w), free(l->b), free(l->y);
	free(l->dy), free(l->dx), free(l->dw), free(l->db);
}

/* The engine's work for one layer's forward and backward. */
static int engine_layer(struct layer_bufs *l, size_t batch)
{
	int err = engine_dense_forward(l->x, l->w, l->b, batch, l->in, l->out,
				       l->relu, l->y);

	if (!err && l->relu)
		err = engine_relu_backward(l->y, l->dy, batch * l->out, l->dy);
	if (!err)
		err = engine_dense_backward(l->dy, l->x, l->w, batch, l->in, l->out,
					    0.0f, l->dx, l->dw, l->db);
	return err;
}

/* The same three GEMMs, nothing else. */
static void sgemm_layer(struct layer_bufs *l, size_t batch)
{
	int m = (int)batch, in = (int)l->in, out = (int)l->out;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, out, in, 1.0f,
		    l->x, in, l->w, in, 0.0f, l->y, out);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, in, out, 1.0f,
		    l->dy, out, l->w, in, 0.0f, l->dx, in);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, m, 1.0f,
		    l->dy, out, l->x, in, 0.0f, l->dw, in);
}

/* Median seconds per call of the engine and of the bare GEMMs, measured
 * alternately so both see the same machine load.
 */
static int time_layer(struct layer_bufs *l, const struct options *o,
		      double *engine_s, double *sgemm_s)
{
	double *te = calloc((size_t)o->reps, sizeof(double));
	double *ts = calloc((size_t)o->reps, sizeof(double));
	size_t batch = (size_t)o->batch;
	int err = 0;

	if (!te || !ts) {
		fprintf(stderr, "wsebench-kernels: out of memory\n");
		exit(1);
	}
	for (long i = 0; i < 3; i++) {	/* warm caches and OpenBLAS' buffers */
		err |= engine_layer(l, batch);
		sgemm_layer(l, batch);
	}
	for (long r = 0; !err && r < o->reps; r++) {
		double t0 = now();

		for (long i = 0; !err && i < o->inner; i++)
			err = engine_layer(l, batch);
		double t1 = now();

		for (long i = 0; i < o->inner; i++)
			sgemm_layer(l, batch);
		double t2 = now();

		te[r] = (t1 - t0) / (double)o->inner;
		ts[r] = (t2 - t1) / (double)o->inner;
	}
	*engine_s = median(te, (size_t)o->reps);
	*sgemm_s = median(ts, (size_t)o->reps);
	free(te);
	free(ts);
	return err;
}

static int bench_layers(const struct options *o, double *ratio)
{
	struct engine_rng rng;
	double total_e = 0, total_s = 0;
	size_t batch = (size_t)o->batch;

	engine_rng_seed(&rng, 1);
	printf("dense layers, batch %zu, %d OpenBLAS thread(s), median of %ld x %ld calls\n",
	       batch, engine_threads(), o->reps, o->inner);
	printf("%-6s %-12s %12s %12s %8s %10s\n", "layer", "shape", "sgemm us",
	       "engine us", "ratio", "GFLOP/s");
	for (size_t k = 0; k < o->layers; k++) {
		struct layer_bufs l;
		double te, ts, flops;
		char shape[32];
		int err;

		layer_bufs_init(&l, &rng, batch, o->widths[k], o->widths[k + 1],
				k + 1 < o->layers);
		err = time_layer(&l, o, &te, &ts);
		layer_bufs_free(&l);
		if (err) {
			fprintf(stderr, "wsebench-kernels: layer %zu: %s\n", k,
				engine_strerror(err));
			return err;
		}
		flops = 3.0 * 2.0 * (double)batch * o->widths[k] * o->widths[k + 1];
		snprintf(shape, sizeof(shape), "%zu->%zu%s", o->widths[k],
			 o->widths[k + 1], k + 1 < o->layers ? "+relu" : "");
		printf("%-6zu %-12s %12.1f %12.1f %8.3f %10.1f\n", k, shape, ts * 1e6,
		       te * 1e6, te / ts, flops / te * 1e-9);
		total_e += te;
		total_s += ts;
	}
	*ratio = total_e / total_s;
	printf("%-6s %-12s %12.1f %12.1f %8.3f   (target <= %.2f: %s)\n", "total", "",
	       total_s * 1e6, total_e * 1e6, *ratio, TARGET_RATIO,
	       *ratio <= TARGET_RATIO ? "met" : "MISSED");
	return 0;
}

static int bench_train_step(const struct options *o)
{
	struct engine_shape shape;
	struct engine_workspace *ws = NULL;
	struct engine_params *params = NULL;
	struct engine_optim opt;
	struct engine_loss_result res;
	struct engine_rng rng;
	size_t batch = (size_t)o->batch, in = o->widths[0];
	size_t classes = o->widths[o->layers];
	uint8_t *px = malloc(batch * in), *labels = malloc(batch);
	double *t = calloc((size_t)o->reps, sizeof(double));
	uint64_t step = 1;
	int err;

	if (!px || !labels || !t) {
		fprintf(stderr, "wsebench-kernels: out of memory\n");
		exit(1);
	}
	engine_rng_seed(&rng, 2);
	for (size_t i = 0; i < batch * in; i++)
		px[i] = (uint8_t)(engine_rng_next(&rng) >> 56);
	for (size_t i = 0; i < batch; i++)
		labels[i] = (uint8_t)(engine_rng_next(&rng) % classes);
	err = engine_shape_mlp(&shape, o->widths, o->layers);
	if (!err)
		err = engine_workspace_create(&shape, batch, &ws);
	if (!err)
		err = engine_params_create(&shape, ENGINE_MOMENTUM, &params);
	if (err)
		goto out;
	engine_params_init(params, 3);
	engine_optim_defaults(&opt, ENGINE_MOMENTUM, 0.01);
	engine_set_threads(1);
	for (int i = 0; !err && i < 3; i++)
		err = engine_train_step(ws, params, &opt, step++, px, labels, batch,
					&res);
	for (long r = 0; !err && r < o->reps; r++) {
		double t0 = now();

		for (long i = 0; !err && i < o->steps; i++)
			err = engine_train_step(ws, params, &opt, step++, px, labels,
						batch, &res);
		t[r] = (now() - t0) / (double)o->steps;
	}
	if (!err) {
		double s = median(t, (size_t)o->reps);

		printf("\ntraining step (forward, loss, backward, momentum SGD), ");
		for (size_t k = 0; k <= o->layers; k++)
			printf("%zu%s", o->widths[k], k < o->layers ? "-" : "");
		printf(", batch %zu, 1 thread:\n  %.3f ms per step, %.0f samples/s (median of %ld x %ld steps)\n",
		       batch, s * 1e3, (double)batch / s, o->reps, o->steps);
	}
out:
	if (err)
		fprintf(stderr, "wsebench-kernels: training step: %s\n",
			engine_strerror(err));
	engine_params_destroy(params);
	engine_workspace_destroy(ws);
	free(px), free(labels), free(t);
	return err;
}

int main(int argc, char **argv)
{
	struct options o;
	double ratio;

	if (parse_options(argc, argv, &o))
		return 2;
	/* Before any timing: get the right kernels on CPUs newer than the
	 * library (see Documentation/engine.rst).
	 */
	if (engine_blas_reexec("/proc/self/exe", argv))
		fprintf(stderr, "wsebench-kernels: could not re-execute with OPENBLAS_CORETYPE=%s; timing the %s kernels\n",
			engine_blas_better_core(), engine_blas_core());
	if (engine_set_threads((int)o.threads) != o.threads)
		fprintf(stderr, "wsebench-kernels: note: OpenBLAS (%s) runs %d thread(s), not %ld\n",
			engine_blas_threading(), engine_threads(), o.threads);
	printf("%s (%s), kernels: %s%s\n\n", engine_blas_config(),
	       engine_blas_threading(), engine_blas_core(),
	       getenv("OPENBLAS_CORETYPE") ? " (from OPENBLAS_CORETYPE)" : "");
	if (bench_layers(&o, &ratio) || bench_train_step(&o))
		return 1;
	return o.check && ratio > TARGET_RATIO ? 1 : 0;
}
