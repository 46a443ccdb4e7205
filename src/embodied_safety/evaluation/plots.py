"""Report figures (matplotlib, Agg backend, imported lazily)."""

from __future__ import annotations

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
    return save_figure(fig, path, dpi=110)


def plot_curves(rows: list[dict[str, float]], keys: list[str], path: str | os.PathLike[str], title: str,
                x: str = "step") -> Path:
    """Training curves: one panel per key, against ``x``."""
    from matplotlib.figure import Figure

    keys = [k for k in keys if any(k in r for r in rows)] or keys[:1]
    fig = Figure(figsize=(4 * len(keys), 3))
    for i, key in enumerate(keys):
        ax = fig.add_subplot(1, len(keys), i + 1)
        pts = [(r[x], r[key]) for r in rows if key in r and x in r]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker=".")
        ax.set_xlabel(x)
        ax.set_title(key, fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
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
    return save_figure(fig, path)


def plot_series(panels: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]], path: str | os.PathLike[str],
                title: str, xlabel: str = "step") -> Path:
    """One panel per key, one line per series in it (e.g. dev SSR vs step, a line per variant)."""
    from matplotlib.figure import Figure

    names = list(panels) or ["(empty)"]
    cols = min(len(names), 3)
    rows = -(-len(names) // cols)
    fig = Figure(figsize=(4.5 * cols, 3.2 * rows))
    for i, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, i + 1)
        for label, pts in panels.get(name, {}).items():
            if pts:
                ax.plot(*zip(*pts, strict=True), marker=".", label=label)
        ax.set_xlabel(xlabel)
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
        if panels.get(name):
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
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
    return save_figure(fig, path, dpi=110)
