# SPDX-License-Identifier: GPL-2.0-only
"""Documentation/train-your-own.rst, run as a user would copy it: in the
guest, through the driver.

The page marks what a reader types or saves with reST comments before a
literal block:

  .. test-file: NAME    the block is a file to save as NAME
  .. test-run           the block's "$ " lines are commands (a line
                        ending in a backslash goes on to the next)

Every file is written and every command run in page order in an empty
directory, each command one TAP case judged by its exit status; the first
that fails ends the run (the rest need what it made). Then the files the
steps leave, and evaluate.py's PyTorch figures against the device's.

  train_your_own_test [PAGE]          run the page (default: beside this file)
  train_your_own_test --list PAGE     print the steps found, run nothing
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

MARKER = re.compile(r"^\.\. test-(file|run)(?:: *(\S+))?\s*$")
# evaluate.py's result lines, and how close they must be (the page says so).
FIGURES = re.compile(r"^(PyTorch|device): +test loss ([0-9.]+), accuracy ([0-9.]+)$", re.M)
ACCURACY_TOLERANCE = 0.001
LOSS_TOLERANCE = 0.001

n = failed = 0
started = time.monotonic()


def check(name, ok, why=""):
    global n, failed
    n += 1
    print(f"{'ok' if ok else 'not ok'} {n} {name}" + ("" if ok else "\n#   " + str(why).replace("\n", "\n#   ")),
          flush=True)
    failed += not ok


def finish():
    print(f"# train_your_own_test: {time.monotonic() - started:.0f} s in all")
    print(f"# Totals: pass:{n - failed} fail:{failed} xfail:0 xpass:0 skip:0 error:0")
    sys.exit(1 if failed else 0)


def literal_block(lines, i, where):
    """The literal block at or after line @i (after a "::" paragraph end),
    dedented, and the index past it."""
    while i < len(lines) and not lines[i].rstrip().endswith("::"):
        if lines[i].strip() and not lines[i].startswith(" "):
            raise ValueError(f"{where}: the marker is not followed by a literal block (::)")
        i += 1
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    block = []
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
        block.append(lines[i])
        i += 1
    while block and not block[-1].strip():
        block.pop()
    if not block:
        raise ValueError(f"{where}: the marker's literal block is empty")
    indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
    return [b[indent:] for b in block], i


def commands(block, where):
    """The "$ " commands of @block, continuation lines joined."""
    out, i = [], 0
    while i < len(block):
        line = block[i]
        i += 1
        if not line.startswith("$ "):
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i < len(block):
            cmd = cmd[:-1].rstrip() + " " + block[i].strip()
            i += 1
        out.append(cmd)
    if not out:
        raise ValueError(f"{where}: a test-run block without a '$ ' command")
    return out


def steps(page):
    """[("file", NAME, TEXT) | ("run", COMMAND, None)] in the page's order."""
    with open(page, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        where = f"{page}:{i + 1}"
        i += 1
        if not m:
            continue
        block, i = literal_block(lines, i, where)
        if m.group(1) == "file":
            if not m.group(2) or "/" in m.group(2):
                raise ValueError(f"{where}: test-file needs a file name (.. test-file: NAME)")
            out.append(("file", m.group(2), "\n".join(block) + "\n"))
        else:
            out.extend(("run", cmd, None) for cmd in commands(block, where))
    return out


def run_page(page):
    """Runs @page's steps in a fresh directory: it, and each command's
    output by command (None when one failed)."""
    work = tempfile.mkdtemp(prefix="train-your-own-")
    print(f"# {page} in {work}", flush=True)
    outputs = {}
    for kind, what, text in steps(page):
        if kind == "file":
            with open(os.path.join(work, what), "w", encoding="utf-8") as f:
                f.write(text)
            continue
        t0 = time.monotonic()
        r = subprocess.run(what, shell=True, cwd=work, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print("\n".join("# | " + line for line in r.stdout.splitlines()[-25:]))
        check(f"$ {what}  ({time.monotonic() - t0:.1f} s)", r.returncode == 0, f"exit status {r.returncode}")
        if r.returncode:
            return work, None
        outputs[what] = r.stdout
    return work, outputs


def devices():
    r = subprocess.run(["wsectl", "-j", "list"], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"train_your_own_test: wsectl -j list failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def attach_appliance():
    """The page wants a device attached, an appliance for its weight
    streaming over 2 systems: when none is up (tools/wsevm --fw-no-attach,
    as make check runs it), attach the one wsevm started. Its index, for
    detach_device, or None when one was up already."""
    before = devices()
    if any(d["link"] == "up" for d in before):
        return None
    try:
        with open("/wse/appliance-addr") as f:
            addr = f.read().strip()
    except FileNotFoundError:
        check("a device to train on", False,
              "no device is attached and wsevm started no appliance: run under tools/wsevm --appliance 2")
        finish()
    r = subprocess.run(["wsectl", "attach", addr], capture_output=True, text=True)
    check(f"wsectl attach {addr} (the appliance)", r.returncode == 0, r.stderr)
    if r.returncode:
        finish()
    known = {d["index"] for d in before}
    return next(d["index"] for d in devices() if d["index"] not in known)


def detach_device(index):
    r = subprocess.run(["wsectl", "detach", str(index)], capture_output=True, text=True)
    check(f"wsectl detach {index}", r.returncode == 0, r.stderr)


def main():
    if sys.argv[1:2] == ["--list"]:
        for kind, what, text in steps(sys.argv[2]):
            print(f"{kind} {what}" + (f" ({len(text.splitlines())} lines)" if text else ""))
        return
    here = os.path.dirname(os.path.abspath(__file__))
    page = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "train-your-own.rst")
    attached = attach_appliance()
    try:
        work, outputs = run_page(page)
    finally:
        if attached is not None:
            detach_device(attached)
    if outputs is None:
        finish()
    output = next((out for cmd, out in outputs.items() if cmd.startswith("python3 evaluate.py")), "")
    trained = next((out for cmd, out in outputs.items() if cmd.startswith("wsetrain mynet.wsep ")), "")
    check("wsetrain says what it trains and tests on: 4096 training and 1000 test samples (--test-limit)",
          ", 4096 training and 1000 test samples" in trained, trained.split("\n")[:3])

    def has(path):
        return os.path.isfile(os.path.join(work, path)) and os.path.getsize(os.path.join(work, path)) > 0

    made = ["mynet.onnx", "mynet.svg", "mynet.wsep", "mynet-ws.wsep", "mynet-run/checkpoint_64.ckpt",
            "mynet-run/params.yaml", "trained.onnx", "mynet-trained.pt"]
    check("the steps leave their files: " + ", ".join(made), all(map(has, made)),
          "missing: " + ", ".join(p for p in made if not has(p)))
    for run in ("mynet-run", "mynet-ws-run"):
        with open(os.path.join(work, run, "run.json")) as f:
            final = json.load(f)
        check(f"{run}: done, and trained past guessing (test accuracy above 0.5)",
              final.get("status") == "done" and final["final"]["test_accuracy"] > 0.5,
              {k: final.get(k) for k in ("status", "final")})
    check("evaluate.py: trained.onnx and the checkpoint give the module the same weights",
          "trained.onnx and the checkpoint hold the same weights: True" in output, output)
    figures = {who: (float(loss), float(acc)) for who, loss, acc in FIGURES.findall(output)}
    if set(figures) != {"PyTorch", "device"}:
        check("evaluate.py prints PyTorch's and the device's test loss and accuracy", False, output)
        finish()
    (torch_loss, torch_acc), (dev_loss, dev_acc) = figures["PyTorch"], figures["device"]
    check(f"PyTorch's test accuracy {torch_acc:.4f} is the device's {dev_acc:.4f} to {ACCURACY_TOLERANCE}",
          abs(torch_acc - dev_acc) <= ACCURACY_TOLERANCE)
    check(f"PyTorch's test loss {torch_loss:.4f} is the device's {dev_loss:.4f} to {LOSS_TOLERANCE}",
          abs(torch_loss - dev_loss) <= LOSS_TOLERANCE)
    finish()


if __name__ == "__main__":
    main()
