"""Report figures (matplotlib, Agg backend, imported lazily).

Every figure is also written as data: ``<stem>.json`` beside ``<stem>.png``, a list of rows in one of two
long formats that the project's DVC templates (``.dvc/plots/series.json``, ``.dvc/plots/bars.json``) draw, so
``dvc plots show`` renders them and ``dvc plots diff`` compares experiments:

* curves (``template: series``): ``{"panel", "series", "x", "y"}``, one line per (panel, series);
* bars (``template: bars``): ``{"panel", "series", "category", "value"}``, one bar per (panel, series,
  category).

:func:`write_plot_data` writes the file; the plot functions call it with the series they draw.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 100) -> Path:
    """Write a PNG atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=dpi)
    os.replace(tmp, path)
    return path


def data_path(path: str | os.PathLike[str]) -> Path:
    """The data file of a figure: the PNG's path with ``.json``."""
    return Path(path).with_suffix(".json")


def write_plot_data(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``rows`` (the figure's plotted series) to the figure's data file, atomically; non-finite
    numbers (NaN, inf) are dropped from a row, and a curve row without its ``y`` is left out."""
    out = data_path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean = []
    for r in rows:
        row = {k: _plain(v) for k, v in r.items()}
        row = {k: v for k, v in row.items() if v is not None}
        if ("y" in r and "y" not in row) or ("value" in r and "value" not in row):
            continue
        clean.append(row)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(clean, indent=1) + "\n")
    os.replace(tmp, out)
    return out


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def curve_rows(panel: str, series: str, pts: Sequence[tuple[float, float]]) -> list[dict[str, Any]]:
    """Rows of one line for a ``series`` data file."""
    return [{"panel": panel, "series": series, "x": x, "y": y} for x, y in pts]


def plot_per_risk(counts: Mapping[str, tuple[int, int]], path: str | os.PathLike[str], title: str) -> Path:
    """Stacked bars per risk type: satisfied vs violated triggered conditions (SafeBranch Box 17)."""
    from matplotlib.figure import Figure  # the OO API: no pyplot global state, safe in worker threads

    risks = list(counts)
    sat = [counts[r][0] for r in risks]
    vio = [counts[r][1] - counts[r][0] for r in risks]
    fig = Figure(figsize=(8, 0.5 * max(len(risks), 1) + 1.5))
    ax = fig.add_subplot()
    ax.barh(risks, sat, color="#2e7d32", label="satisfied")
    ax.barh(risks, vio, left=sat, color="#c62828", label="violated")
    for i, r in enumerate(risks):
        total = counts[r][1]
        ax.text(total, i, f" {counts[r][0]}/{total}", va="center", fontsize=8)
    ax.set_xlabel("triggered safety conditions")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.invert_yaxis()
    fig.tight_layout()
    write_plot_data(path, [{"panel": title, "series": s, "category": r, "value": v}
                           for r in risks for s, v in (("satisfied", counts[r][0]),
                                                       ("violated", counts[r][1] - counts[r][0]))])
    return save_figure(fig, path, dpi=110)


def plot_curves(rows: list[dict[str, float]], keys: list[str], path: str | os.PathLike[str], title: str,
                x: str = "step") -> Path:
    """Training curves: one panel per key, against ``x``."""
    from matplotlib.figure import Figure

    keys = [k for k in keys if any(k in r for r in rows)] or keys[:1]
    fig = Figure(figsize=(4 * len(keys), 3))
    data: list[dict[str, Any]] = []
    for i, key in enumerate(keys):
        ax = fig.add_subplot(1, len(keys), i + 1)
        pts = [(r[x], r[key]) for r in rows if key in r and x in r]
        data += curve_rows(key, key, pts)
        if pts:
            ax.plot(*zip(*pts, strict=True), marker=".")
        ax.set_xlabel(x)
        ax.set_title(key, fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    write_plot_data(path, data)
    return save_figure(fig, path)


def plot_funnel(stages: dict[str, int], per_risk: dict[str, int], path: str | os.PathLike[str], title: str) -> Path:
    """The data-construction funnel (Table 12 / Fig. 3b) and the final pairs per risk type."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.6))
    ax = fig.add_subplot(1, 2, 1)
    names, values = list(stages), list(stages.values())
    bars = ax.bar(names, values, color=["#90a4ae", "#5c6bc0", "#2e7d32"][: len(names)])
    for bar, v, prev in zip(bars, values, [None, *values[:-1]], strict=True):
        kept = f"\n({v / prev:.0%} kept)" if prev else ""
        ax.text(bar.get_x() + bar.get_width() / 2, v, f"{v}{kept}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("pairs")
    ax.set_title("branch-pair funnel", fontsize=10)
    ax2 = fig.add_subplot(1, 2, 2)
    ax2.barh(list(per_risk), list(per_risk.values()), color="#2e7d32")
    ax2.set_title("final pairs per risk type", fontsize=10)
    ax2.invert_yaxis()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    write_plot_data(path, [*({"panel": "branch-pair funnel", "series": "pairs", "category": k, "value": v}
                             for k, v in stages.items()),
                           *({"panel": "final pairs per risk type", "series": "pairs", "category": k, "value": v}
                             for k, v in per_risk.items())])
    return save_figure(fig, path)


def plot_series(panels: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]], path: str | os.PathLike[str],
                title: str, xlabel: str = "step") -> Path:
    """One panel per key, one line per series in it (e.g. dev SSR vs step, a line per variant)."""
    from matplotlib.figure import Figure

    names = list(panels) or ["(empty)"]
    cols = min(len(names), 3)
    rows = -(-len(names) // cols)
    fig = Figure(figsize=(4.5 * cols, 3.2 * rows))
    data: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, i + 1)
        for label, pts in panels.get(name, {}).items():
            data += curve_rows(name, label, pts)
            if pts:
                ax.plot(*zip(*pts, strict=True), marker=".", label=label)
        ax.set_xlabel(xlabel)
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
        if panels.get(name):
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    write_plot_data(path, data)
    return save_figure(fig, path)


def plot_grouped_bars(groups: Mapping[str, Mapping[str, float]], path: str | os.PathLike[str], title: str,
                      ylabel: str = "accuracy") -> Path:
    """One bar per (series, category), grouped by category (e.g. per-category accuracy per method)."""
    from matplotlib.figure import Figure

    series = list(groups)
    cats = list(dict.fromkeys(c for g in groups.values() for c in g))
    width = 0.8 / max(len(series), 1)
    fig = Figure(figsize=(max(6, 1.3 * len(cats) + 2), 4))
    ax = fig.add_subplot()
    for i, name in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(cats))]
        vals = [groups[name].get(c, float("nan")) for c in cats]
        ax.bar(xs, vals, width, label=name)
    ax.set_xticks(range(len(cats)), cats, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    write_plot_data(path, [{"panel": title, "series": name, "category": c, "value": groups[name][c]}
                           for name in series for c in cats if c in groups[name]])
    return save_figure(fig, path, dpi=110)
