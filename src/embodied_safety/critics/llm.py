"""LLM backend of the critics, reflector and judge: the paper's prompts (Boxes 12, 14/15, 16) over any
text generator (an OpenAI-compatible endpoint through ``OpenAIActor``, or a local ``HFActor``).

When a critic fires is decided by the ground-truth BDDL conditions in both backends (the paper's
BeforeBDDL critic is triggered by the predicate); the LLM writes the verdict. Every question goes through
the shared structured ask (:func:`embodied_safety.llm.ask.ask_cached`): output is parsed as the first JSON
object in the text and validated against the box's schema; invalid output is re-asked up to ``retries``
times (greedy, seed = attempt), then recorded as a failure (``LLMCriticError``), never guessed. Valid
answers are cached on disk by a content hash of (model, prompt), so re-runs make no new calls; failures
are not cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..actors.base import Actor
from ..actors.context import build_context, format_history
from ..envs.household.env import CompiledTask
from ..envs.household.observation import observe
from ..envs.household.task import RISK_TYPES
from ..envs.household.world import HouseholdWorld
from ..llm.ask import ask_cached, cache_key
from ..llm.parsing import json_object
from .rule import BEFORE, TERM, CriticVerdict

MODES = ("INSERT", "REPLACE", "REPLAN")
HAZARDS = ("missing_terminal_action", "placement_or_target_violation", "wrong_action_choice")


class LLMCriticError(RuntimeError):
    """The model's output stayed invalid after all retries."""


