"""The ``branches`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.shared import PlannerConfig, ShardRunnerConfig


@dataclass(frozen=True)
class BranchesConfig(ShardRunnerConfig, PlannerConfig):
    """``branches``: online branch collection with critics, judge, prune (SafeBranch §4.2, App. D)."""

    max_repair_attempts: int = 6  # Table 7: max BeforeBDDL retries
    max_recursion: int = 6  # Table 7: max Phase-3 (deep backtrack) recursion
    critic_backend: Literal["rule", "llm"] = "rule"
    critic: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm: ActorConfig fields of the critic model
    judge_backend: Literal["rule", "llm"] = "rule"
    judge: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm: ActorConfig fields of the judge model
