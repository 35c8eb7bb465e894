#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""gpt-chars: a small GPT-style decoder over characters, defined in PyTorch
and exported to ONNX (opset 17) for wsecc.

  models/gpt_chars.py [-o gpt-chars.onnx] [--blocks 4] [--width 128]
                      [--heads 4] [--context 128] [--vocab 96] [--dropout 0.0]
                      [--seed 1]

Pre-norm blocks (LayerNorm, causal multi-head self-attention, residual;
LayerNorm, MLP 4x with GELU, residual), learned position embeddings, a
final LayerNorm and an untied output projection. The graph takes token ids
int64 [batch, context] (batch is a dynamic axis) and gives logits
[batch, context, vocab]; the loss (token-level softmax cross-entropy) and
the optimizer are the trainer's. Characters map to ids as
models/gpt_data.py says. With --dropout > 0 the model is exported in
training mode so that its Dropout nodes stay in the graph.
"""
import argparse
import math

import torch
from torch import nn
from torch.nn import functional as F

import wse_export


class SelfAttention(nn.Module):
    def __init__(self, width, heads, context, dropout):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(width // heads)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, width, heads, context, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = SelfAttention(width, heads, context, dropout)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, blocks, width, heads, context, dropout):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(1, context, width))
        nn.init.normal_(self.pos, std=0.02)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[Block(width, heads, context, dropout) for _ in range(blocks)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        x = self.drop(self.tok(idx) + self.pos)
        return self.head(self.ln(self.blocks(x)))


def export(model, path, context, dropout):
    mode = torch.onnx.TrainingMode.TRAINING if dropout > 0 else torch.onnx.TrainingMode.EVAL
    was = model.training
    model.train(dropout > 0)
    idx = torch.zeros(2, context, dtype=torch.long)
    torch.onnx.export(model, idx, path, opset_version=17, training=mode,
                      do_constant_folding=True,
                      input_names=["tokens"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}})
    wse_export.annotate(model, path)
    model.train(was)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="gpt-chars.onnx")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=96)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = GPT(args.vocab, args.blocks, args.width, args.heads, args.context, args.dropout)
    export(model, args.output, args.context, args.dropout)
    print(f"gpt-chars: {sum(p.numel() for p in model.parameters())} parameters -> {args.output}")


if __name__ == "__main__":
    main()
