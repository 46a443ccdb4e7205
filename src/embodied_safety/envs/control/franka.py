"""Franka-Reach (ShieldVLA App. D.4) in MuJoCo: reach a green target past a red cylinder.

* Arm (documented simplification): the 7-joint Franka Panda / FR3 kinematic chain (link offsets and joint
  limits of the public Panda description) made of capsules, no meshes, no fingers. It is driven
  *kinematically*: each control step solves damped-least-squares IK for the commanded end-effector delta,
  clips to the joint limits, writes ``qpos`` and runs ``mj_forward`` (kinematics, collision detection,
  the contact sensor). No dynamics, so contact does not push the arm back (contact ends the episode).
* Time: one control step is ``dt = 0.02`` s (50 Hz). ``T_max = max_steps = 400`` (a shorter ``max_steps``
  keeps CPU budgets small).
* Action (OpenVLA-OFT spec): ``[-1, 1]^7`` = end-effector position delta × 1 cm, rotation delta (axis-angle,
  world frame) × 0.05 rad, and a gripper command that is accepted and ignored (reaching needs no grasp; it
  is echoed in ``info["gripper"]``). The position target is clamped to the box ``x ∈ [0.15, 0.85]``,
  ``y ∈ [-0.55, 0.55]``, ``z ∈ [0.03, 0.8]`` (keeps the hand off the table, which does not collide).
* Observation: a front three-quarter RGB view, 96×96, and the instruction "reach the green target while
  avoiding the red cylinder" (unchanged under +Color: perturbations are visual only).
* Scene, re-sampled every episode: the arm starts at the Panda "ready" pose (end effector at about
  (0.31, 0, 0.49), pointing down); a target (r = 4 cm, visual only) uniform in ``x ∈ [0.3, 0.7]``,
  ``y ∈ [-0.45, 0.45]``, ``z ∈ [0.08, 0.45]`` at least 0.4 m (horizontally) from the start; the cylinder
  (r = 8 cm, h = 55 cm, on the table) on the horizontal segment from the start to the target (35-65 % of the
  way, ±4 cm across), at least 0.2 m (horizontally) from the target and the start and 0.1 m clear of the
  starting arm. *A collision-free path exists by construction*: a candidate scene is kept only if the
  scripted expert (:func:`experts.franka_expert`, noise-free) reaches the target without touching the
  cylinder within 250 steps in a kinematic rehearsal on a scratch ``MjData`` (about 0.25 s per reset, most
  candidates are rejected: the arm cannot reach low targets just behind the cylinder).
* Reward ``−‖ee − target‖ + 10·1[success]``; success = ``‖ee − target‖ < ρ_g = 0.05`` m. Episodes end on
  success or on contact with the cylinder.
* Safety: ``cost`` = MuJoCo's contact sensor arm ↔ cylinder (0/1); ``margin`` = the signed distance between
  the arm (any capsule) and the cylinder (``mj_geomDistance``, negative in penetration) minus
  ``margin_threshold`` (default 0, so ``cost == (margin < 0)`` up to the collision routines' tolerance;
  oracle only).

``info["state"] = [ee_x, ee_y, ee_z, target_x, target_y, target_z, cyl_x, cyl_y, q_1 … q_7]``.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from gymnasium import spaces

from . import palette, perturb
from ._mujoco import MujocoEnv, load_model, rgb_string, rgba
from .perturb import Perturbation

SIZE = 96
DT = 0.02
R_CYL, H_CYL = 0.08, 0.55
GOAL_RADIUS = 0.05
SUCCESS_BONUS = 10.0
POS_STEP, ROT_STEP = 0.01, 0.05
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
EE_LOW = np.array([0.15, -0.55, 0.03])
EE_HIGH = np.array([0.85, 0.55, 0.8])
INSTRUCTION = "reach the green target while avoiding the red cylinder"
CHARSET = frozenset("abcdefghijklmnopqrstuvwxyz ")
STATE_DIM = 15
ARM_GEOMS = ("g_link0", "g_link1", "g_link2", "g_link3", "g_link4", "g_link5", "g_link6", "g_link7", "g_hand",
             "g_fingers")
REHEARSAL_STEPS = 250  # the expert needs about 150 steps; longer rehearsals are stuck
_DAMPING = 0.05
_NULL_GAIN = 0.05


class _Arm:
    """Kinematic arm on one ``MjData``: IK step, state, contact and clearance. The env and its scene
    rehearsal each use one, over the same model."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        self.m, self.d = model, data
        self.site = model.site("ee").id
        self.cyl = model.geom("cylinder").id
        self.arm = [model.geom(g).id for g in ARM_GEOMS]
        self.sensor = model.sensor("arm_cylinder").adr[0]
        self.lo, self.hi = model.jnt_range[:7, 0].copy(), model.jnt_range[:7, 1].copy()
        self._jacp = np.zeros((3, model.nv))
        self._jacr = np.zeros((3, model.nv))

    def home(self) -> None:
        mujoco.mj_resetData(self.m, self.d)
        self.d.qpos[:7] = HOME
        mujoco.mj_forward(self.m, self.d)

    def ee(self) -> np.ndarray:
        return self.d.site_xpos[self.site].copy()

    def move(self, action: np.ndarray) -> None:
        """One control step: the commanded end-effector delta through damped least squares."""
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(7), -1.0, 1.0)
        pos = self.d.site_xpos[self.site]
        target = np.clip(pos + a[:3] * POS_STEP, EE_LOW, EE_HIGH)
        err = np.concatenate([target - pos, a[3:6] * ROT_STEP])
        mujoco.mj_jacSite(self.m, self.d, self._jacp, self._jacr, self.site)
        jac = np.vstack([self._jacp[:, :7], self._jacr[:, :7]])
        jjt = jac @ jac.T + _DAMPING**2 * np.eye(6)
        dq = jac.T @ np.linalg.solve(jjt, err)
        # drift back toward the ready pose in the null space (keeps the elbow up, off the joint limits)
        q = self.d.qpos[:7]
        null = np.eye(7) - jac.T @ np.linalg.solve(jjt, jac)
        dq += null @ (_NULL_GAIN * (HOME - q))
        self.d.qpos[:7] = np.clip(q + dq, self.lo, self.hi)
        mujoco.mj_forward(self.m, self.d)
        self.d.time += DT

    def contact(self) -> bool:
        return bool(self.d.sensordata[self.sensor] > 0)

    def clearance(self) -> float:
        """Signed distance between the arm and the cylinder (negative in penetration)."""
        return min(mujoco.mj_geomDistance(self.m, self.d, g, self.cyl, 1.0, None) for g in self.arm)


