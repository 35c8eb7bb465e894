#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""reference_models: the models weight streaming exists for (a BERT
encoder, a GPT-2/GPT-3 style decoder, a LLaMA-style decoder), defined in
PyTorch and exported to ONNX (opset 17) for wsecc at any size.

  models/reference_models.py --preset bert-large -o bert-large.onnx
  models/reference_models.py --preset gpt3-175b --shapes-only -o gpt3-175b.onnx
  models/reference_models.py --arch gpt --layers 2 --width 64 --heads 4 \\
                             --seq 32 --vocab 50 -o gpt-small.onnx

Presets (their papers' shapes; --layers, --width, --heads, --seq, --vocab
and --ffn override a preset's):

  bert-large  BERT encoder, 24 layers, width 1024, 16 heads, seq 128, vocab 30522
  gpt3-xl     GPT decoder, 24 layers, width 2048, 16 heads, seq 2048, vocab 50257
  gptj-6b     GPT decoder, 28 layers, width 4096, 16 heads, seq 2048, vocab 50400
  gpt3-175b   GPT decoder, 96 layers, width 12288, 96 heads, seq 2048, vocab 50257
  llama-7b    LLaMA decoder, 32 layers, width 4096, 32 heads, seq 2048, vocab 32000,
              SwiGLU hidden 11008

Every graph takes token ids int64 [batch, seq] (batch is a dynamic axis)
and gives logits [batch, seq, vocab]: BERT's over every position (the
masked-LM head, untied), GPT's and LLaMA's the next token's. The loss and
the optimizer are the trainer's (wsecc adds the token-level cross-entropy).

Weights: a real export writes the weights in one side file, NAME.onnx.data
beside the model (ONNX external data), for every size: wsecc reads them
from there when it needs them. Models too large to hold here (GPT-J 6B,
LLaMA-7B, GPT-3 175B: 24 to 700 GB of fp32) are exported with
--shapes-only: the same module, at the same depth, is exported with
stand-in sizes (9 heads 7 wide, 10 for LLaMA's rotary halves, sequence 13,
vocabulary 11, MLP 17), then
each stand-in is rewritten to the real size in the initializers' dims and
in the graph's shape constants, the scale 1/sqrt(head width), the causal
mask and LLaMA's rotary cos and sin tables likewise. The weights carry no values: `wsecc --no-weights` compiles
such a file (an estimate, a report); nothing trains from it, and wsecc
without --no-weights says so. --shapes-only works at every size, so the
rewrite can be checked against a real export (BERT-large's estimates are
the same from both).

