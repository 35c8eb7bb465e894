# SPDX-License-Identifier: GPL-2.0-only
"""wse (python/wse) in the guest, through the driver, on a firmware
simulator tools/wsevm started on the host:

- wse.devices() and wse.device(N) say what `wsectl -j list` and
  `wsectl -j info N` say; a device that is not there raises WseError
  (ENODEV) with the kernel's message;
- wse.fit trains models/cnn_fashion.py's CNN (AdamW, a small part of
  Fashion-MNIST) through wsecc and wsetrain, and leaves the trained
  weights in the module: evaluated in plain PyTorch it scores the
  device's test accuracy to 1e-4, and wse.evaluate of it again agrees;
- wse.predict's logits are PyTorch's for the same weights;
- save_checkpoint writes a checkpoint wsetrain evaluates, and
  load_checkpoint reads it back into a fresh module, bit for bit;
- an optimizer the device does not have is refused before anything runs;
- wsetrain on the very program and data, for the time beside wse.fit's;
- the returned CNN and what the device measured are left for the host
  (tests/host/python_host_eval.py evaluates it in PyTorch there);
- part "gpt": examples/python/train_cnn.py runs as a user runs it, and
  wse.fit trains models/gpt_chars.py's GPT on a text corpus by weight
  streaming on an appliance of two systems, also left for the host;
  wse.evaluate of it on the TextCorpus is the run's validation loss, and
  wse.predict's next tokens and greedy sample are PyTorch's;

  python_fit_test.py [cnn] [gpt]     (default both)
"""
import contextlib
import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import wse
from wse.data import read_idx

sys.path.insert(0, "/wse/models")
import cnn_fashion  # noqa: E402
import gpt_chars  # noqa: E402
import gpt_data  # noqa: E402

FMNIST = "/usr/share/datasets/fashion-mnist"
TRAIN, TEST, BATCH = 4096, 1000, 64
# The GPT of models/gpt_chars.py, small: what weight streaming on two
# systems and the way back need, in make check's time.
FORTUNES = ["/usr/share/games/fortunes/fortunes"]
GPT = {"blocks": 1, "width": 32, "heads": 2, "context": 32, "batch": 8, "steps": 40, "lr": 3e-3}
# make check runs the two parts as two tests (python_fit_test.sh), each
# within run-tests' 600 s; by hand, with no argument, it runs both.
PARTS = sys.argv[1:] or ["cnn", "gpt"]
n = failed = skipped = 0
started = time.monotonic()


def check(name, ok, why=""):
    global n, failed
    n += 1
    print(f"{'ok' if ok else 'not ok'} {n} {name}" + ("" if ok else "\n#   " + str(why)), flush=True)
    failed += not ok


def skip(name, why):
    global n, skipped
    n += 1
    skipped += 1
    print(f"ok {n} {name} # SKIP {why}", flush=True)


def finish():
    print(f"# python_fit_test.py {' '.join(PARTS)}: {time.monotonic() - started:.0f} s in all, torch imported")
    print(f"# Totals: pass:{n - failed - skipped} fail:{failed} xfail:0 xpass:0 skip:{skipped} error:0")
    sys.exit(1 if failed else 0)


