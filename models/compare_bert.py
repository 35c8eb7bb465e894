#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Train models/bert_mlm.py's BERT-style encoder by masked language
modelling in PyTorch and on wse from the same initial weights, on the same
windows of the character corpus corrupted the same way (mlm_sample(),
mirrored by wse-graphtrain --mlm), with the same optimizer and schedule,
and print both training-loss curves and the final validation losses.

  models/compare_bert.py [--steps 300] [--batch 16] [--lr 1e-3] [--warmup 30]
                         [--layers 2] [--width 64] [--heads 4] [--context 64]
                         [--text FILE ...] [--via device|guest|host]
                         [--mode pipelined|weight_streaming]

The wse side, the padding mask fed as the model's second input:
  device  (default) the exported model compiled by wsecc into a graph
          program fed two inputs (tokens, then the mask, in each sample's
          record), trained on a system (wsefwd; --mode weight_streaming:
          an appliance of one system, wse-appliance, MemoryX holding the
          weights) that wse-trainhost feeds over a unix socket;
  guest   the same program trained by wsetrain in the QEMU guest, through
          the driver, on a system on the host (tools/wsevm --fw 1; weight
          streaming: --appliance 1);
  host    the engine's graph executor on the host (wse-graphtrain --mlm).
A masked-LM batch is averaged over its predicted positions, which only a
device holding the whole batch counts: one system, in either mode.
The validation loss is over the predicted positions of every validation
window, corrupted from a fixed generator. Needs python3-torch
(tools/install-deps --bench) and a built tree (make).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import torch
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
BIN = os.path.join(TOP, "build", "bin")
sys.path.insert(0, HERE)
import bert_mlm  # noqa: E402
import gpt_data  # noqa: E402
import trainhost_run  # noqa: E402

FORTUNES = ["/usr/share/games/fortunes/fortunes", "/usr/share/games/fortunes/literature",
            "/usr/share/games/fortunes/riddles"]
# wse/textmlm.h's generators of the corruption.
TRAIN_STREAM = 0x4D4C4D
VAL_STREAM = 0x56414C


def batch(ids, offsets, context, rng):
    xs, ms, ys = [], [], []
    for o in offsets:
        x, m, y = bert_mlm.mlm_sample(ids, o, context, rng)
        xs.append(x)
        ms.append(m)
        ys.append(y)
    return torch.tensor(xs), torch.tensor(ms), torch.tensor(ys)


def validate(model, ids, split, context, size):
    offsets = gpt_data.val_offsets(split, len(ids), context)
    rng = gpt_data.SplitMix64(VAL_STREAM)
    total, counted = 0.0, 0
    model.eval()
    with torch.no_grad():
        for at in range(0, len(offsets), size):
            x, m, y = batch(ids, offsets[at:at + size], context, rng)
            logits = model(x, m)
            total += F.cross_entropy(logits.reshape(-1, bert_mlm.VOCAB), y.reshape(-1),
                                     reduction="sum").item()
            counted += int((y != bert_mlm.IGNORE).sum())
    model.train()
    return total / counted


def torch_run(args, model, ids, split):
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    offsets_rng = gpt_data.SplitMix64(args.seed)
    rng = gpt_data.SplitMix64(args.seed ^ TRAIN_STREAM)
    curve, since = {}, []
    t0 = time.time()
    model.train()
    for t in range(1, args.steps + 1):
        lr = gpt_data.lr_at(args.lr, t, args.warmup, args.steps, 0.0)
        for g in opt.param_groups:
            g["lr"] = lr
        offsets = gpt_data.batch_offsets(offsets_rng, args.batch, split, args.context)
        x, m, y = batch(ids, offsets, args.context, rng)
        loss = F.cross_entropy(model(x, m).reshape(-1, bert_mlm.VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        since.append(loss.item())
        if t % args.report == 0:
            curve[t] = sum(since) / len(since)
            since = []
    return curve, validate(model, ids, split, args.context, args.batch), time.time() - t0


def host_run(args, onnx):
    cmd = [os.path.join(BIN, "wse-graphtrain"), onnx, "--mlm", "--batch", str(args.batch),
           "--steps", str(args.steps), "--lr", str(args.lr), "--optimizer", "adam", "--seed",
           str(args.seed), "--eval-every", "0", "--log-every", str(args.report), "--threads", "1"]
    if args.warmup:
        cmd += ["--warmup", str(args.warmup)]
    for f in args.text:
        cmd += ["--text", f]
    t0 = time.time()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    curve = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"^step (\d+) loss ([0-9.]+)", out, re.M)}
    val = float(re.search(r"^step %d val_loss ([0-9.]+)" % args.steps, out, re.M).group(1))
    return curve, val, time.time() - t0


