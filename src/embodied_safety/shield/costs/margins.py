"""Where the per-step safety margin ℓ(o) that trains the critic comes from (ShieldVLA §4.2, §5.4, Table 4).

* ``rubric`` — the paper's signal: a rubric scorer reads the *frame* (the embedded pixel scorer, or a VLM
  behind an endpoint), ρ = Σ w_k V_k, and the Platt scalars of the ``calibrate`` stage give
  ``ℓ̂ = −(aρ + b)``. No simulator state is read.
* ``gt`` — the oracle "HJ (GT cost)" row: the simulator's signed margin ``ℓ*(s) = d_min − d_safe``.
* ``binary`` — Table 4's ablation: ``ℓ = +1`` when the simulator reports no cost, ``ℓ = −5`` when it does.

Every source also gives the training cost ``c = 1[ℓ < 0]`` that the dual variables (β, λ) and the
PPO-Lagrangian baseline see, so all methods are trained from the same signal and only evaluation reads the
simulator's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

MarginKind = Literal["rubric", "gt", "binary"]
BINARY_SAFE, BINARY_UNSAFE = 1.0, -5.0


@dataclass
class MarginSource:
    """``(frames [B, H, W, 3] uint8, gt_margin [B], gt_cost [B]) -> ℓ [B]``."""

    kind: MarginKind
    score: Callable[[np.ndarray], np.ndarray] | None = None  # frames -> ρ (rubric only)
    calibration: Any = None  # PlattCalibration (rubric only)

    def __call__(self, frames: np.ndarray, gt_margin: np.ndarray, gt_cost: np.ndarray) -> np.ndarray:
        if self.kind == "gt":
            return np.asarray(gt_margin, dtype=np.float32)
        if self.kind == "binary":
            return np.where(np.asarray(gt_cost) > 0, BINARY_UNSAFE, BINARY_SAFE).astype(np.float32)
        assert self.score is not None and self.calibration is not None
        return self.calibration.margin(self.score(frames)).astype(np.float32)


def rubric_margin(scorer: Any, rubric_set: Any, calibration: Any) -> MarginSource:
    """ℓ̂ from any scorer with ``score(frames) -> V [N, K]`` (pixel or VLM), its rubric set and Platt scalars."""

    def rho(frames: np.ndarray) -> np.ndarray:
        return np.nan_to_num(rubric_set.severity(scorer.score(frames)), nan=0.0)

    return MarginSource("rubric", rho, calibration)


def margin_source(kind: MarginKind, env: str | None = None, calibration_dir: str | None = None,
                  scorer: Any = None, rubric_set: Any = None) -> MarginSource:
    """``gt`` / ``binary``, or ``rubric`` with the env's default rubric set, the pixel scorer (unless one is
    given) and ``<calibration_dir>/platt.json``."""
    if kind in ("gt", "binary"):
        return MarginSource(kind)
    if kind != "rubric":
        raise ValueError(f"unknown margin source {kind!r}: rubric | gt | binary")
    from pathlib import Path

    from ..envs import rubric_env
    from .calibrate import PlattCalibration
    from .pixel_scorer import PixelScorer
    from .rubrics import default_rubric_set

    if calibration_dir is None or env is None:
        raise ValueError("the rubric margin needs the env and the calibrate stage's directory")
    rset = rubric_set or default_rubric_set(rubric_env(env))
    return rubric_margin(scorer or PixelScorer(rset), rset, PlattCalibration.load(Path(calibration_dir) / "platt.json"))
