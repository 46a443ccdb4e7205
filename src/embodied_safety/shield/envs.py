"""The control envs of the ShieldVLA stages by any of their names, and their constructors.

Each env's names are its record in :mod:`embodied_safety.config.control_envs` (``dubins`` / ``DubinsVL`` /
``Dubins-VL`` / ``dubins_vl`` / ``embodied_safety/DubinsVL-v0`` are one env); a registered Gymnasium id of a
variant (``embodied_safety/DubinsVL-Color-v0``) works too. Dubins-VL's base variant also gets the vectorised
``DubinsVLVec`` for fast batched rollouts. MuJoCo is imported only when a MuJoCo env is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config.control_envs import control_env


def env_name(name: str) -> str:
    """The class-style name (``DubinsVL``) of any of an env's names; another name as it is."""
    env = control_env(name)
    return env.name if env else name


def rubric_env(name: str) -> str:
    """The rubric and frame-spec name (``dubins_vl``) of any of an env's names; another name as it is."""
    env = control_env(name)
    return env.rubric_env if env else name


def gym_id(name: str) -> str:
    """Any of an env's names -> the registered Gymnasium id; a full id as it is."""
    if "/" in name:
        return name
    return f"embodied_safety/{env_name(name)}-v0"


def env_factories(name: str) -> tuple[Callable[[], Any], Callable[[int], Any] | None]:
    """(make_env, make_vec or None): Dubins-VL's base variant gets the vectorised env as well."""
    eid = gym_id(name)
    if eid == "embodied_safety/DubinsVL-v0":
        from ..envs.control.dubins import DubinsVLEnv, DubinsVLVec

        return DubinsVLEnv, lambda n: DubinsVLVec(n, render=True)
    import gymnasium as gym

    import embodied_safety.envs.control  # noqa: F401  (registers the ids)

    return (lambda: gym.make(eid)), None
