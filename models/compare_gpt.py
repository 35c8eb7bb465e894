#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Train gpt-chars in PyTorch and on wse from the same initial weights, on
the same character data, batches, seed, optimizer and schedule, and print
both training-loss curves and the final validation losses side by side.

  models/compare_gpt.py [--steps 300] [--batch 16] [--lr 1e-3] [--warmup 30]
                        [--optimizer adam|adamw] [--dropout P] [--tied] [--text FILE ...]
                        [--via device|guest|wsetrain|host] [--arch gpt|llama]
                        [--wafer SPEC] [--micro-batch N] [--precision P]
                        [--systems N] [--max-program B] [--guest-mem MB]
                        [--guest-timeout S] [--devices N]

--arch llama trains models/reference_models.py's LLaMA decoder (RMSNorm,
rotary embeddings, SwiGLU of 4x the width, no biases) of the same blocks,
width, heads and context instead of gpt-chars' GPT (no dropout). --tied
ties the GPT's output head to its token embedding (head.weight =
tok.weight, one parameter), which wsecc ties back in the export.

The wse side:
  device  (default) the exported model compiled by wsecc into a graph
          program trained by weight streaming on an appliance of one
          system (wse-appliance: MemoryX beside the firmware), which
          wse-trainhost feeds over a unix socket;
  guest   the same program trained by wsetrain in the QEMU guest, through
          the driver, on an appliance (tools/wsevm --appliance 1): the
          whole stack, slowest (no run directory, so no checkpoint);
  wsetrain the same program trained by wsetrain on a device of this
          machine (--devices N, an appliance): what --via guest runs in
          the guest, for use inside one (tests/guest/wsetrain_graph_test);
  host    the engine's graph executor on the host (wse-graphtrain).
