"""The ``shield_rollouts`` section of ``params.yaml``."""

from __future__ import annotations

from dataclasses import dataclass

from embodied_safety.config.params import per_env
from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class ShieldRolloutsConfig(ShardRunnerConfig):
    """``shield_rollouts``: the BC policy's own rollouts with frames and per-episode safety bits (§4.2 (i))."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    episodes: dict[str, int] = per_env(dubins=256, turtlebot=40, franka=8)
    deterministic: bool = False  # the paper labels the stochastic BC policy's rollouts
    shard_episodes: int = 64
    seed: int = 2  # episode seeds base (demos use 0, BC evaluation 1000)
