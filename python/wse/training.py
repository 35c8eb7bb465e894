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

from . import checkpoint, export, optim, tokens, tools
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
        self._input = None

    @property
    def tokens(self):
        """Does the program take token ids (a model over text)? Its export says."""
        if self._input is None:
            self._input = tokens.export_input(self.onnx)
        return self._input[0]

    def context(self):
        """Tokens a window, for a model over tokens."""
        if not self.tokens:
            return None
        if self._input[1] is None:
            raise UnsupportedError("the model takes token ids, but not as [batch, context]: "
                                   "export it with a 2-D integer input")
        return self._input[1]

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


def evaluate(model, data, device=None, quiet=True):
    """The device's loss and accuracy of @model's current weights on
    @data: {"loss": ..., "accuracy": ..., "samples": ...}. @data is a
    loader of (inputs, labels) for a model over images, a wse.TextCorpus
    (its validation split, as wsetrain --eval --text scores it) for one
    over tokens."""
    run = _run_of(model)
    text = isinstance(data, idx.TextCorpus)
    if text != run.tokens:
        raise ValueError("a model over tokens is evaluated on a wse.TextCorpus" if run.tokens else
                         "a wse.TextCorpus is for a model over tokens; this one takes "
                         "images: give a loader of (inputs, labels)")
    if text and data.context != run.context():
        raise ValueError(f"the model reads windows of {run.context()} tokens; the TextCorpus "
                         f"says {data.context}")
    dev = _device(device)
    with tempfile.TemporaryDirectory(prefix="wse-eval-") as tmp:
        if text:
            data_args = [a for p in data.paths for a in ("--text", p)]
        else:
            x, y = idx.gather(data)
            idx.write_split(tmp, "t10k", x, y)
            data_args = ["--data", tmp]
        ckpt = _current_checkpoint(model, run, tmp)
        out = tools.run("wsetrain", [run.program, "--eval", ckpt, *data_args,
                                     "--devices", dev["index"], "--progress", "lines"], quiet=quiet)
    # "eval: CKPT on N test samples: loss X, accuracy Y (Ts)"
    m = _EVAL_SUMMARY.search(out)
    if not m:
        raise RuntimeError("wsetrain --eval printed no result line:\n" + out[-2000:])
    return {"samples": int(m.group(1)), "loss": float(m.group(2)), "accuracy": float(m.group(3))}


def predict(model, inputs, device=None, quiet=True, sample=None, temperature=0.8, seed=None):
    """@model's output for @inputs, computed on the device. For a model
    over images, the logits of the batch @inputs: a float tensor
    [N, classes]. For one over tokens, @inputs are token ids ([N, context]
    or [context]) and the result the likeliest next token at every
    position, int64 of the same shape; with @sample=K, @inputs is a 1-D
    prompt and the result the K tokens wsetrain --sample draws after it
    at @temperature (0: the likeliest), seeded by @seed."""
    run = _run_of(model)
    if not run.tokens:
        if sample is not None:
            raise ValueError("sample= draws tokens from a model over tokens; this one takes images")
        return _predict_images(model, run, inputs, _device(device), quiet)
    ids = tokens.token_ids(inputs)
    if sample is not None:
        if int(sample) < 1:
            raise ValueError(f"sample={sample}: give the number of tokens to draw, 1 or more")
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError(f"sample= continues one prompt: give a 1-D tensor of token ids, not "
                             f"shape {list(ids.shape)}")
        return _sample_tokens(model, run, ids, int(sample), temperature, seed, _device(device), quiet)
    context = run.context()
    rows = ids.reshape(1, -1) if ids.ndim == 1 else ids
    if ids.ndim not in (1, 2) or rows.shape[1] != context or rows.shape[0] == 0:
        raise ValueError(f"token ids of shape {list(ids.shape)}: the model takes windows of "
                         f"{context} tokens, [N, {context}] or [{context}]")
    nexts = _predict_windows(model, run, rows, _device(device), quiet)
    return nexts.reshape(ids.shape)


def _predict_images(model, run, inputs, dev, quiet):
    x = inputs.detach().cpu()
    x = x.numpy() if x.dtype == torch.uint8 else x.float().numpy()
    with tempfile.TemporaryDirectory(prefix="wse-predict-") as tmp:
        images = os.path.join(tmp, idx.images_name("t10k", x))
        idx.write_idx(images, x)
        header, rows = _run_predict(model, run, tmp, dev, quiet, ["--data", images])
    logit_cols = [i for i, h in enumerate(header) if h.startswith("logit_")]
    if not logit_cols:
        raise RuntimeError("wsetrain --predict wrote no logits (a layer program gives classes only)")
    return torch.tensor([[float(r[i]) for i in logit_cols] for r in rows], dtype=torch.float32)


def _predict_windows(model, run, rows, dev, quiet):
    """wsetrain --predict --text over a corpus whose validation windows
    are @rows (tokens.windows_corpus): the likeliest next ids, [N, context]."""
    with tempfile.TemporaryDirectory(prefix="wse-predict-") as tmp:
        corpus = os.path.join(tmp, "windows.txt")
        tokens.windows_corpus(corpus, rows)
        header, out = _run_predict(model, run, tmp, dev, quiet, ["--text", corpus])
    cols = [i for i, h in enumerate(header) if h.startswith("next_")]
    if len(out) != rows.shape[0] or len(cols) != rows.shape[1]:
        raise RuntimeError(f"wsetrain --predict gave {len(out)} windows of {len(cols)} tokens for "
                           f"{rows.shape[0]} of {rows.shape[1]}")
    return torch.tensor([[int(r[i]) for i in cols] for r in out], dtype=torch.int64)


def _run_predict(model, run, tmp, dev, quiet, data_args):
    """wsetrain --predict with the model's current weights: its CSV's
    header and rows."""
    ckpt = _current_checkpoint(model, run, tmp)
    out_csv = os.path.join(tmp, "predictions.csv")
    tools.run("wsetrain", [run.program, "--predict", ckpt, *data_args, "-o", out_csv,
                           "--devices", dev["index"]], quiet=quiet)
    with open(out_csv, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _sample_tokens(model, run, prompt, count, temperature, seed, dev, quiet):
    """wsetrain --sample COUNT after @prompt: the tokens it drew."""
    if not 0 <= float(temperature) <= 100:
        raise ValueError(f"temperature={temperature}: 0 (the likeliest token) to 100")
    chars = tokens.to_text(prompt)
    with tempfile.TemporaryDirectory(prefix="wse-sample-") as tmp:
        # --sample reads no windows, but --text must name characters enough for one.
        corpus = os.path.join(tmp, "prompt.txt")
        tokens.windows_corpus(corpus, np.zeros((1, run.context()), dtype=np.int64))
        ckpt = _current_checkpoint(model, run, tmp)
        args = [run.program, "--predict", ckpt, "--text", corpus, "--sample", count,
                "--prompt", chars, "--temperature", repr(float(temperature)), "--devices", dev["index"]]
        if seed is not None:
            args += ["--seed", seed]
        out = tools.run("wsetrain", args, quiet=quiet, stdout_only=True)
    # What it prints: the prompt, the characters drawn, a newline.
    if not out.startswith(chars) or len(out) != len(chars) + count + 1:
        raise RuntimeError(f"wsetrain --sample printed {len(out)} characters, not the prompt's "
                           f"{len(chars)}, {count} drawn and a newline:\n{out[-2000:]}")
    return torch.from_numpy(tokens.from_text(out[len(chars):-1]))


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
