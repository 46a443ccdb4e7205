"""The ``promote`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class PromoteConfig:
    """``promote``: the champion rule for the registry (``python -m flows.promote``)."""

    registered_model: str = "actor"
    max_sr_drop: float = 0.1  # a candidate may lose at most this much dev SR against the champion
    base_model: str = "actor-base"  # with no champion a candidate must beat this model's newest version
    base_max_sr_drop: float = 0.05  # ... by dev SSR, losing at most this much dev SR (the selection margin)
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)
