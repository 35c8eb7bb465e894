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
#include <linux/module.h>
#include <linux/platform_device.h>

#include "wse_drv.h"

/* Devices created at load time without a firmware link, for tests of the
 * parts that do not need one. Read-only after load.
 */
static unsigned int test_devices;
module_param(test_devices, uint, 0444);
MODULE_PARM_DESC(test_devices,
		 "number of link-less test devices to create at load (test only, max 8)");
#define WSE_MAX_TEST_DEVICES	8

/* The test devices created at load, released at unload. Written only in
 * module init and exit, which the module loader serialises.
 */
static struct platform_device *wse_test_pdevs[WSE_MAX_TEST_DEVICES];

static const struct drm_ioctl_desc wse_ioctls[] = {
	DRM_IOCTL_DEF_DRV(WSE_GET_INFO, wse_ioctl_get_info, 0),
	DRM_IOCTL_DEF_DRV(WSE_BO_CREATE, wse_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(WSE_BO_INFO, wse_ioctl_bo_info, 0),
};

static const struct file_operations wse_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
};

static const struct drm_driver wse_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL,
	.fops = &wse_fops,
	.ioctls = wse_ioctls,
	.num_ioctls = ARRAY_SIZE(wse_ioctls),
	.name = WSE_DRIVER_NAME,
	.desc = WSE_DRIVER_DESC,
	.date = "20261121",
	.major = 0,
	.minor = 1,
};

/* What a device without a firmware link reports: a small mesh, so tests
 * that reason about capacity stay cheap.
 */
static void wse_fill_test_info(struct drm_wse_device_info *info, int id)
{
	info->wafer_width = 64;
	info->wafer_height = 64;
	info->sram_per_pe = 48 * 1024;
	info->sram_total = info->sram_per_pe * info->wafer_width * info->wafer_height;
	info->clock_khz = 850000;
	info->num_queues = 4;
	info->device_id = id;
	strscpy_pad(info->fw_version, "none (test device)", sizeof(info->fw_version));
}

static int wse_probe(struct platform_device *pdev)
{
	struct wse_device *wdev;
	int ret;

	wdev = devm_drm_dev_alloc(&pdev->dev, &wse_drm_driver, struct wse_device, drm);
	if (IS_ERR(wdev))
		return PTR_ERR(wdev);

	wdev->pdev = pdev;
	wse_fill_test_info(&wdev->info, pdev->id);
	platform_set_drvdata(pdev, wdev);

	ret = drm_dev_register(&wdev->drm, 0);
	if (ret)
		return ret;

	drm_info(&wdev->drm, "test device %d: %ux%u PEs\n", pdev->id,
		 wdev->info.wafer_width, wdev->info.wafer_height);
	return 0;
}

static void wse_remove(struct platform_device *pdev)
{
	struct wse_device *wdev = platform_get_drvdata(pdev);

	/* Open files keep the drm_device alive; unplug makes their ioctls
	 * fail with -ENODEV until they close.
	 */
	drm_dev_unplug(&wdev->drm);
}

static struct platform_driver wse_platform_driver = {
	.probe = wse_probe,
	.remove = wse_remove,
	.driver = {
		.name = WSE_DRIVER_NAME,
	},
};

static void wse_destroy_test_devices(void)
{
	int i;

	for (i = 0; i < WSE_MAX_TEST_DEVICES; i++) {
		if (wse_test_pdevs[i])
			platform_device_unregister(wse_test_pdevs[i]);
		wse_test_pdevs[i] = NULL;
	}
}

static int __init wse_init(void)
{
	struct platform_device *pdev;
	unsigned int i;
	int ret;

	if (test_devices > WSE_MAX_TEST_DEVICES) {
		pr_err("wse: test_devices=%u is more than the %d allowed\n",
		       test_devices, WSE_MAX_TEST_DEVICES);
		return -EINVAL;
	}

	ret = platform_driver_register(&wse_platform_driver);
	if (ret)
		return ret;

	for (i = 0; i < test_devices; i++) {
		pdev = platform_device_register_simple(WSE_DRIVER_NAME, i, NULL, 0);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			goto err_devices;
		}
		wse_test_pdevs[i] = pdev;
	}
	return 0;

err_devices:
	wse_destroy_test_devices();
	platform_driver_unregister(&wse_platform_driver);
	return ret;
}

static void __exit wse_exit(void)
{
	wse_destroy_test_devices();
	platform_driver_unregister(&wse_platform_driver);
}

module_init(wse_init);
module_exit(wse_exit);

MODULE_DESCRIPTION("wse: " WSE_DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
