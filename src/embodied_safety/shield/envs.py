"""Short names of the control envs used by the ShieldVLA stages, and their constructors.

``dubins`` -> Dubins-VL (with the vectorised ``DubinsVLVec`` for fast batched rollouts), ``turtlebot`` ->
TurtleBot-Nav, ``franka`` -> Franka-Reach; a registered Gymnasium id (``embodied_safety/DubinsVL-Color-v0``)
or the class-style name (``DubinsVL``) works too. MuJoCo is imported only when a MuJoCo env is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ENVS: dict[str, str] = {"dubins": "DubinsVL", "turtlebot": "TurtleBotNav", "franka": "FrankaReach"}
RUBRIC_ENV: dict[str, str] = {"dubins": "dubins_vl", "turtlebot": "turtlebot_nav", "franka": "franka_reach"}


def gym_id(name: str) -> str:
    """``dubins`` / ``DubinsVL`` / a full id -> the registered Gymnasium id."""
    if "/" in name:
        return name
    return f"embodied_safety/{ENVS.get(name, name)}-v0"


def env_factories(name: str) -> tuple[Callable[[], Any], Callable[[int], Any] | None]:
    """(make_env, make_vec or None): Dubins-VL's base variant gets the vectorised env as well."""
    eid = gym_id(name)
    if eid == "embodied_safety/DubinsVL-v0":
        from ..envs.control.dubins import DubinsVLEnv, DubinsVLVec

        return DubinsVLEnv, lambda n: DubinsVLVec(n, render=True)
    import gymnasium as gym

    import embodied_safety.envs.control  # noqa: F401  (registers the ids)

    return (lambda: gym.make(eid)), None
