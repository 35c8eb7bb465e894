# SPDX-License-Identifier: GPL-2.0-only
"""A torch DataLoader (or tensors) as the IDX files wsetrain reads
(Documentation/dataset.rst): images of any rank, bytes or big-endian
floats, and byte labels."""
import os
import struct

import numpy as np
import torch

IDX_UBYTE, IDX_FLOAT = 0x08, 0x0D


def write_idx(path, array):
    """@array (uint8 or float32, any rank) as an IDX file."""
    a = np.ascontiguousarray(array)
    if a.dtype == np.uint8:
        kind, body = IDX_UBYTE, a.tobytes()
    else:
        kind, body = IDX_FLOAT, a.astype(">f4").tobytes()
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, kind, a.ndim))
        f.write(struct.pack(f">{a.ndim}I", *a.shape))
        f.write(body)


def gather(loader):
    """Every (inputs, labels) batch of @loader, joined: (x, y) as numpy."""
    xs, ys = [], []
    for batch in loader:
        if not isinstance(batch, (list, tuple)) or len(batch) != 2:
            raise ValueError("the data must give (inputs, labels) batches, as a "
                             "DataLoader over a TensorDataset does")
        x, y = batch
        xs.append(torch.as_tensor(x).detach().cpu())
        ys.append(torch.as_tensor(y).detach().cpu())
    if not xs:
        raise ValueError("the data gave no batches")
    x, y = torch.cat(xs), torch.cat(ys)
    if y.dtype.is_floating_point or y.dim() != 1:
        raise ValueError(f"the labels must be class indices (a 1-D integer tensor), not {y.dtype} of "
                         f"shape {list(y.shape)}")
    if y.min() < 0 or y.max() > 255:
        raise ValueError("class indices must lie in 0..255 (IDX labels are bytes)")
    x = x.numpy() if x.dtype == torch.uint8 else x.float().numpy()
    return x, y.to(torch.uint8).numpy()


def element(x):
    """wsecc's --input for samples @x: u8 for bytes, f32 for floats."""
    return "u8" if x.dtype == np.uint8 else "f32"


def images_name(split, x):
    return f"{split}-images-idx{x.ndim}-{'ubyte' if x.dtype == np.uint8 else 'float'}"


def write_split(directory, split, x, y):
    """@x and @y as SPLIT-images-idxR-{ubyte,float} and SPLIT-labels-idx1-ubyte."""
    os.makedirs(directory, exist_ok=True)
    write_idx(os.path.join(directory, images_name(split, x)), x)
    if y is not None:
        write_idx(os.path.join(directory, f"{split}-labels-idx1-ubyte"), y)
