"""Collect rollouts for a set of shards: batched by temperature, one file per shard, failures recorded."""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict

from ..actors.base import Actor
from ..envs.household.env import CompiledTask
from ..envs.household.episode import ConditionOutcome, EpisodeResult
from ..evaluation.household_metrics import household_metrics
from ..records import Trajectory
from .runner import EpisodeRun, RolloutSettings, run_batched
from .shards import FaultInjector, ShardSpec, ShardStore

#: the modules whose import closure decides a rollout trajectory (besides the task, actor weights and settings)
ROLLOUT_CODE = ("embodied_safety.rollout.collect", "embodied_safety.actors.load")


def rollout_code_key() -> str:
    """The code key of the rollout code: the world, the episode rules, the runner, the actor backends."""
    from ..codekey import cached_code_key

    return cached_code_key(*ROLLOUT_CODE)


def task_hash(c: CompiledTask) -> str:
    """Content hash of a task as loaded (its IS-Bench JSON and its BDDL problem)."""
    blob = json.dumps(c.task.to_json(), sort_keys=True, default=str) + "\n" + c.task.bddl
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def shard_specs(tasks: Sequence[CompiledTask], split: str, temperatures: Sequence[float], seed: int, actor_id: str,
                settings: RolloutSettings, code: str | None = None) -> list[ShardSpec]:
    """One shard per (task, temperature), keyed by the task's content, the actor, the settings and ``code``
    (default: :func:`rollout_code_key`)."""
    items = tuple(sorted(asdict(settings).items()))
    code = rollout_code_key() if code is None else code
    hashes = {c.name: task_hash(c) for c in tasks}
    return [ShardSpec(c.name, split, float(t), seed, actor_id, items, hashes[c.name], code)
            for t in temperatures for c in tasks]


def to_trajectory(spec: ShardSpec, run: EpisodeRun) -> Trajectory:
    r = run.result
    return Trajectory(
        shard_id=spec.id, task=spec.task, split=spec.split, temperature=spec.temperature, seed=spec.seed,
        actor=spec.actor, settings=dict(spec.settings), steps=tuple(run.records), success=r.success,
        safe_success=r.safe_success, stalled=run.episode.stalled, conditions=tuple(o.to_json() for o in r.outcomes))


def to_result(t: Trajectory) -> EpisodeResult:
    outcomes = tuple(ConditionOutcome(**c) for c in t.conditions)
    return EpisodeResult(t.task, t.success, bool(t.steps) and t.steps[-1].action == "DONE()", len(t.steps),
                         sum(s.action is None for s in t.steps), sum(not s.ok for s in t.steps),
                         tuple(s.action or s.raw_output for s in t.steps), outcomes)


def collect_chunk(specs: Sequence[ShardSpec], tasks: dict[str, CompiledTask], actor: Actor, settings: RolloutSettings,
                  store: ShardStore, fault: FaultInjector | None = None) -> dict[str, int]:
    """Run one batch of shards that share a temperature; write each shard's file or failure record."""
    temps = {s.temperature for s in specs}
    assert len(temps) == 1, "a chunk holds one temperature"
    attempts = {s.task: store.attempts(s) for s in specs}
    by_task = {s.task: s for s in specs}
    hook = fault.hook(lambda run: (by_task[run.episode.compiled.name].id, attempts[run.episode.compiled.name])) if fault else None
    try:
        runs = run_batched([tasks[s.task] for s in specs], actor, temps.pop(), [s.rng_seed for s in specs], settings,
                           step_hook=hook)
    except Exception as exc:  # the actor or endpoint failed for the whole batch: every shard is retryable
        for s in specs:
            store.write_failure(s, f"{type(exc).__name__}: {exc}")
        return {"done": 0, "failed": len(specs)}
    failed = 0
    for spec, run in zip(specs, runs, strict=True):
        if run.crashed:
            store.write_failure(spec, run.crashed)
            failed += 1
        else:
            store.write(spec, to_trajectory(spec, run))
    return {"done": len(specs) - failed, "failed": failed}


def chunks(specs: Sequence[ShardSpec], size: int) -> list[list[ShardSpec]]:
    by_temp: dict[float, list[ShardSpec]] = defaultdict(list)
    for s in specs:
        by_temp[s.temperature].append(s)
    return [group[i:i + size] for _, group in sorted(by_temp.items()) for i in range(0, len(group), size)]


def rollout_metrics(trajectories: Sequence[Trajectory], temperatures: Sequence[float]) -> dict[str, float | int]:
    """SR / SSR / SRec per temperature (``rollouts/t0.3/ssr``) and overall."""
    m: dict[str, float | int] = {}
    for t in temperatures:
        sub = [to_result(x) for x in trajectories if x.temperature == float(t)]
        for k, v in household_metrics(sub, prefix=f"rollouts/t{t}").items():
            if k.split("/")[-1] in ("sr", "ssr", "srec", "n_tasks", "parse_failures", "mean_steps"):
                m[k] = v
    m.update({k: v for k, v in household_metrics([to_result(x) for x in trajectories], "rollouts").items()
              if k.split("/")[-1] in ("sr", "ssr", "srec", "n_tasks")})
    m["rollouts/stalled"] = sum(x.stalled for x in trajectories)
    return m


class Progress:
    """Shards done / total and rate, printed through ``emit`` (the flow's logger)."""

    def __init__(self, total: int, emit: Callable[[str], None]) -> None:
        self.total, self.done, self.emit, self.t0 = total, 0, emit, time.time()

    def advance(self, n: int, failed: int = 0) -> None:
        self.done += n
        rate = self.done / max(time.time() - self.t0, 1e-9)
        self.emit(f"shards {self.done}/{self.total} ({failed} failed in this chunk), {rate:.1f} shards/s")
