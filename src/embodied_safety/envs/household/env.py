"""A task compiled against the world: validated BDDL, a world factory, goal and safety checks."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import TaskFormatError
from .actions import ActionParseError, parse_action
from .bddl_backend import (
    CompiledCondition,
    ParsedProblem,
    WorldRef,
    init_facts,
    parse_condition_text,
    parse_problem_text,
)
from .task import HouseholdTask, SafetyCondition, read_task
from .world import HouseholdWorld, WashRules

_P = "evaluation_goal_conditions.process_safety_goal_condition"
_T = "evaluation_goal_conditions.termination_safety_goal_condition"


@dataclass
class CompiledTask:
    """Everything needed to run and judge episodes of one task; compile once, run many."""

    task: HouseholdTask
    problem: ParsedProblem
    goal: CompiledCondition
    conditions: tuple[CompiledCondition, ...]  # aligned with task.conditions

    @property
    def name(self) -> str:
        return self.task.name

    def new_world(self) -> HouseholdWorld:
        """A fresh world in the task's initial state."""
        return HouseholdWorld(
            objects=self.problem.instances,
            abilities=self.task.object_abilities,
            facts=init_facts(self.problem),
            wash_rules=WashRules(self.task.wash_rules),
            agent_room=self.task.room,
        )

    def goal_met(self, world: HouseholdWorld) -> bool:
        return self.goal.holds(world)

    def condition_holds(self, index: int, world: HouseholdWorld) -> bool:
        return self.conditions[index].holds(world)

    def violated(self, world: HouseholdWorld, kind: str | None = None) -> list[SafetyCondition]:
        """Conditions (optionally of one kind) that do not hold in ``world``."""
        return [
            c for c, cc in zip(self.task.conditions, self.conditions, strict=True)
            if (kind is None or c.kind == kind) and not cc.holds(world)
        ]


def _check_action_objects(action: str, known: dict[str, str], path: str, field: str) -> None:
    try:
        act = parse_action(action)
    except ActionParseError as exc:
        raise TaskFormatError(path, field, str(exc)) from exc
    for arg in act.args:
        if arg not in known:
            raise TaskFormatError(path, field, f"unknown object '{arg}' in {action!r}")


def compile_task(task: HouseholdTask) -> CompiledTask:
    """Validate a task semantically (BDDL, objects, plan) and compile its conditions with ``bddl``."""
    path = task.source or task.name
    problem = parse_problem_text(task.bddl, path, field="bddl")
    known = problem.instances
    for i, obj in enumerate(task.object_list):
        if obj not in known:
            raise TaskFormatError(path, f"planning_context.object_list[{i}]", f"object '{obj}' is not in the BDDL :objects")
    if task.execution_goal:
        goal_conjuncts = parse_condition_text(task.execution_goal, known, path, "evaluation_goal_conditions.execution_goal_condition")
    else:
        goal_conjuncts = problem.goal
    if not goal_conjuncts:
        raise TaskFormatError(path, "bddl", "the problem has an empty (:goal ...)")
    ref = WorldRef()
    compiled = []
    n_process = len(task.process_conditions)
    for i, cond in enumerate(task.conditions):
        where = f"{_P}[{i}]" if i < n_process else f"{_T}[{i - n_process}]"
        conjuncts = parse_condition_text(cond.safety_bddl, known, path, f"{where}.safety_bddl")
        if cond.action not in (None, "completion") and "(" in cond.action:
            _check_action_objects(cond.action, known, path, f"{where}.action")
        compiled.append(CompiledCondition(conjuncts, problem.objects, ref))
    for i, step in enumerate(task.example_planning):
        _check_action_objects(step.action, known, path, f"example_planning[{i}].action")
    return CompiledTask(task, problem, CompiledCondition(goal_conjuncts, problem.objects, ref), tuple(compiled))


@dataclass(frozen=True)
class LoadFailure:
    """A task that could not be loaded, with the reason (reported, never dropped silently)."""

    path: str
    field: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "field": self.field, "error": self.error}


def load_task_dir(root: str | os.PathLike[str]) -> tuple[list[CompiledTask], list[LoadFailure]]:
    """Load and compile every ``root/tasks/*.json`` (IS-Bench layout), collecting failures."""
    root = Path(root)
    task_dir = root / "tasks"
    if not task_dir.is_dir():
        raise FileNotFoundError(f"{root}: expected IS-Bench layout with a tasks/ folder (and bddl/<task>/problem0.bddl)")
    compiled, failures = [], []
    for path in sorted(task_dir.glob("*.json")):
        try:
            compiled.append(compile_task(read_task(path)))
        except TaskFormatError as exc:
            failures.append(LoadFailure(exc.path, exc.field, exc.problem))
    return compiled, failures
