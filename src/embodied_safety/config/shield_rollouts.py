"""The ``shield_rollouts`` section of ``params.yaml``."""

from __future__ import annotations

from dataclasses import dataclass

from embodied_safety.config.control_envs import ENV_KEYS, env_defaults
from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class ShieldRolloutsConfig(ShardRunnerConfig):
    """``shield_rollouts``: the BC policy's own rollouts with frames and per-episode safety bits (§4.2 (i))."""

    envs: tuple[str, ...] = ENV_KEYS
    episodes: dict[str, int] = env_defaults("shield_rollouts.episodes")
    deterministic: bool = False  # the paper labels the stochastic BC policy's rollouts
    shard_episodes: int = 64
    seed: int = 2  # episode seeds base (demos use 0, BC evaluation 1000)
