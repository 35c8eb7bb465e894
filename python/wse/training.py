# SPDX-License-Identifier: GPL-2.0-only
"""wse.fit, wse.evaluate, wse.predict, wse.save_checkpoint and
wse.load_checkpoint: a torch.nn.Module trained and run on the device.

fit() exports the module (wse.export), compiles it with wsecc for the
device's wafer with the optimizer and schedule torch was given
(wse.optim), writes the data to IDX files in the run directory, and runs
wsetrain there: the project's trainer, with its step code, progress,
checkpoints and metrics. It then loads the last checkpoint back into the
module by name (wse.checkpoint). No training step is written in Python.
"""
import csv
import datetime
import glob
import json
import os
import re
import tempfile

import numpy as np
import torch

from . import checkpoint, export, optim, tools
from . import data as idx
from .devices import devices as list_devices
from .errors import UnsupportedError

LOSSES = ("cross_entropy",)
MODES = ("auto", "pipelined", "weight_streaming")
_RUN_ATTR = "_wse_run"
TextCorpus = idx.TextCorpus
_LINE = re.compile(r"\b(Train|Eval) (.*)$")
_EVAL_SUMMARY = re.compile(r"^eval: .* on (\d+) test samples: loss ([-+0-9.eEinfa]+), accuracy ([0-9.]+)", re.M)


