"""Evaluate a scripted policy on a directory of tasks and write metrics, episodes and a plot."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..envs.household.env import CompiledTask, LoadFailure
from ..io import write_json, write_jsonl
from .episode import EpisodeResult, run_episode
from .household_metrics import household_metrics, per_risk_counts
from .plots import plot_per_risk
from .scripted import ScriptedPolicy, make_policy


def evaluate_scripted(compiled: Sequence[CompiledTask], policy: ScriptedPolicy, seed: int = 0,
                      extra_steps: int = 10) -> list[EpisodeResult]:
    return [run_episode(c, make_policy(policy, c, seed=seed + i), extra_steps) for i, c in enumerate(compiled)]


def write_evaluation(out: str | os.PathLike[str], results: Sequence[EpisodeResult],
                     failures: Sequence[LoadFailure], title: str) -> dict[str, object]:
    """``out/metrics.json`` (``eval/...`` + load failures), ``episodes.jsonl``, ``per_risk.png``."""
    out = Path(out)
    metrics: dict[str, object] = dict(household_metrics(results))
    metrics["eval/load_failures"] = len(failures)
    write_jsonl(out / "episodes.jsonl", (r.to_json() for r in results))
    write_json(out / "load_failures.json", [f.to_json() for f in failures])
    plot_per_risk(per_risk_counts(results), out / "per_risk.png", title)
    write_json(out / "metrics.json", metrics)
    return metrics
