/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers the guest selftests share: starting firmware simulators (and
 * hostile peers) inside the guest on unix sockets, attaching them through
 * libwse, and opening the accel node of a device.
 */
#ifndef WSE_GUEST_H
#define WSE_GUEST_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drm/wse_accel.h"
#include "wse/ctl.h"
#include "wse/wse.h"
#include "wse/wsep.h"
#include "wse_link.h"
#include "wse_genl.h"

/* Where the guest image puts the project's programs. */
#define WSE_GUEST_BIN "/wse/bin"

static inline int64_t guest_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A program of ours started in the background, listening on a unix socket. */
struct guest_peer {
	pid_t pid;
	char addr[160];		/* "unix:/tmp/..." */
};

/*
 * Starts build/bin/@prog listening on a fresh unix socket with the extra
 * arguments (NULL-terminated) and waits, bounded, until it listens.
 * Returns 0 or -1.
 */
static inline int guest_peer_start(struct guest_peer *p, const char *prog, ...)
{
	static unsigned int seq;
	char path[128], bin[160];
	const char *argv[40];
	struct stat st;
	va_list ap;
	int argc = 0, i;

	snprintf(path, sizeof(path), "/tmp/wse-%d-%u.sock", getpid(), seq++);
	unlink(path);
	snprintf(p->addr, sizeof(p->addr), "unix:%s", path);
	snprintf(bin, sizeof(bin), "%s/%s", WSE_GUEST_BIN, prog);
	argv[argc++] = bin;
	argv[argc++] = "--listen";
	argv[argc++] = p->addr;
	va_start(ap, prog);
	while (argc < 38) {
		const char *a = va_arg(ap, const char *);

		if (!a)
			break;
		argv[argc++] = a;
	}
	va_end(ap);
	argv[argc] = NULL;

	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* Quiet unless something is wrong. */
		if (null >= 0 && !getenv("WSE_TEST_VERBOSE"))
			dup2(null, STDOUT_FILENO);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	for (i = 0; i < 500; i++) {
		if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
		if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
			p->pid = 0;
			return -1;
		}
		usleep(10000);
	}
	return -1;
}

/* Stops the peer with @sig and reaps it; returns its wait status. */
static inline int guest_peer_stop(struct guest_peer *p, int sig)
{
	int status = -1, i;

	if (p->pid <= 0)
		return -1;
	kill(p->pid, sig);
	for (i = 0; i < 500; i++) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid)
			break;
		usleep(10000);
	}
	if (i == 500) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &status, 0);
	}
	p->pid = 0;
	return status;
}

/* Waits (bounded) for the peer to exit on its own; returns its status. */
static inline int guest_peer_wait(struct guest_peer *p, int timeout_ms)
{
	int64_t end = guest_now_ms() + timeout_ms;
	int status;

	while (guest_now_ms() < end) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			p->pid = 0;
			return status;
		}
		usleep(10000);
	}
	return guest_peer_stop(p, SIGKILL) | 0x10000;
}

/*
 * Runs a shell command; returns its exit status (128 if it died of a
 * signal, -1 if it could not start) and its stdout and stderr, together,
 * in @out.
 */
