"""The start state is general: for generated rows, no goal conjunct the plan changes holds before the first step.

Rows are generated here, never read from the shared data: a scene, a few independent "intentions" on distinct
object types (each a plan fragment plus the goal conjuncts it achieves, labelled by whether the plan *changes*
them), goal types spelled as upstream might (any case, full AI2-THOR ids).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embodied_safety.envs.agentbench.actions import parse_step
from embodied_safety.envs.agentbench.goals import match_final_state
from embodied_safety.envs.agentbench.objects import (
    BREAKABLE,
    DIRTYABLE,
    FILLABLE,
    MUST_BE_OPEN,
    OPENABLE,
    PICKUPABLE,
    RECEPTACLES,
    SLICEABLE,
    SLICED_FROM,
    TOGGLEABLE,
)
from embodied_safety.envs.agentbench.start import changed_conjuncts, start_spec
from embodied_safety.envs.agentbench.world import AgentBenchWorld

SCENES = ("FloorPlan1", "FloorPlan17", "FloorPlan201", "FloorPlan226", "FloorPlan301", "FloorPlan315",
          "FloorPlan401", "FloorPlan429")
#: types that act on others through processes (heat, water) or are one object with another: kept out of
#: the independent intentions so two intentions cannot interfere
COUPLED = {"StoveBurner", "StoveKnob", "Faucet", "ShowerHead", "Microwave", "Toaster", "CoffeeMachine", "SinkBasin",
           "BathtubBasin", "Sink", "Bathtub", "Floor", *SLICED_FROM}  # pieces exist only after slicing


@dataclass(frozen=True)
class Intention:
    types: tuple[str, ...]  # object types it involves (kept distinct across a row)
    steps: tuple[str, ...]
    goal: tuple[tuple[str, str, object, bool], ...]  # (type, key, value, changed by the plan)


def _sorted(names: set[str] | frozenset[str]) -> list[str]:
    return sorted(set(names) - COUPLED)


@st.composite
def intentions(draw: st.DrawFn) -> Intention:
    kind = draw(st.sampled_from(["place", "place_closed", "floor", "toggle", "open", "dirt", "fill", "break", "slice"]))
    if kind in ("place", "place_closed"):
        x = draw(st.sampled_from(_sorted(PICKUPABLE - RECEPTACLES)))
        pool = MUST_BE_OPEN & RECEPTACLES if kind == "place_closed" else RECEPTACLES - MUST_BE_OPEN - PICKUPABLE
        r = draw(st.sampled_from(_sorted(pool)))
        inverse = draw(st.booleans())
        placed = (r, "receptacleObjectIds", [x], True) if inverse else (x, "parentReceptacles", [r], True)
        if kind == "place":
            return Intention((x, r), (f"find {x}", f"pick {x}", f"find {r}", f"put {r}"),
                             (placed, (x, "isPickedUp", False, False)))
        return Intention((x, r), (f"find {r}", f"open {r}", f"find {x}", f"pick {x}", f"find {r}", f"put {r}",
                                  f"close {r}"), (placed, (r, "isOpen", False, False)))
    if kind == "floor":
        x = draw(st.sampled_from(_sorted(PICKUPABLE - RECEPTACLES)))
        where = draw(st.sampled_from([None, [], ["Floor"]]))
        return Intention((x,), (f"find {x}", f"pick {x}", "drop"), ((x, "parentReceptacles", where, True),))
    if kind == "toggle":
        t, on = draw(st.sampled_from(_sorted(TOGGLEABLE))), draw(st.booleans())
        return Intention((t,), (f"find {t}", f"turn_{'on' if on else 'off'} {t}"), ((t, "isToggled", on, True),))
    if kind == "open":
        o, value = draw(st.sampled_from(_sorted(OPENABLE))), draw(st.booleans())
        return Intention((o,), (f"find {o}", f"{'open' if value else 'close'} {o}"), ((o, "isOpen", value, True),))
    if kind == "dirt":
        d, value = draw(st.sampled_from(_sorted(DIRTYABLE))), draw(st.booleans())
        return Intention((d,), (f"find {d}", f"{'dirty' if value else 'clean'} {d}"), ((d, "isDirty", value, True),))
    if kind == "fill":
        f, full = draw(st.sampled_from(_sorted(FILLABLE))), draw(st.booleans())
        if full:
            liquid = draw(st.sampled_from(["water", "coffee", "wine"]))
            return Intention((f,), (f"find {f}", f"fillLiquid {f} {liquid}"),
                             ((f, "isFilledWithLiquid", True, True), (f, "fillLiquid", liquid, True)))
        return Intention((f,), (f"find {f}", f"emptyLiquid {f}"), ((f, "isFilledWithLiquid", False, True),))
    if kind == "break":
        b = draw(st.sampled_from(_sorted(BREAKABLE)))
        return Intention((b,), (f"find {b}", f"break {b}"), ((b, "isBroken", True, True),))
    s = draw(st.sampled_from(_sorted(SLICEABLE)))
    return Intention((s,), (f"find {s}", f"slice {s}"), ((s, "isSliced", True, True),))


def spelled(draw: st.DrawFn, t: str) -> str:
    """A goal's objectType as upstream might write it: as is, lower case, or a full AI2-THOR id."""
    return draw(st.sampled_from([t, t.lower(), f"{t}|+01.25|+00.90|-00.75"]))


@st.composite
def rows(draw: st.DrawFn) -> tuple[str, list[str], list[dict], list[dict]]:
    """(scene, plan, final_state, the changed conjuncts as single-key entries)."""
    chosen: list[Intention] = []
    used: set[str] = set()
    for it in draw(st.lists(intentions(), min_size=1, max_size=4)):
        if used.isdisjoint(it.types):
            chosen.append(it)
            used.update(it.types)
    entries, changed = [], []
    for it in chosen:
        for t, key, value, is_changed in it.goal:
            entry = {"objectType": spelled(draw, t), key: value}
            entries.append(entry)
            if is_changed:
                changed.append(entry)
    return draw(st.sampled_from(SCENES)), [s for it in chosen for s in it.steps], entries, changed


def mentioned(plan: list[str], final_state: list[dict]) -> list[str]:
    names = [parse_step(s).args[0] for s in plan if parse_step(s).args]
    return names + [e["objectType"] for e in final_state]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows())
def test_no_changed_goal_conjunct_holds_before_the_first_step(row):
    scene, plan, final_state, changed = row
    actions = [parse_step(s) for s in plan]
    world = AgentBenchWorld(scene, mentioned(plan, final_state), start=start_spec(final_state, actions))
    start = world.metadata()
    for entry in changed:
        assert not match_final_state(start, [entry]).success, (entry, plan)
    assert not match_final_state(start, final_state).success
    # the rule's own reading of "changed" agrees with the generator's labels
    assert len(changed_conjuncts(final_state, actions)) == len(changed), (final_state, plan)
    # and the plan, run from that start, reaches its whole goal
    results = [(s, world.execute(s)) for s in plan]
    assert all(r.success for _, r in results), [(s, r.message) for s, r in results if not r.success]
    assert match_final_state(world.metadata(), final_state).success, (final_state, plan)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SCENES), st.lists(intentions(), min_size=1, max_size=3))
def test_a_goal_the_plan_never_touches_is_left_to_the_scene_defaults(scene, its):
    """Conjuncts the plan does not change get no start override: the world is the scene's default."""
    final_state = [{"objectType": t, k: v} for it in its for t, k, v, _ in it.goal]
    spec = start_spec(final_state, [])
    assert not spec.avoid and not spec.states
