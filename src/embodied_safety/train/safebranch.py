"""SafeBranch training (paper §4.1-4.2, Eq. 5, App. A Table 5): SFT warm-up, then BranchPO.

* SFT on the chosen side of the final pairs *plus the surrounding golden trajectory* of every train
  task (D.5; ``variants.datasets`` builds the mixture; y+ alone collapses a small actor).
* BranchPO = TRL's DPO loss on the branch pairs with ``beta`` from params and the reference model
  = the frozen starting checkpoint (the SFT checkpoint in SafeBranch, Eq. 5; the base actor in
  BranchPO-only). ``sft:`` / ``branchpo:`` params are ``SFTConfig`` / ``DPOConfig`` fields; an NLL
  term on the chosen side (RPO) is ``loss_type: [sigmoid, sft]`` with ``loss_weights: [1, alpha]``.
* ``sr_floor``: the dev SR a selected checkpoint must keep (``selection``).
Both continue from an actor dir and write an actor dir (same tokenizer, profile, generation config),
the dev-selected checkpoint when an ``evaluate`` function is given (``common.Selector``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..actors.trl_cpu import trainer_with_sampler
from .common import Evaluate, Log, Selector, TrainResult, load_trainable, run_trl, trainer_callbacks, trl_args


def sft_rows_to_dataset(rows: Sequence[dict[str, Any]]) -> Any:
    """``messages`` rows -> prompt/completion, so the loss is on the assistant turn only."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": r["messages"][:-1], "completion": r["messages"][-1:]} for r in rows])


def train_sft(start: str | os.PathLike[str], rows: Sequence[dict[str, Any]], out: str | os.PathLike[str],
              sft: dict[str, Any], seed: int, log: Log | None = None, peft: dict[str, Any] | None = None,
              evaluate: Evaluate | None = None, eval_every: int = 0, sr_floor: float | None = None) -> TrainResult:
    import torch
    from trl import SFTConfig, SFTTrainer

    start, out = Path(start), Path(out)
    torch.manual_seed(seed)
    model, tok = load_trainable(start, peft)
    selector = Selector(evaluate, eval_every, start, log, "sft_dev", sr_floor)
    trainer_cls, sft = trainer_with_sampler(SFTTrainer, sft)  # length_bucket: trl_cpu.BucketedSampler
    trainer = trainer_cls(model=model, args=trl_args(SFTConfig, out, seed, sft), train_dataset=sft_rows_to_dataset(rows),
                          processing_class=tok, callbacks=trainer_callbacks(log, "sft", selector))
    return run_trl(trainer, tok, start, out, selector, "sft", {"examples": float(len(rows))})


def train_branchpo(start: str | os.PathLike[str], pairs: Sequence[dict[str, Any]], out: str | os.PathLike[str],
                   dpo: dict[str, Any], seed: int, log: Log | None = None, peft: dict[str, Any] | None = None,
                   evaluate: Evaluate | None = None, eval_every: int = 0, sr_floor: float | None = None) -> TrainResult:
    """DPO on branch pairs; the reference is a frozen copy of ``start`` (Eq. 5).

    With LoRA the reference is the adapter-disabled model, i.e. ``start`` itself (TRL's PEFT path).
    """
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import DPOConfig, DPOTrainer

    start, out = Path(start), Path(out)
    torch.manual_seed(seed)
    policy, tok = load_trainable(start, peft)
    ref = None
    if not peft:
        ref = AutoModelForCausalLM.from_pretrained(start, dtype=torch.float32).eval()
        for p in ref.parameters():
            p.requires_grad_(False)
    data = Dataset.from_list([{"prompt": p["prompt"], "chosen": p["chosen"], "rejected": p["rejected"]} for p in pairs])
    selector = Selector(evaluate, eval_every, start, log, "dpo_dev", sr_floor)
    trainer = DPOTrainer(model=policy, ref_model=ref, args=trl_args(DPOConfig, out, seed, dpo), train_dataset=data,
                         processing_class=tok, callbacks=trainer_callbacks(log, "dpo", selector))
    return run_trl(trainer, tok, start, out, selector, "dpo", {"pairs": float(len(pairs))})
