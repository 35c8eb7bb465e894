#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""wse.fit against wsecc + wsetrain on the same model, data and settings:
models/cnn_fashion.py's CNN on Fashion-MNIST, uint8 samples in the
dataset's order, AdamW, seed 1. wse.fit exports, writes the loaders'
samples as IDX, compiles, trains and loads the weights back; the other
side compiles the same export with the same options and trains on the
dataset's own files (--train-limit and --test-limit for the same
samples). Both are wsetrain, so the test accuracies must be equal; the
times say what the Python side costs.

  examples/python/compare_wsetrain.py [--train N] [--test N] [--batch N]
                                      [--epochs N] [--lr X] [--device N] [--dir DIR]

The whole dataset (Documentation/wse.rst gives the figures), in the guest
(whose working directory /wse holds models/):

  tools/wsevm --host-usr --fw 1 --runs examples/python -- \
      python3 /wse/runs/compare_wsetrain.py --dir /tmp/compare
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(TOP, "models"), os.path.join(os.getcwd(), "models"),
                os.path.join(TOP, "python")]
import cnn_fashion  # noqa: E402
import wse  # noqa: E402
from wse import optim, tools, training  # noqa: E402
from wse.data import read_idx  # noqa: E402

FMNIST = "/usr/share/datasets/fashion-mnist"


def loader(split, count, batch):
    """The first @count samples of @split as uint8 [N, 1, 28, 28], in order."""
    x = read_idx(f"{FMNIST}/{split}-images-idx3-ubyte.gz")[:count]
    y = read_idx(f"{FMNIST}/{split}-labels-idx1-ubyte.gz")[:count]
    ds = torch.utils.data.TensorDataset(torch.from_numpy(x.copy()).unsqueeze(1),
                                        torch.from_numpy(y.astype(np.int64)))
    return torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", type=int, default=60000, help="training samples (default all 60000)")
    ap.add_argument("--test", type=int, default=10000, help="test samples (default all 10000)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", type=int, help="the device's index (default: the first whose link is up)")
    ap.add_argument("--dir", help="where the two run directories go (default: a new temporary one)")
    args = ap.parse_args()
    if min(args.train, args.test, args.batch, args.epochs) < 1 or args.train > 60000 or args.test > 10000:
        ap.error("--train 1..60000, --test 1..10000, --batch and --epochs 1 or more")
    top = args.dir or tempfile.mkdtemp(prefix="compare-wsetrain-")

    torch.manual_seed(1)
    model = cnn_fashion.CNN()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    # What wsecc is given on both sides: the optimizer's mapping, from a copy
    # of the optimizer before training changes anything.
    train_args = optim.optimizer_args(opt, model)
    t0 = time.monotonic()
    run = wse.fit(model, optimizer=opt, data=loader("train", args.train, args.batch),
                  eval_data=loader("t10k", args.test, args.batch), epochs=args.epochs,
                  execution_mode="pipelined", model_dir=os.path.join(top, "fit"), device=args.device,
                  seed=1, quiet=True)
    fit_s = time.monotonic() - t0
    fit_final = run.final

    dev = training._device(args.device)
    side = os.path.join(top, "wsetrain")
    os.makedirs(side, exist_ok=True)
    wsep = os.path.join(side, "model.wsep")
    t0 = time.monotonic()
    tools.run("wsecc", [run.onnx, "--batch", args.batch, "--mode", "pipelined", "--input", "u8",
                        "--wafer", training._wafer(dev), *train_args, "--seed", 1, "-o", wsep])
    t1 = time.monotonic()
    out = tools.run("wsetrain", [wsep, "--model_dir", side, "--data", FMNIST, "--train-limit", args.train,
                                 "--test-limit", args.test, "--epochs", args.epochs, "--devices", dev["index"],
                                 "--progress", "lines", "--seed", 1])
    t2 = time.monotonic()
    with open(os.path.join(side, "run.json")) as f:
        own_final = json.load(f).get("final", {})
    rate = re.findall(r"([0-9.]+) ?samples/s", out)

    model.eval()
    right = 0
    with torch.no_grad():
        for x, y in loader("t10k", args.test, args.batch):
            right += (model(x.float() / 255.0).argmax(1) == y).sum().item()
    print(f"CNN, {args.train} training and {args.test} test samples, batch {args.batch}, {args.epochs} "
          f"epoch(s), AdamW lr {args.lr:g}, pipelined, seed 1")
    print(f"wse.fit: {fit_s:.1f} s, test accuracy {fit_final.get('test_accuracy'):.4f} "
          f"(loss {fit_final.get('test_loss'):.5f}); PyTorch on the returned model {right / args.test:.4f}")
    print(f"wsecc + wsetrain: {t2 - t0:.1f} s (wsetrain {t2 - t1:.1f} s"
          f"{', ' + rate[-1] + ' samples/s' if rate else ''}), test accuracy "
          f"{own_final.get('test_accuracy'):.4f} (loss {own_final.get('test_loss'):.5f})")
    same = fit_final.get("test_accuracy") == own_final.get("test_accuracy")
    print("the same accuracy: both are wsetrain over the same samples in the same order" if same else
          "the accuracies differ: the two sides did not train the same way")
    print(f"run directories: {top}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
