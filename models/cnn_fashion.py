#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""cnn-fashion: conv-pool-conv-pool-dense for Fashion-MNIST, defined in
PyTorch and exported to ONNX (opset 17) for wsecc.

  models/cnn_fashion.py [-o cnn-fashion.onnx] [--seed 1]

The exported graph takes float pixels scaled to [0, 1], shape
[batch, 1, 28, 28] (batch is a dynamic axis), and gives 10 logits; the
loss (softmax cross-entropy) and the optimizer are the trainer's. The
initial weights in the file are PyTorch's default initialisation from
--seed, so a run in PyTorch and one on wse start from the same point.
"""
import argparse

import torch
from torch import nn

import wse_export


class CNN(nn.Module):
    def __init__(self, c1=32, c2=64, hidden=128):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(c2 * 7 * 7, hidden), nn.ReLU(), nn.Linear(hidden, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def export(model, path):
    x = torch.zeros(2, 1, 28, 28)
    torch.onnx.export(model, x, path, opset_version=17,
                      input_names=["pixels"], output_names=["logits"],
                      dynamic_axes={"pixels": {0: "batch"}, "logits": {0: "batch"}})
    wse_export.annotate(model, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="cnn-fashion.onnx")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = CNN().eval()
    export(model, args.output)
    print(f"cnn-fashion: {sum(p.numel() for p in model.parameters())} parameters -> {args.output}")


if __name__ == "__main__":
    main()
