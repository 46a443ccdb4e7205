"""Records stored as JSONL, each with a ``schema_version`` (frozen dataclasses)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class StepRecord:
    """One actor query and what the world did with it."""

    index: int  # position in the episode's history
    prompt: str  # the exact prompt text the actor saw
    raw_output: str
    action: str | None  # parsed canonical call; None = parse failure (recorded, executed as INVALID_ACTION)
    reasoning: str
    ok: bool
    error: str | None
    reason: str
    state_hash_before: str
    state_hash_after: str
    snapshot: bool = True  # the pre-step state can be restored exactly (replaying the prefix is deterministic)


@dataclass(frozen=True)
class Trajectory:
    """One rollout of one task at one temperature (a shard's output)."""

    shard_id: str
    task: str
    split: str
    temperature: float
    seed: int
    actor: str
    settings: dict[str, Any]
    steps: tuple[StepRecord, ...]
    success: bool
    safe_success: bool
    stalled: bool
    conditions: tuple[dict[str, Any], ...]
    schema_version: int = SCHEMA_VERSION
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Trajectory:
        if raw.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"trajectory schema_version {raw.get('schema_version')} != {SCHEMA_VERSION}")
        raw = dict(raw)
        raw["steps"] = tuple(StepRecord(**s) for s in raw["steps"])
        raw["conditions"] = tuple(raw["conditions"])
        return cls(**raw)


@dataclass(frozen=True)
class RawBranch:
    """One critic-triggered repair: ((h_k, y-), ([h_k; f_k], y+)) plus what is needed to check it.

    ``prefix_actions`` replays the world exactly to the anchor state h_k (the simulator is
    deterministic), so the judge can restore it and execute either side.
    """

    branch_id: str
    task: str
    split: str
    temperature: float
    trigger: str  # BeforeBDDL | TermSafety
    condition_index: int
    risk_type: str
    hazard_class: str | None
    mode: str
    anchor_step: int
    prefix_actions: tuple[str, ...]
    prompt: str  # h_k, cue-free: exactly what the actor saw when it proposed y-
    prompt_with_cue: str  # [h_k; f_k]
    feedback: str
    rejected_raw: str
    rejected_action: str
    chosen_raw: str | None
    chosen_action: str | None
    accepted: bool  # the repair executed and resolved the condition during collection
    attempts: int
    depth: int
    failure: str | None = None
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> RawBranch:
        raw = dict(raw)
        raw["prefix_actions"] = tuple(raw["prefix_actions"])
        return cls(**raw)
