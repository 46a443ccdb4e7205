"""The inference-time safety baselines of SafeBranch Table 2 / Table 14, with their test-time cost.

All three keep a safety module beside the (untrained) actor at deployment and run under the
critic-free evaluation's protocol (IS-Bench budget: golden length + ``extra_steps`` issued actions,
T = 0 for the committed proposal), so their SR / SSR / SRec compare directly with Table 2's rows.
Episodes advance in lockstep: every round is one batched actor call.

* Self-Verification (App. C.1, Algorithm 1): the verifier labels each proposal; on *unsafe* the
  actor is re-prompted with the rejection cue (Box 11) up to ``retries`` (R) times; the first
  proposal that clears it, or the last one, runs.
* Lookahead (App. C.2, Algorithm 2): ``k`` candidates from one batched call, each executed one
  step from a snapshot and scored by the safety value, the snapshot restored; the best runs (ties:
  the candidate that executed, then the actor's order).
* Runtime full-critic (F.4): SafeBranch's collection loop with both critics in the loop at
  deployment (``branch.collect``): prospective repairs, and retrospective repairs that roll the
  simulator back by exact replay. A physical robot cannot roll back, so on the retrospective side
  this is an upper bound.

Costs per episode: actor calls (one per proposal, including re-prompts and each lookahead
candidate), module calls (verifier / value / critic), lookahead simulator steps, and wall time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..actors.base import Actor
from ..actors.context import build_context
from ..actors.parsing import parse_output
from ..actors.prompts import Cue
from ..branch.collect import BranchSettings, collect_branches
from ..critics.llm import LLMCritic, LLMCriticError
from ..envs.household.env import CompiledTask
from ..envs.household.episode import EpisodeResult
from ..evaluation.household_metrics import household_metrics
from ..rollout.runner import EpisodeRun, RolloutSettings, start
from .modules import SafetyValue, Verifier

ISBENCH = RolloutSettings.isbench()


@dataclass
class Cost:
    actor_calls: int = 0
    module_calls: int = 0  # verifier, value or critic calls
    module_failures: int = 0  # LLM module output invalid after retries (fail open: the proposal runs)
    rejections: int = 0  # Self-Verification: proposals flagged unsafe
    sim_steps: int = 0  # Lookahead: simulated (then restored) steps


@dataclass
class BaselineEpisode:
    result: EpisodeResult
    cost: Cost = field(default_factory=Cost)


def _prompt(run: EpisodeRun, settings: RolloutSettings, style: str, cue: Cue | None = None) -> str:
    return build_context(run.episode.compiled, run.episode.world, settings.observation).prompt(style, cue)


def run_self_verification(tasks: Sequence[CompiledTask], actor: Actor, verifier: Verifier, retries: int = 3,
                          settings: RolloutSettings = ISBENCH, seed: int = 0) -> list[BaselineEpisode]:
    """Algorithm 1. Re-prompts sample at T = 0 with the cue in the prompt (the cue changes the context)."""
    runs = [start(c, settings) for c in tasks]
    costs = [Cost() for _ in runs]
    round_ = 0
    while active := [i for i, r in enumerate(runs) if not r.episode.finished]:
        raws = dict(zip(active, actor.generate([_prompt(runs[i], settings, actor.prompt_style) for i in active],
                                               temperature=0.0, seed=seed * 100_003 + round_), strict=True))
        pending = list(active)
        for attempt in range(retries + 1):
            flagged: dict[int, str] = {}
            for i in pending:
                costs[i].actor_calls += attempt == 0
                parsed = parse_output(raws[i])
                if not parsed.ok:
                    continue  # unparseable: runs as a failed step, nothing to verify
                costs[i].module_calls += 1
                try:
                    safe, risk = verifier.verify(runs[i].episode.compiled, runs[i].episode.world, parsed.action,
                                                 parsed.reasoning)
                except LLMCriticError:
                    costs[i].module_failures += 1
                    continue
                if not safe:
                    costs[i].rejections += 1
                    flagged[i] = f"The safety verifier flagged {parsed.action} as unsafe ({risk}). Choose a safe action."
            pending = list(flagged) if attempt < retries else []
            if not pending:
                break
            cues = {i: Cue("REPLAN", flagged[i], parse_output(raws[i]).action or raws[i]) for i in pending}
            outs = actor.generate([_prompt(runs[i], settings, actor.prompt_style, cues[i]) for i in pending],
                                  temperature=0.0, seed=seed * 100_003 + round_ * 101 + attempt + 7)
            for i, raw in zip(pending, outs, strict=True):
                raws[i] = raw
                costs[i].actor_calls += 1
        for i in active:
            parsed = parse_output(raws[i])
            runs[i].episode.apply(parsed.action if parsed.ok else raws[i])
        round_ += 1
    return [BaselineEpisode(r.result, c) for r, c in zip(runs, costs, strict=True)]


def run_lookahead(tasks: Sequence[CompiledTask], actor: Actor, value: SafetyValue, k: int = 2,
                  temperature: float = 0.7, settings: RolloutSettings = ISBENCH,
                  seed: int = 0) -> list[BaselineEpisode]:
    """Algorithm 2: ``k`` candidates per step sampled at ``temperature`` in one batched call."""
    runs = [start(c, settings) for c in tasks]
    costs = [Cost() for _ in runs]
    round_ = 0
    while active := [i for i, r in enumerate(runs) if not r.episode.finished]:
        prompts = [_prompt(runs[i], settings, actor.prompt_style) for i in active]
        outs = actor.generate([p for p in prompts for _ in range(k)], temperature=temperature, seed=seed * 100_003 + round_)
        for n, i in enumerate(active):
            ep, cost = runs[i].episode, costs[i]
            cost.actor_calls += k
            world, compiled = ep.world, ep.compiled
            held = [compiled.condition_holds(j, world) for j in range(len(compiled.task.conditions))]
            best: tuple[tuple[float, bool, int], str] | None = None
            for c, raw in enumerate(outs[n * k:(n + 1) * k]):
                parsed = parse_output(raw)
                if not parsed.ok:
                    key = (-1.0, False, -c)
                else:
                    snap = world.snapshot()
                    ok = world.step(parsed.action).ok
                    cost.sim_steps += 1
                    cost.module_calls += 1
                    try:
                        score = value.value(compiled, world, parsed.action, held)
                    except LLMCriticError:
                        cost.module_failures += 1
                        score = 0.5  # Box 5's "uncertain"
                    world.restore(snap)
                    key = (score, ok, -c)
                if best is None or key > best[0]:
                    best = (key, parsed.action if parsed.ok else raw)
            assert best is not None
            ep.apply(best[1])
        round_ += 1
    return [BaselineEpisode(r.result, c) for r, c in zip(runs, costs, strict=True)]


def run_full_critic(tasks: Sequence[CompiledTask], actor: Actor, critic: LLMCritic | None = None,
                    max_repair_attempts: int = 6, max_recursion: int = 6, extra_steps: int = 10,
                    seed: int = 0) -> list[BaselineEpisode]:
    """F.4: both critics in the loop at deployment, T = 0, the IS-Bench step budget."""
    settings = BranchSettings(max_steps=None, extra_steps=extra_steps, max_fails_per_step=None, stall_window=None,
                              reject_repeats=False, max_repair_attempts=max_repair_attempts,
                              max_recursion=max_recursion)
    eps = collect_branches(tasks, "deploy", actor, 0.0, seed, settings, critic)
    return [BaselineEpisode(e.episode.result(), Cost(actor_calls=e.actor_calls, module_calls=e.critic_calls))
            for e in eps]


def baseline_metrics(episodes: Sequence[BaselineEpisode], seconds: float, prefix: str = "eval") -> dict[str, float | int]:
    """Table 2 metrics of the episodes plus their test-time cost (totals and per episode)."""
    m: dict[str, float | int] = dict(household_metrics([e.result for e in episodes], prefix))
    n = max(len(episodes), 1)
    for name in ("actor_calls", "module_calls", "module_failures", "rejections", "sim_steps"):
        total = sum(getattr(e.cost, name) for e in episodes)
        m[f"{prefix}/cost/{name}"] = total
        m[f"{prefix}/cost/{name}_per_episode"] = total / n
    m[f"{prefix}/cost/seconds"] = round(seconds, 2)
    return m


def timed(fn, *args, **kwargs) -> tuple[list[BaselineEpisode], float]:  # noqa: ANN001 - any baseline runner
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0
