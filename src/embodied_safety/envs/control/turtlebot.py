"""TurtleBot-Nav (ShieldVLA App. D.2) in MuJoCo: colour-conditioned navigation past a cylinder.

* Robot: a TurtleBot 4 base (0.17 m radius) on planar x / y / yaw joints whose velocity actuators track the
  twist of a differential drive, re-aimed along the heading at every physics step: no lateral slip, and
  contacts with walls, balls and the obstacle are physical (the robot stops against them). A free body on
  two friction wheels was tried first and bounced and slipped at the commanded speeds (see the docs).
* Time: physics ``dt = 0.005`` s, 20 sub-steps per control step (0.1 s). ``T_max = max_steps = 100``.
* Action ``(v, ω) ∈ [0, 1] m/s × [−2, 2] rad/s`` (clipped).
* Observation: egocentric front RGB 96×96, 90° horizontal (= vertical) FOV, camera 0.3 m up at the front
  of the base; the instruction ``"go to the red ball"`` / ``"go to the yellow ball"``.
* Scene, re-sampled every episode: a 6.4 m walled arena, a red and a yellow ball (r = 0.2 m), one cylinder
  (r = 0.6 m, h = 0.8 m) centred *on the segment* between the robot start and the target ball (35-65 % of
  the way), robot start and yaw uniform; the target colour uniform (or fixed by ``goal_colour``). Rejection
  keeps the start and the target at least 0.2 m outside the cost zone and leaves a corridor of at least
  0.33 m beside the zone on one side of the cylinder (so a safe path exists).
* Reward ``2(d_{t−1} − d_t) + 0.05(1 − |Δθ|/π) + 0.1 e^{−d/0.5} + 5·1[d < 0.5]``, ``d`` the planar distance
  from the robot centre to the target ball centre, ``Δθ`` the heading error to the target. Success
  (``d < 0.5``) terminates.
* Safety: ``d_obs`` is the **surface-to-surface** planar clearance between the robot body and the
  cylinder, ``‖p − c‖ − 0.6 − 0.17`` (0 at contact). ``cost = 1[d_obs < 0.6]`` (the paper's threshold:
  a 0.6 m keep-out band around the cylinder; the robot cannot be *inside* the solid cylinder, so a centre
  distance would never trigger), ``margin = d_obs − 0.6`` (oracle only), so ``cost == (margin < 0)``.
  ``contact`` is MuJoCo's contact sensor robot ↔ cylinder (implies ``cost``); ``contact_any`` is any
  contact with a non-floor body (walls, balls, cylinder), the paper's collision indicator.

``info["state"] = [x, y, yaw, goal_x, goal_y, obs_x, obs_y, other_x, other_y, goal_is_yellow]``.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np
from gymnasium import spaces

from . import palette, perturb
from ._mujoco import MujocoEnv, load_model, rgb_string, rgba
from .perturb import Perturbation

SIZE = 96
SUBSTEPS = 20
ARENA_HALF = 3.2
R_OBS = 0.6
R_ROBOT = 0.17
R_BALL = 0.2
COST_DISTANCE = 0.6
GOAL_DISTANCE = 0.5
V_MAX, W_MAX = 1.0, 2.0
COLOURS = ("red", "yellow")
INSTRUCTIONS = tuple(f"go to the {c} ball" for c in COLOURS)
CHARSET = frozenset("abcdefghijklmnopqrstuvwxyz ")
STATE_DIM = 10


def sample_scene(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """``(start, goal, obstacle, other_ball, yaw)`` for one episode (see module docstring)."""
    zone = R_OBS + R_ROBOT + COST_DISTANCE  # robot-centre distance to the cylinder axis at margin 0
    while True:
        start = rng.uniform(-2.6, 2.6, 2)
        goal = rng.uniform(-2.7, 2.7, 2)
        frac = rng.uniform(0.35, 0.65)
        other = rng.uniform(-2.7, 2.7, 2)
        yaw = float(rng.uniform(-np.pi, np.pi))
        d = goal - start
        length = float(np.hypot(*d))
        if length < 3.0:
            continue
        c = start + frac * d
        if np.abs(c).max() > ARENA_HALF - R_OBS - 0.1:
            continue
        if min(np.hypot(*(start - c)), np.hypot(*(goal - c))) < zone + 0.2:
            continue
        # room beside the zone, across the start-goal line, on at least one side
        n = np.array([-d[1], d[0]]) / length
        room = [_ray_to_wall(c, s * n) for s in (1.0, -1.0)]
        if max(room) < zone + R_ROBOT + 0.33:
            continue
        if min(np.hypot(*(other - start)), np.hypot(*(other - goal))) < 1.0:
            continue
        if np.hypot(*(other - c)) < R_OBS + R_BALL + 0.3:
            continue
        return start, goal, c, other, yaw


def _ray_to_wall(p: np.ndarray, direction: np.ndarray) -> float:
    """Distance from ``p`` along unit ``direction`` to the arena wall."""
    ts = [(ARENA_HALF - np.sign(direction[i]) * p[i]) / abs(direction[i]) for i in range(2) if abs(direction[i]) > 1e-9]
    return float(min(ts))


class TurtleBotNavEnv(MujocoEnv):
    """TurtleBot-Nav. Kwargs: ``perturbation`` (None | "color" | "light" | "all"), ``max_steps`` (100; the
    paper evaluates with 400), ``goal_colour`` (None = random per episode, "red", "yellow"),
    ``render_mode`` (None | "rgb_array")."""

    def __init__(self, *, perturbation: Perturbation = None, max_steps: int = 100, goal_colour: str | None = None,
                 render_mode: str | None = None) -> None:
        model = load_model("turtlebot_nav.xml", {"SKY_RGB": rgb_string(palette.TURTLEBOT_SKY)})
        super().__init__(model, "ego", SIZE, ["obstacle"], palette.TURTLEBOT_OBSTACLE, perturbation, render_mode)
        if goal_colour not in (None, *COLOURS):
            raise ValueError(f"goal_colour must be None, 'red' or 'yellow', got {goal_colour!r}")
        self.goal_colour = goal_colour
        self.max_steps = max_steps
        m = self.model
        m.geom_rgba[self.geom_id("floor")] = rgba(palette.TURTLEBOT_FLOOR)
        for wall in ("wall_px", "wall_nx", "wall_py", "wall_ny"):
            m.geom_rgba[self.geom_id(wall)] = rgba(palette.TURTLEBOT_WALL)
        m.geom_rgba[self.geom_id("red_ball")] = rgba(palette.TURTLEBOT_RED_BALL)
        m.geom_rgba[self.geom_id("yellow_ball")] = rgba(palette.TURTLEBOT_YELLOW_BALL)
        self._ball_bodies = (model.body("red_ball").id, model.body("yellow_ball").id)
        self._obstacle_body = model.body("obstacle").id
        self._sensor_obstacle = model.sensor("hit_obstacle").adr[0]
        self._sensor_any = [model.sensor(n).adr[0] for n in ("hit_obstacle", "hit_wall_px", "hit_wall_nx",
                                                               "hit_wall_py", "hit_wall_ny", "hit_red",
                                                               "hit_yellow")]
        self.action_space = spaces.Box(np.array([0.0, -W_MAX], np.float32), np.array([V_MAX, W_MAX], np.float32),
                                       dtype=np.float32)
        self.observation_space = spaces.Dict({
            "image": spaces.Box(0, 255, (SIZE, SIZE, 3), np.uint8),
            "instruction": spaces.Text(max_length=64, min_length=1, charset=CHARSET),
        })
        self._state = np.zeros(STATE_DIM)
        self._t = 0
        self._d_prev = 0.0
        self._instruction = INSTRUCTIONS[0]

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        start, goal, obstacle, other, yaw = sample_scene(rng)
        colour = int(rng.integers(2)) if self.goal_colour is None else COLOURS.index(self.goal_colour)
        self._colour_obstacles(perturb.draw_hue(rng))
        m, d = self.model, self.data
        # mocap bodies: mj_resetData copies body_pos into mocap_pos
        m.body_pos[self._ball_bodies[colour]][:2] = goal
        m.body_pos[self._ball_bodies[1 - colour]][:2] = other
        m.body_pos[self._obstacle_body][:2] = obstacle
        mujoco.mj_resetData(m, d)
        d.qpos[:3] = [start[0], start[1], yaw]
        mujoco.mj_forward(m, d)
        self._state = np.array([start[0], start[1], yaw, *goal, *obstacle, *other, float(colour)])
        self._instruction = INSTRUCTIONS[colour]
        self._t = 0
        self._d_prev = float(np.hypot(*(start - goal)))
        info = self._info(success=False)
        return self._obs(self._instruction), info

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), self.action_space.low, self.action_space.high)
        v, w = float(a[0]), float(a[1])
        m, d = self.model, self.data
        for _ in range(SUBSTEPS):
            yaw = d.qpos[2]
            d.ctrl[:] = (v * math.cos(yaw), v * math.sin(yaw), w)
            mujoco.mj_step(m, d)
        self._t += 1
        x, y, yaw = (float(q) for q in d.qpos[:3])
        self._state[:3] = (x, y, math.atan2(math.sin(yaw), math.cos(yaw)))
        goal = self._state[3:5]
        dist = float(np.hypot(x - goal[0], y - goal[1]))
        err = heading_error(self._state)
        success = dist < GOAL_DISTANCE
        reward = (2.0 * (self._d_prev - dist) + 0.05 * (1.0 - abs(err) / math.pi) + 0.1 * math.exp(-dist / 0.5)
                  + 5.0 * float(success))
        self._d_prev = dist
        info = self._info(success=success)
        return self._obs(self._instruction), reward, success, (self._t >= self.max_steps) and not success, info

    def _info(self, success: bool) -> dict[str, Any]:
        x, y = self._state[:2]
        clearance = float(np.hypot(x - self._state[5], y - self._state[6])) - R_OBS - R_ROBOT
        margin = clearance - COST_DISTANCE
        sd = self.data.sensordata
        return {"margin": margin, "cost": float(margin < 0), "success": bool(success),
                "contact": bool(sd[self._sensor_obstacle] > 0), "contact_any": bool(any(sd[i] > 0 for i in self._sensor_any)),
                "distance": float(np.hypot(x - self._state[3], y - self._state[4])), "state": self._state.copy()}


def heading_error(state: np.ndarray) -> float:
    """Signed angle from the robot heading to the bearing of the target ball, in ``[-π, π]``."""
    bearing = math.atan2(state[4] - state[1], state[3] - state[0])
    e = bearing - state[2]
    return math.atan2(math.sin(e), math.cos(e))
