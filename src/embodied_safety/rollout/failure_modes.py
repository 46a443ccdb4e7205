"""How an actor's episodes fail: repeat loops, missing ``DONE()``, the rest (docs/training.md).

SR alone does not say why a fine-tuned actor loses tasks its base solved. This counts, over the failed episodes of
a critic-free evaluation (:func:`.actor_eval.evaluate_actor`, the stage's evaluator), those that emit one action
``repeat`` times in a row (a loop that runs to the step limit) and those that never say ``DONE()``. With ``--lost``
it also lists, per later model, the tasks the first model solves and it fails, with both action sequences
(docs/training.md).

    python analysis/failure_modes.py --split data/household/splits/test \\
        models/bootstrap_actor/model models/safebranch/seed0/sft-sft-lr0.001
"""

from __future__ import annotations

from collections.abc import Sequence
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
