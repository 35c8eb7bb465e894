# SPDX-License-Identifier: GPL-2.0-only
"""The character data of gpt-chars, shared by the PyTorch scripts and
mirrored by libwsedata's wse/textdata.h (which wsetrain, wse-trainhost and
wse-graphtrain take their windows from):

  - vocabulary of 96: '\\n' is 0, printable ASCII 32..126 is 1..95, any
    other byte is a space;
  - the corpus is the files' bytes concatenated; the last tenth is the
    validation split;
  - step t's batch takes windows at offsets splitmix64() % (split - context
    - 1), drawn in order from one generator seeded with the run's seed; the
    label of each position is the next character;
  - validation takes every window of its split once, one after another
    from its start.
"""

VOCAB = 96
MASK = (1 << 64) - 1


def char_ids(data):
    out = []
    for c in data:
        if c == 10:
            out.append(0)
        elif 32 <= c <= 126:
            out.append(c - 31)
        else:
            out.append(32 - 31)
    return out


def read_corpus(paths):
    data = b""
    for p in paths:
        with open(p, "rb") as f:
            data += f.read()
    ids = char_ids(data)
    return ids, len(ids) - len(ids) // 10


class SplitMix64:
    """The engine's generator (lib/engine/rng.c)."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def batch_offsets(rng, batch, split, context):
    return [rng.next() % (split - context - 1) for _ in range(batch)]


def val_offsets(split, n, context):
    """wse_text_val_offset(): every window of the validation split once."""
    return [split + i * context for i in range((n - split - 1) // context)]


def lr_at(lr, t, warmup, total, min_lr):
    """engine_lr_at(): linear warm-up, then cosine decay (t is 1-based)."""
    import math
    if warmup <= 0:
        return lr
    if t <= warmup:
        return lr * t / warmup
    if t >= total:
        return min_lr
    p = (t - warmup) / (total - warmup)
    return min_lr + (lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * p))
