"""Execute plans in the SafeAgentBench world and record what happened, step by step.

Every plan line is parsed (:func:`parse_step`); a line that does not parse, or an action the world finds
infeasible, is a *failed step* in the record (execution goes on with the next line, as upstream), never an
exception. An episode records the refusal (if any), each step with the world's message, the held object
and the last found object (what the long-horizon rule judge needs), the execution-based goal match when
the task has a ``final_state``, and the end state of the objects the task mentions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..envs.agentbench.actions import Action, StepParseError, parse_step
from ..envs.agentbench.dataset import BenchTask
from ..envs.agentbench.goals import match_final_state
from ..envs.agentbench.start import start_spec
from ..envs.agentbench.world import AgentBenchWorld
from .planners import Plan, Planner, parse_react, react_prompt
from .requirements import TraceStep

STATE_KEYS = ("objectId", "objectType", "isToggled", "isBroken", "isFilledWithLiquid", "fillLiquid", "isDirty",
              "isUsedUp", "isCooked", "isSliced", "isOpen", "isPickedUp", "parentReceptacles", "receptacleObjectIds")


@dataclass(frozen=True)
class StepRecord:
    text: str  # the plan line as written
    action: str | None  # canonical action text; None when the line did not parse
    success: bool
    message: str
    held: str | None = None  # object type held before the step
    near: str | None = None  # object type last found before the step


@dataclass(frozen=True)
class Episode:
    task_id: str
    task_type: str
    planner: str
    refused: bool
    reason: str | None
    steps: tuple[StepRecord, ...]
    exec_success: bool | None  # every final_state entry matched; None: the task has no final_state
    goal_entries: tuple[float, ...] = ()
    end_state: tuple[dict[str, Any], ...] = ()  # the mentioned objects at the end
    raw: str = ""  # the model's answer(s)
    truncated: bool = False  # the plan hit max_steps

    @property
    def execution_rate(self) -> float | None:
        """Executed / planned steps (None for a refusal or an empty plan)."""
        if self.refused or not self.steps:
            return None
        return sum(s.success for s in self.steps) / len(self.steps)

    def trace(self) -> list[TraceStep]:
        """The successfully executed steps, as the rule judge reads them."""
        return [TraceStep(parse_step(s.action), s.held, s.near) for s in self.steps if s.success and s.action]

    def cooked(self) -> frozenset[str]:
        return frozenset(o["objectType"] for o in self.end_state if o.get("isCooked"))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Episode:
        return cls(**{**raw, "steps": tuple(StepRecord(**s) for s in raw["steps"]),
                      "goal_entries": tuple(raw.get("goal_entries", ())),
                      "end_state": tuple(raw.get("end_state", ()))})


def task_world(task: BenchTask) -> AgentBenchWorld:
    """The world a task starts in: its room, the objects it names, the start rule of its goal and plan."""
    return AgentBenchWorld(task.scene, task.mentioned_objects(), start=start_spec(task.final_state, task.actions))


def _type(object_id: str | None) -> str | None:
    return object_id.split("|", 1)[0] if object_id else None


class Runner:
    """One task's world plus the bookkeeping of executing lines in it."""

    def __init__(self, task: BenchTask) -> None:
        self.task = task
        self.world = task_world(task)
        self.steps: list[StepRecord] = []
        self.near: str | None = None

    def execute(self, line: str) -> StepRecord:
        held = _type(self.world.holding)
        try:
            action: Action | None = parse_step(line)
        except StepParseError as exc:
            action, result = None, None
            record = StepRecord(line, None, False, f"unparseable: {exc}", held, self.near)
        if action is not None:
            result = self.world.execute(action)
            record = StepRecord(line, str(action), result.success, result.message, held, self.near)
            if result.success and action.name == "find":
                self.near = action.args[0]
        self.steps.append(record)
        return record

    def finish(self, planner: str, refused: bool = False, reason: str | None = None, raw: str = "",
               truncated: bool = False) -> Episode:
        metadata = self.world.metadata()
        match = match_final_state(metadata, list(self.task.final_state)) if self.task.final_state else None
        wanted = {t.lower() for t in self.task.mentioned_objects()}
        end = tuple({k: o.get(k) for k in STATE_KEYS} for o in metadata if str(o["objectType"]).lower() in wanted)
        return Episode(self.task.task_id, self.task.task_type, planner, refused, reason, tuple(self.steps),
                       None if match is None or refused else match.success,
                       match.entries if match else (), end, raw, truncated)


def run_plans(planner: Planner, tasks: Sequence[BenchTask], max_steps: int = 40) -> list[Episode]:
    """Plan every task (one batched call for model planners), then execute each plan in its own world."""
    runners = [Runner(t) for t in tasks]
    plans: list[Plan] = planner.plan(tasks, [r.world for r in runners])
    episodes = []
    for runner, plan in zip(runners, plans, strict=True):
        if plan.refused:
            episodes.append(runner.finish(planner.name, True, plan.reason, plan.raw))
            continue
        for line in plan.lines[:max_steps]:
            runner.execute(line)
        episodes.append(runner.finish(planner.name, raw=plan.raw, truncated=len(plan.lines) > max_steps))
    return episodes


def run_react(actor: Any, tasks: Sequence[BenchTask], name: str = "react", max_steps: int = 20,
              temperature: float = 0.0, seed: int = 0) -> list[Episode]:
    """ReAct: one ``Thought``/``Action`` turn at a time; the running tasks share one ``generate`` per turn.

    A task ends on DONE, on a refusal (only a refusal on the first turn counts as a rejection; later it
    ends the episode as a stop), or after ``max_steps`` turns."""
    runners = [Runner(t) for t in tasks]
    history: list[list[tuple[str, str]]] = [[] for _ in tasks]
    raws: list[list[str]] = [[] for _ in tasks]
    status: list[tuple[bool, str | None] | None] = [None] * len(tasks)  # (refused, reason) once finished
    truncated = [False] * len(tasks)
    for turn in range(max_steps):
        live = [i for i, s in enumerate(status) if s is None]
        if not live:
            break
        prompts = [react_prompt(tasks[i], runners[i].world, history[i]) for i in live]
        for i, text in zip(live, actor.generate(prompts, temperature=temperature, seed=seed + turn), strict=True):
            raws[i].append(text)
            answer = parse_react(text)
            if answer.refused:
                status[i] = (turn == 0, answer.reason)
            elif answer.done:
                status[i] = (False, None)
            else:
                record = runners[i].execute(answer.action)
                history[i].append((record.action or answer.action, record.message))
    for i, s in enumerate(status):
        if s is None:
            status[i], truncated[i] = (False, None), True
    return [r.finish(name, refused, reason if refused else None, "\n---\n".join(raws[i]), truncated[i])
            for i, (r, (refused, reason)) in enumerate(zip(runners, status, strict=True))]  # type: ignore[misc]
