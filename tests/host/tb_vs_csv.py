#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks that a wsetrain run's TensorBoard scalars are its metrics.csv.

Usage: tb_vs_csv.py RUN_DIR

Reads every events.out.tfevents.* of RUN_DIR with tfevents_check.py (beside
this script: the real event.proto schema, through Debian's protobuf) and
RUN_DIR/metrics.csv. Every CSV value TensorBoard also gets (train rows:
loss, accuracy, samples_per_s, global_samples_per_s; test rows: loss,
accuracy) must be a scalar of its tag at its step holding that value as a
float32, and every scalar must be such a value: the same numbers, neither
more nor fewer. Prints what it matched; exits 1 naming the first
difference, 77 when protobuf is missing (tests skip), 2 on bad usage.
"""
import collections
import csv
import glob
import os
import struct
import subprocess
import sys

COLUMNS = {
    "train": {"loss": "train/loss", "accuracy": "train/accuracy",
              "samples_per_s": "train/samples_per_s",
              "global_samples_per_s": "train/global_samples_per_s",
              "lr": "train/lr"},
    "test": {"loss": "test/loss", "accuracy": "test/accuracy"},
}


def f32(x):
    """x as the float32 TensorBoard keeps."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def scalars(path):
    """(tag, step) -> [values] of one event file, through tfevents_check.py."""
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tfevents_check.py")
    run = subprocess.run([sys.executable, checker, path], capture_output=True, text=True,
                         check=False)
    if run.returncode == 77:
        print(run.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if run.returncode != 0:
        raise ValueError(f"{path}: tfevents_check.py failed: {run.stderr.strip()}")
    out = collections.defaultdict(list)
    for line in run.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "scalar":
            out[(f[1], int(f[2]))].append(float(f[3]))
    return out


def csv_values(path):
    """(tag, step) -> [float32 values] of metrics.csv."""
    out = collections.defaultdict(list)
    with open(path, newline="", encoding="utf-8") as f:
        for n, row in enumerate(csv.DictReader(f), start=2):
            kind = row["kind"]
            if kind not in COLUMNS:
                raise ValueError(f"{path}:{n}: kind '{kind}'")
            for col, tag in COLUMNS[kind].items():
                # A run directory from before the lr column has none.
                if col == "lr" and row.get(col) is None:
                    continue
                if col not in row:
                    raise ValueError(f"{path}: no '{col}' column")
                out[(tag, int(row["step"]))].append(f32(float(row[col])))
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: tb_vs_csv.py RUN_DIR", file=sys.stderr)
        return 2
    run_dir = sys.argv[1]
    try:
        events = sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*")))
        if not events:
            raise ValueError(f"{run_dir}: no events.out.tfevents.* file")
        tb = collections.defaultdict(list)
        for path in events:
            for key, values in scalars(path).items():
                tb[key].extend(values)
        table = csv_values(os.path.join(run_dir, "metrics.csv"))
        for key in sorted(set(tb) | set(table)):
            if sorted(tb.get(key, [])) != sorted(table.get(key, [])):
                raise ValueError(f"{key[0]} at step {key[1]}: TensorBoard has "
                                 f"{tb.get(key, [])}, metrics.csv {table.get(key, [])}")
    except (OSError, ValueError, KeyError) as exc:
        print(f"tb_vs_csv: {exc}", file=sys.stderr)
        return 1
    print(f"tb_vs_csv: {run_dir}: {sum(len(v) for v in tb.values())} scalars, "
          f"{len(events)} event file(s), all in metrics.csv and the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
