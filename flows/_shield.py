"""What the ShieldVLA stage flows share: where each stage writes, episode-seed shards."""

from __future__ import annotations

from pathlib import Path

DEMOS = Path("data/shield/demos")
BC = Path("models/shield/bc")
ROLLOUTS = Path("data/shield/rollouts")
LABELS = Path("data/shield/labels")
CALIBRATION = Path("data/shield/calibration")
RTD = Path("data/shield/rtd")


def env_inputs(env: str):  # -> embodied_safety.shield.rl.runs.EnvInputs
    """One env's ``shield_ppo`` inputs in this checkout: the BC policy, its rollouts and the calibration."""
    from embodied_safety.shield.rl.runs import EnvInputs

    return EnvInputs(env, BC / env, ROLLOUTS / env / "rollouts.npz", CALIBRATION / env)


def seed_shards(base: int, n: int, size: int) -> list[list[int]]:
    """Episode seeds ``episode_seed(base, 0..n-1)`` cut into shards of ``size`` (consecutive, so a vectorised
    env replays exactly the same episodes)."""
    from embodied_safety.shield.policy.demos import episode_seeds

    seeds = episode_seeds(base, range(n))
    return [seeds[i:i + size] for i in range(0, n, max(size, 1))]

