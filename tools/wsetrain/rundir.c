// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run directory (--model_dir DIR, or DIR/MODEL-UTCTIME made in --runs):
 * everything a training run leaves behind, in one place the user can look
 * at with ordinary tools (Documentation/wsetrain.rst, "Run directory"):
 *
 *   run.json                 the command, versions, devices, final figures,
 *                            and where the model file is (its path, size
 *                            and CRC32C: a program may be gigabytes, and
 *                            the directory a slow share, so it is not copied)
 *   compile-report.txt       the compiler's placement report
 *   wafer.svg                its wafer map (placement.c draws it for a .wsep)
 *   timing.json              the timing model's step and per-layer times
 *   checkpoint_<step>.ckpt   the checkpoints, the newest --keep of them
 *   metrics.csv              progress and evaluations
 *   events.out.tfevents.*    the same as TensorBoard scalars
 *
 * wsereport draws the curves and the page from it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "train.h"
#include "wse/crc32c.h"
#include "wse/outfile.h"
#include "wse_version.h"

#define CKPT_PREFIX	"checkpoint_"
#define CKPT_SUFFIX	".ckpt"
/* The directory's path, at most: room for the names of what goes in it. */
#define DIR_MAX		(PATH_MAX - 256)

struct train_rundir {
	char dir[DIR_MAX];
	char csv[PATH_MAX];
	char model[PATH_MAX];		/* the model file, by its absolute path */
	bool made;			/* made by this run in --runs, not --model_dir */
	struct json_object *root;
};

static void utc_now(char *buf, size_t len, bool compact)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The model file's name without its directory and extension: "fc-mnist". */
static void model_stem(const char *model, char *buf, size_t len)
{
	const char *base = strrchr(model, '/');
	char *dot;

	snprintf(buf, len, "%s", base ? base + 1 : model);
	dot = strrchr(buf, '.');
	if (dot && dot != buf)
		*dot = 0;
	if (!*buf)
		snprintf(buf, len, "run");
}

