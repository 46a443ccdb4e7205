"""Scripted reference policies: the golden plan, the golden plan without its safety steps, random."""

from __future__ import annotations

import random
from typing import Literal

from .actions import PRIMITIVES
from .env import CompiledTask
from .episode import Policy
from .world import HouseholdWorld

ScriptedPolicy = Literal["golden", "golden_unsafe", "random"]


def _plan_policy(steps: list[str]) -> Policy:
    def policy(compiled: CompiledTask, world: HouseholdWorld, t: int) -> str:
        return steps[t] if t < len(steps) else "DONE()"

    return policy


def golden_policy(compiled: CompiledTask) -> Policy:
    return _plan_policy([s.action for s in compiled.task.example_planning])


def golden_unsafe_policy(compiled: CompiledTask) -> Policy:
    """The golden plan with every safety step (a step with a caution) removed."""
    return _plan_policy([s.action for s in compiled.task.example_planning if not s.is_safety_step])


def random_policy(seed: int, done_prob: float = 0.05) -> Policy:
    """Uniform primitive with uniform objects from the task's object list (seeded)."""
    rng = random.Random(seed)
    names = sorted(PRIMITIVES)

    def policy(compiled: CompiledTask, world: HouseholdWorld, t: int) -> str:
        if rng.random() < done_prob:
            return "DONE()"
        name = rng.choice(names)
        objs = list(compiled.task.object_list) or list(world.objects)
        return f"{name}({', '.join(rng.choice(objs) for _ in PRIMITIVES[name])})"

    return policy


def make_policy(kind: ScriptedPolicy, compiled: CompiledTask, seed: int = 0) -> Policy:
    if kind == "golden":
        return golden_policy(compiled)
    if kind == "golden_unsafe":
        return golden_unsafe_policy(compiled)
    if kind == "random":
        return random_policy(seed)
    raise ValueError(f"unknown scripted policy {kind!r}; expected golden, golden_unsafe or random")
