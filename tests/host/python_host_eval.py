#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""After the guest tests, on the host: the modules wse.fit returned in the
guest (tests/guest/python_fit_test.py left their state_dicts and what the
device measured in RUNS/python-fit/), evaluated in plain PyTorch here, on
the host, with nothing of wse:

- the CNN of models/cnn_fashion.py on the same Fashion-MNIST test samples
  scores the device's test accuracy to 1e-4;
- the GPT of models/gpt_chars.py trained by weight streaming on two
  systems gives the device's validation loss and token accuracy to 1e-4
  on every validation window of the corpus (models/gpt_data.py).

RUNS is $WSE_RUN_DIRS (tools/check sets it to the guest's --runs).
"""
import json
import os
import sys

import numpy as np
import torch
from torch.nn import functional as F

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "models"), os.path.join(TOP, "python")]
import cnn_fashion  # noqa: E402
import gpt_chars  # noqa: E402
import gpt_data  # noqa: E402
from wse.data import read_idx  # noqa: E402

FMNIST = "/usr/share/datasets/fashion-mnist"
n = failed = skipped = 0


def check(name, ok, why=""):
    global n, failed
    n += 1
    print(f"{'ok' if ok else 'not ok'} {n} {name}" + ("" if ok else "\n#   " + str(why)), flush=True)
    failed += not ok


def skip(name, why):
    global n, skipped
    n += 1
    skipped += 1
    print(f"ok {n} {name} # SKIP {why}")


def finish():
    print(f"# Totals: pass:{n - failed - skipped} fail:{failed} xfail:0 xpass:0 skip:{skipped} error:0")
    sys.exit(1 if failed else 0)


def load(where, name):
    with open(os.path.join(where, f"{name}.json")) as f:
        result = json.load(f)
    state = torch.load(os.path.join(where, f"{name}.pt"), map_location="cpu", weights_only=True)
    return result, state


def cnn(where):
    result, state = load(where, "cnn")
    model = cnn_fashion.CNN()
    model.load_state_dict(state)
    model.eval()
    count = result["test_samples"]
    x = torch.from_numpy(read_idx(f"{FMNIST}/t10k-images-idx3-ubyte.gz")[:count].astype(np.float32) / 255.0)
    y = torch.from_numpy(read_idx(f"{FMNIST}/t10k-labels-idx1-ubyte.gz")[:count].astype(np.int64))
    with torch.no_grad():
        right = sum((model(x[i:i + 256].unsqueeze(1)).argmax(1) == y[i:i + 256]).sum().item()
                    for i in range(0, count, 256))
    acc = right / count
    print(f"# CNN: device test accuracy {result['test_accuracy']:.6f}, PyTorch on the host {acc:.6f} "
          f"({count} samples)")
    check("the CNN wse.fit returned in the guest, in PyTorch on the host, scores the device's "
          "test accuracy to 1e-4", abs(acc - result["test_accuracy"]) <= 1e-4, f"{acc} vs {result}")


def gpt(where):
    result, state = load(where, "gpt")
    model = gpt_chars.GPT(gpt_data.VOCAB, result["blocks"], result["width"], result["heads"],
                          result["context"], 0.0)
    model.load_state_dict(state)
    model.eval()
    ctx = result["context"]
    ids, split = gpt_data.read_corpus(result["text"])
    val = gpt_data.val_offsets(split, len(ids), ctx)
    loss = right = 0.0
    with torch.no_grad():
        for i in range(0, len(val), 64):
            x = torch.tensor([ids[o:o + ctx] for o in val[i:i + 64]], dtype=torch.long)
            y = torch.tensor([ids[o + 1:o + ctx + 1] for o in val[i:i + 64]], dtype=torch.long)
            out = model(x)
            loss += F.cross_entropy(out.reshape(-1, gpt_data.VOCAB), y.reshape(-1), reduction="sum").item() / ctx
            right += (out.argmax(-1) == y).sum().item()
    loss /= len(val)
    acc = right / (len(val) * ctx)
    print(f"# GPT: device validation loss {result['test_loss']:.6f} accuracy {result['test_accuracy']:.6f}; "
          f"PyTorch on the host {loss:.6f} {acc:.6f} ({len(val)} windows)")
    check("the GPT trained on two systems, in PyTorch on the host, gives the device's validation "
          "loss to 1e-4", abs(loss - result["test_loss"]) <= 1e-4, f"{loss} vs {result['test_loss']}")
    check("... and its token accuracy to 1e-4", abs(acc - result["test_accuracy"]) <= 1e-4,
          f"{acc} vs {result['test_accuracy']}")


def main():
    runs = os.environ.get("WSE_RUN_DIRS")
    if not runs:
        skip("the modules wse.fit returned in the guest", "WSE_RUN_DIRS is not set (tools/check sets it "
             "to the guest's runs directory)")
        finish()
    where = os.path.join(runs, "python-fit")
    for name, checker, test in (("cnn", cnn, "python_fit_test"), ("gpt", gpt, "python_fit_gpt_test")):
        if not os.path.exists(os.path.join(where, f"{name}.json")):
            check(f"the guest's {test} left {name}.json and {name}.pt in {where}", False,
                  "it did not run, skipped (no torch or no appliance in the guest), or failed before")
            continue
        checker(where)
    finish()


if __name__ == "__main__":
    main()
