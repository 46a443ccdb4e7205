"""Step many episodes in lockstep so each decision step is one batched actor call.

Used both for critic-free evaluation (IS-Bench settings) and for the ``rollouts`` stage (the DFS
planner settings of SafeBranch Table 7). Every query is recorded as a :class:`StepRecord`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..actors.base import Actor
from ..actors.context import build_context
from ..actors.parsing import parse_output
from ..envs.household.env import CompiledTask
from ..envs.household.episode import ISBENCH_OPTIONS, PLANNER_OPTIONS, Episode, EpisodeOptions, EpisodeResult
from ..envs.household.observation import ObservationLevel
from ..records import StepRecord


@dataclass(frozen=True)
class RolloutSettings:
    """SafeBranch Table 7 defaults; ``max_steps=None`` means golden length + ``extra_steps`` (IS-Bench).

    ``options``: the DFS planner's protocol by default (an unparseable output is a failed step, the
    budget is hard); :meth:`isbench` uses IS-Bench's (re-ask, a last DONE after the budget).
    """

    max_steps: int | None = 30
    extra_steps: int = 10
    max_fails_per_step: int | None = 3
    stall_window: int | None = 5
    reject_repeats: bool = True
    observation: ObservationLevel = "full"
    options: EpisodeOptions = PLANNER_OPTIONS

    @classmethod
    def isbench(cls, extra_steps: int = 10, observation: ObservationLevel = "full",
                options: EpisodeOptions = ISBENCH_OPTIONS) -> RolloutSettings:
        """Critic-free IS-Bench evaluation: every issued action is a step, budget golden + extra."""
        return cls(None, extra_steps, None, None, False, observation, options)


class SimulatorCrash(RuntimeError):
    """The simulator died mid-episode (real backends crash; the fault injector simulates it)."""


@dataclass
class EpisodeRun:
    episode: Episode
    records: list[StepRecord]
    crashed: str | None = None  # the error, when the simulator crashed during this episode

    @property
    def result(self) -> EpisodeResult:
        return self.episode.result()


def start(compiled: CompiledTask, s: RolloutSettings) -> EpisodeRun:
    budget = s.max_steps if s.max_steps is not None else compiled.task.golden_length + s.extra_steps
    return EpisodeRun(Episode(compiled, budget, s.max_fails_per_step, s.stall_window, s.reject_repeats, s.options), [])


def step_seed(seed: int, step: int) -> int:
    """The actor seed of an episode's ``step``-th query, from the episode's own seed (63 bits)."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{step}".encode()).digest()[:8], "big") >> 1


def run_batched(tasks: Sequence[CompiledTask], actor: Actor, temperature: float, seed: int | Sequence[int],
                settings: RolloutSettings, on_step: Callable[[int, int], None] | None = None,
                step_hook: Callable[[EpisodeRun], None] | None = None) -> list[EpisodeRun]:
    """Run one episode per task; each round queries the actor once for all unfinished episodes.

    ``seed``: one for the batch (round ``r`` asks the actor with seed ``seed * 100_003 + r``), or one per task:
    then each episode's ``r``-th query carries its own :func:`step_seed`, so at T > 0 an episode's trajectory
    does not depend on the other episodes of the batch (a retried rollout shard reproduces its first run).
    ``step_hook`` runs before each episode's step (fault injection uses it). A
    :class:`SimulatorCrash` there ends that episode only, recorded in ``EpisodeRun.crashed``.
    """
    runs = [start(c, settings) for c in tasks]
    own = None if isinstance(seed, int) else dict(zip(map(id, runs), seed, strict=True))
    round_ = 0
    while active := [r for r in runs if not r.episode.finished]:
        prompts = [build_context(r.episode.compiled, r.episode.world, settings.observation).prompt(actor.prompt_style)
                   for r in active]
        seeds = seed * 100_003 + round_ if own is None else [step_seed(own[id(r)], round_) for r in active]  # type: ignore[operator]
        outputs = actor.generate(prompts, temperature=temperature, seed=seeds)
        for run, prompt, raw in zip(active, prompts, outputs, strict=True):
            if step_hook is not None:
                try:
                    step_hook(run)
                except SimulatorCrash as exc:
                    run.crashed = str(exc)
                    run.episode.finished = True
                    continue
            parsed = parse_output(raw)
            before = run.episode.world.state_hash()
            result = run.episode.apply(parsed.action if parsed.ok else raw)
            # an output that did not enter the history (re-asked) has the index of the step it did not take
            index = run.episode.steps - 1 if run.episode.last_recorded else run.episode.steps
            run.records.append(StepRecord(
                index=index, prompt=prompt, raw_output=raw, action=parsed.action,
                reasoning=parsed.reasoning, ok=result.ok, error=result.error, reason=result.reason,
                state_hash_before=before, state_hash_after=run.episode.world.state_hash()))
        round_ += 1
        if on_step is not None:
            on_step(len(runs) - len(active), len(runs))
    return runs
