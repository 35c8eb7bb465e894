#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""python/wse on the host (run by python_test.sh with PYTHONPATH=python):

- errors: libwse's failures raise wse.WseError, an OSError whose errno
  is the one libwse returned, with libwse's message and what failed; on a
  host without the module (this one never loads it) listing the devices
  fails as `wsectl -j list` does, with the same errno text;
- the torch optimizers and schedulers the device has map to wsecc's
  options, and the rest are refused saying why (needs python3-torch);
- a wse.TextCorpus, and what wse.fit refuses of one before it looks for
  a device.
"""
import errno
import os
import subprocess
import sys

import wse

failed = 0


def check(name, ok, why=""):
    global failed
    print(("ok " if ok else "not ok ") + name + ("" if ok else "\n#   " + why))
    failed += not ok


def skip(name, why):
    print(f"ok {name} # SKIP {why}")


def raises(fn, kind=Exception):
    try:
        fn()
    except kind as e:
        return e
    return None


# --- errors -----------------------------------------------------------------
e = raises(lambda: wse.open_device("/nonexistent/accel9"), wse.WseError)
check("a missing node raises WseError(ENOENT), an OSError naming it",
      e is not None and isinstance(e, OSError) and e.errno == errno.ENOENT
      and "/nonexistent/accel9" in str(e) and e.strerror, f"got {e!r}")
e = raises(lambda: wse.open_device(""), wse.WseError)
check("an empty spec raises WseError(EINVAL)", e is not None and e.errno == errno.EINVAL, f"got {e!r}")
e = raises(lambda: wse.open_device("/dev/null"), wse.WseError)
check("a node that is not a wse device raises WseError(ENOTTY)",
      e is not None and e.errno == errno.ENOTTY, f"got {e!r}")

if os.path.exists("/sys/module/wse"):
    skip("without the module, devices() fails as wsectl does", "the wse module is loaded here")
else:
    e = raises(wse.devices, wse.WseError)
    r = subprocess.run(["build/bin/wsectl", "-j", "list"], capture_output=True, text=True)
    check("without the module, devices() fails as wsectl -j list does (errno and text)",
          e is not None and r.returncode != 0 and os.strerror(e.errno) in r.stderr
          and "wse module is not loaded" in str(e),
          f"python: {e!r}; wsectl ({r.returncode}): {r.stderr.strip()}")

# --- the optimizer and scheduler mapping ------------------------------------
try:
    import torch
except ImportError:
    skip("optimizer and scheduler mapping", "no torch (python3-torch is not installed)")
    sys.exit(1 if failed else 0)

from wse import optim  # noqa: E402

model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
P = model.parameters


def args(o):
    a = optim.optimizer_args(o, model)
    return dict(zip(a[::2], a[1::2]))


cases = [
    ("SGD", torch.optim.SGD(P(), lr=0.1), {"--optimizer": "sgd", "--lr": "0.1", "--weight-decay": "0.0"}),
    ("SGD with momentum and weight decay", torch.optim.SGD(P(), lr=0.05, momentum=0.8, weight_decay=1e-4),
     {"--optimizer": "momentum", "--momentum": "0.8", "--lr": "0.05", "--weight-decay": "0.0001"}),
    ("SGD nesterov", torch.optim.SGD(P(), lr=0.01, momentum=0.9, nesterov=True),
     {"--optimizer": "nesterov", "--momentum": "0.9", "--lr": "0.01", "--weight-decay": "0.0"}),
    ("Adam", torch.optim.Adam(P(), lr=1e-3),
     {"--optimizer": "adam", "--lr": "0.001", "--weight-decay": "0.0"}),
    ("AdamW", torch.optim.AdamW(P(), lr=3e-4),
     {"--optimizer": "adamw", "--lr": "0.0003", "--weight-decay": "0.01"}),
]
for name, o, want in cases:
    got = args(o)
    check(f"{name} maps to {' '.join(f'{k} {v}' for k, v in want.items())}", got == want, f"got {got}")

refused = [
    ("RMSprop", lambda: torch.optim.RMSprop(P()), "RMSprop"),
    ("Adam amsgrad", lambda: torch.optim.Adam(P(), amsgrad=True), "amsgrad"),
    ("Adam betas", lambda: torch.optim.Adam(P(), betas=(0.8, 0.99)), "betas"),
    ("AdamW eps", lambda: torch.optim.AdamW(P(), eps=1e-6), "eps"),
    ("SGD dampening", lambda: torch.optim.SGD(P(), lr=0.1, momentum=0.9, dampening=0.1), "dampening"),
    ("two parameter groups", lambda: torch.optim.SGD(
        [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.5}], lr=0.1),
     "parameter groups"),
    ("a parameter the optimizer lacks", lambda: torch.optim.SGD(model[0].parameters(), lr=0.1), "2.weight"),
]
for name, make, word in refused:
    e = raises(lambda: optim.optimizer_args(make(), model), wse.UnsupportedError)
    check(f"{name} is refused, saying {word!r}", e is not None and word in str(e), f"got {e!r}")

sched = torch.optim.lr_scheduler
o = torch.optim.AdamW(P(), lr=1e-3)
got = optim.scheduler_args(sched.CosineAnnealingLR(o, T_max=500, eta_min=1e-5))
check("CosineAnnealingLR maps to --warmup 0 --steps 500 --min-lr 1e-05",
      got == ["--warmup", "0", "--steps", "500", "--min-lr", "1e-05"], f"got {got}")
o = torch.optim.AdamW(P(), lr=1e-3)
s = sched.SequentialLR(o, [sched.LinearLR(o, start_factor=0.01, total_iters=100),
                           sched.CosineAnnealingLR(o, T_max=900)], milestones=[100])
got = optim.scheduler_args(s)
check("SequentialLR(LinearLR, CosineAnnealingLR) maps to --warmup 100 --steps 1000",
      got == ["--warmup", "100", "--steps", "1000", "--min-lr", "0.0"], f"got {got}")
o = torch.optim.SGD(P(), lr=0.1)
e = raises(lambda: optim.scheduler_args(sched.StepLR(o, step_size=10)), wse.UnsupportedError)
check("StepLR is refused, naming it", e is not None and "StepLR" in str(e), f"got {e!r}")

from wse import training as wfit  # noqa: E402

p = wfit.parse_progress("2026-11-26 06:23:37 | Eval Epoch=1/14, Step=469, Loss=0.44704, "
                        "Accuracy=0.8419, Samples=10000, Time=0.39s")
check("an Eval line parses", p == {"kind": "eval", "epoch": 1, "step": 469, "loss": 0.44704,
                                   "accuracy": 0.8419, "samples": 10000, "time": 0.39}, f"got {p}")
e = raises(lambda: wfit._loss("mse"), wse.UnsupportedError)
check("a loss other than cross-entropy is refused", e is not None and "cross" in str(e), f"got {e!r}")

# --- CRC32C: chunks side by side, chained, equal to the byte-at-a-time rule ----
from wse import checkpoint as ckpt  # noqa: E402


def crc32c_bytewise(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = ckpt._TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


check("crc32c('123456789') is 0xE3069283 (wse/crc32c.h's check value)",
      ckpt.crc32c(b"123456789") == 0xE3069283, hex(ckpt.crc32c(b"123456789")))
blob = bytes((i * 131 + (i >> 7)) & 0xFF for i in range(300007))
bad = [n for n in (0, 255, 4095, 4096, 4097, 65536 + 13, 300007)
       if ckpt.crc32c(blob[:n], 0x5A5A) != crc32c_bytewise(blob[:n], 0x5A5A)]
check("crc32c over chunks equals the byte-at-a-time CRC (0 to 300007 bytes, a running CRC)", not bad,
      f"differs at lengths {bad}")

# --- a text corpus: what wse.fit refuses before it looks for a device --------
import tempfile  # noqa: E402

e = raises(lambda: wse.TextCorpus("/nonexistent/corpus", 8, 32), ValueError)
check("a TextCorpus of a file that is not there is refused, naming it",
      e is not None and "/nonexistent/corpus" in str(e), f"got {e!r}")
e = raises(lambda: wse.TextCorpus([__file__] * 17, 8, 32), ValueError)
check("a TextCorpus of 17 files is refused (wsetrain joins at most 16)", e is not None and "16" in str(e),
      f"got {e!r}")
corpus = wse.TextCorpus(__file__, batch_size=8, context=32)
check("a TextCorpus's export example is int64 token ids [2, context]",
      corpus.example().dtype == torch.int64 and list(corpus.example().shape) == [2, 32], repr(corpus.example()))
with tempfile.TemporaryDirectory() as tmp:
    where = os.path.join(tmp, "run")
    for why, kw, word in (("without steps", {}, "steps"),
                          ("with eval_data", {"steps": 5, "eval_data": [(torch.zeros(1, 4), torch.zeros(1))]},
                           "eval_data"),
                          ("with input='appliance'", {"steps": 5, "input": "appliance"}, "stream")):
        e = raises(lambda: wse.fit(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data=corpus,
                                   model_dir=where, **kw), ValueError)
        check(f"wse.fit of a TextCorpus {why} is refused, saying {word!r}, and makes no run directory",
              e is not None and word in str(e) and not os.path.exists(where), f"got {e!r}")

# --- evaluate and predict of a model over tokens: what they refuse ----------
# A run as wse.fit leaves it (the export is what says the model takes
# tokens); each refusal comes before a device is looked for.
sys.path.insert(0, "models")
import gpt_chars  # noqa: E402
import numpy as np  # noqa: E402
from wse import export as wexport, tokens, training  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    gpt = gpt_chars.GPT(tokens.VOCAB, 1, 16, 2, 8, 0.0)
    wexport.export(gpt, os.path.join(tmp, "gpt.onnx"), torch.zeros(2, 8, dtype=torch.long))
    setattr(gpt, training._RUN_ATTR, training.Run(tmp, os.path.join(tmp, "gpt.wsep"),
                                                  os.path.join(tmp, "gpt.onnx")))
    run = getattr(gpt, training._RUN_ATTR)
    check("the GPT's export says it takes token ids, windows of 8",
          run.tokens and run.context() == 8, f"{run.tokens} {run.context()}")
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3))
    wexport.export(net, os.path.join(tmp, "net.onnx"), torch.zeros(2, 4, 4))
    setattr(net, training._RUN_ATTR, training.Run(tmp, os.path.join(tmp, "net.wsep"),
                                                  os.path.join(tmp, "net.onnx")))
    check("an image model's export says it takes no token ids",
          not getattr(net, training._RUN_ATTR).tokens)
    text_corpus = wse.TextCorpus(__file__, batch_size=8, context=8)
    for name, fn, word in (
            ("evaluate of a model over tokens on a loader", lambda: wse.evaluate(
                gpt, [(torch.zeros(2, 8, dtype=torch.long), torch.zeros(2, dtype=torch.long))]), "TextCorpus"),
            ("evaluate of an image model on a TextCorpus", lambda: wse.evaluate(net, text_corpus), "images"),
            ("evaluate on a TextCorpus of another context", lambda: wse.evaluate(
                gpt, wse.TextCorpus(__file__, batch_size=8, context=16)), "windows of 8 tokens"),
            ("predict of float inputs for a model over tokens",
             lambda: wse.predict(gpt, torch.zeros(2, 8)), "integer token ids"),
            ("predict of ids outside the vocabulary", lambda: wse.predict(
                gpt, torch.full((2, 8), 96, dtype=torch.long)), "0..95"),
            ("predict of windows longer than the model's", lambda: wse.predict(
                gpt, torch.zeros(2, 9, dtype=torch.long)), "windows of 8 tokens"),
            ("sample= of two prompts", lambda: wse.predict(
                gpt, torch.zeros(2, 8, dtype=torch.long), sample=5), "1-D"),
            ("sample=0", lambda: wse.predict(gpt, torch.zeros(3, dtype=torch.long), sample=0), "1 or more"),
            ("sample= of an image model", lambda: wse.predict(net, torch.zeros(2, 4, 4), sample=5), "images")):
        e = raises(fn, ValueError)
        check(f"{name} is refused, saying {word!r}", e is not None and word in str(e), f"got {e!r}")

    # The corpus wse.predict hands wsetrain: its validation windows
    # (wse/textdata.h: split at n - n/10, windows of T from there, each
    # with the character after it) are the rows given, in order.
    rows = np.array([[0, 1, 2, 3, 94, 95, 33, 50], [5, 0, 0, 7, 8, 9, 10, 11], [95] * 8])
    path = os.path.join(tmp, "windows.txt")
    tokens.windows_corpus(path, rows)
    ids = tokens.from_text(open(path, encoding="ascii", newline="").read())
    split = len(ids) - len(ids) // 10
    windows = (len(ids) - split - 1) // 8
    check("predict's corpus has the rows as its validation windows, in order",
          windows == 3 and all(np.array_equal(ids[split + i * 8:split + i * 8 + 8], rows[i]) for i in range(3)),
          f"n {len(ids)}, split {split}, {windows} windows")
    check("token ids go to characters and back (0 is a newline, 1..95 printable ASCII)",
          np.array_equal(tokens.from_text(tokens.to_text(np.arange(96))), np.arange(96))
          and tokens.to_text(np.array([0, 1, 34])) == "\n A")

# --- a DataLoader over a TensorDataset in order is read whole -----------------
from wse import data as wdata  # noqa: E402

xs = torch.arange(5 * 6, dtype=torch.float32).view(5, 2, 3)
ys = torch.tensor([3, 1, 4, 1, 5])
in_order = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys), batch_size=2)
whole, looped = wdata.gather(in_order), wdata.gather(list(in_order))
check("gather of a DataLoader over a TensorDataset in order takes its tensors, the same as its batches",
      wdata._in_order_tensors(in_order) is not None and all(np.array_equal(a, b) for a, b in zip(whole, looped)),
      f"{whole} vs {looped}")
for name, other in (("shuffled", torch.utils.data.DataLoader(in_order.dataset, batch_size=2, shuffle=True)),
                    ("drop_last", torch.utils.data.DataLoader(in_order.dataset, batch_size=2, drop_last=True))):
    check(f"a {name} DataLoader is read batch by batch",
          wdata._in_order_tensors(other) is None and len(wdata.gather(other)[1]) == (4 if name == "drop_last" else 5))

empty = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs[:0], ys[:0]), batch_size=2)
e = raises(lambda: wdata.gather(empty), ValueError)
check("gather of an empty TensorDataset is refused as giving no batches",
      e is not None and "no batches" in str(e), f"got {e!r}")

empty = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs[:0], ys[:0]), batch_size=2)
e = raises(lambda: wdata.gather(empty), ValueError)
check("gather of an empty TensorDataset is refused as giving no batches",
      e is not None and "no batches" in str(e), f"got {e!r}")

sys.exit(1 if failed else 0)
