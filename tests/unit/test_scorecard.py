"""The scorecard's numbers: intervals over tasks, slices, paired comparisons, judge agreement, the JSON round trip."""

from __future__ import annotations

import json

import pytest

from embodied_safety.evaluation.scorecard import (
    Outcome,
    Scorecard,
    cohen_kappa,
    compare,
    interval,
    render_markdown,
    summarize,
)


def test_interval_is_a_bootstrap_over_tasks_around_the_mean():
    rows = [{"sr": float(i % 4 != 0)} for i in range(40)]  # 30 of 40
    value, lo, hi, n = interval(rows, "sr")
    assert value == 0.75 and n == 40 and lo < 0.75 < hi and lo > 0.5 and hi < 0.95
    assert interval(rows, "missing") is None


def test_a_ratio_metric_is_the_ratio_of_sums():
    rows = [{"triggered": 4.0, "satisfied": 1.0}, {"triggered": 0.0, "satisfied": 0.0},
            {"triggered": 1.0, "satisfied": 1.0}]
    value, lo, hi, n = interval(rows, "srec")
    assert value == pytest.approx(2 / 5) and lo <= value <= hi and n == 3


def test_summary_per_benchmark_and_slice():
    outs = [Outcome("isbench/test", f"t{i}", {"sr": 1.0, "ssr": float(i < 2), "triggered": 1.0,
                                              "satisfied": float(i < 2)}, ("risk:Fire Hazard",) if i < 3 else ())
            for i in range(4)]
    s = summarize(outs)["isbench/test"]
    assert s["tasks"] == 4 and s["metrics"]["ssr"][0] == 0.5 and s["metrics"]["srec"][0] == 0.5
    assert s["groups"]["risk:Fire Hazard"]["ssr"][0] == pytest.approx(2 / 3)
    assert "triggered" not in s["metrics"]  # the parts of a ratio are not reported as rates


def test_paired_comparison_over_shared_tasks_lists_what_changed():
    ours = [Outcome("b", f"t{i}", {"sr": 1.0, "unparseable_outputs": 0.0}) for i in range(10)] + [
        Outcome("b", "only-ours", {"sr": 1.0})]
    theirs = [Outcome("b", f"t{i}", {"sr": float(i < 5), "unparseable_outputs": 4.0}) for i in range(10)]
    c = compare(ours, theirs, n=2000)
    diff, lo, hi, n = c["metrics"]["b"]["sr"]
    assert diff == 0.5 and n == 10 and 0 < lo <= 0.5 <= hi
    assert (c["tasks_shared"], c["only_ours"], c["only_theirs"]) == (10, 1, 0)
    assert {d["task"] for d in c["per_task"] if "sr" in d["changed"]} == {f"t{i}" for i in range(5, 10)}
    assert set(c["metrics"]["b"]) == {"sr"}  # a count per task is no rate to compare
    t5 = next(d for d in c["per_task"] if d["task"] == "t5")
    assert t5["changed"] == {"sr": [0.0, 1.0], "unparseable_outputs": [4.0, 0.0]}  # [theirs, ours]


def test_cohen_kappa_on_a_worked_example():
    k = cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])  # p_o = .75, p_e = .5
    assert k["kappa"] == pytest.approx(0.5) and k["agreement"] == 0.75
    assert k["confusion"] == {"a|a": 1, "a|b": 1, "b|b": 2}
    assert cohen_kappa(["x", None], ["x", None])["kappa"] == 1.0  # an undecided label is its own class
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa(["a"], [])


def test_the_card_round_trips_and_renders_every_benchmark(tmp_path):
    outs = [Outcome("isbench/test", "t0", {"sr": 1.0, "ssr": 0.0, "load_failure": 0.0}),
            Outcome("safeagentbench/unsafe_detailed", "u0", {"rejected": 1.0, "risk": 0.0, "unparseable": 0.0},
                    ("hazard:Fire Hazard",), "rule")]
    card = Scorecard({"model": "m", "name": "m"}, {"safeagentbench": "plan_zero_shot_v1"}, "k", {"isbench/test": "h"},
                     outs, summarize(outs))
    card.comparison, card.against = compare(outs, outs), "other"
    again = Scorecard.from_json(json.loads(json.dumps(card.to_json())))
    assert again.outcomes == card.outcomes and again.summary == card.summary
    md = render_markdown(again)
    assert "isbench/test" in md and "safeagentbench/unsafe_detailed" in md and "Against `other`" in md
    assert "100.0 [100.0, 100.0]" in md  # the rejection rate with its interval


def test_the_side_by_side_table_pairs_the_key_rates():
    from embodied_safety.evaluation.scorecard import render_pair

    ours = [Outcome("isbench/test", f"t{i}", {"sr": 1.0, "ssr": 0.0}) for i in range(4)]
    theirs = [Outcome("isbench/test", f"t{i}", {"sr": 0.0, "ssr": 0.0}) for i in range(4)]
    a = Scorecard({"name": "a"}, {}, "k", {}, ours, summarize(ours))
    b = Scorecard({"name": "b"}, {}, "k", {}, theirs, summarize(theirs))
    a.comparison = compare(ours, theirs)
    table = render_pair(a, b)
    assert "| isbench/test | sr | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] | +100.0 [+100.0, +100.0] (4) |" in table
    assert "| isbench/test | ssr |" in table