def wsectl(*args):
    r = subprocess.run(["wsectl", *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def loader(split, count, shuffle=False):
    x = read_idx(f"{FMNIST}/{split}-images-idx3-ubyte.gz")[:count]
    y = read_idx(f"{FMNIST}/{split}-labels-idx1-ubyte.gz")[:count]
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    ds = torch.utils.data.TensorDataset(x, torch.from_numpy(y.astype(np.int64)))
    return torch.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=shuffle)


def torch_accuracy(model, test):
    model.eval()
    right = total = 0
    with torch.no_grad():
        for x, y in test:
            right += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return right / total


def save_for_host(name, model, result):
    """@model's state_dict and @result (what the device measured) in
    $WSETRAIN_RUNS/python-fit/, where the host's python_host_eval reads
    them after the guest: no run.json there, so rundir_test passes it by."""
    runs = os.environ.get("WSETRAIN_RUNS")
    if not runs or not os.path.isdir(runs):
        print(f"# no shared runs directory: the host cannot check the {name} (tools/wsevm --runs DIR)")
        return
    out = os.path.join(runs, "python-fit")
    os.makedirs(out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(out, f"{name}.pt"))
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(result, f, indent=1)


def attach(addr):
    """Attaches the firmware at @addr (tcp:HOST:PORT) unless a device
    already has it as its peer; returns (index, whether attached here)."""
    def find():
        return next((d["index"] for d in wse.devices(parts=False) if d["link"] == "up" and
                     (d["peer"].endswith(addr.split(":", 1)[1]) or addr.endswith(d["peer"]))), None)
    index = find()
    if index is not None:
        return index, False
    rc, out, err = wsectl("attach", addr)
    check(f"wsectl attach {addr}", rc == 0, err)
    return find(), True


# --- a device -----------------------------------------------------------------
attached = []
with open("/wse/fw-addrs") as f:
    addrs = f.read().split()
if not any(d["link"] == "up" for d in wse.devices(parts=False)) and addrs:
    index, new = attach(addrs[0])
    if new:
        attached.append(index)
dev = next(d for d in wse.devices(parts=False) if d["link"] == "up")

rc, out, err = wsectl("-j", "list")
check("wse.devices(parts=False) is what wsectl -j list says", rc == 0 and json.loads(out) == wse.devices(parts=False),
      f"wsectl: {out} {err}; wse: {wse.devices(parts=False)}")
rc, out, err = wsectl("-j", "info", str(dev["index"]))
check(f"wse.device({dev['index']}) is what wsectl -j info says", rc == 0 and json.loads(out) == wse.device(dev["index"]),
      f"wsectl: {out} {err}; wse: {wse.device(dev['index'])}")
rc, out, err = wsectl("info", "99")
try:
    wse.device(99)
    check("wse.device(99) raises WseError", False, "no exception")
except wse.WseError as e:
    print(f"# wse.device(99): {e}")
    check("wse.device(99) raises WseError with the errno and kernel message wsectl info 99 prints",
          rc != 0 and os.strerror(e.errno) in err and e.message and e.message in err, f"{e!r} / wsectl: {err}")


def cnn_part(dev):
    """The CNN: wse.fit, the module back in PyTorch, evaluate, predict,
    checkpoints both ways, and wsetrain alone on the same program."""
    # --- refused before anything runs ------------------------------------------------
    m = cnn_fashion.CNN()
    try:
        wse.fit(m, optimizer=torch.optim.RMSprop(m.parameters()), data=loader("train", 64), model_dir="/tmp/never")
        check("RMSprop is refused", False, "accepted")
    except wse.UnsupportedError as e:
        check("RMSprop is refused, saying why, and no run directory is made",
              "RMSprop" in str(e) and not os.path.exists("/tmp/never"), e)

    # --- fit ------------------------------------------------------------------------
    torch.manual_seed(1)
    model = cnn_fashion.CNN()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    train, test = loader("train", TRAIN, shuffle=True), loader("t10k", TEST)
    # A directory of its own, removed at the end: not WSETRAIN_RUNS, whose
    # run directories the host's rundir_test draws afterwards.
    tmp = tempfile.mkdtemp(prefix="python-fit-")
    model_dir = os.path.join(tmp, "run")
    seen = []
    t0 = time.monotonic()
    run = wse.fit(model, loss="cross_entropy", optimizer=torch.optim.AdamW(model.parameters(), lr=1e-3),
                  data=train, eval_data=test, epochs=1, execution_mode="pipelined",
                  model_dir=model_dir, device=dev["index"], callback=seen.append, quiet=False)
    fit_s = time.monotonic() - t0
    final = run.final
    check("wse.fit trains: run.json's final has a test accuracy above 0.6",
          final.get("test_accuracy", 0) > 0.6, final)
    check("run.metrics holds train and test rows from metrics.csv",
          any(r["kind"] == "train" for r in run.metrics) and any(r["kind"] == "test" for r in run.metrics),
          run.metrics[:3])
    check("the callback saw the progress lines", any(p["kind"] == "train" for p in seen)
          and any(p["kind"] == "eval" for p in seen), seen[:3])
    check("the model holds new weights", any(not torch.equal(before[k], v) for k, v in model.state_dict().items()))
    acc = torch_accuracy(model, test)
    print(f"# device test accuracy {final['test_accuracy']:.6f}, PyTorch's of the returned model {acc:.6f}")
    check("the returned model in plain PyTorch scores the device's test accuracy to 1e-4",
          abs(acc - final["test_accuracy"]) <= 1e-4, f"{acc} vs {final['test_accuracy']}")
    # For the host (tests/host/python_host_eval.py, after the guest): the
    # returned weights and what the device measured, in the shared runs/.
    save_for_host("cnn", model, {"test_accuracy": final["test_accuracy"], "test_samples": TEST,
                                 "train_samples": TRAIN, "batch": BATCH, "guest_pytorch_accuracy": acc})

    t0 = time.monotonic()
    ev = wse.evaluate(model, test, device=dev["index"])
    eval_s = time.monotonic() - t0
    check("wse.evaluate on the device agrees with PyTorch to 1e-4", abs(ev["accuracy"] - acc) <= 1e-4
          and ev["samples"] == TEST, ev)

    x, _ = next(iter(test))
    logits = wse.predict(model, x, device=dev["index"])
    with torch.no_grad():
        want = model(x)
    check("wse.predict's logits are PyTorch's (1e-3)", logits.shape == want.shape
          and torch.allclose(logits, want, atol=1e-3, rtol=1e-3), (logits - want).abs().max())

    # --- checkpoints ----------------------------------------------------------------
    with torch.no_grad():
        model.classifier[3].bias[0] += 2.0     # weights of its own, not the run's: class 0 wins more
    changed = torch_accuracy(model, test)
    saved = os.path.join(model_dir, "python-saved.ckpt")
    wse.save_checkpoint(model, saved)
    r = subprocess.run(["wsetrain", run.program, "--eval", saved, "--data", os.path.join(model_dir, "data"),
                        "--devices", str(dev["index"])], capture_output=True, text=True)
    m = re.search(r"^eval: .* accuracy ([0-9.]+)", r.stdout, re.M)
    print(f"# after bias[0] += 2: PyTorch {changed:.4f}, wsetrain --eval of save_checkpoint's file "
          f"{m.group(1) if m else '?'}")
    check("wsetrain --eval reads save_checkpoint's file: PyTorch's accuracy of the changed weights to 1e-4",
          r.returncode == 0 and m and abs(float(m.group(1)) - changed) <= 1e-4 and abs(changed - acc) > 1e-3,
          r.stdout[-800:] + r.stderr[-800:])
    ev = wse.evaluate(model, test, device=dev["index"])
    check("wse.evaluate of the changed weights agrees with PyTorch to 1e-4", abs(ev["accuracy"] - changed) <= 1e-4, ev)
    fresh = cnn_fashion.CNN()
    wse.load_checkpoint(saved, fresh)
    check("load_checkpoint reads it back into a fresh CNN bit for bit",
          all(torch.equal(v, model.state_dict()[k]) for k, v in fresh.state_dict().items()))

    # --- wsetrain on the same program and data, for the time ----------------------------
    cmp_dir = tempfile.mkdtemp(prefix="wsetrain-same-")
    t0 = time.monotonic()
    r = subprocess.run(["wsetrain", run.program, "--model_dir", cmp_dir, "--data", os.path.join(model_dir, "data"),
                        "--epochs", "1", "--devices", str(dev["index"]), "--progress", "lines"],
                       capture_output=True, text=True)
    wsetrain_s = time.monotonic() - t0
    with open(os.path.join(cmp_dir, "run.json")) as f:
        same = json.load(f).get("final", {})
    check("wsetrain on the same program and data reaches the same test accuracy",
          r.returncode == 0 and same.get("test_accuracy") == final["test_accuracy"], (same, final))
    print(f"# times: wse.fit {fit_s:.1f} s (export, compile, data, train, load), wsetrain alone "
          f"{wsetrain_s:.1f} s; wse.evaluate {eval_s:.1f} s")
    shutil.rmtree(cmp_dir, ignore_errors=True)

    shutil.rmtree(tmp, ignore_errors=True)


def run_example(name, args):
    """examples/python/NAME.py with @args, as a user runs it: (its output, the exception it ended with)."""
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"python_example_{name}.py")
    saved_argv, out = sys.argv, io.StringIO()
    sys.argv = [example, *args]
    ex_error = None
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(example, run_name="__main__")
    except SystemExit as e:
        ex_error = e if e.code not in (None, 0) else None
    except Exception as e:     # the check says what went wrong
        ex_error = e
    finally:
        sys.argv = saved_argv
    print("\n".join(f"# {name}: " + line for line in out.getvalue().splitlines()))
    return out, ex_error