@cache
def prompt_template(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text()


def _require(obj: dict[str, Any], key: str, typ: type | tuple[type, ...], choices: tuple[str, ...] = ()) -> Any:
    if key not in obj or not isinstance(obj[key], typ) or isinstance(obj[key], bool) and typ is int:
        raise ValueError(f"field {key!r} missing or not {typ}")
    if choices and obj[key] not in choices:
        raise ValueError(f"field {key!r} = {obj[key]!r} not in {choices}")
    return obj[key]


def validate_before(obj: dict[str, Any]) -> dict[str, Any]:
    _require(obj, "mode", str, MODES)
    for k in ("issue", "feedback", "object_analysis"):
        _require(obj, k, str)
    return obj


def validate_term(obj: dict[str, Any], length: int) -> dict[str, Any]:
    analysis = _require(obj, "analysis", dict)
    _require(analysis, "kind", str, HAZARDS)
    step = _require(obj, "repair_step", int)
    if not 0 <= step <= length:
        raise ValueError(f"repair_step {step} outside 0..{length}")
    for k in ("issue", "rule"):
        _require(obj, k, str)
    return obj


def validate_value(obj: dict[str, Any]) -> dict[str, Any]:
    score = _require(obj, "score", (int, float))
    if isinstance(score, bool) or not 0.0 <= float(score) <= 1.0:
        raise ValueError(f"score {score!r} outside [0, 1]")
    return obj


def validate_verify(obj: dict[str, Any]) -> dict[str, Any]:
    _require(obj, "safe", bool)
    return obj


def validate_judge(obj: dict[str, Any]) -> dict[str, Any]:
    for k in ("justified", "executable", "resolves", "accept"):
        _require(obj, k, bool)
    return obj


@dataclass
class LLMCritic:
    """Prompts + schema validation + retries + an on-disk cache around any text generator."""

    generator: Actor
    model_id: str
    cache_dir: Path | None = None
    retries: int = 2
    calls: int = 0
    failures: int = 0

    def ask(self, prompt: str, validate: Any) -> dict[str, Any]:
        [answer] = ask_cached(
            lambda prompts, temperature, seed: self.generator.generate(prompts, temperature=temperature, seed=seed),
            [prompt], [cache_key(self.model_id, prompt)], lambda text: validate(json_object(text)), self.cache_dir,
            self.model_id, self.retries, temperature=0.0, seed=0, cache_failures=False)
        self.calls += answer.calls
        if not answer.ok:
            self.failures += 1
            raise LLMCriticError(f"invalid critic output after {self.retries + 1} attempts: {answer.error}")
        return answer.value

    def prospective(self, compiled: CompiledTask, world: HouseholdWorld, action: str, index: int) -> CriticVerdict:
        cond = compiled.task.conditions[index]
        ctx = build_context(compiled, world)
        prompt = prompt_template("before_bddl_v4").format(
            objective=ctx.task_instruction, objects_list=", ".join(ctx.objects), object_abilities=ctx.object_abilities,
            observation=ctx.observation, history=ctx.history, action=action, hazard_category=cond.risk_type,
            safety_bddl=cond.safety_bddl, safety_principle=cond.safety_principle)
        out = self.ask(prompt, validate_before)
        return CriticVerdict(BEFORE, index, out["mode"], out["issue"], out["feedback"], out["object_analysis"], None)

    def retrospective(self, compiled: CompiledTask, world: HouseholdWorld, actions: list[str], index: int) -> CriticVerdict:
        cond = compiled.task.conditions[index]
        prompt = prompt_template("term_safety_v5").format(
            objective=compiled.task.instruction, objects_list=", ".join(compiled.task.object_list), length=len(actions),
            trajectory=format_history(world.history), observation=observe(world, compiled.task.object_list),
            hazard_category=cond.risk_type, safety_bddl=cond.safety_bddl, safety_principle=cond.safety_principle)
        out = self.ask(prompt, lambda o: validate_term(o, len(actions)))
        kind = out["analysis"]["kind"]
        feedback = f"{out['rule']} {out.get('specific_constraint', '')}".strip()
        return CriticVerdict(TERM, index, "INSERT" if kind == HAZARDS[0] else "REPLACE", out["issue"], feedback,
                             str(out["analysis"].get("explanation", "")), None, kind, int(out["repair_step"]))

    def reflect(self, compiled: CompiledTask, world: HouseholdWorld) -> dict[str, Any]:
        prompt = prompt_template("task_fail_v1").format(
            objective=compiled.task.instruction, trajectory=format_history(world.history),
            observation=observe(world, compiled.task.object_list))

        def validate(o: dict[str, Any]) -> dict[str, Any]:
            _require(o, "culprit_step_index", int)
            _require(o, "rule", str)
            return o

        return self.ask(prompt, validate)

    def value(self, compiled: CompiledTask, world: HouseholdWorld, action: str) -> float:
        """Box 5: a scalar safety score in [0, 1] of the post-action state (Lookahead, Algorithm 2)."""
        prompt = prompt_template("safety_value_v1").format(
            objective=compiled.task.instruction, objects_list=", ".join(compiled.task.object_list), action=action,
            history=format_history(world.history[:-1]), observation=observe(world, compiled.task.object_list))
        return float(self.ask(prompt, validate_value)["score"])

    def verify(self, compiled: CompiledTask, world: HouseholdWorld, action: str, reasoning: str) -> tuple[bool, str]:
        """Self-verification (Algorithm 1): (safe, risk type or "none") of a proposed action, pre-execution."""
        prompt = prompt_template("self_verify_v1").format(
            risk_types=", ".join(RISK_TYPES), objective=compiled.task.instruction,
            objects_list=", ".join(compiled.task.object_list), observation=observe(world, compiled.task.object_list),
            history=format_history(world.history), action=action, reasoning=reasoning or "-")
        out = self.ask(prompt, validate_verify)
        return bool(out["safe"]), str(out.get("risk_type", "none"))

    def judge(self, compiled: CompiledTask, world: HouseholdWorld, index: int, rejected: str, chosen: str) -> dict[str, Any]:
        cond = compiled.task.conditions[index]
        prompt = prompt_template("judge_v1").format(
            objective=compiled.task.instruction, observation=observe(world, compiled.task.object_list),
            history=format_history(world.history), safety_bddl=cond.safety_bddl, risk_type=cond.risk_type,
            rejected=rejected, chosen=chosen)
        return self.ask(prompt, validate_judge)
