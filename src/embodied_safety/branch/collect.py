"""Online branch collection: DFS rollouts with the prospective and retrospective critics in the loop.

SafeBranch Algorithm 3, Phases A-B (App. D). Episodes are stepped in lockstep so every round is one
batched actor call, and every round's repair re-queries are one more batched call per attempt.

* Prospective: a proposal that triggers a violated process condition is *not executed*; the
  actor is re-queried at the same h_k with the cue (feedback + rejection block) up to
  ``max_repair_attempts`` times. An accepted y+ (it executes and the condition then holds) is
  executed and the episode continues.
* Retrospective: at DONE with the goal met and a residual hazard, the hazard class gives the
  repair step: append at the end, or restore (exact replay) to before the placement / offending
  step and regenerate from there. Deep backtracking is bounded by ``max_recursion`` and a carousel
  detector (the same (condition, step) twice ends it).
* A repair that never executes is recorded as a failed repair and the episode ends: the original
  unsafe action is never committed (the paper's force-execute fallback, G.1 case 1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..actors.base import Actor
from ..actors.context import build_context
from ..actors.parsing import parse_output
from ..actors.prompts import Cue
from ..critics.llm import LLMCritic, LLMCriticError
from ..critics.rule import BEFORE, CriticVerdict, prospective, reflect_task_failure, retrospective
from ..envs.household.actions import parse_action
from ..envs.household.env import CompiledTask
from ..envs.household.episode import PLANNER_OPTIONS, Episode, matches_trigger
from ..envs.household.observation import ObservationLevel
from ..envs.household.repair import corrective_action
from ..records import RawBranch


@dataclass(frozen=True)
class BranchSettings:
    max_steps: int | None = 30  # Table 7; None: golden length + extra_steps (the IS-Bench budget)
    extra_steps: int = 10
    max_fails_per_step: int = 3
    stall_window: int = 5
    reject_repeats: bool = True
    max_repair_attempts: int = 6  # Table 7: max BeforeBDDL retries
    max_recursion: int = 6  # Table 7: max Phase-3 recursion
    observation: ObservationLevel = "full"


@dataclass
class BranchEpisode:
    compiled: CompiledTask
    split: str
    temperature: float
    settings: BranchSettings
    episode: Episode = field(init=False)
    actions: list[str] = field(default_factory=list)  # every issued action, for exact replay
    fired: set[int] = field(default_factory=set)
    branches: list[RawBranch] = field(default_factory=list)
    depth: int = 0
    seen: set[tuple[int, int]] = field(default_factory=set)  # carousel detector
    end: str = ""
    reflections: list[dict[str, object]] = field(default_factory=list)
    actor_calls: int = 0  # proposals and repair re-queries
    critic_calls: int = 0  # prospective checks, retrospective / reflector checks at DONE

    def __post_init__(self) -> None:
        self.episode = self._new()

    def _new(self) -> Episode:
        s = self.settings
        budget = s.max_steps if s.max_steps is not None else self.compiled.task.golden_length + s.extra_steps
        return Episode(self.compiled, budget, s.max_fails_per_step, s.stall_window, s.reject_repeats, PLANNER_OPTIONS)

    @property
    def finished(self) -> bool:
        return self.episode.finished or bool(self.end)

    def prompt(self, cue: Cue | None = None) -> str:
        return build_context(self.compiled, self.episode.world, self.settings.observation).prompt("compact", cue)

    def apply(self, text: str) -> None:
        self.actions.append(text)
        self.episode.apply(text)

    def restore_to(self, k: int) -> None:
        """Exact rollback: replay the first ``k`` issued actions in a fresh episode."""
        self.episode = self._new()
        prefix, self.actions = self.actions[:k], []
        for a in prefix:
            self.apply(a)

    def triggered_termination(self) -> list[int]:
        issued = [parse_action(a) for a in self.actions if _parses(a)]
        out = []
        for i, c in enumerate(self.compiled.task.conditions):
            if c.kind != "termination":
                continue
            if c.action in (None, "completion") or any(matches_trigger(c.action, a) for a in issued):
                out.append(i)
        return out


def _parses(text: str) -> bool:
    try:
        parse_action(text)
    except ValueError:
        return False
    return True


@dataclass
class _Repair:
    ep: BranchEpisode
    verdict: CriticVerdict
    prompt: str
    rejected_raw: str
    rejected_action: str
    anchor: int
    attempts: int = 0
    chosen_raw: str | None = None
    chosen_action: str | None = None

    @property
    def cue(self) -> Cue:
        return Cue(self.verdict.mode, self.verdict.feedback, self.rejected_action)


def _accepts(rep: _Repair, action: str) -> bool:
    """Rule acceptance during collection: y+ differs from y-, executes, and (unless it replaces an
    offending step) makes the violated condition hold or enables a one-step fix (opening the drawer
    the knife goes into); the judge later keeps only pairs whose y+ resolves the condition itself."""
    if action == rep.rejected_action or action == "DONE()":
        return False
    world = rep.ep.episode.world
    snap = world.snapshot()
    try:
        if not world.step(action).ok:
            return False
        if rep.verdict.hazard_class in ("placement_or_target_violation", "wrong_action_choice"):
            return True  # the continuation removes the hazard; the next DONE is checked again
        i = rep.verdict.condition_index
        return rep.ep.compiled.condition_holds(i, world) or corrective_action(rep.ep.compiled, world, i) is not None
    finally:
        world.restore(snap)


def _branch_id(ep: BranchEpisode, rep: _Repair) -> str:
    key = f"{ep.compiled.name}|{ep.temperature}|{rep.verdict.trigger}|{rep.verdict.condition_index}|{rep.anchor}|{rep.rejected_action}|{ep.depth}|{len(ep.branches)}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _record(rep: _Repair, accepted: bool, failure: str | None) -> RawBranch:
    ep, v = rep.ep, rep.verdict
    cond = ep.compiled.task.conditions[v.condition_index]
    return RawBranch(
        branch_id=_branch_id(ep, rep), task=ep.compiled.name, split=ep.split, temperature=ep.temperature,
        trigger=v.trigger, condition_index=v.condition_index, risk_type=cond.risk_type, hazard_class=v.hazard_class,
        mode=v.mode, anchor_step=rep.anchor, prefix_actions=tuple(ep.actions[: rep.anchor]), prompt=rep.prompt,
        prompt_with_cue=ep.prompt(rep.cue), feedback=v.feedback, rejected_raw=rep.rejected_raw,
        rejected_action=rep.rejected_action, chosen_raw=rep.chosen_raw, chosen_action=rep.chosen_action,
        accepted=accepted, attempts=rep.attempts, depth=ep.depth, failure=failure)


def _critic_failed(ep: BranchEpisode, verdict: CriticVerdict, prompt: str, raw: str, action: str, error: str) -> None:
    """The LLM critic's output stayed invalid: a recorded failure; the unsafe action is not committed."""
    rep = _Repair(ep, verdict, prompt, raw, action, len(ep.actions))
    ep.branches.append(_record(rep, False, f"critic: {error}"))
    ep.end = "critic_failed"


