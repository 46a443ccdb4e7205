"""The ``shield_demos`` section of ``params.yaml``."""

from __future__ import annotations

from dataclasses import dataclass

from embodied_safety.config.params import per_env
from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class ShieldDemosConfig(ShardRunnerConfig):
    """``shield_demos``: scripted-expert demonstrations per control env (docs/shield.md); shard = episodes."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    episodes: dict[str, int] = per_env(dubins=200, turtlebot=40, franka=12)
    noise: float = 0.1  # executed-action noise (DART), in half-ranges; the BC target stays the clean action
    shard_episodes: int = 25
    seed: int = 0
