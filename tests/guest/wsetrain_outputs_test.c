// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain's outputs where the user points them (wse/outfile.h behind
 * them), in the guest through the driver: a checkpoint into a FIFO, a
 * device node and a symbolic link, the CSV into a FIFO as it grows, a
 * directory refused by name, --predict -o - on stdout. Everything lives
 * in a fresh directory under /tmp; the device node is one of the test's
 * own (1:3), never /dev/null itself.
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse_guest.h"

#define FMNIST		"/usr/share/datasets/fashion-mnist"
#define OUT_MAX		(64 << 10)
/* The small model's checkpoint is ~200 KB: room for it. */
#define READ_MAX	(4 << 20)

static const char small_model[] =
	"model small\ninput 784 u8\ndense 784 32 relu\ndense 32 10 none\n"
	"loss softmax_xent\noptimizer adam lr=1e-3\nbatch 64\nseed 3\n";

FIXTURE(outputs) {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	bool fw_up, attached;
	uint32_t index;
	char dir[64];
	char path[PATH_MAX];
	char train[512];	/* "wsetrain MODEL --devices N ..." */
	char *out;
};

FIXTURE_SETUP(outputs)
{
	struct wse_dev_status d;
	struct stat st;
	char model[128];
	FILE *f;

	/*
	 * These runs are about their outputs, not their run directories:
	 * none in the shared runs that rundir_test judges as training runs.
	 */
	unsetenv("WSETRAIN_RUNS");

	if (stat(FMNIST "/train-images-idx3-ubyte.gz", &st))
		SKIP(return, "Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	strcpy(self->dir, "/tmp/wsetrain_outputs.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(model, sizeof(model), "%s/small.model", self->dir);
	f = fopen(model, "w");
	ASSERT_NE(NULL, f);
	fputs(small_model, f);
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "64x64", "--log-level",
				      "warn", NULL));
	self->fw_up = true;
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &d));
	self->attached = true;
	self->index = d.index;
	snprintf(self->train, sizeof(self->train),
		 "wsetrain %s --devices %u --train-limit 640 --no-eval -q", model, d.index);
}

FIXTURE_TEARDOWN(outputs)
{
	char cmd[128];

	if (self->attached)
		wse_ctl_detach(self->ctl, self->index);
	if (self->fw_up)
		guest_peer_stop(&self->fw, SIGTERM);
	if (self->ctl)
		wse_ctl_close(self->ctl);
	free(self->out);
	if (self->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
		if (system(cmd))
			TH_LOG("could not remove %s", self->dir);
	}
}

