"""Evaluate a scripted policy or an actor on any folder in IS-Bench layout (ours or a real IS-Bench checkout).

    python -m flows.evaluate_policy --tasks-dir DIR --policy golden --out OUT
    python -m flows.evaluate_policy --tasks-dir DIR --policy actor --model models:/actor@champion --out OUT

``--model`` is a model dir or a registry URI (``models:/<name>@<alias>``, ``models:/<name>/<version>``;
tracking URI from ``safebranch.tracking`` defaults); the actor runs critic-free at T = 0.

``DIR`` holds ``tasks/<name>.json`` and ``bddl/<name>/problem0.bddl``. Writes ``OUT/metrics.json``
(``eval/sr``, ``eval/ssr``, ``eval/srec``, per risk type, ``eval/load_failures``),
``OUT/load_failures.json`` (file, field, reason), ``OUT/episodes.jsonl`` and ``OUT/per_risk.png``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from prefect import flow

from embodied_safety.config import ActorConfig
from embodied_safety.manifest import write_manifest
from tasks.household import evaluate_dir_task


@flow(name="evaluate_policy", log_prints=True)
def evaluate_policy(tasks_dir: Path, policy: str, out: Path, seed: int = 0, extra_steps: int = 10,
                    model: str | None = None) -> dict[str, object]:
    actor = ActorConfig(model=model) if model else None
    metrics = evaluate_dir_task(tasks_dir, policy, out, seed, extra_steps, actor)
    write_manifest(out, {"tasks_dir": str(tasks_dir), "policy": policy, "model": model, "seed": seed,
                         "extra_steps": extra_steps}, inputs=[tasks_dir])
    print(f"{policy} on {tasks_dir}: SR {metrics['eval/sr']:.3f} SSR {metrics['eval/ssr']:.3f} "
          f"SRec {metrics['eval/srec']:.3f} ({metrics['eval/n_tasks']} tasks, {metrics['eval/load_failures']} load failures)")
    return metrics


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks-dir", type=Path, required=True, help="folder with tasks/ and bddl/ (IS-Bench layout)")
    parser.add_argument("--policy", choices=("golden", "golden_unsafe", "random", "actor"), required=True)
    parser.add_argument("--model", help="with --policy actor: a model dir or models:/<name>@<alias>")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extra-steps", type=int, default=10, help="step budget = golden length + this")
    args = parser.parse_args(argv)
    if (args.policy == "actor") != bool(args.model):
        parser.error("--model goes with --policy actor (and only with it)")
    metrics = evaluate_policy(args.tasks_dir, args.policy, args.out, args.seed, args.extra_steps, args.model)
    print(json.dumps({k: v for k, v in metrics.items() if k in ("eval/sr", "eval/ssr", "eval/srec")}))


if __name__ == "__main__":
    main()
