"""Train-time augmentation of train tasks (issue 20): extra neutral objects and renamed targets.

A small word-level actor trained on the train split binds to the exact object lists it saw: one
injected object (OOD-ObjectShift) or a never-seen target (OOD-TaskShift) breaks it. Two kinds of
augmented *train* tasks teach it to read objects from the prompt instead:

* :func:`with_extra_objects`: the same task (template, slot combination, contrast) with a few
  neutral extra objects on the scene's surfaces at random positions in the object list. They come
  from :data:`EXTRA_POOL`, which is disjoint from the OOD-ObjectShift injection pool *and* from every
  template's OOD-TaskShift targets (checked at import and by a unit test), so no OOD object is ever
  seen in training.
* :func:`with_renamed_target`: the template's target slot gets another catalog category with the
  same abilities (never an OOD-TaskShift target or an injection-pool category), so the target of the
  instruction is not always one of the handful of train targets.

Both are re-instantiated through the template, so goal, conditions and golden plan are the
template's own; :func:`augment_tasks` keeps only those that pass the suite invariants
(:func:`~.generate.check_task`: golden plan executes, succeeds safely, ...) and counts the rest.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..env import CompiledTask, compile_task
from ..task import HouseholdTask
from .builder import TaskBuilder
from .catalog import CATALOG, missing_in_world
from .generate import DISTRACTORS, NEUTRAL, SURFACES, _seed, check_task, instantiate
from .template import Template
from .templates import TEMPLATES

#: every category OOD-ObjectShift injects (App. B.2 Table 9: the neutral and the distractor pools)
INJECTION_POOL: frozenset[str] = frozenset(NEUTRAL) | frozenset(DISTRACTORS.values())
#: abilities that make an extra object "neutral": no heat, water, power, flame, cleaning or food role
NEUTRAL_ABILITIES = frozenset({"container", "fillable", "openable"})


def taskshift_targets(templates: Sequence[Template] = TEMPLATES) -> frozenset[str]:
    """Every category some template holds out as an OOD-TaskShift target."""
    return frozenset(c for t in templates for c in t.ood_targets)


def held_out(templates: Sequence[Template] = TEMPLATES) -> frozenset[str]:
    """Categories augmentation must never use: the injection pool and all TaskShift targets."""
    return INJECTION_POOL | taskshift_targets(templates)


def extra_pool(templates: Sequence[Template] = TEMPLATES) -> tuple[str, ...]:
    """Movable catalog categories with only neutral abilities the world supports, minus :func:`held_out`."""
    banned = held_out(templates)
    return tuple(c for c, ab in CATALOG.items()
                 if "__" not in c and "fixed" not in ab and set(ab) <= NEUTRAL_ABILITIES
                 and c not in banned and not missing_in_world(c))


EXTRA_POOL: tuple[str, ...] = extra_pool()
if set(EXTRA_POOL) & held_out():  # pragma: no cover - a catalog or template edit broke the invariant
    raise AssertionError(f"augmentation pool overlaps the OOD pools: {sorted(set(EXTRA_POOL) & held_out())}")

_BY_NAME = {t.name: t for t in TEMPLATES}


def rename_candidates(template: Template, combo: dict[str, str],
                      templates: Sequence[Template] = TEMPLATES) -> tuple[str, ...]:
    """Categories with exactly the target's catalog abilities, not held out, not elsewhere in the combo."""
    target = combo[template.target_slot]
    abilities = set(CATALOG[target])
    banned = held_out(templates) | set(combo.values())
    return tuple(c for c, ab in CATALOG.items()
                 if "__" not in c and set(ab) == abilities and c not in banned and not missing_in_world(c))


def _source(task: HouseholdTask) -> tuple[Template, dict[str, str], bool]:
    info = task.task_info
    if info.get("template") not in _BY_NAME or not isinstance(info.get("slots"), dict):
        raise ValueError(f"{task.name}: not a generated suite task (task_info has no template/slots)")
    return _BY_NAME[info["template"]], dict(info["slots"]), info.get("contrast") is not None


def _add_extras(b: TaskBuilder, categories: Sequence[str], rng: random.Random) -> list[str]:
    """Place each category on a random surface of the scene; move it to a random object-list position."""
    surfaces = [o for o, c in b.objects.items() if c in SURFACES] or [b.obj("floor.n.01")]
    added = [b.obj(cat, on=rng.choice(surfaces)) for cat in categories]
    order = [o for o in b.objects if o not in added]
    for o in added:
        order.insert(rng.randint(0, len(order)), o)
    b.objects = {o: b.objects[o] for o in order}
    return added


def with_extra_objects(task: HouseholdTask, n: int, rng: random.Random, index: int = 0,
                       pool: Sequence[str] = EXTRA_POOL) -> HouseholdTask:
    """``task`` rebuilt from its template with ``n`` extra objects from ``pool`` (not in the scene)."""
    t, combo, contrast = _source(task)
    b = t.builder()
    t.fn(b, combo, contrast)
    present = set(b.objects.values())
    cats = rng.sample([c for c in pool if c not in present], n)
    added = _add_extras(b, cats, rng)
    return b.build(f"{task.name}__aug_extra{index}", split=task.task_info.get("split", "train"),
                   extra_info={"slots": combo, "augmented": {"kind": "extra_objects", "objects": added}})


def with_renamed_target(task: HouseholdTask, rng: random.Random, index: int = 0) -> HouseholdTask | None:
    """``task`` rebuilt with its target slot filled by a random same-ability category the template can
    build (None if there is none)."""
    t, combo, contrast = _source(task)
    options = rename_candidates(t, combo)
    if not options:
        return None
    for target in rng.sample(options, len(options)):
        new = {**combo, t.target_slot: target}
        try:  # some templates look slot values up in their own tables (a cleaner bottle's substance)
            task2 = instantiate(t, new, contrast, task.task_info.get("split", "train"), suffix=f"aug_rename{index}")
        except (KeyError, ValueError):
            continue
        task2.task_info["augmented"] = {"kind": "renamed_target", "from": combo[t.target_slot], "to": target}
        return task2
    return None


@dataclass(frozen=True)
class AugmentSettings:
    extra_copies: int = 0  # copies per train task with extra neutral objects
    extra_max: int = 2  # each copy gets 1..extra_max extra objects
    rename_copies: int = 0  # copies per train task with a renamed target
    seed: int = 0


def augment_tasks(tasks: Iterable[CompiledTask], s: AugmentSettings) -> tuple[list[CompiledTask], dict[str, int]]:
    """Augmented copies of ``tasks`` whose golden plans pass the suite invariants, and counts
    (``made`` / ``dropped`` per kind, ``no_candidate`` for tasks without a rename option)."""
    out: list[CompiledTask] = []
    counts = {"extra_made": 0, "extra_dropped": 0, "rename_made": 0, "rename_dropped": 0, "rename_no_candidate": 0}
    for c in tasks:
        rng = random.Random(_seed(s.seed, "augment", c.name))
        made: list[tuple[str, HouseholdTask | None]] = []
        for i in range(s.extra_copies):
            made.append(("extra", with_extra_objects(c.task, rng.randint(1, max(s.extra_max, 1)), rng, i)))
        for i in range(s.rename_copies):
            made.append(("rename", with_renamed_target(c.task, rng, i)))
        for kind, task in made:
            if task is None:
                counts["rename_no_candidate"] += 1
                continue
            if check_task(task):
                counts[f"{kind}_dropped"] += 1
                continue
            counts[f"{kind}_made"] += 1
            out.append(compile_task(task))
    return out, counts