static const char *at(FIXTURE_DATA(outputs) *self, const char *name)
{
	snprintf(self->path, sizeof(self->path), "%s/%s", self->dir, name);
	return self->path;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A FIFO's reader: its read end opened against a writer the test holds, so no open waits. */
struct fifo_reader {
	int fd, hold;
	pthread_t thread;
	char *buf;
	size_t len;
};

static void *read_fifo(void *arg)
{
	struct fifo_reader *r = arg;
	ssize_t n;

	while (r->len < READ_MAX && (n = read(r->fd, r->buf + r->len, READ_MAX - r->len)) > 0)
		r->len += (size_t)n;
	return NULL;
}

static int reader_start(struct fifo_reader *r, const char *fifo)
{
	memset(r, 0, sizeof(*r));
	r->buf = malloc(READ_MAX);
	r->hold = open(fifo, O_RDWR | O_CLOEXEC);
	r->fd = open(fifo, O_RDONLY | O_CLOEXEC);
	if (!r->buf || r->hold < 0 || r->fd < 0)
		return -1;
	return pthread_create(&r->thread, NULL, read_fifo, r) ? -1 : 0;
}

/* After the writer is done: the test's writer closed, so the reader sees the end. */
static void reader_finish(struct fifo_reader *r)
{
	close(r->hold);
	pthread_join(r->thread, NULL);
	close(r->fd);
}

/* wsetrain --inspect of @len bytes of @buf, written to @path first: its exit status. */
static int inspect(FIXTURE_DATA(outputs) *self, const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		return -1;
	return guest_run(self->out, OUT_MAX, "wsetrain --inspect %s", path);
}

TEST_F_TIMEOUT(outputs, checkpoint_into_fifo_and_device_node, 600)
{
	struct fifo_reader r;
	char fifo[PATH_MAX];
	struct stat st;
	int ret;

	snprintf(fifo, sizeof(fifo), "%s", at(self, "ckpt.fifo"));
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	ASSERT_EQ(0, reader_start(&r, fifo));
	ret = guest_run(self->out, OUT_MAX, "%s --checkpoint %s", self->train, fifo);
	reader_finish(&r);
	EXPECT_EQ(0, ret) TH_LOG("%s", self->out);
	ASSERT_EQ(0, lstat(fifo, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode)) TH_LOG("the FIFO was replaced");
	ASSERT_LT(8U, r.len) TH_LOG("the FIFO's reader got %zu bytes", r.len);
	EXPECT_EQ(0, memcmp(r.buf, "WSECKPT", 7));
	/* What came through the FIFO is a whole, valid checkpoint. */
	EXPECT_EQ(0, inspect(self, at(self, "from-fifo.ckpt"), r.buf, r.len)) TH_LOG("%s", self->out);
	free(r.buf);

	/* A null device node of the test's own: written to, still the device after. */
	ASSERT_EQ(0, mknod(at(self, "null"), S_IFCHR | 0666, makedev(1, 3)));
	ret = guest_run(self->out, OUT_MAX, "%s --checkpoint %s", self->train, self->path);
	EXPECT_EQ(0, ret) TH_LOG("%s", self->out);
	ASSERT_EQ(0, lstat(at(self, "null"), &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		TH_LOG("the device node was replaced");
	/* small.model, the FIFO, from-fifo.ckpt, null: no temporary file left. */
	EXPECT_EQ(4, entries(self->dir));
}

TEST_F_TIMEOUT(outputs, checkpoint_through_symlink_csv_into_fifo, 600)
{
	struct fifo_reader r;
	char fifo[PATH_MAX], link[PATH_MAX];
	struct stat st;
	int ret;

	ASSERT_EQ(0, mkdir(at(self, "keep"), 0755));
	snprintf(link, sizeof(link), "%s", at(self, "latest.ckpt"));
	ASSERT_EQ(0, symlink("keep/run.ckpt", link));
	snprintf(fifo, sizeof(fifo), "%s", at(self, "csv.fifo"));
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	ASSERT_EQ(0, reader_start(&r, fifo));
	ret = guest_run(self->out, OUT_MAX, "%s --checkpoint %s --csv %s --report 2", self->train,
			link, fifo);
	reader_finish(&r);
	EXPECT_EQ(0, ret) TH_LOG("%s", self->out);
	/* The link kept, the file it names made, and valid. */
	ASSERT_EQ(0, lstat(link, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode)) TH_LOG("the link was replaced");
	EXPECT_EQ(0, guest_run(self->out, OUT_MAX, "wsetrain --inspect %s", at(self, "keep/run.ckpt")))
		TH_LOG("%s", self->out);
	EXPECT_EQ(1, entries(at(self, "keep")));
	/* The CSV's rows came through the FIFO. */
	ASSERT_LT(0U, r.len);
	r.buf[r.len < READ_MAX ? r.len : READ_MAX - 1] = '\0';
	EXPECT_EQ(0, strncmp(r.buf, "kind,step,epoch,loss", 20)) TH_LOG("%.200s", r.buf);
	EXPECT_NE(NULL, strstr(r.buf, "\ntrain,2,1,")) TH_LOG("%.400s", r.buf);
	ASSERT_EQ(0, lstat(fifo, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
	free(r.buf);
}

TEST_F_TIMEOUT(outputs, directory_refused_and_predict_to_stdout, 600)
{
	char ckpt[PATH_MAX];
	int ret;

	/* A directory for a checkpoint: refused, by name, and left empty. */
	ASSERT_EQ(0, mkdir(at(self, "ckdir"), 0755));
	ret = guest_run(self->out, OUT_MAX, "%s --checkpoint %s", self->train, self->path);
	EXPECT_EQ(1, ret) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "is a directory")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, self->path)) TH_LOG("%s", self->out);
	EXPECT_EQ(0, entries(self->path));

	/* --predict -o -: the classes on stdout, no file named '-'. */
	snprintf(ckpt, sizeof(ckpt), "%s", at(self, "p.ckpt"));
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "%s --checkpoint %s", self->train, ckpt))
		TH_LOG("%s", self->out);
	ret = guest_run(self->out, OUT_MAX,
			"cd %s && wsetrain small.model --predict %s --data " FMNIST
			"/t10k-images-idx3-ubyte.gz --devices %u -q -o - 2>/dev/null | head -3",
			self->dir, ckpt, self->index);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, strncmp(self->out, "sample,class\n0,", 15)) TH_LOG("%.200s", self->out);
	EXPECT_NE(0, access(at(self, "-"), F_OK)) TH_LOG("a file named '-' was made");
}

TEST_HARNESS_MAIN
