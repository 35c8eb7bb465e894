// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program wsetrain runs: a .wsep taken as it is, or a model compiled
 * by wsecc for the wafer the first device reports. The compiler runs as
 * its own program, so --compile-only and --validate-only behave exactly as
 * wsecc's, and its messages reach the user unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train.h"
#include "wse/crc32c.h"
#include "wse/numformat.h"
#include "wse/outfile.h"

/* wsecc beside this program (the build tree, the guest's /wse/bin), else from PATH. */
static const char *compiler(const struct train_opts *o, char *buf, size_t len)
{
	ssize_t n;
	char *slash;

	if (o->wsecc)
		return o->wsecc;
	n = readlink("/proc/self/exe", buf, len - 8);
	if (n > 0) {
		buf[n] = 0;
		slash = strrchr(buf, '/');
		if (slash) {
			strcpy(slash + 1, "wsecc");
			if (access(buf, X_OK) == 0)
				return buf;
		}
	}
	return "wsecc";
}

/*
 * Runs the compiler with @args (NULL-terminated after argv[0]), its
 * stdout to @out if not NULL; returns its exit status.
 */
static int run_compiler(const char *cc, const char *const *args, const struct wse_out *out)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return train_fail("cannot start the compiler: %s", strerror(errno)), 127;
	if (!pid) {
		train_interrupt_child();
		if (out && dup2(out->fd, STDOUT_FILENO) < 0) {
			fprintf(stderr, "wsetrain: %s: %s\n", out->path, strerror(errno));
			_exit(127);
		}
		execvp(cc, (char *const *)args);
		fprintf(stderr, "wsetrain: cannot run the compiler '%s': %s (give --wsecc PATH)\n",
			cc, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int train_pass_through(const struct train_opts *o)
{
	char buf[PATH_MAX];
	const char *args[16];
	int n = 0;

	args[n++] = compiler(o, buf, sizeof(buf));
	args[n++] = o->model;
	args[n++] = o->pass_through;
	if (o->params) {
		args[n++] = "--params";
		args[n++] = o->params;
	}
	if (strcmp(o->exec_mode, "auto")) {
		args[n++] = "--execution-mode";
		args[n++] = o->exec_mode;
	}
	if (o->output) {
		args[n++] = "-o";
		args[n++] = o->output;
	}
	args[n] = NULL;
	return run_compiler(args[0], args, NULL);
}

bool train_is_program(const char *path)
{
	size_t n = strlen(path);

	return n > 5 && !strcmp(path + n - 5, ".wsep");
}

static void *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	void *buf = NULL;

	if (!f)
		return NULL;
	if (!fstat(fileno(f), &st) && st.st_size > 0 && st.st_size < (1LL << 31)) {
		buf = malloc((size_t)st.st_size);
		if (buf && fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
			errno = EIO;
		}
		*len = (size_t)st.st_size;
	} else {
		errno = EINVAL;
	}
	fclose(f);
	return buf;
}

int train_program(const struct train_opts *o, const struct drm_wse_device_info *dev,
		  void **image, size_t *len, struct wsep_program **prog)
{
	char buf[PATH_MAX], wafer[96], path[] = "/tmp/wsetrain-XXXXXX";
	char svg[PATH_MAX], report[PATH_MAX];
	const char *file = o->model;
	char err[512];
	int fd, st;

	*image = NULL;
	*prog = NULL;
	/* A params file says what an ONNX model lacks; else it is compiled first. */
	if (!o->params && strlen(o->model) > 5 && !strcmp(o->model + strlen(o->model) - 5, ".onnx"))
		return train_fail("%s: an ONNX model has no batch or optimizer of its own: give them in a params file (--params FILE), or compile it first (wsecc %s --batch N [--optimizer adam --lr X --warmup N --steps N] -o MODEL.wsep) and train the .wsep",
				  o->model, o->model);
	if (!train_is_program(o->model)) {
		const char *args[20] = { compiler(o, buf, sizeof(buf)), o->model, "--wafer", wafer,
					 "--execution-mode", o->exec_mode, "--compile-only", "-q",
					 "-o", path };
		int a = 10;
		struct wse_out out = { .fd = -1 };

		/* A run directory keeps the placement report and the wafer map. */
		if (o->model_dir) {
			snprintf(svg, sizeof(svg), "%s/wafer.svg", o->model_dir);
			snprintf(report, sizeof(report), "%s/compile-report.txt", o->model_dir);
			args[a++] = "--report";
			args[a++] = "--svg";
			args[a++] = svg;
			/* Replaced whole once the compiler is done, as every output. */
			if (wse_out_open(&out, report, 0, err, sizeof(err)))
				return train_fail("%s", err);
		}
		if (o->params) {
			args[a++] = "--params";
			args[a++] = o->params;
		}

		/* The device's own geometry, so placement and capacity are its. */
		snprintf(wafer, sizeof(wafer), "%ux%u:%llu@%llu", dev->wafer_width,
			 dev->wafer_height, (unsigned long long)dev->sram_per_pe,
			 (unsigned long long)dev->clock_khz * 1000);
		fd = mkstemp(path);
		if (fd < 0) {
			if (out.fd >= 0)
				wse_out_abandon(&out);
			return train_fail("cannot make a temporary file for the program: %s",
					  strerror(errno));
		}
		close(fd);
		st = run_compiler(args[0], args, out.fd >= 0 ? &out : NULL);
		/* The report is kept when the compiler refused: it says why. */
		if (out.fd >= 0 && wse_out_commit(&out, err, sizeof(err)))
			fprintf(stderr, "wsetrain: note: the compile report: %s\n", err);
		if (st) {
			char sram[WSE_NUMFORMAT_MAX], clock[WSE_NUMFORMAT_MAX];

			unlink(path);
			return train_fail("the compiler refused %s for this device's wafer (%ux%u PEs, %s SRAM per PE, %s; exit %d); see its message above",
					  o->model, dev->wafer_width, dev->wafer_height,
					  wse_format_bytes(dev->sram_per_pe, sram, sizeof(sram)),
					  wse_format_hz((uint64_t)dev->clock_khz * 1000, clock,
							sizeof(clock)), st);
		}
		file = path;
	}
	*image = read_whole(file, len);
	if (file == path)
		unlink(path);
	if (!*image)
		return train_fail("cannot read %s: %s", o->model, strerror(errno));
	/* A program taken from a run directory: the one that run trained. */
	if (file == o->model &&
	    train_model_pin_check(&o->model_pin, o->model, wse_crc32c(0, *image, *len))) {
		free(*image);
		*image = NULL;
		return -1;
	}
	if (wsep_read(*image, *len, prog, err, sizeof(err))) {
		free(*image);
		*image = NULL;
		return train_fail("%s: %s", o->model, err);
	}
	return 0;
}

int train_find_streams(const struct wsep_program *p, struct train_streams *s)
{
	struct wsep_train_streams ts;
	char err[256];

	if (wsep_train_streams(p, &ts, err, sizeof(err)))
		return train_fail("%s: %s", p->model_name, err);
	/* The protocol names a stream by its id. */
	s->samples = (int)p->streams[ts.samples].id;
	s->labels = (int)p->streams[ts.labels].id;
	s->losses = (int)p->streams[ts.losses].id;
	s->predictions = (int)p->streams[ts.predictions].id;
	s->logits = ts.logits < 0 ? -1 : (int)p->streams[ts.logits].id;
	for (uint32_t k = 0; k < WSEP_MAX_LAYERS; k++) {
		s->weights[k] = ts.weights[k] < 0 ? -1 : (int)p->streams[ts.weights[k]].id;
		s->grads[k] = ts.grads[k] < 0 ? -1 : (int)p->streams[ts.grads[k]].id;
	}
	return 0;
}
