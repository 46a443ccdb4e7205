"""SafeBranch training (paper §4.1-4.2, Eq. 5, App. A Table 5): SFT warm-up, then BranchPO.

* SFT on the chosen side of the final pairs *plus the replay steps* of corrected episodes that
  ended safe and successful (D.5; y+ alone collapses a small actor: FIELD_NOTES part 3).
* BranchPO = TRL's DPO loss on the branch pairs with ``beta`` from params and the reference model
  = the frozen SFT checkpoint. ``sft:`` / ``branchpo:`` params are ``SFTConfig`` / ``DPOConfig`` fields.
Both continue from an actor dir and write an actor dir (same tokenizer, profile, generation config).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..actors.hf import PROFILE_FILE

Log = Callable[[dict[str, float], int], None]
_COMMON = {"use_cpu": True, "bf16": False, "gradient_checkpointing": False, "report_to": "none",
           "save_strategy": "no", "dataloader_num_workers": 0}


def _callback(log: Log | None, prefix: str) -> Any:
    from transformers import TrainerCallback

    class _Log(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any) -> None:
            if log and logs:
                log({f"{prefix}/{k}": float(v) for k, v in logs.items() if isinstance(v, int | float)}, state.global_step)

    return _Log()


def _save(model: Any, tokenizer: Any, source: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    model.generation_config = type(model.generation_config).from_pretrained(source)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    shutil.copy(source / PROFILE_FILE, out / PROFILE_FILE)


def sft_rows_to_dataset(rows: Sequence[dict[str, Any]]) -> Any:
    """``messages`` rows -> prompt/completion, so the loss is on the assistant turn only."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": r["messages"][:-1], "completion": r["messages"][-1:]} for r in rows])


def train_sft(base: str | os.PathLike[str], rows: Sequence[dict[str, Any]], out: str | os.PathLike[str],
              sft: dict[str, Any], seed: int, log: Log | None = None) -> dict[str, float]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    base, out = Path(base), Path(out)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(base)
    args = SFTConfig(output_dir=str(out.parent / f".{out.name}.trainer"), seed=seed, **{**_COMMON, **sft})
    trainer = SFTTrainer(model=model, args=args, train_dataset=sft_rows_to_dataset(rows), processing_class=tok,
                         callbacks=[_callback(log, "sft")])
    t0 = time.time()
    result = trainer.train()
    _save(trainer.model, tok, base, out)
    return {"sft/loss": float(result.training_loss), "sft/seconds": time.time() - t0, "sft/examples": float(len(rows))}


def train_branchpo(sft_dir: str | os.PathLike[str], pairs: Sequence[dict[str, Any]], out: str | os.PathLike[str],
                   dpo: dict[str, Any], seed: int, log: Log | None = None) -> dict[str, float]:
    """DPO on branch pairs; the reference is a frozen copy of the SFT checkpoint (Eq. 5)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    sft_dir, out = Path(sft_dir), Path(out)
    torch.manual_seed(seed)
    policy = AutoModelForCausalLM.from_pretrained(sft_dir, dtype=torch.float32)
    ref = AutoModelForCausalLM.from_pretrained(sft_dir, dtype=torch.float32).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    tok = AutoTokenizer.from_pretrained(sft_dir)
    data = Dataset.from_list([{"prompt": p["prompt"], "chosen": p["chosen"], "rejected": p["rejected"]} for p in pairs])
    args = DPOConfig(output_dir=str(out.parent / f".{out.name}.trainer"), seed=seed, **{**_COMMON, **dpo})
    trainer = DPOTrainer(model=policy, ref_model=ref, args=args, train_dataset=data, processing_class=tok,
                         callbacks=[_callback(log, "dpo")])
    t0 = time.time()
    result = trainer.train()
    _save(trainer.model, tok, sft_dir, out)
    return {"dpo/loss": float(result.training_loss), "dpo/seconds": time.time() - t0, "dpo/pairs": float(len(pairs))}