def example_part(dev):
    """examples/python/train_cnn.py and compare_wsetrain.py, as a user runs them."""
    # --- examples/python/train_cnn.py, as a user runs it -------------------------------
    ex_dir = tempfile.mkdtemp(prefix="python-example-")
    out, ex_error = run_example("train_cnn", ["--train", "1024", "--test", "500", "--batch", "64", "--model-dir",
                                              os.path.join(ex_dir, "run"), "--device", str(dev["index"])])
    m = re.search(r"^test accuracy: device ([0-9.]+), PyTorch on the returned model ([0-9.]+)$", out.getvalue(), re.M)
    check("examples/python/train_cnn.py runs, and PyTorch scores its returned model as the device did",
          ex_error is None and m and m.group(1) == m.group(2) and float(m.group(1)) > 0.3,
          f"{ex_error!r}: {out.getvalue()[-800:]}")
    # --- examples/python/compare_wsetrain.py, small ---------------------------------------
    out, ex_error = run_example("compare_wsetrain", ["--train", "512", "--test", "256", "--batch", "64",
                                                     "--device", str(dev["index"]), "--dir", ex_dir])
    fit_acc = re.search(r"^wse.fit: .* test accuracy ([0-9.]+) .*PyTorch on the returned model ([0-9.]+)$",
                        out.getvalue(), re.M)
    own_acc = re.search(r"^wsecc \+ wsetrain: .* test accuracy ([0-9.]+) ", out.getvalue(), re.M)
    check("examples/python/compare_wsetrain.py: wse.fit and wsecc + wsetrain reach the same test accuracy, "
          "PyTorch scores the returned model so",
          ex_error is None and fit_acc and own_acc and fit_acc.group(1) == own_acc.group(1) == fit_acc.group(2)
          and float(fit_acc.group(1)) > 0.3, f"{ex_error!r}: {out.getvalue()[-800:]}")
    shutil.rmtree(ex_dir, ignore_errors=True)


