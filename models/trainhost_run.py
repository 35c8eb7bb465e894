"""Train a compiled program natively with wse-trainhost against a daemon.

The compare scripts' "--via device" path: start the firmware (wsefwd or
wse-appliance) on a unix socket, train with wse-trainhost, stop the
firmware, and read the curve and validation loss it printed.
"""
import os
import re
import signal
import subprocess
import time


def train(bin_dir, daemon, sock, prog, args, extra=()):
    """wse-trainhost on @prog through @daemon's @sock: (output, seconds)."""
    fw = subprocess.Popen(daemon, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        cmd = [os.path.join(bin_dir, "wse-trainhost"), "--connect", "unix:" + sock,
               "--program", prog, "--steps", str(args.steps), "--report", str(args.report),
               "--seed", str(args.seed), "--timeout-ms", "600000", *extra]
        for f in args.text:
            cmd += ["--text", f]
        t0 = time.time()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return out, time.time() - t0
    finally:
        fw.send_signal(signal.SIGTERM)
        fw.wait()


def curve_and_val(out):
    """The training curve {step: loss} and the validation loss wse-trainhost printed."""
    curve = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"^step +(\d+)  loss ([0-9.]+)", out, re.M)}
    val = float(re.search(r"^validation loss ([0-9.]+)", out, re.M).group(1))
    return curve, val
