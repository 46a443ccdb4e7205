"""The ``shield_demos`` section of ``params.yaml``."""

from __future__ import annotations

from dataclasses import dataclass

from embodied_safety.config.control_envs import ENV_KEYS, env_defaults
from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class ShieldDemosConfig(ShardRunnerConfig):
    """``shield_demos``: scripted-expert demonstrations per control env (docs/shield.md); shard = episodes."""

    envs: tuple[str, ...] = ENV_KEYS
    episodes: dict[str, int] = env_defaults("shield_demos.episodes")
    noise: float = 0.1  # executed-action noise (DART), in half-ranges; the BC target stays the clean action
    shard_episodes: int = 25
    seed: int = 0
