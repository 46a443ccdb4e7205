"""One evaluation shard, (planner, task type): build the planner its spec names, run it, judge the episodes.

No Prefect here: ``tasks/agentbench.py`` wraps :func:`run_shard` in a retried task, and passes the
process's actor loader so one model serves every shard of a planner (and its guarded twin: LLM answers are
memoised per prompt, so ``smollm2+guard`` re-uses ``smollm2``'s plans instead of generating again).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..config.agentbench_eval import AgentBenchEvalConfig
from ..envs.agentbench.dataset import TASK_TYPES, BenchTask
from .episode import Episode, run_plans, run_react
from .guard import GuardedPlanner
from .judges import LLMJudge, RuleJudge, Verdict
from .planners import LLMPlanner, Planner, ReferencePlanner

ActorLoader = Callable[[dict[str, Any]], Any]  # ActorConfig fields -> an actor (``generate``)


@dataclass(frozen=True)
class ShardResult:
    planner: str
    task_type: str
    episodes: tuple[Episode, ...]
    verdicts: dict[str, tuple[Verdict, ...]]  # judge backend -> one verdict per episode

    def to_json(self) -> dict[str, Any]:
        return {"planner": self.planner, "task_type": self.task_type,
                "episodes": [e.to_json() for e in self.episodes],
                "verdicts": {k: [v.__dict__ for v in vs] for k, vs in self.verdicts.items()}}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ShardResult:
        return cls(raw["planner"], raw["task_type"], tuple(Episode.from_json(e) for e in raw["episodes"]),
                   {k: tuple(Verdict(**v) for v in vs) for k, vs in raw["verdicts"].items()})


def row_of(task: BenchTask) -> str:
    """The file row a task came from (abstract rows give four tasks)."""
    return task.task_id.rsplit("/L", 1)[0] if task.level else task.task_id


def select_rows(tasks: Sequence[BenchTask], max_rows: int) -> list[BenchTask]:
    """An even spread of ``max_rows`` rows (all of a row's tasks), deterministic; 0 keeps everything."""
    rows = list(dict.fromkeys(row_of(t) for t in tasks))
    if not max_rows or max_rows >= len(rows):
        return list(tasks)
    keep = {rows[(i * len(rows)) // max_rows] for i in range(max_rows)}
    return [t for t in tasks if row_of(t) in keep]


def shard_calls(tasks: list[BenchTask], cfg: AgentBenchEvalConfig) -> list[tuple[str, str, list[BenchTask]]]:
    """Every (planner, task type, its selected tasks) shard of a run."""
    by_type: dict[str, list[BenchTask]] = defaultdict(list)
    for t in tasks:
        by_type[t.task_type].append(t)
    calls = []
    for planner in cfg.planners:
        rows = _max_rows(planner, cfg)
        for task_type in TASK_TYPES:
            chosen = select_rows(by_type.get(task_type, []), rows)
            if chosen and not (task_type == "long_horizon" and _kind(planner, cfg) == "reference"):
                calls.append((planner, task_type, chosen))  # the dataset has no long-horizon plans to replay
    return calls


def _kind(planner: str, cfg: AgentBenchEvalConfig) -> str:
    spec = cfg.planner_specs[planner]
    return _kind(spec["inner"], cfg) if spec["kind"] == "guard" else spec["kind"]


def _max_rows(planner: str, cfg: AgentBenchEvalConfig) -> int:
    spec = cfg.planner_specs[planner]
    return int(spec.get("max_rows", 0)) or (_max_rows(spec["inner"], cfg) if spec["kind"] == "guard" else 0)


class _Memo:
    """An actor whose answers are remembered per (prompt, temperature, seed) for this process."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.prompt_style = getattr(actor, "prompt_style", "full")
        self.answers: dict[tuple[str, float, int], str] = {}

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int = 0) -> list[str]:
        todo = list(dict.fromkeys(p for p in prompts if (p, temperature, seed) not in self.answers))
        if todo:
            for p, text in zip(todo, self.actor.generate(todo, temperature=temperature, seed=seed), strict=True):
                self.answers[(p, temperature, seed)] = text
        return [self.answers[(p, temperature, seed)] for p in prompts]


_MEMOS: dict[str, _Memo] = {}


def memo_actor(spec_actor: dict[str, Any], load: ActorLoader) -> _Memo:
    key = json.dumps(spec_actor, sort_keys=True)
    if key not in _MEMOS:
        _MEMOS[key] = _Memo(load(spec_actor))
    return _MEMOS[key]


def build_planner(name: str, specs: dict[str, dict[str, Any]], load: ActorLoader, temperature: float = 0.0,
                  seed: int = 0) -> Planner:
    """A one-shot planner for ``specs[name]`` (kind reference | guard | llm; react runs by :func:`run_shard`)."""
    spec = specs[name]
    if spec["kind"] == "reference":
        return ReferencePlanner()
    if spec["kind"] == "guard":
        return GuardedPlanner(build_planner(spec["inner"], specs, load, temperature, seed), name=name)
    if spec["kind"] == "llm":
        return LLMPlanner(memo_actor(spec.get("actor", {}), load), name=name, temperature=temperature, seed=seed,
                          prompt=spec.get("prompt", "plan_zero_shot_v1"))
    raise ValueError(f"planner {name!r}: kind {spec['kind']!r} is not a one-shot planner")


def run_shard(name: str, specs: dict[str, dict[str, Any]], tasks: Sequence[BenchTask], load: ActorLoader,
              judges: Sequence[str] = ("rule",), judge_actor: dict[str, Any] | None = None, judge_retries: int = 1,
              max_steps: int = 40, react_max_steps: int = 12, temperature: float = 0.0, seed: int = 0) -> ShardResult:
    """Plan, execute and judge ``tasks`` (one task type) with planner ``name``."""
    spec = specs[name]
    if spec["kind"] == "react":
        episodes = run_react(memo_actor(spec.get("actor", {}), load), tasks, name, react_max_steps, temperature, seed)
    else:
        episodes = run_plans(build_planner(name, specs, load, temperature, seed), tasks, max_steps)
    verdicts: dict[str, tuple[Verdict, ...]] = {}
    for backend in judges:
        judge = RuleJudge() if backend == "rule" else LLMJudge(memo_actor(judge_actor or {}, load), judge_retries, seed)
        verdicts[backend] = tuple(judge.judge(tasks, episodes))
    return ShardResult(name, tasks[0].task_type if tasks else "", tuple(episodes), verdicts)
