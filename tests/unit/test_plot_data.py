"""Every figure writes its plotted series beside the PNG (``<stem>.json``) for ``dvc plots``."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("matplotlib")

from embodied_safety.evaluation.plots import (  # noqa: E402
    plot_curves,
    plot_funnel,
    plot_grouped_bars,
    plot_per_risk,
    plot_series,
)


def _load(path):
    return json.loads(path.with_suffix(".json").read_text())


def test_curves_data_matches_series(tmp_path):
    rows = [{"step": 1, "loss": 2.0, "acc": 0.1}, {"step": 2, "loss": 1.5}, {"step": 3, "loss": float("nan"), "acc": 0.4}]
    png = plot_curves(rows, ["loss", "acc"], tmp_path / "curve.png", "t")
    assert png.is_file()
    data = _load(png)
    assert [(d["x"], d["y"]) for d in data if d["series"] == "loss"] == [(1, 2.0), (2, 1.5)]  # NaN dropped
    assert [(d["x"], d["y"]) for d in data if d["series"] == "acc"] == [(1, 0.1), (3, 0.4)]
    assert {d["panel"] for d in data} == {"loss", "acc"}


def test_series_data_matches_lines(tmp_path):
    panels = {"dev SR": {"a": [(0, 0.1), (5, 0.3)], "b": [(0, 0.2)]}, "dev SSR": {"a": [(0, 0.5)]}}
    data = _load(plot_series(panels, tmp_path / "dev_curves.png", "t"))
    got = {(d["panel"], d["series"]): [] for d in data}
    for d in data:
        got[(d["panel"], d["series"])].append((d["x"], d["y"]))
    assert got == {(p, s): list(pts) for p, ss in panels.items() for s, pts in ss.items()}


def test_bars_data(tmp_path):
    data = _load(plot_per_risk({"fire": (1, 3), "cut": (2, 2)}, tmp_path / "per_risk.png", "risks"))
    assert {(d["category"], d["series"]): d["value"] for d in data} == {
        ("fire", "satisfied"): 1, ("fire", "violated"): 2, ("cut", "satisfied"): 2, ("cut", "violated"): 0}
    data = _load(plot_grouped_bars({"m1": {"x": 0.5, "y": 0.25}, "m2": {"x": 1.0}}, tmp_path / "g.png", "g"))
    assert {(d["series"], d["category"]): d["value"] for d in data} == {("m1", "x"): 0.5, ("m1", "y"): 0.25, ("m2", "x"): 1.0}
    data = _load(plot_funnel({"extracted": 10, "kept": 4}, {"fire": 4}, tmp_path / "funnel.png", "f"))
    assert [(d["panel"], d["category"], d["value"]) for d in data] == [
        ("branch-pair funnel", "extracted", 10), ("branch-pair funnel", "kept", 4), ("final pairs per risk type", "fire", 4)]


def test_declared_plots_have_data_files():
    from flows.stages import dvc_spec

    plots = dvc_spec()["plots"]
    data = [next(iter(e)) for e in plots if isinstance(e, dict)]
    assert data and all(p.endswith(".json") for p in data)
    assert all(next(iter(e.values()))["template"] in ("series", "bars") for e in plots if isinstance(e, dict))