GPT-J's parallel blocks and rotary embeddings are not modelled: its preset
is the GPT decoder at GPT-J's shapes (6.06 B parameters against GPT-J's
6.05 B).
"""
import argparse
import math
import os
import sys

import torch
from torch import nn
from torch.nn import functional as F

PRESETS = {
    "bert-large": dict(arch="bert", layers=24, width=1024, heads=16, seq=128, vocab=30522),
    "gpt3-xl": dict(arch="gpt", layers=24, width=2048, heads=16, seq=2048, vocab=50257),
    "gptj-6b": dict(arch="gpt", layers=28, width=4096, heads=16, seq=2048, vocab=50400),
    "gpt3-175b": dict(arch="gpt", layers=96, width=12288, heads=96, seq=2048, vocab=50257),
    "llama-7b": dict(arch="llama", layers=32, width=4096, heads=32, seq=2048, vocab=32000,
                     ffn=11008),
}

# The shapes-only export's stand-in sizes: small, distinct, and unlike any
# axis, index or rank the graph's shape arithmetic uses, so that rewriting
# each to the real size is unambiguous.
SMALL = dict(heads=9, head=7, seq=13, vocab=11, ffn=17)


def heads_split(x, heads):
    """[b, t, c] -> [b, heads, t, c / heads]"""
    b, t, c = x.shape
    return x.view(b, t, heads, c // heads).transpose(1, 2)


def heads_merge(x):
    """[b, heads, t, d] -> [b, t, heads * d]"""
    b, h, t, d = x.shape
    return x.transpose(1, 2).contiguous().view(b, t, h * d)


class Attention(nn.Module):
    """Multi-head self-attention; causal with a constant triangular mask."""

    def __init__(self, width, heads, seq, causal, bias=True):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(width // heads)
        self.qkv = nn.Linear(width, 3 * width, bias=bias)
        self.out = nn.Linear(width, width, bias=bias)
        self.causal = causal
        if causal:
            self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def scores(self, q, k):
        s = (q @ k.transpose(-2, -1)) * self.scale
        if self.causal:
            t = q.shape[2]
            s = s.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        return F.softmax(s, dim=-1)

    def forward(self, x):
        c = x.shape[2]
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (heads_split(y, self.heads) for y in (q, k, v))
        return self.out(heads_merge(self.scores(q, k) @ v))


class BertLayer(nn.Module):
    """Post-norm encoder layer: x = LN(x + attn(x)); x = LN(x + mlp(x))."""

    def __init__(self, width, heads, seq, ffn):
        super().__init__()
        self.attn = Attention(width, heads, seq, causal=False)
        self.ln1 = nn.LayerNorm(width, eps=1e-12)
        self.mlp = nn.Sequential(nn.Linear(width, ffn), nn.GELU(), nn.Linear(ffn, width))
        self.ln2 = nn.LayerNorm(width, eps=1e-12)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.mlp(x))


class Bert(nn.Module):
    def __init__(self, vocab, layers, width, heads, seq, ffn):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(1, seq, width))
        nn.init.normal_(self.pos, std=0.02)
        self.ln = nn.LayerNorm(width, eps=1e-12)
        self.layers = nn.Sequential(*[BertLayer(width, heads, seq, ffn) for _ in range(layers)])
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        return self.head(self.layers(self.ln(self.tok(idx) + self.pos)))


class GptBlock(nn.Module):
    """Pre-norm decoder block, GPT-2/GPT-3 style."""

    def __init__(self, width, heads, seq, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads, seq, causal=True)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, ffn), nn.GELU(), nn.Linear(ffn, width))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self, vocab, layers, width, heads, seq, ffn):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(1, seq, width))
        nn.init.normal_(self.pos, std=0.02)
        self.blocks = nn.Sequential(*[GptBlock(width, heads, seq, ffn) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        return self.head(self.ln(self.blocks(self.tok(idx) + self.pos)))


class RMSNorm(nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(seq, head_width, base=10000.0):
    """cos and sin [1, 1, seq, head_width] of the rotary embedding (pairs (i, i + d/2))."""
    inv = 1.0 / (base ** (torch.arange(0, head_width, 2).float() / head_width))
    ang = torch.outer(torch.arange(seq).float(), inv)
    ang = torch.cat((ang, ang), dim=-1)
    return ang.cos().view(1, 1, seq, head_width), ang.sin().view(1, 1, seq, head_width)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaAttention(Attention):
    def __init__(self, width, heads, seq):
        super().__init__(width, heads, seq, causal=True, bias=False)
        cos, sin = rotary_tables(seq, width // heads)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, x):
        c = x.shape[2]
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (heads_split(y, self.heads) for y in (q, k, v))
        t = q.shape[2]
        cos, sin = self.cos[:, :, :t], self.sin[:, :, :t]
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        return self.out(heads_merge(self.scores(q, k) @ v))


class SwiGLU(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaBlock(nn.Module):
    def __init__(self, width, heads, seq, ffn):
        super().__init__()
        self.norm1 = RMSNorm(width)
        self.attn = LlamaAttention(width, heads, seq)
        self.norm2 = RMSNorm(width)
        self.mlp = SwiGLU(width, ffn)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Llama(nn.Module):
    def __init__(self, vocab, layers, width, heads, seq, ffn):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.blocks = nn.Sequential(*[LlamaBlock(width, heads, seq, ffn) for _ in range(layers)])
        self.norm = RMSNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx):
        return self.head(self.norm(self.blocks(self.tok(idx))))


ARCHS = {"bert": Bert, "gpt": Gpt, "llama": Llama}


def config(args):
    cfg = dict(PRESETS[args.preset]) if args.preset else dict(arch=args.arch or "gpt", layers=2,
                                                             width=64, heads=4, seq=32, vocab=50)
    for key in ("arch", "layers", "width", "heads", "seq", "vocab", "ffn"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if "ffn" not in cfg:
        cfg["ffn"] = 4 * cfg["width"]
    if cfg["width"] % cfg["heads"]:
        sys.exit(f"reference_models: width {cfg['width']} is not a multiple of {cfg['heads']} heads")
    return cfg


def build(cfg):
    return ARCHS[cfg["arch"]](cfg["vocab"], cfg["layers"], cfg["width"], cfg["heads"], cfg["seq"],
                              cfg["ffn"])


def parameters(cfg):
    """Parameters of the model at @cfg, counted without building it."""
    w, f, v, s, n = cfg["width"], cfg["ffn"], cfg["vocab"], cfg["seq"], cfg["layers"]
    if cfg["arch"] == "llama":
        return v * w + n * (4 * w * w + 3 * w * f + 2 * w) + w + w * v
    per_layer = 4 * w * w + 4 * w + 2 * w * f + f + w + 4 * w
    return v * w + s * w + 2 * w + n * per_layer + w * v + v


def export_onnx(model, path, seq):
    import onnx

    model.eval()
    idx = torch.zeros(2, seq, dtype=torch.long)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, idx, tmp, opset_version=17, do_constant_folding=True,
                          input_names=["tokens"], output_names=["logits"],
                          dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}})
    m = onnx.load(tmp)
    os.unlink(tmp)
    data = os.path.basename(path) + ".data"
    if os.path.exists(os.path.join(os.path.dirname(path) or ".", data)):
        os.unlink(os.path.join(os.path.dirname(path) or ".", data))
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)


def regenerated_mask(a, seq):
    """@a, a triangular mask over the stand-in sequence, at the real one; None if it is not one."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] != SMALL["seq"]:
        return None
    import numpy as np
    ones = np.ones(a.shape[-2:], dtype=a.dtype)
    for tri in (np.tril, np.triu):
        for k in (-1, 0, 1):
            if np.array_equal(a, np.broadcast_to(tri(ones, k), a.shape)):
                full = tri(np.ones((seq, seq), dtype=a.dtype), k)
                return full.reshape(a.shape[:-2] + (seq, seq))
    return None