def gpt_text_part(gpt, corpus, gfinal, ap_index):
    """wse.evaluate and wse.predict of the trained GPT, on the appliance."""
    t0 = time.monotonic()
    ev = wse.evaluate(gpt, corpus, device=ap_index)
    eval_s = time.monotonic() - t0
    print(f"# GPT: wse.evaluate {eval_s:.1f} s: {ev}")
    check("wse.evaluate of the GPT on its TextCorpus is the run's own validation loss and accuracy (1e-4)",
          ev["samples"] > 0 and abs(ev["loss"] - gfinal.get("test_loss", 99)) <= 1e-4
          and abs(ev["accuracy"] - gfinal.get("test_accuracy", 99)) <= 1e-4, f"{ev} vs {gfinal}")
    # Three windows of the corpus's start, as token ids.
    with open(FORTUNES[0], "rb") as f:
        ids = torch.tensor(gpt_data.char_ids(f.read(3 * GPT["context"])), dtype=torch.long)
    rows = ids.view(3, GPT["context"])
    t0 = time.monotonic()
    nexts = wse.predict(gpt, rows, device=ap_index)
    predict_s = time.monotonic() - t0
    gpt.eval()
    with torch.no_grad():
        want = gpt(rows).argmax(-1)
    same = (nexts == want).float().mean().item() if nexts.shape == want.shape else 0.0
    print(f"# GPT: wse.predict {predict_s:.1f} s: {same:.4f} of the next tokens are PyTorch's argmax")
    check("wse.predict of token ids gives PyTorch's likeliest next tokens (>= 99% of positions)",
          nexts.dtype == torch.int64 and same >= 0.99, f"{nexts.shape} {same}")
    # Greedy characters after a prompt: wsetrain --sample at temperature 0,
    # against the same rule in PyTorch (the last window, zeros after it).
    prompt = ids[:5]
    t0 = time.monotonic()
    drawn = wse.predict(gpt, prompt, sample=12, temperature=0, device=ap_index)
    sample_s = time.monotonic() - t0
    seq = prompt.tolist()
    with torch.no_grad():
        for _ in range(12):
            have = min(len(seq), GPT["context"])
            x = torch.zeros(1, GPT["context"], dtype=torch.long)
            x[0, :have] = torch.tensor(seq[-have:])
            seq.append(int(gpt(x)[0, have - 1].argmax()))
    print(f"# GPT: wse.predict(sample=12) {sample_s:.1f} s: {drawn.tolist()} (PyTorch {seq[5:]})")
    check("wse.predict(sample=12, temperature=0) draws PyTorch's greedy tokens",
          drawn.tolist() == seq[5:], f"{drawn.tolist()} vs {seq[5:]}")


