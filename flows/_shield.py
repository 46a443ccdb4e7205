"""What the ShieldVLA stage flows share: where each stage writes, episode-seed shards."""

from __future__ import annotations

from pathlib import Path

DEMOS = Path("data/shield/demos")
BC = Path("models/shield/bc")
ROLLOUTS = Path("data/shield/rollouts")
LABELS = Path("data/shield/labels")
CALIBRATION = Path("data/shield/calibration")
RTD = Path("data/shield/rtd")


def seed_shards(base: int, n: int, size: int) -> list[list[int]]:
    """Episode seeds ``episode_seed(base, 0..n-1)`` cut into shards of ``size`` (consecutive, so a vectorised
    env replays exactly the same episodes)."""
    from embodied_safety.shield.policy.demos import episode_seeds

    seeds = episode_seeds(base, range(n))
    return [seeds[i:i + size] for i in range(0, n, max(size, 1))]

