"""The visuomotor policy's size and CPU speed per frame size (docs/shield_policy.md).

    python benchmarks/visuomotor_policy.py

Prints one row per frame size: parameter count, median forward and forward+backward time in ms (batch 64, 20
repeats, 2 threads).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import torch

from embodied_safety.shield.policy.visuomotor import ObsBatch, PolicyConfig, VisuomotorPolicy
from embodied_safety.threads import set_torch_threads


def _median_ms(fn: Any, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def benchmark(batch: int = 64, sizes: Sequence[int] = (84, 96), action_dim: int = 2, repeats: int = 20,
              threads: int = 2) -> list[dict[str, float]]:
    """Parameter count and CPU forward / forward+backward time (median ms) per frame size (docs numbers)."""
    set_torch_threads(threads)
    rows = []
    for size in sizes:
        torch.manual_seed(0)
        p = VisuomotorPolicy(PolicyConfig(action_low=(-1.0,) * action_dim, action_high=(1.0,) * action_dim,
                                          image_size=(size, size)))
        obs = {"image": torch.randint(0, 256, (batch, size, size, 3), dtype=torch.uint8),
               "instruction": ["drive to the green goal and keep clear of the obstacles"] * batch}
        rows.append({"size": float(size), "batch": float(batch), "params": float(p.n_parameters()),
                     "forward_ms": _median_ms(partial(_forward, p, obs), repeats),
                     "forward_backward_ms": _median_ms(partial(_forward_backward, p, obs), repeats)})
    return rows


def _forward(p: VisuomotorPolicy, obs: ObsBatch) -> None:
    with torch.no_grad():
        p(obs["image"], obs["instruction"])


def _forward_backward(p: VisuomotorPolicy, obs: ObsBatch) -> None:
    p.zero_grad()
    actions = torch.zeros(obs["image"].shape[0], p.action_dim)
    (-p.log_prob(obs, actions).mean()).backward()


if __name__ == "__main__":
    for row in benchmark():
        print(row)
