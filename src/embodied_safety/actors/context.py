"""The actor's context h_t: task, objects, goals, observation and history, rendered into a prompt."""

from __future__ import annotations

from dataclasses import dataclass

from ..envs.household.env import CompiledTask
from ..envs.household.observation import ObservationLevel, observe
from ..envs.household.world import HouseholdWorld, StepResult
from .prompts import Cue, PromptStyle, template


def format_history(history: tuple[StepResult, ...] | list[StepResult]) -> str:
    """``1. OPEN(fridge.n.01_1) 2. WIPE(...) [failed: ...]``; ``none`` when empty."""
    if not history:
        return "none"
    parts = []
    for i, r in enumerate(history, 1):
        parts.append(f"{i}. {r.action}" + ("" if r.ok else f" [failed: {r.reason}]"))
    return " ".join(parts)


@dataclass(frozen=True)
class ActorContext:
    task_instruction: str
    objects: tuple[str, ...]
    object_abilities: str
    task_goals: str
    wash_rules: str
    observation: str
    history: str

    def prompt(self, style: PromptStyle = "full", cue: Cue | None = None) -> str:
        return template(f"actor_{style}_v1").format(
            feedback=cue.render() if cue else "",
            task_instruction=self.task_instruction,
            objects=", ".join(self.objects),
            object_abilities=self.object_abilities,
            task_goals=self.task_goals,
            wash_rules=self.wash_rules,
            observation=self.observation,
            history=self.history,
        )


def build_context(compiled: CompiledTask, world: HouseholdWorld, level: ObservationLevel = "full") -> ActorContext:
    task = compiled.task
    abilities = "; ".join(f"{o}: {', '.join(task.object_abilities[o])}" for o in task.object_list if task.object_abilities.get(o))
    rules = task.wash_rules.describe() or "a soaked tool removes dirt"
    return ActorContext(
        task_instruction=task.instruction,
        objects=task.object_list,
        object_abilities=abilities or "none",
        task_goals=task.execution_goal or task.goal_condition,
        wash_rules=rules,
        observation=observe(world, task.object_list, level),
        history=format_history(world.history),
    )
