// SPDX-License-Identifier: GPL-2.0-only
/*
 * Output files (wse/outfile.h): a regular file or a missing path replaced
 * atomically, a symlink's file replaced with the link kept, a FIFO, a
 * socket and a device written through and left what they are, a directory
 * and a stray "-" refused. Everything happens in a fresh directory under
 * /tmp; the device is one made there (when the test may mknod).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/outfile.h"
#include "test_files.h"

/* Bytes enough to fill a pipe's buffer several times over. */
#define BIG	(1 << 20)

FIXTURE(out) {
	char dir[64];
	char path[PATH_MAX];
	char err[512];
};

FIXTURE_SETUP(out)
{
	strcpy(self->dir, "/tmp/outfile_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(out)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* @name in the test's directory. */
static const char *at(FIXTURE_DATA(out) *self, const char *name)
{
	snprintf(self->path, sizeof(self->path), "%s/%s", self->dir, name);
	return self->path;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* What @path holds (at most @cap - 1 bytes), NUL ended; "" if it cannot be read. */
static char *get(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* Entries of @dir, "." and ".." aside: a temporary file left behind shows here. */
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

struct reader {
	int fd;			/* a FIFO's read end, or a listening socket */
	bool accept;
	char *buf;
	size_t len;
};

/* Reads to the end: what a FIFO's reader or a socket's peer got. */
static void *read_all(void *arg)
{
	struct reader *r = arg;
	int fd = r->accept ? accept(r->fd, NULL, NULL) : r->fd;
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, r->buf + r->len, BIG + 1 - r->len)) > 0)
		r->len += (size_t)n;
	if (r->accept)
		close(fd);
	return NULL;
}

static char *pattern(void)
{
	char *p = malloc(BIG);

	for (size_t i = 0; p && i < BIG; i++)
		p[i] = (char)(i * 131 + (i >> 9));
	return p;
}

TEST_F(out, missing_path_is_created_whole)
{
	char buf[64];

	ASSERT_EQ(0, wse_out_write_file(at(self, "new"), 0, "hello\n", 6, self->err,
					sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_STREQ("hello\n", get(at(self, "new"), buf, sizeof(buf)));
	EXPECT_EQ(1, entries(self->dir)) TH_LOG("a temporary file was left behind");
}

TEST_F(out, regular_file_replaced_atomically_keeping_its_mode)
{
	struct wse_out o;
	struct stat before, after;
	char buf[64];

	put(at(self, "f"), "old\n");
	ASSERT_EQ(0, chmod(self->path, 0640));
	ASSERT_EQ(0, stat(self->path, &before));
	ASSERT_EQ(0, wse_out_open(&o, self->path, 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_TRUE(o.replace);
	ASSERT_EQ(0, wse_out_write(&o, "new\n", 4, self->err, sizeof(self->err)));
	/* Until the commit, readers see the old file; the new one is hidden beside it. */
	EXPECT_STREQ("old\n", get(at(self, "f"), buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(o.tmp, self->dir, strlen(self->dir)));
	EXPECT_EQ('.', strrchr(o.tmp, '/')[1]);
	EXPECT_STREQ(o.tmp, wse_out_name(&o));
	ASSERT_EQ(0, wse_out_commit(&o, self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_STREQ("new\n", get(at(self, "f"), buf, sizeof(buf)));
	ASSERT_EQ(0, stat(self->path, &after));
	EXPECT_NE(before.st_ino, after.st_ino);
	EXPECT_EQ(0640U, after.st_mode & 0777);
	EXPECT_EQ(1, entries(self->dir));
}

TEST_F(out, abandoned_output_leaves_the_file_as_it_was)
{
	struct wse_out o;
	char buf[64];

	put(at(self, "f"), "old\n");
	ASSERT_EQ(0, wse_out_open(&o, self->path, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, wse_out_write(&o, "half", 4, self->err, sizeof(self->err)));
	wse_out_abandon(&o);
	EXPECT_STREQ("old\n", get(at(self, "f"), buf, sizeof(buf)));
	EXPECT_EQ(1, entries(self->dir));
}

TEST_F(out, symlink_to_a_file_replaces_the_file_and_keeps_the_link)
{
	char buf[64], link[PATH_MAX], sub[PATH_MAX];
	struct wse_out o;
	struct stat st;
	ssize_t n;

	/* link2 -> link -> sub/real: relative links, the file in another directory. */
	snprintf(sub, sizeof(sub), "%s/sub", self->dir);
	ASSERT_EQ(0, mkdir(sub, 0755));
	put(at(self, "sub/real"), "old\n");
	ASSERT_EQ(0, symlink("sub/real", at(self, "link")));
	ASSERT_EQ(0, symlink("link", at(self, "link2")));
	ASSERT_EQ(0, wse_out_open(&o, at(self, "link2"), 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_EQ(0, strncmp(o.tmp, sub, strlen(sub))) TH_LOG("temporary file %s", o.tmp);
	ASSERT_EQ(0, wse_out_write(&o, "new\n", 4, self->err, sizeof(self->err)));
	ASSERT_EQ(0, wse_out_commit(&o, self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_STREQ("new\n", get(at(self, "sub/real"), buf, sizeof(buf)));
	ASSERT_EQ(0, lstat(at(self, "link2"), &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	n = readlink(at(self, "link"), link, sizeof(link) - 1);
	ASSERT_EQ(8, n);
	link[n] = '\0';
	EXPECT_STREQ("sub/real", link);
	EXPECT_EQ(3, entries(self->dir));
	EXPECT_EQ(1, entries(sub));
}

TEST_F(out, dangling_symlink_makes_its_file)
{
	char buf[64], target[PATH_MAX];
	struct stat st;

	snprintf(target, sizeof(target), "%s/made", self->dir);
	ASSERT_EQ(0, symlink(target, at(self, "link")));
	ASSERT_EQ(0, wse_out_write_file(self->path, 0, "x\n", 2, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_STREQ("x\n", get(target, buf, sizeof(buf)));
	ASSERT_EQ(0, lstat(at(self, "link"), &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(out, symlink_loop_is_refused)
{
	ASSERT_EQ(0, symlink("b", at(self, "a")));
	ASSERT_EQ(0, symlink("a", at(self, "b")));
	EXPECT_EQ(-ELOOP, wse_out_write_file(at(self, "a"), 0, "x", 1, self->err,
					     sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "symbolic links"));
	EXPECT_EQ(2, entries(self->dir));
}

/* Writes BIG bytes to @path, a FIFO with a reader or a link to one; checks what arrived. */
static void through_fifo(struct __test_metadata *_metadata, FIXTURE_DATA(out) *self,
			 const char *path, const char *fifo)
{
	struct reader r = { .buf = malloc(BIG + 1) };
	char *want = pattern();
	pthread_t t;
	struct stat st;
	int hold;

	ASSERT_NE(NULL, r.buf);
	ASSERT_NE(NULL, want);
	/*
	 * The read end opened here, against a writer the test holds: no open
	 * waits, and the reader sees the end once the output and the test
	 * have both closed, whatever the output did.
	 */
	hold = open(fifo, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, hold);
	r.fd = open(fifo, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, read_all, &r));
	EXPECT_EQ(0, wse_out_write_file(path, 0, want, BIG, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	close(hold);
	pthread_join(t, NULL);
	close(r.fd);
	EXPECT_EQ((size_t)BIG, r.len);
	EXPECT_EQ(0, memcmp(want, r.buf, BIG));
	ASSERT_EQ(0, lstat(fifo, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode)) TH_LOG("the FIFO was replaced");
	free(want);
	free(r.buf);
}

TEST_F(out, fifo_written_through)
{
	char fifo[PATH_MAX];

	snprintf(fifo, sizeof(fifo), "%s/fifo", self->dir);
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	through_fifo(_metadata, self, fifo, fifo);
	EXPECT_EQ(1, entries(self->dir));
}

TEST_F(out, symlink_to_fifo_written_through)
{
	char fifo[PATH_MAX], link[PATH_MAX];

	snprintf(fifo, sizeof(fifo), "%s/fifo", self->dir);
	snprintf(link, sizeof(link), "%s/link", self->dir);
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	ASSERT_EQ(0, symlink("fifo", link));
	through_fifo(_metadata, self, link, fifo);
	EXPECT_EQ(2, entries(self->dir));
}

TEST_F(out, unix_socket_connected_and_written_through)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct reader r = { .accept = true, .buf = malloc(BIG + 1) };
	char *want = pattern();
	struct stat st;
	pthread_t t;

	ASSERT_NE(NULL, r.buf);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", self->dir);
	r.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, bind(r.fd, (struct sockaddr *)&sun, sizeof(sun)));
	ASSERT_EQ(0, listen(r.fd, 1));
	ASSERT_EQ(0, pthread_create(&t, NULL, read_all, &r));
	EXPECT_EQ(0, wse_out_write_file(sun.sun_path, 0, want, BIG, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	pthread_join(t, NULL);
	close(r.fd);
	EXPECT_EQ((size_t)BIG, r.len);
	EXPECT_EQ(0, memcmp(want, r.buf, BIG));
	ASSERT_EQ(0, lstat(sun.sun_path, &st));
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	free(want);
	free(r.buf);
}

TEST_F(out, directory_refused_by_name)
{
	char sub[PATH_MAX];

	snprintf(sub, sizeof(sub), "%s/sub", self->dir);
	ASSERT_EQ(0, mkdir(sub, 0755));
	EXPECT_EQ(-EISDIR, wse_out_write_file(sub, 0, "x", 1, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, sub)) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, "is a directory")) TH_LOG("%s", self->err);
	EXPECT_EQ(0, entries(sub));
	/* A link to a directory, and a path ending in '/', alike. */
	ASSERT_EQ(0, symlink("sub", at(self, "link")));
	EXPECT_EQ(-EISDIR, wse_out_write_file(self->path, 0, "x", 1, self->err,
					      sizeof(self->err)));
	EXPECT_EQ(-EISDIR, wse_out_write_file(at(self, "nothing/"), 0, "x", 1, self->err,
					      sizeof(self->err)));
	EXPECT_EQ(2, entries(self->dir));
	EXPECT_EQ(0, entries(sub));
}

TEST_F(out, missing_directory_named_in_the_message)
{
	EXPECT_EQ(-ENOENT, wse_out_write_file(at(self, "no/such/file"), 0, "x", 1, self->err,
					      sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "cannot create a file in")) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, "/no/such")) TH_LOG("%s", self->err);
}

TEST_F(out, dash_is_stdout_only_where_allowed)
{
	char buf[64] = "";
	int p[2], saved;
	ssize_t n;

	ASSERT_EQ(0, chdir(self->dir));
	/* Not allowed: refused, and no file called "-". */
	EXPECT_EQ(-EINVAL, wse_out_write_file("-", 0, "x", 1, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "standard output")) TH_LOG("%s", self->err);
	EXPECT_EQ(0, entries("."));
	/* Allowed: the bytes go down the pipe stdout is, and stdout stays open. */
	ASSERT_EQ(0, pipe(p));
	saved = dup(STDOUT_FILENO);
	ASSERT_LE(0, dup2(p[1], STDOUT_FILENO));
	close(p[1]);
	EXPECT_EQ(0, wse_out_write_file("-", WSE_OUT_STDOUT, "to stdout\n", 10, self->err,
					sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(1, write(STDOUT_FILENO, "!", 1));
	dup2(saved, STDOUT_FILENO);
	close(saved);
	n = read(p[0], buf, sizeof(buf) - 1);
	ASSERT_EQ(11, n);
	EXPECT_STREQ("to stdout\n!", buf);
	close(p[0]);
	EXPECT_EQ(0, entries("."));
}

TEST_F(out, character_device_written_through_never_replaced)
{
	struct stat st;

	/* A null device of the test's own, in its directory: only where mknod is allowed. */
	if (mknod(at(self, "null"), S_IFCHR | 0666, makedev(1, 3)))
		SKIP(return, "cannot make a device node here (%s): the namespace test in outfile_cli_test covers /dev/null",
		     strerror(errno));
	EXPECT_EQ(0, wse_out_write_file(self->path, 0, "gone\n", 5, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, lstat(self->path, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode)) TH_LOG("the device was replaced by a regular file");
	EXPECT_EQ(makedev(1, 3), st.st_rdev);
	EXPECT_EQ(1, entries(self->dir));
}

TEST_F(out, in_place_and_append_write_where_the_file_is)
{
	struct wse_out o;
	struct stat before, after;
	char buf[64];
	FILE *f;

	put(at(self, "log"), "old\n");
	ASSERT_EQ(0, stat(self->path, &before));
	ASSERT_EQ(0, wse_out_open(&o, self->path, WSE_OUT_IN_PLACE, self->err, sizeof(self->err)));
	EXPECT_FALSE(o.replace);
	f = wse_out_stream(&o, self->err, sizeof(self->err));
	ASSERT_NE(NULL, f);
	fprintf(f, "row 1\n");
	fflush(f);
	/* A reader sees the rows as they are written. */
	EXPECT_STREQ("row 1\n", get(at(self, "log"), buf, sizeof(buf)));
	ASSERT_EQ(0, wse_out_commit(&o, self->err, sizeof(self->err)));
	ASSERT_EQ(0, stat(self->path, &after));
	EXPECT_EQ(before.st_ino, after.st_ino);
	ASSERT_EQ(0, wse_out_open(&o, self->path, WSE_OUT_APPEND, self->err, sizeof(self->err)));
	ASSERT_EQ(0, wse_out_write(&o, "row 2\n", 6, self->err, sizeof(self->err)));
	ASSERT_EQ(0, wse_out_commit(&o, self->err, sizeof(self->err)));
	EXPECT_STREQ("row 1\nrow 2\n", get(at(self, "log"), buf, sizeof(buf)));
	EXPECT_EQ(1, entries(self->dir));
}

TEST_F(out, read_only_file_refused_and_kept)
{
	char buf[64];
	pid_t pid;
	int st, ret;

	put(at(self, "ro"), "keep\n");
	ASSERT_EQ(0, chmod(self->path, 0444));
	/* Root writes anything: the attempt is made as nobody, by a child. */
	ASSERT_EQ(0, chmod(self->dir, 0777));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) ||
				       setresuid(65534, 65534, 65534)))
			_exit(100);
		ret = wse_out_write_file(self->path, 0, "x", 1, self->err, sizeof(self->err));
		fprintf(stderr, "# %s\n", ret ? self->err : "written");
		_exit(ret == -EACCES && strstr(self->err, "mode 0444") ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_NE(100, WEXITSTATUS(st)) TH_LOG("could not become nobody");
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("a read-only file was not refused as it should be");
	EXPECT_STREQ("keep\n", get(self->path, buf, sizeof(buf)));
	EXPECT_EQ(1, entries(self->dir));
}

TEST_HARNESS_MAIN
