#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The PyTorch side of `make bench-train`: the same fully connected model,
batch and optimizer as a wse model file, trained on the same IDX dataset on
this machine's CPU, printing one parseable summary line.

Reads the model file itself (the dense layers, batch, Adam/SGD settings) so
the two sides cannot drift apart.
"""
import argparse
import gzip
import os
import struct
import sys
import time


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] or data[1] or data[2] != 8:
        sys.exit(f"torch_mlp: {path}: not an IDX file of bytes")
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return data[4 + 4 * ndim:], dims


def find(directory, split, kind):
    for suffix in ("", ".gz"):
        path = os.path.join(directory, f"{split}-{kind}-ubyte{suffix}")
        if os.path.exists(path):
            return path
    sys.exit(f"torch_mlp: no {split}-{kind}-ubyte[.gz] in {directory}")


def parse_model(path):
    layers, batch, opt = [], 128, {"kind": "adam", "lr": 1e-3}
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] == "dense":
                layers.append((int(words[1]), int(words[2]), words[3] if len(words) > 3 else "none"))
            elif words[0] == "batch":
                batch = int(words[1])
            elif words[0] == "optimizer":
                opt["kind"] = words[1]
                for kv in words[2:]:
                    key, value = kv.split("=")
                    opt[key] = float(value)
    return layers, batch, opt


def blas_core():
    """The kernels of the OpenBLAS that torch loaded (through libblas.so.3)."""
    try:
        import ctypes
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("model")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1,
                    help="intra-op threads (default 1; set OMP_NUM_THREADS and "
                         "OPENBLAS_NUM_THREADS to the same)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    try:
        import torch
    except ImportError:
        sys.exit("torch_mlp: PyTorch is missing: apt install python3-torch")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    layers, batch, opt = parse_model(args.model)

    def tensors(split):
        images, dims = read_idx(find(args.data, split, "images-idx3"))
        labels, _ = read_idx(find(args.data, split, "labels-idx1"))
        x = torch.frombuffer(bytearray(images), dtype=torch.uint8).reshape(dims[0], -1)
        y = torch.frombuffer(bytearray(labels), dtype=torch.uint8).long()
        return x, y

    x_train, y_train = tensors("train")
    x_test, y_test = tensors("t10k")
    mods = []
    for i, (n_in, n_out, act) in enumerate(layers):
        mods.append(torch.nn.Linear(n_in, n_out))
        if act == "relu":
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods)
    if opt["kind"] == "adam":
        optim = torch.optim.Adam(model.parameters(), lr=opt["lr"],
                                 betas=(opt.get("beta1", 0.9), opt.get("beta2", 0.999)),
                                 eps=opt.get("eps", 1e-8))
    else:
        optim = torch.optim.SGD(model.parameters(), lr=opt["lr"], momentum=opt.get("momentum", 0.0))
    loss_fn = torch.nn.CrossEntropyLoss()

    n = x_train.shape[0]
    start = time.monotonic()
    for _ in range(args.epochs):
        order = torch.randperm(n)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            # The device scales bytes by 1/255 too: part of the step on both sides.
            xb = x_train[idx].float() / 255.0
            optim.zero_grad()
            loss = loss_fn(model(xb), y_train[idx])
            loss.backward()
            optim.step()
    wall = time.monotonic() - start
    with torch.no_grad():
        acc = (model(x_test.float() / 255.0).argmax(1) == y_test).float().mean().item()
    samples = n * args.epochs
    print(f"pytorch: {samples} samples in {wall:.2f}s, {samples / wall:.0f} samples/s, "
          f"test accuracy {acc:.4f}, {args.threads} threads, torch {torch.__version__}, "
          f"OpenBLAS {blas_core()}")


if __name__ == "__main__":
    main()
