#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Train gpt-chars in PyTorch and on wse from the same initial weights, on
the same character data, batches, seed and optimizer, and print both loss
curves and the final validation losses side by side.

  models/compare_gpt.py [--steps 300] [--batch 16] [--lr 1e-3] [--warmup 30]
                        [--optimizer adam|adamw] [--text FILE ...]
                        [--wse build/bin/wse-graphtrain]

wse side: for now the engine's graph executor on the host (wse-graphtrain);
once .wsep programs carry graphs, wsetrain on the device. Needs
python3-torch (tools/install-deps --bench) and a built tree (make).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt_chars  # noqa: E402
import gpt_data  # noqa: E402

FORTUNES = ["/usr/share/games/fortunes/fortunes", "/usr/share/games/fortunes/literature",
            "/usr/share/games/fortunes/riddles"]


def windows(ids, offsets, context):
    x = torch.tensor([ids[o:o + context] for o in offsets], dtype=torch.long)
    y = torch.tensor([ids[o + 1:o + context + 1] for o in offsets], dtype=torch.long)
    return x, y


def torch_run(args, model, ids, split):
    if args.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: gpt_data.lr_at(args.lr, k + 1, args.warmup, args.steps, 0.0) / args.lr)
    rng = gpt_data.SplitMix64(args.seed)
    val = gpt_data.val_offsets(args.eval_batches, args.batch, split, len(ids), args.context)

    def val_loss():
        model.eval()
        total = 0.0
        with torch.no_grad():
            for b in range(args.eval_batches):
                x, y = windows(ids, val[b * args.batch:(b + 1) * args.batch], args.context)
                total += F.cross_entropy(model(x).reshape(-1, gpt_data.VOCAB), y.reshape(-1)).item()
        model.train()
        return total / args.eval_batches

    curve = {0: val_loss()}
    t0 = time.time()
    for t in range(1, args.steps + 1):
        x, y = windows(ids, gpt_data.batch_offsets(rng, args.batch, split, args.context), args.context)
        loss = F.cross_entropy(model(x).reshape(-1, gpt_data.VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if t % args.eval_every == 0 or t == args.steps:
            curve[t] = val_loss()
    return curve, time.time() - t0


def wse_run(args, onnx_path):
    cmd = [args.wse, onnx_path, "--batch", str(args.batch), "--steps", str(args.steps),
           "--lr", str(args.lr), "--optimizer", args.optimizer, "--seed", str(args.seed),
           "--eval-every", str(args.eval_every), "--eval-batches", str(args.eval_batches),
           "--log-every", "0", "--threads", "1"]
    if args.warmup:
        cmd += ["--warmup", str(args.warmup)]
    if args.weight_decay:
        cmd += ["--weight-decay", str(args.weight_decay)]
    for f in args.text:
        cmd += ["--text", f]
    t0 = time.time()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    curve = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"^step (\d+) val_loss ([0-9.]+)$", out, re.M)}
    return curve, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--optimizer", choices=["adam", "adamw"], default="adam")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--eval-batches", type=int, default=8)
    ap.add_argument("--text", action="append")
    ap.add_argument("--wse", default=os.path.join(HERE, "..", "build", "bin", "wse-graphtrain"))
    args = ap.parse_args()
    args.text = args.text or FORTUNES
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    ids, split = gpt_data.read_corpus(args.text)
    model = gpt_chars.GPT(gpt_data.VOCAB, args.blocks, args.width, args.heads, args.context, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt.onnx")
        gpt_chars.export(model, path, args.context, 0.0)	# the initial weights
        wse_curve, wse_s = wse_run(args, path)
    torch_curve, torch_s = torch_run(args, model, ids, split)
    print(f"gpt-chars: {args.blocks} blocks, width {args.width}, {args.heads} heads, context "
          f"{args.context}; {len(ids)} characters; batch {args.batch}, {args.steps} steps, "
          f"{args.optimizer} lr {args.lr} warm-up {args.warmup} + cosine, seed {args.seed}")
    print(f"{'step':>6} {'pytorch val':>12} {'wse val':>10}")
    for t in sorted(torch_curve):
        print(f"{t:>6} {torch_curve[t]:>12.4f} {wse_curve.get(t, float('nan')):>10.4f}")
    p, w = torch_curve[args.steps], wse_curve.get(args.steps, float("nan"))
    print(f"final validation loss: pytorch {p:.4f} ({torch_s:.0f} s), wse {w:.4f} ({wse_s:.0f} s): "
          f"{100 * (w - p) / p:+.2f}%")


if __name__ == "__main__":
    main()
