"""The ``rtd`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class RTDConfig:
    """``rtd``: Refinement-through-Differentiation rounds (Algorithm 2) on the labelled frames."""

    envs: tuple[str, ...] = ("dubins", "turtlebot")
    proposer: Literal["pixel", "llm"] = "pixel"
    proposer_actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm: base_url, model, ...
    rounds: int = 1
    top_k: int = 2
    max_pairs: int = 30
    band: float = 0.25
    pose_set: int = 400  # stratified poses per env (biased to the tail)
    seed: int = 0
    #: frames of the clip scorer whose per-frame AUROC is reported beside the single frame's (``shield/costs/clip.py``)
    clip_frames: int = 23
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)
