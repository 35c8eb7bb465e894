# SPDX-License-Identifier: GPL-2.0-only
"""The exceptions of the wse package.

WseError is an OSError: .errno is the positive errno libwse (or the
kernel) returned, .strerror libwse's text for it, and .message the
device's or kernel's own explanation when it gave one (the genl extack,
wse_ctl_error(); wse_access_hint() for a node the user may not open).
ToolError is a failure of the wsecc or wsetrain run a call drives.
"""
import errno as _errno


class WseError(OSError):
    """A libwse call failed: errno, libwse's message and the device's."""

    def __init__(self, err, strerror, what, message=""):
        super().__init__(err, strerror)
        self.what = what
        self.message = message

    def __str__(self):
        name = _errno.errorcode.get(self.errno, str(self.errno))
        s = f"{self.what}: {self.strerror} ({name})"
        return f"{s}: {self.message}" if self.message else s


class ToolError(RuntimeError):
    """wsecc or wsetrain exited non-zero; .status, .command and .output say how."""

    def __init__(self, command, status, output):
        self.command, self.status, self.output = command, status, output
        tail = "\n".join(output.strip().splitlines()[-15:])
        super().__init__(f"{command[0]} exited {status}: {tail}")


class UnsupportedError(ValueError):
    """Something torch has that the device does not: the reason says what."""
