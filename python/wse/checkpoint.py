# SPDX-License-Identifier: GPL-2.0-only
"""wse.checkpoint: trained weights from wse back into a PyTorch module, and
a module's weights into a wsetrain checkpoint.

  from wse import checkpoint
  checkpoint.load_into(model, "checkpoint_300.ckpt")   # or "trained.onnx"
  checkpoint.store_from(model, "checkpoint_300.ckpt", "mine.ckpt")

load_into() reads a wsetrain checkpoint (Documentation/wsetrain.rst,
"Checkpoints": version 2 carries each parameter's name) or an ONNX model
(what `wsetrain MODEL.onnx --export CKPT -o trained.onnx` writes) and
copies its parameters into model.state_dict() by name. A parameter of the
model that the file does not give, a tensor of the file that the model
does not have, or a shape that differs is refused, naming the tensor.
Buffers the file does not give keep their values (a checkpoint holds only
what was trained). Names are the state_dict names the export recorded
(models/wse_export.py), else the ONNX names, which torch.onnx.export takes
from the state_dict where it did not fold anything.

store_from() is load_into() the other way: it copies a checkpoint whose
program the model was compiled into, with the model's parameters in
place of the checkpoint's weights (by the same names, transposed where the
names say so), and the CRC32Cs made anew. Everything else of the file
(step, optimizer state, fingerprints) stays, so wsetrain --eval,
--predict, --init-from and --resume read it as one of its own.

Needs numpy and torch; ONNX files also onnx. No other part of the project.
"""
import struct

import numpy as np
import torch

CKPT_MAGIC = b"WSECKPT\0"
# The header (struct ckpt_header, tools/wsetrain/checkpoint.c) and a name
# record (the PNM_* offsets, lib/wsep/wsep_le.h), little-endian, packed as
# the C lays them out. python_test compiles these against the C (layout()).
CKPT_FIELDS = (("magic", "8s"), ("version", "I"), ("header_bytes", "I"), ("model", "32s"),
               ("fingerprint", "Q"), ("mode", "I"), ("systems", "I"), ("step", "Q"),
               ("epoch", "I"), ("position", "I"), ("shuffle_seed", "Q"), ("floats", "Q"),
               ("state_arrays", "I"), ("reserved0", "I"), ("payload_crc", "I"), ("batch", "I"),
               ("shape_fingerprint", "Q"), ("lr", "d"), ("names", "I"), ("names_crc", "I"),
               ("reserved", "20s"), ("header_crc", "I"))
NAME_FIELDS = (("offset", "Q"), ("elems", "Q"), ("rank", "I"), ("flags", "I"), ("dims", "6Q"),
               ("name", "128s"), ("torch_name", "128s"))
CKPT_HEADER = struct.Struct("<" + "".join(f for _, f in CKPT_FIELDS))    # 160 bytes
NAME_RECORD = struct.Struct("<" + "".join(f for _, f in NAME_FIELDS))    # 328 bytes
TRANSPOSED = 0x1                # WSEP_PARAM_TORCH_TRANSPOSED
ONNX_KEY = "wse.parameters"


def layout(fields):
    """(name, offset, size) of each of @fields (CKPT_FIELDS, NAME_FIELDS)."""
    out, at = [], 0
    for name, fmt in fields:
        size = struct.calcsize("<" + fmt)
        out.append((name, at, size))
        at += size
    return out


def header(data):
    """The fields of the checkpoint header at the start of @data, by name."""
    return dict(zip((name for name, _ in CKPT_FIELDS), CKPT_HEADER.unpack_from(data)))


PAYLOAD_CRC_AT = dict((n, at) for n, at, _ in layout(CKPT_FIELDS))["payload_crc"]
HEADER_CRC_AT = dict((n, at) for n, at, _ in layout(CKPT_FIELDS))["header_crc"]


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()
_NP_TABLE = np.array(_TABLE, dtype=np.uint32)


def _registers(rows, reg):
    """The CRC register of each row of the uint8 matrix @rows, run from
    the registers @reg (no inversions): the rows side by side in numpy."""
    for j in range(rows.shape[1]):
        reg = _NP_TABLE[(reg ^ rows[:, j]) & 0xFF] ^ (reg >> np.uint32(8))
    return reg