static inline int guest_run(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline int guest_run(char *out, size_t len, const char *fmt, ...)
{
	char cmd[2048];
	size_t have = 0, n;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (have + 1 < len && (n = fread(out + have, 1, len - have - 1, p)) > 0)
		have += n;
	out[have] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/*
 * The addresses of the simulators wsevm started on the host (/wse/fw-addrs,
 * one a line; they run at native speed), at most @max. Returns the count.
 */
static inline int guest_host_firmware(char addrs[][160], int max)
{
	FILE *f = fopen("/wse/fw-addrs", "r");
	int n = 0;

	while (f && n < max && fgets(addrs[n], 160, f)) {
		addrs[n][strcspn(addrs[n], "\n")] = 0;
		if (addrs[n][0])
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* The appliance wsevm started on the host (/wse/appliance-addr): 1 with its address, else 0. */
static inline int guest_host_appliance(char addr[160])
{
	FILE *f = fopen("/wse/appliance-addr", "r");
	int n = 0;

	if (f && fgets(addr, 160, f)) {
		addr[strcspn(addr, "\n")] = 0;
		n = addr[0] != 0;
	}
	if (f)
		fclose(f);
	return n;
}

/* Connects to @addr and attaches it; returns 0 or a negative errno. */
static inline int guest_attach(struct wse_ctl *ctl, const char *addr, uint32_t keepalive_ms,
			       struct wse_dev_status *dev)
{
	char err[256];
	int fd, ret, i;

	/* The socket file exists from bind(); until listen() a connect is
	 * refused. Retry for a second at most.
	 */
	for (i = 0; i < 50; i++) {
		ret = wse_ctl_connect(addr, &fd, err, sizeof(err));
		if (ret != -ECONNREFUSED)
			break;
		usleep(20000);
	}
	if (ret)
		return ret;
	ret = wse_ctl_attach_fd(ctl, fd, keepalive_ms, dev);
	close(fd);
	return ret;
}

/* Polls until device @index reaches @state or @timeout_ms passes. */
static inline int guest_wait_state(struct wse_ctl *ctl, uint32_t index, uint32_t state,
				   int timeout_ms, struct wse_dev_status *dev)
{
	int64_t end = guest_now_ms() + timeout_ms;
	int ret;

	do {
		ret = wse_ctl_get(ctl, index, true, dev);
		if (ret)
			return ret;
		if (dev->link_state == state)
			return 0;
		usleep(20000);
	} while (guest_now_ms() < end);
	return -ETIMEDOUT;
}

/* The whole file at @path in a malloc()ed buffer, or NULL. */
static inline void *guest_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/*
 * Compiles models/fc-mnist for a 64 x 64 wafer, in @mode ("pipelined",
 * "weight-streaming", or NULL for wsecc's choice), to @path, and reads
 * it back: the image in *@image (malloc()ed, *@len bytes) and the program
 * in *@prog. 0, or -1 with @err saying what failed.
 */
static inline int guest_compile_fc_mnist(const char *path, const char *mode, void **image,
					 size_t *len, struct wsep_program **prog, char *err,
					 size_t errlen)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "wsecc models/fc-mnist --wafer 64x64%s%s --compile-only -q -o %s",
		 mode ? " --mode " : "", mode ? mode : "", path);
	if (system(cmd)) {
		snprintf(err, errlen, "wsecc failed on models/fc-mnist (mode %s)", mode ? mode : "default");
		return -1;
	}
	*image = guest_read_file(path, len);
	if (!*image) {
		snprintf(err, errlen, "cannot read %s", path);
		return -1;
	}
	return wsep_read(*image, *len, prog, err, errlen) ? -1 : 0;
}

static inline int guest_open_accel(int minor)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * A wsefwd started in the guest, attached and its device opened: the
 * fixture of the driver's tests of one device.
 */
struct guest_fw_device {
	struct wse_ctl *ctl;
	struct guest_peer fw;
	struct wse_dev_status dev;
	bool attached;
	int fd;
};

/* Opens the control plane, nothing started yet; 0 or a negative errno. */
static inline int guest_fw_device_init(struct guest_fw_device *d)
{
	d->attached = false;
	d->fd = -1;
	d->fw.pid = 0;
	return wse_ctl_open(&d->ctl);
}

/* Starts wsefwd --wafer 64x64 with up to two more arguments (or NULLs),
 * attaches it and opens its device; 0 or a negative errno.
 */
static inline int guest_fw_device_up(struct guest_fw_device *d, const char *a0, const char *a1)
{
	int ret = guest_peer_start(&d->fw, "wsefwd", "--wafer", "64x64", a0, a1, NULL);

	if (!ret)
		ret = guest_attach(d->ctl, d->fw.addr, 0, &d->dev);
	if (ret)
		return ret < 0 ? ret : -EIO;
	d->attached = true;
	d->fd = guest_open_accel(d->dev.accel_minor);
	return d->fd < 0 ? -errno : 0;
}

/* Closes the device, detaches it and stops the firmware. */
static inline void guest_fw_device_fini(struct guest_fw_device *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->attached)
		wse_ctl_detach(d->ctl, d->dev.index);
	guest_peer_stop(&d->fw, SIGKILL);
	wse_ctl_close(d->ctl);
}

/* ioctl() returning -errno. */
static inline int guest_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* QUEUE_CREATE; the queue's id in *@id. Returns 0 or -errno. */
static inline int guest_queue_create(int fd, uint32_t hw, uint32_t depth, uint32_t timeout_ms,
				     uint32_t *id)
{
	struct drm_wse_queue_create q = { .hw_queue = hw, .depth = depth,
					  .timeout_ms = timeout_ms };
	int ret = guest_ioctl(fd, DRM_IOCTL_WSE_QUEUE_CREATE, &q);

	if (!ret)
		*id = q.queue_id;
	return ret;
}

/* A SUBMIT of @op with up to four arguments; the job's id in *@job. */
static inline int guest_submit(int fd, uint32_t queue, uint32_t op, uint32_t handle,
			       uint64_t off, uint64_t len, const uint64_t args[4],
			       uint64_t *job)
{
	struct drm_wse_submit s = {
		.queue_id = queue, .op = op, .handle = handle, .bo_offset = off,
		.length = len,
	};
	int ret;

	if (args)
		memcpy(s.args, args, sizeof(s.args));
	ret = guest_ioctl(fd, DRM_IOCTL_WSE_SUBMIT, &s);
	if (!ret && job)
		*job = s.job_id;
	return ret;
}

/* WAITs up to @ms (0: only looks) for @job; the job's status in *@status. */
static inline int guest_wait_job(int fd, uint32_t queue, uint64_t job, int ms, int *status,
				 uint32_t *len)
{
	struct drm_wse_wait w = { .queue_id = queue, .job_id = job };
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ms)
		w.timeout_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec +
			       (int64_t)ms * 1000000;
	ret = guest_ioctl(fd, DRM_IOCTL_WSE_WAIT, &w);
	if (status)
		*status = w.status;
	if (len)
		*len = w.result_len;
	return ret;
}

