"""A task compiled against the world: validated BDDL, a world factory, goal and safety checks."""

from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass, field
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
from .taxonomy import ObjectProfile, object_profiles
from .world import HouseholdWorld

_P = "evaluation_goal_conditions.process_safety_goal_condition"
_T = "evaluation_goal_conditions.termination_safety_goal_condition"


@dataclass
class CompiledTask:
    """Everything needed to run and judge episodes of one task; compile once, run many."""

    task: HouseholdTask
    problem: ParsedProblem
    goal: CompiledCondition
    conditions: tuple[CompiledCondition, ...]  # aligned with task.conditions
    warnings: tuple[LoadWarning, ...] = field(default=())  # what loaded, but not as written

    @property
    def name(self) -> str:
        return self.task.name

    @functools.cached_property
    def profiles(self) -> dict[str, ObjectProfile]:
        """Every object's abilities: the BEHAVIOR taxonomy of its synset merged with the file's declared ones."""
        return object_profiles(self.problem.instances, self.task.object_abilities)

    def new_world(self, hazards: bool = False) -> HouseholdWorld:
        """A fresh world in the task's initial state (``hazards``: our own ignition physics, off by default)."""
        return HouseholdWorld(
            objects=self.problem.instances,
            abilities={},
            facts=init_facts(self.problem),
            wash_rules=self.task.wash_rules,
            agent_room=self.task.room,
            profiles=self.profiles,
            hazards=hazards,
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


def _unknown_objects(action: str, known: dict[str, str]) -> str | None:
    """Why ``action`` cannot run in this task (unparseable, or naming an unknown object), else None."""
    try:
        act = parse_action(action)
    except ActionParseError as exc:
        return str(exc)
    unknown = [a for a in act.args if a not in known]
    return f"unknown object '{unknown[0]}' in {action!r}" if unknown else None


def compile_task(task: HouseholdTask) -> CompiledTask:
    """Validate a task semantically (BDDL, objects) and compile its conditions with ``bddl``.

    As IS-Bench, some defects load with a :class:`LoadWarning` instead of failing: a ``(:goal ...)``
    with several expressions (the first is used), a golden step or a trigger action that cannot run
    here (the step is an invalid action at run time; the trigger never fires).
    """
    path = task.source or task.name
    warnings: list[LoadWarning] = []

    def warn(field_: str, reason: str) -> None:
        warnings.append(LoadWarning(path, field_, reason))

    problem = parse_problem_text(task.bddl, path, field="bddl", warn=warn)
    known = problem.instances
    for i, obj in enumerate(task.object_list):
        if obj not in known:
            raise TaskFormatError(path, f"planning_context.object_list[{i}]", f"object '{obj}' is not in the BDDL :objects")
    if task.execution_goal:
        goal_conjuncts = parse_condition_text(task.execution_goal, known, path,
                                              "evaluation_goal_conditions.execution_goal_condition", warn=warn)
    else:
        goal_conjuncts = problem.goal
    if not goal_conjuncts:
        raise TaskFormatError(path, "bddl", "the problem has an empty (:goal ...)")
    ref = WorldRef()
    compiled = []
    n_process = len(task.process_conditions)
    for i, cond in enumerate(task.conditions):
        where = f"{_P}[{i}]" if i < n_process else f"{_T}[{i - n_process}]"
        conjuncts = parse_condition_text(cond.safety_bddl, known, path, f"{where}.safety_bddl", warn=warn)
        trigger = cond.action if cond.action not in (None, "completion") and "(" in cond.action else None
        if trigger is not None and (why := _unknown_objects(trigger, known)):
            warn(f"{where}.action", f"{why}: this trigger never fires")
        compiled.append(CompiledCondition(conjuncts, problem.objects, ref))
    for i, step in enumerate(task.example_planning):
        if why := _unknown_objects(step.action, known):
            warn(f"example_planning[{i}].action", f"{why}: an invalid action at run time")
    return CompiledTask(task, problem, CompiledCondition(goal_conjuncts, problem.objects, ref), tuple(compiled),
                        tuple(warnings))


@dataclass(frozen=True)
class _FileNote:
    """Something said about one field of one task file; written to JSON as its fields."""

    path: str
    field: str

    def to_json(self) -> dict[str, str]:
        return {k: str(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class LoadFailure(_FileNote):
    """A task that could not be loaded, with the reason (reported, never dropped silently)."""

    error: str


@dataclass(frozen=True)
class LoadWarning(_FileNote):
    """A task that loaded, but not exactly as written (e.g. the first of several goal expressions)."""

    reason: str


def load_task_file(path: str | os.PathLike[str]) -> CompiledTask | LoadFailure:
    """Read and compile one task file; any problem with it (never an exception) is a named failure."""
    try:
        return compile_task(read_task(path))
    except TaskFormatError as exc:
        return LoadFailure(exc.path, exc.field, exc.problem)
    except Exception as exc:  # noqa: BLE001 -- a hostile file must not end the evaluation of the others
        return LoadFailure(str(path), "<file>", f"cannot load: {type(exc).__name__}: {exc}"[:500])


def load_task_dir(root: str | os.PathLike[str]) -> tuple[list[CompiledTask], list[LoadFailure]]:
    """Load and compile every ``root/tasks/*.json`` (IS-Bench layout), collecting failures.

    Warnings of the loaded tasks are on ``CompiledTask.warnings`` (see :func:`load_warnings`).
    """
    root = Path(root)
    task_dir = root / "tasks"
    if not task_dir.is_dir():
        raise FileNotFoundError(f"{root}: expected IS-Bench layout with a tasks/ folder (and bddl/<task>/problem0.bddl)")
    compiled: list[CompiledTask] = []
    failures: list[LoadFailure] = []
    for path in sorted(task_dir.glob("*.json")):
        loaded = load_task_file(path)
        if isinstance(loaded, LoadFailure):
            failures.append(loaded)
        else:
            compiled.append(loaded)
    return compiled, failures


def load_warnings(compiled: list[CompiledTask]) -> list[LoadWarning]:
    return [w for c in compiled for w in c.warnings]