--precision bf16 (or fp16) compiles the wse side with 16-bit matrix
products and runs PyTorch's side under CPU autocast of that type, both with
fp32 master weights and Adam state. --wafer and --micro-batch go to wsecc;
--systems, --max-program (for a program whose initial weights exceed the
appliance's default 256M) and --guest-mem size the appliance and the guest;
--guest-timeout gives the guest longer than wsevm's default half hour.
Needs python3-torch (tools/install-deps --bench) and a built tree (make).
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
import gpt_chars  # noqa: E402
import gpt_data  # noqa: E402
import reference_models  # noqa: E402
import trainhost_run  # noqa: E402
import wse_export  # noqa: E402

FORTUNES = ["/usr/share/games/fortunes/fortunes", "/usr/share/games/fortunes/literature",
            "/usr/share/games/fortunes/riddles"]


def windows(ids, offsets, context):
    x = torch.tensor([ids[o:o + context] for o in offsets], dtype=torch.long)
    y = torch.tensor([ids[o + 1:o + context + 1] for o in offsets], dtype=torch.long)
    return x, y


def autocast(args):
    """The 16-bit compute of --precision, as wsecc's: fp32 master weights."""
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    return torch.autocast("cpu", dtype=dtype, enabled=dtype is not None)


def torch_run(args, model, ids, split):
    if args.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: gpt_data.lr_at(args.lr, k + 1, args.warmup, args.steps, 0.0) / args.lr)
    rng = gpt_data.SplitMix64(args.seed)
    val = gpt_data.val_offsets(split, len(ids), args.context)
    model.train()  # dropout, if any, while training
    curve, window = {}, []
    t0 = time.time()
    for t in range(1, args.steps + 1):
        x, y = windows(ids, gpt_data.batch_offsets(rng, args.batch, split, args.context), args.context)
        with autocast(args):
            out = model(x)
        loss = F.cross_entropy(out.float().reshape(-1, gpt_data.VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        window.append(loss.item())
        if t % args.report == 0 or t == args.steps:
            curve[t] = sum(window) / len(window)
            window = []
    train_s = time.time() - t0
    # Every validation window once, each its tokens' mean loss.
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(val), args.batch):
            x, y = windows(ids, val[i:i + args.batch], args.context)
            with autocast(args):
                out = model(x).float()
            total += F.cross_entropy(out.reshape(-1, gpt_data.VOCAB), y.reshape(-1),
                                     reduction="sum").item() / args.context
    return curve, total / len(val), time.time() - t0, train_s


def compile_program(args, onnx, out):
    cmd = [tool("wsecc"), onnx, "--batch", str(args.batch), "--wafer", args.wafer,
           "--mode", "weight_streaming", "--optimizer", args.optimizer, "--lr", str(args.lr),
           "--seed", str(args.seed), "-q", "-o", out]
    if args.warmup:
        cmd += ["--warmup", str(args.warmup), "--steps", str(args.steps)]
    if args.weight_decay:
        cmd += ["--weight-decay", str(args.weight_decay)]
    if args.micro_batch:
        cmd += ["--micro-batch", str(args.micro_batch)]
    if args.precision != "fp32":
        cmd += ["--precision", args.precision]
    subprocess.run(cmd, check=True)


def appliance_args(args):
    """The appliance's systems are wafers of --wafer's geometry and SRAM."""
    geometry, _, sram = args.wafer.split("@")[0].partition(":")
    out = ["--fw-arg=--wafer=" + geometry] if geometry != "wse1" else []
    out += ["--fw-arg=--sram-per-pe=" + sram] if sram else []
    return out + (["--max-program=" + args.max_program] if args.max_program else [])


def device_run(args, onnx, tmp):
    prog, sock = os.path.join(tmp, "gpt.wsep"), os.path.join(tmp, "appliance.sock")
    compile_program(args, onnx, prog)
    daemon = [os.path.join(BIN, "wse-appliance"), "--systems", str(args.systems),
              "--listen", "unix:" + sock, "--run-dir", os.path.join(tmp, "run")] + appliance_args(args)
    out, seconds = trainhost_run.train(BIN, daemon, sock, prog, args)
    curve, val = trainhost_run.curve_and_val(out)
    trained = re.search(r"^trained: .* in ([0-9.]+) s", out, re.M)
    return curve, val, seconds, float(trained.group(1)) if trained else None


def tool(name):
    """A tool of the build tree, else the one on PATH (in the guest: /wse/bin)."""
    path = os.path.join(BIN, name)
    return path if os.access(path, os.X_OK) else name


def guest_run(args, onnx, tmp):
    prog = os.path.join(tmp, "gpt.wsep")
    compile_program(args, onnx, prog)
    texts = []
    for i, f in enumerate(args.text):
        shutil.copy(f, os.path.join(tmp, "text%d" % i))
        texts += ["--text", "/wse/runs/text%d" % i]
    cmd = [os.path.join(TOP, "tools", "wsevm"), "--runs", tmp, "--appliance", str(args.systems),
           "--mem", str(args.guest_mem), "--timeout", str(args.guest_timeout)]
    cmd += [a for x in appliance_args(args) for a in ("--appliance-arg", x)]
    # No run directory (wsevm --runs offers one in WSETRAIN_RUNS), so no
    # final checkpoint: a large model's weights and Adam state (1.82 GB at
    # 151 M parameters) would be held whole in the guest and cross 9p.
    cmd += ["--", "env", "WSETRAIN_RUNS=",
            "wsetrain", "/wse/runs/gpt.wsep", "--steps", str(args.steps), "--report",
            str(args.report)] + texts
    t0 = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        sys.exit("compare_gpt: tools/wsevm ... wsetrain exited %d:\n%s%s"
                 % (done.returncode, done.stdout[-4000:], done.stderr[-4000:]))
    curve, val, train_s = wsetrain_results(done.stdout)
    return curve, val, time.time() - t0, train_s


def wsetrain_run(args, onnx, tmp):
    prog = os.path.join(tmp, "gpt.wsep")
    compile_program(args, onnx, prog)
    # A run directory of its own: not one in $WSETRAIN_RUNS among the tests'.
    cmd = [tool("wsetrain"), prog, "--steps", str(args.steps), "--report", str(args.report),
           "--systems", str(args.systems), "--model_dir", os.path.join(tmp, "run")]
    if args.devices is not None:
        cmd += ["--devices", str(args.devices)]
    for f in args.text:
        cmd += ["--text", f]
    t0 = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        sys.exit("compare_gpt: wsetrain exited %d:\n%s%s"
                 % (done.returncode, done.stdout[-4000:], done.stderr[-4000:]))
    curve, val, train_s = wsetrain_results(done.stdout)
    return curve, val, time.time() - t0, train_s


def wsetrain_results(out):
    """wsetrain's training curve, validation loss and training seconds."""
    # wsetrain's report lines (tools/wsetrain/report.c): Train ... Step=N/M, Loss=L,
    # then Eval ... Loss=L over the validation windows.
    curve = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"Train Epoch=\S+ Step=(\d+)/\d+, Loss=([0-9.]+)", out)}
    evals = re.findall(r"Eval Epoch=\S+ Step=\d+, Loss=([0-9.]+).*Time=([0-9.]+)s", out)
    if not evals:
        sys.exit("compare_gpt: wsetrain printed no evaluation:\n" + out)
    val = float(evals[-1][0])
    # Its summary's seconds run from the first step to the end of the
    # evaluation: the training alone is that less the evaluation's Time=.
    wall = re.search(r"^summary: .* \d+ samples in ([0-9.]+)s", out, re.M)
    train_s = float(wall.group(1)) - sum(float(t) for _, t in evals) if wall else None
    return curve, val, train_s


