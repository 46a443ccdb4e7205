"""Prefect tasks for the actor: bootstrap training and batched rollout chunks."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import task_run

from embodied_safety.actors.base import Actor
from embodied_safety.actors.bootstrap import ModelShape, TrainSettings, train_bootstrap_actor
from embodied_safety.actors.bootstrap_data import Example
from embodied_safety.actors.load import load_actor
from embodied_safety.config.shared import ActorConfig
from embodied_safety.envs.household.env import CompiledTask, load_task_dir
from embodied_safety.rollout.collect import collect_chunk
from embodied_safety.rollout.runner import RolloutSettings
from embodied_safety.rollout.shards import FaultInjector, ShardSpec, ShardStore, inject_worker_crash


@cache
def cached_actor(cfg: ActorConfig) -> Actor:
    """One actor per process (model weights are loaded once, shared by all chunk tasks)."""
    return load_actor(cfg)


@cache
def cached_split(path: Path) -> dict[str, CompiledTask]:
    """Compiled tasks of one split folder, loaded once per process (workers load their own copy:
    compiled BDDL trees are not picklable, paths are)."""
    return {c.name: c for c in load_task_dir(path)[0]}


@task(name="train-bootstrap-actor", cache_policy=NO_CACHE, log_prints=False)  # datasets prints bytecode when hashing
def train_bootstrap_task(examples: list[Example], out_dir: Path, shape: ModelShape, train: TrainSettings,
                         log: Any = None, proxy_names: bool = False) -> dict[str, float]:
    return train_bootstrap_actor(examples, out_dir, shape, train, log=log, proxy_names=proxy_names)


@task(name="rollout-chunk", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def rollout_chunk_task(specs: list[ShardSpec], splits: Path, actor_cfg: ActorConfig, settings: RolloutSettings,
                       root: Path, fault_rate: float, fault_seed: int, worker_fault_rate: float = 0.0) -> dict[str, int]:
    """One batched group of (task, temperature) shards; each shard's file is written atomically.

    An exception escaping here (an endpoint down past its client retries, an injected worker crash)
    fails this attempt and Prefect retries the chunk; shards that crash inside the simulator are
    recorded as failed shards instead."""
    inject_worker_crash(worker_fault_rate, fault_seed, specs[0].id if specs else "", task_run.run_count)
    tasks = {s.task: cached_split(splits / s.split)[s.task] for s in specs}
    fault = FaultInjector(fault_rate, fault_seed) if fault_rate > 0 else None
    return collect_chunk(specs, tasks, cached_actor(actor_cfg), settings, ShardStore(root), fault)
