"""Benchmark SFT steps of the bootstrap actor: the two CPU speed-ups against TRL's defaults, same process.

- ``compact``: the fused LM head scores only the labelled (completion) positions on CPU
  (:mod:`embodied_safety.actors.trl_cpu`); TRL scores every position off Triton devices.
- ``group_by_length``: batches of similar length (``train_sampling_strategy``), so less padding.
- ``bucketed``: ``length_bucket: 4`` (:class:`embodied_safety.actors.trl_cpu.BucketedSampler`): random batches
  from length-sorted chunks of 4 batches, most of the padding gone and the batches still random.

Each variant trains a fresh model (same seed, same data: the train split's bootstrap examples) for ``--steps``
optimizer steps and reports seconds per step; the ratios are against the baseline (random batches, full head)
run in the same process. The compact head gives the same loss (``tests/unit/test_trl_cpu.py``) and is on in every
stage; grouping is not: a batch of similar lengths is mostly one task's steps, and a bootstrap actor trained so
reached test SR 0.000 (docs/training.md). Bucketing is on in every SFT stage (test SR 0.736 for the bootstrap actor).

    python benchmarks/actor_training.py [--splits data/household/splits] [--steps 30]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

from embodied_safety.io import write_json


def _steps_per_second(examples: Any, tokenizer: Any, sampling: str, steps: int, bucket: int = 0) -> tuple[float, float]:
    from trl import SFTConfig, SFTTrainer

    from embodied_safety.actors.bootstrap import build_model, sft_dataset
    from embodied_safety.actors.trl_cpu import trainer_with_sampler
    from embodied_safety.config.bootstrap_actor import BootstrapActorConfig
    from embodied_safety.config.shared import ModelShape

    cfg = BootstrapActorConfig()
    shape = ModelShape(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(ModelShape)})
    trainer_cls, sft = trainer_with_sampler(SFTTrainer, {**cfg.sft, "max_steps": steps, "logging_steps": 10_000,
                                                         "train_sampling_strategy": sampling, "length_bucket": bucket})
    args = SFTConfig(output_dir="/tmp/actor_training_bench", use_cpu=True, bf16=False, gradient_checkpointing=False,
                     report_to="none", save_strategy="no", seed=0, dataloader_num_workers=0, disable_tqdm=True, **sft)
    trainer = trainer_cls(model=build_model(tokenizer, shape, 0), args=args, train_dataset=sft_dataset(examples),
                          processing_class=tokenizer)
    t0 = time.perf_counter()
    result = trainer.train()
    return (time.perf_counter() - t0) / steps, float(result.training_loss)


def main() -> None:
    import torch
    from trl.trainer import utils

    from embodied_safety.actors.bootstrap import train_tokenizer, vocabulary_texts
    from embodied_safety.actors.bootstrap_data import DataSettings, bootstrap_examples
    from embodied_safety.actors.trl_cpu import compact_on_cpu
    from embodied_safety.config.bootstrap_actor import BootstrapActorConfig
    from embodied_safety.envs.household.env import load_task_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", default="data/household/splits")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/actor_training.json"))
    args = parser.parse_args()
    torch.set_num_threads(2)
    cfg = BootstrapActorConfig()
    tasks, _ = load_task_dir(Path(args.splits) / "train")
    examples = bootstrap_examples(tasks, DataSettings(cfg.drop_prob, cfg.patterns, cfg.seed, "compact", cfg.observation,
                                                      cfg.renamed_fraction, cfg.recovery))
    tokenizer = train_tokenizer(vocabulary_texts(examples))
    full_head = utils._use_triton
    rows: dict[str, dict[str, float]] = {}
    for name, compact, sampling, bucket in (("baseline", False, "random", 0), ("compact", True, "random", 0),
                                            ("group_by_length", False, "group_by_length", 0),
                                            ("compact+group_by_length", True, "group_by_length", 0),
                                            ("compact+bucketed", True, "random", 4)):
        utils._use_triton = full_head
        if compact:
            compact_on_cpu()
        s, loss = _steps_per_second(examples, tokenizer, sampling, args.steps, bucket)
        rows[name] = {"seconds_per_step": round(s, 3), "train_loss": round(loss, 4)}
        print(f"{name:>24}: {s:.3f} s/step, loss {loss:.4f}", flush=True)
    utils._use_triton = full_head
    base = rows["baseline"]["seconds_per_step"]
    for row in rows.values():
        row["speedup_vs_baseline"] = round(base / row["seconds_per_step"], 2)
    result = {"examples": len(examples), "steps": args.steps, "variants": rows}
    print({k: v["speedup_vs_baseline"] for k, v in rows.items()})
    write_json(args.out, result)


if __name__ == "__main__":
    main()
