"""Prefect tasks for the household suite and scripted evaluation."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config.household_suite import HouseholdSuiteConfig
from embodied_safety.config.shared import ActorConfig
from embodied_safety.envs.household.coverage import behavior_coverage
from embodied_safety.envs.household.env import load_task_dir, load_warnings
from embodied_safety.envs.household.episode import ISBENCH_OPTIONS, EpisodeOptions
from embodied_safety.envs.household.suite.generate import generate_suite
from embodied_safety.envs.household.task import HouseholdTask, write_task
from embodied_safety.evaluation.household_eval import (
    NoTasksLoadedError,
    evaluate_scripted,
    write_evaluation,
    write_load_report,
)


@task(name="generate-suite", cache_policy=NO_CACHE)
def generate_suite_task(cfg: HouseholdSuiteConfig) -> dict[str, list[HouseholdTask]]:
    return generate_suite(cfg)


@task(name="write-split", cache_policy=NO_CACHE)
def write_split_task(tasks: list[HouseholdTask], root: Path) -> int:
    for t in tasks:
        write_task(t, root)
    return len(tasks)


@task(name="behavior-coverage", cache_policy=NO_CACHE)
def behavior_coverage_task() -> dict[str, object]:
    return behavior_coverage()


@task(name="evaluate-scripted", cache_policy=NO_CACHE)
def evaluate_dir_task(tasks_dir: Path, policy: str, out: Path, seed: int, extra_steps: int,
                      actor: ActorConfig | None = None, options: EpisodeOptions = ISBENCH_OPTIONS) -> dict[str, object]:
    """One shard: a scripted policy, or an actor critic-free at T = 0 (``policy == "actor"``), on one
    IS-Bench-layout folder. A folder in which no task loads is an error (the load report is written)."""
    compiled, failures = load_task_dir(tasks_dir)
    warnings = load_warnings(compiled)
    if not compiled:
        write_load_report(out, failures, warnings)
        raise NoTasksLoadedError(tasks_dir, failures)
    if policy == "actor":
        from embodied_safety.actors.load import load_actor
        from embodied_safety.rollout.actor_eval import evaluate_actor
        from tasks.tracking import resolve_actor

        _, results = evaluate_actor(compiled, load_actor(resolve_actor(actor or ActorConfig())), seed=seed,
                                    extra_steps=extra_steps, options=options)
    else:
        results = evaluate_scripted(compiled, policy, seed, extra_steps, options)  # type: ignore[arg-type]
    return write_evaluation(out, results, failures, f"{policy} on {tasks_dir}", warnings)