def host_run(args, onnx, tmp):
    cmd = [os.path.join(BIN, "wse-graphtrain"), onnx, "--batch", str(args.batch), "--steps",
           str(args.steps), "--lr", str(args.lr), "--optimizer", args.optimizer, "--seed",
           str(args.seed), "--eval-every", "0", "--log-every", str(args.report), "--threads", "1"]
    if args.warmup:
        cmd += ["--warmup", str(args.warmup)]
    if args.weight_decay:
        cmd += ["--weight-decay", str(args.weight_decay)]
    for f in args.text:
        cmd += ["--text", f]
    t0 = time.time()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    curve = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"^step (\d+) loss ([0-9.]+)", out, re.M)}
    val = float(re.search(r"^step %d val_loss ([0-9.]+)" % args.steps, out, re.M).group(1))
    return curve, val, time.time() - t0, None


def export_llama(model, path, context):
    model.eval()
    torch.onnx.export(model, torch.zeros(2, context, dtype=torch.long), path, opset_version=17,
                      do_constant_folding=True, input_names=["tokens"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}})
    wse_export.annotate(model, path)


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
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="nn.Dropout's p, exported in training mode; each side draws its own masks")
    ap.add_argument("--report", type=int, default=50, help="training loss every N steps")
    ap.add_argument("--text", action="append")
    ap.add_argument("--via", choices=["device", "guest", "wsetrain", "host"], default="device")
    ap.add_argument("--arch", choices=["gpt", "llama"], default="gpt")
    ap.add_argument("--tied", action="store_true",
                    help="the GPT's output head shares the token embedding")
    ap.add_argument("--wafer", default="wse2", help="wsecc --wafer (e.g. 64x64:48K)")
    ap.add_argument("--micro-batch", type=int, default=0, help="wsecc --micro-batch")
    ap.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default="fp32",
                    help="wsecc --precision; PyTorch runs under CPU autocast of that type")
    ap.add_argument("--systems", type=int, default=1, help="systems in the appliance")
    ap.add_argument("--max-program", help="wse-appliance --max-program (e.g. 1G)")
    ap.add_argument("--guest-mem", type=int, default=1024, help="tools/wsevm --mem (MB)")
    ap.add_argument("--guest-timeout", type=int, default=1800,
                    help="tools/wsevm --timeout (s): the guest is killed after it")
    ap.add_argument("--devices", type=int, help="--via wsetrain: wsetrain --devices")
    args = ap.parse_args()
    args.text = args.text or FORTUNES
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    ids, split = gpt_data.read_corpus(args.text)
    if args.arch == "llama":
        if args.dropout:
            sys.exit("compare_gpt: the LLaMA decoder has no dropout")
        model = reference_models.Llama(gpt_data.VOCAB, args.blocks, args.width, args.heads,
                                       args.context, 4 * args.width)
    else:
        model = gpt_chars.GPT(gpt_data.VOCAB, args.blocks, args.width, args.heads, args.context,
                              args.dropout)
        if args.tied:
            model.head.weight = model.tok.weight
    run = {"device": device_run, "guest": guest_run, "wsetrain": wsetrain_run,
           "host": host_run}[args.via]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt.onnx")
        if args.arch == "llama":  # the initial weights
            export_llama(model, path, args.context)
        else:
            gpt_chars.export(model, path, args.context, args.dropout)
        wse_curve, wse_val, wse_s, wse_train_s = run(args, path, tmp)
    torch_curve, torch_val, torch_s, torch_train_s = torch_run(args, model, ids, split)
    print(f"{'llama' if args.arch == 'llama' else 'gpt-chars'}: {args.blocks} blocks, width {args.width}, {args.heads} heads, context "
          f"{args.context}; {len(ids)} characters ({len(ids) - split} for validation); batch "
          f"{args.batch}, {args.steps} steps, {args.optimizer} lr {args.lr} warm-up {args.warmup} + "
          f"cosine, seed {args.seed}, dropout {args.dropout}{', tied head' if args.tied else ''}; "
          f"wse: {args.via}")
    print(f"{'step':>6} {'pytorch train':>14} {'wse train':>10}   (mean of the steps since the last line)")
    for t in sorted(torch_curve):
        print(f"{t:>6} {torch_curve[t]:>14.4f} {wse_curve.get(t, float('nan')):>10.4f}")
    print(f"final validation loss: pytorch {torch_val:.4f} ({torch_s:.0f} s), wse {wse_val:.4f} "
          f"({wse_s:.0f} s): {100 * (wse_val - torch_val) / torch_val:+.2f}%")
    samples = args.steps * args.batch
    wse_rate = f"{samples / wse_train_s:.3g}" if wse_train_s else "not reported"
    print(f"training samples/s: pytorch {samples / torch_train_s:.3g}, wse {wse_rate}")


if __name__ == "__main__":
    main()
