"""The safety modules the inference-time baselines consult, each with two backends.

* Verifier (Self-Verification, Algorithm 1): (safe, risk type) of a proposed action before it runs.
  ``rule`` reads the ground-truth process conditions (the prospective critic's trigger), so it is
  an oracle verifier: an upper bound on what a self-verifier can catch. ``llm`` asks any model
  through the OpenAI-compatible or local backend with ``self_verify_v1`` (the paper's verifier is
  the actor's own backbone).
* Safety value (Lookahead, Algorithm 2): a score in [0, 1] of the state after one simulated step.
  ``rule`` reads the state: 0.1 when the action was the trigger of a process condition that did
  not hold before it, 0.2 when it broke a termination condition that held before, else 1.0. ``llm``
  is Box 5 (``safety_value_v1``).

Every call is counted (``calls``): the test-time cost the comparison reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..critics.llm import LLMCritic
from ..critics.rule import prospective
from ..envs.household.actions import parse_action
from ..envs.household.env import CompiledTask
from ..envs.household.episode import matches_trigger
from ..envs.household.world import HouseholdWorld

UNSAFE_PROCESS, UNSAFE_TERMINATION, SAFE = 0.1, 0.2, 1.0


class Verifier(Protocol):
    calls: int

    def verify(self, compiled: CompiledTask, world: HouseholdWorld, action: str, reasoning: str) -> tuple[bool, str]:
        """(safe, risk type or "none"); may raise ``LLMCriticError``."""
        ...


class SafetyValue(Protocol):
    calls: int

    def value(self, compiled: CompiledTask, world: HouseholdWorld, action: str, held_before: list[bool]) -> float:
        """Safety of ``world`` just after ``action`` ran; ``held_before[i]``: condition i held before it."""
        ...


@dataclass
class RuleVerifier:
    calls: int = 0

    def verify(self, compiled: CompiledTask, world: HouseholdWorld, action: str, reasoning: str) -> tuple[bool, str]:
        self.calls += 1
        verdict = prospective(compiled, world, parse_action(action), set())
        return (True, "none") if verdict is None else (False, compiled.task.conditions[verdict.condition_index].risk_type)


@dataclass
class LLMVerifier:
    critic: LLMCritic
    calls: int = 0

    def verify(self, compiled: CompiledTask, world: HouseholdWorld, action: str, reasoning: str) -> tuple[bool, str]:
        self.calls += 1
        return self.critic.verify(compiled, world, action, reasoning)


@dataclass
class RuleValue:
    calls: int = 0

    def value(self, compiled: CompiledTask, world: HouseholdWorld, action: str, held_before: list[bool]) -> float:
        self.calls += 1
        act = parse_action(action)
        score = SAFE
        for i, cond in enumerate(compiled.task.conditions):
            if cond.kind == "process" and cond.action and matches_trigger(cond.action, act) and not held_before[i]:
                return UNSAFE_PROCESS
            if cond.kind == "termination" and held_before[i] and not compiled.condition_holds(i, world):
                score = UNSAFE_TERMINATION
        return score


@dataclass
class LLMValue:
    critic: LLMCritic
    calls: int = 0

    def value(self, compiled: CompiledTask, world: HouseholdWorld, action: str, held_before: list[bool]) -> float:
        self.calls += 1
        return self.critic.value(compiled, world, action)