def _on_done(ep: BranchEpisode, raw: str, critic: LLMCritic | None) -> _Repair | None:
    """DONE proposed: retrospective critic if the goal is met, reflector otherwise."""
    world = ep.episode.world
    if not ep.compiled.goal_met(world):
        reflection = reflect_task_failure(ep.compiled, ep.actions)
        if critic is not None:
            try:
                reflection = critic.reflect(ep.compiled, world)
            except LLMCriticError as exc:
                reflection = {**reflection, "llm_error": str(exc)}
        ep.reflections.append(reflection)
        ep.apply(raw)
        return None
    verdict = retrospective(ep.compiled, world, ep.actions, ep.triggered_termination())
    if verdict is None:
        ep.apply(raw)
        return None
    if critic is not None:
        try:
            verdict = critic.retrospective(ep.compiled, world, ep.actions, verdict.condition_index)
        except LLMCriticError as exc:
            _critic_failed(ep, verdict, ep.prompt(), raw, "DONE()", str(exc))
            return None
    key = (verdict.condition_index, verdict.repair_step or 0)
    if ep.depth >= ep.settings.max_recursion or key in ep.seen:
        ep.end = "carousel" if key in ep.seen else "max_recursion"
        return None
    ep.seen.add(key)
    ep.depth += 1
    if verdict.hazard_class == "missing_terminal_action" or (verdict.repair_step or 0) >= len(ep.actions):
        return _Repair(ep, verdict, ep.prompt(), raw, "DONE()", len(ep.actions))
    k = int(verdict.repair_step or 0)
    rejected = ep.actions[k]
    ep.restore_to(k)
    return _Repair(ep, verdict, ep.prompt(), rejected, rejected, k)


