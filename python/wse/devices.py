# SPDX-License-Identifier: GPL-2.0-only
"""The devices the kernel knows, as `wsectl -j list` and `wsectl -j info N`
show them: the same keys, from the same libwse calls."""
import ctypes

from . import _libwse
from ._libwse import check, lib

PART_STATES = {1: "up", 2: "down", 3: "idle"}   # enum wse_part_state


def _text(buf):
    return bytes(buf).split(b"\0", 1)[0].decode(errors="replace")


class _Ctl:
    """A control-plane handle (wse_ctl_open), closed on leaving the block."""

    def __enter__(self):
        self.ptr = ctypes.c_void_p()
        ret = lib().wse_ctl_open(ctypes.byref(self.ptr))
        if ret < 0:
            msg = "the wse module is not loaded: load it with 'modprobe wse' (or 'insmod wse.ko')" \
                if ret == -2 else ""
            check(ret, "opening the wse control interface", msg)
        return self

    def fail(self, ret, what):
        kmsg = lib().wse_ctl_error(self.ptr)
        check(ret, what, kmsg.decode(errors="replace") if kmsg else "")

    def __exit__(self, *exc):
        lib().wse_ctl_close(self.ptr)


def _status_dict(d):
    """wsectl_json_device(): one device's status."""
    return {
        "index": d.index,
        "accel": f"/dev/accel/accel{d.accel_minor}" if d.accel_minor >= 0 else None,
        "link": lib().wse_link_state_name(d.link_state).decode(),
        "peer": _text(d.peer), "reason": _text(d.reason), "fw_version": _text(d.fw_version),
        "device_id": str(d.device_id),
        "wafer_width": d.wafer_width, "wafer_height": d.wafer_height,
        "sram_per_pe": d.sram_per_pe, "sram_total": d.sram_total,
        "clock_khz": d.clock_khz, "queues": d.num_queues,
        "protocol": d.proto_version, "keepalive_ms": d.keepalive_ms,
    }


def _appliance_dict(a):
    """wsectl_json_appliance(): an appliance's parts and counters."""
    systems = []
    for s in a.system[:a.systems]:
        state = PART_STATES.get(s.state, "?")
        systems.append({
            "device_id": str(s.device_id), "state": state, "link": state,
            "address": _text(s.address), "reason": _text(s.reason),
            "frames_tx": s.frames_tx, "frames_rx": s.frames_rx,
            "bytes_tx": s.bytes_tx, "bytes_rx": s.bytes_rx,
            "steps": s.steps, "samples": s.samples,
        })
    return {
        "systems": a.systems, "job_systems": a.job_systems, "system": systems,
        "memoryx": {"state": PART_STATES.get(a.memoryx_state, "?"),
                    "capacity": a.memoryx_capacity, "bytes_held": a.memoryx_held,
                    "updates": a.memoryx_updates},
        "swarmx": {"state": PART_STATES.get(a.swarmx_state, "?"),
                   "bytes_broadcast": a.swarmx_broadcast, "bytes_reduced": a.swarmx_reduced},
        "input": {"state": PART_STATES.get(a.input_state, "?"), "samples": a.input_samples},
        "reason": _text(a.reason),
    }


def open_device(spec):
    """wse_open(@spec): a handle (ctypes.c_void_p) for close_device(); a spec
    is an index ("0"), a node path or "any"."""
    dev = ctypes.c_void_p()
    ret = lib().wse_open(str(spec).encode(), ctypes.byref(dev))
    if ret < 0:
        hint = ""
        if ret in (-1, -13):        # EPERM, EACCES: whose node, and what to do
            buf = ctypes.create_string_buffer(512)
            if lib().wse_access_hint(str(spec).encode(), buf, len(buf)) == 0:
                hint = buf.value.decode(errors="replace")
        check(ret, f"opening device {spec}", hint)
    return dev


def close_device(dev):
    lib().wse_close(dev)


def _appliance(index):
    """The appliance's parts, or None for a single system (wsectl_appliance())."""
    try:
        dev = open_device(index)
    except OSError:
        return None
    try:
        ring = ctypes.c_void_p()
        params = _libwse.RingParams(hw_queue=3, depth=2, timeout_ms=10000)
        if lib().wse_ring_open(dev, ctypes.byref(params), ctypes.byref(ring)) < 0:
            return None
        try:
            a = _libwse.Appliance()
            if lib().wse_appliance_info(ring, ctypes.byref(a)) < 0:
                return None
            return _appliance_dict(a)
        finally:
            lib().wse_ring_close(ring)
    finally:
        close_device(dev)


def device(index):
    """One device as `wsectl -j info INDEX` shows it: with "appliance" when
    it is one whose link is up."""
    d = _libwse.DevStatus()
    with _Ctl() as ctl:
        ret = lib().wse_ctl_get(ctl.ptr, int(index), False, ctypes.byref(d))
        if ret < 0:
            ctl.fail(ret, "reading device")
    out = _status_dict(d)
    if out["link"] == "up" and d.accel_minor >= 0:
        a = _appliance(d.index)
        if a is not None:
            out["appliance"] = a
    return out


def devices(parts=True):
    """Every device as `wsectl -j list` shows it; with @parts (default), each
    with its appliance's parts as `wsectl -j info` adds them."""
    arr = ctypes.POINTER(_libwse.DevStatus)()
    n = ctypes.c_size_t()
    with _Ctl() as ctl:
        ret = lib().wse_ctl_list(ctl.ptr, ctypes.byref(arr), ctypes.byref(n))
        if ret < 0:
            ctl.fail(ret, "listing devices")
    try:
        out = [_status_dict(arr[i]) for i in range(n.value)]
    finally:
        if arr:
            _libwse.libc_free(ctypes.cast(arr, ctypes.c_void_p))
    if parts:
        for d in out:
            if d["link"] == "up" and d["accel"]:
                a = _appliance(d["index"])
                if a is not None:
                    d["appliance"] = a
    return out
