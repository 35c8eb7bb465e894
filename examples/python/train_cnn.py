#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Train models/cnn_fashion.py's CNN on Fashion-MNIST on a wse device
without leaving Python, then check the trained module in plain PyTorch.

  examples/python/train_cnn.py [--train N] [--test N] [--epochs N] [--batch N]
                               [--systems N] [--device N] [--model-dir DIR]

Where the driver is: on a machine after `make install` (the wse package
then imports from Debian's path), or in the guest:

  cp examples/python/train_cnn.py runs/
  tools/wsevm --host-usr --runs runs -- python3 runs/train_cnn.py --train 4096 --test 1000

(the guest's working directory /wse is laid out like the repository and
has runs/ shared; with --appliance 2 and --systems 2 it trains by weight
streaming on an appliance of two systems).
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# cnn_fashion from the repository's models/ (or the working directory's:
# the guest's /wse is laid out like the repository); wse from python/
# when it is not installed.
sys.path[:0] = [os.path.join(TOP, "models"), os.path.join(os.getcwd(), "models"),
                os.path.join(TOP, "python")]
import cnn_fashion  # noqa: E402
import wse  # noqa: E402
from wse.data import read_idx  # noqa: E402

FMNIST = "/usr/share/datasets/fashion-mnist"


def loader(split, count, batch, shuffle):
    x = read_idx(f"{FMNIST}/{split}-images-idx3-ubyte.gz")[:count]
    y = read_idx(f"{FMNIST}/{split}-labels-idx1-ubyte.gz")[:count]
    ds = torch.utils.data.TensorDataset(torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1),
                                        torch.from_numpy(y.astype(np.int64)))
    return torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=shuffle)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", type=int, default=60000)
    ap.add_argument("--test", type=int, default=10000)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--systems", type=int)
    ap.add_argument("--device", type=int, help="the device's index (default: the first whose link is up)")
    ap.add_argument("--model-dir")
    args = ap.parse_args()

    for d in wse.devices():
        parts = f", appliance of {d['appliance']['systems']} systems" if "appliance" in d else ""
        print(f"device {d['index']}: {d['link']}, wafer {d['wafer_width']}x{d['wafer_height']}{parts}")

    torch.manual_seed(1)
    model = cnn_fashion.CNN()
    train = loader("train", args.train, args.batch, True)
    test = loader("t10k", args.test, args.batch, False)
    steps = args.epochs * len(train)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    t0 = time.monotonic()
    run = wse.fit(model, loss="cross_entropy", optimizer=opt, scheduler=sched, data=train,
                  eval_data=test, epochs=args.epochs, systems=args.systems,
                  execution_mode="auto", model_dir=args.model_dir, device=args.device)
    print(f"wse.fit: {time.monotonic() - t0:.1f} s, run directory {run.dir}")

    model.eval()
    right = 0
    with torch.no_grad():
        for x, y in test:
            right += (model(x).argmax(1) == y).sum().item()
    print(f"test accuracy: device {run.final['test_accuracy']:.4f}, "
          f"PyTorch on the returned model {right / len(test.dataset):.4f}")


if __name__ == "__main__":
    main()
