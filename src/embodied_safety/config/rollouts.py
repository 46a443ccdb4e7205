"""The ``rollouts`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from embodied_safety.config.params import load_params
from embodied_safety.config.shared import PlannerConfig, ShardRunnerConfig


@dataclass(frozen=True)
class RolloutsConfig(ShardRunnerConfig, PlannerConfig):
    """``rollouts``: the actor's own rollouts, shard = (task, temperature) (SafeBranch §4.2)."""

    chunk_size: int = 64  # shards per batched actor call group (one Prefect task)
    fault_rate: float = 0.0  # probability per step that the simulator crashes (fault injection)
    worker_fault_rate: float = 0.0  # probability per attempt that a chunk task dies (Prefect retries it)
    chunk_retries: int = 1  # Prefect retries per chunk task


def load_with_rollout_actor(section: str, cls: type, params: str) -> Any:
    """``params``' section as ``cls``; an empty ``actor`` means the rollouts stage's (the base actor)."""
    cfg = load_params(section, cls, params)
    if not cfg.actor:
        cfg = dataclasses.replace(cfg, actor=load_params("rollouts", RolloutsConfig, params).actor)
    return cfg
