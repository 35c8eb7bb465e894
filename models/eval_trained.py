#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Evaluate weights trained on wse in PyTorch, as wsetrain --eval does on
the device: load a wsetrain checkpoint or the model `wsetrain --export`
wrote into the project's PyTorch module by name (models/wse_checkpoint.py)
and print the test loss and accuracy.

  models/eval_trained.py cnn WEIGHTS [--data DIR]
  models/eval_trained.py mlp WEIGHTS --model models/fc-mnist [--data DIR]
  models/eval_trained.py gpt WEIGHTS [--text FILE ...] [--blocks 4] [--width 128]
                         [--heads 4] [--context 128] [--batch 16]

cnn: models/cnn_fashion.py's CNN on the Fashion-MNIST test set (pixels
/ 255), the mean cross-entropy and the share classified right. mlp: a
text model's layers as the nn.Sequential of Linear and ReLU that
tools/bench-train/torch_mlp.py builds (the names a layer program gives its
W and b), on the same test set. gpt:
models/gpt_chars.py's GPT on every window of the validation split
(models/gpt_data.py), the mean over windows of each one's mean token loss,
and the share of tokens predicted. Both are what wsetrain --eval prints
for the same weights ("Eval ... Loss=..., Accuracy=..."). Needs
python3-torch (and python3-onnx for an .onnx).
"""
import argparse
import gzip
import os
import struct
import sys

import numpy as np
import torch
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wse_checkpoint  # noqa: E402

FORTUNES = ["/usr/share/games/fortunes/fortunes", "/usr/share/games/fortunes/literature",
            "/usr/share/games/fortunes/riddles"]


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(data, stem):
    for suffix in ("", ".gz"):
        path = os.path.join(data, stem + suffix)
        if os.path.exists(path):
            return path
    raise SystemExit(f"eval_trained: no {stem}[.gz] in {data}")


def mlp(path):
    """The text model's dense layers as torch_mlp.py builds them."""
    mods = []
    with open(path) as f:
        for line in f:
            words = line.split("#")[0].split()
            if words[:1] == ["dense"]:
                mods.append(torch.nn.Linear(int(words[1]), int(words[2])))
                if words[3:4] == ["relu"]:
                    mods.append(torch.nn.ReLU())
    if not mods:
        raise SystemExit(f"eval_trained: {path} has no dense layers")
    return torch.nn.Sequential(*mods)


def eval_images(args):
    if args.model == "mlp":
        if not args.layers:
            raise SystemExit("eval_trained: mlp needs --model FILE, the text model")
        model = mlp(args.layers).eval()
    else:
        import cnn_fashion
        model = cnn_fashion.CNN().eval()
    loaded = wse_checkpoint.load_into(model, args.weights)
    x = read_idx(find(args.data, "t10k-images-idx3-ubyte"))
    y = read_idx(find(args.data, "t10k-labels-idx1-ubyte"))
    total, right = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(x), 500):
            xb = torch.from_numpy(x[i:i + 500].astype(np.float32)) / 255.0
            xb = xb.reshape(-1, 784) if args.model == "mlp" else xb.reshape(-1, 1, 28, 28)
            yb = torch.from_numpy(y[i:i + 500].astype(np.int64))
            out = model(xb)
            total += F.cross_entropy(out, yb, reduction="sum").item()
            right += (out.argmax(1) == yb).sum().item()
    return loaded, total / len(x), right / len(x), len(x)


def eval_gpt(args):
    import gpt_chars
    import gpt_data

    model = gpt_chars.GPT(gpt_data.VOCAB, args.blocks, args.width, args.heads, args.context,
                          0.0).eval()
    loaded = wse_checkpoint.load_into(model, args.weights)
    ids, split = gpt_data.read_corpus(args.text or FORTUNES)
    val = gpt_data.val_offsets(split, len(ids), args.context)
    total, right = 0.0, 0.0
    with torch.no_grad():
        for i in range(0, len(val), args.batch):
            offs = val[i:i + args.batch]
            x = torch.tensor([ids[o:o + args.context] for o in offs], dtype=torch.long)
            y = torch.tensor([ids[o + 1:o + args.context + 1] for o in offs], dtype=torch.long)
            out = model(x)
            total += F.cross_entropy(out.reshape(-1, gpt_data.VOCAB), y.reshape(-1),
                                     reduction="sum").item() / args.context
            right += (out.argmax(-1) == y).sum().item() / args.context
    return loaded, total / len(val), right / len(val), len(val)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=["cnn", "mlp", "gpt"])
    ap.add_argument("weights", help="a wsetrain checkpoint, or an .onnx from wsetrain --export")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--model", dest="layers", help="mlp: the text model file")
    ap.add_argument("--text", action="append")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    torch.set_num_threads(1)
    loaded, loss, acc, n = (eval_gpt if args.model == "gpt" else eval_images)(args)
    print(f"{args.weights}: {len(loaded)} tensors loaded by name; PyTorch eval over {n} samples: "
          f"loss {loss:.9f} accuracy {acc:.9f}")


if __name__ == "__main__":
    main()
