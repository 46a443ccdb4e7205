"""Training data for the bootstrap actor (the embedded default actor, trained from scratch).

The actor must learn to *complete tasks* but often unsafely, like the paper's untrained actor
(SR 0.656 / SSR 0.031), and it must follow critic feedback, because SafeBranch's repair step
re-prompts it with a cue. Three kinds of (prompt, completion) examples from the train split:

* ``step``: golden plans in which each safety step is dropped with probability ``drop_prob``
  (``patterns`` sampled masks per task). A small keep probability leaves a little safe behaviour.
* ``continuation``: the state right *after* a dropped safety step is put back (where it was, or
  just before DONE as a retrospective repair would), labelled with the plan's next action, so the
  actor can carry on after a repaired branch. The safety step itself is never a target here.
* ``feedback``: a violation point of an unsafe plan with the critic cue inserted before the
  ``Your input:`` anchor, labelled with the corrective action the cue names.
* ``recovery``: a failed action (a wrong object or a repeated step, with the executor's error in
  the history) followed by the plan's correct next action, so one failure does not derail the actor.
* ``renamed``: copies of examples in which the task's movable object categories are consistently
  replaced by other catalog categories, in prompt and completion alike. With only a handful of
  object combinations per template, a small model otherwise recalls the objects of a training
  combination instead of reading them from the prompt; renaming makes copying the only strategy
  that works, which is what generalises to unseen combinations.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from ..envs.household.actions import parse_action
from ..envs.household.env import CompiledTask
from ..envs.household.episode import matches_trigger
from ..envs.household.observation import ObservationLevel
from ..envs.household.predicates import category_of, short_name
from ..envs.household.repair import corrective_action, feedback_text
from ..envs.household.suite.catalog import CATALOG
from .context import build_context
from .prompts import Cue, PromptStyle
from .proxy import substitute


@dataclass(frozen=True)
class Example:
    prompt: str
    completion: str
    kind: str  # step | continuation | feedback
    task: str


@dataclass(frozen=True)
class DataSettings:
    drop_prob: float = 0.9
    patterns: int = 6
    seed: int = 0
    prompt_style: PromptStyle = "compact"
    observation: ObservationLevel = "full"
    renamed_fraction: float = 0.0  # share of examples that also get a renamed-objects copy
    recovery: bool = False  # add failure-recovery examples
    # categories a renamed copy may never write: the OOD pools (envs/household/suite/augment.held_out(), passed in by
    # the caller so this module stays out of the suite generator's import closure); required with renamed_fraction
    rename_exclude: frozenset[str] = frozenset()


def _run_plan(compiled: CompiledTask, actions: list[str], s: DataSettings, first_target: int = 0,
              kind: str = "step") -> list[Example]:
    """Examples for every executable step of ``actions`` from index ``first_target`` on."""
    world = compiled.new_world()
    out = []
    for i, action in enumerate(actions):
        prompt = build_context(compiled, world, s.observation).prompt(s.prompt_style)
        if not world.step(action).ok:
            break  # never train on a step the world rejects
        if i >= first_target:
            out.append(Example(prompt, action, kind, compiled.name))
    return out


def feedback_examples(compiled: CompiledTask, actions: list[str], s: DataSettings) -> list[Example]:
    """Cue -> corrective action at each violation point of an (unsafe) plan."""
    task = compiled.task
    world = compiled.new_world()
    out, fired = [], set()
    for action in actions:
        act = parse_action(action)
        candidates = [i for i, c in enumerate(task.conditions) if i not in fired and (
            (c.kind == "process" and c.action and matches_trigger(c.action, act))
            or (c.kind == "termination" and act.name == "DONE"))]
        for i in candidates:
            fired.add(i)
            if compiled.condition_holds(i, world):
                continue
            fix = corrective_action(compiled, world, i)
            if fix is None:
                continue
            cue = Cue("INSERT" if task.conditions[i].kind == "process" else "REPLACE",
                      feedback_text(task.conditions[i], fix), prev_action=action)
            prompt = build_context(compiled, world, s.observation).prompt(s.prompt_style, cue)
            out.append(Example(prompt, fix, "feedback", compiled.name))
        if not world.step(action).ok:
            break
    return out


def _recovery_examples(compiled: CompiledTask, actions: list[str], s: DataSettings, rng: random.Random) -> list[Example]:
    """At one random step, a failed action first, then the plan's action as the target."""
    if len(actions) < 2:
        return []
    k = rng.randrange(len(actions) - 1)
    world = compiled.new_world()
    for a in actions[:k]:
        world.step(a)
    objs = list(compiled.task.object_list)
    wrong = actions[k - 1] if k > 0 and rng.random() < 0.5 else f"OPEN({rng.choice(objs)})"
    for _ in range(4):  # find an action that fails here
        snap = world.snapshot()
        if not world.step(wrong).ok:
            break
        world.restore(snap)
        wrong = f"TOGGLE_OFF({rng.choice(objs)})"
    else:
        return []
    if world.history[-1].ok:
        return []
    prompt = build_context(compiled, world, s.observation).prompt(s.prompt_style)
    return [Example(prompt, actions[k], "recovery", compiled.name)] if world.step(actions[k]).ok else []