/* mkdir -p: 0 or -errno. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The CRC32C of the file at @path, read in pieces; 0 or -errno. */
static int file_crc32c(const char *path, uint32_t *crc)
{
	static char buf[1 << 20];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*crc = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			*crc = wse_crc32c(*crc, buf, (size_t)n);
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/* Writes run.json atomically. */
static int write_json(struct train_rundir *rd)
{
	char path[PATH_MAX], err[512];
	struct wse_out out;

	snprintf(path, sizeof(path), "%s/run.json", rd->dir);
	if (wse_out_open(&out, path, 0, err, sizeof(err)))
		return train_fail("%s", err);
	if (json_object_to_fd(out.fd, rd->root, JSON_C_TO_STRING_PRETTY |
			      JSON_C_TO_STRING_NOSLASHESCAPE)) {
		wse_out_abandon(&out);
		return train_fail("%s: cannot write it: %s", path, json_util_get_last_err());
	}
	if (wse_out_commit(&out, err, sizeof(err)))
		return train_fail("%s", err);
	return 0;
}

static void set_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void set_num(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

static void set_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* Makes DIR/MODEL-UTCTIME in @runs (-2, -3... if it is taken). */
static int make_run_dir(const char *runs, const char *model, char *dir, size_t len)
{
	char stem[128], when[32];
	int ret;

	if (strlen(runs) + sizeof(stem) + sizeof(when) + 8 > len)
		return train_fail("--runs %s: the path is too long", runs);
	ret = make_dirs(runs);
	if (ret)
		return train_fail("--runs %s: cannot create it: %s", runs, strerror(-ret));
	model_stem(model, stem, sizeof(stem));
	utc_now(when, sizeof(when), true);
	for (int i = 1; i < 100; i++) {
		if (i == 1)
			snprintf(dir, len, "%s/%s-%s", runs, stem, when);
		else
			snprintf(dir, len, "%s/%s-%s-%d", runs, stem, when, i);
		if (!mkdir(dir, 0755))
			return 0;
		if (errno != EEXIST)
			return train_fail("%s: cannot create it: %s", dir, strerror(errno));
	}
	return train_fail("%s/%s-%s: a hundred runs this second already", runs, stem, when);
}

int train_rundir_open(struct train_opts *o, struct train_rundir **out)
{
	struct train_rundir *rd = calloc(1, sizeof(*rd));
	struct json_object *cmd;
	char when[32];
	int ret;

	*out = NULL;
	if (!rd)
		return train_fail("out of memory");
	if (o->runs) {
		if (make_run_dir(o->runs, o->model, rd->dir, sizeof(rd->dir)))
			goto fail;
		rd->made = true;
	} else {
		if (strlen(o->model_dir) >= sizeof(rd->dir)) {
			train_fail("--model_dir %s: the path is too long", o->model_dir);
			goto fail;
		}
		snprintf(rd->dir, sizeof(rd->dir), "%s", o->model_dir);
		ret = make_dirs(rd->dir);
		if (ret) {
			train_fail("--model_dir %s: cannot create it: %s", rd->dir, strerror(-ret));
			goto fail;
		}
	}
	/*
	 * Where the model is, not a copy of it: a program of gigabytes copied
	 * onto a guest's 9p share took longer than the training.
	 */
	if (!realpath(o->model, rd->model)) {
		train_fail("%s: %s", o->model, strerror(errno));
		goto fail;
	}
	rd->root = json_object_new_object();
	cmd = json_object_new_array();
	if (!rd->root || !cmd) {
		json_object_put(cmd);
		train_fail("out of memory");
		goto fail;
	}
	for (int i = 0; i < o->argc; i++)
		json_object_array_add(cmd, json_object_new_string(o->argv[i]));
	json_object_object_add(rd->root, "command", cmd);
	set_str(rd->root, "model_file", rd->model);
	utc_now(when, sizeof(when), false);
	set_str(rd->root, "started", when);
	set_str(rd->root, "status", "running");
	if (write_json(rd))
		goto fail;
	o->model_dir = rd->dir;
	if (!o->csv) {
		snprintf(rd->csv, sizeof(rd->csv), "%s/metrics.csv", rd->dir);
		o->csv = rd->csv;
	}
	if (!o->tensorboard)
		o->tensorboard = rd->dir;
	if (!o->quiet)
		printf("run directory: %s\n", rd->dir);
	*out = rd;
	return 0;
fail:
	/* A directory made in --runs and not started goes again. */
	train_rundir_withdraw(rd);
	json_object_put(rd->root);
	free(rd);
	return -1;
}

/*
 * The model file's size and CRC32C beside its path, so that a later
 * --resume or --eval that takes the model from here can tell it is the
 * same file. A program was read whole already: its image is the file.
 */
static int record_model(struct train_rundir *rd, const struct train_job *j)
{
	struct stat st;
	uint32_t crc;
	char hex[16];
	int ret;

	if (stat(rd->model, &st))
		return train_fail("%s: %s", rd->model, strerror(errno));
	if (train_is_program(rd->model) && (uint64_t)st.st_size == j->image_len) {
		crc = wse_crc32c(0, j->image, j->image_len);
	} else {
		ret = file_crc32c(rd->model, &crc);
		if (ret)
			return train_fail("%s: cannot read it: %s", rd->model, strerror(-ret));
	}
	set_int(rd->root, "model_size", (int64_t)st.st_size);
	snprintf(hex, sizeof(hex), "%08x", crc);
	set_str(rd->root, "model_crc32c", hex);
	return 0;
}

int train_rundir_started(struct train_rundir *rd, const struct train_job *j)
{
	const struct train_opts *o = j->o;
	const struct wsep_program *p = j->p;
	struct json_object *devs = json_object_new_array();
	struct json_object *ver = json_object_new_object();
	static const char *const tasks[] = { "train_and_eval", "train", "eval", "predict" };
	struct utsname u;
	char buf[64];

	if (!rd)
		return 0;
	if (!devs || !ver) {
		json_object_put(devs);
		json_object_put(ver);
		return train_fail("out of memory");
	}
	if (record_model(rd, j))
		return -1;
	set_str(rd->root, "model", p->model_name);
	set_str(rd->root, "task", tasks[o->task]);
	set_str(rd->root, "mode", wsep_mode_name(p->mode));
	set_int(rd->root, "systems", j->n);
	set_int(rd->root, "batch", j->batch);
	set_str(rd->root, "optimizer", wsep_optimizer_name(p->opt.kind));
	set_str(rd->root, "precision", wsep_precision_name(p->precision));
	set_num(rd->root, "lr", p->opt.lr);
	set_str(rd->root, "schedule", p->opt.schedule == WSEP_LR_WARMUP_COSINE ?
		"warmup_cosine" : "constant");
	set_int(rd->root, "epochs", o->epochs);
	set_int(rd->root, "steps", (int64_t)train_steps_total(j, NULL));
	if (p->opt.schedule == WSEP_LR_WARMUP_COSINE) {
		set_int(rd->root, "warmup", (int64_t)p->opt.warmup);
		set_int(rd->root, "schedule_steps", (int64_t)p->opt.total_steps);
		set_num(rd->root, "min_lr", p->opt.min_lr);
	}
	/* Every setting resolved, as a params file that repeats the run. */
	if (train_hparams_record(j, rd->dir))
		return -1;
	set_str(rd->root, "params", "params.yaml");
	if (train_placement_record(p, rd->dir))
		return -1;
	set_int(rd->root, "train_samples", j->used);
	set_int(rd->root, "test_samples", o->no_eval ? 0 :
		o->test_limit && o->test_limit < j->test.count ? o->test_limit : j->test.count);
	/* One device: a system, or an appliance whose systems the job holds. */
	{
		const struct drm_wse_device_info *d = &j->sys[0].info.dev;
		struct json_object *dev = json_object_new_object();

		if (!dev) {
			json_object_put(devs);
			json_object_put(ver);
			return train_fail("out of memory");
		}
		set_str(dev, "name", j->sys[0].name);
		set_str(dev, "kind", j->appliance ? "appliance" : "system");
		/* A string: ids above 2^53 would lose digits in JSON numbers. */
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)d->device_id);
		set_str(dev, "device_id", buf);
		snprintf(buf, sizeof(buf), "%ux%u", d->wafer_width, d->wafer_height);
		set_str(dev, "wafer", buf);
		set_str(dev, "firmware", d->fw_version);
		json_object_array_add(devs, dev);
	}
	json_object_object_add(rd->root, "devices", devs);
	set_str(ver, "wse", WSE_VERSION);
	if (!uname(&u))
		set_str(ver, "kernel", u.release);
	set_str(ver, "firmware", j->sys[0].info.dev.fw_version);
	json_object_object_add(rd->root, "versions", ver);
	return write_json(rd);
}

