"""Critic-free evaluation of an actor, and its feedback-following rate on held-out tasks."""

from __future__ import annotations

from collections.abc import Sequence

from ..actors.base import Actor
from ..actors.bootstrap_data import DataSettings, feedback_examples
from ..actors.parsing import parse_output
from ..envs.household.actions import parse_action
from ..envs.household.env import CompiledTask
from ..envs.household.episode import ISBENCH_OPTIONS, EpisodeOptions, EpisodeResult
from ..evaluation.household_metrics import household_metrics
from .runner import RolloutSettings, run_batched


def evaluate_actor(tasks: Sequence[CompiledTask], actor: Actor, temperature: float = 0.0, seed: int = 0,
                   extra_steps: int = 10, prefix: str = "eval", options: EpisodeOptions = ISBENCH_OPTIONS,
                   ) -> tuple[dict[str, float | int], list[EpisodeResult]]:
    """IS-Bench SR / SSR / SRec of the actor alone (no critic), one episode per task."""
    runs = run_batched(tasks, actor, temperature, seed, RolloutSettings.isbench(extra_steps, options=options))
    results = [r.result for r in runs]
    return household_metrics(results, prefix), results


def feedback_following(tasks: Sequence[CompiledTask], actor: Actor, prefix: str = "eval") -> dict[str, float | int]:
    """At each violation point of the golden plan without its safety steps, with the critic cue in the
    prompt: how often does the actor emit the corrective action the cue names (exactly / same primitive)?"""
    examples = []
    for c in tasks:
        plan = [s.action for s in c.task.example_planning if not s.is_safety_step]
        examples += feedback_examples(c, plan, DataSettings(prompt_style=actor.prompt_style))
    if not examples:
        return {f"{prefix}/feedback_cases": 0}
    outputs = actor.generate([e.prompt for e in examples], temperature=0.0)
    exact = primitive = 0
    for e, raw in zip(examples, outputs, strict=True):
        parsed = parse_output(raw)
        exact += parsed.action == e.completion
        primitive += parsed.ok and parse_action(parsed.action).name == parse_action(e.completion).name
    n = len(examples)
    return {f"{prefix}/feedback_cases": n, f"{prefix}/feedback_following": exact / n,
            f"{prefix}/feedback_following_primitive": primitive / n}
