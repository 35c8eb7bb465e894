# SPDX-License-Identifier: GPL-2.0-only
"""A torch DataLoader (or tensors) as the IDX files wsetrain reads
(Documentation/dataset.rst): images of any rank, bytes or big-endian
floats, and byte labels."""
import gzip
import os
import struct

import numpy as np
import torch

IDX_UBYTE, IDX_FLOAT = 0x08, 0x0D


def write_idx(path, array):
    """@array (uint8 or float32, any rank) as an IDX file."""
    a = np.ascontiguousarray(array)
    kind = IDX_UBYTE if a.dtype == np.uint8 else IDX_FLOAT
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, kind, a.ndim))
        f.write(struct.pack(f">{a.ndim}I", *a.shape))
        f.flush()
        # Straight from the array: no bytes object of the whole body.
        (a if kind == IDX_UBYTE else a.astype(">f4", copy=False)).tofile(f)


def read_idx(path):
    """An IDX file (gzipped when its name ends in .gz) of bytes or
    big-endian floats, any rank, as a numpy array of its shape."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] or data[1] or data[2] not in (IDX_UBYTE, IDX_FLOAT) \
            or len(data) < 4 + 4 * data[3]:
        raise ValueError(f"{path}: not an IDX file of bytes or floats")
    ndim, head = data[3], 4 + 4 * data[3]
    dims = struct.unpack(f">{ndim}I", data[4:head])
    dtype = np.uint8 if data[2] == IDX_UBYTE else np.dtype(">f4")
    return np.frombuffer(data, dtype=dtype, offset=head).reshape(dims)


def _in_order_tensors(loader):
    """(inputs, labels) of a DataLoader that gives a TensorDataset's two
    tensors whole, in order, untransformed; else None."""
    data = torch.utils.data
    if (not isinstance(loader, data.DataLoader) or type(loader.dataset) is not data.TensorDataset
            or len(loader.dataset.tensors) != 2 or type(loader.sampler) is not data.SequentialSampler
            or loader.drop_last or loader.collate_fn is not data.default_collate
            or type(loader.batch_sampler) is not data.BatchSampler):
        return None
    return loader.dataset.tensors


def gather(loader):
    """Every (inputs, labels) batch of @loader, joined: (x, y) as numpy.
    A DataLoader over a TensorDataset in order is its two tensors, read
    without collating each sample."""
    whole = _in_order_tensors(loader)
    xs, ys = ([whole[0].detach().cpu()], [whole[1].detach().cpu()]) if whole else ([], [])
    for batch in (() if whole else loader):
        if not isinstance(batch, (list, tuple)) or len(batch) != 2:
            raise ValueError("the data must give (inputs, labels) batches, as a "
                             "DataLoader over a TensorDataset does")
        x, y = batch
        xs.append(torch.as_tensor(x).detach().cpu())
        ys.append(torch.as_tensor(y).detach().cpu())
    x, y = (torch.cat(xs), torch.cat(ys)) if xs else (None, None)
    if x is None or len(x) == 0:
        raise ValueError("the data gave no batches")
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


class TextCorpus:
    """A character corpus on disk for a language model: wse.fit hands its
    files to wsetrain (--text), which takes the training windows and the
    validation split from them as models/gpt_data.py does (Documentation/
    dataset.rst, "Text"). Nothing is read or copied in Python.

    @paths: one file or a list of up to 16, joined in order;
    @batch_size: windows a step; @context: tokens a window, the length the
    model takes (its export example is [2, context] token ids)."""

    MAX_FILES = 16

    def __init__(self, paths, batch_size, context):
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        if not paths or len(paths) > self.MAX_FILES:
            raise ValueError(f"a text corpus is 1 to {self.MAX_FILES} files, not {len(paths)}")
        for p in paths:
            if not os.path.isfile(p):
                raise ValueError(f"text corpus file {p}: not a readable file")
        if int(batch_size) < 1 or int(context) < 1:
            raise ValueError(f"batch_size ({batch_size}) and context ({context}) must be positive")
        self.paths = [os.path.abspath(p) for p in paths]
        self.batch_size, self.context = int(batch_size), int(context)

    def example(self):
        """What the model is exported over: token ids, int64 [2, context]."""
        return torch.zeros(2, self.context, dtype=torch.long)

    def __repr__(self):
        return f"wse.TextCorpus({self.paths!r}, batch_size={self.batch_size}, context={self.context})"
