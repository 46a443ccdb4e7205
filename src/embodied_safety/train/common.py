"""What every training variant shares: model loading (full or PEFT LoRA), logging, dev-split
checkpoint selection (paper F.5) and saving a usable actor dir.

* ``peft=None`` fine-tunes every weight; a dict is a ``peft.LoraConfig`` (r 16, alpha 32, dropout
  0.05 by default in params). A LoRA adapter is merged before saving, so every saved actor is a
  plain model dir that the rollout and evaluation stages load unchanged.
* Checkpoint selection: the critic-free actor is evaluated on the dev split every ``every``
  optimizer steps and at the end; the rule of ``evaluation.selection`` (max SSR subject to SR >= ``sr_floor``,
  else max SR, flagged) ranks the points, and the *latest* point that is not significantly worse than the top one
  (``selection.not_worse``: a paired test on the per-task dev outcomes) is kept in memory and is what gets saved.
  Step 0 (the starting checkpoint) is on the curve but is not a candidate.
* Placement: CPU by default; ``use_cpu: false`` in the TRL params lets accelerate pick the GPU
  when there is one (same code).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actors.hf import PROFILE_FILE, HFActor, read_profile
from ..actors.trl_cpu import compact_on_cpu
from ..evaluation.selection import OUTCOMES, Outcomes, pick_checkpoint, qualifies

Log = Callable[[dict[str, float], int], None]
# critic-free actor -> {"sr", "ssr", "srec", ...}, optionally selection.OUTCOMES: per-task 0/1 lists
Evaluate = Callable[[HFActor], dict[str, Any]]
COMMON = {"use_cpu": True, "bf16": False, "gradient_checkpointing": False, "report_to": "none",
          "save_strategy": "no", "dataloader_num_workers": 0}


def trl_args(cls: type, out: Path, seed: int, params: dict[str, Any]) -> Any:
    """``SFTConfig`` / ``DPOConfig`` from params (TRL field names), scratch output beside ``out``; on CPU the trainer's
    LM head scores only the labelled positions (:func:`..actors.trl_cpu.compact_on_cpu`)."""
    compact_on_cpu()
    return cls(output_dir=str(out.parent / f".{out.name}.trainer"), seed=seed, **{**COMMON, **params})


def load_trainable(start: str | os.PathLike[str], peft: dict[str, Any] | None) -> tuple[Any, Any]:
    """(model, tokenizer) from an actor dir; with ``peft`` the model is wrapped in a fresh LoRA adapter."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(start, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(start)
    if peft:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(task_type="CAUSAL_LM", **{"target_modules": "all-linear", **peft}))
    return model, tok


def save_actor(model: Any, tokenizer: Any, source: Path, out: Path) -> None:
    """Merge a LoRA adapter if any, then write model + tokenizer + profile + generation config."""
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    tmp = out.parent / f".{out.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.generation_config = type(model.generation_config).from_pretrained(source)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    shutil.copy(source / PROFILE_FILE, tmp / PROFILE_FILE)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


@dataclass
class Selector:
    """Dev-split checkpoint selection: evaluate every ``every`` steps; ``top`` is the best point by ``selection.rank``,
    ``best`` (the one kept and saved) the latest point not significantly worse than ``top`` (``selection.not_worse``).
    Online, this is the same choice as taking it over the finished curve: a new top is always the latest point."""

    evaluate: Evaluate | None
    every: int
    source: Path  # actor dir the tokenizer / profile come from
    log: Log | None = None
    prefix: str = "dev"
    sr_floor: float | None = None  # dev SR a selected checkpoint must keep (None: plain SSR, then SR)
    curve: list[dict[str, float]] = field(default_factory=list)
    best: dict[str, float] | None = None
    top: dict[str, float] | None = None
    _candidates: list[tuple[dict[str, float], Outcomes | None]] = field(default_factory=list)
    _state: dict[str, Any] | None = None

    def step(self, model: Any, step: int, final: bool = False) -> None:
        if self.evaluate is None or (not final and step % self.every) or any(p["step"] == step for p in self.curve):
            return
        from transformers import AutoTokenizer

        was_training = model.training
        actor = HFActor.from_loaded(model, AutoTokenizer.from_pretrained(self.source), read_profile(self.source))
        metrics = dict(self.evaluate(actor))
        outcomes = metrics.pop(OUTCOMES, None)
        point = {"step": float(step), **{k: float(v) for k, v in metrics.items()}}
        model.train(was_training)
        self.curve.append(point)
        if self.log:
            self.log({f"{self.prefix}/{k}": v for k, v in point.items() if k != "step"}, step)
        if step <= 0:
            return
        self._candidates.append((point, outcomes))
        kept, top = pick_checkpoint(self._candidates, self.sr_floor)
        self.top = self._candidates[top][0]
        if kept == len(self._candidates) - 1:  # the choice only ever moves to the newest point
            self.best = point
            self._state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def restore_best(self, model: Any) -> None:
        if self._state is not None:
            model.load_state_dict(self._state)

    def summary(self) -> dict[str, float]:
        if self.best is None:
            return {}
        flags = {} if self.sr_floor is None else {"sr_floor": self.sr_floor,
                                                  "below_floor": float(not qualifies(self.best, self.sr_floor))}
        if self.top is not None:
            flags["top_step"] = self.top["step"]  # the top-ranked point; best_step is the one kept
        return {f"{self.prefix}/best_{k}": v for k, v in self.best.items()} | {f"{self.prefix}/{k}": v for k, v in flags.items()}


@dataclass(frozen=True)
class TrainResult:
    metrics: dict[str, float]
    curve: list[dict[str, float]]  # dev-split points {"step", "sr", "ssr", "srec", ...}; empty without selection


def finish(model: Any, tokenizer: Any, start: Path, out: Path, selector: Selector,
           metrics: dict[str, float]) -> TrainResult:
    """Every phase ends the same way: restore the dev-selected state, save the actor dir, report."""
    selector.restore_best(model)
    save_actor(model.to("cpu"), tokenizer, start, out)
    return TrainResult({**metrics, **selector.summary()}, selector.curve)


def run_trl(trainer: Any, tokenizer: Any, start: Path, out: Path, selector: Selector, prefix: str,
            counts: dict[str, float]) -> TrainResult:
    """Train a TRL trainer built with ``trainer_callbacks(..., selector)`` and ``finish``."""
    t0 = time.time()
    result = trainer.train()
    return finish(trainer.model, tokenizer, start, out, selector, {
        f"{prefix}/loss": float(result.training_loss), f"{prefix}/seconds": time.time() - t0,
        **{f"{prefix}/{k}": v for k, v in counts.items()}, f"{prefix}/steps": float(result.global_step)})


def trainer_callbacks(log: Log | None, prefix: str, selector: Selector) -> list[Any]:
    """HF ``TrainerCallback``s: metric logging under ``prefix/`` and the dev-split selector."""
    from transformers import TrainerCallback

    class _Log(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any) -> None:
            if log and logs:
                log({f"{prefix}/{k}": float(v) for k, v in logs.items() if isinstance(v, int | float)}, state.global_step)

    class _Select(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            selector.step(model, 0)

        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            selector.step(model, state.global_step)

        def on_train_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            selector.step(model, state.global_step, final=True)

    return [_Log(), _Select()]
