"""Benchmark the hf backend: batched generation (batch 16) vs one context at a time, same process.

Target (issue 3): >= 4x throughput. With ``--collect`` also times the rollouts of the whole train
split at four temperatures through the library (target <= 10 min on 2 cores).

    python benchmarks/actor_generation.py [--model models/bootstrap_actor/model] [--n 64] [--collect]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from embodied_safety.actors.context import build_context
from embodied_safety.actors.hf import HFActor
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.io import write_json
from embodied_safety.rollout.collect import chunks, collect_chunk, shard_specs
from embodied_safety.rollout.runner import RolloutSettings
from embodied_safety.rollout.shards import ShardStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="models/bootstrap_actor/model")
    parser.add_argument("--splits", default="data/household/splits")
    parser.add_argument("--n", type=int, default=64, help="contexts to generate for")
    parser.add_argument("--collect", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/actor_generation.json"))
    args = parser.parse_args()
    tasks, _ = load_task_dir(Path(args.splits) / "train")
    prompts = [build_context(c, c.new_world()).prompt("compact") for c in tasks][: args.n]
    single = HFActor(args.model, batch_size=1)
    batched = HFActor(args.model, batch_size=16)
    batched.generate(prompts[:16])  # warm-up (first call pays allocation)
    t0 = time.perf_counter()
    out_single = single.generate(prompts)
    t_single = time.perf_counter() - t0
    t0 = time.perf_counter()
    out_batched = batched.generate(prompts)
    t_batched = time.perf_counter() - t0
    result: dict[str, object] = {
        "contexts": len(prompts),
        "single_contexts_per_s": round(len(prompts) / t_single, 2),
        "batched16_contexts_per_s": round(len(prompts) / t_batched, 2),
        "speedup_batched_vs_single": round(t_single / t_batched, 2),
        "same_greedy_outputs": sum(a == b for a, b in zip(out_single, out_batched, strict=True)) / len(prompts),
    }
    if args.collect:
        import tempfile

        actor = HFActor(args.model, batch_size=64)
        settings = RolloutSettings()
        specs = shard_specs(tasks, "train", [0.0, 0.3, 0.7, 1.0], 0, "bench", settings)
        store = ShardStore(tempfile.mkdtemp())
        by_name = {c.name: c for c in tasks}
        t0 = time.perf_counter()
        for group in chunks(specs, 64):
            collect_chunk(group, by_name, actor, settings, store)
        result["collect_shards"] = len(specs)
        result["collect_seconds"] = round(time.perf_counter() - t0, 1)
    write_json(args.out, result)
    for k, v in result.items():
        print(f"{k:32s} {v}")


if __name__ == "__main__":
    main()
