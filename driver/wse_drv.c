// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: module entry, platform driver and DRM accel driver registration.
 *
 * Each virtual WSE is a platform device; its probe creates the DRM accel
 * device (/dev/accel/accelN) that userspace opens.
 */

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/workqueue.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_fdinfo.h"
#include "wse_genl.h"
#include "wse_job.h"
#include "wse_link.h"

/* Devices created at load time without a firmware link, for tests of the
 * parts that do not need one. Read-only after load.
 */
static unsigned int test_devices;
module_param(test_devices, uint, 0444);
MODULE_PARM_DESC(test_devices,
		 "number of link-less test devices to create at load (test only, max 8)");
#define WSE_MAX_TEST_DEVICES	8

struct workqueue_struct *wse_wq;

static const struct drm_ioctl_desc wse_ioctls[] = {
	DRM_IOCTL_DEF_DRV(WSE_GET_INFO, wse_ioctl_get_info, 0),
	DRM_IOCTL_DEF_DRV(WSE_BO_CREATE, wse_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(WSE_BO_INFO, wse_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(WSE_MEM_XFER, wse_ioctl_mem_xfer, 0),
	DRM_IOCTL_DEF_DRV(WSE_QUEUE_CREATE, wse_ioctl_queue_create, 0),
	DRM_IOCTL_DEF_DRV(WSE_QUEUE_DESTROY, wse_ioctl_queue_destroy, 0),
	DRM_IOCTL_DEF_DRV(WSE_SUBMIT, wse_ioctl_submit, 0),
	DRM_IOCTL_DEF_DRV(WSE_WAIT, wse_ioctl_wait, 0),
};

static const struct file_operations wse_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
	.uring_cmd = wse_uring_cmd,
};

static const struct drm_driver wse_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL,
	.open = wse_file_open,
	.postclose = wse_file_close,
	.show_fdinfo = wse_show_fdinfo,
	.fops = &wse_fops,
	.ioctls = wse_ioctls,
	.num_ioctls = ARRAY_SIZE(wse_ioctls),
	.name = WSE_DRIVER_NAME,
	.desc = WSE_DRIVER_DESC,
	.date = "20261121",
	.major = 0,
	.minor = 1,
};

static void wse_release_device(struct drm_device *drm, void *data)
{
	wse_device_put(data);
}

/* Called from attach (or module load, for test devices) through
 * platform_device_register_data(): the platform data is the device.
 */
static int wse_probe(struct platform_device *pdev)
{
	struct wse_device **pwdev = dev_get_platdata(&pdev->dev);
	struct wse_accel *accel;
	int ret;

	if (!pwdev || !*pwdev)
		return -EINVAL;

	accel = devm_drm_dev_alloc(&pdev->dev, &wse_drm_driver, struct wse_accel, drm);
	if (IS_ERR(accel))
		return PTR_ERR(accel);

	accel->wdev = *pwdev;
	wse_device_get(accel->wdev);
	ret = drmm_add_action_or_reset(&accel->drm, wse_release_device, accel->wdev);
	if (ret)
		return ret;
	platform_set_drvdata(pdev, accel);

	ret = drm_dev_register(&accel->drm, 0);
	if (ret)
		return ret;
	accel->wdev->accel_minor = accel->drm.accel->index;
	return 0;
}

static void wse_remove(struct platform_device *pdev)
{
	struct wse_accel *accel = platform_get_drvdata(pdev);

	/* Open files keep the drm_device alive; unplug makes their ioctls
	 * fail with -ENODEV until they close.
	 */
	drm_dev_unplug(&accel->drm);
}

static struct platform_driver wse_platform_driver = {
	.probe = wse_probe,
	.remove = wse_remove,
	.driver = {
		.name = WSE_DRIVER_NAME,
		.dev_groups = wse_attr_groups,
	},
};

static int __init wse_init(void)
{
	unsigned int i;
	int ret;

	if (test_devices > WSE_MAX_TEST_DEVICES) {
		pr_err("wse: test_devices=%u is more than the %d allowed\n",
		       test_devices, WSE_MAX_TEST_DEVICES);
		return -EINVAL;
	}

	wse_wq = alloc_workqueue("wse", 0, 0);
	if (!wse_wq)
		return -ENOMEM;
	ret = platform_driver_register(&wse_platform_driver);
	if (ret)
		goto err_wq;
	for (i = 0; i < test_devices; i++) {
		ret = wse_devices_add_test();
		if (ret)
			goto err_devices;
	}
	/* Last: from here on userspace can attach. */
	ret = wse_genl_register();
	if (ret)
		goto err_devices;
	return 0;

err_devices:
	wse_devices_remove_all();
	platform_driver_unregister(&wse_platform_driver);
err_wq:
	destroy_workqueue(wse_wq);
	return ret;
}

static void __exit wse_exit(void)
{
	/* First: no command can start, and none is still running. */
	wse_genl_unregister();
	wse_devices_remove_all();
	platform_driver_unregister(&wse_platform_driver);
	/* Last: waits for any job timeout still running. */
	destroy_workqueue(wse_wq);
}

module_init(wse_init);
module_exit(wse_exit);

MODULE_DESCRIPTION("wse: " WSE_DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