def regenerated_rotary(a, small_head, seq, head):
    """@a, a rotary cos or sin table at the stand-in sizes, at the real ones; None if it is not one."""
    import numpy as np
    if a.shape != (1, 1, SMALL["seq"], small_head):
        return None
    for k, table in enumerate(rotary_tables(SMALL["seq"], small_head)):
        if np.allclose(a, table.numpy(), atol=1e-6):
            return rotary_tables(seq, head)[k].numpy()
    return None


def shapes_only(cfg, path):
    """Export at stand-in sizes, then rewrite them to @cfg's (see the module's doc)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    head = cfg["width"] // cfg["heads"]
    # Rotary embeddings rotate half a head: the stand-in head is even there.
    small_head = SMALL["head"] + 3 if cfg["arch"] == "llama" else SMALL["head"]
    small = dict(cfg, heads=SMALL["heads"], width=SMALL["heads"] * small_head,
                 seq=SMALL["seq"], vocab=SMALL["vocab"], ffn=SMALL["ffn"])
    w = small["width"]
    big = {SMALL["heads"]: cfg["heads"], small_head: head, SMALL["seq"]: cfg["seq"],
           SMALL["vocab"]: cfg["vocab"], SMALL["ffn"]: cfg["ffn"], w: cfg["width"],
           3 * w: 3 * cfg["width"]}
    if cfg["arch"] == "llama":
        big[small_head // 2] = head // 2
    if len(big) != 7 + (cfg["arch"] == "llama"):
        sys.exit("reference_models: the stand-in sizes collide")
    torch.manual_seed(1)
    model = build(small)
    model.eval()
    idx = torch.zeros(2, small["seq"], dtype=torch.long)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, idx, tmp, opset_version=17, do_constant_folding=True,
                          input_names=["tokens"], output_names=["logits"],
                          dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}})
    m = onnx.load(tmp)
    os.unlink(tmp)
    g = m.graph
    scale_small = 1.0 / math.sqrt(small_head)

    def rewrite(t):
        """An initializer or Constant value at the real sizes."""
        dims = [big.get(d, d) for d in t.dims]
        a = numpy_helper.to_array(t)
        if t.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
            if a.size:
                a = np.vectorize(lambda v: big.get(int(v), int(v)), otypes=[a.dtype])(a)
            t.CopyFrom(numpy_helper.from_array(a, t.name))
        elif list(t.dims) == dims:
            if t.data_type == onnx.TensorProto.FLOAT and a.size == 1 and \
                    np.isclose(float(a.reshape(-1)[0]), scale_small):
                t.CopyFrom(numpy_helper.from_array(
                    np.full(a.shape, 1.0 / math.sqrt(head), np.float32), t.name))
        elif regenerated_mask(a, cfg["seq"]) is not None:
            t.CopyFrom(numpy_helper.from_array(regenerated_mask(a, cfg["seq"]), t.name))
        elif cfg["arch"] == "llama" and \
                regenerated_rotary(a, small_head, cfg["seq"], head) is not None:
            t.CopyFrom(numpy_helper.from_array(
                regenerated_rotary(a, small_head, cfg["seq"], head), t.name))
        else:
            # A weight at the real size: its dims, no values.
            for field in ("raw_data", "float_data", "int32_data", "int64_data"):
                t.ClearField(field)
            del t.dims[:]
            t.dims.extend(dims)

    for t in g.initializer:
        rewrite(t)
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    rewrite(a.t)
    for vi in list(g.output) + list(g.input):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                d.dim_value = big.get(d.dim_value, d.dim_value)
    del g.value_info[:]
    onnx.save_model(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--arch", choices=sorted(ARCHS))
    ap.add_argument("--layers", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--seq", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--ffn", type=int, help="MLP hidden width (default 4 x width)")
    ap.add_argument("--shapes-only", action="store_true",
                    help="dims without values, for wsecc --no-weights (any size)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    cfg = config(args)
    n = parameters(cfg)
    if args.shapes_only:
        shapes_only(cfg, args.output)
        print(f"reference_models: {cfg['arch']} {n} parameters, shapes only -> {args.output}")
        return
    torch.manual_seed(args.seed)
    model = build(cfg)
    export_onnx(model, args.output, cfg["seq"])
    print(f"reference_models: {cfg['arch']} {sum(p.numel() for p in model.parameters())} parameters"
          f" -> {args.output} (weights in {args.output}.data)")


if __name__ == "__main__":
    main()