def _zero_run_tables(width):
    """Z, the run of @width zero bytes (linear in the register), as four
    tables of its bytes: Z(r) = T0[r & 255] ^ T1[r >> 8 & 255] ^ ..."""
    columns = _registers(np.zeros((32, width), dtype=np.uint8), np.uint32(1) << np.arange(32, dtype=np.uint32))
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1       # [value, bit]
    tables = []
    for k in range(4):
        picked = np.where(bits.astype(bool), columns[8 * k:8 * k + 8][None, :], np.uint32(0))
        tables.append(np.bitwise_xor.reduce(picked, axis=1).tolist())
    return tables


def crc32c(data, crc=0):
    """CRC32C as the project computes it (lib/crc32c).

    A checkpoint is megabytes, too many for a byte-at-a-time loop in
    Python: the data is cut into chunks of 256 bytes, all chunks run side
    by side from a register of 0 (numpy), and the results are chained. A
    chunk run from a register r gives Z(r) ^ C, where C is its result
    from 0 and Z the run of 256 zero bytes, which is linear in r."""
    data = memoryview(data).cast("B")
    reg = crc ^ 0xFFFFFFFF
    count = len(data) // _CHUNK
    if count >= 16:
        rows = np.frombuffer(data, dtype=np.uint8, count=count * _CHUNK).reshape(count, _CHUNK)
        t0, t1, t2, t3 = _ZERO_RUN
        for c in _registers(rows, np.zeros(count, dtype=np.uint32)).tolist():
            reg = t0[reg & 0xFF] ^ t1[(reg >> 8) & 0xFF] ^ t2[(reg >> 16) & 0xFF] ^ t3[reg >> 24] ^ c
        data = data[count * _CHUNK:]
    for b in data:
        reg = _TABLE[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg ^ 0xFFFFFFFF


_CHUNK = 256
_ZERO_RUN = _zero_run_tables(_CHUNK)


class Tensor:
    """One named tensor of a file: its ONNX name, state_dict name and values."""

    def __init__(self, name, torch_name, transposed, values):
        self.name, self.torch_name = name, torch_name
        self.transposed, self.values = transposed, values

    @property
    def key(self):
        return self.torch_name or self.name

    def describe(self):
        if self.torch_name and self.torch_name != self.name:
            return f"'{self.torch_name}' (ONNX '{self.name}')"
        return f"'{self.name}'"


def read_checkpoint(path, verify=True):
    """The named parameters of a wsetrain checkpoint (version 2)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < CKPT_HEADER.size or data[:8] != CKPT_MAGIC:
        raise ValueError(f"{path}: not a wsetrain checkpoint")
    h = header(data)
    version, header_bytes, floats = h["version"], h["header_bytes"], h["floats"]
    state_arrays, names = h["state_arrays"], h["names"]
    if crc32c(data[:HEADER_CRC_AT]) != h["header_crc"]:
        raise ValueError(f"{path}: the header's checksum does not match: the file is damaged")
    if version == 1:
        raise ValueError(f"{path}: a version 1 checkpoint names no parameters; "
                         "train with a program compiled by this wsecc, or export with "
                         "wsetrain MODEL.onnx --export CKPT -o OUT.onnx")
    if version != 2 or header_bytes != CKPT_HEADER.size:
        raise ValueError(f"{path}: checkpoint version {version}; this reads version 2")
    payload = CKPT_HEADER.size + 4 * floats * (1 + state_arrays)
    if len(data) != payload + names * NAME_RECORD.size:
        raise ValueError(f"{path}: its length does not match its header: truncated or damaged")
    if verify and crc32c(data[CKPT_HEADER.size:payload]) != h["payload_crc"]:
        raise ValueError(f"{path}: the weights' checksum does not match: the file is damaged")
    if crc32c(data[payload:]) != h["names_crc"]:
        raise ValueError(f"{path}: the names' checksum does not match: the file is damaged")
    weights = np.frombuffer(data, dtype="<f4", count=floats, offset=CKPT_HEADER.size)
    out = []
    for i in range(names):
        offset, elems, rank, flags, *rest = NAME_RECORD.unpack_from(data, payload + i * NAME_RECORD.size)
        dims, name, torch_name = rest[:6][:rank], rest[6], rest[7]
        name = name.split(b"\0", 1)[0].decode()
        torch_name = torch_name.split(b"\0", 1)[0].decode()
        if offset + elems > floats or int(np.prod(dims, dtype=np.int64)) != elems:
            raise ValueError(f"{path}: parameter '{name}' lies outside the weights: the file is damaged")
        values = weights[offset:offset + elems].astype(np.float32).reshape(dims)
        out.append(Tensor(name, torch_name, bool(flags & TRANSPOSED), values))
    return out, False


def read_onnx(path):
    """The parameters of an ONNX model, named as its "wse.parameters" metadata says."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    arrays = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type == "Identity" and node.input[0] in arrays:
            arrays[node.output[0]] = arrays[node.input[0]]
    meta = {p.key: p.value for p in m.metadata_props}.get(ONNX_KEY)
    if meta is None:
        # No record of the parameters: every tensor is offered by its ONNX name.
        return [Tensor(k, "", False, v) for k, v in arrays.items()], True
    out = []
    for line in meta.splitlines():
        fields = line.split("\t")
        if len(fields) not in (2, 3) or fields[0] not in arrays:
            raise ValueError(f"{path}: its {ONNX_KEY} metadata names '{fields[0]}', which the graph does not hold")
        out.append(Tensor(fields[0], fields[1], fields[2:] == ["transposed"], arrays[fields[0]]))
    return out, False


def read(path):
    """(tensors, loose): loose when an ONNX model without the metadata offers
    every tensor by its ONNX name, its constants among them."""
    with open(path, "rb") as f:
        magic = f.read(8)
    return read_checkpoint(path) if magic == CKPT_MAGIC else read_onnx(path)


def load_into(model, path):
    """Copies @path's parameters into @model by name; returns the names loaded."""
    tensors, loose = read(path)
    state = model.state_dict()
    params = dict(model.named_parameters())
    new = {}
    for t in tensors:
        if t.key not in state:
            if loose:
                continue        # an ONNX model's constants: not the module's tensors
            raise ValueError(f"{path}: {t.describe()} is not a tensor of the model (extra name)")
        values = t.values.T if t.transposed else t.values
        want = tuple(state[t.key].shape)
        if tuple(values.shape) != want:
            raise ValueError(f"{path}: {t.describe()} is {list(values.shape)} there, "
                             f"{list(want)} in the model (shape mismatch)")
        if t.key in new:
            raise ValueError(f"{path}: {t.describe()} is given twice")
        new[t.key] = values
    missing = [k for k in params if k not in new]
    if missing:
        raise ValueError(f"{path}: the model's parameter(s) {', '.join(repr(k) for k in missing)} "
                         "are not in it (missing name); an ONNX export of a Linear over 3-D "
                         "inputs needs models/wse_export.py's names")
    with torch.no_grad():
        for k, v in new.items():
            state[k].copy_(torch.from_numpy(np.array(v, dtype=np.float32)))
    return sorted(new)


def store_from(model, template, path):
    """Writes @template (a wsetrain checkpoint) to @path with @model's
    parameters as its weights; returns the names stored."""
    with open(template, "rb") as f:
        data = bytearray(f.read())
    tensors, _ = read_checkpoint(template)
    h = header(data)
    floats, state_arrays = h["floats"], h["state_arrays"]
    payload = CKPT_HEADER.size + 4 * floats * (1 + state_arrays)
    weights = np.frombuffer(data, dtype="<f4", count=floats, offset=CKPT_HEADER.size).copy()
    state = model.state_dict()
    stored = []
    for i, t in enumerate(tensors):
        offset, elems = NAME_RECORD.unpack_from(data, payload + i * NAME_RECORD.size)[:2]
        if t.key not in state:
            raise ValueError(f"{template}: {t.describe()} is not a tensor of the model (extra name)")
        v = state[t.key].detach().cpu().numpy().astype(np.float32)
        v = v.T if t.transposed else v
        if tuple(v.shape) != tuple(t.values.shape):
            raise ValueError(f"{template}: {t.describe()} is {list(t.values.shape)} there, "
                             f"{list(v.shape)} in the model (shape mismatch)")
        weights[offset:offset + elems] = v.reshape(-1)
        stored.append(t.key)
    data[CKPT_HEADER.size:CKPT_HEADER.size + 4 * floats] = weights.astype("<f4").tobytes()
    struct.pack_into("<I", data, PAYLOAD_CRC_AT, crc32c(bytes(data[CKPT_HEADER.size:payload])))
    struct.pack_into("<I", data, HEADER_CRC_AT, crc32c(bytes(data[:HEADER_CRC_AT])))
    with open(path, "wb") as f:
        f.write(data)
    return sorted(stored)
