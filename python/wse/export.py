# SPDX-License-Identifier: GPL-2.0-only
"""wse_export: what the project's ONNX exports say about their parameters.

  annotate(model, path)   after torch.onnx.export(model, ..., path)

torch.onnx.export names an initializer by the module's state_dict() name,
except where constant folding computed it: nn.Linear over a [B, T, C] input
becomes a MatMul with the weight transposed, under a name such as
"onnx::MatMul_138". Equal initializers are merged, the copies made by
Identity nodes named as the parameters they stand for. annotate() writes
the trainable ones (model.named_parameters()) into the model's
metadata_props under "wse.parameters", one line each:

  ONNX_NAME<TAB>STATE_DICT_NAME[<TAB>transposed]

wsecc carries the state_dict names into the program and its checkpoints,
so that models/wse_checkpoint.py loads trained weights by name
(Documentation/onnx-import.rst, "Weights back to PyTorch"). Buffers
(register_buffer) are not listed: they are not parameters.

An eval-mode export (torch.onnx.export's default) removes Dropout and folds
BatchNorm into the Conv before it. annotate() lists the modules whose ops
the graph lacks under "wse.eval_removed", one a line:

  MODULE_NAME<TAB>CLASS

and leaves the folded BatchNorm's parameters out; wsecc warns of each.
"""
import numpy as np
import onnx
import torch
from onnx import numpy_helper

KEY = "wse.parameters"
REMOVED_KEY = "wse.eval_removed"


def _removed(model, graph):
    """The Dropout and BatchNorm modules of @model whose ops @graph lacks."""
    ops = {node.op_type for node in graph.node}
    out = []
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.modules.dropout._DropoutNd) and mod.p > 0 and "Dropout" not in ops:
            out.append((name, type(mod).__name__))
        elif isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and "BatchNormalization" not in ops:
            out.append((name, type(mod).__name__))
    return out


def _tensors(graph):
    """The initializers and the Identity copies of them, by name."""
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in arrays:
            arrays[node.output[0]] = arrays[node.input[0]]
    return arrays


def annotate(model, path):
    """Writes which of @path's tensors are @model's parameters, and as which."""
    m = onnx.load(path)
    tensors = _tensors(m.graph)
    params = {k: p.detach().cpu().numpy() for k, p in model.named_parameters()}
    removed = _removed(model, m.graph)
    folded = {f"{mod}.{p}" if mod else p for mod, _ in removed for p in ("weight", "bias")}
    # Folding a BatchNorm rewrites the Conv before it: new, unnamed initializers.
    if any("BatchNorm" in kind for _, kind in removed):
        folded |= {f"{n}.{p}" for n, mod in model.named_modules()
                   if isinstance(mod, torch.nn.modules.conv._ConvNd) for p in ("weight", "bias")}
    lines, taken = [], set()
    for name in tensors:
        if name in params:
            lines.append(f"{name}\t{name}")
            taken.add(name)
    # What folding renamed: the parameter whose values (or transpose) it holds.
    for name, arr in tensors.items():
        if name in params or arr.dtype != np.float32:
            continue
        for pname, p in params.items():
            if pname in taken or pname in folded:
                continue
            if p.shape == arr.shape and np.array_equal(p, arr):
                lines.append(f"{name}\t{pname}")
            elif p.ndim == 2 and p.T.shape == arr.shape and np.array_equal(p.T, arr):
                lines.append(f"{name}\t{pname}\ttransposed")
            else:
                continue
            taken.add(pname)
            break
    missing = sorted(set(params) - taken - folded)
    if missing:
        raise ValueError(f"{path}: parameters not found among the exported tensors: {', '.join(missing)}")
    for i in reversed(range(len(m.metadata_props))):
        if m.metadata_props[i].key in (KEY, REMOVED_KEY):
            del m.metadata_props[i]
    entry = m.metadata_props.add()
    entry.key, entry.value = KEY, "\n".join(lines)
    if removed:
        entry = m.metadata_props.add()
        entry.key, entry.value = REMOVED_KEY, "\n".join(f"{n}\t{k}" for n, k in removed)
    onnx.save(m, path)


def export(model, path, example, input_name="input", output_name="output", opset=17):
    """torch.onnx.export of @model over @example (a batch of inputs; its
    first dimension becomes the dynamic axis "batch") to @path, then
    annotate(): what wse.fit compiles. In eval mode, torch's default (see
    "wse.eval_removed" above)."""
    was_training = model.training
    try:
        torch.onnx.export(model, example, path, opset_version=opset,
                          input_names=[input_name], output_names=[output_name],
                          dynamic_axes={input_name: {0: "batch"}, output_name: {0: "batch"}})
    finally:
        model.train(was_training)
    annotate(model, path)
