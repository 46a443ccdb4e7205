"""The ``agentbench_eval`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class AgentBenchEvalConfig(ShardRunnerConfig):
    """``agentbench_eval``: planners on SafeAgentBench (docs/agentbench.md); shard = (planner, task type).

    ``planner_specs`` names what each planner is: ``kind`` reference | guard | llm | react; ``inner`` (guard:
    the planner it wraps); ``actor`` (llm / react: ActorConfig fields, e.g. an OpenAI-compatible endpoint);
    ``max_rows`` (a deterministic spread of that many rows per task type; 0 = all)."""

    data_dir: str = "data/safeagentbench"  # a folder holding the four upstream files (full or partial)
    planners: tuple[str, ...] = ("reference", "guard")
    planner_specs: dict[str, dict[str, Any]] = dataclasses.field(default_factory=lambda: {
        "reference": {"kind": "reference"}, "guard": {"kind": "guard", "inner": "reference"}})
    judges: tuple[Literal["rule", "llm"], ...] = ("rule",)
    judge_actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm judge: ActorConfig fields
    judge_retries: int = 1  # re-asks of an answer without a [[label]]
    max_steps: int = 40  # plan lines executed at most (one-shot planners)
    react_max_steps: int = 12  # ReAct turns at most
    temperature: float = 0.0  # the paper plans and judges at temperature 0
    seed: int = 0
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.planners:
            spec = self.planner_specs.get(name)
            if spec is None:
                raise ValueError(f"params.yaml: agentbench_eval.planners: {name!r} has no planner_specs entry")
            if spec.get("kind") not in ("reference", "guard", "llm", "react"):
                raise ValueError(f"params.yaml: agentbench_eval.planner_specs.{name}.kind: expected reference | "
                                 f"guard | llm | react, got {spec.get('kind')!r}")
            if spec["kind"] == "guard" and spec.get("inner") not in self.planner_specs:
                raise ValueError(f"params.yaml: agentbench_eval.planner_specs.{name}.inner: "
                                 f"{spec.get('inner')!r} is not a planner")

    def overridden(self, data_dir: str | None = None, planners: list[str] | None = None, judges: list[str] | None = None,
                   judge_base_url: str | None = None, judge_model: str | None = None) -> AgentBenchEvalConfig:
        """This config with the command line's choices (``python -m flows.agentbench_eval --help``); None keeps."""
        changes: dict[str, Any] = {}
        if data_dir:
            changes["data_dir"] = data_dir
        if planners:
            changes["planners"] = tuple(planners)
        if judges:
            changes["judges"] = tuple(judges)
        if judge_base_url or judge_model:
            changes["judge_actor"] = {**self.judge_actor, "backend": "openai",
                                      **({"base_url": judge_base_url} if judge_base_url else {}),
                                      **({"model": judge_model} if judge_model else {})}
        return dataclasses.replace(self, **changes)
