// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: buffer objects. They are GEM shmem objects: host pages the device's
 * queues carry over the link, mapped into userspace with mmap().
 */

#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>

#include "wse_drv.h"

int wse_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_wse_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	u32 handle;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (!args->size)
		return -EINVAL;
	/* Checked before rounding up to pages, so the rounding cannot wrap. */
	if (args->size > WSE_MAX_BO_SIZE)
		return -E2BIG;

	shmem = drm_gem_shmem_create(drm, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);

	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	/* The handle, if any, now holds the only reference. */
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;

	args->handle = handle;
	return 0;
}

int wse_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_wse_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad || args->flags || args->reserved)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
		args->size = obj->size;
	}

	drm_gem_object_put(obj);
	return ret;
}
