"""Property: snapshot, more actions, restore -> identical state and identical continuation."""

from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embodied_safety.envs.household.actions import PRIMITIVES
from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import instantiate
from embodied_safety.envs.household.suite.templates import TEMPLATES


@cache
def compiled_tasks():
    out = []
    for t in TEMPLATES:
        combo = {k: v[0] for k, v in t.slots.items()}
        out.append(compile_task(instantiate(t, combo, False, "prop")))
    return out


@st.composite
def scenario(draw):
    tasks = compiled_tasks()
    c = tasks[draw(st.integers(0, len(tasks) - 1))]
    objs = sorted(c.problem.instances)
    names = sorted(PRIMITIVES)

    def action():
        name = draw(st.sampled_from(names))
        return f"{name}({', '.join(draw(st.sampled_from(objs)) for _ in PRIMITIVES[name])})"

    plan = [s.action for s in c.task.example_planning[:-1]]
    pre = [draw(st.sampled_from(plan)) if draw(st.booleans()) else action() for _ in range(draw(st.integers(0, 12)))]
    mid = [action() for _ in range(draw(st.integers(1, 10)))]
    post = [draw(st.sampled_from(plan)) if draw(st.booleans()) else action() for _ in range(draw(st.integers(1, 10)))]
    return c, pre, mid, post


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_restore_is_exact_and_continuations_are_identical(case):
    c, pre, mid, post = case
    w = c.new_world()
    for a in pre:
        w.step(a)
    snap = w.snapshot()
    before = w.state_bytes()
    for a in mid:
        w.step(a)
    w.restore(snap)
    assert w.state_bytes() == before
    first = [w.step(a) for a in post]
    after_first = w.state_bytes()
    w.restore(snap)
    second = [w.step(a) for a in post]
    assert first == second and w.state_bytes() == after_first
    # a fresh replay of the whole prefix reaches the same state too
    fresh = c.new_world()
    for a in pre + post:
        fresh.step(a)
    assert fresh.state_bytes() == after_first


def test_snapshot_is_immutable_against_later_steps():
    c = compiled_tasks()[0]
    w = c.new_world()
    snap = w.snapshot()
    facts = set(snap.facts)
    for s in c.task.example_planning:
        w.step(s.action)
    assert set(snap.facts) == facts and snap.history == ()
