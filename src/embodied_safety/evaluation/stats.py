"""Paired comparisons of two methods over the same test tasks (issue 20: no claim without its interval).

Each method's per-task outcome (success, safe success) is averaged over its seeds first; the
difference of the two per-task values is then resampled over tasks (paired bootstrap, percentile
interval). A task missing from either side is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

PerTask = Mapping[str, Mapping[str, float]]  # task -> {"sr": 0/1, "ssr": 0/1}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n: int = 10000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float]:
    """(mean of a - b, lower, upper): the percentile interval of the mean paired difference over
    ``n`` resamples of the pairs (with replacement)."""
    import numpy as np

    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    if not len(a):
        raise ValueError("no paired samples")
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(n, len(diff)))].mean(axis=1) if n else np.array([diff.mean()])
    tail = (1 - level) / 2 * 100
    return float(diff.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def seed_mean(runs: Sequence[PerTask]) -> dict[str, dict[str, float]]:
    """Per task, the mean of each metric over the runs (seeds) that evaluated it."""
    out: dict[str, dict[str, list[float]]] = {}
    for run in runs:
        for task, m in run.items():
            for k, v in m.items():
                out.setdefault(task, {}).setdefault(k, []).append(float(v))
    return {t: {k: sum(v) / len(v) for k, v in m.items()} for t, m in out.items()}


def compare(a_runs: Sequence[PerTask], b_runs: Sequence[PerTask], metrics: Sequence[str] = ("ssr", "sr"),
            n: int = 10000, seed: int = 0) -> dict[str, list[float]]:
    """``{metric: [mean diff, lo, hi, tasks]}`` of a - b over the tasks both evaluated."""
    a, b = seed_mean(a_runs), seed_mean(b_runs)
    tasks = sorted(set(a) & set(b))
    out: dict[str, list[float]] = {}
    for k in metrics:
        common = [t for t in tasks if k in a[t] and k in b[t]]
        if common:
            out[k] = [*paired_bootstrap([a[t][k] for t in common], [b[t][k] for t in common], n, seed),
                      float(len(common))]
    return out


def per_task(results: Sequence[object]) -> dict[str, dict[str, float]]:
    """``EpisodeResult``s -> ``{task: {"sr": success, "ssr": safe success}}`` (one episode per task)."""
    return {r.task: {"sr": float(r.success), "ssr": float(r.safe_success)} for r in results}  # type: ignore[attr-defined]


def t_interval(x: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """(mean, half-width of the Student-t interval) over seeds; the half-width is nan for one seed."""
    import numpy as np
    from scipy.stats import t

    a = np.asarray(x, dtype=float)
    if len(a) < 2:
        return float(a.mean()), float("nan")
    return float(a.mean()), float(t.ppf((1 + level) / 2, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a)))


def crossed_bootstrap(diff: Sequence[Sequence[float]], n: int = 4000, seed: int = 0,
                      level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lower, upper) of a seeds × episodes matrix of paired differences, every seed evaluated on the same
    episodes: the percentile interval of the mean over ``n`` resamples that draw the seeds *and* the episodes with
    replacement, independently (the "pigeonhole" bootstrap for crossed designs, Owen 2007; mildly conservative).

    A t interval over seeds alone treats the evaluation episodes as fixed: with 100 shared episodes the same ten
    policies read SR − start +0.04 on one episode set and −0.04 on another (docs/shield_ppo.md). With one
    seed only the episodes are resampled (the interval then says nothing about training seeds)."""
    import numpy as np

    d = np.asarray(diff, dtype=float)
    if d.ndim != 2 or not d.size:
        raise ValueError(f"expected a seeds x episodes matrix, got shape {d.shape}")
    rng = np.random.default_rng(seed)
    s, e = d.shape
    means = np.empty(n)
    for i in range(n):
        rows = rng.integers(0, s, size=s) if s > 1 else np.zeros(1, dtype=int)
        cols = rng.integers(0, e, size=e)
        means[i] = d[np.ix_(rows, cols)].mean()
    tail = (1 - level) / 2 * 100
    return float(d.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
