"""Failure modes of evaluated episodes: repeat loops and missing DONE() are counted over the failures."""

from types import SimpleNamespace

from embodied_safety.rollout.failure_modes import failure_modes, has_repeat, lost_tasks


def test_has_repeat_needs_the_same_action_consecutively():
    assert has_repeat(["A", "B", "B", "B"]) and not has_repeat(["A", "B", "A", "B", "A"])
    assert not has_repeat(["A", "A"]) and has_repeat(["A", "A"], repeat=2) and not has_repeat([])


def test_failure_modes_counts_loops_and_missing_done_among_failures():
    ep = lambda ok, *acts: SimpleNamespace(success=ok, actions=tuple(acts))  # noqa: E731
    results = [ep(True, "OPEN(a)", "DONE()"),
               ep(False, "TOGGLE_OFF(g)", "TOGGLE_OFF(g)", "TOGGLE_OFF(g)"),  # a loop to the step limit
               ep(False, "OPEN(a)", "DONE()"),                                # wrong plan, said DONE
               ep(True, "WIPE(s)", "WIPE(s)", "WIPE(s)", "DONE()")]           # a loop that still succeeded
    m = failure_modes(results)
    assert m == {"episodes": 4.0, "sr": 0.5, "failures": 2.0, "failures_with_repeat": 1.0,
                 "failures_without_done": 1.0, "successes_with_repeat": 1.0}


def test_lost_tasks_are_the_ones_the_reference_solves_and_the_other_fails():
    ep = lambda task, ok, *acts: SimpleNamespace(task=task, success=ok, actions=tuple(acts))  # noqa: E731
    ref = [ep("a", True, "OPEN(f)", "DONE()"), ep("b", False, "DONE()"), ep("c", True, "DONE()")]
    other = [ep("a", False, "CLOSE(f)", "DONE()"), ep("b", True, "WIPE(s)", "DONE()"), ep("c", True, "DONE()")]
    assert lost_tasks(ref, other) == [{"task": "a", "reference": ["OPEN(f)", "DONE()"], "other": ["CLOSE(f)", "DONE()"]}]
