"""One batched, auto-resetting view of every control env, for on-policy training (:mod:`.ppo`).

:class:`TrainVec` steps ``n`` episodes together and returns a :class:`Step` that carries both what the
policy sees next (after autoreset) and what the transition reached (the terminal frame, before reset), with
the simulator's margin and cost of each — the ``gt`` / ``binary`` margin sources and the evaluation read
those; the ``rubric`` source reads only the frames. Dubins-VL uses its numpy-vectorised env; the MuJoCo
envs run as a list of Gymnasium envs. Episode ``j`` of slot ``i`` is seeded ``seed + i + n·j``.

``obs="state"`` (Dubins-VL only: the state-based control of :mod:`.state_control`) puts the float32 7-D state
``[x, y, θ, gx, gy, ox, oy]`` where the frames go, and renders nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np


@dataclass
class Step:
    images: np.ndarray  # [n, H, W, 3] the next observation (a new episode's first frame where one ended)
    instructions: list[str]
    margin: np.ndarray  # [n] simulator margin of ``images``
    cost: np.ndarray  # [n] simulator cost of ``images``
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    reached_images: np.ndarray  # [n, H, W, 3] the frame the action led to (the terminal frame where done)
    reached_margin: np.ndarray
    reached_cost: np.ndarray
    success: np.ndarray
    #: the transition left the workspace (Dubins-VL's ``[-1, 1]²``; never elsewhere) and how many steps of the
    #: episode that exit cut off, this one included (0 where it did not exit)
    exited: np.ndarray | None = None
    steps_cut: np.ndarray | None = None

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


class TrainVec:
    """``reset() -> (images, instructions, margin, cost)``; ``step(actions) -> Step``."""

    def __init__(self, env: str, n: int, seed: int, perturbation: str | None = None,
                 max_steps: int | None = None, obs: Literal["image", "state"] = "image") -> None:
        from ..envs import gym_id

        self.n, self.seed = n, seed
        self._episodes = np.zeros(n, dtype=np.int64)
        self._dubins = gym_id(env) == "embodied_safety/DubinsVL-v0"
        self._state = obs == "state"
        if self._state and not self._dubins:
            raise ValueError(f"obs: state is implemented for Dubins-VL only, not {env!r}")
        kw = {} if max_steps is None else {"max_steps": max_steps}
        if self._dubins:
            from ...envs.control.dubins import DubinsVLVec

            self._vec = DubinsVLVec(n, render=not self._state, perturbation=perturbation, **kw)
            self._envs: list[Any] = []
        else:
            import gymnasium as gym

            import embodied_safety.envs.control  # noqa: F401  (registers the ids)

            self._envs = [gym.make(gym_id(env), perturbation=perturbation, **kw) for _ in range(n)]
            self._instructions = [""] * n

    def _dubins_margin(self, state: np.ndarray) -> np.ndarray:
        from ...envs.control.dubins import margin

        k = self._vec._b.k
        return margin(state[:, :2], state[:, 5:].reshape(len(state), k, 2))

    def reset(self) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
        if self._dubins:
            obs, info = self._vec.reset(seed=self.seed)
            first = info["state"].astype(np.float32) if self._state else obs["image"]
            return first, [str(s) for s in obs["instruction"]], info["margin"], info["cost"]
        images, margins, costs = [], [], []
        for i, env in enumerate(self._envs):
            obs, info = env.reset(seed=self.seed + i)
            images.append(obs["image"])
            self._instructions[i] = str(obs["instruction"])
            margins.append(info["margin"])
            costs.append(info["cost"])
        return np.stack(images), list(self._instructions), np.asarray(margins), np.asarray(costs)

    def step(self, actions: np.ndarray) -> Step:
        if self._dubins:
            return self._step_dubins(actions)
        n = self.n
        images, reached, fields = [], [], {k: np.zeros(n) for k in ("margin", "cost", "rm", "rc", "reward")}
        term, trunc, success = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool)
        for i, env in enumerate(self._envs):
            obs, r, te, tr, info = env.step(actions[i])
            reached.append(obs["image"])
            fields["reward"][i], term[i], trunc[i] = r, te, tr
            fields["rm"][i], fields["rc"][i], success[i] = info["margin"], info["cost"], info["success"]
            if te or tr:
                self._episodes[i] += 1
                obs, info = env.reset(seed=self.seed + i + n * int(self._episodes[i]))
                self._instructions[i] = str(obs["instruction"])
            images.append(obs["image"])
            fields["margin"][i], fields["cost"][i] = info["margin"], info["cost"]
        return Step(np.stack(images), list(self._instructions), fields["margin"], fields["cost"], fields["reward"],
                    term, trunc, np.stack(reached), fields["rm"], fields["rc"], success)

    def _step_dubins(self, actions: np.ndarray) -> Step:
        obs, reward, term, trunc, info = self._vec.step(np.asarray(actions).reshape(self.n))
        done = term | trunc
        if self._state:
            images = info["state"].astype(np.float32)
            final = info["final_state"].astype(np.float32) if done.any() else images
            reached = np.where(done[:, None], final, images)
        else:
            images = obs["image"]
            reached = np.where(done[:, None, None, None], info["final_image"], images) if done.any() else images
        margin_now = self._dubins_margin(info["state"])
        from ...envs.control.dubins import OUT_OF_BOUNDS_PENALTY

        exited = np.asarray(info["out_of_bounds"], dtype=bool)  # its reward: -penalty x the steps it cut off
        return Step(images, [str(s) for s in obs["instruction"]], margin_now, (margin_now < 0).astype(np.float64),
                    reward, term, trunc, reached, info["margin"], info["cost"], info["success"], exited,
                    np.where(exited, np.round(-reward / OUT_OF_BOUNDS_PENALTY), 0.0))

    def close(self) -> None:
        for env in self._envs:
            env.close()