int train_rundir_finish(struct train_rundir *rd, const char *status,
			const struct train_final *f)
{
	struct json_object *fin;
	char when[32];
	int ret;

	if (!rd)
		return 0;
	utc_now(when, sizeof(when), false);
	set_str(rd->root, "finished", when);
	set_str(rd->root, "status", status);
	fin = json_object_new_object();
	if (fin && f) {
		set_int(fin, "step", (int64_t)f->step);
		set_int(fin, "samples", (int64_t)f->samples);
		set_num(fin, "seconds", f->seconds);
		set_num(fin, "samples_per_s", f->samples_per_s);
		if (f->have_test) {
			set_num(fin, "test_loss", f->test_loss);
			set_num(fin, "test_accuracy", f->test_accuracy);
		}
		if (f->checkpoint[0]) {
			size_t n = strlen(rd->dir);

			/* In the run directory: by its name there, as the guest's paths are not the host's. */
			set_str(fin, "checkpoint",
				!strncmp(f->checkpoint, rd->dir, n) && f->checkpoint[n] == '/' ?
				f->checkpoint + n + 1 : f->checkpoint);
		}
		json_object_object_add(rd->root, "final", fin);
	} else {
		json_object_put(fin);
	}
	ret = write_json(rd);
	return ret;
}