static inline int guest_bo(int fd, uint64_t size, uint32_t *handle, void **map)
{
	struct drm_wse_bo_create c = { .size = size };
	struct drm_wse_bo_info i = { 0 };
	int ret;

	ret = guest_ioctl(fd, DRM_IOCTL_WSE_BO_CREATE, &c);
	if (ret)
		return ret;
	i.handle = c.handle;
	ret = guest_ioctl(fd, DRM_IOCTL_WSE_BO_INFO, &i);
	if (ret)
		return ret;
	*handle = c.handle;
	if (map) {
		*map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
		if (*map == MAP_FAILED)
			return -errno;
	}
	return 0;
}

static inline int guest_xfer(int fd, uint32_t handle, uint32_t flags, uint64_t bo_offset,
			     uint64_t dev_addr, uint64_t length)
{
	struct drm_wse_mem_xfer x = {
		.handle = handle, .flags = flags, .bo_offset = bo_offset,
		.dev_addr = dev_addr, .length = length,
	};

	return guest_ioctl(fd, DRM_IOCTL_WSE_MEM_XFER, &x);
}

/* fc-mnist compiled for the tests of one file: the image and its program. */
struct guest_image {
	const char *path;
	void *image;
	size_t len;
	struct wsep_program *wsep;
};

/* Compiles fc-mnist to @path in @mode (see guest_compile_fc_mnist()); 0 or -1. */
static inline int guest_image_init(struct guest_image *im, const char *path, const char *mode,
				   char *err, size_t errlen)
{
	im->path = path;
	im->image = NULL;
	im->wsep = NULL;
	return guest_compile_fc_mnist(path, mode, &im->image, &im->len, &im->wsep, err, errlen);
}

static inline void guest_image_fini(struct guest_image *im)
{
	wsep_program_free(im->wsep);
	free(im->image);
	if (im->path)
		unlink(im->path);
}

/*
 * Loads @len bytes of @image into @slot with one PROGRAM_LOAD on queue @q
 * of @fd, and waits for it (30 s at most); 0 or a negative errno.
 */
static inline int guest_load_program(int fd, uint32_t q, uint64_t slot, const void *image,
				     size_t len)
{
	uint64_t args[4] = { slot, 1, len, 0 };
	uint32_t h;
	uint64_t job;
	void *map;
	int ret, status;

	ret = guest_bo(fd, len, &h, &map);
	if (ret)
		return ret;
	memcpy(map, image, len);
	ret = guest_submit(fd, q, DRM_WSE_OP_PROGRAM_LOAD, h, 0, len, args, &job);
	if (!ret)
		ret = guest_wait_job(fd, q, job, 30000, &status, NULL) ?: status;
	munmap(map, len);
	return ret;
}

/* Becomes user @uid (group @uid too), a member of @gid if @member; 0 or -1. */
static inline int guest_become(uid_t uid, gid_t gid, bool member)
{
	gid_t groups[1] = { gid };

	if (setgroups(member ? 1 : 0, groups) || setgid(uid) || setuid(uid))
		return -1;
	return 0;
}

/*
 * Gives accel node @minor to group WSE_ACCESS_GROUP, mode 0660, as the
 * udev rule (packaging/60-wse.rules) does; the group's id in *@gid.
 * 0 or -1.
 */
static inline int guest_share_node(int minor, gid_t *gid)
{
	const struct group *gr = getgrnam(WSE_ACCESS_GROUP);
	char node[64];

	if (!gr)
		return -1;
	*gid = gr->gr_gid;
	snprintf(node, sizeof(node), "/dev/accel/accel%d", minor);
	return chown(node, 0, gr->gr_gid) || chmod(node, 0660) ? -1 : 0;
}

/*
 * Runs @fn(@arg) in a child process as user @uid, a member of @gid; its
 * exit status (what @fn returned, 0..255), or -1 if it could not run or
 * did not end within @timeout_ms.
 */
static inline int guest_as_user(uid_t uid, gid_t gid, int timeout_ms, int (*fn)(void *arg),
				void *arg)
{
	int64_t end = guest_now_ms() + timeout_ms;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(guest_become(uid, gid, true) ? 255 : fn(arg) & 0xff);
	while (guest_now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

#endif /* WSE_GUEST_H */