def compile_program(args, onnx, out):
    cmd = [os.path.join(BIN, "wsecc"), onnx, "--batch", str(args.batch), "--mode", args.mode,
           "--optimizer", "adam", "--lr", str(args.lr), "--seed", str(args.seed), "-q", "-o", out]
    if args.warmup:
        cmd += ["--warmup", str(args.warmup), "--steps", str(args.steps)]
    subprocess.run(cmd, check=True)


def device_run(args, onnx):
    tmp = os.path.dirname(onnx)
    prog, sock = os.path.join(tmp, "bert.wsep"), os.path.join(tmp, "fwd.sock")
    compile_program(args, onnx, prog)
    if args.mode == "pipelined":
        daemon = [os.path.join(BIN, "wsefwd"), "--listen", "unix:" + sock, "--once"]
    else:
        daemon = [os.path.join(BIN, "wse-appliance"), "--systems", "1", "--listen", "unix:" + sock,
                  "--run-dir", os.path.join(tmp, "run")]
    out, seconds = trainhost_run.train(BIN, daemon, sock, prog, args)
    curve, val = trainhost_run.curve_and_val(out)
    return curve, val, seconds


def guest_run(args, onnx):
    tmp = os.path.dirname(onnx)
    compile_program(args, onnx, os.path.join(tmp, "bert.wsep"))
    texts = []
    for i, f in enumerate(args.text):
        shutil.copy(f, os.path.join(tmp, "text%d" % i))
        texts += ["--text", "/wse/runs/text%d" % i]
    device = ["--fw", "1"] if args.mode == "pipelined" else ["--fw", "0", "--appliance", "1"]
    cmd = [os.path.join(TOP, "tools", "wsevm"), "--runs", tmp] + device + ["--mem", "1024", "--",
           "wsetrain", "/wse/runs/bert.wsep", "--steps", str(args.steps), "--report",
           str(args.report)] + texts
    t0 = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        sys.exit("compare_bert: tools/wsevm ... wsetrain exited %d:\n%s%s"
                 % (done.returncode, done.stdout[-4000:], done.stderr[-4000:]))
    out = done.stdout
    # wsetrain's report lines (tools/wsetrain/report.c), as compare_gpt.py reads them.
    curve = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"Train Epoch=\S+ Step=(\d+)/\d+, Loss=([0-9.]+)", out)}
    evals = re.findall(r"Eval Epoch=\S+ Step=\d+, Loss=([0-9.]+)", out)
    if not evals:
        sys.exit("compare_bert: wsetrain in the guest printed no evaluation:\n" + out)
    return curve, float(evals[-1]), time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=int, default=50, help="training loss every N steps")
    ap.add_argument("--text", action="append")
    ap.add_argument("--via", choices=["device", "guest", "host"], default="device")
    ap.add_argument("--mode", choices=["pipelined", "weight_streaming"], default="pipelined",
                    help="wsecc --mode of the device's program")
    args = ap.parse_args()
    args.text = args.text or FORTUNES
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    ids, split = gpt_data.read_corpus(args.text)
    model = bert_mlm.BertMLM(bert_mlm.VOCAB, args.layers, args.width, args.heads, args.context)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bert.onnx")
        bert_mlm.export(model, path, args.context)  # the initial weights
        run = {"device": device_run, "guest": guest_run, "host": host_run}[args.via]
        wse_curve, wse_val, wse_s = run(args, path)
    torch_curve, torch_val, torch_s = torch_run(args, model, ids, split)
    print(f"bert-mlm: {args.layers} layers, width {args.width}, {args.heads} heads, context "
          f"{args.context}; {len(ids)} characters ({len(ids) - split} for validation); batch "
          f"{args.batch}, {args.steps} steps, adam lr {args.lr} warm-up {args.warmup} + cosine, "
          f"seed {args.seed}; wse: {args.via}"
          + (f" ({args.mode})" if args.via != "host" else ""))
    print(f"{'step':>6} {'pytorch train':>14} {'wse train':>10}   (mean of the steps since the last line)")
    for t in sorted(torch_curve):
        print(f"{t:>6} {torch_curve[t]:>14.4f} {wse_curve.get(t, float('nan')):>10.4f}")
    print(f"final validation loss: pytorch {torch_val:.4f} ({torch_s:.0f} s), wse {wse_val:.4f} "
          f"({wse_s:.0f} s): {100 * (wse_val - torch_val) / torch_val:+.2f}%")


if __name__ == "__main__":
    main()