def gpt_part():
    """The GPT by weight streaming on an appliance of two systems."""
    # --- the GPT by weight streaming on an appliance of two systems ---------------------
    try:
        with open("/wse/appliance-addr") as f:
            appliance_addr = f.read().strip()
    except FileNotFoundError:
        appliance_addr = None
    if appliance_addr is None:
        skip("wse.fit of the GPT on an appliance of two systems", "no appliance (tools/wsevm --appliance 2)")
    else:
        ap_index, new = attach(appliance_addr)
        if new:
            attached.append(ap_index)
        ap = wse.device(ap_index)
        check(f"device {ap_index} is an appliance of two systems", ap.get("appliance", {}).get("systems") == 2,
              ap.get("appliance"))
        torch.manual_seed(1)
        gpt = gpt_chars.GPT(gpt_data.VOCAB, GPT["blocks"], GPT["width"], GPT["heads"], GPT["context"], 0.0)
        gpt_before = {k: v.clone() for k, v in gpt.state_dict().items()}
        corpus = wse.TextCorpus(FORTUNES, batch_size=GPT["batch"], context=GPT["context"])
        gpt_dir = os.path.join(tempfile.mkdtemp(prefix="python-gpt-"), "run")
        t0 = time.monotonic()
        gpt_run = wse.fit(gpt, optimizer=torch.optim.AdamW(gpt.parameters(), lr=GPT["lr"]), data=corpus,
                          steps=GPT["steps"], execution_mode="weight_streaming", systems=2,
                          model_dir=gpt_dir, device=ap_index, seed=1, quiet=False)
        gpt_fit_s = time.monotonic() - t0
        gfinal = gpt_run.final
        print(f"# GPT: wse.fit {gpt_fit_s:.1f} s; validation loss {gfinal.get('test_loss')}, "
              f"accuracy {gfinal.get('test_accuracy')}")
        with open(os.path.join(gpt_dir, "run.json")) as f:
            info = json.load(f)
        check("run.json: the GPT trained by weight streaming on both systems",
              info.get("mode") == "weight_streaming" and info.get("systems") == 2,
              {k: info.get(k) for k in ("mode", "systems", "final")})
        check(f"its validation loss fell below the uniform guess's ln 96 = 4.56 in {GPT['steps']} steps",
              0 < gfinal.get("test_loss", 99) < 4.3, gfinal)
        check("the GPT module holds new weights",
              any(not torch.equal(gpt_before[k], v) for k, v in gpt.state_dict().items()))
        gpt_text_part(gpt, corpus, gfinal, ap_index)
        save_for_host("gpt", gpt, {**GPT, "text": FORTUNES, "test_loss": gfinal.get("test_loss"),
                                   "test_accuracy": gfinal.get("test_accuracy")})
        shutil.rmtree(os.path.dirname(gpt_dir), ignore_errors=True)


if "cnn" in PARTS:
    cnn_part(dev)
if "gpt" in PARTS:
    example_part(dev)
    gpt_part()

for index in attached:
    rc, out, err = wsectl("detach", str(index))
    check(f"wsectl detach {index}", rc == 0, err)
finish()
