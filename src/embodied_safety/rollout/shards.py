"""Shards = (task, temperature): content-hashed ids, atomic files, failure records, fault injection.

A shard's trajectory lives at ``<root>/shards/<id>.json`` (written atomically); a failure at
``<root>/failed/<id>.json`` with the error and the attempt count. A shard is *done* when its
trajectory file exists, so re-running a stage recomputes exactly the missing and failed shards,
and a killed run never leaves a partial or duplicate shard.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..io import read_json, write_json
from ..records import Trajectory
from .runner import EpisodeRun, SimulatorCrash


@dataclass(frozen=True)
class ShardSpec:
    """What decides a shard's trajectory: the task (name and content hash), split, temperature, the stage seed,
    the actor, the rollout settings and the code key of the rollout code (world, runner, actor backends)."""

    task: str
    split: str
    temperature: float
    seed: int
    actor: str  # an id of the actor (model dir content hash or endpoint + model)
    settings: tuple[tuple[str, Any], ...]  # rollout settings, sorted items
    task_hash: str = ""  # content hash of the task file (its IS-Bench JSON and BDDL problem)
    code: str = ""  # embodied_safety.codekey key of the rollout code

    @cached_property  # hashed once: stores and flows ask for it several times per shard
    def id(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    @property
    def rng_seed(self) -> int:
        """The shard's own RNG seed, so its trajectory does not depend on its chunk-mates. It comes from what is
        sampled (task, split, temperature, stage seed), not from the rest of the key: a change of code, actor or
        settings re-runs the shard (new id) with the same random numbers, so a change that does not alter
        behaviour reproduces the same trajectory, and two actors are compared on common random numbers. (Seeding
        from the id instead would re-draw every T > 0 trajectory at every code change.)"""
        blob = json.dumps([self.task, self.split, self.temperature, self.seed])
        return int(hashlib.sha256(blob.encode()).hexdigest()[:15], 16)


class ShardStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.shards = self.root / "shards"
        self.failed = self.root / "failed"

    def done(self, spec: ShardSpec) -> bool:
        return (self.shards / f"{spec.id}.json").is_file()

    def failure(self, spec: ShardSpec) -> dict[str, Any] | None:
        path = self.failed / f"{spec.id}.json"
        return read_json(path) if path.is_file() else None

    def attempts(self, spec: ShardSpec) -> int:
        rec = self.failure(spec)
        return int(rec["attempts"]) if rec else 0

    def write(self, spec: ShardSpec, traj: Trajectory) -> None:
        write_json(self.shards / f"{spec.id}.json", traj.to_json())
        (self.failed / f"{spec.id}.json").unlink(missing_ok=True)

    def write_failure(self, spec: ShardSpec, error: str) -> None:
        write_json(self.failed / f"{spec.id}.json",
                   {"shard_id": spec.id, "task": spec.task, "temperature": spec.temperature,
                    "error": error, "attempts": self.attempts(spec) + 1})

    def load(self, specs: Iterable[ShardSpec]) -> list[Trajectory]:
        return [Trajectory.from_json(read_json(self.shards / f"{s.id}.json")) for s in specs if self.done(s)]

    def prune(self, keep: Iterable[ShardSpec]) -> int:
        """Delete shard and failure files of specs no longer requested (e.g. after a params change)."""
        ids = {s.id for s in keep}
        stale = [p for d in (self.shards, self.failed) if d.is_dir() for p in d.glob("*.json") if p.stem not in ids]
        for p in stale:
            p.unlink()
        return len(stale)


class WorkerCrash(RuntimeError):
    """A shard task's attempt died (injected): Prefect's task retry runs it again."""


def inject_worker_crash(rate: float, seed: int, key: str, attempt: int) -> None:
    """Raise :class:`WorkerCrash` with probability ``rate``, drawn from (seed, key, attempt), so a
    retry of the same chunk (a later attempt) can succeed and a re-run reproduces the same faults."""
    if rate > 0 and random.Random(f"worker|{seed}|{key}|{attempt}").random() < rate:
        raise WorkerCrash(f"injected worker crash (chunk {key[:12]}, attempt {attempt})")


class FaultInjector:
    """Makes the simulator crash at random: each step of shard ``s`` on attempt ``a`` crashes with
    probability ``rate``, from an RNG seeded by (seed, s, a), so a retry can succeed."""

    def __init__(self, rate: float, seed: int = 0) -> None:
        self.rate = rate
        self.seed = seed
        self._rngs: dict[int, random.Random] = {}

    def hook(self, shard_of: Callable[[EpisodeRun], tuple[str, int]]) -> Callable[[EpisodeRun], None] | None:
        if self.rate <= 0:
            return None

        def step_hook(run: EpisodeRun) -> None:
            shard_id, attempt = shard_of(run)
            rng = self._rngs.setdefault(id(run), random.Random(f"{self.seed}|{shard_id}|{attempt}"))
            if rng.random() < self.rate:
                raise SimulatorCrash(f"injected simulator crash at step {run.episode.steps} (attempt {attempt})")

        return step_hook
