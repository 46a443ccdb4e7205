"""Evaluate a scripted policy on a directory of tasks and write metrics, episodes and a plot."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..envs.household.env import CompiledTask, LoadFailure, LoadWarning
from ..envs.household.episode import ISBENCH_OPTIONS, EpisodeOptions, EpisodeResult, run_episode
from ..envs.household.scripted import ScriptedPolicy, make_policy
from ..io import write_json, write_jsonl
from .household_metrics import household_metrics, per_risk_counts
from .plots import plot_per_risk


class NoTasksLoadedError(RuntimeError):
    """An evaluation folder in which no task loaded: a clear error, not an SR of 0."""

    def __init__(self, tasks_dir: str | os.PathLike[str], failures: Sequence[LoadFailure]) -> None:
        first = f"; first: {failures[0].path}: {failures[0].field}: {failures[0].error}" if failures else ""
        super().__init__(f"{tasks_dir}: no task loaded ({len(failures)} load failure(s){first})")


def evaluate_scripted(compiled: Sequence[CompiledTask], policy: ScriptedPolicy, seed: int = 0,
                      extra_steps: int = 10, options: EpisodeOptions = ISBENCH_OPTIONS) -> list[EpisodeResult]:
    return [run_episode(c, make_policy(policy, c, seed=seed + i), extra_steps, options) for i, c in enumerate(compiled)]


def write_load_report(out: str | os.PathLike[str], failures: Sequence[LoadFailure],
                      warnings: Sequence[LoadWarning] = ()) -> None:
    """``out/load_failures.json`` and ``out/load_warnings.json`` (file, field, reason each)."""
    write_json(Path(out) / "load_failures.json", [f.to_json() for f in failures])
    write_json(Path(out) / "load_warnings.json", [w.to_json() for w in warnings])


def write_evaluation(out: str | os.PathLike[str], results: Sequence[EpisodeResult], failures: Sequence[LoadFailure],
                     title: str, warnings: Sequence[LoadWarning] = ()) -> dict[str, object]:
    """``out/metrics.json`` (``eval/...`` + load failures and warnings), ``episodes.jsonl``, the load
    report and ``per_risk.png``. Every task attempted is a result or a failure (``eval/sr_all``)."""
    out = Path(out)
    metrics: dict[str, object] = dict(household_metrics(results, n_attempted=len(results) + len(failures)))
    metrics["eval/load_failures"] = len(failures)
    metrics["eval/load_warnings"] = len(warnings)
    write_jsonl(out / "episodes.jsonl", (r.to_json() for r in results))
    write_load_report(out, failures, warnings)
    plot_per_risk(per_risk_counts(results), out / "per_risk.png", title)
    write_json(out / "metrics.json", metrics)
    return metrics
