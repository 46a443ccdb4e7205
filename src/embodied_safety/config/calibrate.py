"""The ``calibrate`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class CalibrateConfig:
    """``calibrate``: class-balanced Platt scaling of ρ on the episode bit, and the cost-quality metrics."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    C: float = 1.0  # L2 strength of the logistic regression (keeps `a` finite on separable data)
    precontact_k: int = 10  # frames before first contact in the pre-contact tail AUROC
    band: float = 0.25  # |ℓ| band of the tail AUROC
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)