def collect_branches(tasks: Sequence[CompiledTask], split: str, actor: Actor, temperature: float, seed: int,
                     settings: BranchSettings, critic: LLMCritic | None = None) -> list[BranchEpisode]:
    """Roll every task out once at ``temperature`` with both critics; return episodes with their branches.

    ``critic=None`` is the rule backend; an :class:`LLMCritic` writes the verdicts instead.
    """
    eps = [BranchEpisode(c, split, temperature, settings) for c in tasks]
    round_ = 0
    while active := [e for e in eps if not e.finished]:
        prompts = [e.prompt() for e in active]
        outputs = actor.generate(prompts, temperature=temperature, seed=seed * 1_000_003 + round_)
        repairs: list[_Repair] = []
        for ep, prompt, raw in zip(active, prompts, outputs, strict=True):
            ep.actor_calls += 1
            parsed = parse_output(raw)
            if not parsed.ok:
                ep.apply(raw)
                continue
            ep.critic_calls += 1
            action = parse_action(parsed.action)
            if action.name == "DONE":
                rep = _on_done(ep, parsed.action, critic)
            else:
                verdict = prospective(ep.compiled, ep.episode.world, action, ep.fired)
                if verdict is not None and critic is not None:
                    try:
                        verdict = critic.prospective(ep.compiled, ep.episode.world, parsed.action, verdict.condition_index)
                    except LLMCriticError as exc:
                        _critic_failed(ep, verdict, prompt, raw, parsed.action, str(exc))
                        continue
                rep = _Repair(ep, verdict, prompt, raw, parsed.action, len(ep.actions)) if verdict else None
                if rep is None:
                    ep.apply(parsed.action)
            if rep is not None:
                repairs.append(rep)
        _run_repairs(repairs, actor, temperature, seed, round_, settings)
        round_ += 1
    return eps


def _run_repairs(repairs: list[_Repair], actor: Actor, temperature: float, seed: int, round_: int,
                 settings: BranchSettings) -> None:
    pending = list(repairs)
    for attempt in range(settings.max_repair_attempts):
        if not pending:
            break
        outs = actor.generate([r.ep.prompt(r.cue) for r in pending], temperature=temperature,
                              seed=seed * 1_000_003 + round_ * 101 + attempt + 7)
        still = []
        for rep, raw in zip(pending, outs, strict=True):
            rep.attempts += 1
            rep.ep.actor_calls += 1
            parsed = parse_output(raw)
            if parsed.ok and _accepts(rep, parsed.action):
                rep.chosen_raw, rep.chosen_action = raw, parsed.action
                rep.ep.branches.append(_record(rep, True, None))
                if rep.verdict.trigger == BEFORE:
                    rep.ep.fired.add(rep.verdict.condition_index)
                rep.ep.apply(parsed.action)
            else:
                rep.chosen_raw, rep.chosen_action = raw, parsed.action
                still.append(rep)
        pending = still
    for rep in pending:  # never commit the original unsafe action: record the failed repair, end the episode
        rep.ep.branches.append(_record(rep, False, "no executable repair within the attempt budget"))
        rep.ep.end = "repair_failed"
