#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bert-mlm: a small BERT-style encoder over characters, trained by masked
language modelling, defined in PyTorch and exported to ONNX (opset 17) for
wsecc.

  models/bert_mlm.py [-o bert-mlm.onnx] [--layers 2] [--width 64]
                     [--heads 4] [--context 64] [--seed 1]

Token and learned position embeddings, a LayerNorm, post-norm encoder
layers (bidirectional multi-head self-attention with a key padding mask,
residual, LayerNorm; MLP 4x with GELU, residual, LayerNorm) and an untied
masked-LM head (Linear, GELU, LayerNorm, Linear to the vocabulary). The
graph takes two inputs: token ids int64 [batch, context] and the padding
mask float [batch, context] (1 for a real token, 0 for padding), which the
model makes additive, as BERT does: (1 - mask) * -10000 added to every
head's scores for the padded keys. It gives logits [batch, context,
VOCAB]. The vocabulary is models/gpt_data.py's 96 characters and two
more: MASK_ID, the [MASK] token, and PAD_ID, padding. The masked-LM loss
is the token cross-entropy over the masked positions only: every other
label is IGNORE (-100, F.cross_entropy's ignore_index).

models/compare_bert.py trains it here and on wse (wsecc compiles it into
a program fed two inputs, the tokens and the mask; wse-trainhost or
wsetrain feeds it masked-LM batches) and compares.
"""
import argparse
import math

import torch
from torch import nn
from torch.nn import functional as F

import gpt_data
import wse_export

MASK_ID = gpt_data.VOCAB
PAD_ID = gpt_data.VOCAB + 1
VOCAB = gpt_data.VOCAB + 2
IGNORE = -100


class SelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(width // heads)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x, key_mask):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale + key_mask
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Layer(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.attn = SelfAttention(width, heads)
        self.ln1 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.ln2 = nn.LayerNorm(width)

    def forward(self, x, key_mask):
        x = self.ln1(x + self.attn(x, key_mask))
        return self.ln2(x + self.mlp(x))


class BertMLM(nn.Module):
    def __init__(self, vocab, layers, width, heads, context):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(1, context, width))
        nn.init.normal_(self.pos, std=0.02)
        self.ln = nn.LayerNorm(width)
        self.layers = nn.ModuleList([Layer(width, heads) for _ in range(layers)])
        self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width),
                                  nn.Linear(width, vocab))

    def forward(self, idx, mask):
        key_mask = (1.0 - mask[:, None, None, :]) * -10000.0
        x = self.ln(self.tok(idx) + self.pos)
        for layer in self.layers:
            x = layer(x, key_mask)
        return self.head(x)


def export(model, path, context):
    was = model.training
    model.eval()
    idx = torch.zeros(2, context, dtype=torch.long)
    mask = torch.ones(2, context)
    torch.onnx.export(model, (idx, mask), path, opset_version=17, do_constant_folding=True,
                      input_names=["tokens", "attention_mask"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "batch"}, "attention_mask": {0: "batch"},
                                    "logits": {0: "batch"}})
    wse_export.annotate(model, path)
    model.train(was)


def mlm_sample(ids, offset, context, rng):
    """One masked-LM sample from the window at @offset, drawing from @rng:
    first the padding (0 .. context / 4 positions at the end), then per
    real position whether it is masked (15%) and, if so, as BERT does, by
    [MASK] (80%), a random character (10%) or itself (10%). Returns the
    input ids, the padding mask and the labels (IGNORE where not masked)."""
    pad = rng.next() % (context // 4 + 1)
    x, m, y = [], [], []
    for i in range(context):
        if i >= context - pad:
            x.append(PAD_ID)
            m.append(0.0)
            y.append(IGNORE)
            continue
        c = ids[offset + i]
        u = rng.next()
        m.append(1.0)
        if u % 100 >= 15:
            x.append(c)
            y.append(IGNORE)
            continue
        y.append(c)
        kind = (u >> 32) % 10
        x.append(MASK_ID if kind < 8 else (u >> 40) % gpt_data.VOCAB if kind == 8 else c)
    return x, m, y


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="bert-mlm.onnx")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = BertMLM(VOCAB, args.layers, args.width, args.heads, args.context)
    export(model, args.output, args.context)
    print(f"bert-mlm: {sum(p.numel() for p in model.parameters())} parameters -> {args.output}")


if __name__ == "__main__":
    main()
