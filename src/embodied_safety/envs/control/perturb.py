"""Test-time visual perturbations of ShieldVLA §5.5, shared by the three control environments.

* ``"color"`` (+Color): obstacles are drawn in one of :data:`palette.HELD_OUT_OBSTACLE`'s hues, one hue per
  episode, drawn from the episode's own random stream (see :func:`draw_hue`).
* ``"light"`` (+Light): every frame is multiplied per channel by :data:`palette.LIGHT_GAIN` (dim and warm),
  rounded to the nearest integer. The MuJoCo scenes are lit linearly (no specular, no shadows, no
  clipping: see ``_mujoco.py``), so this post-process equals scaling the light colours by the same gain,
  which is what the paper does to the renderer; applying it to the frame makes it exact, identical across
  the three environments, and testable pixel by pixel.
* ``"all"`` (+All): both.

Perturbations change pixels only: scenes, dynamics, rewards, costs and instructions are identical to the
unperturbed environment for the same seed, so evaluations are paired.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from . import palette

Perturbation = Literal["color", "light", "all"] | None
PERTURBATIONS: tuple[Perturbation, ...] = (None, "color", "light", "all")
# registered id suffix -> perturbation
VARIANTS: dict[str, Perturbation] = {"": None, "-Color": "color", "-Light": "light", "-All": "all"}

HELD_OUT = np.asarray(palette.HELD_OUT_OBSTACLE, dtype=np.uint8)  # (3 hues, RGB)
_GAIN = np.asarray(palette.LIGHT_GAIN, dtype=np.float64)
# per-channel lookup table: LIGHT_LUT[c, v] = round(v * gain[c])
LIGHT_LUT = np.floor(np.arange(256, dtype=np.float64)[None, :] * _GAIN[:, None] + 0.5).astype(np.uint8)


def check(perturbation: Perturbation) -> Perturbation:
    if perturbation not in PERTURBATIONS:
        raise ValueError(f"perturbation must be one of {PERTURBATIONS}, got {perturbation!r}")
    return perturbation


def uses_color(perturbation: Perturbation) -> bool:
    return perturbation in ("color", "all")


def uses_light(perturbation: Perturbation) -> bool:
    return perturbation in ("light", "all")


def draw_hue(rng: np.random.Generator) -> int:
    """Index into :data:`HELD_OUT` for this episode.

    Every environment calls this once per reset whatever the perturbation, after sampling the scene, so
    the +Color variant consumes the same random numbers and gets the same scenes as the base one.
    """
    return int(rng.integers(len(HELD_OUT)))


def apply_light(frames: np.ndarray) -> np.ndarray:
    """Dim-and-warm a uint8 frame or batch of frames (``(..., 3)``), returning a new array."""
    out = np.empty_like(frames)
    for c in range(3):
        out[..., c] = LIGHT_LUT[c][frames[..., c]]
    return out