/* Is every entry of @d a regular file (0), or does @unlink remove them all (0)? */
static int regular_files(DIR *d, bool unlink)
{
	struct dirent *e;
	int fd = dirfd(d);

	rewinddir(d);
	while ((e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlink ? unlinkat(fd, e->d_name, 0) :
			     fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			return -1;
	}
	return 0;
}

int train_rundir_withdraw(struct train_rundir *rd)
{
	DIR *d;
	int ret;

	if (!rd || !rd->made)
		return -1;
	d = opendir(rd->dir);
	if (!d)
		return -1;
	/* Only files this run wrote are there: anything else leaves it all. */
	ret = regular_files(d, false) || regular_files(d, true) ? -1 : 0;
	closedir(d);
	return ret || rmdir(rd->dir) ? -1 : 0;
}

void train_rundir_close(struct train_rundir *rd)
{
	if (!rd)
		return;
	json_object_put(rd->root);
	free(rd);
}

/* The step of a checkpoint_<step>.ckpt name; false for other names. */
static bool series_step(const char *name, uint64_t *step)
{
	size_t n = strlen(name), p = strlen(CKPT_PREFIX), s = strlen(CKPT_SUFFIX);
	char digits[32];

	if (n <= p + s || n - p - s >= sizeof(digits) || strncmp(name, CKPT_PREFIX, p) ||
	    strcmp(name + n - s, CKPT_SUFFIX))
		return false;
	memcpy(digits, name + p, n - p - s);
	digits[n - p - s] = 0;
	if (strspn(digits, "0123456789") != strlen(digits))
		return false;
	*step = strtoull(digits, NULL, 10);
	return true;
}

void train_rundir_checkpoint_path(const char *dir, uint64_t step, char *buf, size_t len)
{
	size_t n = strlen(dir);

	/* "runs/x/" and "runs/x" name the same directory. */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	snprintf(buf, len, "%.*s/" CKPT_PREFIX "%llu" CKPT_SUFFIX, (int)n, dir,
		 (unsigned long long)step);
}

int train_rundir_newest(const char *dir, char *buf, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t best = 0, step;
	bool found = false;

	if (!d)
		return errno == ENOENT ? -ENOENT : -errno;
	while ((e = readdir(d)))
		if (series_step(e->d_name, &step) && (!found || step > best)) {
			best = step;
			found = true;
		}
	closedir(d);
	if (!found)
		return -ENOENT;
	train_rundir_checkpoint_path(dir, best, buf, len);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void train_rundir_prune(const char *dir, uint32_t keep)
{
	uint64_t *steps = NULL, step;
	size_t n = 0, cap = 0;
	struct dirent *e;
	char path[PATH_MAX];
	DIR *d;

	if (!keep || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		if (!series_step(e->d_name, &step))
			continue;
		if (n == cap) {
			uint64_t *more = realloc(steps, (cap = cap ? 2 * cap : 16) * sizeof(*steps));

			if (!more)
				break;
			steps = more;
		}
		steps[n++] = step;
	}
	closedir(d);
	qsort(steps, n, sizeof(*steps), cmp_u64);
	for (size_t i = 0; i + keep < n; i++) {
		train_rundir_checkpoint_path(dir, steps[i], path, sizeof(path));
		if (unlink(path) && errno != ENOENT)
			fprintf(stderr, "wsetrain: note: %s: cannot remove it (--keep %u): %s\n",
				path, keep, strerror(errno));
	}
	free(steps);
}

/* A string member of @root, or NULL. */
static const char *str_member(struct json_object *root, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(root, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/*
 * The model file run.json names is the one the run trained: there, of the
 * size recorded, and (unless it is a program, whose image train_program
 * checks once it has read it) of the CRC32C recorded.
 */
static int check_model(const char *json, const char *path, struct json_object *root,
		       struct train_model_pin *pin)
{
	const char *hex = str_member(root, "model_crc32c");
	struct json_object *size;
	struct stat st;
	uint32_t crc;
	char *end;
	int ret;

	if (stat(path, &st))
		return train_fail("%s names the model %s, which is gone (%s): name the model to train (wsetrain MODEL --resume CHECKPOINT)",
				  json, path, strerror(errno));
	/* A run that ended before it had read the program recorded only the path. */
	if (!hex || !json_object_object_get_ex(root, "model_size", &size))
		return 0;
	pin->size = (uint64_t)json_object_get_int64(size);
	pin->crc = (uint32_t)strtoul(hex, &end, 16);
	if (*end || !*hex)
		return train_fail("%s: model_crc32c '%s' is not a hexadecimal CRC32C", json, hex);
	if ((uint64_t)st.st_size != pin->size)
		return train_fail("%s is not the model the run in %s trained: it has %llu bytes, run.json recorded %llu (name the model to train it anyway)",
				  path, json, (unsigned long long)st.st_size,
				  (unsigned long long)pin->size);
	pin->set = true;
	pin->run_json = json;
	if (train_is_program(path))
		return 0;
	ret = file_crc32c(path, &crc);
	if (ret)
		return train_fail("%s: cannot read it: %s", path, strerror(-ret));
	return train_model_pin_check(pin, path, crc);
}

int train_model_pin_check(const struct train_model_pin *pin, const char *path, uint32_t crc)
{
	if (!pin->set || crc == pin->crc)
		return 0;
	return train_fail("%s has changed since the run in %s trained it: CRC32C %08x, run.json recorded %08x (name the model to train it anyway)",
			  path, pin->run_json, crc, pin->crc);
}

int train_rundir_model_of(const char *checkpoint, char *buf, size_t len,
			  struct train_model_pin *pin)
{
	static char json[PATH_MAX];	/* named by @pin's messages */
	char dir[PATH_MAX];
	struct json_object *root;
	const char *file;
	int ret = -ENOENT;

	memset(pin, 0, sizeof(*pin));
	snprintf(dir, sizeof(dir), "%s", checkpoint);
	snprintf(json, sizeof(json), "%s/run.json", dirname(dir));
	root = json_object_from_file(json);
	if (!root)
		return -ENOENT;
	file = str_member(root, "model_file");
	if (file && file[0] == '/') {
		snprintf(buf, len, "%s", file);
		ret = check_model(json, buf, root, pin) ? -EINVAL : 0;
	} else if (file && !strchr(file, '/')) {
		/* An older run directory kept a copy of the model in it. */
		snprintf(buf, len, "%s/%s", dir, file);
		ret = access(buf, R_OK) ? -errno : 0;
	}
	json_object_put(root);
	return ret;
}

int train_rundir_find_model(struct train_opts *o, char *buf, size_t len)
{
	const char *ckpt = o->init_from ? o->init_from : o->resume;
	int ret;

	if (o->model)
		return 0;
	ret = ckpt ? train_rundir_model_of(ckpt, buf, len, &o->model_pin) : -ENOENT;
	if (ret == -EINVAL)
		return -1;	/* said why */
	if (ret)
		return train_fail("no model given, and %s is not in a run directory that names one: name the model (see --help)",
				  ckpt ? ckpt : "no checkpoint");
	o->model = buf;
	return 0;
}
