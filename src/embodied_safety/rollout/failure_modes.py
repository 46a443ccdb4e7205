"""How an actor's episodes fail: repeat loops, missing ``DONE()``, the rest (docs/training.md).

SR alone does not say why a fine-tuned actor loses tasks its base solved. This counts, over the failed episodes of
a critic-free evaluation (:func:`.actor_eval.evaluate_actor`, the stage's evaluator), those that emit one action
``repeat`` times in a row (a loop that runs to the step limit) and those that never say ``DONE()``. With ``--lost``
it also lists, per later model, the tasks the first model solves and it fails, with both action sequences
(docs/training.md).

    python -m embodied_safety.rollout.failure_modes --split data/household/splits/test \\
        models/bootstrap_actor/model models/safebranch/seed0/sft-sft-lr0.001
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def has_repeat(actions: Sequence[str], repeat: int = 3) -> bool:
    """Whether one action occurs ``repeat`` (≥ 1) times in a row."""
    return any(len(set(actions[i:i + repeat])) == 1 for i in range(len(actions) - repeat + 1))


def failure_modes(results: Sequence[Any], repeat: int = 3) -> dict[str, float]:
    """Counts over episode results (``success``, ``actions``): episodes, SR, failures, failures with a repeat loop,
    failures without ``DONE()`` at the end, successes with a repeat loop."""
    failed = [r for r in results if not r.success]
    return {"episodes": float(len(results)),
            "sr": sum(bool(r.success) for r in results) / max(len(results), 1),
            "failures": float(len(failed)),
            "failures_with_repeat": float(sum(has_repeat(r.actions, repeat) for r in failed)),
            "failures_without_done": float(sum(not r.actions or r.actions[-1] != "DONE()" for r in failed)),
            "successes_with_repeat": float(sum(has_repeat(r.actions, repeat) for r in results if r.success))}


def lost_tasks(reference: Sequence[Any], other: Sequence[Any]) -> list[dict[str, Any]]:
    """The episodes (aligned by task) that ``reference`` solves and ``other`` fails: task, both action sequences."""
    return [{"task": str(a.task), "reference": list(a.actions), "other": list(b.actions)}
            for a, b in zip(reference, other, strict=True) if a.success and not b.success]


def main(argv: Sequence[str] | None = None) -> None:
    from ..actors.hf import HFActor
    from ..envs.household.env import load_task_dir
    from .actor_eval import evaluate_actor

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="actor dirs (HF model dirs)")
    parser.add_argument("--split", type=Path, default=Path("data/household/splits/test"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lost", action="store_true", help="list the tasks the first model solves and a later one fails")
    args = parser.parse_args(argv)
    tasks = load_task_dir(args.split)[0]
    first: Sequence[Any] = ()
    for model in args.models:
        _, results = evaluate_actor(tasks, HFActor(model, batch_size=64))
        print(model, json.dumps({k: round(v, 3) for k, v in failure_modes(results, args.repeat).items()}))
        if args.lost and first:
            for row in lost_tasks(first, results):
                print("  lost", json.dumps(row))
        first = first or results


if __name__ == "__main__":
    main()
