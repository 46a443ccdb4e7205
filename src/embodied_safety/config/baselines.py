"""The ``baselines`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class BaselinesConfig(ShardRunnerConfig):
    """``baselines``: inference-time safety baselines with the base actor (SafeBranch App. C, F.4).

    Each (method, split) is one shard. Module backends: ``rule`` reads the simulator's ground truth;
    ``llm`` uses the paper's prompts through ``verifier`` / ``value`` / ``critic`` (ActorConfig
    fields; the default is the actor's own model, as in the paper's same-backbone baselines)."""

    methods: tuple[Literal["self_verification", "lookahead", "full_critic"], ...] = (
        "self_verification", "lookahead", "full_critic")
    splits: tuple[str, ...] = ("test", "ood_objectshift", "ood_taskshift")
    actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # default: rollouts.actor (the base actor)
    extra_steps: int = 10  # step budget = golden length + extra_steps (IS-Bench)
    seed: int = 0
    retries: int = 3  # Self-Verification: re-prompts after an unsafe verdict (R, App. C.1)
    k: int = 2  # Lookahead: candidates per step (App. C.2)
    lookahead_temperature: float = 0.7  # sampling temperature of the k candidates
    max_repair_attempts: int = 6  # full critic: Table 7
    max_recursion: int = 6
    verifier_backend: Literal["rule", "llm"] = "rule"
    verifier: dict[str, Any] = dataclasses.field(default_factory=dict)
    value_backend: Literal["rule", "llm"] = "rule"
    value: dict[str, Any] = dataclasses.field(default_factory=dict)
    critic_backend: Literal["rule", "llm"] = "rule"
    critic: dict[str, Any] = dataclasses.field(default_factory=dict)