class Run:
    """What a fit() left: .dir (the run directory), .program (the .wsep),
    .onnx (the export), .checkpoint (the last one), .metrics (metrics.csv
    as a list of dicts), .final (run.json's "final"), .output (wsetrain's)."""

    def __init__(self, directory, program, onnx_path):
        self.dir, self.program, self.onnx = directory, program, onnx_path
        self.checkpoint, self.metrics, self.final, self.output = None, [], {}, ""

    def read_results(self):
        with open(os.path.join(self.dir, "run.json")) as f:
            info = json.load(f)
        self.final = info.get("final", {})
        ckpt = self.final.get("checkpoint")
        self.checkpoint = os.path.join(self.dir, ckpt) if ckpt else _newest_checkpoint(self.dir)
        path = os.path.join(self.dir, "metrics.csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                self.metrics = [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]

    def __repr__(self):
        return f"wse.Run({self.dir!r})"


def _number(v):
    if v in (None, ""):
        return None
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def _newest_checkpoint(directory):
    found = glob.glob(os.path.join(directory, "checkpoint_*.ckpt"))
    steps = [(int(re.search(r"checkpoint_(\d+)\.ckpt$", p).group(1)), p) for p in found
             if re.search(r"checkpoint_(\d+)\.ckpt$", p)]
    return max(steps)[1] if steps else None


def parse_progress(line):
    """A wsetrain progress line ("Train Epoch=1/2, Step=..., Loss=...") as a
    dict {"kind": "train"|"eval", "epoch": 1, "step": ..., "loss": ...};
    None for other lines."""
    m = _LINE.search(line)
    if not m:
        return None
    out = {"kind": m.group(1).lower()}
    for field in m.group(2).split(", "):
        key, _, value = field.partition("=")
        key = key.strip().lower()
        value = value.strip()
        if key == "epoch" and "/" in value:
            value = value.split("/")[0]
        elif key == "step" and "/" in value:
            value = value.split("/")[0]
        value = re.sub(r"(samples/s|s)$", "", value).strip()
        out[key] = _number(value)
    return out


def _device(index):
    """The device to run on: @index, or the first whose link is up."""
    devs = list_devices(parts=False)
    if index is not None:
        for d in devs:
            if d["index"] == int(index):
                return d
        raise ValueError(f"there is no device {index}: wse.devices() lists the devices")
    for d in devs:
        if d["link"] == "up" and d["accel"]:
            return d
    raise ValueError("no wse device with a live link: attach one with 'wsectl attach tcp:HOST:PORT'")


def _wafer(d):
    """wsecc's --wafer for device @d, as wsetrain compiles for it."""
    return f"{d['wafer_width']}x{d['wafer_height']}:{d['sram_per_pe']}@{d['clock_khz'] * 1000}"


def _loss(loss):
    if isinstance(loss, torch.nn.CrossEntropyLoss):
        if (loss.weight is not None or loss.ignore_index != -100 or loss.label_smoothing
                or loss.reduction != "mean"):
            raise UnsupportedError("CrossEntropyLoss with weights, ignore_index, label smoothing or a "
                                   "reduction other than mean: the device's loss is the plain mean")
        return
    if loss not in LOSSES:
        raise UnsupportedError(f"loss {loss!r}: the device trains with softmax cross-entropy "
                               "(loss=\"cross_entropy\")")


def _run_dir(model, model_dir):
    if model_dir is None:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        base = os.environ.get("WSETRAIN_RUNS", "runs")
        model_dir = os.path.join(base, f"{type(model).__name__.lower()}-py-{stamp}")
    os.makedirs(model_dir, exist_ok=True)
    return os.path.abspath(model_dir)


def compile_model(model, example, directory, batch, device=None, execution_mode="auto",
                  optimizer=None, scheduler=None, element="f32", seed=None, quiet=True):
    """Exports @model over @example to DIRECTORY/model.onnx and compiles it
    with wsecc for @device's wafer: DIRECTORY/model.wsep. Returns (onnx, wsep).
    @element is wsecc's --input (f32, u8), None for the graph's own (token ids)."""
    train_args = (optim.optimizer_args(optimizer, model) if optimizer is not None else []) + \
        optim.scheduler_args(scheduler)
    onnx_path = os.path.join(directory, "model.onnx")
    wsep = os.path.join(directory, "model.wsep")
    export.export(model, onnx_path, example)
    args = [onnx_path, "--batch", batch, "--mode", execution_mode, "-o", wsep]
    if element is not None:     # token ids (a TextCorpus) are the program's own i32 input
        args += ["--input", element]
    if device is not None:
        args += ["--wafer", _wafer(device)]
    args += train_args
    if seed is not None:
        args += ["--seed", seed]
    tools.run("wsecc", args, quiet=quiet)
    return onnx_path, wsep


def fit(model, loss="cross_entropy", optimizer=None, data=None, epochs=1, execution_mode="auto",
        systems=None, model_dir=None, eval_data=None, scheduler=None, steps=None, device=None,
        input="stream", seed=None, callback=None, quiet=False):
    """Trains @model on the device; returns a Run, and leaves the trained
    weights in @model. See Documentation/wse.rst."""
    _loss(loss)
    if execution_mode not in MODES:
        raise ValueError(f"execution_mode {execution_mode!r}: one of {', '.join(MODES)}")
    if systems is not None and int(systems) > 1:
        if execution_mode == "pipelined":
            raise ValueError("systems > 1 trains by weight streaming, not pipelined")
        execution_mode = "weight_streaming"
    if optimizer is None:
        raise ValueError("give an optimizer: torch.optim.SGD, Adam or AdamW over model.parameters()")
    if input not in ("stream", "appliance"):
        raise ValueError(f"input {input!r}: 'stream' (wsetrain sends the samples) or 'appliance' "
                         "(its input workers read a dataset directory)")
    # What the device cannot do is refused before anything is made or run.
    optim.optimizer_args(optimizer, model)
    optim.scheduler_args(scheduler)
    if data is None or isinstance(data, (str, os.PathLike)):
        raise ValueError("give data: a DataLoader (or an iterable) of (inputs, labels) batches, or a "
                         "wse.TextCorpus; a directory of IDX files is wsetrain's own --data")
    text = isinstance(data, idx.TextCorpus)
    if text:
        if eval_data is not None:
            raise ValueError("a TextCorpus is evaluated on its own validation split (its last tenth): "
                             "leave eval_data out")
        if steps is None:
            raise ValueError("give steps= with a TextCorpus: an epoch of a text corpus is a window at "
                             "every offset of it, far more steps than a run usually takes")
        if input != "stream":
            raise ValueError("a TextCorpus is read by wsetrain (--text): input must be 'stream'")
    dev = _device(device)
    rundir = _run_dir(model, model_dir)
    if text:
        batch, example, element = data.batch_size, data.example(), None
        data_args = [a for p in data.paths for a in ("--text", p)]
        mode = "train_and_eval"
    else:
        x, y = idx.gather(data)
        batch = getattr(data, "batch_size", None) or 128
        data_dir = os.path.join(rundir, "data")
        idx.write_split(data_dir, "train", x, y)
        if eval_data is not None:
            tx, ty = idx.gather(eval_data)
            idx.write_split(data_dir, "t10k", tx, ty)
        # The export's example: floats as the device feeds them (bytes / 255).
        example = torch.from_numpy(x[:2].astype(np.float32))
        if x.dtype == np.uint8:
            example = example / 255.0
        element = idx.element(x)
        data_args = ["--data", data_dir]
        mode = "train_and_eval" if eval_data is not None else "train"
    onnx_path, wsep = compile_model(model, example, rundir, batch, dev, execution_mode,
                                    optimizer, scheduler, element, seed, quiet)
    run = Run(rundir, wsep, onnx_path)
    args = [wsep, "--model_dir", rundir, *data_args, "--epochs", epochs,
            "--devices", dev["index"], "--progress", "lines", "--mode", mode]
    if systems is not None:
        args += ["--systems", systems]
    if steps is not None:
        args += ["--steps", steps]
    if input == "appliance":
        args += ["--input", "appliance"]
    if seed is not None:
        args += ["--seed", seed]

    def on_line(line):
        if callback:
            p = parse_progress(line)
            if p:
                callback(p)
    run.output = tools.run("wsetrain", args, on_line=on_line, quiet=quiet)
    run.read_results()
    if run.checkpoint is None:
        raise RuntimeError(f"{rundir}: wsetrain left no checkpoint")
    checkpoint.load_into(model, run.checkpoint)
    setattr(model, _RUN_ATTR, run)
    return run


def _run_of(model):
    run = getattr(model, _RUN_ATTR, None)
    if run is None:
        raise ValueError("the model has no program on the device: train it with wse.fit(), or "
                         "wse.load_checkpoint(path, model) from a run directory of one")
    return run


def _current_checkpoint(model, run, tmp):
    """A checkpoint holding @model's weights now: the run's own when they
    are the same, else a copy of it with them in (checkpoint.store_from)."""
    tensors, _ = checkpoint.read_checkpoint(run.checkpoint, verify=False)
    state = model.state_dict()
    same = all(t.key in state and np.array_equal(
        state[t.key].detach().cpu().numpy().T if t.transposed else state[t.key].detach().cpu().numpy(),
        t.values) for t in tensors)
    if same:
        return run.checkpoint
    path = os.path.join(tmp, "current.ckpt")
    checkpoint.store_from(model, run.checkpoint, path)
    return path


def evaluate(model, loader, device=None, quiet=True):
    """The device's loss and accuracy of @model's current weights on
    @loader: {"loss": ..., "accuracy": ..., "samples": ...}."""
    run = _run_of(model)
    dev = _device(device)
    with tempfile.TemporaryDirectory(prefix="wse-eval-") as tmp:
        x, y = idx.gather(loader)
        idx.write_split(tmp, "t10k", x, y)
        ckpt = _current_checkpoint(model, run, tmp)
        out = tools.run("wsetrain", [run.program, "--eval", ckpt, "--data", tmp,
                                     "--devices", dev["index"], "--progress", "lines"], quiet=quiet)
    # "eval: CKPT on N test samples: loss X, accuracy Y (Ts)"
    m = _EVAL_SUMMARY.search(out)
    if not m:
        raise RuntimeError("wsetrain --eval printed no result line:\n" + out[-2000:])
    return {"samples": int(m.group(1)), "loss": float(m.group(2)), "accuracy": float(m.group(3))}


def predict(model, inputs, device=None, quiet=True):
    """The logits of @model for the batch @inputs, computed on the device:
    a float tensor [N, classes]."""
    run = _run_of(model)
    dev = _device(device)
    x = inputs.detach().cpu()
    x = x.numpy() if x.dtype == torch.uint8 else x.float().numpy()
    with tempfile.TemporaryDirectory(prefix="wse-predict-") as tmp:
        images = os.path.join(tmp, idx.images_name("t10k", x))
        idx.write_idx(images, x)
        ckpt = _current_checkpoint(model, run, tmp)
        out_csv = os.path.join(tmp, "predictions.csv")
        tools.run("wsetrain", [run.program, "--predict", ckpt, "--data", images, "-o", out_csv,
                               "--devices", dev["index"]], quiet=quiet)
        with open(out_csv, newline="") as f:
            rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    logit_cols = [i for i, h in enumerate(header) if h.startswith("logit_")]
    if not logit_cols:
        raise RuntimeError("wsetrain --predict wrote no logits (a layer program gives classes only)")
    return torch.tensor([[float(r[i]) for i in logit_cols] for r in rows], dtype=torch.float32)


def save_checkpoint(model, path):
    """Writes @model's weights as a wsetrain checkpoint of its run's
    program (wsetrain --eval, --predict, --init-from and --resume read it)."""
    run = _run_of(model)
    return checkpoint.store_from(model, run.checkpoint, path)


def load_checkpoint(path, model):
    """Loads a wsetrain checkpoint (or a trained ONNX export) into @model
    by name. A checkpoint in a run directory of wse.fit() (with its
    model.wsep) also gives the model that program, for evaluate() and
    predict()."""
    names = checkpoint.load_into(model, path)
    directory = os.path.dirname(os.path.abspath(path))
    wsep = os.path.join(directory, "model.wsep")
    if os.path.exists(wsep) and open(path, "rb").read(8) == checkpoint.CKPT_MAGIC:
        run = Run(directory, wsep, os.path.join(directory, "model.onnx"))
        run.checkpoint = os.path.abspath(path)
        setattr(model, _RUN_ATTR, run)
    return names


__all__ = ["Run", "TextCorpus", "fit", "evaluate", "predict", "save_checkpoint", "load_checkpoint",
           "compile_model", "parse_progress"]
