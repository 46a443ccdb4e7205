"""One record per ShieldVLA control env: every name it goes by and its default per-env settings.

A new control env is its module under ``envs/control/`` plus one :class:`ControlEnv` here: the Gymnasium
registration (``envs/control``), the stages' per-env defaults (``bc_policy.epochs``, ``shield_ppo.eval_episodes`` ...),
the rubric set, the name in tables and figures, and every spelling the code accepts come from the record.
``params.yaml`` still sets any of them per env (``bc_policy.epochs: {dubins: 20, ...}``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ControlEnv:
    key: str  # the short name params.yaml and the stages use: ``dubins`` (stage ``shield_ppo@dubins``)
    name: str  # the class-style name in the Gymnasium id: ``DubinsVL`` -> ``embodied_safety/DubinsVL-v0``
    entry_point: str  # ``module:Class``, a string so MuJoCo is imported only when the env is made
    display: str  # tables and figures: ``Dubins-VL``
    rubric_env: str  # the rubric and frame-spec name: ``dubins_vl``
    max_steps: int  # the episode length (the envs end their own episodes)
    defaults: Mapping[str, Any]  # ``"<section>.<field>"`` -> this env's default value

    @property
    def gym_id(self) -> str:
        return f"embodied_safety/{self.name}-v0"

    @property
    def spellings(self) -> frozenset[str]:
        return frozenset({self.key, self.name, self.display, self.rubric_env, self.gym_id})


CONTROL_ENVS: tuple[ControlEnv, ...] = (
    ControlEnv("dubins", "DubinsVL", "embodied_safety.envs.control.dubins:DubinsVLEnv", "Dubins-VL", "dubins_vl", 100, {
        "shield_demos.episodes": 200, "shield_rollouts.episodes": 256, "rubric_label.rubric_sets": "dubins_vl_5r",
        "bc_policy.epochs": 20, "bc_policy.eval_episodes": 200, "bc_policy.restarts": 1,
        "bc_policy.select_episodes": 400, "bc_policy.dagger_rounds": 5, "bc_policy.dagger_episodes": 100,
        "bc_policy.dagger_epochs": 5, "shield_ppo.select_episodes": 300, "shield_ppo.eval_episodes": 200}),
    ControlEnv("turtlebot", "TurtleBotNav", "embodied_safety.envs.control.turtlebot:TurtleBotNavEnv", "TurtleBot-Nav",
               "turtlebot_nav", 100, {
        "shield_demos.episodes": 40, "shield_rollouts.episodes": 40, "rubric_label.rubric_sets": "turtlebot_nav_5r",
        "bc_policy.epochs": 8, "bc_policy.eval_episodes": 20, "bc_policy.restarts": 1,
        "bc_policy.select_episodes": 10, "bc_policy.dagger_rounds": 0, "bc_policy.dagger_episodes": 10,
        "bc_policy.dagger_epochs": 2, "shield_ppo.select_episodes": 20, "shield_ppo.eval_episodes": 20}),
    ControlEnv("franka", "FrankaReach", "embodied_safety.envs.control.franka:FrankaReachEnv", "Franka-Reach",
               "franka_reach", 400, {
        "shield_demos.episodes": 12, "shield_rollouts.episodes": 8, "rubric_label.rubric_sets": "franka_reach_2r",
        "bc_policy.epochs": 8, "bc_policy.eval_episodes": 6, "bc_policy.restarts": 1,
        "bc_policy.select_episodes": 4, "bc_policy.dagger_rounds": 0, "bc_policy.dagger_episodes": 4,
        "bc_policy.dagger_epochs": 2, "shield_ppo.select_episodes": 10, "shield_ppo.eval_episodes": 10}),
)
ENV_KEYS: tuple[str, ...] = tuple(e.key for e in CONTROL_ENVS)


def control_env(name: str) -> ControlEnv | None:
    """The record of any of an env's spellings (``dubins``, ``DubinsVL``, ``Dubins-VL``, ``dubins_vl``, its Gymnasium
    id); None for anything else (a perturbed variant's id, an env registered elsewhere)."""
    return next((e for e in CONTROL_ENVS if name in e.spellings), None)


def display_name(name: str) -> str:
    """The name in tables and figures (``Dubins-VL``); an unknown name as it is."""
    env = control_env(name)
    return env.display if env else name


def env_defaults(field: str) -> Any:
    """A config field whose default is each record's ``defaults[field]`` (``"bc_policy.epochs"``)."""
    return dataclasses.field(default_factory=lambda: {e.key: e.defaults[field] for e in CONTROL_ENVS
                                                      if field in e.defaults})
