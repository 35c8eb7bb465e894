// SPDX-License-Identifier: LGPL-2.1-or-later
/* libwse buffer objects: GEM shmem host memory the device's jobs use. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "wse_internal.h"

int wse_bo_alloc(struct wse_dev *dev, uint64_t size, struct wse_bo *bo)
{
	struct drm_wse_bo_create c = { .size = size };
	struct drm_wse_bo_info i = { 0 };
	struct drm_gem_close gc = { 0 };
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = wse_ioctl(dev, DRM_IOCTL_WSE_BO_CREATE, &c);
	if (ret)
		return ret;
	i.handle = c.handle;
	ret = wse_ioctl(dev, DRM_IOCTL_WSE_BO_INFO, &i);
	if (ret) {
		gc.handle = c.handle;
		wse_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
		return ret;
	}
	bo->handle = c.handle;
	bo->size = i.size;
	return 0;
}

int wse_bo_map(struct wse_dev *dev, struct wse_bo *bo)
{
	struct drm_wse_bo_info i = { .handle = bo->handle };
	void *p;
	int ret;

	if (bo->map)
		return 0;
	ret = wse_ioctl(dev, DRM_IOCTL_WSE_BO_INFO, &i);
	if (ret)
		return ret;
	/* GEM shmem mappings must be shared. */
	p = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, (off_t)i.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	bo->size = i.size;
	return 0;
}

int wse_bo_free(struct wse_dev *dev, struct wse_bo *bo)
{
	struct drm_gem_close gc = { .handle = bo->handle };
	int ret;

	if (bo->map)
		munmap(bo->map, bo->size);
	bo->map = NULL;
	ret = wse_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
	bo->handle = 0;
	return ret;
}
