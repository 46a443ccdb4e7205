"""An MLP Gaussian policy on Dubins-VL's 7-D state (no vision): the state-based control of issue 21.

It has the surface :mod:`embodied_safety.shield.rl.ppo` and :mod:`embodied_safety.shield.rl.critic` use from :class:`~.visuomotor.VisuomotorPolicy` — ``encoder``,
``feature_dim``, ``features`` / ``from_features`` / ``forward`` taking ``(observations, instructions)``, the
action bounds and ``log_std`` — so the same gated PPO loop and the same safety critic (a copy of this encoder
plus a Q head) run on it in seconds per iteration. The action distribution is the clipped Gaussian with a
tanh-squashed mean of :mod:`.visuomotor`. The instruction is ignored (Dubins-VL has one task).

The encoder reads ``s = [x, y, θ, gx, gy, ox, oy]`` as ``[x, y, cos θ, sin θ, gx − x, gy − y, ox − x, oy − y]``
(a fixed function of the state: the angle without its wrap-around, the goal and obstacle relative to the car).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

STATE_DIM = 7
INPUT_DIM = 8


@dataclass(frozen=True)
class StatePolicyConfig:
    """Architecture of :class:`StatePolicy`."""

    action_low: tuple[float, ...] = (-1.1,)
    action_high: tuple[float, ...] = (1.1,)
    hidden: int = 128  # encoder and head width
    init_log_std: float = -1.0  # in normalised action units, as PolicyConfig
    log_std_bounds: tuple[float, float] = (-5.0, 1.0)


def state_inputs(states: Tensor) -> Tensor:
    """``[B, 7]`` Dubins states -> ``[B, 8]`` encoder inputs (see the module docstring)."""
    if states.ndim != 2 or states.shape[-1] != STATE_DIM:
        raise ValueError(f"expected Dubins-VL states [B, {STATE_DIM}], got {tuple(states.shape)}")
    s = states.float()
    x, y, th = s[:, 0:1], s[:, 1:2], s[:, 2:3]
    return torch.cat([x, y, th.cos(), th.sin(), s[:, 3:4] - x, s[:, 4:5] - y, s[:, 5:6] - x, s[:, 6:7] - y], -1)


class StateEncoder(nn.Module):
    """``(states [B, 7], instructions) -> [B, hidden]``; a safety critic starts from a copy of it."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.dim = hidden
        self.net = nn.Sequential(nn.Linear(INPUT_DIM, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())

    def forward(self, states: Tensor, instructions: Sequence[str] | None = None) -> Tensor:
        return self.net(state_inputs(torch.as_tensor(states, device=self.net[0].weight.device)))


class StatePolicy(nn.Module):
    """``StateEncoder`` -> Linear head -> tanh-squashed mean; a free, state-independent log-std."""

    def __init__(self, config: StatePolicyConfig = StatePolicyConfig()) -> None:
        super().__init__()
        self.config = config
        self.action_dim = len(config.action_low)
        self.encoder = StateEncoder(config.hidden)
        self.feature_dim = self.encoder.dim
        self.head = nn.Linear(self.feature_dim, self.action_dim)
        self.log_std = nn.Parameter(torch.full((self.action_dim,), float(config.init_log_std)))
        low = torch.tensor(config.action_low, dtype=torch.float32)
        high = torch.tensor(config.action_high, dtype=torch.float32)
        self.register_buffer("center", (high + low) / 2, persistent=False)
        self.register_buffer("scale", (high - low) / 2, persistent=False)

    @property
    def action_low(self) -> np.ndarray:
        return np.asarray(self.config.action_low, dtype=np.float32)

    @property
    def action_high(self) -> np.ndarray:
        return np.asarray(self.config.action_high, dtype=np.float32)

    @property
    def device(self) -> torch.device:
        return self.log_std.device

    def features(self, states: Tensor, instructions: Sequence[str] | None = None) -> Tensor:
        return self.encoder(states, instructions)

    def from_features(self, features: Tensor) -> tuple[Tensor, Tensor]:
        mean = self.center + self.scale * torch.tanh(self.head(features))
        lo, hi = self.config.log_std_bounds
        return mean, (self.log_std.clamp(lo, hi) + self.scale.log()).expand_as(mean)

    def forward(self, states: Tensor, instructions: Sequence[str] | None = None) -> tuple[Tensor, Tensor]:
        return self.from_features(self.features(states, instructions))
