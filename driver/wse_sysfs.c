// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: sysfs attributes of a device, on its platform device
 * (/sys/bus/platform/devices/wse.N, also /sys/class/accel/accelN/device).
 */

#include <linux/device.h>
#include <linux/sysfs.h>

#include "wse_devices.h"
#include "wse_drv.h"
#include "wse_link.h"

static struct wse_device *wse_sysfs_device(struct device *dev)
{
	struct wse_accel *accel = dev_get_drvdata(dev);

	return accel->wdev;
}

static ssize_t link_state_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	static const char * const names[] = {
		[WSE_LINK_STATE_NONE] = "none",
		[WSE_LINK_STATE_UP] = "up",
		[WSE_LINK_STATE_DEAD] = "dead",
	};
	const char *reason;
	enum wse_link_state state = wse_link_state(&wse_sysfs_device(dev)->link, &reason);

	if (state == WSE_LINK_STATE_DEAD && reason)
		return sysfs_emit(buf, "%s (%s)\n", names[state], reason);
	return sysfs_emit(buf, "%s\n", names[state]);
}
static DEVICE_ATTR_RO(link_state);

static ssize_t peer_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", wse_sysfs_device(dev)->link.peer);
}
static DEVICE_ATTR_RO(peer);

static ssize_t fw_version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", wse_sysfs_device(dev)->info.fw_version);
}
static DEVICE_ATTR_RO(fw_version);

static ssize_t wafer_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	const struct drm_wse_device_info *info = &wse_sysfs_device(dev)->info;

	return sysfs_emit(buf, "%ux%u\n", info->wafer_width, info->wafer_height);
}
static DEVICE_ATTR_RO(wafer);

static ssize_t sram_per_pe_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", wse_sysfs_device(dev)->info.sram_per_pe);
}
static DEVICE_ATTR_RO(sram_per_pe);

static ssize_t sram_total_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", wse_sysfs_device(dev)->info.sram_total);
}
static DEVICE_ATTR_RO(sram_total);

static ssize_t clock_khz_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", wse_sysfs_device(dev)->info.clock_khz);
}
static DEVICE_ATTR_RO(clock_khz);

static ssize_t device_index_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", wse_sysfs_device(dev)->index);
}
static DEVICE_ATTR_RO(device_index);

static struct attribute *wse_attrs[] = {
	&dev_attr_link_state.attr,
	&dev_attr_peer.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_wafer.attr,
	&dev_attr_sram_per_pe.attr,
	&dev_attr_sram_total.attr,
	&dev_attr_clock_khz.attr,
	&dev_attr_device_index.attr,
	NULL,
};

static const struct attribute_group wse_attr_group = {
	.attrs = wse_attrs,
};

const struct attribute_group *wse_attr_groups[] = {
	&wse_attr_group,
	NULL,
};
