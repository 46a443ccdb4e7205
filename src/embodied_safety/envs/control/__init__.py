"""ShieldVLA's control environments (App. D.1, D.2, D.4) behind the Gymnasium API, with the §5.5 test-time
visual perturbations as registered variants.

Importing this package registers, by *string* entry point (so MuJoCo is imported only when a MuJoCo env is
made, and torch never):

* ``embodied_safety/DubinsVL-v0``     numpy Dubins car, top-down 84×84 (:mod:`.dubins`)
* ``embodied_safety/TurtleBotNav-v0`` MuJoCo differential drive, egocentric 96×96 (:mod:`.turtlebot`)
* ``embodied_safety/FrankaReach-v0``  MuJoCo 7-joint arm, front 96×96 (:mod:`.franka`)

each also as ``-Color-v0``, ``-Light-v0`` and ``-All-v0`` (``perturbation="color" | "light" | "all"``, see
:mod:`.perturb`). Episodes end inside the envs (``max_steps``), so no ``TimeLimit`` wrapper is added.
Observations are ``{"image": uint8 (H, W, 3), "instruction": str}``; ``info`` always has ``margin``,
``cost``, ``success`` and the privileged ``state`` (experts and oracles only). Batched Dubins-VL is
:class:`.dubins.DubinsVLVec`. Decisions and measured numbers: ``docs/control_envs.md``.
"""

from __future__ import annotations

import gymnasium as gym

from ...config.control_envs import CONTROL_ENVS
from .perturb import VARIANTS

#: class-style name -> ``module:Class``, one per record of :mod:`embodied_safety.config.control_envs`
ENTRY_POINTS = {env.name: env.entry_point for env in CONTROL_ENVS}


def env_id(name: str, perturbation: str | None = None) -> str:
    """``env_id("TurtleBotNav", "color") == "embodied_safety/TurtleBotNav-Color-v0"``."""
    suffix = {p: s for s, p in VARIANTS.items()}[perturbation]
    return f"embodied_safety/{name}{suffix}-v0"


ENV_IDS: tuple[str, ...] = tuple(env_id(name, p) for name in ENTRY_POINTS for p in VARIANTS.values())


def _register() -> None:
    for name, entry in ENTRY_POINTS.items():
        for perturbation in VARIANTS.values():
            eid = env_id(name, perturbation)
            if eid not in gym.registry:
                gym.register(id=eid, entry_point=entry, kwargs={"perturbation": perturbation})


_register()

__all__ = ["ENTRY_POINTS", "ENV_IDS", "env_id"]
