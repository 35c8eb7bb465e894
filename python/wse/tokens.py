# SPDX-License-Identifier: GPL-2.0-only
"""Token ids of a character model as the text wsetrain reads (--text,
wse/textdata.h: '\\n' is 0, printable ASCII 32..126 is 1..95), and a
corpus whose validation windows are given rows: how wse.predict hands
token ids to wsetrain --predict, which predicts for a corpus's
validation windows only."""
import numpy as np
import onnx
import torch

VOCAB = 96


def token_ids(inputs):
    """@inputs (a tensor or array of integer token ids) as int64 numpy,
    refused when it is not ids of the vocabulary."""
    t = torch.as_tensor(inputs).detach().cpu()
    if t.dtype.is_floating_point or t.dtype in (torch.bool, torch.uint8) or t.is_complex():
        raise ValueError(f"a model over tokens takes integer token ids (torch.long), not {t.dtype}")
    ids = t.to(torch.int64).numpy()
    if ids.size and (ids.min() < 0 or ids.max() >= VOCAB):
        raise ValueError(f"token ids must lie in 0..{VOCAB - 1} (the characters of "
                         f"wse/textdata.h), not {ids.min()}..{ids.max()}")
    return ids


def to_text(ids):
    """Token ids as their characters."""
    codes = np.where(ids == 0, ord("\n"), ids + 31).astype(np.uint8)
    return codes.tobytes().decode("ascii")


def from_text(chars):
    """Characters as token ids (anything outside the vocabulary is a space, as in C)."""
    codes = np.frombuffer(chars.encode("latin-1"), dtype=np.uint8).astype(np.int64)
    ids = np.where((codes >= 32) & (codes <= 126), codes - 31, 1)
    return np.where(codes == ord("\n"), 0, ids)


def windows_corpus(path, rows):
    """Writes a corpus whose validation windows are @rows ([N, context]
    ids), in order. wsetrain splits n characters at n - n/10 and takes
    the windows from there, one after another, each with the character
    after it: N*context + 1 characters after 9 times as many of filler."""
    tail = rows.size + 1
    body = to_text(np.concatenate([rows.reshape(-1), [0]]))
    with open(path, "w", encoding="ascii", newline="") as f:
        f.write("\n" * (9 * tail) + body)


def export_input(onnx_path):
    """(takes token ids, context) of an export: its first input is of
    integer type for a model over tokens, shaped [batch, context]."""
    graph = onnx.load(onnx_path, load_external_data=False).graph
    first = graph.input[0].type.tensor_type
    integer = first.elem_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
    dims = [d.dim_value for d in first.shape.dim]
    return integer, (dims[1] if integer and len(dims) == 2 else None)
