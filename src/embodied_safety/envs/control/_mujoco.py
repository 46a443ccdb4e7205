"""Shared plumbing of the MuJoCo control environments: model loading with palette colours, one offscreen
``mujoco.Renderer`` per env (EGL unless ``MUJOCO_GL`` says otherwise), the +Color / +Light perturbations.

Imported only by ``turtlebot.py`` and ``franka.py``, which the Gymnasium registry loads by string entry
point, so ``import embodied_safety.envs.control`` never imports MuJoCo.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported: headless, works on this machine

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from . import perturb  # noqa: E402
from .palette import RGB  # noqa: E402
from .perturb import Perturbation  # noqa: E402


def rgba(colour: RGB) -> np.ndarray:
    return np.array([*(c / 255.0 for c in colour), 1.0])


def load_model(asset: str, replacements: dict[str, str]) -> mujoco.MjModel:
    """Compile ``assets/<asset>`` after substituting placeholder tokens (e.g. the skybox colour)."""
    text = resources.files(__package__).joinpath("assets").joinpath(asset).read_text()
    for token, value in replacements.items():
        text = text.replace(token, value)
    return mujoco.MjModel.from_xml_string(text)


def rgb_string(colour: RGB) -> str:
    # +0.5: texture colours are truncated to uint8 when baked, this lands on the palette value exactly
    return " ".join(f"{(c + 0.5) / 255.0:.6f}" for c in colour)


class MujocoEnv(gym.Env):
    """Base: holds ``model``/``data``, renders ``camera`` at ``size``, applies the perturbation.

    Subclasses set the obstacle geoms' training colour in ``obstacle_rgb`` and call :meth:`_colour_obstacles`
    at every reset after drawing the episode's hue with :func:`perturb.draw_hue`.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, model: mujoco.MjModel, camera: str, size: int, obstacle_geoms: list[str],
                 obstacle_rgb: RGB, perturbation: Perturbation, render_mode: str | None) -> None:
        self.model = model
        self.data = mujoco.MjData(model)
        self.camera = camera
        self.size = size
        self.perturbation = perturb.check(perturbation)
        self.render_mode = render_mode
        self._obstacle_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in obstacle_geoms]
        self._obstacle_rgb = obstacle_rgb
        self._renderer: mujoco.Renderer | None = None
        self._frame: np.ndarray | None = None

    def geom_id(self, name: str) -> int:
        return mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, name)

    def _colour_obstacles(self, hue: int) -> None:
        colour = tuple(perturb.HELD_OUT[hue]) if perturb.uses_color(self.perturbation) else self._obstacle_rgb
        for gid in self._obstacle_ids:
            self.model.geom_rgba[gid] = rgba(colour)

    def _render_frame(self) -> np.ndarray:
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, self.size, self.size)
        self._renderer.update_scene(self.data, camera=self.camera)
        frame = self._renderer.render()
        if perturb.uses_light(self.perturbation):
            frame = perturb.apply_light(frame)
        self._frame = frame
        return frame

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self._frame.copy() if self._frame is not None else self._render_frame().copy()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def _obs(self, instruction: str) -> dict[str, Any]:
        return {"image": self._render_frame().copy(), "instruction": instruction}
