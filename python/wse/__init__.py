# SPDX-License-Identifier: GPL-2.0-only
"""wse: train a torch.nn.Module on wse devices without leaving Python.

  import torch, wse
  wse.devices()                       # as `wsectl -j list` / `info` show them
  run = wse.fit(model, loss="cross_entropy",
                optimizer=torch.optim.AdamW(model.parameters(), lr=3e-4),
                data=train_loader, epochs=3, execution_mode="auto", model_dir="runs/mynet")
  wse.evaluate(model, test_loader)    # {"loss": ..., "accuracy": ..., "samples": ...}
  wse.predict(model, images)          # logits, computed on the device
  wse.save_checkpoint(model, "mine.ckpt"); wse.load_checkpoint("mine.ckpt", model)

Documentation/wse.rst has the whole of it. Device access goes through
libwse.so.0 (ctypes); compiling and training through the project's wsecc
and wsetrain.
"""
from .devices import close_device, device, devices, open_device
from .errors import ToolError, UnsupportedError, WseError

_TRAINING = ("fit", "evaluate", "predict", "save_checkpoint", "load_checkpoint", "Run", "TextCorpus",
             "compile_model", "parse_progress")
__all__ = ["close_device", "device", "devices", "open_device", "ToolError", "UnsupportedError",
           "WseError", *_TRAINING]


def __getattr__(name):
    # The training half needs torch and onnx; device access does not.
    if name in _TRAINING:
        import importlib
        return getattr(importlib.import_module(".training", __name__), name)
    raise AttributeError(f"module 'wse' has no attribute {name!r}")
