# SPDX-License-Identifier: GPL-2.0-only
"""A torch optimizer and learning-rate scheduler as the device's: wsecc's
--optimizer, --lr, --momentum, --weight-decay, --warmup, --steps and
--min-lr (Documentation/wsecc.rst). What the device cannot do the same way
is refused with UnsupportedError, saying why; nothing is approximated
silently.

  optimizer_args(optimizer, model)  -> ["--optimizer", "adamw", "--lr", ...]
  scheduler_args(scheduler)         -> ["--warmup", "0", "--steps", "500", ...]
"""
import torch

from .errors import UnsupportedError

# What the device's Adam and AdamW use (lib/engine/optim.c); torch's defaults.
DEVICE_BETAS = (0.9, 0.999)
DEVICE_EPS = 1e-8


def _group(optimizer):
    groups = optimizer.param_groups
    if len(groups) != 1:
        raise UnsupportedError(
            f"{type(optimizer).__name__} has {len(groups)} parameter groups; the device trains "
            "every parameter with one set of hyperparameters: give the optimizer model.parameters()")
    return groups[0]


def _covers(group, model):
    """Every trainable parameter of @model is in @group, and nothing else."""
    if model is None:
        return
    given = {id(p) for p in group["params"]}
    names = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in given]
    if names:
        raise UnsupportedError(
            f"the optimizer does not train {', '.join(names)}; the device trains every parameter "
            "of the export (freezing by name is wsecc --freeze): give it model.parameters()")
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    if frozen:
        raise UnsupportedError(
            f"{', '.join(frozen)} do not require grad; the device would train them: "
            "set requires_grad or compile with wsecc --freeze")


def _refuse_flags(kind, group, flags):
    for flag, default in flags:
        if group.get(flag, default) != default:
            raise UnsupportedError(f"{kind} with {flag}={group[flag]!r}: the device's {kind} "
                                   f"has no {flag} (only {flag}={default!r})")


def optimizer_args(optimizer, model=None):
    """wsecc's options for @optimizer (SGD, SGD with momentum or Nesterov,
    Adam, AdamW), checked against @model's parameters when given."""
    if isinstance(optimizer, str):
        kinds = ("sgd", "momentum", "nesterov", "adam", "adamw")
        if optimizer not in kinds:
            raise UnsupportedError(f"optimizer '{optimizer}': the device has {', '.join(kinds)}")
        return ["--optimizer", optimizer]
    g = _group(optimizer)
    _covers(g, model)
    kind = type(optimizer).__name__
    lr = float(g["lr"])
    wd = float(g.get("weight_decay", 0.0))
    if isinstance(optimizer, torch.optim.SGD):
        _refuse_flags("SGD", g, [("dampening", 0), ("maximize", False)])
        m = float(g.get("momentum", 0.0))
        if g.get("nesterov"):
            args = ["--optimizer", "nesterov", "--momentum", repr(m)]
        elif m:
            args = ["--optimizer", "momentum", "--momentum", repr(m)]
        else:
            args = ["--optimizer", "sgd"]
    elif type(optimizer) in (torch.optim.Adam, torch.optim.AdamW):
        _refuse_flags(kind, g, [("amsgrad", False), ("maximize", False)])
        if tuple(float(b) for b in g["betas"]) != DEVICE_BETAS:
            raise UnsupportedError(f"{kind} with betas={tuple(g['betas'])}: the device's {kind} "
                                   f"uses betas={DEVICE_BETAS}")
        if float(g["eps"]) != DEVICE_EPS:
            raise UnsupportedError(f"{kind} with eps={g['eps']}: the device's {kind} uses eps={DEVICE_EPS}")
        args = ["--optimizer", "adamw" if isinstance(optimizer, torch.optim.AdamW) else "adam"]
    else:
        raise UnsupportedError(f"torch.optim.{kind}: the device has SGD (with momentum or "
                               "Nesterov), Adam and AdamW")
    args += ["--lr", repr(lr), "--weight-decay", repr(wd)]
    return args


def _cosine(s):
    return float(s.T_max), float(s.eta_min)


def scheduler_args(scheduler):
    """wsecc's schedule for @scheduler, counted in optimizer steps (step it
    once a batch in PyTorch for the same schedule): CosineAnnealingLR
    (no warm-up), or SequentialLR of LinearLR (to end_factor 1) then
    CosineAnnealingLR, which is the device's linear warm-up from 0 then
    cosine decay (lib/engine/optim.c)."""
    if scheduler is None:
        return []
    sched = torch.optim.lr_scheduler
    kind = type(scheduler).__name__
    if isinstance(scheduler, sched.CosineAnnealingLR):
        t_max, eta_min = _cosine(scheduler)
        return ["--warmup", "0", "--steps", str(int(t_max)), "--min-lr", repr(eta_min)]
    if isinstance(scheduler, sched.SequentialLR):
        parts = scheduler._schedulers
        if (len(parts) == 2 and isinstance(parts[0], sched.LinearLR)
                and isinstance(parts[1], sched.CosineAnnealingLR)):
            warm = parts[0]
            if float(warm.end_factor) != 1.0 or list(scheduler._milestones) != [warm.total_iters]:
                raise UnsupportedError(
                    "SequentialLR(LinearLR, CosineAnnealingLR): the warm-up must end at factor 1 "
                    "at the milestone, where the cosine starts, as the device's does")
            t_max, eta_min = _cosine(parts[1])
            w = int(warm.total_iters)
            return ["--warmup", str(w), "--steps", str(w + int(t_max)), "--min-lr", repr(eta_min)]
    raise UnsupportedError(
        f"lr_scheduler.{kind}: the device's schedules are a constant rate, CosineAnnealingLR, and "
        "SequentialLR of LinearLR then CosineAnnealingLR (warm-up, then cosine decay)")