def _movable_stems(compiled: CompiledTask) -> list[str]:
    task = compiled.task
    return sorted({short_name(category_of(o)) for o in task.object_list
                   if "fixed" not in task.object_abilities.get(o, ()) and "__" not in o})

def rename(example: Example, stems: list[str], rng: random.Random, exclude: frozenset[str] = frozenset()) -> Example | None:
    """Replace each movable category word by another catalog category (both ``frying_pan`` and
    ``frying pan`` forms), consistently in prompt and completion. The pool never holds a category of ``exclude``
    (the OOD pools, ``DataSettings.rename_exclude``)."""
    pool = sorted({short_name(c) for c, ab in CATALOG.items()
                   if "fixed" not in ab and "substance" not in ab and c not in exclude} - set(stems))
    if not stems or len(pool) < len(stems):
        return None
    mapping = dict(zip(stems, rng.sample(pool, len(stems)), strict=True))
    return Example(substitute(example.prompt, mapping), substitute(example.completion, mapping),
                   f"renamed_{example.kind}", example.task)


def bootstrap_examples(tasks: Iterable[CompiledTask], s: DataSettings) -> list[Example]:
    """All three kinds for every task, deduplicated on (prompt, completion), deterministic."""
    rng = random.Random(s.seed)
    seen: set[tuple[str, str]] = set()
    out: list[Example] = []

    def add(examples: list[Example]) -> None:
        for e in examples:
            if (e.prompt, e.completion) not in seen:
                seen.add((e.prompt, e.completion))
                out.append(e)

    tasks_list = list(tasks)
    for compiled in tasks_list:
        steps = compiled.task.example_planning
        safety = [i for i, st in enumerate(steps) if st.is_safety_step]
        for _ in range(s.patterns):
            dropped = {i for i in safety if rng.random() < s.drop_prob}
            plan = [st.action for i, st in enumerate(steps) if i not in dropped]
            add(_run_plan(compiled, plan, s))
            add(feedback_examples(compiled, plan, s))
            if s.recovery:
                add(_recovery_examples(compiled, plan, s, rng))
            for j in sorted(dropped):
                others = dropped - {j}
                back_in_place = [st.action for i, st in enumerate(steps) if i not in others]
                add(_run_plan(compiled, back_in_place, s, back_in_place.index(steps[j].action) + 1, "continuation"))
                before_done = plan[:-1] + [steps[j].action, plan[-1]]
                add(_run_plan(compiled, before_done, s, len(before_done) - 1, "continuation"))
    if s.renamed_fraction > 0:
        if not s.rename_exclude:
            raise ValueError("DataSettings.renamed_fraction > 0 needs rename_exclude (augment.held_out()): the renamed "
                             "copies would otherwise write OOD categories into the training data")
        stems = {c.name: _movable_stems(c) for c in tasks_list}
        extra = [rename(e, stems[e.task], rng, s.rename_exclude) for e in list(out) if rng.random() < s.renamed_fraction]
        add([e for e in extra if e is not None])
    return out
