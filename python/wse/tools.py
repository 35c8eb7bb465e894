# SPDX-License-Identifier: GPL-2.0-only
"""Running wsecc and wsetrain: the compiler and the trainer are the
project's programs, driven here as a user would, so a wse.fit() run is a
wsetrain run (same step code, run directory, checkpoints and metrics)."""
import os
import shutil
import subprocess
import sys
import tempfile

from .errors import ToolError


def find(tool):
    """The program @tool: in $WSE_BINDIR, on PATH, else the source tree's build/bin."""
    bindir = os.environ.get("WSE_BINDIR")
    if bindir:
        path = os.path.join(bindir, tool)
        if os.access(path, os.X_OK):
            return path
        raise FileNotFoundError(f"WSE_BINDIR={bindir} has no {tool}")
    path = shutil.which(tool)
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.normpath(os.path.join(here, "..", "..", "build", "bin", tool))
    if os.access(tree, os.X_OK):
        return tree
    raise FileNotFoundError(f"{tool} not found on PATH: install wse ('make install') or set WSE_BINDIR")


def run(tool, args, on_line=None, quiet=True, stdout_only=False):
    """Runs @tool with @args; each line of its output goes to @on_line (and
    to stdout unless @quiet). Returns the output, its stdout alone if
    @stdout_only (its messages then only in a ToolError); raises ToolError
    when it exits non-zero."""
    cmd = [find(tool)] + [str(a) for a in args]
    env = dict(os.environ, TERM="dumb")      # lines, not a bar redrawn in place
    messages = tempfile.TemporaryFile("w+") if stdout_only else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=messages if stdout_only else subprocess.STDOUT,
                            text=True, env=env, bufsize=1)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if not quiet:
            sys.stdout.write(line)
            sys.stdout.flush()
        if on_line:
            on_line(line.rstrip("\n"))
    status = proc.wait()
    out = "".join(lines)
    if messages:
        messages.seek(0)
        said = messages.read()
        messages.close()
        if status != 0:
            raise ToolError(cmd, status, said + out)
    if status != 0:
        raise ToolError(cmd, status, out)
    return out