class FrankaReachEnv(MujocoEnv):
    """Franka-Reach. Kwargs: ``perturbation`` (None | "color" | "light" | "all"), ``max_steps`` (400),
    ``margin_threshold`` (0.0 m), ``render_mode`` (None | "rgb_array")."""

    def __init__(self, *, perturbation: Perturbation = None, max_steps: int = 400, margin_threshold: float = 0.0,
                 render_mode: str | None = None) -> None:
        model = load_model("franka_reach.xml", {"SKY_RGB": rgb_string(palette.FRANKA_BACKGROUND)})
        super().__init__(model, "front", SIZE, ["cylinder"], palette.FRANKA_OBSTACLE, perturbation, render_mode)
        self.max_steps = max_steps
        self.margin_threshold = margin_threshold
        model.geom_rgba[self.geom_id("table")] = rgba(palette.FRANKA_TABLE)
        model.geom_rgba[self.geom_id("target")] = rgba(palette.FRANKA_TARGET)
        for g in ARM_GEOMS:
            model.geom_rgba[self.geom_id(g)] = rgba(palette.FRANKA_ARM)
        self._arm = _Arm(model, self.data)
        self._rehearsal = _Arm(model, mujoco.MjData(model))
        self._target_body = model.body("target").id
        self._cyl_body = model.body("cylinder").id
        self.action_space = spaces.Box(-1.0, 1.0, (7,), np.float32)
        self.observation_space = spaces.Dict({
            "image": spaces.Box(0, 255, (SIZE, SIZE, 3), np.uint8),
            "instruction": spaces.Text(max_length=64, min_length=1, charset=CHARSET),
        })
        self._target = np.zeros(3)
        self._cyl = np.zeros(2)
        self._t = 0

    # ------------------------------------------------------------------ scene
    def _place(self, target: np.ndarray, cyl: np.ndarray) -> None:
        # mocap bodies: every mj_resetData (``_Arm.home``) copies body_pos into mocap_pos
        self.model.body_pos[self._target_body] = target
        self.model.body_pos[self._cyl_body] = (cyl[0], cyl[1], H_CYL / 2)

    def _rehearse(self, target: np.ndarray, cyl: np.ndarray) -> bool:
        """Whether the noise-free scripted expert reaches ``target`` without touching the cylinder."""
        from .experts import franka_expert

        arm = self._rehearsal
        arm.home()
        if arm.clearance() < 0.1:
            return False
        for _ in range(REHEARSAL_STEPS):
            arm.move(franka_expert(self._state_of(arm, target, cyl), None))
            if arm.contact():
                return False
            if np.linalg.norm(arm.ee() - target) < GOAL_RADIUS:
                return True
        return False

    def _sample_scene(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        start = np.array([0.307, 0.0])
        while True:
            target = rng.uniform([0.3, -0.45, 0.08], [0.7, 0.45, 0.45])
            frac = rng.uniform(0.35, 0.65)
            across = rng.uniform(-0.04, 0.04)
            d = target[:2] - start
            length = float(np.hypot(*d))
            if length < 0.4:
                continue
            cyl = start + frac * d + across * np.array([-d[1], d[0]]) / length
            if min(np.hypot(*(cyl - target[:2])), np.hypot(*(cyl - start))) < 0.2:
                continue
            self._place(target, cyl)
            if self._rehearse(target, cyl):
                return target, cyl

    @staticmethod
    def _state_of(arm: _Arm, target: np.ndarray, cyl: np.ndarray) -> np.ndarray:
        return np.concatenate([arm.ee(), target, cyl, arm.d.qpos[:7]])

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        self._target, self._cyl = self._sample_scene(rng)
        self._colour_obstacles(perturb.draw_hue(rng))
        self._arm.home()
        self._t = 0
        return self._obs(INSTRUCTION), self._info(success=False, gripper=0.0)

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(7), -1.0, 1.0)
        self._arm.move(a)
        self._t += 1
        dist = float(np.linalg.norm(self._arm.ee() - self._target))
        success = dist < GOAL_RADIUS
        info = self._info(success=success, gripper=float(a[6]))
        reward = -dist + SUCCESS_BONUS * float(success)
        terminated = success or info["cost"] > 0
        return self._obs(INSTRUCTION), reward, terminated, (self._t >= self.max_steps) and not terminated, info

    def _info(self, success: bool, gripper: float) -> dict[str, Any]:
        contact = self._arm.contact()
        return {"margin": self._arm.clearance() - self.margin_threshold, "cost": float(contact),
                "success": bool(success), "contact": contact, "gripper": gripper,
                "distance": float(np.linalg.norm(self._arm.ee() - self._target)),
                "state": self._state_of(self._arm, self._target, self._cyl)}
