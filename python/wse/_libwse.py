# SPDX-License-Identifier: GPL-2.0-only
"""libwse.so.0 through ctypes: the structures of wse/ctl.h and wse/wse.h
that the package reads, and the calls it makes.

The structures are written out here by hand, so tests/host/python_test.sh
builds a C program against the headers that prints every field's offset
and size and compares them with layouts() below: a header that changes
fails that test instead of misreading memory here.
"""
import ctypes
import ctypes.util
import os

from .errors import WseError

c_u32, c_u64, c_i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
c_enum = ctypes.c_int       # the C enums here are int-sized


class LinkCounters(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in (
        "frames_tx", "frames_rx", "bytes_tx", "bytes_rx", "crc_errors", "proto_errors",
        "timeouts", "keepalives", "stale_responses", "inflight", "link_downs")] + [
        ("has_device", ctypes.c_bool)] + [(n, c_u64) for n in (
            "dev_cycles", "dev_est_cycles", "dev_steps", "dev_samples", "dev_sram_used",
            "dev_stream_in", "dev_stream_out", "dev_programs")]


class DevStatus(ctypes.Structure):
    _fields_ = [
        ("index", c_u32), ("accel_minor", c_i32), ("link_state", c_u32),
        ("peer", ctypes.c_char * 80), ("fw_version", ctypes.c_char * 32),
        ("reason", ctypes.c_char * 80), ("device_id", c_u64),
        ("wafer_width", c_u32), ("wafer_height", c_u32),
        ("sram_per_pe", c_u64), ("sram_total", c_u64),
        ("clock_khz", c_u32), ("num_queues", c_u32), ("proto_version", c_u32),
        ("keepalive_ms", c_u32), ("has_stats", ctypes.c_bool), ("stats", LinkCounters),
    ]


APPLIANCE_SYSTEMS_MAX = 16  # WSE_APPLIANCE_SYSTEMS_MAX


class ApplianceSystem(ctypes.Structure):
    _fields_ = [
        ("device_id", c_u64), ("state", c_enum),
        ("frames_tx", c_u64), ("frames_rx", c_u64), ("bytes_tx", c_u64), ("bytes_rx", c_u64),
        ("steps", c_u64), ("samples", c_u64),
        ("address", ctypes.c_char * 65), ("reason", ctypes.c_char * 65),
    ]


class Appliance(ctypes.Structure):
    _fields_ = [
        ("systems", c_u32), ("job_systems", c_u32),
        ("memoryx_state", c_enum), ("swarmx_state", c_enum), ("input_state", c_enum),
        ("memoryx_capacity", c_u64), ("memoryx_held", c_u64), ("memoryx_updates", c_u64),
        ("swarmx_broadcast", c_u64), ("swarmx_reduced", c_u64), ("input_samples", c_u64),
        ("reason", ctypes.c_char * 129),
        ("system", ApplianceSystem * APPLIANCE_SYSTEMS_MAX),
    ]


class RingParams(ctypes.Structure):
    _fields_ = [(n, c_u32) for n in ("hw_queue", "depth", "batch", "piece", "timeout_ms")]


# C name of each structure, as the layout test's C program prints it.
STRUCTS = {
    "wse_link_counters": LinkCounters,
    "wse_dev_status": DevStatus,
    "wse_appliance_system": ApplianceSystem,
    "wse_appliance": Appliance,
    "wse_ring_params": RingParams,
}


def layouts():
    """Lines "STRUCT size N" and "STRUCT.FIELD OFFSET SIZE", for the layout test."""
    out = []
    for cname, cls in STRUCTS.items():
        out.append(f"{cname} size {ctypes.sizeof(cls)}")
        for name, _ in cls._fields_:
            f = getattr(cls, name)
            out.append(f"{cname}.{name} {f.offset} {f.size}")
    return out


def _candidates():
    env = os.environ.get("WSE_LIBWSE")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    # Run from the source tree (python/wse): the library make built.
    tree = os.path.join(here, "..", "..", "build", "dist", "lib", "libwse.so.0")
    return ["libwse.so.0", os.path.normpath(tree)]


_lib = None


def lib():
    """libwse.so.0, loaded once: $WSE_LIBWSE, the system's, else the tree's build."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in _candidates():
        try:
            handle = ctypes.CDLL(path, use_errno=True)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise ImportError("libwse.so.0 not found (install wse with 'make install', or set "
                          "WSE_LIBWSE to the library): " + "; ".join(errors))
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    sigs = {
        "wse_ctl_open": (ctypes.c_int, [ctypes.POINTER(vp)]),
        "wse_ctl_close": (None, [vp]),
        "wse_ctl_error": (cp, [vp]),
        "wse_ctl_list": (ctypes.c_int, [vp, ctypes.POINTER(ctypes.POINTER(DevStatus)),
                                        ctypes.POINTER(ctypes.c_size_t)]),
        "wse_ctl_get": (ctypes.c_int, [vp, c_u32, ctypes.c_bool, ctypes.POINTER(DevStatus)]),
        "wse_link_state_name": (cp, [c_u32]),
        "wse_open": (ctypes.c_int, [cp, ctypes.POINTER(vp)]),
        "wse_close": (None, [vp]),
        "wse_access_hint": (ctypes.c_int, [cp, cp, ctypes.c_size_t]),
        "wse_ring_open": (ctypes.c_int, [vp, ctypes.POINTER(RingParams), ctypes.POINTER(vp)]),
        "wse_ring_close": (None, [vp]),
        "wse_appliance_info": (ctypes.c_int, [vp, ctypes.POINTER(Appliance)]),
        "wse_strerror": (cp, [ctypes.c_int]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(handle, name)
        fn.restype, fn.argtypes = res, args
    _lib = handle
    return _lib


def libc_free(ptr):
    """free() for what libwse allocated (wse_ctl_list's array)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(ptr)


def check(ret, what, message=""):
    """Raises WseError for a negative errno @ret from a libwse call."""
    if ret >= 0:
        return ret
    text = lib().wse_strerror(ret).decode(errors="replace")
    raise WseError(-ret, text, what, message)
