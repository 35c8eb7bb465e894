#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""models/wse_checkpoint.py against real PyTorch modules (run by
wse_checkpoint_test.sh; needs python3-torch and python3-onnx):

- a GPT exported by models/gpt_chars.py (whose export helper records the
  state_dict names: Linear weights folded into transposed MatMul
  initializers, merged LayerNorm parameters as Identity copies) loads by
  name into a fresh GPT of other initial weights, which then holds the
  exported model's every parameter exactly;
- a shape that differs, a tensor the model lacks and a parameter the file
  lacks are each refused, naming the tensor.
"""
import os
import sys
import tempfile

import torch

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "models"))
import cnn_fashion  # noqa: E402
import gpt_chars  # noqa: E402
import wse_checkpoint  # noqa: E402

failed = 0


def check(name, ok, why=""):
    global failed
    print(("ok " if ok else "not ok ") + name + ("" if ok else "\n#   " + why))
    failed += not ok


def refused(name, model, path, words):
    try:
        wse_checkpoint.load_into(model, path)
    except ValueError as e:
        check(name, all(w in str(e) for w in words), f"message: {e}")
        return
    check(name, False, "accepted")


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "gpt.onnx")
    torch.manual_seed(3)
    src = gpt_chars.GPT(96, 2, 16, 2, 8, 0.0).eval()
    gpt_chars.export(src, path, 8, 0.0)
    torch.manual_seed(4)
    dst = gpt_chars.GPT(96, 2, 16, 2, 8, 0.0).eval()
    loaded = wse_checkpoint.load_into(dst, path)
    same = all(torch.equal(p, dict(dst.named_parameters())[k]) for k, p in src.named_parameters())
    check("an exported GPT loads by name, every parameter exact", same)
    check("the transposed Linear weights are among them",
          "blocks.1.attn.qkv.weight" in loaded and "head.weight" in loaded, str(loaded))
    refused("a shape that differs is refused, naming the tensor",
            gpt_chars.GPT(96, 2, 32, 2, 8, 0.0), path, ["'pos' is [1, 8, 16] there, [1, 8, 32]", "shape mismatch"])
    refused("a tensor the model lacks is refused, naming it",
            gpt_chars.GPT(96, 1, 16, 2, 8, 0.0), path, ["blocks.1.", "extra name"])
    refused("a parameter the file lacks is refused, naming it",
            gpt_chars.GPT(96, 3, 16, 2, 8, 0.0), path, ["'blocks.2.", "missing name"])
    refused("an export without recorded names cannot give the folded weights",
            gpt_chars.GPT(96, 1, 16, 2, 8, 0.0),
            os.path.join(TOP, "tests/corpus/onnx/gpt-tiny.onnx"),
            ["'blocks.0.attn.qkv.weight'", "missing name", "wse_export.py"])
    cnn = cnn_fashion.CNN(2, 4, 8)
    loaded = wse_checkpoint.load_into(cnn, os.path.join(TOP, "tests/corpus/onnx/cnn-tiny.onnx"))
    check("the CNN export, named as its state_dict, loads without recorded names",
          len(loaded) == 8, str(loaded))

sys.exit(1 if failed else 0)
