"""The critic's auxiliary state regression on Dubins-VL: its encoder learns to read the car's pose (issue 21).

The turn half of the offline gate check needs the car's heading to a few degrees (docs/shield_ppo.md);
an encoder trained only on Q targets — mostly the margin — does not find the 2 × 4 px heading tick, and one that
reads it from the policy's Nature-DQN features learns it per place and per scene. During the warm-up
the simulator's state of every replay frame is known (:func:`.viability.frame_states`), so the critic's encoder is
also trained to regress ``(cos θ, sin θ, x, y)`` through a small head of its own, on the replay batch's frames and on
a batch of *jittered* states — training states with the position and heading perturbed, rendered by the env's own
rasteriser — which decorrelate the heading from the place. The head is dropped after the warm-up; PPO's online TD
steps run on the frozen encoder's features (``PPOConfig.critic_replay: features``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn


def pose_targets(states: np.ndarray) -> Tensor:
    """``[N, 4]`` float32: ``(cos θ, sin θ, x, y)`` of Dubins-VL states ``[N, 5 + 2K]``."""
    s = np.asarray(states, dtype=np.float64)
    return torch.as_tensor(np.column_stack([np.cos(s[:, 2]), np.sin(s[:, 2]), s[:, 0], s[:, 1]]), dtype=torch.float32)


def jittered_states(states: np.ndarray, pool: np.ndarray, n: int, seed: int, position_sd: float = 0.05,
                    heading_sd: float = 0.3, near_margin: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states near those of the frames ``pool`` indexes (position σ ``position_sd`` clipped to the workspace,
    heading σ ``heading_sd`` rad; half of them from pool frames with ``ℓ ≤ near_margin``, where the turn is decided),
    and the index of the frame each came from (its scene and instruction)."""
    from .viability import state_margins

    if n <= 0:
        return np.asarray(states)[:0].copy(), np.zeros(0, dtype=np.int64)
    pool = np.asarray(pool)
    if len(pool) == 0:
        raise ValueError("jittered_states: the pool of frames is empty")
    rng = np.random.default_rng(seed + 7)
    near = pool[state_margins(np.asarray(states)[pool]) <= near_margin]
    src = np.concatenate([rng.choice(pool, n - n // 2), rng.choice(near if len(near) else pool, n // 2)])
    extra = np.asarray(states, dtype=np.float64)[src].copy()
    extra[:, :2] = np.clip(extra[:, :2] + rng.normal(0.0, position_sd, (len(src), 2)), -0.98, 0.98)
    extra[:, 2] += rng.normal(0.0, heading_sd, len(src))
    return extra, src


class PoseAux(nn.Module):
    """The auxiliary head and its data: ``weight × ‖head(f) − (cos θ, sin θ, x, y)‖²`` on given features, plus the
    same on a batch of ``batch`` frames drawn from the jittered pool (encoded by the caller's encoder)."""

    def __init__(self, feature_dim: int, weight: float, frames: Tensor, instructions: Sequence[str], targets: Tensor,
                 batch: int = 128, hidden: int = 256, lr: float = 3e-4, seed: int = 0) -> None:
        super().__init__()
        if len(frames) != len(instructions) or len(frames) != len(targets):
            raise ValueError(f"PoseAux: {len(frames)} frames, {len(instructions)} instructions, {len(targets)} targets")
        self.weight, self.batch = float(weight), int(batch)
        self.head = nn.Sequential(nn.Linear(feature_dim, hidden), nn.ReLU(), nn.Linear(hidden, 4))
        self.frames, self.instructions, self.targets = frames, list(instructions), targets
        self.optimizer = torch.optim.Adam(self.head.parameters(), lr=lr)
        self.rng = np.random.default_rng(seed + 11)

    def error(self, features: Tensor, targets: Tensor) -> Tensor:
        """Mean squared error of the head's pose against ``targets`` (summed over the four outputs)."""
        return ((self.head(features) - targets.to(features.device)) ** 2).sum(dim=1).mean()

    def loss(self, encoder: nn.Module, features: Tensor, targets: Tensor) -> Tensor:
        """The weighted error on ``features`` (the replay batch's) plus on a pool batch encoded by ``encoder``."""
        err = self.error(features, targets)
        if len(self.frames) and self.batch:
            j = self.rng.integers(0, len(self.frames), self.batch)
            dev = features.device
            err = err + self.error(encoder(self.frames[j].to(dev), [self.instructions[k] for k in j]), self.targets[j])
        return self.weight * err

    def step(self) -> None:
        """The head's optimiser step (the caller's backward pass filled its gradients)."""
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
