// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libwse devices: opening by index, path or "any", and GET_INFO. An index
 * and "any" are resolved through the control plane (the device's accel
 * minor); a path is checked to be a wse accel node by its DRM driver name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "wse/numparse.h"
#include "wse_genl.h"
#include "wse_internal.h"

int wse_ioctl(struct wse_dev *dev, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(dev->fd, req, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

/* Is @fd a DRM node whose driver is "wse"? */
static int check_driver(int fd)
{
	char name[16] = "";
	struct drm_version v = { .name_len = sizeof(name) - 1, .name = name };

	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return -ENOTTY;
	name[sizeof(name) - 1] = '\0';
	return strcmp(name, "wse") ? -ENOTTY : 0;
}

/* "12" -> 12; anything but a whole number (or too large) is -EINVAL. */
static int parse_index(const char *spec, uint32_t *index)
{
	uint64_t v;
	char err[160];

	if (wse_parse_u64(spec, 0, INT32_MAX, WSE_NUM_PLAIN, &v, err, sizeof(err)))
		return -EINVAL;
	*index = (uint32_t)v;
	return 0;
}

/* The minor of an accel node path, or -1. */
static int path_minor(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISCHR(st.st_mode))
		return -1;
	return (int)minor(st.st_rdev);
}

/* Resolves @spec to an accel minor (and the index) through the control plane. */
static int resolve(const char *spec, int *minor_out, int *index_out)
{
	struct wse_dev_status *list = NULL, st;
	struct wse_ctl *ctl;
	uint32_t index;
	size_t n, i;
	int ret;

	ret = wse_ctl_open(&ctl);
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;	/* no family: no wse.ko */
	if (!strcmp(spec, "any")) {
		ret = wse_ctl_list(ctl, &list, &n);
		if (!ret) {
			ret = -ENODEV;
			for (i = 0; i < n; i++) {
				if (list[i].link_state == WSE_LINK_STATE_UP &&
				    list[i].accel_minor >= 0) {
					*minor_out = list[i].accel_minor;
					*index_out = (int)list[i].index;
					ret = 0;
					break;
				}
			}
		}
		free(list);
	} else {
		ret = parse_index(spec, &index);
		if (!ret)
			ret = wse_ctl_get(ctl, index, false, &st);
		if (ret == -ENOENT)
			ret = -ENODEV;
		if (!ret && st.accel_minor < 0)
			ret = -ENODEV;
		if (!ret) {
			*minor_out = st.accel_minor;
			*index_out = (int)st.index;
		}
	}
	wse_ctl_close(ctl);
	return ret;
}

/* The control-plane index of accel minor @minor, or -1. */
static int index_of_minor(int minor_nr)
{
	struct wse_dev_status *list = NULL;
	struct wse_ctl *ctl;
	int index = -1;
	size_t n, i;

	if (wse_ctl_open(&ctl))
		return -1;
	if (!wse_ctl_list(ctl, &list, &n)) {
		for (i = 0; i < n; i++)
			if (list[i].accel_minor == minor_nr)
				index = (int)list[i].index;
	}
	free(list);
	wse_ctl_close(ctl);
	return index;
}

static int query_u64(struct wse_dev *dev, uint32_t param, uint64_t *v)
{
	struct drm_wse_get_info gi = { .param = param, .size = sizeof(*v),
				       .ptr = (uintptr_t)v };

	*v = 0;
	return wse_ioctl(dev, DRM_IOCTL_WSE_GET_INFO, &gi);
}

int wse_node_path(const char *spec, char *path, size_t len, int *index)
{
	int minor_nr = -1, ret;

	*index = -1;
	if (!spec || !*spec)
		return -EINVAL;
	if (spec[0] == '/') {
		if (strlen(spec) >= len)
			return -ENAMETOOLONG;
		snprintf(path, len, "%s", spec);
		return 0;
	}
	ret = resolve(spec, &minor_nr, index);
	if (ret)
		return ret;
	snprintf(path, len, "/dev/accel/accel%d", minor_nr);
	return 0;
}

int wse_open(const char *spec, struct wse_dev **out)
{
	char path[WSE_NODE_PATH_MAX];
	struct wse_dev *dev;
	int minor_nr, index, ret;

	*out = NULL;
	ret = wse_node_path(spec, path, sizeof(path), &index);
	if (ret)
		return ret;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = -errno;
		free(dev);
		return ret;
	}
	ret = check_driver(dev->fd);
	if (!ret)
		ret = query_u64(dev, DRM_WSE_PARAM_MAX_JOB_BYTES, &dev->max_job_bytes);
	if (ret) {
		close(dev->fd);
		free(dev);
		return ret;
	}
	if (spec[0] == '/') {
		minor_nr = path_minor(path);
		index = minor_nr >= 0 ? index_of_minor(minor_nr) : -1;
	}
	dev->index = index;
	*out = dev;
	return 0;
}

void wse_close(struct wse_dev *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

int wse_dev_fd(const struct wse_dev *dev)
{
	return dev->fd;
}

int wse_dev_index(const struct wse_dev *dev)
{
	return dev->index;
}

int wse_info(struct wse_dev *dev, struct wse_info *info)
{
	struct drm_wse_get_info gi = {
		.param = DRM_WSE_PARAM_DEVICE_INFO, .size = sizeof(info->dev),
		.ptr = (uintptr_t)&info->dev,
	};
	int ret;

	memset(info, 0, sizeof(*info));
	ret = query_u64(dev, DRM_WSE_PARAM_CAPABILITIES, &info->caps);
	if (!ret)
		ret = wse_ioctl(dev, DRM_IOCTL_WSE_GET_INFO, &gi);
	if (!ret)
		ret = query_u64(dev, DRM_WSE_PARAM_MAX_BO_SIZE, &info->max_bo_size);
	if (!ret)
		ret = query_u64(dev, DRM_WSE_PARAM_MAX_JOB_BYTES, &info->max_job_bytes);
	if (!ret)
		dev->max_job_bytes = info->max_job_bytes;
	return ret;
}

int wse_dev_next_event(const struct wse_dev *dev, struct wse_ctl *ctl, int timeout_ms,
		       struct wse_event *ev)
{
	int64_t end = wse_deadline_ns(timeout_ms), left;
	int ret;

	for (;;) {
		left = (end - wse_deadline_ns(0)) / 1000000;
		if (left < 0)
			return -ETIMEDOUT;
		ret = wse_ctl_next_event(ctl, (int)left, ev);
		if (ret)
			return ret;
		if (dev->index >= 0 && ev->index == (uint32_t)dev->index)
			return 0;
	}
}
