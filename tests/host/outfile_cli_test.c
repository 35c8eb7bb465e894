// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tools' outputs as a user names them (wse/outfile.h behind them):
 * `wsecc -o /dev/null` leaves the device a device, a FIFO gets the program
 * through, a directory is refused by name, `-o -` is standard output, and
 * `wsetrain --compile-only -o` does the same, and wsereport's page and
 * plots go through links and FIFOs. /dev/null itself is never
 * written to: the real one is bind-mounted onto a file of the test's own
 * directory inside a scratch user and mount namespace, where nothing the
 * test does is seen outside. Runs build/bin/ from the repository root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "run_cmd.h"
#include "test_files.h"

#define WSECC "build/bin/wsecc"
#define WSETRAIN "build/bin/wsetrain"
#define WSEREPORT "build/bin/wsereport"
#define MODEL "models/fc-mnist"

/* What the child in the namespace reports: its exit status. */
enum ns_result { NS_OK, NS_TOOL_FAILED, NS_NOT_A_DEVICE, NS_LEFTOVERS, NS_SETUP, NS_NO_USERNS };

FIXTURE(cli) {
	char dir[64];
	char path[PATH_MAX];
	char cmd[PATH_MAX + 256];
	char msg[8192];
};

FIXTURE_SETUP(cli)
{
	ASSERT_EQ(0, access(WSECC, X_OK)) TH_LOG("%s missing: run make, from the repository root",
						 WSECC);
	strcpy(self->dir, "/tmp/outfile_cli_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(cli)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

static const char *at(FIXTURE_DATA(cli) *self, const char *name)
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

/* The program wsecc writes to a regular file: what every other kind of output must get. */
static char *reference(FIXTURE_DATA(cli) *self, size_t *len)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/reference.wsep", self->dir);
	snprintf(self->cmd, sizeof(self->cmd), WSECC " " MODEL " -q -o %s", path);
	if (run_cmd_all(self->cmd, self->msg, sizeof(self->msg)))
		return NULL;
	return test_read_file(path, len);
}

static bool is_dev_null(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * In a new user and mount namespace: /dev/null bind-mounted onto
 * @dir/null, then @cmd (which writes to it) run. Returns an enum ns_result.
 */
static int dev_null_in_namespace(const char *dir, const char *cmd)
{
	char null[PATH_MAX], map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int fd, st;
	pid_t pid;

	snprintf(null, sizeof(null), "%s/null", dir);
	pid = fork();
	if (pid < 0)
		return NS_SETUP;
	if (pid) {
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : NS_SETUP;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		fprintf(stderr, "# no user namespace: %s\n", strerror(errno));
		_exit(NS_NO_USERNS);
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
	if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/uid_map", map))
		_exit(NS_SETUP);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
	if (write_file("/proc/self/gid_map", map))
		_exit(NS_SETUP);
	/* Nothing mounted here reaches the machine's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		_exit(NS_SETUP);
	fd = open(null, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		_exit(NS_SETUP);
	close(fd);
	if (mount("/dev/null", null, NULL, MS_BIND, NULL)) {
		fprintf(stderr, "# bind mount of /dev/null: %s\n", strerror(errno));
		_exit(NS_SETUP);
	}
	if (!is_dev_null(null))
		_exit(NS_SETUP);
	st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "# %s: exit %d\n", cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		_exit(NS_TOOL_FAILED);
	}
	if (!is_dev_null(null))
		_exit(NS_NOT_A_DEVICE);
	if (entries(dir) != 1)
		_exit(NS_LEFTOVERS);
	_exit(NS_OK);
}

static void dev_null_case(struct __test_metadata *_metadata, FIXTURE_DATA(cli) *self,
			  const char *tool_args)
{
	int r;

	snprintf(self->cmd, sizeof(self->cmd), "%s -o %s/null", tool_args, self->dir);
	r = dev_null_in_namespace(self->dir, self->cmd);
	if (r == NS_NO_USERNS)
		SKIP(return, "this kernel gives no user namespace");
	ASSERT_NE(NS_SETUP, r) TH_LOG("could not set up the namespace");
	EXPECT_NE(NS_TOOL_FAILED, r) TH_LOG("%s failed on /dev/null (see above)", self->cmd);
	EXPECT_NE(NS_NOT_A_DEVICE, r) TH_LOG("%s replaced /dev/null", self->cmd);
	EXPECT_NE(NS_LEFTOVERS, r) TH_LOG("%s left a file beside /dev/null", self->cmd);
	EXPECT_EQ(NS_OK, r);
}

TEST_F(cli, wsecc_o_dev_null_stays_a_device)
{
	dev_null_case(_metadata, self, WSECC " " MODEL " -q");
}

TEST_F(cli, wsetrain_compile_only_o_dev_null_stays_a_device)
{
	ASSERT_EQ(0, access(WSETRAIN, X_OK));
	dev_null_case(_metadata, self, WSETRAIN " " MODEL " --compile-only");
}

TEST_F(cli, wsecc_o_device_node_stays_a_device)
{
	/* The report's case as it was: a device node, no mount; needs CAP_MKNOD. */
	if (mknod(at(self, "null"), S_IFCHR | 0666, makedev(1, 3)))
		SKIP(return, "cannot make a device node (%s): the namespace cases cover it",
		     strerror(errno));
	snprintf(self->cmd, sizeof(self->cmd), WSECC " " MODEL " -q -o %s", self->path);
	EXPECT_EQ(0, run_cmd_all(self->cmd, self->msg, sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_TRUE(is_dev_null(at(self, "null"))) TH_LOG("wsecc replaced the device node");
	EXPECT_EQ(1, entries(self->dir));
}

struct fifo_reader {
	int fd;
	char *buf;
	size_t len;
};

static void *read_fifo(void *arg)
{
	struct fifo_reader *r = arg;

	r->buf = test_read_fd(r->fd, &r->len);
	return NULL;
}

/* wsecc -o @out, where @fifo has a reader: it must get the reference's bytes. */
static void fifo_case(struct __test_metadata *_metadata, FIXTURE_DATA(cli) *self,
		      const char *out, const char *fifo)
{
	struct fifo_reader r = { 0 };
	size_t want_len;
	char *want = reference(self, &want_len);
	struct stat st;
	pthread_t t;
	int hold;

	ASSERT_NE(NULL, want) TH_LOG("%s", self->msg);
	/*
	 * The reader's end opened here, against a writer the test holds, so
	 * neither open waits and the reader sees the end of the data when
	 * wsecc and the test have both closed, whatever wsecc did.
	 */
	hold = open(fifo, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, hold);
	r.fd = open(fifo, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, read_fifo, &r));
	snprintf(self->cmd, sizeof(self->cmd), WSECC " " MODEL " -q -o %s", out);
	EXPECT_EQ(0, run_cmd_all(self->cmd, self->msg, sizeof(self->msg))) TH_LOG("%s", self->msg);
	close(hold);
	pthread_join(t, NULL);
	close(r.fd);
	ASSERT_NE(NULL, r.buf);
	EXPECT_EQ(want_len, r.len);
	EXPECT_EQ(0, memcmp(want, r.buf, want_len < r.len ? want_len : r.len));
	ASSERT_EQ(0, lstat(fifo, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode)) TH_LOG("wsecc replaced the FIFO");
	free(r.buf);
	free(want);
}

TEST_F(cli, wsecc_o_fifo_written_through)
{
	ASSERT_EQ(0, mkfifo(at(self, "fifo"), 0600));
	fifo_case(_metadata, self, self->path, self->path);
	EXPECT_EQ(2, entries(self->dir));	/* the FIFO and the reference */
}

TEST_F(cli, wsecc_o_symlink_to_fifo_written_through)
{
	char fifo[PATH_MAX];

	snprintf(fifo, sizeof(fifo), "%s", at(self, "fifo"));
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	ASSERT_EQ(0, symlink("fifo", at(self, "link")));
	fifo_case(_metadata, self, self->path, fifo);
	EXPECT_EQ(3, entries(self->dir));
}

TEST_F(cli, wsecc_o_symlink_to_file_replaces_the_file)
{
	size_t want_len, len = 0;
	char *want = reference(self, &want_len), *got;
	struct stat st;

	ASSERT_NE(NULL, want) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, mkdir(at(self, "sub"), 0755));
	ASSERT_EQ(0, close(open(at(self, "sub/prog.wsep"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644)));
	ASSERT_EQ(0, symlink("sub/prog.wsep", at(self, "link.wsep")));
	snprintf(self->cmd, sizeof(self->cmd), WSECC " " MODEL " -q -o %s", self->path);
	EXPECT_EQ(0, run_cmd_all(self->cmd, self->msg, sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, lstat(self->path, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode)) TH_LOG("the link was replaced");
	got = test_read_file(at(self, "sub/prog.wsep"), &len);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(want_len, len);
	EXPECT_EQ(0, memcmp(want, got, want_len < len ? want_len : len));
	EXPECT_EQ(1, entries(at(self, "sub")));
	free(got);
	free(want);
}

TEST_F(cli, wsecc_o_directory_refused_by_name)
{
	ASSERT_EQ(0, mkdir(at(self, "out"), 0755));
	snprintf(self->cmd, sizeof(self->cmd), WSECC " " MODEL " -q -o %s", self->path);
	EXPECT_EQ(3, run_cmd_all(self->cmd, self->msg, sizeof(self->msg)));
	EXPECT_NE(NULL, strstr(self->msg, self->path)) TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "is a directory")) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, entries(self->path));
}

/* @cmd's standard output (its stderr to @self->msg's file), into a buffer. */
static char *stdout_of(FIXTURE_DATA(cli) *self, const char *cmd, size_t *len, int *status)
{
	char full[PATH_MAX * 3];
	FILE *p;
	char *buf;

	snprintf(full, sizeof(full), "%s 2>%s/stderr", cmd, self->dir);
	p = popen(full, "r");
	if (!p)
		return NULL;
	buf = test_read_fd(fileno(p), len);
	*status = pclose(p);
	return buf;
}

/* `TOOL ... -o -` run in the test's directory: the program on the pipe, nothing named "-". */
static void stdout_case(struct __test_metadata *_metadata, FIXTURE_DATA(cli) *self,
			const char *tool, const char *args)
{
	char cwd[PATH_MAX], cmd[PATH_MAX * 2 + 128];
	size_t want_len, len = 0;
	char *want = reference(self, &want_len), *got;
	int st = -1;

	ASSERT_NE(NULL, want) TH_LOG("%s", self->msg);
	ASSERT_NE(NULL, getcwd(cwd, sizeof(cwd)));
	snprintf(cmd, sizeof(cmd), "cd %s && %s/%s %s/" MODEL " %s -o -", self->dir, cwd, tool,
		 cwd, args);
	got = stdout_of(self, cmd, &len, &st);
	ASSERT_NE(NULL, got);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%s", cmd);
	EXPECT_EQ(want_len, len) TH_LOG("the summary line mixed into the program?");
	EXPECT_EQ(0, memcmp(want, got, want_len < len ? want_len : len));
	EXPECT_NE(0, access(at(self, "-"), F_OK)) TH_LOG("a file named '-' was made");
	free(got);
	free(want);
}

TEST_F(cli, wsecc_o_dash_is_stdout)
{
	stdout_case(_metadata, self, WSECC, "");
}

TEST_F(cli, wsetrain_compile_only_o_dash_is_stdout)
{
	ASSERT_EQ(0, access(WSETRAIN, X_OK));
	stdout_case(_metadata, self, WSETRAIN, "--compile-only");
}

/*
 * wsereport's page and plots: index.html a link to a page kept elsewhere,
 * loss.svg a FIFO with a reader; the link kept, the FIFO fed, and no
 * temporary file left in the directory or listed on the page.
 */
TEST_F(cli, wsereport_page_through_links_and_fifos)
{
	static const char csv[] = "kind,step,epoch,loss,accuracy,samples_per_s,wall_s\n"
				  "train,10,1,2.0,0.2,1000,1\ntrain,20,1,1.5,0.5,1000,2\n"
				  "test,20,1,1.6,0.45,,2\n";
	struct fifo_reader r = { 0 };
	char run[PATH_MAX], page[PATH_MAX], *html;
	size_t len = 0;
	struct stat st;
	pthread_t t;
	int hold, fd;

	snprintf(run, sizeof(run), "%s/run", self->dir);
	ASSERT_EQ(0, mkdir(run, 0755));
	fd = open(at(self, "run/metrics.csv"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_EQ((ssize_t)strlen(csv), write(fd, csv, strlen(csv)));
	close(fd);
	snprintf(page, sizeof(page), "%s/page.html", self->dir);
	ASSERT_EQ(0, symlink("../page.html", at(self, "run/index.html")));
	ASSERT_EQ(0, mkfifo(at(self, "run/loss.svg"), 0600));
	hold = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, hold);
	r.fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, read_fifo, &r));
	snprintf(self->cmd, sizeof(self->cmd), WSEREPORT " -q %s", run);
	EXPECT_EQ(0, run_cmd_all(self->cmd, self->msg, sizeof(self->msg))) TH_LOG("%s", self->msg);
	close(hold);
	pthread_join(t, NULL);
	close(r.fd);
	EXPECT_TRUE(r.buf && memmem(r.buf, r.len, "<svg", 4)) TH_LOG("the FIFO's reader got no plot");
	ASSERT_EQ(0, lstat(at(self, "run/loss.svg"), &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode)) TH_LOG("loss.svg, a FIFO, was replaced");
	ASSERT_EQ(0, lstat(at(self, "run/index.html"), &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode)) TH_LOG("index.html, a link, was replaced");
	/* metrics.csv, index.html, loss.svg, accuracy.svg, rate.svg: nothing else. */
	EXPECT_EQ(5, entries(run));
	free(r.buf);
	html = test_read_file(page, &len);
	EXPECT_NE(NULL, html) TH_LOG("no page written through the link");
	if (!html)
		return;
	EXPECT_NE(NULL, strstr(html, "accuracy.svg"));
	EXPECT_EQ(NULL, strstr(html, ".tmp")) TH_LOG("the page links a temporary file");
	free(html);
}

TEST_HARNESS_MAIN
